// Step 2 of the reference pipeline: a program, and an emitter of your own.
//
// A compiler builds its wrapper program with a few Builder calls; anything
// that walks the program — a code generator, a cost model, a memory report —
// is an emitter: an overload set with one handler per line kind, run by
// wrapir::emit. Leaving a kind out is a compile error that names it; the
// catch-all at the end of MemoryReport is a deliberate opt-in.

#include <wrapir/emit/emit.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/ir/builder.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>

// Launches, bytes allocated and the peak of live bytes, with symbolic sizes
// evaluated at the program's size hints.
struct MemoryReport {
  const wrapir::Program& program;
  wrapir::expr::Bindings hints;
  int launches = 0;
  std::int64_t allocated = 0, live = 0, peak = 0;

  explicit MemoryReport(const wrapir::Program& p) : program(p) {
    for (const auto& s : p.symbols)
      if (s.hint) hints.set(s.symbol, *s.hint);
  }
  std::int64_t bytes(wrapir::ir::BufferId b) const {
    return wrapir::expr::eval(wrapir::ir::storage_bytes(program.buffer(b).layout), hints).value();
  }
  void grow(wrapir::ir::BufferId b) {
    allocated += bytes(b);
    live += bytes(b);
    peak = std::max(peak, live);
  }

  void operator()(const wrapir::ir::Allocate& a) { grow(a.buffer); }
  void operator()(const wrapir::ir::WorkspaceAllocate& w) { grow(w.workspace); }
  void operator()(const wrapir::ir::FreeIfNotReused& f) {
    if (!f.reused) live -= bytes(f.buffer);
  }
  void operator()(const wrapir::ir::WorkspaceFree& f) { live -= bytes(f.workspace); }
  void operator()(const wrapir::ir::KernelCall&) { ++launches; }
  void operator()(const wrapir::ir::MultiKernelCall&) { ++launches; }
  void operator()(const auto&) {}  // every other kind: nothing to count
};

int main() {
  // y = relu(x + b) over a dynamic [s0, 1024] float tensor, in two kernels.
  wrapir::Program p{"add_relu"};
  wrapir::Builder b{p, wrapir::cuda_device(0)};
  const auto s0 = b.size_symbol("s0", /*hint=*/4096);
  const auto c1024 = p.ctx().integer(1024);
  const auto x = b.input("arg0_1", {s0, c1024}, wrapir::f32);
  const auto bias = b.input("arg1_1", {c1024}, wrapir::f32);
  const auto numel = b.computed_symbol("xnumel_0", s0 * c1024);
  const char* signature = "in_ptr0: *fp32, in_ptr1: *fp32, out_ptr0: *fp32, xnumel: i32";
  const auto add = b.triton_kernel("triton_poi_add_0", "...", signature);
  const auto relu = b.triton_kernel("triton_poi_relu_1", "...", signature);
  const auto tmp = b.empty({s0, c1024}, wrapir::f32);
  b.call(add, {x, bias, tmp, numel});
  const auto out = b.empty({s0, c1024}, wrapir::f32);
  b.call(relu, {tmp, bias, out, numel}, {.free_after = {tmp}});
  b.output(out);

  MemoryReport report{p};
  wrapir::emit(p, report);
  std::printf("%s: %zu lines, %d launches, %lld bytes allocated, peak %lld bytes live (at s0 = 4096)\n",
              p.name.c_str(), p.body.size(), report.launches, static_cast<long long>(report.allocated),
              static_cast<long long>(report.peak));
  // Two [4096, 1024] float buffers, both live after the second allocation.
  return report.launches == 2 && report.peak == 2 * 4096 * 1024 * 4 ? 0 : 1;
}
