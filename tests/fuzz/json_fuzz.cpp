// libFuzzer target for wrapir's JSON codec (include/wrapir/io/json.hpp).
//
// Build and run (clang):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude tests/fuzz/json_fuzz.cpp \
//     -lboost_json -o /tmp/json_fuzz
//   cp -r tests/fuzz/corpus/json_fuzz /tmp/json_corpus
//   /tmp/json_fuzz -max_total_time=60 -dict=tests/fuzz/corpus/json_fuzz.dict /tmp/json_corpus
//
// Invariants, checked on every input (a failure traps):
//   * loading never throws, crashes or hangs, and a refusal is one line of
//     text without a column;
//   * a loaded program saves to JSON that loads again, and saving that
//     second program gives the same text (the first save is canonical);
//   * the same holds for the pretty form, and loading the saved text into
//     the first program's context gives a program whose text is the same;
//   * loading the input in chunks (of 1 to 64 bytes, by the input's length)
//     gives what loading it whole gives: the same program's text or the
//     same diagnostic.

#include <wrapir/io/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(const char* what, std::string_view input, const std::string& detail = {}) {
  std::fprintf(stderr, "json_fuzz invariant failed: %s\ninput: %.*s\n%s\n", what, static_cast<int>(input.size()),
               input.data(), detail.c_str());
  __builtin_trap();
}

void check_refusal(const wrapir::Diagnostic& d, std::string_view input) {
  if (d.message.empty() || d.message.find('\n') != std::string::npos)
    fail("diagnostic is not one line", input, d.message);
  if (d.column) fail("diagnostic has a column", input, d.message);
}

void check(std::string_view input) {
  wrapir::io::JsonLoadOptions options;
  options.max_depth = 64;  // keeps recursion (and ASan's frames) small
  auto first = wrapir::io::program_from_json(input, options);

  wrapir::io::JsonLoadOptions chunked = options;
  chunked.read_chunk_bytes = 1 + input.size() % 64;
  auto read_at = [&](std::size_t offset, std::span<char> buffer) -> wrapir::Result<std::size_t> {
    const std::size_t n = offset >= input.size() ? 0 : std::min(buffer.size(), input.size() - offset);
    if (n) std::memcpy(buffer.data(), input.data() + offset, n);
    return n;
  };
  auto streamed = wrapir::io::program_from_json(input.size(), read_at, chunked);
  const std::string whole_outcome = first ? wrapir::io::to_json(first.value()) : first.error().message;
  const std::string streamed_outcome = streamed ? wrapir::io::to_json(streamed.value()) : streamed.error().message;
  if (whole_outcome != streamed_outcome)
    fail("loading in chunks differs from loading whole", input, whole_outcome + "\n" + streamed_outcome);

  if (!first) {
    check_refusal(first.error(), input);
    return;
  }
  const std::string saved = wrapir::io::to_json(first.value());
  auto second = wrapir::io::program_from_json(saved, {});
  if (!second) fail("a saved program does not load", input, saved + "\n" + second.error().message);
  const std::string resaved = wrapir::io::to_json(second.value());
  if (resaved != saved) fail("save(load(save(p))) != save(p)", input, saved + "\n" + resaved);

  const std::string pretty = wrapir::io::to_json(first.value(), {.pretty = true});
  auto from_pretty = wrapir::io::program_from_json(pretty, {.context = first.value().context});
  if (!from_pretty) fail("the pretty form does not load", input, pretty + "\n" + from_pretty.error().message);
  if (wrapir::io::to_json(from_pretty.value()) != saved) fail("the pretty form holds another program", input, pretty);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    check(input);
  } catch (const std::exception& e) {
    fail("an exception escaped", input, e.what());
  }
  return 0;
}
