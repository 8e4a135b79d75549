// The C++ unit's rename of a kernel's entry in its own source text
// (emit/detail/rename_identifier.hpp): identifiers only, never inside
// comments, literals, numbers, header names or member accesses.

#include <wrapir/emit/detail/rename_identifier.hpp>

#include <doctest/doctest.h>

#include <random>
#include <string>

namespace {

std::string renamed(const std::string& source) { return wrapir::cpp::detail::rename_identifier(source, "kernel", "K1"); }

}  // namespace

TEST_CASE("emit/cpp rename: the entry and its uses are renamed, longer identifiers are not") {
  CHECK(renamed("extern \"C\" void kernel(float* p) {}") == "extern \"C\" void K1(float* p) {}");
  CHECK(renamed("kernel") == "K1");
  CHECK(renamed("auto f = &kernel; f = kernel;") == "auto f = &K1; f = K1;");
  CHECK(renamed("kernel_2 my_kernel kernelx _kernel kernel2") == "kernel_2 my_kernel kernelx _kernel kernel2");
  CHECK(renamed("(kernel)+kernel*kernel") == "(K1)+K1*K1");
  // A macro the source defines and uses: renamed in both places, as a
  // `#define kernel K1` before it would have done.
  CHECK(renamed("#define CALL kernel(x)\nCALL;") == "#define CALL K1(x)\nCALL;");
  CHECK(renamed("#ifdef kernel\n#endif") == "#ifdef K1\n#endif");
}

TEST_CASE("emit/cpp rename: comments, literals and numbers hide the name") {
  CHECK(renamed("// kernel\nkernel") == "// kernel\nK1");
  CHECK(renamed("// a \\\n kernel continued\nkernel") == "// a \\\n kernel continued\nK1");
  CHECK(renamed("/* kernel \n kernel */ kernel") == "/* kernel \n kernel */ K1");
  CHECK(renamed("/* unterminated kernel") == "/* unterminated kernel");
  CHECK(renamed("\"kernel\" kernel") == "\"kernel\" K1");
  CHECK(renamed("\"a \\\" kernel\" kernel") == "\"a \\\" kernel\" K1");
  CHECK(renamed("'k' kernel '\\''") == "'k' K1 '\\''");
  CHECK(renamed("R\"x(kernel )\" kernel)x\" kernel") == "R\"x(kernel )\" kernel)x\" K1");
  CHECK(renamed("u8R\"(kernel)\" LR\"(kernel)\" kernel") == "u8R\"(kernel)\" LR\"(kernel)\" K1");
  CHECK(renamed("L\"kernel\" u8\"kernel\" kernel") == "L\"kernel\" u8\"kernel\" K1");
  CHECK(renamed("\"x\"_kernel kernel") == "\"x\"_kernel K1");  // a user-defined literal's suffix
  CHECK(renamed("1'000 kernel 0x1e+kernel 1.5e-3 .5 kernel") == "1'000 K1 0x1e+kernel 1.5e-3 .5 K1");
  CHECK(renamed("12_kernel kernel") == "12_kernel K1");
}

TEST_CASE("emit/cpp rename: header names and members keep theirs") {
  CHECK(renamed("#include <kernel/kernel.h>\nkernel") == "#include <kernel/kernel.h>\nK1");
  CHECK(renamed("  #  include_next <kernel.h>\nkernel") == "  #  include_next <kernel.h>\nK1");
  CHECK(renamed("#import <kernel>\n") == "#import <kernel>\n");
  CHECK(renamed("#include \"kernel.h\"") == "#include \"kernel.h\"");
  CHECK(renamed("x = c.kernel + p->kernel + p -> kernel + c.\n kernel;") == "x = c.kernel + p->kernel + p -> kernel + c.\n kernel;");
  CHECK(renamed("a > kernel") == "a > K1");
}

TEST_CASE("emit/cpp rename: the companion renames a CUDA kernel named like a runtime function in its text only") {
  const std::string source = "#include <cuda_runtime.h>\nextern \"C\" int cudaFree(void* p, cudaStream_t s) { return 0; }\n";
  CHECK(wrapir::cpp::detail::rename_identifier(source, "cudaFree", "m_k0_cudaFree") ==
        "#include <cuda_runtime.h>\nextern \"C\" int m_k0_cudaFree(void* p, cudaStream_t s) { return 0; }\n");
}

TEST_CASE("emit/cpp rename: any text is scanned to its end, and renaming is the identity without the name") {
  std::mt19937 rng(11);
  const std::string alphabet = "kernl_ \"'\\/*#\n<>.-R(u8)0x1e+";
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const auto length = rng() % 64;
    for (unsigned i = 0; i < length; ++i) text += alphabet[rng() % alphabet.size()];
    const std::string out = renamed(text);
    // Renaming back gives the text again: only whole `kernel` tokens changed.
    if (text.find("K1") == std::string::npos)
      CHECK(wrapir::cpp::detail::rename_identifier(out, "K1", "kernel") == text);
    if (text.find("kernel") == std::string::npos) CHECK(out == text);
  }
}
