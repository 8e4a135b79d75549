// expect-error: no_handler_for_line_kind<wrapir::ir::Free>
// An emitter that handles every line kind but Free must not compile, and the
// error must name the kind it forgot.
#include <wrapir/emit/emit.hpp>

#include <type_traits>

struct ForgetsFree {
  template <class Line>
    requires(!std::is_same_v<Line, wrapir::ir::Free>)
  void operator()(const Line&) {}
};

int main() {
  wrapir::Program p;
  wrapir::emit(p, ForgetsFree{});
}
