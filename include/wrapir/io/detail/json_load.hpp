#pragma once
/// \file
/// Loading: parsing a document onto its tape while decoding it.
///
/// Part of the JSON codec (io/json.hpp says what it does and how);
/// include <wrapir/io/json.hpp>, not this.

#include <wrapir/io/json.hpp>
#include <wrapir/io/detail/json_tape_builder.hpp>

namespace wrapir::io::detail::json {

/// The tape of `text`, or why it is not a JSON document. `decoder` takes
/// the lines it can as they are parsed.
inline Result<TapeBuilder> parse_tape(std::string_view text, std::size_t max_depth, Decoder& decoder) {
  bj::parse_options parse_options;
  parse_options.max_depth = max_depth;
  bj::basic_parser<TapeBuilder> parser(parse_options, text, decoder);
  bj::error_code ec;
  const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
  if (ec) {
    const std::string where = text_position(text, consumed);
    if (parser.handler().duplicate_key)
      return Diagnostic{"invalid JSON at " + where + ": duplicate key " +
                        ir::quote_for_diagnostic(*parser.handler().duplicate_key) + " in the object ending here"};
    if (ec == bj::error::too_deep)
      return Diagnostic{"invalid JSON at " + where + ": nesting deeper than " + std::to_string(max_depth) +
                        " levels (JsonLoadOptions::max_depth)"};
    return Diagnostic{"invalid JSON at " + where + ": " + ec.message()};
  }
  if (consumed != text.size())
    return Diagnostic{"invalid JSON at " + text_position(text, consumed) + ": unexpected text after the document"};
  return std::move(parser.handler());
}

/// `program_from_json`, telling `statistics` (when not null) what reading
/// ahead did.
inline Result<ir::Program> load_program(std::string_view text, const JsonLoadOptions& options,
                                        LoadStatistics* statistics) {
  if (text.size() > options.max_bytes)
    return Diagnostic{"input is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                      std::to_string(options.max_bytes) + " (JsonLoadOptions::max_bytes)"};
  try {
    return wrapir::detail::catch_failure([&] {
      std::shared_ptr<expr::Context> context = options.context ? options.context : std::make_shared<expr::Context>();
      Decoder decoder(*context, options, text.size(), statistics);
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

}  // namespace wrapir::io::detail::json
