// Tests of include/wrapir/pass/reuse.hpp (with plan_stats.hpp and the
// segment tree): golden line sequences after planning, the reuse key, the
// peak guard, scopes, trailing lines, comm buffers and what is never
// reused; and properties over seeded random programs: the plan verifies,
// storage is never shared by two live buffers, the peak is at least the
// lower bound and, with the guard, never above the unplanned peak.

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/detail/segment_tree.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/plan_stats.hpp>
#include <wrapir/pass/reuse.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace {

using namespace wrapir::ir;
using wrapir::cuda_device;
using wrapir::expr::Expr;
namespace pass = wrapir::pass;

std::string findings(const Program& p) {
  std::string text;
  for (const Finding& f : verify(p)) text += to_string(f) + "\n";
  return text;
}

/// The memory lines of `p`'s body, one per line ("Allocate buf0", "Reuse
/// buf0 buf2", "FreeIfNotReused buf0 reused"); other lines by kind only.
std::string memory_lines(const Program& p) {
  std::string out;
  auto name = [&](BufferId b) { return p.buffer(b).name; };
  for (const Line& line : p.body) {
    if (const auto* a = std::get_if<Allocate>(&line)) {
      out += "Allocate " + name(a->buffer);
    } else if (const auto* f = std::get_if<FreeIfNotReused>(&line)) {
      out += "FreeIfNotReused " + name(f->buffer) + (f->reused ? " reused" : "");
    } else if (const auto* r = std::get_if<Reuse>(&line)) {
      out += "Reuse " + name(r->old_buffer) + " " + name(r->new_buffer);
    } else if (const auto* c = std::get_if<CommBufferAllocate>(&line)) {
      out += "CommBufferAllocate " + name(c->buffer);
    } else if (const auto* cf = std::get_if<CommBufferFree>(&line)) {
      out += "CommBufferFree " + name(cf->buffer);
    } else if (const auto* w = std::get_if<WorkspaceAllocate>(&line)) {
      out += "WorkspaceAllocate " + name(w->workspace);
    } else if (const auto* wf = std::get_if<WorkspaceFree>(&line)) {
      out += "WorkspaceFree " + name(wf->workspace);
    } else if (const auto* fr = std::get_if<Free>(&line)) {
      out += "Free " + name(fr->buffer);
    } else {
      out += std::string(kind_name(line));
    }
    out += "\n";
  }
  return out;
}

std::string lines(std::initializer_list<std::string_view> expected) {
  std::string text;
  for (std::string_view line : expected) (text += line) += "\n";
  return text;
}

pass::PlanResult planned(const Program& p, const pass::ReuseOptions& o = {}) {
  auto r = pass::plan_reuse(p, o);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  CHECK(findings(r.value().program).empty());
  return std::move(r).value();
}

/// `touch_f32(ptr)` / `touch_f16(ptr)`: a kernel that uses one buffer.
struct Fixture {
  Program p{"graph"};
  Builder b{p};
  Expr s0 = b.size_symbol("s0", 16);
  Expr s1 = b.size_symbol("s1", 16);
  KernelId touch32 = b.triton_kernel("touch_f32", "src", "ptr: *fp32");
  KernelId touch16 = b.triton_kernel("touch_f16", "src", "ptr: *fp16");

  Expr n(std::int64_t v) { return p.ctx().integer(v); }
  BufferId alloc(std::vector<Expr> sizes, DType dtype = DType::float32) {
    BufferId x = b.empty(std::move(sizes), dtype);
    use(x);
    return x;
  }
  void use(BufferId x) { b.call(p.buffer(x).layout.dtype == DType::float16 ? touch16 : touch32, {x}); }
};

}  // namespace

TEST_CASE("segment tree: range add and range max against a plain array") {
  std::mt19937 rng(7);
  std::vector<std::int64_t> plain(37);
  for (auto& v : plain) v = static_cast<std::int64_t>(rng() % 100);
  pass::detail::PeakTree tree(plain, pass::detail::MaxOp{}, pass::detail::AddOp{}, INT64_MIN);
  for (int round = 0; round < 2000; ++round) {
    std::size_t a = rng() % plain.size(), b = rng() % plain.size();
    if (a > b) std::swap(a, b);
    if (round % 2 == 0) {
      const std::int64_t add = static_cast<std::int64_t>(rng() % 50) - 10;
      tree.update(a, b, add);
      for (std::size_t i = a; i <= b; ++i) plain[i] += add;
    } else {
      CHECK(tree.query(a, b) == *std::max_element(plain.begin() + static_cast<std::ptrdiff_t>(a),
                                                  plain.begin() + static_cast<std::ptrdiff_t>(b) + 1));
    }
  }
  CHECK(tree.query(5, 4) == INT64_MIN);
  CHECK(tree.query(100, 200) == INT64_MIN);
}

TEST_CASE("segment tree: every size, powers of two or not, against a plain array") {
  // Sizes short of a power of two leave leaves unused, which no query may
  // read and no update may reach.
  std::mt19937 rng(11);
  for (std::size_t n = 1; n <= 130; ++n) {
    CAPTURE(n);
    std::vector<std::int64_t> plain(n);
    for (auto& v : plain) v = static_cast<std::int64_t>(rng() % 1000) - 500;
    pass::detail::PeakTree tree(plain, pass::detail::MaxOp{}, pass::detail::AddOp{}, INT64_MIN);
    REQUIRE(tree.size() == n);
    for (int round = 0; round < 300; ++round) {
      std::size_t a = rng() % n, b = rng() % n;
      if (a > b) std::swap(a, b);
      if (rng() % 2 == 0) {
        const std::int64_t add = static_cast<std::int64_t>(rng() % 200) - 100;
        tree.update(a, b, add);
        for (std::size_t i = a; i <= b; ++i) plain[i] += add;
      } else {
        REQUIRE(tree.query(a, b) == *std::max_element(plain.begin() + static_cast<std::ptrdiff_t>(a),
                                                      plain.begin() + static_cast<std::ptrdiff_t>(b) + 1));
      }
    }
    for (std::size_t i = 0; i < n; ++i) REQUIRE(tree.query(i, i) == plain[i]);
    CHECK(tree.query(0, n + 5) == *std::max_element(plain.begin(), plain.end()));
  }
  const pass::detail::PeakTree empty({}, pass::detail::MaxOp{}, pass::detail::AddOp{}, INT64_MIN);
  CHECK(empty.size() == 0);
}

TEST_CASE("reuse: a freed buffer's storage goes to the next allocation of the same key") {
  Fixture f;
  BufferId a = f.alloc({f.s0});
  f.b.free({a});
  BufferId c = f.alloc({f.s0});
  f.b.output(c);
  const pass::PlanResult r = planned(f.p);
  CHECK(memory_lines(r.program) == lines({"KernelDefinition", "KernelDefinition", "Allocate buf0", "KernelCall",
                                          "FreeIfNotReused buf0 reused", "Reuse buf0 buf1", "KernelCall"}));
  CHECK(r.stats.reuses == 1);
  CHECK(r.stats.allocations == 1);
  CHECK(r.stats.peak_bytes == 64);
  CHECK(r.stats.lower_bound_bytes == 64);
}

TEST_CASE("reuse: offers are taken last in, first out") {
  Fixture f;
  BufferId a = f.alloc({f.s0});
  BufferId c = f.alloc({f.s0});
  f.b.free({a});
  f.b.free({c});
  BufferId d = f.alloc({f.s0});
  f.b.output(d);
  const pass::PlanResult r = planned(f.p);
  CHECK(memory_lines(r.program) ==
        lines({"KernelDefinition", "KernelDefinition", "Allocate buf0", "KernelCall", "Allocate buf1", "KernelCall",
               "FreeIfNotReused buf0", "FreeIfNotReused buf1 reused", "Reuse buf1 buf2", "KernelCall"}));
}

TEST_CASE("reuse: the key never matches across dtype, printed size, stream, device or alignment") {
  Fixture f;
  BufferId a = f.alloc({f.s0});
  f.b.free({a});
  BufferId c;
  SUBCASE("dtype") { c = f.alloc({f.s0}, DType::float16); }
  SUBCASE("symbolic size with an equal hint") { c = f.alloc({f.s1}); }
  SUBCASE("literal size equal to the hint") { c = f.alloc({f.n(16)}); }
  SUBCASE("stream") {
    c = f.b.empty({f.s0}, DType::float32);
    f.p.buffer(c).stream = 1;
  }
  SUBCASE("device") { c = f.b.empty({f.s0}, DType::float32, cuda_device(1)); }
  SUBCASE("alignment") {
    c = f.b.empty({f.s0}, DType::float32);
    f.p.buffer(c).aligned = false;
  }
  f.b.output(c);
  const pass::PlanResult r = planned(f.p);
  CHECK(r.stats.reuses == 0);
  CHECK(r.program.body == f.p.body);
}

TEST_CASE("reuse: the same storage size under another shape is reused") {
  Fixture f;
  BufferId a = f.alloc({f.n(4), f.n(8)});
  f.b.free({a});
  BufferId c = f.alloc({f.n(32)});
  f.b.output(c);
  CHECK(planned(f.p).stats.reuses == 1);
}

TEST_CASE("reuse: the peak guard refuses a reuse that would raise the peak") {
  Fixture f;
  BufferId a = f.alloc({f.n(100)});  // 400 bytes
  f.b.free({a});
  BufferId big = f.alloc({f.n(1000)});  // 4000 bytes: the peak
  f.b.free({big});
  BufferId c = f.alloc({f.n(100)});
  f.b.output(c);
  const pass::PlanResult guarded = planned(f.p);
  CHECK(guarded.stats.reuses == 0);
  CHECK(guarded.stats.peak_bytes == 4000);
  pass::ReuseOptions off;
  off.peak_guard = false;
  const pass::PlanResult unguarded = planned(f.p, off);
  CHECK(unguarded.stats.reuses == 1);
  CHECK(unguarded.stats.peak_bytes == 4400);  // buf0's storage now waits through buf1's life
  CHECK(unguarded.stats.lower_bound_bytes == 4000);
}

TEST_CASE("reuse: the peak guard accepts a reuse across lines below the peak") {
  Fixture f;
  BufferId big = f.alloc({f.n(1000)});  // the peak: 4000 + 400
  BufferId a = f.alloc({f.n(100)});
  f.b.free({big});
  f.b.free({a});
  BufferId small = f.alloc({f.n(10)});
  f.b.free({small});
  BufferId c = f.alloc({f.n(100)});
  f.b.output(c);
  const pass::PlanResult r = planned(f.p);
  CHECK(r.stats.reuses == 1);
  CHECK(memory_lines(r.program).find("Reuse buf1 buf3") != std::string::npos);
  CHECK(r.stats.peak_bytes == 4400);
}

TEST_CASE("reuse: allow_reuse = false only removes trailing memory lines") {
  Fixture f;
  BufferId a = f.alloc({f.s0});
  f.b.free({a});
  BufferId c = f.alloc({f.s0});
  f.b.free({c});
  pass::ReuseOptions o;
  o.allow_reuse = false;
  const pass::PlanResult r = planned(f.p, o);
  CHECK(memory_lines(r.program) == lines({"KernelDefinition", "KernelDefinition", "Allocate buf0", "KernelCall",
                                          "FreeIfNotReused buf0", "Allocate buf1", "KernelCall"}));
}

TEST_CASE("reuse: trailing memory lines go unless they name an output") {
  Fixture f;
  BufferId a = f.alloc({f.s0});
  BufferId c = f.alloc({f.s1});
  f.b.output(c);
  f.b.free({a});
  f.b.append(Null{});
  f.b.append(Reinterpret{f.b.declare("buf9", f.p.buffer(c).layout, BufferRole::intermediate), c});
  CHECK(memory_lines(planned(f.p).program) ==
        lines({"KernelDefinition", "KernelDefinition", "Allocate buf0", "KernelCall", "Allocate buf1", "KernelCall",
               "FreeIfNotReused buf0", "Null", "Reinterpret"}));
  f.p.body.pop_back();
  CHECK(memory_lines(planned(f.p).program) == lines({"KernelDefinition", "KernelDefinition", "Allocate buf0",
                                                     "KernelCall", "Allocate buf1", "KernelCall"}));
}

TEST_CASE("reuse: a trailing Reuse of offered storage stops the removal, wherever the offer is") {
  // The offers are those of the whole body, trailing lines included: here
  // the FreeIfNotReused that offers buf0 comes after the Reuse taking it.
  Fixture f;
  BufferId a = f.alloc({f.s0});
  BufferId x = f.b.declare("taker", f.p.buffer(a).layout, BufferRole::intermediate);
  f.b.append(Reuse{a, x, true});
  f.b.append(FreeIfNotReused{a, true});
  pass::detail::remove_trailing_memory_lines(f.p);
  CHECK(memory_lines(f.p) == lines({"KernelDefinition", "KernelDefinition", "Allocate buf0", "KernelCall",
                                    "Reuse buf0 taker"}));
  // Without an offer the Reuse is a trailing line like the others.
  f.b.append(FreeIfNotReused{a, false});
  pass::detail::remove_trailing_memory_lines(f.p);
  CHECK(memory_lines(f.p) == lines({"KernelDefinition", "KernelDefinition", "Allocate buf0", "KernelCall"}));
}

TEST_CASE("reuse: no reuse crosses an inlined subgraph's scope") {
  Fixture f;
  f.p.subgraphs.emplace_back("inner", f.p.context);
  BufferId a = f.alloc({f.s0});
  f.b.free({a});
  f.b.append(EnterSubgraph{GraphId{0}});
  BufferId c = f.alloc({f.s0});  // the outer offer is not visible here
  f.b.free({c});
  BufferId d = f.alloc({f.s0});  // but the inner one is
  f.b.free({d});
  f.b.append(ExitSubgraph{});
  BufferId e = f.alloc({f.s0});  // the inner offers are gone; the outer one is back
  f.b.output(e);
  pass::ReuseOptions o;
  o.peak_guard = false;  // buf0's storage would wait through the scope, above the peak
  CHECK(planned(f.p).stats.reuses == 1);
  const pass::PlanResult r = planned(f.p, o);
  CHECK(memory_lines(r.program) ==
        lines({"KernelDefinition", "KernelDefinition", "Allocate buf0", "KernelCall", "FreeIfNotReused buf0 reused",
               "EnterSubgraph", "Allocate buf1", "KernelCall", "FreeIfNotReused buf1 reused", "Reuse buf1 buf2",
               "KernelCall", "FreeIfNotReused buf2", "ExitSubgraph", "Reuse buf0 buf3", "KernelCall"}));
}

TEST_CASE("reuse: subgraph programs are planned as their own scopes") {
  Fixture f;
  BufferId x = f.b.input("arg0_1", {f.s0}, DType::float32);
  std::vector<BufferId> outs = f.b.conditional(
      f.s0, {x},
      [&](Builder& g, auto) {
        KernelId k = g.triton_kernel("touch_g", "src", "ptr: *fp32");
        BufferId t = g.empty({f.s0}, DType::float32);
        g.call(k, {t});
        g.free({t});
        BufferId u = g.empty({f.s0}, DType::float32);
        g.call(k, {u});
        g.output(u);
      },
      [&](Builder& g, auto inputs) {
        BufferId t = g.empty({f.s0}, DType::float32);
        g.output(t);
        (void)inputs;
      });
  f.b.output(outs[0]);
  REQUIRE(findings(f.p).empty());
  const pass::PlanResult r = planned(f.p);
  CHECK(r.stats.reuses == 1);
  CHECK(memory_lines(r.program.subgraphs[0]) ==
        lines({"KernelDefinition", "Allocate buf0", "KernelCall", "FreeIfNotReused buf0 reused", "Reuse buf0 buf1",
               "KernelCall"}));
}

TEST_CASE("reuse: comm buffers reuse comm buffers of the same group, always") {
  Fixture f;
  BufferId a = f.b.comm_buffer({f.n(100)}, DType::float32, "0");
  f.use(a);
  f.b.free({a});
  BufferId big = f.alloc({f.n(1000)});
  f.b.free({big});
  BufferId other = f.b.comm_buffer({f.n(100)}, DType::float32, "1");  // another group
  f.use(other);
  BufferId c = f.b.comm_buffer({f.n(100)}, DType::float32, "0");
  f.use(c);
  BufferId plain = f.alloc({f.n(100)});  // a plain buffer never takes comm storage
  f.b.output(plain);
  f.b.output(c);
  f.b.output(other);
  const pass::PlanResult r = planned(f.p);
  CHECK(memory_lines(r.program) ==
        lines({"KernelDefinition", "KernelDefinition", "CommBufferAllocate buf0", "KernelCall",
               "FreeIfNotReused buf0 reused", "Allocate buf1", "KernelCall", "FreeIfNotReused buf1",
               "CommBufferAllocate buf2", "KernelCall", "Reuse buf0 buf3", "KernelCall", "Allocate buf4",
               "KernelCall"}));
  // No guard for comm buffers: buf0's storage waits through buf1's life.
  CHECK(r.stats.peak_bytes == 400 + 4000);
  CHECK(pass::measure_plan(f.p, f.p).value().peak_bytes == 4000);
}

TEST_CASE("reuse: workspaces, donated inputs and storage still used after its free are never reused") {
  Fixture f;
  SUBCASE("workspace") {
    KernelId kw = f.b.triton_kernel("ws_kernel", "src", "ws_ptr: *u8");
    f.b.call(kw, {}, {.workspaces = {WorkspaceRequest{f.n(64)}}});
    BufferId d = f.b.empty({f.n(64)}, DType::uint8);
    f.b.output(d);
  }
  SUBCASE("donated input") {
    BufferId x = f.b.input("arg0_1", Layout::contiguous(f.p.ctx(), {f.s0}, DType::float32, cuda_device(0)), true);
    f.use(x);
    f.b.free({x});
    BufferId c = f.alloc({f.s0});
    f.b.output(c);
  }
  SUBCASE("a view used after its base's free (an unverified program)") {
    BufferId a = f.alloc({f.s0});
    BufferId v = f.b.view(a, {f.s0}, {f.n(1)}, f.n(0));
    f.b.free({a});
    BufferId c = f.b.empty({f.s0}, DType::float32);
    f.use(v);
    f.use(c);
    f.b.output(c);
    auto r = pass::plan_reuse(f.p);
    REQUIRE(r.ok());
    CHECK(r.value().stats.reuses == 0);
    return;
  }
  CHECK(planned(f.p).stats.reuses == 0);
}

TEST_CASE("reuse: a program whose storage cannot be traced gets a diagnostic") {
  Fixture f;
  f.b.append(FreeIfNotReused{BufferId{42}});
  auto r = pass::plan_reuse(f.p);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "line 2: buffer #42 is not in the buffer table");
}

// ---------------------------------------------------------------------------
// Properties over random programs
// ---------------------------------------------------------------------------

namespace {

/// A random verified program: allocations of a few keys (sizes s0, s1, 16,
/// 32, dtypes f32/f16, streams 0/1, devices cuda:0/1), uses, frees, views,
/// workspaces, comm buffers, extern results and inlined subgraph scopes.
struct RandomProgram {
  Program p{"random"};
  bool has_comm = false;
};

RandomProgram random_program(std::uint32_t seed, std::size_t steps) {
  RandomProgram out;
  Program& p = out.p;
  Builder b{p};
  std::mt19937 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const Expr s0 = b.size_symbol("s0", 16);
  const Expr s1 = b.size_symbol("s1", 24);
  const KernelId touch32 = b.triton_kernel("touch_f32", "src", "ptr: *fp32");
  const KernelId touch16 = b.triton_kernel("touch_f16", "src", "ptr: *fp16");
  const KernelId ws = b.triton_kernel("ws_kernel", "src", "ptr: *fp32, ws_ptr: *u8");
  p.subgraphs.emplace_back("inner", p.context);
  const std::vector<Expr> sizes{s0, s1, p.ctx().integer(16), p.ctx().integer(32), wrapir::expr::mul(s0, s1)};

  struct Live {
    BufferId id;
    std::vector<BufferId> views;
  };
  std::vector<Live> live;
  auto use = [&](BufferId x) { b.call(p.buffer(x).layout.dtype == DType::float16 ? touch16 : touch32, {x}); };
  int depth = 0;
  for (std::size_t step = 0; step < steps; ++step) {
    const std::size_t what = pick(100);
    if (what < 35 || live.empty()) {
      const DType dtype = pick(3) == 0 ? DType::float16 : DType::float32;
      const Device dev = cuda_device(pick(4) == 0 ? 1 : 0);
      BufferId x;
      if (pick(8) == 0) {
        const Expr size = sizes[pick(4)];  // one pick per statement: the same program for every compiler
        x = b.comm_buffer({size}, DType::float32, pick(2) == 0 ? "0" : "1", dev);
        out.has_comm = true;
      } else if (pick(10) == 0) {
        x = b.extern_alloc("aten.empty", {}, Layout::contiguous(p.ctx(), {sizes[pick(sizes.size())]}, dtype, dev));
      } else {
        x = b.empty({sizes[pick(sizes.size())]}, dtype, dev);
        if (pick(6) == 0) p.buffer(x).stream = 1;
      }
      use(x);
      live.push_back({x, {}});
    } else if (what < 60) {
      Live& l = live[pick(live.size())];
      use(l.views.empty() || pick(2) == 0 ? l.id : l.views[pick(l.views.size())]);
    } else if (what < 85) {
      const std::size_t i = pick(live.size());
      b.free({live[i].id});
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (what < 90) {
      Live& l = live[pick(live.size())];
      if (p.buffer(l.id).role == BufferRole::comm) continue;
      const Layout& base = p.buffer(l.id).layout;
      l.views.push_back(b.view(l.id, {p.ctx().integer(2)}, {p.ctx().integer(1)}, p.ctx().integer(1)));
      (void)base;
    } else if (what < 94) {
      Live& l = live[pick(live.size())];
      if (p.buffer(l.id).layout.dtype != DType::float32) continue;
      b.call(ws, {l.id}, {.workspaces = {WorkspaceRequest{sizes[pick(sizes.size())]}}});
    } else if (what < 97 && depth < 2) {
      b.append(EnterSubgraph{GraphId{0}});
      ++depth;
    } else if (depth > 0) {
      b.append(ExitSubgraph{});
      --depth;
    }
  }
  while (depth-- > 0) b.append(ExitSubgraph{});
  for (const Live& l : live)
    if (pick(3) == 0 && p.buffer(l.id).role != BufferRole::comm) b.output(l.id);
  return out;
}

/// Checks that no storage is shared by two live buffers: for every Reuse
/// the old buffer and its views are not used after the FreeIfNotReused
/// that offered it (except by the Reuse itself).
void check_no_overlap(const Program& planned) {
  std::vector<std::size_t> base_of(planned.buffers.size(), SIZE_MAX);
  std::vector<std::size_t> last_use(planned.buffers.size(), 0);
  std::vector<std::size_t> offered_at(planned.buffers.size(), SIZE_MAX);
  for (std::size_t i = 0; i < planned.body.size(); ++i) {
    const Line& line = planned.body[i];
    if (const auto* r = std::get_if<Reinterpret>(&line)) base_of[r->view.index] = r->base.index;
    if (const auto* f = std::get_if<FreeIfNotReused>(&line); f && f->reused) offered_at[f->buffer.index] = i;
    if (std::holds_alternative<Reuse>(line)) continue;
    for_each_buffer_named(line, [&](BufferId b) {
      last_use[b.index] = i;
      if (base_of[b.index] != SIZE_MAX) last_use[base_of[b.index]] = i;
    });
  }
  for (std::size_t i = 0; i < planned.body.size(); ++i) {
    const auto* r = std::get_if<Reuse>(&planned.body[i]);
    if (!r) continue;
    const std::size_t free_line = offered_at[r->old_buffer.index];
    REQUIRE(free_line < i);
    CHECK(last_use[r->old_buffer.index] == free_line);
  }
}

}  // namespace

TEST_CASE("reuse: properties over random programs") {
  for (std::uint32_t seed = 1; seed <= 150; ++seed) {
    CAPTURE(seed);
    const RandomProgram rp = random_program(seed, 20 + seed % 120);
    REQUIRE(findings(rp.p).empty());
    auto unplanned = pass::measure_plan(rp.p, rp.p);
    REQUIRE(unplanned.ok());
    for (const bool guard : {true, false}) {
      pass::ReuseOptions o;
      o.peak_guard = guard;
      auto r = pass::plan_reuse(rp.p, o);
      REQUIRE(r.ok());
      const pass::PlanResult& plan = r.value();
      CHECK(findings(plan.program).empty());
      check_no_overlap(plan.program);
      CHECK(plan.stats.peak_bytes >= plan.stats.lower_bound_bytes);
      CHECK(plan.stats.lower_bound_bytes == unplanned.value().lower_bound_bytes);
      // The planner's statistics are those an independent measure gives.
      CHECK(plan.stats == pass::measure_plan(rp.p, plan.program).value());
      if (guard && !rp.has_comm) CHECK(plan.stats.peak_bytes <= unplanned.value().peak_bytes);
      // Planning a plan again changes nothing more.
      auto again = pass::plan_reuse(plan.program, o);
      REQUIRE(again.ok());
      CHECK(findings(again.value().program).empty());
    }
  }
}
