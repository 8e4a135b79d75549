// Tests of the arena planner's symbolic offsets (pass/symbolic_placement.hpp)
// on blocks of unrelated symbolic sizes (`s0`, `s1`, … with no relation
// between them): where the blocks are never live together they share
// offset 0 and the arena is their Max, not a sum of groups of them; past
// `detail::max_offset_forms` forms a set is named (exact) rather than
// joined; and a block above thousands of them costs bounded time and text.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/detail/offset_forms.hpp>
#include <wrapir/pass/symbolic_placement.hpp>
#include <wrapir/pass/traces.hpp>

namespace {

using namespace wrapir::pass;
namespace ir = wrapir::ir;
namespace expr = wrapir::expr;

/// `bindings` plus the values of the program's `SymbolicCallArg` lines, in
/// order (the arena's named offsets).
expr::Bindings with_named(const ir::Program& p, expr::Bindings bindings) {
  for (const ir::Line& l : p.body)
    if (const auto* a = std::get_if<ir::SymbolicCallArg>(&l)) bindings.set(a->symbol, expr::eval(a->value, bindings).value());
  return bindings;
}

/// A program of `n` buffers `int8[s_i]`, each allocated, used by one kernel
/// and freed before the next is allocated: one is live at a time. Hints
/// differ (4096 to 10496 bytes), so the largest is not the first.
ir::Program one_at_a_time(std::size_t n, std::vector<expr::Expr>& symbols) {
  ir::Program p{"unrelated"};
  ir::Builder b{p};
  const ir::KernelId k = b.triton_kernel("touch", "@triton.jit\ndef touch(in_ptr0):\n    pass\n", "in_ptr0: *i8");
  for (std::size_t i = 0; i < n; ++i) {
    symbols.push_back(b.size_symbol("s" + std::to_string(i), 4096 + 64 * static_cast<std::int64_t>((i * 37) % 101)));
    const ir::BufferId buf = b.empty({symbols.back()}, ir::DType::int8);
    ir::CallOptions o;
    o.free_after = {buf};
    b.call(k, {buf}, o);
  }
  return p;
}

/// The placement of `sym` at `bindings`, checked against `t` with its sizes
/// evaluated there: no two live blocks share a byte, whatever the sizes.
Placement checked_at(const AllocationTrace& t, const std::vector<expr::Expr>& sizes, const SymbolicPlacement& sym,
                     const expr::Bindings& bindings) {
  AllocationTrace at = t;
  for (std::size_t i = 0; i < at.allocations.size(); ++i)
    at.allocations[i].bytes = expr::eval(sizes[i], bindings).value();
  auto placed = evaluate(sym, bindings);
  REQUIRE(placed);
  const auto bad = check_placement(at, placed.value());
  CHECK_MESSAGE(!bad, *bad);
  return std::move(placed).value();
}

}  // namespace

TEST_CASE("plan_arena: buffers of unrelated sizes that are never live together share offset 0") {
  // The audit's case: joining forms of unrelated sizes made their sum, so
  // 200 such buffers got an arena of 200/32 of them stacked (peak/bound
  // 6.25 at equal hints) where their Max is exact.
  std::vector<expr::Expr> s;
  const ir::Program p = one_at_a_time(200, s);
  REQUIRE(wrapir::verify(p).empty());
  const auto planned = plan_arena(p);
  REQUIRE(planned);
  const ir::Program& q = planned->program;
  CHECK(wrapir::verify(q).empty());
  CHECK(planned->stats.peak_bytes == planned->stats.lower_bound_bytes);
  REQUIRE(q.pools.size() == 1);
  std::size_t carved = 0;
  for (const ir::Line& l : q.body)
    if (const auto* a = std::get_if<ir::AllocFromPool>(&l)) {
      ++carved;
      CHECK(a->offset_bytes.is_integer(0));
    }
  CHECK(carved == 200);
  // The arena is max(s0, …, s199) at every binding, not only at the hints.
  SplitMix64 rng(3);
  for (int round = 0; round < 5; ++round) {
    expr::Bindings b;
    std::int64_t largest = 0;
    for (const expr::Expr& x : s) {
      const std::int64_t v = rng.uniform(0, 1 << 20);
      b.set(x, v);
      largest = std::max(largest, v);
    }
    CHECK(expr::eval(q.pools[0].size_bytes, with_named(q, b)).value() == largest);
  }
  // Text linear in the buffers: the size and the names it reads print each
  // symbol about once (a few characters each).
  std::size_t text = expr::print_python(q.pools[0].size_bytes).size();
  for (const ir::Line& l : q.body)
    if (const auto* a = std::get_if<ir::SymbolicCallArg>(&l)) text += expr::print_python(a->value).size();
  CHECK(text < 20 * 200);
}

TEST_CASE("plan_arena: a small block live beside buffers of unrelated sizes does not stack them") {
  // A 16-byte buffer lives throughout; at the hints it sits on top of the
  // others (offset = their largest hint), so its offset is the Max of 200
  // unrelated sizes. A small block's offset could not be named and was
  // joined into sums: peak/bound 1.9 at 64 buffers, 209 at 6,500.
  std::vector<expr::Expr> s;
  ir::Program p{"unrelated_with_small"};
  ir::Builder b{p};
  const ir::KernelId k = b.triton_kernel("touch", "@triton.jit\ndef touch(in_ptr0):\n    pass\n", "in_ptr0: *i8");
  const ir::BufferId small = b.empty({p.ctx().integer(16)}, ir::DType::int8);
  b.call(k, {small});
  for (std::size_t i = 0; i < 200; ++i) {
    s.push_back(b.size_symbol("s" + std::to_string(i), 4096 + 64 * static_cast<std::int64_t>((i * 37) % 101)));
    const ir::BufferId buf = b.empty({s.back()}, ir::DType::int8);
    ir::CallOptions o;
    o.free_after = {buf};
    b.call(k, {buf}, o);
  }
  ir::CallOptions last;
  last.free_after = {small};
  b.call(k, {small}, last);
  REQUIRE(wrapir::verify(p).empty());
  const auto planned = plan_arena(p);
  REQUIRE(planned);
  CHECK(wrapir::verify(planned->program).empty());
  CHECK(planned->stats.peak_bytes == planned->stats.lower_bound_bytes);
}

TEST_CASE("symbolic offsets: overlapping and separate blocks of unrelated sizes keep the hint plan") {
  // Mixed: pairs of blocks live together, single blocks, a long-lived block
  // of its own size and a static one, every size its own symbol. The
  // packing at the hints is exact for every binding, so at the hints the
  // symbolic arena is the hint plan, and at any binding it is safe.
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    CAPTURE(seed);
    SplitMix64 rng(seed);
    expr::Context ctx;
    AllocationTrace t;
    std::vector<expr::Expr> sizes, symbols;
    std::vector<std::int64_t> hints;
    const auto add = [&](std::size_t begin, std::size_t end) {
      const std::int64_t hint = 64 * rng.uniform(1, 200);
      symbols.push_back(ctx.symbol("s" + std::to_string(symbols.size()), expr::Assumption::nonnegative));
      hints.push_back(hint);
      sizes.push_back(symbols.back());
      t.allocations.push_back({"b" + std::to_string(t.allocations.size()), hint, begin, end, 0, false, false});
    };
    std::size_t step = 0;
    for (int group = 0; group < 150; ++group) {
      switch (rng.uniform(0, 2)) {
        case 0:  // alone
          add(step, step + 1);
          break;
        case 1:  // two at once
          add(step, step + 1);
          add(step, step + 1);
          break;
        default:  // overlapping the next group
          add(step, step + 2);
          break;
      }
      ++step;
    }
    add(0, step + 1);  // long-lived, symbolic
    t.allocations.push_back({"fixed", 4096, 0, step + 1, 0, false, true});
    sizes.push_back(ctx.integer(4096));
    t.steps = step + 1;
    const ArenaPlan plan = place_in_arenas(t);
    const SymbolicPlacement sym = symbolic_placement(t, plan.placement, sizes);
    expr::Bindings at_hints;
    for (std::size_t i = 0; i < symbols.size(); ++i) at_hints.set(symbols[i], hints[i]);
    CHECK(checked_at(t, sizes, sym, at_hints).total_bytes() == plan.placement.total_bytes());
    for (int round = 0; round < 4; ++round) {
      expr::Bindings b;
      for (const expr::Expr& x : symbols) b.set(x, rng.uniform(0, 20000));
      (void)checked_at(t, sizes, sym, b);
    }
    for (const expr::Expr& o : sym.offsets) CHECK(expr::to_string(o).size() < 2000);
  }
}

TEST_CASE("symbolic offsets: a block above thousands of unrelated blocks is exact and bounded") {
  // 1,100 short blocks of unrelated sizes at offset 0 and a long-lived block
  // above them all (a valid placement at the hints, 64 bytes each): the long
  // block's offset is the Max of 1,100 forms, none dominating another. It
  // was joined down to 32 sums (an offset of 1,100 / 32 blocks stacked, in
  // seconds of pairwise joins); it is named, the Max itself.
  constexpr std::size_t n = 1100;
  static_assert(n > detail::max_pairwise_forms);
  expr::Context ctx;
  AllocationTrace t;
  Placement hint;
  std::vector<expr::Expr> sizes;
  hint.arenas.push_back({0, 128});
  for (std::size_t i = 0; i < n; ++i) {
    t.allocations.push_back({"b" + std::to_string(i), 64, i, i + 1, 0, false, false});
    sizes.push_back(ctx.symbol("s" + std::to_string(i), expr::Assumption::nonnegative));
    hint.blocks.push_back({0, 0});
  }
  t.allocations.push_back({"long", 64, 0, n, 0, false, false});
  sizes.push_back(ctx.symbol("L", expr::Assumption::nonnegative));
  hint.blocks.push_back({0, 64});
  t.steps = n;
  const SymbolicPlacement sym = symbolic_placement(t, hint, sizes);
  expr::Bindings at_hints;
  for (const expr::Expr& x : sizes) at_hints.set(x, 64);
  CHECK(checked_at(t, sizes, sym, at_hints).total_bytes() == 128);
  // At another binding the long block sits right on the largest of them.
  expr::Bindings b;
  SplitMix64 rng(9);
  std::int64_t largest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t v = rng.uniform(0, 100000);
    b.set(sizes[i], v);
    largest = std::max(largest, (v + 63) / 64 * 64);
  }
  b.set(sizes[n], 1000);
  const Placement placed = checked_at(t, sizes, sym, b);
  CHECK(placed.blocks[n].offset == largest);
  std::size_t text = 0;
  for (const NamedOffset& x : sym.named) text += expr::to_string(x.value).size();
  for (const expr::Expr& o : sym.offsets) text += expr::to_string(o).size();
  text += expr::to_string(sym.arena_bytes[0]).size();
  CHECK(text < 60 * n);
}

TEST_CASE("prune_offset_forms: past max_pairwise_forms forms the Max is kept, or joined safely") {
  // Many forms of unrelated sizes plus repeats with smaller constants:
  // without joins the Max of what is kept equals the Max of the input at
  // every binding; with joins every input form is at most a kept one, and
  // at most max_offset_forms remain.
  using detail::OffsetForm;
  expr::Context ctx;
  detail::OffsetTerms known;
  std::vector<expr::Expr> s;
  for (int i = 0; i < 300; ++i) s.push_back(ctx.symbol("s" + std::to_string(i), expr::Assumption::nonnegative));
  SplitMix64 rng(4);
  std::vector<OffsetForm> forms(detail::max_pairwise_forms + 500);
  for (OffsetForm& f : forms) {
    for (std::int64_t k = rng.uniform(1, 3); k > 0; --k)
      f = f.plus(s[static_cast<std::size_t>(rng.uniform(0, 299))], 64, known);
    f = f.plus(ctx.integer(64 * rng.uniform(0, 3)), 0, known);
    f.at_hints = f.constant + 64 * static_cast<std::int64_t>(f.terms.size());
  }
  const auto value = [&](const OffsetForm& f, const expr::Bindings& b) { return expr::eval(f.to_expr(ctx, known), b).value(); };
  std::vector<OffsetForm> kept = forms, joined = forms;
  detail::prune_offset_forms(kept, known, false);
  detail::prune_offset_forms(joined, known, true);
  CHECK(kept.size() < forms.size());
  CHECK(kept.size() > detail::max_offset_forms);
  CHECK(joined.size() <= detail::max_offset_forms);
  for (int round = 0; round < 4; ++round) {
    expr::Bindings b;
    for (const expr::Expr& x : s) b.set(x, 64 * rng.uniform(0, 1000));
    std::int64_t input = 0, of_kept = 0, of_joined = 0;
    for (const OffsetForm& f : forms) input = std::max(input, value(f, b));
    for (const OffsetForm& f : kept) of_kept = std::max(of_kept, value(f, b));
    for (const OffsetForm& f : joined) of_joined = std::max(of_joined, value(f, b));
    CHECK(of_kept == input);
    CHECK(of_joined >= input);
  }
}
