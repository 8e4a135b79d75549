// expect-error: mutable_handler_for_line_kind<wrapir::ir::KernelCall>
// A handler that takes a line by non-const reference never fires (emit
// passes lines as const), and next to a catch-all it would silently lose
// every KernelCall to it: a compile error that names the kind.
#include <wrapir/emit/emit.hpp>

struct CountsNothing {
  int launches = 0;
  void operator()(wrapir::ir::KernelCall&) { ++launches; }
  void operator()(const auto&) {}
};

int main() {
  wrapir::Program p;
  wrapir::emit(p, CountsNothing{});
}
