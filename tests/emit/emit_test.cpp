// Tests of include/wrapir/emit/emit.hpp: the visiting order, the optional
// begin/end hooks and the coverage concept. That a missing handler fails to
// compile, naming the kind, is tests/compile_fail/emit_missing_handler.cpp.

#include <wrapir/emit/emit.hpp>
#include <wrapir/ir/builder.hpp>

#include <doctest/doctest.h>

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

}  // namespace

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
