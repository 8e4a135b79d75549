// Compile-time benchmark TU: the core umbrella header plus one emitter (the
// Python one, when it exists). Timed by tools/compile_time.sh, header-only
// and with SEPARATE=1 (wrapir::compiled); figures in docs/performance.md.
// Target (issue 12 §5): 1.5 s and 300 MB at -O0 with g++ 12.
#include <wrapir/wrapir.hpp>
#if __has_include(<wrapir/emit/python.hpp>)
#include <wrapir/emit/python.hpp>
#endif

int main() {
  wrapir::expr::Context ctx;
  auto n = ctx.symbol("n");
  auto grid = wrapir::expr::ceil_div(n, ctx.integer(1024));
  return wrapir::expr::eval_with(grid, {{"n", 5000}}) == 5 ? 0 : 1;
}
