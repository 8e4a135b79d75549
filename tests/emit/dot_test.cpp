// The DOT emitter (emit/dot.hpp): golden graphs of builder programs and of a
// program exported from the Inductor corpus, hostile names, determinism,
// deep subgraph nesting, diagnostics, and (where Graphviz is installed) the
// goldens read back by the real `dot`.
//
// Goldens live in tests/golden/dot/<name>.dot and are compared byte for
// byte; WRAPIR_UPDATE_GOLDEN=1 rewrites them (review the diff before
// committing).

#include <wrapir/emit/dot.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/program.hpp>

#include <doctest/doctest.h>

#include "support/golden.hpp"
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace ex = wrapir::expr;
namespace dot = wrapir::dot;

#ifdef WRAPIR_SOURCE_DIR
const std::filesystem::path golden_dir = std::filesystem::path(WRAPIR_SOURCE_DIR) / "tests/golden/dot";
#else
const std::filesystem::path golden_dir = "tests/golden/dot";
#endif

using wrapir_test::read_file;

void check_golden(const std::string& name, const std::string& actual) {
  wrapir_test::check_golden_file(golden_dir / (name + ".dot"), actual);
}

std::string emit_ok(const ir::Program& p, const dot::DotOptions& options = {}) {
  auto r = dot::to_dot(p, options);
  REQUIRE_MESSAGE(r.has_value(), (r.has_value() ? std::string() : r.error().to_string()));
  return std::move(r).value();
}

/// What a DOT reader sees at the top level: the statements' structure with
/// every quoted string taken out. Fails the test on a string that does not
/// end, a raw newline inside a string or unbalanced braces, so that a name
/// that broke out of its quotes is caught without Graphviz.
struct Skeleton {
  std::string text;  // the input with each string replaced by "S"
  std::vector<std::string> strings;  // the strings' raw contents
};

Skeleton skeleton(std::string_view dot_text) {
  Skeleton s;
  int depth = 0;
  for (std::size_t i = 0; i < dot_text.size(); ++i) {
    const char c = dot_text[i];
    if (c == '"') {
      std::string raw;
      std::size_t j = i + 1;
      for (; j < dot_text.size() && dot_text[j] != '"'; ++j) {
        REQUIRE_MESSAGE(dot_text[j] != '\n', "a raw newline inside a DOT string at byte " << j);
        if (dot_text[j] == '\\') raw += dot_text[j++];
        REQUIRE(j < dot_text.size());
        raw += dot_text[j];
      }
      REQUIRE_MESSAGE(j < dot_text.size(), "a DOT string that does not end, from byte " << i);
      s.strings.push_back(std::move(raw));
      s.text += "S";
      i = j;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}') {
      --depth;
      REQUIRE(depth >= 0);
    }
    s.text += c;
  }
  CHECK(depth == 0);
  return s;
}

/// What Graphviz shows for the DOT string `raw`: `\\` a backslash, `\"` a
/// quote, `\n` a line break (written here as a newline).
std::string displayed(std::string_view raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size()) {
      const char n = raw[++i];
      out += n == 'n' ? '\n' : n;
    } else {
      out += raw[i];
    }
  }
  return out;
}

bool have_graphviz() {
  static const bool have = std::system("dot -V > /dev/null 2>&1") == 0;
  return have;
}

/// A scratch directory of this process, for Graphviz's input and output.
std::filesystem::path graphviz_dir() {
  return std::filesystem::temp_directory_path() / ("wrapir_dot_test." + std::to_string(::getpid()));
}

/// Renders `text` with the real `dot -Tsvg`; whether it accepted it
/// without an error or a warning.
bool graphviz_accepts(const std::string& text, const std::string& name) {
  const std::filesystem::path dir = graphviz_dir();
  std::filesystem::create_directories(dir);
  const std::filesystem::path in = dir / (name + ".dot"), svg = dir / (name + ".svg"), err = dir / (name + ".err");
  std::ofstream(in, std::ios::binary) << text;
  const std::string command = "dot -Tsvg '" + in.string() + "' -o '" + svg.string() + "' 2> '" + err.string() + "'";
  const int status = std::system(command.c_str());
  const std::string errors = read_file(err);
  if (status != 0 || !errors.empty()) MESSAGE("dot on " << name << ": status " << status << ": " << errors);
  return status == 0 && errors.empty() && std::filesystem::file_size(svg) > 0;
}

ir::KernelId unary_kernel(ir::Builder& b, const std::string& name) {
  return b.triton_kernel(name, "@triton.jit\ndef " + name + "(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n    pass\n",
                         "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
}

/// `relu(x + y)` with a free: reads, writes, a read-write and lifetimes.
ir::Program add_relu() {
  ir::Program p{"add_relu"};
  ir::Builder b{p};
  const auto s0 = b.size_symbol("s0", 1024);
  const auto x = b.input("arg0_1", {s0}, wrapir::f32);
  const auto y = b.input("arg1_1", {s0}, wrapir::f32);
  const auto add = b.triton_kernel("triton_poi_fused_add_0", "...",
                                   "in_ptr0: *fp32, in_ptr1: *fp32, out_ptr0: *fp32, xnumel: i32");
  const auto relu = b.triton_kernel("triton_poi_fused_relu_1", "...", "in_out_ptr0: *fp32, xnumel: i32");
  const auto sum = b.empty({s0}, wrapir::f32);
  b.call(add, {x, y, sum, s0}, {.free_after = {x, y}});
  b.call(relu, {sum, s0});
  b.output(sum);
  return p;
}

/// Reuse, a view, an extern call through a view, a multi-output tuple.
ir::Program memory() {
  ir::Program p{"memory"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto n = ctx.integer(64);
  const auto x = b.input("arg0_1", {n}, wrapir::f32);
  const auto k = unary_kernel(b, "triton_poi_fused_exp_0");
  const auto buf0 = b.empty({n}, wrapir::f32);
  b.call(k, {x, buf0, n});
  const auto buf1 = b.view(buf0, {ctx.integer(8), ctx.integer(8)}, {ctx.integer(8), ctx.integer(1)}, ctx.integer(0));
  const auto mm = b.empty({ctx.integer(8), ctx.integer(8)}, wrapir::f32);
  b.extern_out("extern_kernels.mm",
               {buf1, ir::BufferArg{buf1, ir::View{{ctx.integer(8), ctx.integer(8)}, {ctx.integer(1), ctx.integer(8)},
                                                   ctx.integer(0)}}},
               ir::BufferArg{mm});
  const auto tuple = b.extern_alloc_multi("aten.topk.default", {mm, 2});
  const auto parts = b.unpack(tuple, {ir::Layout{{ctx.integer(8), ctx.integer(2)},
                                                 {ctx.integer(2), ctx.integer(1)},
                                                 ctx.integer(0),
                                                 wrapir::f32,
                                                 wrapir::cuda_device(0)}});
  b.append(ir::FreeIfNotReused{buf0, true});
  const auto buf5 = b.declare("buf5", ir::Layout{{n}, {ctx.integer(1)}, ctx.integer(0), wrapir::f32, wrapir::cuda_device(0)},
                              ir::BufferRole::intermediate);
  b.append(ir::Reuse{buf0, buf5, true});
  b.call(k, {parts[0], buf5, 16});
  b.output(buf5);
  return p;
}

/// Clusters: a conditional whose branches call kernels, and a while loop.
ir::Program control() {
  ir::Program p{"control"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 16);
  const auto x = b.input("arg0_1", {s0}, wrapir::f32);
  const auto flag = b.input("arg1_1", {ctx.integer(1)}, wrapir::b8);
  auto branch = [&](const char* kernel) {
    return [&, kernel](ir::Builder& g, std::span<const ir::ProgramInput> in) {
      const auto k = unary_kernel(g, kernel);
      const auto out = g.empty({s0}, wrapir::f32);
      g.call(k, {boost::variant2::get<ir::BufferId>(in[0]), out, s0});
      g.output(out);
    };
  };
  const auto chosen = b.conditional(ir::BufferArg{flag}, {x}, branch("triton_poi_relu_0"), branch("triton_poi_neg_1"));
  const auto looped = b.while_loop(
      {chosen[0]}, {s0},
      [&](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const auto carried = boost::variant2::get<ir::BufferId>(in[0]);
        sb.output(sb.extern_alloc("torch.ops.aten.any.default", {carried},
                                  ir::Layout{{}, {}, ctx.integer(0), wrapir::b8, wrapir::cuda_device(0)}));
      },
      [&](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const auto carried = boost::variant2::get<ir::BufferId>(in[0]);
        const auto k = unary_kernel(sb, "triton_poi_fused_sub_2");
        const auto out = sb.empty({s0}, wrapir::f32);
        sb.call(k, {carried, out, s0});
        sb.output(out);
      });
  b.output(looped[0]);
  return p;
}

ir::Program corpus_program() {
  const std::string json = read_file(golden_dir / "inplace_buffer.reuse.json");
  REQUIRE_FALSE(json.empty());
  auto p = wrapir::io::program_from_json(json);
  REQUIRE_MESSAGE(p.has_value(), (p.has_value() ? std::string() : p.error().to_string()));
  return std::move(p).value();
}

/// Every name a program holds set to hostile text.
ir::Program hostile() {
  const std::string evil = "a\"b\\c\nd}e{f<b>g</b>&amp;\\n\\N\\\\\"; x -> y [label=z]; // \xe2\x80\xae\x01\xff";
  ir::Program p = memory();
  p.name = evil + "program";
  for (std::size_t i = 0; i < p.buffers.size(); ++i) p.buffers[i].name = evil + std::to_string(i);
  for (std::size_t i = 0; i < p.kernels.size(); ++i) p.kernels[i].name = evil + "k" + std::to_string(i);
  for (ir::Line& line : p.body)
    if (auto* e = std::get_if<ir::ExternKernelOut>(&line)) e->kernel.text = evil + "op";
  ir::Program c = control();
  c.subgraphs[0].name = evil + "branch";
  c.subgraphs[0].buffers[0].name = "}\"\n";
  p.subgraphs.push_back(std::move(c));
  return p;
}

}  // namespace

TEST_CASE("emit/dot: golden graphs of builder programs") {
  check_golden("add_relu", emit_ok(add_relu()));
  check_golden("memory", emit_ok(memory()));
  check_golden("control", emit_ok(control()));
  check_golden("control_lr_no_legend",
               emit_ok(control(), {.legend = false, .subgraphs = true, .direction = dot::Direction::left_to_right}));
}

TEST_CASE("emit/dot: golden graph of a program exported from the Inductor corpus") {
  check_golden("inplace_buffer.reuse", emit_ok(corpus_program()));
}

TEST_CASE("emit/dot: what the graph says, read from the effects") {
  const std::string g = emit_ok(memory(), {.legend = false});
  // A kernel may write any buffer argument (the IR has no mutation
  // metadata): read-write edges, one per buffer.
  CHECK(g.find("\"g0l2\" -> \"g0b1\" [color=\"#7b3fbf\", dir=both];") != std::string::npos);
  // The view: base -> view, dotted; the reuse: old -> new, dashed.
  CHECK(g.find("\"g0b1\" -> \"g0b2\" [style=dotted, color=\"#2ca02c\", label=\"view\"];") != std::string::npos);
  CHECK(g.find("\"g0b1\" -> \"g0b6\" [style=dashed, color=\"#d62728\", label=\"reuse\"];") != std::string::npos);
  // The tuple -> its element; the extern's result is written by its line.
  CHECK(g.find("label=\"select\"") != std::string::npos);
  // A buffer passed twice (once through a view) gives one plain edge and one labelled `view`.
  CHECK(g.find("\"g0l5\" -> \"g0b2\" [color=\"#7b3fbf\", dir=both];") != std::string::npos);
  CHECK(g.find("\"g0l5\" -> \"g0b2\" [color=\"#7b3fbf\", dir=both, label=\"view\"];") != std::string::npos);
  // The extern call names its operator; a line that only manages storage is no node.
  CHECK(g.find("label=\"ExternKernelOut\\nextern_kernels.mm\"") != std::string::npos);
  CHECK(g.find("label=\"Allocate") == std::string::npos);
  CHECK(g.find("label=\"Reuse") == std::string::npos);
}

TEST_CASE("emit/dot: lifetimes are colours, shared by the buffers of one storage") {
  const std::string g = emit_ok(memory(), {.legend = false});
  auto fill_of = [&](std::string_view id) {
    const std::size_t at = g.find(std::string(id) + " [label=");
    REQUIRE(at != std::string::npos);
    const std::size_t fill = g.find("fillcolor=\"", at);
    return g.substr(fill + 11, 7);
  };
  CHECK(fill_of("\"g0b1\"") == fill_of("\"g0b2\""));  // buf0 and its view
  CHECK(fill_of("\"g0b1\"") == fill_of("\"g0b6\""));
  CHECK(fill_of("\"g0b1\"") != fill_of("\"g0b3\""));  // mm lives three lines of eleven  // buf0 and buf5, which reuses it
  CHECK(fill_of("\"g0b0\"") == "#fff7bc");            // an input
  CHECK(dot::detail::lifetime_class(1, 1000) == 0);
  CHECK(dot::detail::lifetime_class(1000, 1000) == 8);
  CHECK(dot::detail::lifetime_class(500, 1000) == 4);
  CHECK(dot::detail::lifetime_class(0, 0) == 0);
}

TEST_CASE("emit/dot: hostile names cannot break out of their strings") {
  const ir::Program p = hostile();
  const std::string g = emit_ok(p);
  const Skeleton s = skeleton(g);
  // Outside the strings only the emitter's own syntax remains.
  CHECK(s.text.find("x -> y") == std::string::npos);
  CHECK(s.text.find("<b>") == std::string::npos);
  CHECK(s.text.find("label=z") == std::string::npos);
  // Every string shows its text: no raw controls, and each backslash either
  // escapes a quote or a backslash or is the emitter's own line break `\n`.
  for (const std::string& raw : s.strings) {
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const auto u = static_cast<unsigned char>(raw[i]);
      CHECK(u >= 0x20);
      CHECK(u != 0x7f);
      if (raw[i] == '\\') {
        REQUIRE(i + 1 < raw.size());
        const char n = raw[++i];
        CHECK((n == '\\' || n == '"' || n == 'n'));
      }
    }
  }
  // The program's name is the graph's label, shown legibly: the quote, the
  // braces and the markup as they are, the newline and the controls as
  // visible escapes, a backslash as `\\`.
  const std::string shown = displayed(s.strings[0]);
  CHECK(shown.find("a\"b\\\\c\\nd}e{f<b>g</b>&amp;") == 0);
  CHECK(shown.find("\\xe2\\x80\\xae\\x01\\xff") != std::string::npos);
  CHECK(shown.find('\n') == std::string::npos);
}

TEST_CASE("emit/dot: output is deterministic") {
  const ir::Program p = control();
  const std::string first = emit_ok(p);
  CHECK(emit_ok(p) == first);
  const ir::Program copy = p;
  CHECK(emit_ok(copy) == first);
  std::string appended = "// before\n";
  REQUIRE(dot::to_dot(p, appended).has_value());
  CHECK(appended == "// before\n" + first);
}

TEST_CASE("emit/dot: a broken program is a diagnostic, and the string is left alone") {
  std::string kept = "// kept\n";
  ir::Program bad = add_relu();
  bad.body.emplace_back(ir::Free{ir::BufferId{99}});
  auto done = dot::to_dot(bad, kept);
  REQUIRE_FALSE(done.has_value());
  CHECK(done.error().message.find("program 'add_relu'") != std::string::npos);
  CHECK(done.error().message.find("buffer #99 is not in the buffer table") != std::string::npos);
  CHECK(kept == "// kept\n");

  ir::Program bad_kernel = add_relu();
  std::get<ir::KernelCall>(bad_kernel.body[3]).kernel = ir::KernelId{7};
  auto k = dot::to_dot(bad_kernel);
  REQUIRE_FALSE(k.has_value());
  CHECK(k.error().message == "line 3 (KernelCall) of program 'add_relu': kernel id 7 is out of range (the program has 2 kernels)");

  ir::Program bad_graph = control();
  for (ir::Line& line : bad_graph.body)
    if (auto* c = std::get_if<ir::Conditional>(&line)) c->false_graph = ir::GraphId{40};
  auto g = dot::to_dot(bad_graph);
  REQUIRE_FALSE(g.has_value());
  CHECK(g.error().message.find("subgraph id 40 is out of range") != std::string::npos);

  ir::Program twice = add_relu();
  twice.body.push_back(twice.body[2]);  // Allocate buf0 again
  auto t = dot::to_dot(twice);
  REQUIRE_FALSE(t.has_value());
  CHECK(t.error().message.find("is defined twice") != std::string::npos);
}

TEST_CASE("emit/dot: deep subgraph nesting is walked without recursion, and bounded") {
  // A chain of subgraphs, each holding the next: built from the inside out.
  auto chain = [](std::size_t depth) {
    ir::Program inner{"g" + std::to_string(depth)};
    for (std::size_t d = depth; d-- > 0;) {
      ir::Program outer{"g" + std::to_string(d), inner.context};
      outer.subgraphs.push_back(std::move(inner));
      inner = std::move(outer);
    }
    return inner;
  };
  const ir::Program ok = chain(dot::max_subgraph_depth);
  const std::string g = emit_ok(ok, {.legend = false});
  CHECK(skeleton(g).strings.size() > dot::max_subgraph_depth);
  // Indentation is capped: the size stays linear in the depth.
  CHECK(g.size() < 200 * (dot::max_subgraph_depth + 1));

  const ir::Program too_deep = chain(dot::max_subgraph_depth + 1);
  auto r = dot::to_dot(too_deep);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "subgraph 'g257' of program 'g0': subgraphs are nested more than 256 deep");
  // Without subgraphs the same program is one empty graph.
  CHECK(dot::to_dot(too_deep, {.subgraphs = false}).has_value());
}

TEST_CASE("emit/dot: Graphviz reads every golden graph (skipped without dot)") {
  if (!have_graphviz()) {
    MESSAGE("Graphviz's dot is not installed: the goldens were not rendered");
    return;
  }
  for (const char* name : {"add_relu", "memory", "control", "control_lr_no_legend", "inplace_buffer.reuse"})
    CHECK_MESSAGE(graphviz_accepts(read_file(golden_dir / (std::string(name) + ".dot")), name), name);
  CHECK(graphviz_accepts(emit_ok(hostile()), "hostile"));
  std::error_code ignored;
  std::filesystem::remove_all(graphviz_dir(), ignored);
}
