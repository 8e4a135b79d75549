#pragma once
/// \file
/// The DOT emitter's writer (included by emit/dot.hpp, after `DotOptions`).
///
/// One pass per program over its lines' effects. Programs nest as clusters;
/// the walk keeps its own stack of frames, so a deep nesting costs heap,
/// not call stack. Within one program's block the order is: the buffer and
/// pool nodes, then each line's node and its edges, then the subgraphs'
/// clusters, then the `bind` edges into them. Every node is declared before
/// an edge names it, in the block of the cluster it belongs to: an edge
/// that named an undeclared node would create it in the wrong cluster.

#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/detail/dot_text.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/reflect.hpp>
#include <wrapir/pass/liveness.hpp>

#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::dot::detail {

namespace fx = ir::effect;

/// The edge styles. Each is one attribute list, written after the edge.
struct EdgeStyle {
  std::string_view name;
  std::string_view attributes;
};
inline constexpr EdgeStyle read_style{"read", "[color=\"#444444\"]"};
inline constexpr EdgeStyle write_style{"write", "[color=\"#1f5fbf\"]"};
inline constexpr EdgeStyle read_write_style{"read-write", "[color=\"#7b3fbf\", dir=both]"};
inline constexpr EdgeStyle read_result_style{"read result", "[color=\"#888888\"]"};
inline constexpr EdgeStyle reuse_style{"reuse", "[style=dashed, color=\"#d62728\", label=\"reuse\"]"};
inline constexpr EdgeStyle view_style{"view", "[style=dotted, color=\"#2ca02c\", label=\"view\"]"};
inline constexpr EdgeStyle select_style{"select", "[style=dotted, color=\"#8c564b\", label=\"select\"]"};
inline constexpr EdgeStyle carve_style{"carve", "[style=dotted, color=\"#ff7f0e\", label=\"carve\"]"};
inline constexpr EdgeStyle bind_style{"bind", "[style=dashed, color=\"#999999\", arrowhead=empty]"};

/// Pale to dark blue (ColorBrewer Blues, 9 classes): how much of the body a
/// block of storage lives over.
inline constexpr std::array<std::string_view, 9> lifetime_colours{
    "#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"};
/// From this class on the fill is dark: white text.
inline constexpr std::size_t first_dark_colour = 6;
inline constexpr std::string_view outside_colour = "#fff7bc";  // inputs, constants: not created by the body
inline constexpr std::string_view no_storage_colour = "#eeeeee";  // tuples, buffers no line defines

/// The colour class of a block that lives over `span` of `steps` lines.
[[nodiscard]] constexpr std::size_t lifetime_class(std::size_t span, std::size_t steps) noexcept {
  if (steps == 0 || span == 0) return 0;
  span = std::min(span, steps);
  // span * 9 cannot overflow for any body that fits in memory.
  return std::min<std::size_t>((span * lifetime_colours.size() - 1) / steps, lifetime_colours.size() - 1);
}

/// One program on the walk's stack.
struct Frame {
  const ir::Program* program = nullptr;
  std::size_t index = 0;  // its number in node ids (pre-order)
  std::size_t depth = 0;
  std::size_t next_child = 0;
  std::vector<std::size_t> child_index;  // the numbers its subgraphs got
};

class GraphWriter {
 public:
  GraphWriter(std::string& out, const DotOptions& options) : out_(out), options_(options) {}

  void write(const ir::Program& root) {
    std::vector<Frame> stack;
    stack.push_back(Frame{&root, next_index_++, 0, 0, {}});
    open(stack.back());
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (options_.subgraphs && f.next_child < f.program->subgraphs.size()) {
        const ir::Program* child = &f.program->subgraphs[f.next_child++];
        const std::size_t index = next_index_++;
        const std::size_t depth = f.depth + 1;
        f.child_index.push_back(index);
        if (depth > max_subgraph_depth)
          wrapir::detail::fail("subgraph " + ir::quote_for_diagnostic(child->name) + " of program " +
                               ir::quote_for_diagnostic(root.name) + ": subgraphs are nested more than " +
                               std::to_string(max_subgraph_depth) + " deep");
        stack.push_back(Frame{child, index, depth, 0, {}});  // `f` is not used after this
        open(stack.back());
        continue;
      }
      close(f);
      stack.pop_back();
    }
  }

 private:
  // ---- blocks ----------------------------------------------------------------

  void indent(std::size_t depth) {
    // Capped: a deep nesting must not make the output quadratic.
    out_.append(2 * std::min<std::size_t>(depth, 8), ' ');
  }

  void open(const Frame& f) {
    const ir::Program& p = *f.program;
    where_ = std::string(f.depth == 0 ? "program " : "subgraph ") + ir::quote_for_diagnostic(p.name);
    current_ = &p;
    if (f.depth == 0) {
      out_ += "digraph \"";
      append_text(out_, p.name, scratch_);
      out_ += "\" {\n";
      indent(1);
      out_ += "graph [fontname=\"Helvetica\", labelloc=t, rankdir=";
      out_ += options_.direction == Direction::left_to_right ? "LR" : "TB";
      out_ += ", label=\"";
      append_text(out_, p.name, scratch_);
      out_ += "\"];\n";
      indent(1);
      out_ += "node [fontname=\"Helvetica\", fontsize=10];\n";
      indent(1);
      out_ += "edge [fontname=\"Helvetica\", fontsize=9];\n";
      if (options_.legend) write_legend();
    } else {
      indent(f.depth);
      out_ += "subgraph \"cluster_g";
      append_number(out_, f.index);
      out_ += "\" {\n";
      indent(f.depth + 1);
      out_ += "graph [style=rounded, color=\"#888888\", label=\"";
      append_text(out_, p.name, scratch_);
      out_ += "\"];\n";
    }
    Result<pass::Liveness> live = pass::liveness_of(p);
    if (!live) wrapir::detail::fail(where_ + ": " + live.error().message);
    write_buffers(f, live.value());
    write_pools(f);
    stamps_.assign(p.buffers.size() * access_kinds, 0);
    for (std::size_t i = 0; i < p.body.size(); ++i) write_line(f, i);
  }

  void close(const Frame& f) {
    const ir::Program& p = *f.program;
    if (options_.subgraphs && !p.subgraphs.empty()) {
      where_ = std::string(f.depth == 0 ? "program " : "subgraph ") + ir::quote_for_diagnostic(p.name);
      current_ = &p;
      for (std::size_t i = 0; i < p.body.size(); ++i) {
        ir::for_each_effect(p.body[i], fx::Handlers{
                                           [&](const fx::SubgraphCalled& e) { write_binds(f, i, e); },
                                           [](const auto&) {},
                                       });
      }
    }
    indent(f.depth);
    out_ += "}\n";
  }

  // ---- nodes -----------------------------------------------------------------

  void write_buffers(const Frame& f, const pass::Liveness& live) {
    const ir::Program& p = *f.program;
    std::vector<bool> output(p.buffers.size(), false);
    for (const ir::ProgramOutput& o : p.outputs)
      if (const ir::BufferArg* b = boost::variant2::get_if<ir::BufferArg>(&o); b && p.contains(b->buffer))
        output[b->buffer.index] = true;
    for (std::size_t i = 0; i < p.buffers.size(); ++i) {
      const ir::BufferDecl& b = p.buffers[i];
      indent(f.depth + 1);
      append_node_id(out_, f.index, 'b', i);
      out_ += " [label=\"";
      append_text(out_, b.name, scratch_);
      append_break(out_);
      if (b.multi_output) {
        out_ += "tuple";
      } else {
        out_ += ir::name(b.layout.dtype);
        out_ += '[';
        for (std::size_t d = 0; d < b.layout.sizes.size(); ++d) {
          if (d) out_ += ", ";
          append_expr(b.layout.sizes[d]);
        }
        out_ += ']';
      }
      std::string_view fill = no_storage_colour;
      bool dark = false;
      const std::size_t block = live.storage_of[i];
      if (block != pass::Liveness::no_storage) {
        const pass::BufferLifetime& l = live.lifetimes[block];
        append_break(out_);
        out_ += "lines ";
        append_number(out_, l.first_line);
        out_ += '-';
        append_number(out_, l.last_line);
        const std::size_t c = lifetime_class(l.last_line - l.first_line + 1, live.steps);
        fill = lifetime_colours[c];
        dark = c >= first_dark_colour;
      } else if (b.role == ir::BufferRole::input || b.role == ir::BufferRole::constant) {
        append_break(out_);
        out_ += ir::buffer_role_name(b.role);
        fill = outside_colour;
      }
      out_ += "\", style=filled, fillcolor=\"";
      out_ += fill;
      out_ += '"';
      if (dark) out_ += ", fontcolor=white";
      if (output[i]) out_ += ", peripheries=2";
      out_ += "];\n";
    }
  }

  void write_pools(const Frame& f) {
    const ir::Program& p = *f.program;
    for (std::size_t i = 0; i < p.pools.size(); ++i) {
      indent(f.depth + 1);
      append_node_id(out_, f.index, 'p', i);
      out_ += " [shape=cylinder, label=\"";
      append_text(out_, p.pools[i].name, scratch_);
      append_break(out_);
      append_expr(p.pools[i].size_bytes);
      out_ += " bytes\"];\n";
    }
  }

  /// An expression in a label; one too large to print as a tree shows as
  /// `<unprintable>` (the printer refuses it rather than blow up).
  void append_expr(const expr::Expr& e) {
    if (!e) {
      out_ += "?";
      return;
    }
    if (e.is_symbol()) return append_text(out_, e.name(), scratch_);
    if (e.is_integer()) {
      if (e.value() < 0) out_ += '-';
      append_number(out_, e.value() < 0 ? 0 - static_cast<std::uint64_t>(e.value()) : static_cast<std::uint64_t>(e.value()));
      return;
    }
    expr_text_.clear();
    try {
      expr::print_python(e, expr_text_);
    } catch (const expr::Error&) {
      expr_text_ = "<unprintable>";
    }
    append_text(out_, expr_text_, scratch_);
  }

  // ---- lines -----------------------------------------------------------------

  /// Whether the line is a node: it touches buffers (accesses them, returns
  /// an extern or control result), launches a kernel or runs a subgraph.
  /// Lines that only manage storage are edges between buffers, or nothing.
  struct LineShape {
    bool node = false;
    std::size_t kernels = 0, subgraphs = 0;
  };

  template <class L>
  [[nodiscard]] LineShape shape_of(const L& line) const {
    LineShape s;
    ir::for_each_effect(line, fx::Handlers{
                                  [&](const fx::Accessed&) { s.node = true; },
                                  [&](const fx::Allocated& e) {
                                    s.node = s.node || e.storage == ir::Storage::extern_result ||
                                             e.storage == ir::Storage::control_result;
                                  },
                                  [&](const fx::KernelLaunched&) {
                                    s.node = true;
                                    ++s.kernels;
                                  },
                                  [&](const fx::SubgraphCalled&) {
                                    s.node = true;
                                    ++s.subgraphs;
                                  },
                                  [](const auto&) {},
                              });
    return s;
  }

  [[noreturn]] void fail_line(std::size_t line, std::string_view kind, const std::string& message) const {
    wrapir::detail::fail("line " + std::to_string(line) + " (" + std::string(kind) + ") of " + where_ + ": " + message);
  }

  template <class Table>
  void check_id(std::size_t line, std::string_view kind, const Table& table, std::uint32_t index,
                std::string_view what) const {
    if (index >= table.size())
      fail_line(line, kind, std::string(what) + " id " + std::to_string(index) + " is out of range (the program has " +
                                std::to_string(table.size()) + " " + std::string(what) + "s)");
  }

  void write_line(const Frame& f, std::size_t i) {
    std::visit([&](const auto& line) { write_line(f, i, line); }, f.program->body[i]);
  }

  template <class L>
  void write_line(const Frame& f, std::size_t i, const L& line) {
    const ir::Program& p = *f.program;
    const LineShape shape = shape_of(line);
    if (shape.node) write_call_node(f, i, line);
    ir::for_each_effect(
        line, fx::Handlers{
                  [&](const fx::Accessed& e) { write_access(f, i, L::kind, e); },
                  [&](const fx::Allocated& e) {
                    if (e.storage == ir::Storage::extern_result || e.storage == ir::Storage::control_result)
                      edge(f, 'l', i, 'b', buffer(i, L::kind, e.buffer), write_style, nullptr);
                  },
                  [&](const fx::Reused& e) {
                    edge(f, 'b', buffer(i, L::kind, e.old_buffer), 'b', buffer(i, L::kind, e.new_buffer),
                               reuse_style, nullptr);
                  },
                  [&](const fx::Aliased& e) {
                    edge(f, 'b', buffer(i, L::kind, e.base), 'b', buffer(i, L::kind, e.view), view_style,
                               nullptr);
                  },
                  [&](const fx::Selected& e) {
                    edge(f, 'b', buffer(i, L::kind, e.tuple), 'b', buffer(i, L::kind, e.element), select_style,
                               nullptr);
                  },
                  [&](const fx::Carved& e) {
                    check_id(i, L::kind, p.pools, e.pool.index, "pool");
                    edge(f, 'p', e.pool.index, 'b', buffer(i, L::kind, e.buffer), carve_style, nullptr);
                  },
                  [&](const fx::PoolCreated& e) { check_id(i, L::kind, p.pools, e.pool.index, "pool"); },
                  [&](const fx::PoolReturned& e) { check_id(i, L::kind, p.pools, e.pool.index, "pool"); },
                  [&](const fx::KernelLaunched& e) { check_id(i, L::kind, p.kernels, e.kernel.index, "kernel"); },
                  [&](const fx::KernelDefined& e) { check_id(i, L::kind, p.kernels, e.kernel.index, "kernel"); },
                  [&](const fx::KernelUsed& e) { check_id(i, L::kind, p.kernels, e.kernel.index, "kernel"); },
                  [&](const fx::SubgraphCalled& e) {
                    check_id(i, L::kind, p.subgraphs, e.graph.index, "subgraph");
                  },
                  [](const auto&) {},
              });
  }

  std::size_t buffer(std::size_t line, std::string_view kind, ir::BufferId b) const {
    // The liveness pass has checked every buffer an effect names; checked
    // again here, so that no index ever leaves the table.
    const ir::Program& p = *current_;
    check_id(line, kind, p.buffers, b.index, "buffer");
    return b.index;
  }

  /// The call's node: `kind` and, on a second line, what it calls.
  template <class L>
  void write_call_node(const Frame& f, std::size_t i, const L& line) {
    const ir::Program& p = *f.program;
    indent(f.depth + 1);
    append_node_id(out_, f.index, 'l', i);
    out_ += " [shape=box, style=\"rounded,filled\", fillcolor=\"#f2f2f2\", label=\"";
    out_ += L::kind;
    std::size_t callees = 0;
    auto callee = [&](std::string_view name) {
      if (callees++ == 0) append_break(out_);
      else out_ += " / ";
      append_text(out_, name, scratch_);
    };
    ir::for_each_effect(line, fx::Handlers{
                                  [&](const fx::KernelLaunched& e) {
                                    check_id(i, L::kind, p.kernels, e.kernel.index, "kernel");
                                    callee(p.kernels[e.kernel.index].name);
                                  },
                                  [&](const fx::SubgraphCalled& e) {
                                    check_id(i, L::kind, p.subgraphs, e.graph.index, "subgraph");
                                    callee(p.subgraphs[e.graph.index].name);
                                  },
                                  [](const auto&) {},
                              });
    // An extern operator is named by a field, not an effect: the line's
    // OpName, wherever the reflection finds one.
    ir::for_each_field(line, [&](std::string_view, const auto& field) {
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, ir::OpName>) callee(field.text);
    });
    out_ += "\", tooltip=\"line ";
    append_number(out_, i);
    out_ += "\"];\n";
  }

  // Access kinds, for the per-line deduplication of edges (a buffer passed
  // twice is one edge).
  static constexpr std::size_t access_kinds = 4;

  void write_access(const Frame& f, std::size_t i, std::string_view kind, const fx::Accessed& e) {
    const std::size_t b = buffer(i, kind, e.buffer);
    const auto a = static_cast<std::size_t>(e.access);
    std::uint64_t& stamp = stamps_[b * access_kinds + std::min(a, access_kinds - 1)];
    if (stamp == i + 1 && e.view == nullptr) return;
    stamp = i + 1;
    switch (e.access) {
      case ir::Access::read: return edge(f, 'b', b, 'l', i, read_style, e.view);
      case ir::Access::write: return edge(f, 'l', i, 'b', b, write_style, e.view);
      case ir::Access::read_write: return edge(f, 'l', i, 'b', b, read_write_style, e.view);
      case ir::Access::read_result: return edge(f, 'b', b, 'l', i, read_result_style, e.view);
    }
    edge(f, 'b', b, 'l', i, read_style, e.view);
  }

  void edge(const Frame& f, char from_kind, std::size_t from, char to_kind, std::size_t to,
                  const EdgeStyle& style, const ir::View* view) {
    indent(f.depth + 1);
    append_node_id(out_, f.index, from_kind, from);
    out_ += " -> ";
    append_node_id(out_, f.index, to_kind, to);
    out_ += ' ';
    out_ += style.attributes;
    if (view) {
      // An access through a view: the style's attributes plus a label.
      out_.pop_back();
      out_ += ", label=\"view\"]";
    }
    out_ += ";\n";
  }

  /// The `bind` edges of a line running a subgraph: the line to each input
  /// of the subgraph that a buffer argument binds, each buffer output of the
  /// subgraph back to the line.
  void write_binds(const Frame& f, std::size_t i, const fx::SubgraphCalled& e) {
    const ir::Program& p = *f.program;
    if (e.graph.index >= p.subgraphs.size()) return;  // reported when the line was written
    const ir::Program& g = p.subgraphs[e.graph.index];
    const std::size_t gi = f.child_index[e.graph.index];
    std::size_t k = 0;
    auto bind_inputs = [&](std::span<const ir::Arg> args) {
      for (const ir::Arg& a : args) {
        const std::size_t slot = k++;
        if (!a.get_if<ir::BufferArg>() || slot >= g.inputs.size()) continue;
        const ir::BufferId* in = boost::variant2::get_if<ir::BufferId>(&g.inputs[slot]);
        if (!in || !g.contains(*in)) continue;
        indent(f.depth + 1);
        append_node_id(out_, f.index, 'l', i);
        out_ += " -> ";
        append_node_id(out_, gi, 'b', in->index);
        out_ += ' ';
        out_ += bind_style.attributes;
        out_ += ";\n";
      }
    };
    bind_inputs(e.inputs);
    bind_inputs(e.more_inputs);
    for (const ir::ProgramOutput& o : g.outputs) {
      const ir::BufferArg* b = boost::variant2::get_if<ir::BufferArg>(&o);
      if (!b || !g.contains(b->buffer)) continue;
      indent(f.depth + 1);
      append_node_id(out_, gi, 'b', b->buffer.index);
      out_ += " -> ";
      append_node_id(out_, f.index, 'l', i);
      out_ += ' ';
      out_ += bind_style.attributes;
      out_ += ";\n";
    }
  }

  // ---- legend ----------------------------------------------------------------

  void write_legend() {
    indent(1);
    out_ += "subgraph \"cluster_legend\" {\n";
    indent(2);
    out_ += "graph [label=\"legend\", style=rounded, color=\"#bbbbbb\", fontsize=9];\n";
    indent(2);
    out_ += "node [fontsize=8, height=0.2];\n";
    indent(2);
    out_ += "\"legend_call\" [shape=box, style=\"rounded,filled\", fillcolor=\"#f2f2f2\", label=\"line\"];\n";
    indent(2);
    out_ += "\"legend_short\" [style=filled, fillcolor=\"";
    out_ += lifetime_colours[0];
    out_ += "\", label=\"short-lived\"];\n";
    indent(2);
    out_ += "\"legend_long\" [style=filled, fillcolor=\"";
    out_ += lifetime_colours[lifetime_colours.size() - 1];
    out_ += "\", fontcolor=white, label=\"lives the whole body\"];\n";
    indent(2);
    out_ += "\"legend_input\" [style=filled, fillcolor=\"";
    out_ += outside_colour;
    out_ += "\", label=\"input or constant\"];\n";
    indent(2);
    out_ += "\"legend_output\" [style=filled, fillcolor=\"";
    out_ += lifetime_colours[lifetime_colours.size() - 1];
    out_ += "\", fontcolor=white, peripheries=2, label=\"output\"];\n";
    const std::array<std::pair<const EdgeStyle*, bool>, 9> edges{{{&read_style, true},
                                                                  {&write_style, false},
                                                                  {&read_write_style, false},
                                                                  {&read_result_style, true},
                                                                  {&reuse_style, true},
                                                                  {&view_style, true},
                                                                  {&select_style, true},
                                                                  {&carve_style, true},
                                                                  {&bind_style, false}}};
    for (std::size_t k = 0; k < edges.size(); ++k) {
      const EdgeStyle& s = *edges[k].first;
      indent(2);
      out_ += "\"legend_e";
      append_number(out_, k);
      out_ += "\" [shape=plaintext, label=\"";
      out_ += s.name;
      out_ += "\"];\n";
      indent(2);
      // Reads point at the line, writes away from it.
      if (edges[k].second) out_ += "\"legend_e" + std::to_string(k) + "\" -> \"legend_call\" ";
      else out_ += "\"legend_call\" -> \"legend_e" + std::to_string(k) + "\" ";
      out_ += s.attributes;
      out_ += ";\n";
    }
    indent(1);
    out_ += "}\n";
  }

  std::string& out_;
  const DotOptions& options_;
  std::size_t next_index_ = 0;
  std::string where_;
  std::string scratch_;
  std::string expr_text_;
  std::vector<std::uint64_t> stamps_;
  const ir::Program* current_ = nullptr;
};

}  // namespace wrapir::dot::detail
