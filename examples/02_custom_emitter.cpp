// Step 2 of the reference pipeline: an emitter of your own (a code generator, a cost model, a report) is an
// overload set run by wrapir::emit; a line kind left out is a compile error naming it, unless a catch-all opts
// in, as here. Subgraphs::visit enters Conditional and WhileLoop subgraphs; text::to_string prints lines' parts.
#include <wrapir/emit/emit.hpp>
#include <wrapir/emit/text.hpp>
#include <wrapir/ir/builder.hpp>

#include <cstdio>
#include <vector>

using namespace wrapir;

struct LaunchReport {  // every launch with its grid and arguments, and the bytes allocated
  std::vector<const Program*> scope;  // the program or subgraph being visited: ids index its tables
  expr::Expr bytes;  // symbolic: a sum over s0
  void begin_subgraph(const Program& g) { scope.push_back(&g); }  // around each Conditional branch
  void end_subgraph(const Program&) { scope.pop_back(); }
  void operator()(const ir::Allocate& a) { bytes = bytes + ir::storage_bytes(scope.back()->buffer(a.buffer).layout); }
  void operator()(const ir::KernelCall& c) {
    const Program& p = *scope.back();
    std::printf("%s: %s grid=%s args=%s\n", p.name.c_str(), p.kernel(c.kernel).name.c_str(),
                text::to_string(c.grid, p).c_str(), text::to_string(c.args, p).c_str());
  }
  void operator()(const auto&) {}  // every other kind: nothing to report
};

int main() {  // out = relu(x) if flag else -x, for a dynamic [s0] float tensor x
  Program p{"relu_or_neg"};
  Builder b{p, cuda_device(0)};
  const auto s0 = b.size_symbol("s0"), one = p.ctx().integer(1);
  const auto x = b.input("arg0_1", {s0}, f32), flag = b.input("arg1_1", {one}, b8);
  auto branch = [&](const char* kernel) {
    return [=](Builder& g, auto in) {
      const auto k = g.triton_kernel(kernel, "...", "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
      const auto out = g.empty({s0}, f32);  // Allocate in the subgraph
      g.call(k, {boost::variant2::get<ir::BufferId>(in[0]), out, s0}, {.grid = ir::ExplicitGrid{s0, one, one}});
      g.output(out);
    };
  };
  b.output(b.conditional(flag, {x}, branch("triton_poi_relu_0"), branch("triton_poi_neg_1"))[0]);
  LaunchReport report{{&p}, p.ctx().integer(0)};  // bytes start at 0
  wrapir::emit(p, report, Subgraphs::visit);
  std::printf("%s bytes allocated, both branches summed\n", expr::print_python(report.bytes).c_str());
  return report.bytes == 8 * s0 ? 0 : 1;  // two float buffers of s0 elements, one in each branch
}
