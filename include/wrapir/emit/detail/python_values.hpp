#pragma once
/// \file
/// Values as Python text (emit/python.hpp): string literals and kernel
/// sources (emit/detail/python_literals.hpp), expressions, shapes,
/// arguments and keyword arguments, ctypes arguments, key paths and
/// `empty_strided` allocations.

#include <wrapir/emit/detail/python_function.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/names.hpp>

#include <boost/variant2/variant.hpp>

#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace wrapir::python::detail {

inline void FunctionEmitter::append_literal_to(std::string& out, std::string_view s, std::string_view what) const {
  if (!append_string_literal(out, s))
    fail(std::string(what) + " " + ir::quote_for_diagnostic(s) + " is not valid UTF-8");
}

inline void FunctionEmitter::append_source_to(std::string& out, std::string_view source, std::string_view kernel_name) const {
  if (!append_source_literal(out, source))
    fail("the source of kernel " + ir::quote_for_diagnostic(kernel_name) +
         " is not valid UTF-8, so no Python string holds it");
}

inline void FunctionEmitter::append_expr(expr::Expr e, std::string_view what) {
  if (!e) fail(std::string(what) + " is a null expression");
  if (e.is_symbol()) out_ += e.name();
  else if (e.is_integer()) append_integer(out_, e.value());
  else expr::print_python(e, out_);
}

/// `e` as a factor of a product: parenthesised unless atomic.
inline void FunctionEmitter::append_factor(expr::Expr e, std::string_view what) {
  if (e && (e.is_symbol() || (e.is_integer() && e.value() >= 0))) {
    append_expr(e, what);
    return;
  }
  out_ += '(';
  append_expr(e, what);
  out_ += ')';
}

inline void FunctionEmitter::append_shape(std::span<const expr::Expr> dims, std::string_view what) {
  append_shape_tuple(out_, dims.size(), [&](std::size_t i) { append_expr(dims[i], what); });
}

inline void FunctionEmitter::append_reinterpret(std::string_view base, std::span<const expr::Expr> sizes,
                        std::span<const expr::Expr> strides, expr::Expr offset) {
  if (sizes.size() != strides.size())
    fail("a view of " + ir::quote_for_diagnostic(base) + " has " + std::to_string(sizes.size()) + " sizes but " +
         std::to_string(strides.size()) + " strides");
  out_ += "reinterpret_tensor(";
  out_ += base;
  out_ += ", ";
  append_shape(sizes, "a view size");
  out_ += ", ";
  append_shape(strides, "a view stride");
  out_ += ", ";
  append_expr(offset, "a view offset");
  out_ += ')';
}

inline void FunctionEmitter::append_buffer_arg(const ir::BufferArg& b) {
  const ir::BufferDecl& d = buffer(b.buffer);
  if (!b.view) {
    out_ += d.name;
    return;
  }
  append_reinterpret(d.name, b.view->sizes, b.view->strides, b.view->offset);
}

inline void FunctionEmitter::append_arg(const ir::Arg& a, int depth) {
  if (depth > 64) fail("an argument nests lists more than 64 deep");
  a.visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, ir::None>) out_ += "None";
        else if constexpr (std::is_same_v<V, ir::BufferArg>) append_buffer_arg(v);
        else if constexpr (std::is_same_v<V, expr::Expr>) append_expr(v, "an argument");
        else if constexpr (std::is_same_v<V, std::int64_t>) append_integer(out_, v);
        else if constexpr (std::is_same_v<V, double>) append_float(out_, v);
        else if constexpr (std::is_same_v<V, bool>) out_ += v ? "True" : "False";
        else if constexpr (std::is_same_v<V, std::string>) append_literal(v, "a string argument");
        else if constexpr (std::is_same_v<V, ir::Device>) {
          if (auto valid = ir::validate(v); !valid) fail(valid.error().message);
          out_ += ir::python_repr(v);
        } else if constexpr (std::is_same_v<V, ir::DType>) {
          if (!ir::is_valid(v)) fail("an argument is not a valid dtype");
          out_ += ir::torch_name(v);
        } else {
          out_ += '[';
          for (std::size_t i = 0; i < v.items.size(); ++i) {
            if (i) out_ += ", ";
            append_arg(v.items[i], depth + 1);
          }
          out_ += ']';
        }
      });
}

inline void FunctionEmitter::append_args(const std::vector<ir::Arg>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i) out_ += ", ";
    append_arg(args[i]);
  }
}

/// `, name=value` for each keyword argument; `reserved` is a keyword the
/// call adds itself (`out`).
inline void FunctionEmitter::append_kwargs(const std::vector<ir::NamedArg>& kwargs, bool after_positional, std::string_view reserved) {
  for (std::size_t i = 0; i < kwargs.size(); ++i) {
    const std::string& name = kwargs[i].name.text;
    if (auto err = ir::check_name(name, "keyword argument")) fail(*err);
    if (name == reserved) fail("the keyword argument " + ir::quote_for_diagnostic(name) + " is set by the call itself");
    for (std::size_t j = 0; j < i; ++j)
      if (kwargs[j].name.text == name) fail("the keyword argument " + ir::quote_for_diagnostic(name) + " is given twice");
    if (after_positional || i) out_ += ", ";
    out_ += name;
    out_ += '=';
    append_arg(kwargs[i].value);
  }
}

inline void FunctionEmitter::append_ctypes_arg(const ir::Arg& a, ir::ParamType type, std::string_view kernel_name) {
  if (type.pointer) {
    if (a.holds<ir::None>()) {
      out_ += "None";
      return;
    }
    out_ += "c_void_p(";
    append_arg(a);
    out_ += ".data_ptr())";
    return;
  }
  std::string_view ctype;
  switch (type.dtype) {
    case ir::DType::int32: ctype = "c_int"; break;
    case ir::DType::int64: ctype = "c_long"; break;
    case ir::DType::float32: ctype = "c_float"; break;
    case ir::DType::float64: ctype = "c_double"; break;
    case ir::DType::bool_: ctype = "c_bool"; break;
    default:
      fail("kernel " + ir::quote_for_diagnostic(kernel_name) + " takes a scalar of type " + ir::to_string(type) +
           ", which a CUDA launch from Python cannot pass");
  }
  if (is_ctypes_float(type)) module_.uses_ctypes_floats = true;
  out_ += ctype;
  out_ += '(';
  append_arg(a);
  out_ += ')';
}

inline void FunctionEmitter::reject_explicit_grid(const ir::LaunchGrid& g, std::string_view kernel_name) const {
  if (ir::grid_if<ir::ExplicitGrid>(g) != nullptr)
    fail("kernel " + ir::quote_for_diagnostic(kernel_name) +
         " is not a Triton kernel; the Python emitter passes explicit grids to Triton launchers only");
}

inline void FunctionEmitter::append_key_path(std::string_view base, const ir::KeyPath& path) {
  std::string text(base);
  for (const ir::KeyStep& step : path) {
    switch (step.kind) {
      case ir::KeyStepKind::index:
        text += '[';
        append_integer(text, step.value);
        text += ']';
        break;
      case ir::KeyStepKind::key:
        text += '[';
        append_literal_to(text, step.key, "a dict key");
        text += ']';
        break;
      case ir::KeyStepKind::size:
      case ir::KeyStepKind::stride:
        text += step.kind == ir::KeyStepKind::size ? ".size(" : ".stride(";
        append_integer(text, step.value);
        text += ')';
        break;
      case ir::KeyStepKind::storage_offset: text += ".storage_offset()"; break;
      case ir::KeyStepKind::convert_to_int: text = "(1 if " + text + " else 0)"; break;
      case ir::KeyStepKind::divide_by:
        if (step.value <= 0) fail("a divide_by step needs a positive divisor");
        text += ".__floordiv__(";
        append_integer(text, step.value);
        text += ')';
        break;
      default: fail("a key path has an invalid step kind");
    }
  }
  out_ += text;
}

/// `empty_strided_cuda(sizes, strides, dtype)` when the helper allocates
/// on the right device (the CPU, a device without index, or the device
/// the innermost guard selects); otherwise the generic
/// `empty_strided(sizes, strides, device='cuda:1', dtype=...)`.
inline void FunctionEmitter::append_allocation(const ir::Layout& l) {
  if (l.storage_offset && !l.storage_offset.is_integer(0)) {
    // empty_strided has no storage offset: allocate the storage flat and
    // view it.
    out_ += "reinterpret_tensor(";
    append_empty_strided_call(l.device, l.dtype, [&] {
      out_ += "(";
      append_storage_elements(l);
      out_ += ", ), (1, )";
    });
    out_ += ", ";
    append_shape(l.sizes, "a size");
    out_ += ", ";
    append_shape(l.strides, "a stride");
    out_ += ", ";
    append_expr(l.storage_offset, "the storage offset");
    out_ += ')';
    return;
  }
  append_empty_strided_call(l.device, l.dtype, [&] {
    append_shape(l.sizes, "a size");
    out_ += ", ";
    append_shape(l.strides, "a stride");
  });
}

/// `storage_offset + 1 + sum((size_i - 1)*stride_i)`, as text.
inline void FunctionEmitter::append_storage_elements(const ir::Layout& l) {
  append_expr(l.storage_offset, "the storage offset");
  out_ += " + 1";
  for (std::size_t i = 0; i < l.sizes.size(); ++i) {
    out_ += " + (";
    append_expr(l.sizes[i], "a size");
    out_ += " - 1)*";
    append_factor(l.strides[i], "a stride");
  }
}

inline void FunctionEmitter::append_empty_strided_1d(expr::Expr count, ir::DType dtype, const ir::Device& device, std::string_view what) {
  append_empty_strided_call(device, dtype, [&] {
    out_ += '(';
    append_expr(count, what);
    out_ += ", ), (1, )";
  });
}

template <class F>
inline void FunctionEmitter::append_empty_strided_call(const ir::Device& d, ir::DType dtype, F&& shape_and_strides) {
  if (!ir::is_valid(dtype)) fail("a layout has an invalid dtype");
  const bool specialised = d.type == ir::DeviceType::cpu ||
                           ((d.type == ir::DeviceType::cuda || d.type == ir::DeviceType::xpu) &&
                            (!d.index || current_device_index() == d.index));
  if (specialised) {
    out_ += "empty_strided_";
    out_ += ir::device_type_name(d.type);
    out_ += '(';
    shape_and_strides();
    out_ += ", ";
    out_ += ir::torch_name(dtype);
    out_ += ')';
    return;
  }
  out_ += "empty_strided(";
  shape_and_strides();
  out_ += ", device=";
  append_literal(ir::to_string(d), "a device");
  out_ += ", dtype=";
  out_ += ir::torch_name(dtype);
  out_ += ')';
}

}  // namespace wrapir::python::detail
