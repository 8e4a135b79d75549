// Tests of include/wrapir/run/cpu/backend.hpp: the compiled-C++ provider
// gives the kernel cache's identity with each kernel, and the executor names
// multi-kernel candidates by it, so a candidate rebuilt with another header
// or flag is benchmarked again (issue 14 §2). Kernels are compiled by the
// system compiler, as in kernel_cache_test.cpp.
#include <wrapir/ir/builder.hpp>
#include <wrapir/run/cpu/backend.hpp>
#include <wrapir/run/executor.hpp>
#include <wrapir/run/multi_kernel.hpp>

#include <doctest/doctest.h>

#include "support/float_tensor.hpp"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
namespace ir = wrapir::ir;
namespace run = wrapir::run;
namespace cpu = wrapir::run::cpu;

namespace {

/// A fresh private directory under the temp dir, removed at scope exit.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string t = (fs::temp_directory_path() / "wrapir-cpu-backend-test.XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

// Two candidates computing out = 2 * x: the first takes its factor from a
// header, the second includes nothing of the test's.
const char* const twice_from_header = R"(
#include "factor.h"
#include <cstdint>
extern "C" void kernel(const float* x, float* out, const std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = WRAPIR_TEST_FACTOR * x[i];
}
)";
const char* const twice_by_adding = R"(
#include <cstdint>
extern "C" void kernel(const float* x, float* out, const std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = x[i] + x[i];
}
)";
const char* const signature_text = "x: *fp32, out: *fp32, n: i64";

std::vector<ir::KernelParam> signature() {
  return {{"x", ir::ParamType{true, ir::DType::float32}},
          {"out", ir::ParamType{true, ir::DType::float32}},
          {"n", ir::ParamType{false, ir::DType::int64}}};
}

ir::Program twice_program() {
  ir::Program p{"twice"};
  ir::Builder b{p, wrapir::cpu_device()};
  auto x = b.input("x", {b.ctx().integer(3)}, ir::DType::float32);
  auto k0 = b.kernel("cpp_twice_0", ir::KernelLanguage::cpp, ir::SourceText{twice_from_header}, signature_text);
  auto k1 = b.kernel("cpp_twice_1", ir::KernelLanguage::cpp, ir::SourceText{twice_by_adding}, signature_text);
  auto out = b.empty({b.ctx().integer(3)}, ir::DType::float32);
  b.call_multi(b.multi_kernel({k0, k1}), {x, out, 3});
  b.output(out);
  return p;
}

/// What one prepare and run of the program saw of its multi-kernel.
struct Choice {
  std::vector<std::string> identities;
  std::optional<run::ChoiceSource> source;
};

}  // namespace

TEST_CASE("cpu backend: the C++ provider gives the kernel cache's identity, and other languages are not its own") {
  ScratchDir scratch;
  cpu::CompileOptions compile;
  compile.flags = {"-O1", "-std=c++17"};
  auto cache = std::make_shared<cpu::KernelCache>(scratch.path / "kernels", compile);
  const cpu::CompiledCppProvider provider(cache);
  const std::vector<ir::KernelParam> sig = signature();

  const run::KernelRequest triton{"t", ir::KernelLanguage::triton, "def t(): pass", sig};
  auto other = provider.provide(triton);
  REQUIRE(other.has_value());
  CHECK_FALSE(*other);

  const run::KernelRequest request{"cpp_twice_1", ir::KernelLanguage::cpp, twice_by_adding, sig};
  auto provided = provider.provide(request);
  REQUIRE_MESSAGE(provided, provided.error().message);
  REQUIRE(*provided);
  auto loaded = cache->load("cpp_twice_1", twice_by_adding, sig);
  REQUIRE_MESSAGE(loaded, loaded.error().message);
  CHECK(provided->identity == loaded->identity.hex());
}

TEST_CASE("cpu backend: a changed header or flag re-benchmarks a multi-kernel instead of replaying its stored choice") {
  // Named by their definitions only, the candidates below kept their names
  // and sources while the kernels that ran changed, and the choice measured
  // with the old build was replayed.
  ScratchDir scratch;
  const fs::path include_dir = scratch.path / "inc";
  fs::create_directory(include_dir);
  write_text(include_dir / "factor.h", "#define WRAPIR_TEST_FACTOR 2.0f\n");
  cpu::CompileOptions compile;
  compile.flags = {"-O1", "-std=c++17", "-I" + include_dir.string()};
  const ir::Program program = twice_program();

  const auto prepare_and_run = [&](const cpu::CompileOptions& o) {
    cpu::BackendConfig config;
    config.cache_directory = scratch.path / "kernels";
    config.compile = std::make_shared<const cpu::CompileOptions>(o);
    auto options = cpu::backend_options(std::move(config));
    REQUIRE_MESSAGE(options, options.error().message);
    Choice seen;
    options->multi_kernel.cache_enabled = true;
    options->multi_kernel.cache_directory = scratch.path / "choices";
    options->multi_kernel.warmup = 1;
    options->multi_kernel.repetitions = 1;
    options->multi_kernel.on_choice = [&seen](const run::MultiKernelPlan& plan, const run::SelectionReport& report) {
      for (const run::Candidate& c : plan.candidates()) seen.identities.push_back(c.identity);
      seen.source = report.source;
    };
    auto exe = run::Executor::prepare(program, *std::move(options));
    REQUIRE_MESSAGE(exe, exe.error().message);
    auto r = exe->run(std::vector<run::Tensor>{wrapir_test::float_tensor({3}, {1, 2, 3})});
    REQUIRE_MESSAGE(r, r.error().message);
    const run::Tensor* out = (*r)[0].get_if<run::Tensor>();
    REQUIRE(out != nullptr);
    const auto* values = static_cast<const float*>(out->data());
    CHECK(std::vector<float>(values, values + 3) == std::vector<float>{2, 4, 6});
    return seen;
  };
  // What the kernel cache names the candidates (hits: compiled above).
  const auto cache_identities = [&](const cpu::CompileOptions& o) {
    cpu::KernelCache cache{scratch.path / "kernels", o};
    std::vector<std::string> ids;
    for (const char* source : {twice_from_header, twice_by_adding}) {
      auto k = cache.load("k", source, signature());
      REQUIRE_MESSAGE(k, k.error().message);
      ids.push_back(k->identity.hex());
    }
    return ids;
  };
  const auto stored_choices = [&] {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(scratch.path / "choices")) n += e.path().extension() == ".choice";
    return n;
  };

  const Choice first = prepare_and_run(compile);
  CHECK(first.source == run::ChoiceSource::benchmark);
  CHECK(first.identities == cache_identities(compile));
  CHECK(stored_choices() == 1);

  // The same build: the stored choice.
  const Choice again = prepare_and_run(compile);
  CHECK(again.source == run::ChoiceSource::cache);
  CHECK(again.identities == first.identities);
  CHECK(stored_choices() == 1);

  // A changed header (longer, so its size changes too): same definitions,
  // another kernel, its own key.
  write_text(include_dir / "factor.h", "#define WRAPIR_TEST_FACTOR 2.0f /* another build of the header */\n");
  const Choice header = prepare_and_run(compile);
  CHECK(header.source == run::ChoiceSource::benchmark);
  REQUIRE(header.identities.size() == 2);
  CHECK(header.identities[0] != first.identities[0]);
  CHECK(header.identities[1] == first.identities[1]);  // it includes no header of the test's
  CHECK(header.identities == cache_identities(compile));
  CHECK(stored_choices() == 2);

  // A changed flag: every candidate is another kernel.
  cpu::CompileOptions flagged = compile;
  flagged.flags.push_back("-DWRAPIR_TEST_UNUSED=1");
  const Choice flags = prepare_and_run(flagged);
  CHECK(flags.source == run::ChoiceSource::benchmark);
  REQUIRE(flags.identities.size() == 2);
  CHECK(flags.identities[0] != header.identities[0]);
  CHECK(flags.identities[1] != header.identities[1]);
  CHECK(stored_choices() == 3);
}
