#pragma once
/// \file
/// The end of a generated Python module (emit/python.hpp): `get_args()`
/// (random inputs at the symbols' size hints), `benchmark_compiled_module()`
/// and the `__main__` block that runs it.

#include <wrapir/emit/detail/python_literals.hpp>
#include <wrapir/emit/detail/python_module.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/hints.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>

#include <boost/variant2/variant.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace wrapir::python::detail {

/// `get_args()`, `benchmark_compiled_module()` and the `__main__` block.
inline void write_harness(std::string& out, const ir::Program& p, const ModuleState& m) {
  const expr::Bindings hints = ir::hint_bindings(p, 42);
  auto value = [&](expr::Expr e, std::string_view what, std::string_view name) {
    auto v = expr::eval(e, hints);
    if (!v)
      wrapir::detail::fail(Diagnostic{"program " + ir::quote_for_diagnostic(p.name) + ": get_args(): " +
                                   std::string(what) + " of " + ir::quote_for_diagnostic(name) +
                                   " has no value at the symbols' hints: " + v.error().message});
    append_integer(out, *v);
  };
  auto random_tensor = [&](const ir::BufferDecl& b) {
    out += "rand_strided(";
    append_shape_tuple(out, b.layout.sizes.size(), [&](std::size_t i) { value(b.layout.sizes[i], "a size", b.name); });
    out += ", ";
    append_shape_tuple(out, b.layout.strides.size(),
                       [&](std::size_t i) { value(b.layout.strides[i], "a stride", b.name); });
    out += ", device=";
    (void)append_string_literal(out, ir::to_string(b.layout.device));  // ASCII
    out += ", dtype=";
    out += ir::torch_name(b.layout.dtype);
    out += ")\n";
  };
  out += "\n\ndef get_args():\n    from torch._dynamo.testing import rand_strided\n";
  for (const ir::BufferDecl* constant : m.constants) {
    const ir::BufferDecl& b = *constant;
    out += "    global ";
    out += b.name;
    out += "\n    ";
    out += b.name;
    out += " = ";
    random_tensor(b);
  }
  std::string names;
  for (const ir::ProgramInput& in : p.inputs) {
    if (!names.empty()) names += ", ";
    out += "    ";
    if (const auto* id = boost::variant2::get_if<ir::BufferId>(&in)) {
      const ir::BufferDecl& b = p.buffers[id->index];
      names += b.name;
      out += b.name;
      out += " = ";
      random_tensor(b);
    } else {
      const expr::Expr s = boost::variant2::get<expr::Expr>(in);
      names += s.name();
      out += s.name();
      out += " = ";
      value(s, "the value", s.name());
      out += '\n';
    }
  }
  out += "    return [";
  out += names;
  out +=
      "]\n"
      "\n\n"
      "def benchmark_compiled_module(args, times=10, repeat=10):\n"
      "    from torch._inductor.utils import print_performance\n"
      "    fn = lambda: call(list(args))\n"
      "    return print_performance(fn, times=times, repeat=repeat)\n"
      "\n\n"
      "if __name__ == \"__main__\":\n"
      "    from torch._inductor.wrapper_benchmark import compiled_module_main\n"
      "    args = get_args()\n"
      "    compiled_module_main(";
  (void)append_string_literal(out, p.name);  // a checked name
  out += ", lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))\n";
}

}  // namespace wrapir::python::detail
