// libFuzzer target for wrapir's safetensors reader (include/wrapir/io/safetensors.hpp).
//
// Build and run (clang):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude tests/fuzz/safetensors_fuzz.cpp \
//     -lboost_json -o /tmp/safetensors_fuzz
//   /tmp/safetensors_fuzz -max_total_time=60 tests/fuzz/corpus/safetensors
//
// Invariants, checked on every input (a failure traps):
//   * parsing never throws, crashes, hangs or allocates more than the input
//     justifies, and a refusal is one line of text;
//   * an accepted file's tensors own its data bytes exactly;
//   * an accepted file writes back to bytes that parse to the same tensors
//     (names, order, dtypes, shapes, bytes) and metadata, and writing those
//     gives the same bytes again (the writer is canonical).

#include <wrapir/io/safetensors.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "safetensors_fuzz invariant failed: %s\n%s\n", what, detail.c_str());
  __builtin_trap();
}

bool same(const wrapir::io::TensorFile& a, const wrapir::io::TensorFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    const auto& [na, ta] = a.tensors[i];
    const auto& [nb, tb] = b.tensors[i];
    if (na != nb || ta.dtype != tb.dtype || ta.sizes != tb.sizes) return false;
    const auto bytes = static_cast<std::size_t>(ta.numel() * wrapir::ir::itemsize(ta.dtype));
    if (bytes > 0 && std::memcmp(ta.data(), tb.data(), bytes) != 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto bytes = std::as_bytes(std::span<const std::uint8_t>(data, size));
    auto file = wrapir::io::parse_safetensors(bytes);
    if (!file) {
      if (file.error().message.empty() || file.error().message.find('\n') != std::string::npos)
        fail("refusal is not one line", file.error().message);
      return 0;
    }
    // Every data byte belongs to exactly one tensor (the reference
    // implementation's rule: no overlap, no gap, nothing trailing).
    std::uint64_t header = 0, owned = 0;
    for (std::size_t i = 0; i < 8; ++i) header |= static_cast<std::uint64_t>(data[i]) << (8 * i);
    for (const auto& [name, t] : file->tensors)
      owned += static_cast<std::uint64_t>(t.numel() * wrapir::ir::itemsize(t.dtype));
    if (owned != size - 8 - header) fail("an accepted file has data bytes no tensor owns");
    auto written = wrapir::io::to_safetensors(*file);
    if (!written) fail("an accepted file does not write", written.error().message);
    auto again = wrapir::io::parse_safetensors(std::as_bytes(std::span<const char>(written->data(), written->size())));
    if (!again) fail("a written file does not parse", again.error().message);
    if (!same(*file, *again)) fail("a written file parses to other tensors");
    auto rewritten = wrapir::io::to_safetensors(*again);
    if (!rewritten || *rewritten != *written) fail("the writer is not canonical");
  } catch (const std::exception& e) {
    fail("exception", e.what());
  }
  return 0;
}
