// Tests of include/wrapir/ir/hints.hpp: a program's symbols at their hints.

#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/hints.hpp>

#include <doctest/doctest.h>

using namespace wrapir::ir;

TEST_CASE("ir/hints: declared hints, the fallback for the others, and nothing for non-symbols") {
  wrapir::Program p;
  wrapir::Builder b{p};
  auto s0 = b.size_symbol("s0", 16);
  auto s1 = b.size_symbol("s1");
  p.symbols.push_back(SymbolDecl{p.ctx().integer(3), SymbolOrigin::input, {}, {}, 5});  // malformed: skipped
  p.symbols.push_back(SymbolDecl{});                                                     // null: skipped

  const wrapir::expr::Bindings plain = hint_bindings(p);
  CHECK(plain.get(s0) == 16);
  CHECK_FALSE(plain.get(s1));
  CHECK(plain.entries().size() == 1);

  const wrapir::expr::Bindings with_fallback = hint_bindings(p, 42);
  CHECK(with_fallback.get(s0) == 16);
  CHECK(with_fallback.get(s1) == 42);
  CHECK(with_fallback.entries().size() == 2);
}

TEST_CASE("ir/hints: bind_hints replaces what the program declares and keeps the rest") {
  wrapir::Program p;
  wrapir::Builder b{p};
  auto s0 = b.size_symbol("s0", 16);
  auto s1 = b.size_symbol("s1");
  auto other = p.ctx().symbol("u9");
  wrapir::expr::Bindings inherited;
  inherited.set(s0, 1).set(s1, 2).set(other, 3);
  bind_hints(p, inherited);
  CHECK(inherited.get(s0) == 16);  // the program's own hint wins
  CHECK(inherited.get(s1) == 2);   // no hint: the inherited value stays
  CHECK(inherited.get(other) == 3);
}
