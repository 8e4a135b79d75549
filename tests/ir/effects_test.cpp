// Tests of include/wrapir/ir/effects.hpp: the events each line kind's
// declaration gives, that the table names every buffer a line holds (against
// the reflection of its fields), and that it predicts the verifier's
// use-before-definition and use-after-end findings on random programs,
// well formed and mutated.

#include "support/random_programs.hpp"

#include <wrapir/expr/query.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/memory_planning_line.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/detail/buffer_refs.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace wrapir;
using namespace wrapir::ir;
namespace fx = wrapir::ir::effect;

namespace {

/// Every event as one short word list, in order.
struct Recorder {
  std::vector<std::string> out;
  static std::string b(BufferId id) { return "b" + std::to_string(id.index); }
  void operator()(const fx::Allocated& e) { out.push_back("alloc " + b(e.buffer) + " " + std::to_string(int(e.storage))); }
  void operator()(const fx::Accessed& e) { out.push_back("access " + b(e.buffer) + " " + std::to_string(int(e.access))); }
  void operator()(const fx::Released& e) {
    out.push_back("release " + b(e.buffer) + " " + std::to_string(int(e.how)) + (e.offered ? " offered" : ""));
  }
  void operator()(const fx::Reused& e) {
    out.push_back("reuse " + b(e.old_buffer) + " " + b(e.new_buffer) + (e.delete_old ? "" : " kept"));
  }
  void operator()(const fx::Aliased& e) { out.push_back("alias " + b(e.view) + " " + b(e.base)); }
  void operator()(const fx::Selected& e) { out.push_back("select " + b(e.element) + " " + b(e.tuple)); }
  void operator()(const fx::Carved& e) { out.push_back("carve " + b(e.buffer) + " p" + std::to_string(e.pool.index)); }
  void operator()(const fx::PoolCreated& e) { out.push_back("pool p" + std::to_string(e.pool.index)); }
  void operator()(const fx::PoolReturned& e) {
    out.push_back("return p" + std::to_string(e.pool.index) + (e.releases_pool ? " releases" : ""));
  }
  void operator()(const fx::SymbolsRead& e) { out.push_back("symbols " + (e.expr && e.expr.is_symbol() ? std::string(e.expr.name()) : std::string("?"))); }
  void operator()(const fx::SymbolDefined& e) { out.push_back("define " + std::string(e.symbol.name())); }
  void operator()(const fx::KernelDefined& e) { out.push_back("kernel k" + std::to_string(e.kernel.index)); }
  void operator()(const fx::KernelLaunched& e) {
    out.push_back("launch k" + std::to_string(e.kernel.index) + (e.form == KernelForm::multi ? " multi" : ""));
  }
  void operator()(const fx::KernelUsed& e) { out.push_back("uses k" + std::to_string(e.kernel.index)); }
  void operator()(const fx::ScopeEntered& e) {
    out.push_back("enter " + std::to_string(int(e.kind)) + (e.graph ? " g" + std::to_string(e.graph->index) : ""));
  }
  void operator()(const fx::ScopeExited& e) { out.push_back("exit " + std::to_string(int(e.kind))); }
  void operator()(const fx::SubgraphCalled& e) {
    out.push_back("call g" + std::to_string(e.graph.index) + " " + std::to_string(e.inputs.size()) + "+" +
                  std::to_string(e.more_inputs.size()) + "->" + std::to_string(e.outputs.size()));
  }
};

std::vector<std::string> events(const Line& line) {
  Recorder r;
  for_each_effect(line, r);
  return r.out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("ir/effects: memory lines allocate, free, offer, reuse, view and use pools") {
  CHECK(events(Allocate{BufferId{3}}) == Strings{"alloc b3 0"});
  CHECK(events(FreeIfNotReused{BufferId{3}}) == Strings{"release b3 0"});
  CHECK(events(FreeIfNotReused{BufferId{3}, true}) == Strings{"release b3 0 offered"});
  CHECK(events(Reuse{BufferId{1}, BufferId{2}, false}) == Strings{"reuse b1 b2 kept"});
  CHECK(events(Free{BufferId{4}}) == Strings{"release b4 1"});
  CHECK(events(Null{}).empty());
  CHECK(events(CommBufferAllocate{BufferId{5}}) == Strings{"alloc b5 2"});
  CHECK(events(CommBufferFree{BufferId{5}}) == Strings{"release b5 2"});
  CHECK(events(WorkspaceAllocate{BufferId{6}}) == Strings{"alloc b6 1"});
  CHECK(events(WorkspaceFree{BufferId{6}}) == Strings{"release b6 3"});
  CHECK(events(Reinterpret{BufferId{7}, BufferId{1}}) == Strings{"alias b7 b1"});
  CHECK(events(PoolCreate{PoolId{2}}) == Strings{"pool p2"});
  expr::Context ctx;
  const expr::Expr off = ctx.symbol("off");
  CHECK(events(AllocFromPool{BufferId{8}, PoolId{2}, off}) == Strings{"symbols off", "carve b8 p2"});
  CHECK(events(DeallocFromPool{BufferId{8}, PoolId{2}, true}) == Strings{"release b8 4", "return p2 releases"});
  CHECK(events(DeallocFromPool{BufferId{8}, PoolId{2}, false}) == Strings{"release b8 4", "return p2"});
  CHECK(events(DeviceCopy{BufferArg{BufferId{1}}, BufferArg{BufferId{2}}}) == Strings{"access b1 1", "access b2 0"});
}

TEST_CASE("ir/effects: kernel arguments are read and written, with the symbols around them") {
  expr::Context ctx;
  const expr::Expr s0 = ctx.symbol("s0"), s1 = ctx.symbol("s1"), x = ctx.symbol("x");
  KernelCall call;
  call.kernel = KernelId{4};
  call.args = {Arg{BufferId{1}}, Arg{BufferArg{BufferId{2}, View{{s0}, {ctx.integer(1)}, s1}}}, Arg{x},
               Arg{ArgList{{Arg{BufferId{3}}, Arg{std::int64_t{5}}}}}, Arg{1.5}};
  call.grid = ExplicitGrid{s0, ctx.integer(1), ctx.integer(1)};
  // A kernel may write any buffer it receives: read_write (see lines.hpp).
  CHECK(events(call) == Strings{"launch k4", "access b1 2", "access b2 2", "symbols s0", "symbols ?", "symbols s1",
                                "symbols x", "access b3 2", "symbols s0", "symbols ?", "symbols ?"});
  CHECK(events(MultiKernelCall{KernelId{5}, {Arg{BufferId{1}}}, {}, {}, 0}) ==
        Strings{"launch k5 multi", "access b1 2"});
  CHECK(events(MultiKernelDefinition{KernelId{5}, {KernelId{1}, KernelId{2}}, {}, {}}) ==
        Strings{"kernel k5", "uses k1", "uses k2"});
  KernelDefinition def{KernelId{1}, SourceText{"src"}, {}};
  def.metadata->constants = {NamedArg{"XBLOCK", Arg{std::int64_t{1024}}}, NamedArg{"n", Arg{s1}}};
  CHECK(events(def) == Strings{"kernel k1", "symbols s1"});
  CHECK(events(SymbolicCallArg{x, s0}) == Strings{"symbols s0", "define x"});
}

TEST_CASE("ir/effects: extern calls read their arguments before they define results") {
  expr::Context ctx;
  const expr::Expr u0 = ctx.symbol("u0"), u1 = ctx.symbol("u1");
  CHECK(events(ExternKernelAlloc{BufferId{9}, OpName{"aten.mm"}, {Arg{BufferId{1}}},
                                 {NamedArg{"out_dtype", Arg{BufferId{2}}}}}) ==
        Strings{"access b1 2", "access b2 2", "alloc b9 3"});
  CHECK(events(ExternKernelAlloc{std::nullopt, OpName{"aten.foo"}, {}, {}}).empty());
  CHECK(events(ExternKernelOut{OpName{"aten.mm"}, {Arg{BufferId{1}}}, {}, BufferArg{BufferId{3}}}) ==
        Strings{"access b1 2", "access b3 1"});
  CHECK(events(ExternKernelMultiOut{BufferId{9}, OpName{"aten.f"}, {Arg{BufferId{1}}}, {},
                                    {NamedBuffer{"out0", BufferArg{BufferId{3}}},
                                     NamedBuffer{"out1", BufferArg{BufferId{4}}}}}) ==
        Strings{"access b1 2", "access b3 1", "access b4 1", "alloc b9 3"});
  CHECK(events(MultiOutput{BufferId{5}, BufferId{9}, {}}) == Strings{"select b5 b9"});
  CHECK(events(ScatterFallback{OpName{"aten.scatter_"}, BufferId{1}, 0, BufferArg{BufferId{2}}, Arg{BufferId{3}}, {}}) ==
        Strings{"access b1 2", "access b2 0", "access b3 0"});
  CHECK(events(IndexPutFallback{OpName{"aten.index_put_"}, BufferId{1}, {BufferArg{BufferId{2}}, std::nullopt},
                                BufferArg{BufferId{3}}, false}) ==
        Strings{"access b1 2", "access b2 0", "access b3 0"});
  CHECK(events(DynamicScalar{u0, BufferId{2}, {}}) == Strings{"access b2 0", "define u0"});
  CHECK(events(UnbackedSymbolDefs{BufferId{9}, {SymbolBinding{u0, {}}, SymbolBinding{u1, {}}}}) ==
        Strings{"access b9 3", "define u0", "define u1"});
  CHECK(events(AssertSizeStride{BufferId{1}, {u0}, {u1}}) == Strings{"access b1 0", "symbols u0", "symbols u1"});
  CHECK(events(AssertAlignment{BufferId{1}, 16, "aten.foo.default"}) == Strings{"access b1 0"});
  CHECK(events(AssertScalar{u0, "u0"}) == Strings{"symbols u0"});
}

TEST_CASE("ir/effects: control lines open scopes and bind subgraphs") {
  CHECK(events(EnterSubgraph{GraphId{2}}) == Strings{"enter 0 g2"});
  CHECK(events(ExitSubgraph{}) == Strings{"exit 0"});
  CHECK(events(EnterDeviceContext{}) == Strings{"enter 1"});
  CHECK(events(ExitDeviceContext{}) == Strings{"exit 1"});
  CHECK(events(EnterStreamContext{1}) == Strings{"enter 2"});
  CHECK(events(ExitStreamContext{}) == Strings{"exit 2"});
  CHECK(events(GetRawStream{}).empty());
  CHECK(events(Comment{"hi"}).empty());
  const Conditional c{Arg{BufferId{1}}, GraphId{0}, GraphId{1}, {Arg{BufferId{2}}, Arg{BufferId{3}}}, {BufferId{4}}};
  CHECK(events(c) == Strings{"access b1 0", "access b2 0", "access b3 0", "call g0 2+0->1", "call g1 2+0->1",
                             "alloc b4 4"});
  const WhileLoop w{GraphId{0}, GraphId{1}, {Arg{BufferId{2}}}, {Arg{BufferId{3}}}, {BufferId{4}}};
  CHECK(events(w) == Strings{"access b2 0", "access b3 0", "call g0 1+1->0", "call g1 1+1->1", "alloc b4 4"});
  // The bindings are the line's own vectors, not copies.
  fx::SubgraphCalled last{};
  for_each_effect(w, fx::Handlers{[&](const fx::SubgraphCalled& e) { last = e; }, [](const auto&) {}});
  CHECK(last.inputs.data() == w.carried.data());
  CHECK(last.outputs.data() == w.outputs.data());
}

// ---------------------------------------------------------------------------
// The table names every buffer a line holds
// ---------------------------------------------------------------------------

namespace {

std::vector<std::uint32_t> named_by_effects(const Line& line) {
  std::vector<std::uint32_t> out;
  for_each_buffer_named(line, [&](BufferId b) { out.push_back(b.index); });
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::uint32_t> named_by_fields(const Line& line) {
  std::vector<std::uint32_t> out;
  wrapir::pass::detail::for_each_buffer_ref(line, [&](BufferId b) { out.push_back(b.index); });
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("ir/effects: every buffer field of every line is covered by an effect") {
  // Reflection walks every field whatever it means; the table must name
  // the same buffers (kernel metadata, which reflection does not enter,
  // aside).
  std::vector<Line> lines;
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    const Program p = wrapir_test::random_program(seed, {.steps = 80});
    lines.insert(lines.end(), p.body.begin(), p.body.end());
  }
  lines.push_back(ExternKernelMultiOut{BufferId{9}, OpName{"aten.f"}, {Arg{BufferId{1}}},
                                       {NamedArg{"k", Arg{ArgList{{Arg{BufferId{7}}}}}}},
                                       {NamedBuffer{"out0", BufferArg{BufferId{3}}}}});
  lines.push_back(ScatterFallback{OpName{"aten.scatter_"}, BufferId{1}, 0, BufferArg{BufferId{2}},
                                  Arg{BufferArg{BufferId{5}}}, {NamedArg{"k", Arg{BufferId{6}}}}});  // boxed src
  lines.push_back(PoolCreate{PoolId{0}});
  lines.push_back(AssertAlignment{BufferId{2}, 16, std::nullopt});
  lines.push_back(AllocFromPool{BufferId{2}, PoolId{0}, {}});
  lines.push_back(DeallocFromPool{BufferId{2}, PoolId{0}, true});
  lines.push_back(Reuse{BufferId{1}, BufferId{2}, true});
  lines.push_back(Conditional{Arg{BufferId{1}}, GraphId{0}, GraphId{1}, {Arg{BufferId{2}}}, {BufferId{4}}});
  lines.push_back(WhileLoop{GraphId{0}, GraphId{1}, {Arg{BufferId{2}}}, {Arg{BufferId{3}}}, {BufferId{4}}});
  std::vector<bool> seen(line_kind_count, false);
  for (const Line& line : lines) {
    CAPTURE(kind_name(line));
    seen[line.index()] = true;
    CHECK(named_by_effects(line) == named_by_fields(line));
  }
  // The lines above hold every kind that has a buffer field.
  for (std::size_t k = 0; k < line_kind_count; ++k) {
    CAPTURE(line_kind_names[k]);
    const bool no_buffer_field = line_kind_names[k] == "Null" || line_kind_names[k] == "Comment" ||
                                 line_kind_names[k] == "GetRawStream" || line_kind_names[k] == "KernelDefinition" ||
                                 line_kind_names[k] == "MultiKernelDefinition" ||
                                 line_kind_names[k] == "SymbolicCallArg" || line_kind_names[k].starts_with("Enter") ||
                                 line_kind_names[k].starts_with("Exit") || line_kind_names[k] == "PoolCreate" ||
                                 line_kind_names[k] == "AssertScalar";
    CHECK((seen[k] || no_buffer_field));
  }
}

// ---------------------------------------------------------------------------
// The table predicts the verifier's liveness findings
// ---------------------------------------------------------------------------

namespace {

/// The verifier's model of buffer and symbol lives, driven by nothing but
/// the effect table and the program's tables: predicts each "used before
/// any line defines it", "used after ..." and "symbol used before its
/// definition" finding, as `category|graph|line|subject`.
class LifePredictor {
 public:
  LifePredictor(const Program& p, std::string path, std::set<std::string>& out)
      : p_(p), path_(std::move(path)), out_(out), buffers_(p.buffers.size()), pools_(p.pools.size()) {
    for (std::size_t i = 0; i < p.buffers.size(); ++i)
      if (p.buffers[i].role == BufferRole::input || p.buffers[i].role == BufferRole::constant)
        buffers_[i].life = Life::live;
    for (const SymbolDecl& s : p.symbols)
      if (s.symbol && s.symbol.is_symbol() &&
          (s.origin == SymbolOrigin::input || s.origin == SymbolOrigin::input_shape))
        defined_.insert(std::string(s.symbol.name()));
  }

  void run() {
    for (line_ = 0; line_ < p_.body.size(); ++line_) {
      reported_symbols_.clear();
      for_each_effect(p_.body[line_], *this);
    }
    for (const Program& g : p_.subgraphs)
      LifePredictor(g, path_.empty() ? g.name : path_ + "/" + g.name, out_).run();
  }

  void operator()(const fx::Allocated& e) { define(e.buffer); }
  void operator()(const fx::Accessed& e) { use(e.buffer); }
  void operator()(const fx::Released& e) { end(e.buffer, e.offered); }
  void operator()(const fx::Reused& e) {
    if (e.old_buffer == e.new_buffer && has(e.old_buffer)) return;
    if (!define(e.new_buffer) || !has(e.old_buffer)) return;
    Track& old = buffers_[e.old_buffer.index];
    if (!old.view && (old.life == Life::live || old.life == Life::offered)) {
      buffers_[e.new_buffer.index].pool = old.pool;
      old.life = Life::taken;
    }
  }
  void operator()(const fx::Aliased& e) {
    if (e.view == e.base && has(e.view)) return;
    const bool base_ok = use(e.base);
    if (!define(e.view)) return;
    buffers_[e.view.index].view = true;
    if (base_ok) buffers_[e.view.index].base = static_cast<int>(e.base.index);
  }
  void operator()(const fx::Selected& e) {
    use(e.tuple);
    define(e.element);
  }
  void operator()(const fx::Carved& e) {
    if (define(e.buffer) && e.pool.index < pools_.size()) buffers_[e.buffer.index].pool = static_cast<int>(e.pool.index);
  }
  void operator()(const fx::PoolCreated& e) {
    if (e.pool.index >= pools_.size()) return;
    if (pools_[e.pool.index] == PoolLife::not_created) pools_[e.pool.index] = PoolLife::live;
    read(p_.pools[e.pool.index].size_bytes);
  }
  void operator()(const fx::PoolReturned& e) {
    if (e.releases_pool && e.pool.index < pools_.size() && pools_[e.pool.index] == PoolLife::live)
      pools_[e.pool.index] = PoolLife::released;
  }
  void operator()(const fx::SymbolsRead& e) { read(e.expr); }
  void operator()(const fx::SymbolDefined& e) {
    if (e.symbol && e.symbol.is_symbol()) defined_.insert(std::string(e.symbol.name()));
  }
  void operator()(const auto&) {}  // kernels, scopes, subgraph bindings: no life

 private:
  enum class Life { undefined, live, freed, offered, taken };
  enum class PoolLife { not_created, live, released };
  struct Track {
    Life life = Life::undefined;
    bool view = false;
    int base = -1;
    int pool = -1;
  };

  [[nodiscard]] bool has(BufferId b) const { return b.index < p_.buffers.size(); }

  void report(const char* category, const std::string& subject) {
    out_.insert(std::string(category) + "|" + path_ + "|" + std::to_string(line_) + "|" + subject);
  }

  void read(expr::Expr e) {
    if (!e) return;
    for (const expr::Expr s : expr::free_symbols(e)) {
      const SymbolDecl* d = p_.find_symbol(s);
      const std::string name(s.name());
      if (!d || defined_.contains(name) || !reported_symbols_.insert(name).second) continue;
      if (d->origin == SymbolOrigin::unbacked || d->origin == SymbolOrigin::computed)
        report("symbol-before-definition", "symbol " + name);
    }
  }

  bool define(BufferId b) {
    if (!has(b)) return false;
    const BufferDecl& d = p_.buffers[b.index];
    if (d.role == BufferRole::input || d.role == BufferRole::constant) return false;
    // Defining a buffer evaluates its layout (see ir/effects.hpp).
    if (validate(d.layout) && !d.multi_output) {
      for (const expr::Expr e : d.layout.sizes) read(e);
      for (const expr::Expr e : d.layout.strides) read(e);
      read(d.layout.storage_offset);
    }
    buffers_[b.index] = Track{Life::live, false, -1, -1};
    return true;
  }

  void end(BufferId b, bool offered) {
    if (!has(b)) return;
    Track& t = buffers_[b.index];
    if (t.view || t.life != Life::live) return;
    t.life = offered ? Life::offered : Life::freed;
  }

  /// Whether `b` is usable here; reports the use otherwise.
  bool use(BufferId b) {
    if (!has(b)) return false;
    int cur = static_cast<int>(b.index);
    for (std::size_t steps = 0; steps <= buffers_.size(); ++steps) {
      const Track& t = buffers_[static_cast<std::size_t>(cur)];
      const bool pool_released = t.pool >= 0 && pools_[static_cast<std::size_t>(t.pool)] == PoolLife::released;
      if (t.life != Life::live || pool_released) {
        const bool before = t.life == Life::undefined && cur == static_cast<int>(b.index);
        report(before ? "before-definition" : "after-end", "buffer " + p_.buffers[b.index].name);
        return false;
      }
      if (!t.view || t.base < 0) return true;
      cur = t.base;
    }
    return true;
  }

  const Program& p_;
  std::string path_;
  std::set<std::string>& out_;
  std::vector<Track> buffers_;
  std::vector<PoolLife> pools_;
  std::set<std::string> defined_;
  std::set<std::string> reported_symbols_;
  std::size_t line_ = 0;
};

std::set<std::string> predicted(const Program& p) {
  std::set<std::string> out;
  LifePredictor(p, "", out).run();
  return out;
}

/// The verifier's findings of the same three categories.
std::set<std::string> verified(const Program& p) {
  std::set<std::string> out;
  for (const Finding& f : verify(p)) {
    if (!f.line) continue;
    const char* category = nullptr;
    if (f.subject.starts_with("buffer ") && f.message == "used before any line defines it")
      category = "before-definition";
    else if (f.subject.starts_with("buffer ") && f.message.starts_with("used after "))
      category = "after-end";
    else if (f.subject.starts_with("symbol ") && f.message.starts_with("used in ") &&
             f.message.find(" before any ") != std::string::npos)
      category = "symbol-before-definition";
    if (category) out.insert(std::string(category) + "|" + f.graph_path + "|" + std::to_string(*f.line) + "|" + f.subject);
  }
  return out;
}

}  // namespace

TEST_CASE("ir/effects: the table predicts the verifier's use-before-definition and use-after-end findings") {
  std::size_t broken = 0, findings = 0;
  for (std::uint32_t seed = 1; seed <= 120; ++seed) {
    CAPTURE(seed);
    const Program p = wrapir_test::random_program(seed, {.steps = 20 + seed % 80});
    REQUIRE(verified(p).empty());
    CHECK(predicted(p).empty());
    for (std::uint32_t m = 0; m < 6; ++m) {
      CAPTURE(m);
      Program q = wrapir_test::mutate(p, seed * 16 + m);
      // Several changes at once give lines far from their definitions.
      if (m >= 3) q = wrapir_test::mutate(wrapir_test::mutate(std::move(q), seed * 31 + m), seed * 47 + m);
      const std::set<std::string> want = verified(q);
      CHECK(predicted(q) == want);
      broken += want.empty() ? 0 : 1;
      findings += want.size();
    }
  }
  // The mutations must exercise what is compared.
  CHECK(broken > 200);
  CHECK(findings > 400);
}

TEST_CASE("ir/effects: memory planning lines are those that only manage storage") {
  // Inductor's MemoryPlanningLines and the lines of ours that stand for one.
  const std::set<std::string_view> memory{"Allocate",       "FreeIfNotReused",    "Reuse",          "Free",
                                          "Null",           "Reinterpret",        "PoolCreate",     "AllocFromPool",
                                          "DeallocFromPool", "CommBufferAllocate", "CommBufferFree", "WorkspaceAllocate",
                                          "WorkspaceFree"};
  std::vector<bool> seen(line_kind_count, false);
  auto check = [&](const Line& line) {
    CAPTURE(kind_name(line));
    seen[line.index()] = true;
    CHECK(is_memory_planning_line(line) == memory.contains(kind_name(line)));
  };
  for (std::uint32_t seed = 1; seed <= 40; ++seed)
    for (const Line& line : wrapir_test::random_program(seed, {.steps = 80}).body) check(line);
  for (const Line& line : {Line{Reuse{}}, Line{PoolCreate{}}, Line{AllocFromPool{}}, Line{DeallocFromPool{}},
                           Line{ExternKernelMultiOut{}}, Line{ExternKernelAlloc{}}, Line{Conditional{}},
                           Line{WhileLoop{}}, Line{KernelDefinition{}}, Line{MultiOutput{}},
                           Line{AssertAlignment{}}, Line{AssertScalar{}}})
    check(line);
  for (std::size_t k = 0; k < line_kind_count; ++k) {
    CAPTURE(line_kind_names[k]);
    CHECK(seen[k]);
  }
}

TEST_CASE("ir/effects: argument lists nested a million deep are walked without recursion") {
  // Regression: the walk recursed once per level, so a program built in C++
  // with lists nested deeply enough overflowed the stack before any
  // verifier or emitter could refuse it (they stop at 64 levels).
  constexpr std::size_t depth = 1'000'000;
  Arg nested{BufferId{7}};
  for (std::size_t i = 0; i < depth; ++i) {
    ArgList list;
    list.items.push_back(std::move(nested));
    nested = Arg{std::move(list)};
  }
  KernelCall call;
  call.kernel = KernelId{1};
  call.args.push_back(Arg{BufferId{2}});
  call.args.push_back(std::move(nested));
  call.args.push_back(Arg{ArgList{{Arg{BufferId{3}}, Arg{ArgList{{Arg{BufferId{4}}}}}, Arg{BufferId{5}}}}});
  Recorder r;
  for_each_effect(call, r);  // on the struct: a `Line` would copy the list, recursively
  CHECK(r.out == Strings{"launch k1", "access b2 2", "access b7 2", "access b3 2", "access b4 2", "access b5 2"});
  // Taken apart level by level: destroying it whole recurses as deep.
  Arg rest = std::move(call.args[1]);
  while (ArgList* l = boost::variant2::get_if<ArgList>(&rest.value)) {
    if (l->items.empty()) break;
    Arg inner = std::move(l->items.front());
    rest = std::move(inner);
  }
}
