#pragma once
/// \file
/// The DOT emitter: a program's dataflow as a Graphviz graph, for people who
/// would rather look than read (`dot -Tsvg program.dot -o program.svg`).
///
/// ```
/// auto graph = wrapir::dot::to_dot(program);   // Result<std::string>
/// if (!graph) { report(graph.error()); return; }
/// write_file("program.dot", *graph);
/// ```
///
/// What is drawn, all of it read from the lines' effects (ir/effects.hpp),
/// never from a list of line kinds:
/// - every buffer of the tables is a node (an ellipse): its name, dtype and
///   sizes and, for storage the body creates, the lines it lives over;
/// - a line that touches a buffer (reads or writes it, launches a kernel,
///   returns an extern result, runs a subgraph) is a node too (a box): its
///   kind and what it calls (the kernel, the operator, the subgraphs);
///   lines that only manage storage (Allocate, Free, Reuse, Reinterpret,
///   pool lines) are edges or nothing;
/// - edges: buffer -> line for a read, line -> buffer for a write or a
///   result, both arrows for read-write, and between buffers: `reuse`
///   (dashed red, old -> new), `view` (dotted green, base -> view), `select`
///   (dotted brown, tuple -> element of a MultiOutput), `carve` (dotted
///   orange, pool -> region); an access through a view is labelled `view`;
/// - colours: a buffer's fill says how long its storage lives
///   (pass/liveness.hpp), from pale blue (one line) to dark blue (the whole
///   body); buffers sharing one storage (a reuse chain, views) share a colour;
///   inputs and constants, which the body does not create, are pale yellow;
///   program outputs have a double border;
/// - subgraphs (Conditional branches, WhileLoop condition and body) are
///   clusters inside the cluster of the program that owns them, and the
///   line that runs one is joined to its inputs and outputs by grey dashed
///   `bind` edges.
///
/// Text: every label is a quoted DOT string; names are escaped so that
/// nothing they hold can end the string or be read by Graphviz as an escape
/// (emit/detail/dot_text.hpp); node ids are numbers, never names. The output
/// depends only on the program (tables and body order): the same program
/// gives the same bytes.
///
/// Errors: what makes the picture meaningless — a buffer, kernel, pool or
/// subgraph id out of range, a buffer defined twice, subgraphs nested more
/// than `max_subgraph_depth` deep — is a `Diagnostic` naming the program
/// and line, and `out` is left as it was. The walk over subgraphs uses an
/// explicit stack, not recursion. Time and memory are linear in the size of
/// the program.

#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/program.hpp>

#include <cstddef>
#include <string>

namespace wrapir::dot {

/// Which way the graph flows.
enum class Direction : unsigned char { top_to_bottom, left_to_right };

struct DotOptions {
  /// A legend cluster explaining the edge styles and the colours.
  bool legend = true;
  /// Draw the programs in the subgraph table as nested clusters.
  bool subgraphs = true;
  Direction direction = Direction::top_to_bottom;
};

/// Subgraphs nested deeper than this are a diagnostic (as for the Python
/// emitter; Graphviz itself gives up long before).
inline constexpr std::size_t max_subgraph_depth = 256;

/// `program` as a Graphviz digraph (see the file comment).
[[nodiscard]] Result<std::string> to_dot(const ir::Program& program, const DotOptions& options = {});

/// Appends `program` as a Graphviz digraph to `out`; on a diagnostic `out`
/// is left as it was.
Result<void> to_dot(const ir::Program& program, std::string& out, const DotOptions& options = {});

}  // namespace wrapir::dot

#include <wrapir/emit/detail/dot_graph.hpp>

namespace wrapir::dot {

inline Result<void> to_dot(const ir::Program& program, std::string& out, const DotOptions& options) {
  const std::size_t size = out.size();
  Result<void> done = wrapir::detail::catch_failure([&] { detail::GraphWriter(out, options).write(program); });
  if (!done) out.resize(size);
  return done;
}

inline Result<std::string> to_dot(const ir::Program& program, const DotOptions& options) {
  std::string out;
  if (Result<void> done = to_dot(program, out, options); !done) return std::move(done).error();
  return out;
}

}  // namespace wrapir::dot
