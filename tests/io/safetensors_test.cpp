// Tests of include/wrapir/io/safetensors.hpp: round trips (dense and strided
// tensors, metadata, every dtype the format names), files the exporter wrote,
// and refusals of hostile files (lengths, offsets, dtypes, overflow).

// json.hpp first: it opens wrapir::io::detail, which once hid the
// wrapir::detail file helpers that safetensors.hpp calls (a regression test).
#include <wrapir/io/json.hpp>
#include <wrapir/io/safetensors.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace io = wrapir::io;
namespace run = wrapir::run;
namespace ir = wrapir::ir;

std::span<const std::byte> bytes_of(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

/// A file with `header` as its JSON and `data` after it.
std::string file_with(std::string header, std::string data = {}, std::optional<std::uint64_t> claimed = {}) {
  const std::uint64_t n = claimed.value_or(header.size());
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

}  // namespace

TEST_CASE("safetensors: a round trip keeps names, order, dtypes, shapes, values and metadata") {
  io::TensorFile f;
  run::Tensor a = run::empty_cpu({2, 3}, ir::DType::float32).value();
  for (int i = 0; i < 6; ++i) static_cast<float*>(a.data())[i] = static_cast<float>(i) * 1.5f;
  run::Tensor b = run::empty_cpu({4}, ir::DType::int64).value();
  for (int i = 0; i < 4; ++i) static_cast<std::int64_t*>(b.data())[i] = -i;
  run::Tensor empty = run::empty_cpu({0, 5}, ir::DType::bfloat16).value();
  run::Tensor scalar = run::empty_cpu({}, ir::DType::bool_).value();
  *static_cast<std::uint8_t*>(scalar.data()) = 1;
  f.tensors = {{"z_first", a}, {"b", b}, {"empty", empty}, {"flag", scalar}};
  f.metadata["scalars"] = R"({"s0": 3})";
  auto bytes = io::to_safetensors(f);
  REQUIRE(bytes);
  CHECK((bytes->size() - 8 - 0) % 1 == 0);
  auto back = io::parse_safetensors(bytes_of(*bytes));
  REQUIRE_MESSAGE(back, back.error().message);
  REQUIRE(back->tensors.size() == 4);
  CHECK(back->tensors[0].first == "z_first");
  CHECK(back->metadata.at("scalars") == R"({"s0": 3})");
  const run::Tensor& a2 = *back->find("z_first");
  CHECK(a2.sizes == std::vector<std::int64_t>{2, 3});
  CHECK(std::memcmp(a2.data(), a.data(), 24) == 0);
  CHECK(back->find("b")->dtype == ir::DType::int64);
  CHECK(std::memcmp(back->find("b")->data(), b.data(), 32) == 0);
  CHECK(back->find("empty")->numel() == 0);
  CHECK(back->find("flag")->dim() == 0);
  CHECK(*static_cast<const std::uint8_t*>(back->find("flag")->data()) == 1);
}

TEST_CASE("safetensors: strided tensors are written densely") {
  run::Tensor base = run::empty_cpu({2, 3}, ir::DType::int32).value();
  for (int i = 0; i < 6; ++i) static_cast<std::int32_t*>(base.data())[i] = i;
  run::Tensor t = run::as_strided(base, {3, 2}, {1, 3}, 0).value();  // the transpose
  io::TensorFile f;
  f.tensors = {{"t", t}};
  auto back = io::parse_safetensors(bytes_of(io::to_safetensors(f).value()));
  REQUIRE(back);
  const auto* v = static_cast<const std::int32_t*>(back->find("t")->data());
  CHECK(std::vector<std::int32_t>(v, v + 6) == std::vector<std::int32_t>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("safetensors: every dtype with a safetensors name round-trips") {
  for (std::size_t i = 0; i < ir::dtype_count; ++i) {
    const auto d = static_cast<ir::DType>(i);
    const auto name = io::safetensors_dtype_name(d);
    if (!name) continue;
    CHECK(io::dtype_from_safetensors_name(*name) == d);
  }
  CHECK_FALSE(io::dtype_from_safetensors_name("F31"));
}

TEST_CASE("safetensors: hostile files are refused with a reason") {
  auto refused = [](const std::string& file, std::string_view reason) {
    auto r = io::parse_safetensors(bytes_of(file));
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(r.error().message.find(reason) != std::string::npos, r.error().message);
  };
  refused("abc", "at least 8 bytes");
  refused(file_with("{}", "", 1000), "only");
  refused(file_with("{}", "", std::uint64_t{1} << 62), "limit");
  refused(file_with("[1]"), "not a JSON object");
  refused(file_with("{\"a\""), "not valid JSON");
  refused(file_with(R"({"a":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})", "abcd"), "unknown dtype");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "abcd"), "non-negative");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "abcd"), "needs 8");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", "abcd"), "reversed");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})", "abcd"), "the data has 4");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,4]}})", "abcd"),
          "overflows");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", "abcd"), "other than");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[1]}})", "abcd"), "needs dtype");
  refused(file_with(R"({"__metadata__":{"k":1}})"), "not a string");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"I32","shape":[1],"data_offsets":[2,6]}})",
                    "abcdefgh"),
          "overlap");
  refused(file_with(R"({"a":[[[[[[[[[[[[1]]]]]]]]]]]]})"), "not valid JSON");
  // Found by fuzz.safetensors: the writer refuses an empty name, so the reader must too.
  refused(file_with(R"({"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", "abcd"), "empty name");
}

// Regressions (issue 14 audit): Boost.JSON keeps the last of two equal keys,
// so a name given twice was read as its last tensor; and bytes no tensor
// owns were ignored. The reference implementation refuses both.
TEST_CASE("safetensors: a key given twice and bytes no tensor owns are refused") {
  auto refused = [](const std::string& file, std::string_view reason) {
    auto r = io::parse_safetensors(bytes_of(file));
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(r.error().message.find(reason) != std::string::npos, r.error().message);
  };
  refused(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}})",
                    "abcdefgh"),
          "the header gives 'a' twice");
  refused(file_with(R"({"__metadata__":{"k":"1","k":"2"}})"), "the header gives 'k' twice");
  refused(file_with(R"({"__metadata__":{},"__metadata__":{}})"), "gives '__metadata__' twice");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[1],"dtype":"I32","data_offsets":[0,4]}})", "abcd"),
          "gives 'dtype' twice");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", "abcdXYZ"),
          "3 bytes after the last tensor's data belong to no tensor");
  refused(file_with(R"({})", "x"), "1 bytes after the last tensor's data");
  refused(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", "abcdefgh"),
          "bytes 0 to 4 of the data belong to no tensor (before 'a')");
  // What is still accepted: tensors in any order of the header, empty
  // tensors anywhere, keys that differ only in case.
  auto ok = io::parse_safetensors(bytes_of(file_with(
      R"({"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},"e":{"dtype":"F32","shape":[0],"data_offsets":[1,1]},)"
      R"("B":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})",
      "abcd")));
  REQUIRE_MESSAGE(ok, ok.error().message);
  CHECK(ok->tensors.size() == 3);
  // A key given twice in the metadata's own JSON text is the tool's to
  // refuse (tools/wrapir/tensor_inputs.hpp); the finder serves both.
  CHECK(io::safetensors_detail::duplicate_key(R"({"s0": 1, "s1": 2, "s0": 3})", 4) == std::optional<std::string>("s0"));
  CHECK(io::safetensors_detail::duplicate_key(R"({"s0": {"x": 1}, "s1": {"x": 2}})", 4) == std::nullopt);
  CHECK(io::safetensors_detail::duplicate_key(R"({"a": [{"x": 1, "x": 2}]})", 4) == std::optional<std::string>("x"));
  CHECK(io::safetensors_detail::duplicate_key(R"({"a")", 4) == std::nullopt);  // invalid JSON: the parse says so
}

TEST_CASE("safetensors: files and the exporter's format") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "wrapir_safetensors_test";
  std::filesystem::create_directories(dir);
  io::TensorFile f;
  f.tensors = {{"arg0_1", run::empty_cpu({2}, ir::DType::float16).value()}};
  std::memset(f.tensors[0].second.data(), 0, 4);
  f.metadata["scalars"] = "{}";
  REQUIRE(io::write_safetensors(dir / "inputs.safetensors", f));
  auto back = io::read_safetensors(dir / "inputs.safetensors");
  REQUIRE_MESSAGE(back, back.error().message);
  CHECK(back->find("arg0_1")->dtype == ir::DType::float16);
  auto missing = io::read_safetensors(dir / "no_such_file");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("no_such_file") != std::string::npos);
  std::filesystem::remove_all(dir);
  // A file the exporter wrote (torch's safetensors), when the bridge ran here.
  const std::filesystem::path exported = "/tmp/bridge/c1/add_relu/inputs.safetensors";
  if (std::filesystem::exists(exported)) {
    auto e = io::read_safetensors(exported);
    REQUIRE_MESSAGE(e, e.error().message);
    CHECK(e->find("arg0_1") != nullptr);
  }
}
