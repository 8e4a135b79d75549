// Tests of include/wrapir/run/kernel_identity.hpp: what names a kernel in
// the multi-kernel choice cache when the executor computes it — from the
// definition, or from the bytes a kernel was loaded from.
#include <wrapir/run/kernel_identity.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
namespace ir = wrapir::ir;
namespace run = wrapir::run;

namespace {

const std::vector<ir::KernelParam> signature{{"x", ir::ParamType{true, ir::DType::float32}},
                                             {"n", ir::ParamType{false, ir::DType::int32}}};

bool hex_digits(std::string_view s) { return s.find_first_not_of("0123456789abcdef") == std::string_view::npos; }

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("kernel identity: a definition's is its name and a hash of what the definition says") {
  ir::KernelMetadata metadata;
  metadata.num_warps = 4;
  const run::KernelRequest request{"triton_poi_0", ir::KernelLanguage::triton, "def k(): pass", signature, &metadata};
  const std::string id = run::definition_identity(request);
  REQUIRE(id.size() == std::string_view("triton_poi_0#").size() + 16);
  CHECK(id.starts_with("triton_poi_0#"));
  CHECK(hex_digits(id.substr(13)));
  CHECK(run::definition_identity(request) == id);  // stable

  run::KernelRequest other = request;
  other.source = "def k(): return";
  CHECK(run::definition_identity(other) != id);
  other = request;
  other.language = ir::KernelLanguage::cpp;
  CHECK(run::definition_identity(other) != id);
  const std::vector<ir::KernelParam> wider{{"x", ir::ParamType{true, ir::DType::float32}},
                                           {"n", ir::ParamType{false, ir::DType::int64}}};
  other = request;
  other.signature = wider;
  CHECK(run::definition_identity(other) != id);
  // The launch configuration times differently: 8 warps is another kernel.
  ir::KernelMetadata eight = metadata;
  eight.num_warps = 8;
  other = request;
  other.metadata = &eight;
  CHECK(run::definition_identity(other) != id);
  // A binary's path and entry are part of the definition.
  const ir::BinaryRef a{"k/a.cubin", "k"};
  const ir::BinaryRef b{"k/b.cubin", "k"};
  other = request;
  other.binary = &a;
  const std::string with_a = run::definition_identity(other);
  other.binary = &b;
  CHECK(run::definition_identity(other) != with_a);
}

TEST_CASE("kernel identity: a binary recompiled under the same path gets a new identity") {
  // The definition names a path; what runs is the file's content. Named by
  // the definition only, a cubin rebuilt in place replayed the choice
  // measured with the old one.
  std::string t = (fs::temp_directory_path() / "wrapir-kernel-identity.XXXXXX").string();
  REQUIRE(::mkdtemp(t.data()) != nullptr);
  const fs::path dir = t;
  const fs::path file = dir / "add.cubin";
  ir::KernelMetadata metadata;
  metadata.num_warps = 4;
  const ir::BinaryRef ref{"add.cubin", "add_kernel"};
  const run::KernelRequest request{"add_kernel", ir::KernelLanguage::cubin, "", signature, &metadata, &ref};
  const auto identity_of_file = [&] {
    const std::string bytes = read_bytes(file);
    const std::string_view loaded(bytes);
    return run::loaded_kernel_identity(request, std::span(&loaded, 1));
  };

  write_bytes(file, std::string("\x7f" "ELF first build", 16));
  const std::string first = identity_of_file();
  CHECK(first.starts_with("add_kernel#"));
  CHECK(identity_of_file() == first);

  write_bytes(file, std::string("\x7f" "ELF second build", 17));
  const std::string second = identity_of_file();
  CHECK(second != first);
  // Not a hash of the definition alone, which the rebuild leaves unchanged.
  CHECK(second != run::definition_identity(request));

  write_bytes(file, std::string("\x7f" "ELF first build", 16));
  CHECK(identity_of_file() == first);  // the same bytes: the same kernel
  fs::remove_all(dir);
}

TEST_CASE("kernel identity: each loaded file counts, and where one ends") {
  const run::KernelRequest request{"triton_poi_0", ir::KernelLanguage::triton, "def k(): pass", signature};
  const std::array<std::string_view, 2> split_one{"cubin", "metadata"};
  const std::array<std::string_view, 2> split_two{"cubi", "nmetadata"};
  const std::array<std::string_view, 1> only_cubin{"cubin"};
  CHECK(run::loaded_kernel_identity(request, split_one) != run::loaded_kernel_identity(request, split_two));
  CHECK(run::loaded_kernel_identity(request, split_one) != run::loaded_kernel_identity(request, only_cubin));
  CHECK(run::loaded_kernel_identity(request, {}) != run::definition_identity(request));
}
