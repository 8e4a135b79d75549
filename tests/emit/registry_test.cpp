// The registry of emit targets (emit/registry.hpp) and the built-in targets
// (emit/targets.hpp): names validated, duplicates refused, unknown targets
// and options diagnosed with what is known, failures leave the sink alone,
// and the built-ins render what their emitters render.

#include <wrapir/emit/dot.hpp>
#include <wrapir/emit/python.hpp>
#include <wrapir/emit/registry.hpp>
#include <wrapir/emit/targets.hpp>
#include <wrapir/emit/text.hpp>
#include <wrapir/ir/builder.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace {

namespace ir = wrapir::ir;
using wrapir::EmitOptions;
using wrapir::EmitterRegistry;
using wrapir::Result;

ir::Program small() {
  ir::Program p{"small"};
  ir::Builder b{p};
  const auto s0 = b.size_symbol("s0", 8);
  const auto x = b.input("arg0_1", {s0}, wrapir::f32);
  const auto k = b.triton_kernel("triton_poi_neg_0", "@triton.jit\ndef triton_poi_neg_0(): pass\n",
                                 "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
  const auto out = b.empty({s0}, wrapir::f32);
  b.call(k, {x, out, s0});
  b.output(out);
  return p;
}

Result<std::string> count_lines(const ir::Program& p, const EmitOptions&) { return std::to_string(p.body.size()); }

}  // namespace

TEST_CASE("emit/registry: a consumer's target is registered, looked up and run") {
  EmitterRegistry r;
  REQUIRE(r.add("lines", "the number of lines", count_lines).has_value());
  REQUIRE(r.add("sink", "appends", [](const ir::Program& p, const EmitOptions& o, std::string& out) -> Result<void> {
            out += p.name + ":" + std::string(o.get("suffix").value_or("none"));
            return {};
          }, {{"suffix", "text appended"}}).has_value());
  CHECK(r.emit("lines", small()).value() == std::to_string(small().body.size()));
  std::string out = "> ";
  REQUIRE(r.emit("sink", small(), out, EmitOptions{{{"suffix", "x"}}}).has_value());
  CHECK(out == "> small:x");
  CHECK(r.names() == std::vector<std::string_view>{"lines", "sink"});
  CHECK(r.find("lines") != nullptr);
  CHECK(r.find("line") == nullptr);
}

TEST_CASE("emit/registry: names are validated") {
  EmitterRegistry r;
  for (std::string_view good : {"python", "fx-python", "my_target2", "a", "cpp"})
    CHECK_MESSAGE(r.add(std::string(good), "", count_lines).has_value(), good);
  for (std::string_view bad : {"", "Python", "2d", "-x", "x-", "x_", "has space", "dot;rm", "a/b", "é",
                               "a\nb", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}) {
    auto done = r.add(std::string(bad), "", count_lines);
    REQUIRE_FALSE_MESSAGE(done.has_value(), bad);
    CHECK(done.error().message.starts_with("invalid emit target name"));
  }
  // A hostile name is quoted legibly in the diagnostic: it stays one line.
  auto nl = r.add("a\nb", "", count_lines);
  REQUIRE_FALSE(nl.has_value());
  CHECK(nl.error().message.find('\n') == std::string::npos);
  CHECK(r.names().size() == 5);
}

TEST_CASE("emit/registry: a name is registered once, and an empty function is refused") {
  EmitterRegistry r;
  REQUIRE(wrapir::register_builtin_targets(r).has_value());
  auto again = r.add("python", "mine", count_lines);
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message == "emit target 'python' is already registered; register yours under another name");
  CHECK(r.emit("python", small()).has_value());  // still the built-in
  auto twice = wrapir::register_builtin_targets(r);
  CHECK_FALSE(twice.has_value());
  auto empty = r.add("empty", "", wrapir::EmitToString{});
  REQUIRE_FALSE(empty.has_value());
  CHECK(empty.error().message == "emit target 'empty' has no emitter function");
  auto options = r.add(wrapir::EmitTarget{"opts", "", {{"a", ""}, {"a", ""}}, [](auto&, auto&, auto&) -> Result<void> {
    return {};
  }});
  REQUIRE_FALSE(options.has_value());
  CHECK(options.error().message == "emit target 'opts' declares option 'a' twice");
}

TEST_CASE("emit/registry: an unknown target lists the known ones") {
  EmitterRegistry r;
  REQUIRE(wrapir::register_builtin_targets(r).has_value());
  auto missing = r.emit("onnx", small());
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message == "unknown emit target 'onnx'; known targets: cpp, dot, fx, fx-python, python, text");
  CHECK(EmitterRegistry{}.lookup("x").error().message == "unknown emit target 'x'; known targets: none");
}

TEST_CASE("emit/registry: the cpp target is emit::cpp, its options and its refusals") {
  EmitterRegistry r;
  REQUIRE(wrapir::register_builtin_targets(r).has_value());
  // A Triton program is not the C++ emitter's (CPU programs only): its diagnostic comes through.
  auto triton = r.emit("cpp", small());
  REQUIRE_FALSE(triton.has_value());
  CHECK(triton.error().message.find("triton_poi_neg_0") != std::string::npos);
  auto bad = r.emit("cpp", small(), EmitOptions{{{"input_asserts", "maybe"}}});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("input_asserts") != std::string::npos);
}

TEST_CASE("emit/registry: options are declared, given once, and validated by the target") {
  EmitterRegistry r;
  REQUIRE(wrapir::register_builtin_targets(r).has_value());
  auto unknown = r.emit("dot", small(), EmitOptions{{{"colour", "red"}}});
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message ==
        "emit target 'dot' has no option 'colour'; its options: legend, subgraphs, direction");
  auto none = r.emit("text", small(), EmitOptions{{{"x", "1"}}});
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().message == "emit target 'text' has no option 'x'; it takes none");
  auto twice = r.emit("dot", small(), EmitOptions{{{"legend", "true"}, {"legend", "false"}}});
  REQUIRE_FALSE(twice.has_value());
  CHECK(twice.error().message == "emit target 'dot': option 'legend' is given twice");
  auto bad_value = r.emit("dot", small(), EmitOptions{{{"direction", "up"}}});
  REQUIRE_FALSE(bad_value.has_value());
  CHECK(bad_value.error().message == "option 'direction' takes one of TB, LR, not 'up'");
  auto bad_level = r.emit("python", small(), EmitOptions{{{"debug_level", "7"}}});
  REQUIRE_FALSE(bad_level.has_value());
  CHECK(bad_level.error().message == "option 'debug_level' takes an integer from 0 to 3, not '7'");
  auto bad_flag = r.emit("python", small(), EmitOptions{{{"device_guard", "maybe"}}});
  REQUIRE_FALSE(bad_flag.has_value());
  CHECK(bad_flag.error().message == "option 'device_guard' takes true or false, not 'maybe'");
}

TEST_CASE("emit/registry: the built-ins render what their emitters render") {
  EmitterRegistry r;
  REQUIRE(wrapir::register_builtin_targets(r).has_value());
  const ir::Program p = small();
  CHECK(r.emit("text", p).value() == wrapir::text::to_text(p));
  CHECK(r.emit("dot", p).value() == wrapir::dot::to_dot(p).value());
  CHECK(r.emit("dot", p, EmitOptions{{{"legend", "false"}, {"direction", "LR"}}}).value() ==
        wrapir::dot::to_dot(p, {.legend = false, .direction = wrapir::dot::Direction::left_to_right}).value());
  CHECK(r.emit("python", p).value() == wrapir::python::to_python(p).value());
  wrapir::python::PythonOptions py;
  py.benchmark_harness = false;
  py.size_asserts = wrapir::python::SizeAsserts::deferred;
  py.debug_level = 2;
  py.debug_kernel_filter = {"triton_poi_neg_0"};
  CHECK(r.emit("python", p,
               EmitOptions{{{"benchmark_harness", "false"},
                            {"size_asserts", "deferred"},
                            {"debug_level", "2"},
                            {"debug_kernels", "triton_poi_neg_0"}}})
            .value() == wrapir::python::to_python(p, py).value());
}

TEST_CASE("emit/registry: a failing or throwing emitter leaves the sink alone") {
  EmitterRegistry r;
  REQUIRE(r.add("fails", "", [](const ir::Program&, const EmitOptions&, std::string& out) -> Result<void> {
             out += "partial";
             return wrapir::Diagnostic{"cannot"};
           }).has_value());
  REQUIRE(r.add("throws", "", [](const ir::Program&, const EmitOptions&, std::string& out) -> Result<void> {
             out += "partial";
             throw std::runtime_error("boom\nsecond line");
           }).has_value());
  std::string out = "kept";
  auto f = r.emit("fails", small(), out);
  REQUIRE_FALSE(f.has_value());
  CHECK(f.error().message == "cannot");
  CHECK(out == "kept");
  auto t = r.emit("throws", small(), out);
  REQUIRE_FALSE(t.has_value());
  CHECK(t.error().message == "emit target 'throws' failed: boom\\x0asecond line");
  CHECK(out == "kept");
  // A built-in's diagnostic comes through as it is.
  ir::Program bad = small();
  bad.body.emplace_back(ir::Free{ir::BufferId{99}});
  REQUIRE(wrapir::register_builtin_targets(r).has_value());
  auto d = r.emit("dot", bad, out);
  REQUIRE_FALSE(d.has_value());
  CHECK(d.error().message == wrapir::dot::to_dot(bad).error().message);
  CHECK(out == "kept");
}

TEST_CASE("emit/registry: emitting to a sink streams python and pieces the others") {
  EmitterRegistry r;
  REQUIRE(wrapir::register_builtin_targets(r).has_value());
  const ir::Program p = small();
  const auto streamed = [&](std::string_view target, std::size_t piece_bytes, const EmitOptions& options = {}) {
    std::string text;
    std::size_t pieces = 0;
    const wrapir::TextSink sink{[&](std::string_view piece) -> Result<void> {
                                  text += piece;
                                  ++pieces;
                                  return {};
                                },
                                piece_bytes};
    const Result<void> done = r.emit(target, p, sink, options);
    REQUIRE_MESSAGE(done.has_value(), (done ? std::string() : done.error().message));
    return std::pair{text, pieces};
  };
  CHECK(r.find("python")->stream);
  CHECK_FALSE(r.find("text")->stream);
  const std::string python = wrapir::python::to_python(p).value();
  const auto [python_text, python_pieces] = streamed("python", 64);
  CHECK(python_text == python);
  CHECK(python_pieces >= 3);  // the header, lines of the body, the harness
  CHECK(streamed("python", 64, EmitOptions{{{"benchmark_harness", "false"}}}).first ==
        r.emit("python", p, EmitOptions{{{"benchmark_harness", "false"}}}).value());
  const std::string text = wrapir::text::to_text(p);
  CHECK(streamed("text", 10) == std::pair{text, (text.size() + 9) / 10});

  // Refusals: an option the target does not take, a sink that fails.
  const wrapir::TextSink refuses{[](std::string_view) -> Result<void> { return wrapir::Diagnostic{"disk full"}; }};
  const Result<void> bad_option = r.emit("python", p, refuses, EmitOptions{{{"colour", "red"}}});
  REQUIRE_FALSE(bad_option.has_value());
  CHECK(bad_option.error().message.find("has no option 'colour'") != std::string::npos);
  const Result<void> python_full = r.emit("python", p, refuses);
  REQUIRE_FALSE(python_full.has_value());
  CHECK(python_full.error().message == "writing the Python module failed after 0 bytes: disk full");
  const Result<void> text_full = r.emit("text", p, refuses);
  REQUIRE_FALSE(text_full.has_value());
  CHECK(text_full.error().message == "writing the output of emit target 'text' failed after 0 bytes: disk full");
}
