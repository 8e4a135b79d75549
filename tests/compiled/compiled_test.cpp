// wrapir::compiled end to end: this translation unit is compiled with
// WRAPIR_SEPARATE_COMPILATION (the target's PUBLIC definition), so the
// heavy functions it calls are declarations here and definitions in the
// library; a program is built, verified and emitted as in header-only mode.

#include <wrapir/emit/python.hpp>
#include <wrapir/wrapir.hpp>

#include <doctest/doctest.h>

#include <string>

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#error "tests/compiled must be built against wrapir::compiled (WRAPIR_SEPARATE_COMPILATION)"
#endif

TEST_CASE("compiled: build, verify and emit a program against wrapir::compiled") {
  wrapir::Program p{"add"};
  wrapir::Builder b{p};
  auto n = b.size_symbol("s0", 1024);
  auto x = b.input("arg0_1", {n}, wrapir::f32);
  auto k = b.triton_kernel("triton_poi_add_0", "@triton.jit\ndef k(): pass", "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32",
                           wrapir::ir::KernelMetadata{.num_warps = 4,
                                                      .grid_type = wrapir::ir::GridType::grid_1d,
                                                      .block = {{"XBLOCK", 1024}}});
  auto out = b.empty({n}, wrapir::f32);
  b.call(k, {x, out, n});
  b.output(out);

  CHECK(wrapir::ir::verify(p).empty());
  CHECK(wrapir::ir::kind_name(p.body.back()) == "KernelCall");

  const wrapir::Program copy = p;  // Program's special members come from the library
  CHECK(copy == p);
  CHECK(wrapir::ir::total_lines(copy) == p.body.size());

  const auto python = wrapir::python::to_python(p);
  REQUIRE(python.has_value());
  CHECK(python.value().find("triton_poi_add_0") != std::string::npos);
}
