// libFuzzer target for the text form of programs (io/text.hpp, emit/text.hpp).
//
// Build and run (clang):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude tests/fuzz/text_fuzz.cpp -o /tmp/text_fuzz
//   cp -r tests/fuzz/corpus/text_fuzz /tmp/text_corpus
//   /tmp/text_fuzz -max_len=4096 -dict=tests/fuzz/corpus/text_fuzz.dict /tmp/text_corpus
//
// Invariants, checked on every input (a failure traps):
//   * parsing never throws; an error is one line "line L, column C: ...";
//   * what parses prints, and the printed text parses again (into a fresh
//     context and into the first parse's context) and prints to the same
//     bytes: print -> parse -> print is stable;
//   * reparsed into the first parse's context, the program is == to the
//     first parse (unless it holds a NaN argument, which equals nothing, or
//     an Identity expression, which prints as its operand).

#include <wrapir/emit/text.hpp>
#include <wrapir/io/text.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

namespace {

namespace ir = wrapir::ir;

[[noreturn]] void fail(const char* what, std::string_view input, const std::string& detail = {}) {
  std::fprintf(stderr, "text_fuzz invariant failed: %s\ninput:\n%.*s\n---\n%s\n", what, static_cast<int>(input.size()),
               input.data(), detail.c_str());
  __builtin_trap();
}

/// Whether a NaN argument may hide in the program printed as `text` (which
/// spells every NaN `nan` or `-nan`; a string or name may contain the
/// letters too, which only skips the == check more often).
bool may_hold_nan(const std::string& text) { return text.find("nan") != std::string::npos; }

wrapir::Result<ir::Program> parse(std::string_view text, wrapir::text::TextParseOptions options,
                                  std::string_view input) {
  try {
    auto r = wrapir::text::parse_program_text(text, std::move(options));
    if (!r) {
      const std::string& m = r.error().message;
      if (m.rfind("line ", 0) != 0 || m.find(", column ") == std::string::npos)
        fail("diagnostic without 'line L, column C'", input, m);
      if (m.find('\n') != std::string::npos) fail("diagnostic is not one line", input, m);
    }
    return r;
  } catch (const std::exception& e) {
    fail("parse threw", input, e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 8192) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  wrapir::text::TextParseOptions options;
  options.max_depth = 16;
  auto first = parse(input, options, input);
  if (!first) return 0;
  const std::string printed = wrapir::text::to_text(*first);

  // Into a fresh context: the text alone carries the program.
  auto again = parse(printed, options, input);
  if (!again) fail("the printed text does not parse", input, printed + "\n" + again.error().message);
  const std::string reprinted = wrapir::text::to_text(*again);
  if (reprinted != printed) fail("print -> parse -> print is not stable", input, printed + "\n---\n" + reprinted);

  // Into the first parse's context: the same program.
  options.context = first->context;
  auto same = parse(printed, options, input);
  if (!same) fail("the printed text does not parse into its own context", input, same.error().message);
  // Expressions print as expr::print_python writes them, which drops an
  // Identity node (documented); the texts still agree, checked above.
  const bool may_hold_identity = input.find("Identity") != std::string_view::npos;
  if (!may_hold_nan(printed) && !may_hold_identity && !(*same == *first))
    fail("parse(print(p)) != p in p's context", input, printed);
  return 0;
}
