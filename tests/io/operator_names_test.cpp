// aten's dunder operators (`aten.__and__.Tensor`) through every path a
// program takes: builder, text form, JSON, verifier, Python emitter
// (regression, issue 12 §3: the "no part starts with '__'" rule refused them
// at every one of these).

#include <wrapir/emit/python.hpp>
#include <wrapir/emit/text.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/text.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>

#include <doctest/doctest.h>

#include <string>

namespace {

wrapir::ir::Program bitwise_and_program(std::string_view op) {
  wrapir::ir::Program p{"bitwise"};
  wrapir::ir::Builder b{p};
  auto& ctx = b.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(8)}, wrapir::i64);
  const auto y = b.input("arg1_1", {ctx.integer(8)}, wrapir::i64);
  const auto out = b.empty({ctx.integer(8)}, wrapir::i64);
  b.extern_out(wrapir::ir::OpName{std::string(op)}, {wrapir::ir::Arg{x}, wrapir::ir::Arg{y}},
               wrapir::ir::BufferArg{out});
  b.output(out);
  return p;
}

}  // namespace

TEST_CASE("io: aten dunder operators survive text, JSON, verify and Python emission") {
  const wrapir::ir::Program p = bitwise_and_program("aten.__and__.Tensor");
  CHECK(wrapir::ir::verify(p).empty());

  const std::string text = wrapir::text::to_text(p);
  REQUIRE(text.find("aten.__and__.Tensor") != std::string::npos);
  const auto parsed = wrapir::text::parse_program_text(text);
  REQUIRE_MESSAGE(parsed.has_value(), (parsed ? std::string() : parsed.error().to_string()));
  CHECK(wrapir::text::to_text(*parsed) == text);

  const std::string json = wrapir::io::to_json(p);
  const auto loaded = wrapir::io::program_from_json(json);
  REQUIRE_MESSAGE(loaded.has_value(), (loaded ? std::string() : loaded.error().to_string()));
  CHECK(wrapir::io::to_json(*loaded) == json);

  const auto module = wrapir::python::to_python(p);
  REQUIRE_MESSAGE(module.has_value(), (module ? std::string() : module.error().to_string()));
  CHECK(module->find("aten.__and__.Tensor(") != std::string::npos);
}

TEST_CASE("io: other dunder names are still refused by the loaders") {
  const wrapir::ir::Program p = bitwise_and_program("aten.__and__.Tensor");
  std::string text = wrapir::text::to_text(p);
  text.replace(text.find("aten.__and__.Tensor"), 19, "aten.__add__.Tensor");
  const auto parsed = wrapir::text::parse_program_text(text);
  REQUIRE_FALSE(parsed.has_value());
  CHECK(parsed.error().to_string().find("invalid operator name 'aten.__add__.Tensor'") != std::string::npos);

  std::string json = wrapir::io::to_json(p);
  json.replace(json.find("aten.__and__.Tensor"), 19, "aten.__and__.__xor");
  const auto loaded = wrapir::io::program_from_json(json);
  REQUIRE_FALSE(loaded.has_value());
  CHECK(loaded.error().to_string().find("invalid operator name 'aten.__and__.__xor'") != std::string::npos);
}
