// Tests of include/wrapir/emit/emit.hpp: the visiting order, the optional
// begin/end hooks, subgraphs, the coverage concept and the mutable-handler
// check. That a missing handler or a handler taking Kind& fails to compile,
// naming the kind, is tests/compile_fail/emit_missing_handler.cpp and
// emit_mutable_handler.cpp.

#include <wrapir/emit/emit.hpp>
#include <wrapir/ir/builder.hpp>

#include <doctest/doctest.h>

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

struct Recorder {
  std::vector<std::string> events;
  void begin(const wrapir::Program& p) { events.push_back("begin " + p.name); }
  void end(const wrapir::Program& p) { events.push_back("end " + p.name); }
  template <wrapir::ir::LineKind T>
  void operator()(const T&) {
    events.emplace_back(T::kind);
  }
};

struct OnlyCalls {
  void operator()(const wrapir::ir::KernelCall&) {}
};

struct WithFallback {
  int calls = 0, others = 0;
  void operator()(const wrapir::ir::KernelCall&) { ++calls; }
  void operator()(const auto&) { ++others; }
};

std::string joined(const std::vector<std::string>& events) {
  std::string out;
  for (const std::string& e : events) out += (out.empty() ? "" : ", ") + e;
  return out;
}

/// Records lines and subgraph entries, naming launches by their kernel in
/// the (sub)program that holds them.
struct ScopedRecorder {
  std::vector<const wrapir::Program*> scope;
  std::vector<std::string> events;
  void begin_subgraph(const wrapir::Program& g) {
    events.push_back("enter " + g.name);
    scope.push_back(&g);
  }
  void end_subgraph(const wrapir::Program& g) {
    events.push_back("leave " + g.name);
    scope.pop_back();
  }
  void operator()(const wrapir::ir::KernelCall& c) { events.push_back("call " + scope.back()->kernel(c.kernel).name); }
  template <wrapir::ir::LineKind T>
  void operator()(const T&) {
    events.emplace_back(T::kind);
  }
};

/// A program whose launches are all inside subgraphs: a Conditional whose
/// true branch holds a WhileLoop, then a top-level call.
wrapir::Program nested_program() {
  using wrapir::Builder;
  wrapir::Program p{"nested"};
  Builder b{p};
  const auto one = p.ctx().integer(1);
  const auto x = b.input("arg0_1", {p.ctx().integer(4)}, wrapir::f32);
  const auto flag = b.input("arg1_1", {one}, wrapir::b8);
  const char* signature = "in_ptr0: *fp32, out_ptr0: *fp32";
  auto launch = [&](const char* kernel) {
    return [=](Builder& g, std::span<const wrapir::ir::ProgramInput> in) {
      const auto k = g.triton_kernel(kernel, "src", signature);
      const auto out = g.empty({g.ctx().integer(4)}, wrapir::f32);
      g.call(k, {boost::variant2::get<wrapir::ir::BufferId>(in[0]), out});
      g.output(out);
    };
  };
  auto loop_branch = [&](Builder& g, std::span<const wrapir::ir::ProgramInput> in) {
    const auto arg = boost::variant2::get<wrapir::ir::BufferId>(in[0]);
    const auto flag_copy = g.empty({g.ctx().integer(1)}, wrapir::b8);
    const auto outs = g.while_loop(
        {arg}, {flag_copy},
        [](Builder& c, std::span<const wrapir::ir::ProgramInput> cin) {
          c.output(boost::variant2::get<wrapir::ir::BufferId>(cin[1]));
        },
        [&](Builder& body, std::span<const wrapir::ir::ProgramInput> bin) {
          launch("body_kernel")(body, bin.first(1));
        });
    g.output(outs[0]);
  };
  const auto y = b.conditional(flag, {x}, loop_branch, launch("false_kernel"));
  const auto k = b.triton_kernel("top_kernel", "src", signature);
  const auto z = b.empty({p.ctx().integer(4)}, wrapir::f32);
  b.call(k, {y[0], z});
  b.output(z);
  return p;
}

// Emitters that must not trip the mutable-handler check: const, by-value and
// generic handlers, lambdas.
struct ByValue {
  void operator()(wrapir::ir::KernelCall) {}
  void operator()(const auto&) {}
};
struct Forwarding {
  void operator()(auto&&) {}
};
struct GenericRef {
  void operator()(auto&) {}
};
struct ConstMembers {
  void operator()(const wrapir::ir::KernelCall&) const {}
  void operator()(const auto&) const {}
};
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;
using ConstLambdas = decltype(Overloaded{[](const wrapir::ir::KernelCall&) {}, [](const auto&) {}});
using MutableLambda = decltype(Overloaded{[](wrapir::ir::KernelCall&) {}, [](const auto&) {}});
struct MutableConstMember {
  void operator()(wrapir::ir::KernelCall&) const {}
  void operator()(const auto&) {}
};
struct ConstAndMutable {  // the const one fires; the mutable one is dead code
  void operator()(const wrapir::ir::KernelCall&) {}
  void operator()(wrapir::ir::KernelCall&) {}
  void operator()(const auto&) {}
};

}  // namespace

namespace ed = wrapir::emit_detail;
using wrapir::ir::Free;
using wrapir::ir::KernelCall;
static_assert(!ed::has_mutable_handler<WithFallback, KernelCall>());
static_assert(!ed::has_mutable_handler<Recorder, KernelCall>());
static_assert(!ed::has_mutable_handler<ByValue, KernelCall>());
static_assert(!ed::has_mutable_handler<Forwarding, KernelCall>());
static_assert(!ed::has_mutable_handler<GenericRef, KernelCall>());
static_assert(!ed::has_mutable_handler<ConstMembers, KernelCall>());
static_assert(!ed::has_mutable_handler<ConstLambdas, KernelCall>());
static_assert(ed::has_mutable_handler<MutableLambda, KernelCall>());
static_assert(!ed::has_mutable_handler<MutableLambda, Free>());
static_assert(ed::has_mutable_handler<MutableConstMember, KernelCall>());
static_assert(ed::has_mutable_handler<ConstAndMutable, KernelCall>());

static_assert(wrapir::ExhaustiveEmitter<Recorder>);
static_assert(wrapir::ExhaustiveEmitter<WithFallback>);
static_assert(!wrapir::ExhaustiveEmitter<OnlyCalls>);

TEST_CASE("emit: visits every line in order between begin and end") {
  wrapir::Program p{"prog"};
  wrapir::Builder b{p};
  auto x = b.input("arg0_1", {p.ctx().integer(4)}, wrapir::f32);
  auto k = b.triton_kernel("k0", "src", "in_ptr0: *fp32, out_ptr0: *fp32");
  auto y = b.empty({p.ctx().integer(4)}, wrapir::f32);
  b.call(k, {x, y});
  b.comment("done");
  b.output(y);

  Recorder r;
  wrapir::emit(p, r);
  CHECK(r.events ==
        std::vector<std::string>{"begin prog", "KernelDefinition", "Allocate", "KernelCall", "Comment", "end prog"});

  WithFallback f;
  wrapir::emit(p, f);
  CHECK(f.calls == 1);
  CHECK(f.others == 3);
}

TEST_CASE("emit: an empty program only begins and ends") {
  wrapir::Program p{"empty"};
  Recorder r;
  wrapir::emit(p, r);
  CHECK(r.events == std::vector<std::string>{"begin empty", "end empty"});
}

TEST_CASE("emit: subgraphs are skipped unless asked for") {
  const wrapir::Program p = nested_program();
  ScopedRecorder r{{&p}, {}};
  wrapir::emit(p, r);
  CHECK(joined(r.events) == "Conditional, KernelDefinition, Allocate, call top_kernel");
}

TEST_CASE("emit: Subgraphs::visit enters every subgraph a line runs, in program order, recursively") {
  const wrapir::Program p = nested_program();
  ScopedRecorder r{{&p}, {}};
  wrapir::emit(p, r, wrapir::Subgraphs::visit);
  CHECK(joined(r.events) ==
        "Conditional, "
        // the true branch: a WhileLoop, its condition, then its body
        "enter true_graph_0, Allocate, WhileLoop, enter cond_fn_0, leave cond_fn_0, "
        "enter body_fn_0, KernelDefinition, Allocate, call body_kernel, leave body_fn_0, leave true_graph_0, "
        // the false branch
        "enter false_graph_0, KernelDefinition, Allocate, call false_kernel, leave false_graph_0, "
        // back in the program
        "KernelDefinition, Allocate, call top_kernel");
  CHECK(r.scope.size() == 1);

  // Without hooks, subgraphs are still entered.
  WithFallback f;
  wrapir::emit(p, f, wrapir::Subgraphs::visit);
  CHECK(f.calls == 3);
}

TEST_CASE("emit: a subgraph id outside the table throws rather than reading past it") {
  wrapir::Program p = nested_program();
  for (auto& line : p.body)
    if (auto* c = std::get_if<wrapir::ir::Conditional>(&line)) c->false_graph = wrapir::ir::GraphId{99};
  WithFallback f;
  CHECK_NOTHROW(wrapir::emit(p, f));
  CHECK_THROWS_AS(wrapir::emit(p, f, wrapir::Subgraphs::visit), std::out_of_range);
}

TEST_CASE("emit: a subgraph run by several lines is entered once (regression: 2^d visits hung)") {
  // 40 levels, each running the next level's graph from two lines and as
  // both branches: entering it at every line would take 4^40 visits.
  wrapir::ir::Program level{"level_40"};
  level.body.push_back(wrapir::ir::Comment{"innermost"});
  for (int d = 39; d >= 0; --d) {
    wrapir::ir::Program outer{"level_" + std::to_string(d)};
    const wrapir::ir::GraphId inner{0};
    outer.body.push_back(wrapir::ir::Conditional{{}, inner, inner, {}, {}});
    outer.body.push_back(wrapir::ir::Conditional{{}, inner, inner, {}, {}});
    outer.subgraphs.push_back(std::move(level));
    level = std::move(outer);
  }
  WithFallback f;
  wrapir::emit(level, f, wrapir::Subgraphs::visit);
  CHECK(f.others == 40 * 2 + 1);  // every line of every level once
}
