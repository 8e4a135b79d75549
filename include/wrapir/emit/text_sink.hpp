#pragma once
/// \file
/// `TextSink`: where an emitter that streams its output puts the text — a
/// function that takes it piece by piece, in order, and how many bytes the
/// emitter gathers before each call. A module written to a file this way
/// never exists whole in memory: the emitter holds at most one piece (and
/// the last line it rendered) besides what it needs to remember.
///
/// ```
/// std::ofstream file("add.py", std::ios::binary);
/// auto done = wrapir::python::to_python(program, file);  // a stream: its failure is a diagnostic
///
/// wrapir::TextSink sink{[&](std::string_view piece) -> wrapir::Result<void> {
///   if (std::fwrite(piece.data(), 1, piece.size(), f) != piece.size()) return wrapir::Diagnostic{"disk full"};
///   return {};
/// }};
/// auto done = wrapir::python::to_python(program, sink);
/// ```
///
/// A sink that cannot take a piece returns a diagnostic; the emitter stops
/// there and returns it, prefixed with how many bytes were written before.
/// Either way — the sink failed or the program cannot be rendered — the
/// sink may have received the start of the text already: write to
/// something you can throw away (a temporary file renamed on success, as
/// `wrapir emit -o` does).

#include <wrapir/diagnostic.hpp>

#include <cstddef>
#include <functional>
#include <string_view>
#include <utility>

namespace wrapir {

struct TextSink {
  /// Pieces of this size keep the calls few and what the emitter holds
  /// small next to a large module (tens of megabytes at a million lines).
  static constexpr std::size_t default_piece_bytes = std::size_t{256} * 1024;

  // A constructor, not an aggregate: `to_python(program, {})` must stay
  // the call with default options, not become ambiguous with a sink.
  TextSink(std::function<Result<void>(std::string_view)> write_function, std::size_t piece = default_piece_bytes)
      : write(std::move(write_function)), piece_bytes(piece) {}

  /// Takes the next piece of text; a diagnostic stops the emission.
  std::function<Result<void>(std::string_view)> write;
  /// The emitter passes the text on once it holds this many bytes (a piece
  /// may exceed it by the last line rendered). Any value works, 1 included:
  /// the text is the same, only the pieces differ.
  std::size_t piece_bytes;
};

}  // namespace wrapir
