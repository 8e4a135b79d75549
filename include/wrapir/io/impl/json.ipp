#pragma once
/// \file
/// The definitions of <wrapir/io/json.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/detail/config.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/detail/json_encoder.hpp>
#include <wrapir/io/detail/json_load.hpp>

#include <string>
#include <string_view>

namespace wrapir::io {

WRAPIR_DECL void to_json(const ir::Program& program, std::string& out, const JsonOptions& options) {
  // Roughly what a line and a table entry take, so that the string seldom
  // grows more than once.
  out.reserve(out.size() + 128 * (ir::total_lines(program) + program.buffers.size()) + 256);
  detail::json::Encoder encoder(out, options);
  encoder.document(program);
}

WRAPIR_DECL std::string to_json(const ir::Program& program, const JsonOptions& options) {
  std::string out;
  to_json(program, out, options);
  return out;
}

WRAPIR_DECL Result<ir::Program> program_from_json(std::string_view text, const JsonLoadOptions& options) {
  return detail::json::load_program(text, options, nullptr);
}

WRAPIR_DECL Result<ir::Program> program_from_json(std::size_t document_bytes, const JsonReadAt& read_at,
                                                  const JsonLoadOptions& options) {
  return detail::json::load_program_in_chunks(document_bytes, read_at, options, nullptr);
}

}  // namespace wrapir::io
