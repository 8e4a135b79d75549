#pragma once
/// \file
/// Loading: parsing a document onto its tape while decoding it.
///
/// Part of the JSON codec (io/json.hpp says what it does and how);
/// include <wrapir/io/json.hpp>, not this.

#include <wrapir/io/json.hpp>
#include <wrapir/io/detail/json_tape_builder.hpp>

namespace wrapir::io::detail::json {

/// The diagnostic of a parse that stopped with `ec` at `where` (a text
/// position).
inline Diagnostic parse_failure(const TapeBuilder& handler, const bj::error_code& ec, const std::string& where,
                                std::size_t max_depth) {
  if (handler.duplicate_key)
    return Diagnostic{"invalid JSON at " + where + ": duplicate key " + ir::quote_for_diagnostic(*handler.duplicate_key) +
                      " in the object ending here"};
  if (ec == bj::error::too_deep)
    return Diagnostic{"invalid JSON at " + where + ": nesting deeper than " + std::to_string(max_depth) +
                      " levels (JsonLoadOptions::max_depth)"};
  return Diagnostic{"invalid JSON at " + where + ": " + ec.message()};
}

inline Diagnostic too_large(std::size_t bytes, const JsonLoadOptions& options) {
  return Diagnostic{"input is " + std::to_string(bytes) + " bytes, more than the limit of " +
                    std::to_string(options.max_bytes) + " (JsonLoadOptions::max_bytes)"};
}

/// The tape of `text`, or why it is not a JSON document. `decoder` takes
/// the lines it can as they are parsed.
inline Result<TapeBuilder> parse_tape(std::string_view text, std::size_t max_depth, Decoder& decoder) {
  bj::parse_options parse_options;
  parse_options.max_depth = max_depth;
  bj::basic_parser<TapeBuilder> parser(parse_options, text.size(), false, decoder);
  parser.handler().next_chunk(text, 0);
  bj::error_code ec;
  const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
  if (ec) return parse_failure(parser.handler(), ec, text_position(text, consumed), max_depth);
  if (consumed != text.size())
    return Diagnostic{"invalid JSON at " + text_position(text, consumed) + ": unexpected text after the document"};
  return std::move(parser.handler());
}

/// `program_from_json`, telling `statistics` (when not null) what reading
/// ahead did.
inline Result<ir::Program> load_program(std::string_view text, const JsonLoadOptions& options,
                                        LoadStatistics* statistics) {
  if (text.size() > options.max_bytes) return too_large(text.size(), options);
  try {
    return wrapir::detail::catch_failure([&] {
      std::shared_ptr<expr::Context> context = options.context ? options.context : std::make_shared<expr::Context>();
      Decoder decoder(*context, options, text.size(), statistics, text);
      Result<TapeBuilder> tape = parse_tape(text, options.max_depth, decoder);
      if (!tape) wrapir::detail::fail(tape.error());
      ir::Program program{"program", context};
      decoder.document(tape.value().nodes.data(), program);
      return program;
    });
  } catch (const std::bad_alloc&) {
    // A reservation sized by the document (an array's length) can exceed
    // what the machine has.
    return Diagnostic{"out of memory while loading a " + std::to_string(text.size()) + "-byte document"};
  }
}

// ===========================================================================
// Loading a document read in chunks
// ===========================================================================

/// Reads a document of `bytes` bytes through `read_at` in pieces of at
/// most `buffer.size()` bytes.
class ChunkReader {
 public:
  ChunkReader(const io::JsonReadAt& read_at, std::size_t bytes, std::span<char> buffer) noexcept
      : read_at_(read_at), bytes_(bytes), buffer_(buffer) {}

  /// The bytes from `offset` on, at most `limit` of them: empty at the end
  /// of the document (or where the reader ends sooner).
  std::string_view read(std::size_t offset, std::size_t limit = std::numeric_limits<std::size_t>::max()) {
    if (offset >= bytes_) return {};
    const std::size_t wanted = std::min({buffer_.size(), bytes_ - offset, limit});
    Result<std::size_t> got = read_at_(offset, buffer_.first(wanted));
    if (!got) wrapir::detail::fail("cannot read the document at byte " + std::to_string(offset) + ": " + got.error().message);
    if (got.value() > wanted)
      wrapir::detail::fail("cannot read the document at byte " + std::to_string(offset) + ": the reader returned " +
                           std::to_string(got.value()) + " bytes where " + std::to_string(wanted) + " were asked for");
    return {buffer_.data(), got.value()};
  }

  /// `text_position` of byte `offset`, reading the document again up to it.
  std::string position(std::size_t offset) {
    std::size_t line = 1, line_start = 0, at = 0;
    while (at < offset) {
      const std::string_view piece = read(at, offset - at);
      if (piece.empty()) break;
      for (std::size_t i = 0; i < piece.size(); ++i)
        if (piece[i] == '\n') {
          ++line;
          line_start = at + i + 1;
        }
      at += piece.size();
    }
    offset = std::min(offset, at);
    return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1) + " (byte " +
           std::to_string(offset) + ")";
  }

 private:
  const io::JsonReadAt& read_at_;
  std::size_t bytes_;
  std::span<char> buffer_;
};

/// A parser handler that only checks the syntax.
struct SyntaxChecker {
  static constexpr std::size_t max_object_size = TapeBuilder::max_object_size;
  static constexpr std::size_t max_array_size = TapeBuilder::max_array_size;
  static constexpr std::size_t max_key_size = TapeBuilder::max_key_size;
  static constexpr std::size_t max_string_size = TapeBuilder::max_string_size;
  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_object_begin(bj::error_code&) { return true; }
  bool on_object_end(std::size_t, bj::error_code&) { return true; }
  bool on_array_begin(bj::error_code&) { return true; }
  bool on_array_end(std::size_t, bj::error_code&) { return true; }
  bool on_key_part(bj::string_view, std::size_t, bj::error_code&) { return true; }
  bool on_key(bj::string_view, std::size_t, bj::error_code&) { return true; }
  bool on_string_part(bj::string_view, std::size_t, bj::error_code&) { return true; }
  bool on_string(bj::string_view, std::size_t, bj::error_code&) { return true; }
  bool on_number_part(bj::string_view, bj::error_code&) { return true; }
  bool on_int64(std::int64_t, bj::string_view, bj::error_code&) { return true; }
  bool on_uint64(std::uint64_t, bj::string_view, bj::error_code&) { return true; }
  bool on_double(double, bj::string_view, bj::error_code&) { return true; }
  bool on_bool(bool, bj::error_code&) { return true; }
  bool on_null(bj::error_code&) { return true; }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }
};

/// Where the token holding byte `found` begins: the document's bytes before
/// it are valid JSON (the parser took them), so a scan that only follows
/// strings (a quote opens one, a backslash escapes the next byte, a quote
/// closes it) and delimiters (white space, `{}[],:`) knows where each
/// token starts.
inline std::size_t token_start(ChunkReader& reader, std::size_t found) {
  constexpr std::string_view delimiters = " \t\n\r{}[],:";
  enum class State : unsigned char { between, in_string, escaped } state = State::between;
  std::size_t start = 0, at = 0;
  while (at < found) {
    const std::string_view piece = reader.read(at, found - at);
    if (piece.empty()) break;
    for (std::size_t i = 0; i < piece.size(); ++i) {
      const char c = piece[i];
      switch (state) {
        case State::escaped: state = State::in_string; break;
        case State::in_string:
          if (c == '\\') state = State::escaped;
          else if (c == '"') {
            state = State::between;
            start = at + i + 1;
          }
          break;
        case State::between:
          if (c == '"') {
            state = State::in_string;
            start = at + i;
          } else if (delimiters.find(c) != std::string_view::npos) {
            start = at + i + 1;
          }
          break;
      }
    }
    at += piece.size();
  }
  return std::min(start, found);
}

/// Where the parser, given the whole document at once, stops at the syntax
/// error it found at byte `found` reading in chunks, and why (`ec`, which
/// it sets). They can differ when the bad token straddles two chunks:
/// whole, the parser reports some errors at the token's first byte (a
/// misspelt `true`) and others at the byte that is wrong (a bad UTF-8
/// sequence) from a look at several bytes at once, and names some
/// differently (a bad escape after a lone surrogate); in pieces it sees the
/// token a byte at a time. Within a string that holds an escape it also
/// works through a scratch buffer of a few KiB, whose boundaries (counted
/// from the first escape) decide which of those paths a bad byte takes: a
/// string resumed in a later piece counts them from another place. So the
/// document is parsed again, for its syntax only, with every byte from the
/// bad token's start (`token_start`) to `margin` past `found`, and at least
/// `margin` before it, in one piece: what the whole document's parse saw.
/// The piece is as long as the token, which loading keeps whole anyway.
inline std::size_t whole_text_error(const io::JsonReadAt& read_at, std::size_t bytes, std::size_t max_depth,
                                    std::size_t found, std::size_t chunk_bytes, bj::error_code& ec) {
  constexpr std::size_t margin = 4096;
  chunk_bytes = std::min(chunk_bytes, std::max<std::size_t>(bytes, 1));
  std::size_t window_begin = found > margin ? found - margin : 0;
  {
    auto scan_buffer = std::make_unique_for_overwrite<char[]>(chunk_bytes);
    ChunkReader scan(read_at, bytes, {scan_buffer.get(), chunk_bytes});
    window_begin = std::min(window_begin, token_start(scan, found));
  }
  const std::size_t window_end = std::min(bytes, found + margin);
  const std::size_t buffer_bytes = std::max(chunk_bytes, window_end - window_begin) + 1;
  auto buffer = std::make_unique_for_overwrite<char[]>(buffer_bytes);
  ChunkReader reader(read_at, bytes, {buffer.get(), buffer_bytes});
  bj::parse_options parse_options;
  parse_options.max_depth = max_depth;
  bj::basic_parser<SyntaxChecker> parser(parse_options);
  const bj::error_code found_ec = ec;
  ec = {};
  std::size_t at = 0;
  while (true) {
    // Up to the window, the window whole (a reader may return less than
    // asked: then what it gave), then the rest.
    const std::size_t limit = at < window_begin ? window_begin - at : at < window_end ? window_end - at : chunk_bytes;
    const std::string_view piece = reader.read(at, limit);
    if (piece.empty()) break;
    const std::size_t consumed = parser.write_some(true, piece.data(), piece.size(), ec);
    if (ec) return at + consumed;
    if (consumed < piece.size()) break;  // a whole document: not found again
    at += piece.size();
  }
  if (!parser.done()) parser.write_some(false, nullptr, 0, ec);
  if (ec) return at;
  ec = found_ec;  // not found again: keep what was
  return found;
}

/// `program_from_json(document_bytes, read_at, options)`, telling
/// `statistics` (when not null) what reading ahead did. The same program
/// or diagnostic as `load_program` of the whole text: the text is parsed
/// chunk by chunk with the same handler, which copies every string it keeps
/// (`TapeBuilder::strings`, dropped with the nodes of each line or table
/// entry read ahead), while the decoder copies what it remembers for the
/// rest of the load (`Decoder::keep`). Positions in diagnostics are offsets
/// in the whole document; a syntax error's is that of a whole-text parse
/// (`whole_text_error_offset`).
inline Result<ir::Program> load_program_in_chunks(std::size_t document_bytes, const io::JsonReadAt& read_at,
                                                  const JsonLoadOptions& options, LoadStatistics* statistics) {
  if (document_bytes > options.max_bytes) return too_large(document_bytes, options);
  const std::size_t chunk_bytes = std::clamp<std::size_t>(options.read_chunk_bytes, 1, std::size_t{1} << 30);
  try {
    return wrapir::detail::catch_failure([&] {
      std::shared_ptr<expr::Context> context = options.context ? options.context : std::make_shared<expr::Context>();
      Decoder decoder(*context, options, document_bytes, statistics);
      bj::parse_options parse_options;
      parse_options.max_depth = options.max_depth;
      bj::basic_parser<TapeBuilder> parser(parse_options, document_bytes, true, decoder);
      const std::size_t buffer_bytes = std::min(chunk_bytes, std::max<std::size_t>(document_bytes, 1));
      auto buffer = std::make_unique_for_overwrite<char[]>(buffer_bytes);
      ChunkReader reader(read_at, document_bytes, {buffer.get(), buffer_bytes});
      bj::error_code ec;
      std::size_t at = 0;
      auto stop = [&](std::size_t offset) {
        // The handler's own errors (a duplicate key) are where the object
        // ends in either way of parsing; the parser's may not be.
        if (ec && !parser.handler().duplicate_key)
          offset = whole_text_error(read_at, document_bytes, options.max_depth, offset, chunk_bytes, ec);
        const std::string where = reader.position(offset);
        if (ec) wrapir::detail::fail(parse_failure(parser.handler(), ec, where, options.max_depth));
        wrapir::detail::fail("invalid JSON at " + where + ": unexpected text after the document");
      };
      while (true) {
        const std::string_view piece = reader.read(at);
        if (piece.empty()) break;
        parser.handler().next_chunk(piece, at);
        const std::size_t consumed = parser.write_some(true, piece.data(), piece.size(), ec);
        if (ec || consumed < piece.size()) stop(at + consumed);
        at += piece.size();
      }
      parser.handler().next_chunk({}, at);
      parser.write_some(false, nullptr, 0, ec);
      if (ec) stop(at);
      buffer.reset();  // the chunks are parsed
      ir::Program program{"program", context};
      decoder.document(parser.handler().nodes.data(), program);
      return program;
    });
  } catch (const std::bad_alloc&) {
    return Diagnostic{"out of memory while loading a " + std::to_string(document_bytes) + "-byte document"};
  }
}

}  // namespace wrapir::io::detail::json
