#pragma once
/// \file
/// The JSON form of a wrapir program, both directions (schema version 1).
///
/// ```
/// std::string text = wrapir::io::to_json(program);              // compact
/// std::string pretty = wrapir::io::to_json(program, {.pretty = true});
/// wrapir::Result<wrapir::Program> loaded = wrapir::io::program_from_json(text);
/// if (!loaded) std::cerr << loaded.error().to_string() << "\n";
/// ```
///
/// A document is `{"format": "wrapir", "version": 1, "program": {...}}`.
/// Tables hold names; lines, inputs and outputs refer to buffers, kernels,
/// pools and subgraphs by those names; expressions are strings in the syntax
/// of `expr::print_python` (integers also as JSON numbers); lines are
/// `{"kind": "<line kind>", <member>: <value>, ...}` with the members of the
/// line's struct as keys. docs/json-schema.md describes every field.
///
/// Writing is generic over the line kinds through their reflection
/// (`ir::for_each_field`), and so is reading, which dispatches on `"kind"`
/// over `ir::LineKinds`: a new line kind whose member types are known here
/// needs no code in this file.
///
/// Loading checks everything a hostile document could get wrong and answers
/// with one `Diagnostic` whose message starts with the JSON path of the
/// culprit (`$.program.body[3].buffer: unknown buffer 'buf9'`), or, for text
/// that is not JSON, its line and column. Every string that becomes a name in
/// generated code is validated (`ir::check_name`, `ir::check_operator_name`);
/// unknown fields, duplicate keys, duplicate names and undeclared symbols are
/// errors; nesting and size are bounded (`JsonLoadOptions`). A failed load
/// returns no program at all. It may leave new symbols and expressions in a
/// context given through `JsonLoadOptions::context` (contexts only grow), but
/// no new symbol unless the text is a whole JSON document with the right
/// `"format"` and `"version"`.
///
/// Parsing uses Boost.JSON's conforming parser (`boost::json::basic_parser`)
/// with a handler that builds a compact tape of the document (16 bytes per
/// value, strings viewing the input) instead of a `boost::json::value` tree,
/// rejects duplicate keys, and re-reads floating-point numbers with
/// `std::from_chars` (Boost 1.81 rounds some of them wrongly). When the
/// document's `"format"` and `"version"` and a program's tables come first
/// (as `to_json` writes them), each table entry and each line is decoded as
/// soon as its object is complete and leaves the tape, so that a large
/// document never sits in memory twice; the result and the first diagnostic
/// are those of any other member order (`detail::json::Decoder` says why).
/// Names are resolved through hash maps and each distinct expression string
/// is parsed once per program. Writing appends to one `std::string` with a
/// small escaping writer (no DOM).
///
/// The code is in pieces, each one responsibility: detail/json_writer.hpp
/// (JSON text out), json_schema.hpp (what reader and writer agree on),
/// json_encoder.hpp (a program out), json_tape.hpp (the parsed document),
/// json_reader.hpp (paths, typed access, name tables), json_decoder.hpp (a
/// program in), json_tape_builder.hpp (the parser handler), json_load.hpp
/// (the two together); impl/json.ipp defines the functions below.

#include <wrapir/detail/config.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/program.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace wrapir::io {

/// The `"format"` of every document.
inline constexpr std::string_view json_format_name = "wrapir";
/// The schema version this wrapir writes and the only one it reads.
inline constexpr std::int64_t json_format_version = 1;

/// How `to_json` writes.
struct JsonOptions {
  /// Newlines and indentation; compact (no whitespace at all) by default.
  bool pretty = false;
  /// Spaces per level when `pretty`.
  unsigned indent = 2;
};

/// How `program_from_json` reads.
struct JsonLoadOptions {
  /// The expression context to load into; a fresh one when null. Loading a
  /// program's JSON into the program's own context gives a program `==` to
  /// it (expressions compare by identity within one context). A program
  /// whose symbols this context lacks is decoded only once the whole
  /// document has parsed (new symbols are made only then), which keeps all
  /// of its lines on the parser's tape at once.
  std::shared_ptr<expr::Context> context{};
  /// Longer input is refused before it is parsed.
  std::size_t max_bytes = std::size_t{1} << 30;
  /// Nesting limit of JSON arrays and objects; it bounds subgraph nesting and
  /// argument-list nesting too, and with them the recursion of the loader
  /// (a few hundred bytes of stack per level).
  std::size_t max_depth = 256;
  /// `expr::ParseOptions::max_depth` for each expression string.
  std::size_t max_expression_depth = 256;
  /// The work all the expression strings of the document may take together,
  /// in node lookups (`expr::ParseOptions::max_lookups` bounds each one);
  /// absent: 2^21 plus one per byte of the document, which only documents
  /// that nest large subexpressions deeply again and again exceed
  /// (io/detail/expression_budget.hpp).
  std::optional<std::uint64_t> max_expression_lookups{};
  /// How much of the document `program_from_json(document_bytes, read_at)`
  /// asks `read_at` for at a time (the one buffer it keeps for the text).
  std::size_t read_chunk_bytes = std::size_t{1} << 18;
};

/// Reads a document in pieces for `program_from_json(document_bytes,
/// read_at)`: copies the bytes from byte `offset` of the document on into
/// `buffer` and returns how many it copied (fewer than asked only at the end
/// of the document), or a diagnostic when it cannot. The loader reads the
/// document front to back once, and again only to place a diagnostic; a
/// file is read with `pread`, a document in memory with `memcpy`.
using JsonReadAt = std::function<Result<std::size_t>(std::size_t offset, std::span<char> buffer)>;

/// Appends the JSON form of `program` to `out`.
///
/// Never fails for a well-formed program. For an ill-formed one it still
/// writes a document, which loading then refuses with a diagnostic: a null
/// expression is written as `null`, an id outside its table as the name
/// `<invalid buffer id N>`, and bytes of free text that are not UTF-8 as
/// U+FFFD. Throws `expr::Error` only for an expression too large to print
/// (see `expr::print_python`).
WRAPIR_DECL void to_json(const ir::Program& program, std::string& out, const JsonOptions& options = {});

/// The JSON form of `program`.
[[nodiscard]] WRAPIR_DECL std::string to_json(const ir::Program& program, const JsonOptions& options = {});

/// The program `text` describes, or the first problem found in it.
[[nodiscard]] WRAPIR_DECL Result<ir::Program> program_from_json(std::string_view text,
                                                              const JsonLoadOptions& options = {});

/// The program of a document of `document_bytes` bytes that `read_at` reads
/// (see `JsonReadAt`), or the first problem found in it: the same program
/// or the same diagnostic, positions included, as `program_from_json` of
/// the whole text, without ever holding that text. The document is parsed
/// in chunks of `JsonLoadOptions::read_chunk_bytes` into one buffer, and
/// each table entry and line is decoded as soon as its object is complete
/// and then dropped, strings included, so that loading a large program
/// costs the program and little more (`docs/performance.md`, "Loading
/// without the text"). `document_bytes` is checked against
/// `JsonLoadOptions::max_bytes` before anything is read; a reader that ends
/// sooner ends the document there.
[[nodiscard]] WRAPIR_DECL Result<ir::Program> program_from_json(std::size_t document_bytes, const JsonReadAt& read_at,
                                                              const JsonLoadOptions& options = {});

}  // namespace wrapir::io

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/io/impl/json.ipp>  // IWYU pragma: export
#endif
