// Tests of loading a document read in chunks, `io::program_from_json(
// document_bytes, read_at)` (include/wrapir/io/json.hpp): whatever the
// chunk size, it gives what loading the whole text gives — the same program
// or the same diagnostic, positions included — on the fuzzer's seed corpus,
// on mutants of it, and on programs whose strings are escaped or split
// across chunks; it reads the document front to back once; and it refuses
// a reader that misbehaves.

#include <wrapir/expr/ops.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/program.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace wrapir;

/// A reader of `text` that records where it was asked to read.
struct MemoryReader {
  std::string_view text;
  std::vector<std::size_t>* offsets = nullptr;
  Result<std::size_t> operator()(std::size_t offset, std::span<char> buffer) const {
    if (offsets) offsets->push_back(offset);
    const std::size_t n = offset >= text.size() ? 0 : std::min(buffer.size(), text.size() - offset);
    if (n) std::memcpy(buffer.data(), text.data() + offset, n);
    return n;
  }
};

/// What a load gave: the program as `to_json` writes it, or the diagnostic.
std::string outcome(const Result<ir::Program>& r) {
  return r.has_value() ? "loaded " + io::to_json(r.value()) : "refused: " + r.error().message;
}

std::string whole(std::string_view text, io::JsonLoadOptions options = {}) {
  return outcome(io::program_from_json(text, options));
}

std::string in_chunks(std::string_view text, std::size_t chunk_bytes, io::JsonLoadOptions options = {}) {
  options.read_chunk_bytes = chunk_bytes;
  return outcome(io::program_from_json(text.size(), MemoryReader{text}, options));
}

std::vector<std::string> seed_corpus() {
  std::vector<std::string> documents;
  const std::filesystem::path dir = std::filesystem::path(WRAPIR_SOURCE_DIR) / "tests/fuzz/corpus/json_fuzz";
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    documents.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return documents;
}

constexpr std::size_t chunk_sizes[] = {1, 2, 3, 5, 8, 13, 64, 4096, std::size_t{1} << 18};

}  // namespace

TEST_CASE("io/json chunks: the seed corpus loads the same whole and in chunks of any size") {
  const std::vector<std::string> corpus = seed_corpus();
  REQUIRE(corpus.size() >= 10);
  std::size_t loaded = 0;
  for (const std::string& text : corpus) {
    const std::string expected = whole(text);
    loaded += expected.starts_with("loaded") ? 1 : 0;
    for (const std::size_t chunk : chunk_sizes) {
      INFO("chunk ", chunk, ": ", text.substr(0, 200));
      CHECK(in_chunks(text, chunk) == expected);
    }
  }
  // Both kinds of outcome are compared.
  CHECK(loaded >= 3);
  CHECK(loaded < corpus.size());
}

TEST_CASE("io/json chunks: mutants of the corpus get the same diagnostic, positions included") {
  // Syntax errors inside a token that straddles two chunks (a misspelt
  // literal, a bad UTF-8 sequence or escape, a number cut short) are where
  // the two ways of parsing could place them differently.
  const std::vector<std::string> corpus = seed_corpus();
  const char* const pieces[] = {"\xc3", "\xe2\x82", "\xff", "tru", "nul", "fals", "\\u12", "\\ud800", "\\q",
                                "\x01", "1e", "-", "01", "]", "}", ",", "\"", "{", "[", "1.5e+", "\\",
                                "\xf0\x9f\x98", "12345678901234567890123", "\"a\":1", "\n"};
  std::mt19937_64 rng(20261126);
  std::size_t refused = 0;
  for (int i = 0; i < 600; ++i) {
    std::string text = corpus[rng() % corpus.size()];
    for (int m = 0, n = 1 + static_cast<int>(rng() % 3); m < n; ++m) {
      const std::size_t at = rng() % (text.size() + 1);
      switch (rng() % 4) {
        case 0: text.insert(at, pieces[rng() % std::size(pieces)]); break;
        case 1:
          if (at < text.size()) text[at] = static_cast<char>(rng());
          break;
        case 2: text.resize(at); break;
        default:
          if (at < text.size()) text.erase(at, 1 + rng() % 4);
      }
    }
    const std::string expected = whole(text);
    refused += expected.starts_with("refused: invalid JSON") ? 1 : 0;
    const std::size_t chunk = 1 + rng() % 40;
    INFO("chunk ", chunk, ": ", text);
    CHECK(in_chunks(text, chunk) == expected);
  }
  CHECK(refused > 100);  // syntax errors are most of what the mutants test
}

TEST_CASE("io/json chunks: a bad byte deep in a long escaped string is placed as a whole parse places it") {
  // Within a string holding an escape, the parser works through a scratch
  // buffer of a few KiB counted from the first escape; a bad UTF-8 sequence
  // or escape at its boundary is reported at another byte than inside it.
  // Loading in chunks must count those boundaries from the same place even
  // when the string began more than a re-parse window before the bad byte
  // (found by the fuzzer: a string of 4,000 spaces after an escape).
  const char* const bad[] = {"\xe2\xe2\xe2\xe2", "\xe1\xdf\xdf\xdf ", "\xe0\xe6   ", "\xf0\x9f\x98 ", "\\q",
                             "\\u12x4", "\\ud800\\u0041", "\x01"};
  std::size_t checked = 0;
  for (const char* wrong : bad) {
    for (const std::size_t spaces : {4000, 4093, 4094, 4095, 4096, 4097, 8190, 9000, 12287, 20000}) {
      const std::string text = "{\"format\":\"wrapir\",\"name\":\"\\u0061" + std::string(spaces, ' ') + wrong +
                               std::string(50, 'x') + "\"}";
      const std::string expected = whole(text);
      REQUIRE(expected.starts_with("refused: invalid JSON"));
      // Chunk sizes that end a chunk on each byte around the bad one.
      const std::size_t bad_at = text.find(wrong[0], 30);
      for (std::size_t chunk : {std::size_t{1}, std::size_t{6}, std::size_t{64}, std::size_t{4096}}) {
        INFO("spaces ", spaces, ", chunk ", chunk, ", bad ", wrong);
        CHECK(in_chunks(text, chunk) == expected);
        ++checked;
      }
      for (std::size_t end = bad_at - 1; end <= bad_at + 3; ++end) {
        INFO("spaces ", spaces, ", a chunk ends after byte ", end, ", bad ", wrong);
        CHECK(in_chunks(text, end + 1) == expected);
        ++checked;
      }
    }
  }
  CHECK(checked == std::size(bad) * 10 * 9);
}

TEST_CASE("io/json chunks: names and expressions outlive the chunks and nodes they came in") {
  // Escaped names (unescaped into the parser's scratch space), long names
  // (more than the decoder's cache of recent names keeps) and expressions
  // all split across chunks, then named again by later lines, once their
  // own line's nodes and strings are gone.
  ir::Program p{"chunks"};
  ir::Builder b{p};
  const expr::Expr s0 = b.size_symbol("s0");
  const std::string long_name(60, 'x');
  for (int i = 0; i < 300; ++i) {
    const std::string name = (i % 3 == 0 ? long_name : std::string("buf_in")) + std::to_string(i);
    const ir::BufferId input = b.input(name, {s0}, ir::DType::float32, cuda_device(0));
    const ir::BufferId view = b.view(input, {s0}, {p.context->integer(1)}, p.context->integer(0));
    const ir::BufferId made = b.empty({s0 * p.context->integer(i % 7 + 1)}, ir::DType::float32);
    b.comment("line " + std::to_string(i));
    b.free({view, made});
  }
  const std::string text = io::to_json(p);
  // The same document with every buffer name written with an escape.
  std::string escaped;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 4, "\"buf") == 0) {
      escaped += "\"\\u0062uf";
      i += 3;
    } else {
      escaped += text[i];
    }
  }
  const std::string expected = whole(text);
  REQUIRE(expected.starts_with("loaded"));
  CHECK(whole(escaped) == expected);
  for (const std::size_t chunk : chunk_sizes) {
    INFO("chunk ", chunk);
    CHECK(in_chunks(text, chunk) == expected);
    CHECK(in_chunks(escaped, chunk) == expected);
  }
  // Into a context that has the symbols already: the same.
  auto loaded = io::program_from_json(text.size(), MemoryReader{text}, {.context = p.context, .read_chunk_bytes = 7});
  REQUIRE(loaded.has_value());
  CHECK(loaded.value() == p);
}

TEST_CASE("io/json chunks: the document is read front to back once, one chunk at a time") {
  ir::Program p{"once"};
  ir::Builder b{p};
  for (int i = 0; i < 2000; ++i) b.comment("a line of text, number " + std::to_string(i));
  const std::string text = io::to_json(p);
  std::vector<std::size_t> offsets;
  io::JsonLoadOptions options;
  options.read_chunk_bytes = 4096;
  auto loaded = io::program_from_json(text.size(), MemoryReader{text, &offsets}, options);
  REQUIRE(loaded.has_value());
  CHECK(loaded.value().body.size() == 2000);
  REQUIRE(offsets.size() == (text.size() + 4095) / 4096);
  for (std::size_t i = 0; i < offsets.size(); ++i) CHECK(offsets[i] == i * 4096);
}

TEST_CASE("io/json chunks: readers that fail, end early or overrun are refused with a diagnostic") {
  const std::string text = io::to_json(ir::Program{"p"});
  const std::size_t bytes = text.size();

  SUBCASE("a reader's diagnostic, with where it was reading") {
    auto r = io::program_from_json(
        bytes,
        [&](std::size_t offset, std::span<char> buffer) -> Result<std::size_t> {
          if (offset >= 8) return Diagnostic{"disk on fire"};
          return MemoryReader{text}(offset, buffer);
        },
        {.read_chunk_bytes = 8});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message == "cannot read the document at byte 8: disk on fire");
  }
  SUBCASE("more bytes than asked for") {
    auto r = io::program_from_json(bytes, [&](std::size_t, std::span<char> buffer) -> Result<std::size_t> {
      return buffer.size() + 1;
    });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.find("the reader returned") != std::string::npos);
  }
  SUBCASE("a document that ends sooner than announced is what was read") {
    const std::string expected = whole(text.substr(0, bytes / 2));
    CHECK(expected.starts_with("refused: invalid JSON at line 1"));
    auto r = io::program_from_json(bytes + 100, MemoryReader{text.substr(0, bytes / 2)}, {.read_chunk_bytes = 5});
    CHECK(outcome(r) == expected);
  }
  SUBCASE("too large: refused before anything is read") {
    bool read = false;
    auto r = io::program_from_json(
        std::size_t{1} << 40,
        [&](std::size_t, std::span<char>) -> Result<std::size_t> {
          read = true;
          return 0;
        },
        {.max_bytes = 1000});
    REQUIRE_FALSE(r.has_value());
    CHECK_FALSE(read);
    CHECK(r.error().message.find("JsonLoadOptions::max_bytes") != std::string::npos);
  }
  SUBCASE("an empty document") {
    CHECK(in_chunks("", 16) == whole(""));
    CHECK(whole("").starts_with("refused: invalid JSON at line 1, column 1"));
  }
  SUBCASE("text after the document, in a later chunk") {
    const std::string trailing = text + std::string(100, ' ') + "x";
    CHECK(in_chunks(trailing, 16) == whole(trailing));
    CHECK(whole(trailing).find("unexpected text after the document") != std::string::npos);
  }
}
