#pragma once
/// \file
/// What the Python function checks before it computes (emit/python.hpp):
/// its prologue (inputs unpacked, symbols bound from input shapes, input
/// size asserts, eager or deferred to each input's first use, the device
/// guard), AssertSizeStride lines, and the bounds of every view, a
/// diagnostic when provably out of bounds and a runtime guard when it
/// depends on the symbols.

#include <wrapir/emit/detail/python_function.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/view_extent.hpp>

#include <boost/variant2/variant.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::python::detail {

inline void FunctionEmitter::render(const ir::AssertSizeStride& l) {
  const ir::BufferDecl& b = buffer(l.buffer);
  if (l.sizes.size() != l.strides.size())
    fail("the assert of " + ir::quote_for_diagnostic(b.name) + " has " + std::to_string(l.sizes.size()) +
         " sizes but " + std::to_string(l.strides.size()) + " strides");
  statement();
  out_ += "assert_size_stride(";
  out_ += b.name;
  out_ += ", ";
  append_shape(l.sizes, "a size");
  out_ += ", ";
  append_shape(l.strides, "a stride");
  if (l.op_name) {
    out_ += ", ";
    append_literal(*l.op_name, "the op name");
  }
  out_ += ")\n";
  if (l.buffer.index < asserted_.size() && !asserted_[l.buffer.index]) {
    asserted_[l.buffer.index] = 1;
    --pending_asserts_;
  }
}

inline void FunctionEmitter::render(const ir::AssertAlignment& l) {
  const ir::BufferDecl& b = buffer(l.buffer);
  if (l.alignment < 1 || (l.alignment & (l.alignment - 1)) != 0)
    fail("the alignment of " + ir::quote_for_diagnostic(b.name) + " is " + std::to_string(l.alignment) +
         ", not a positive power of two");
  statement();
  out_ += "assert_alignment(";
  out_ += b.name;
  out_ += ", ";
  append_integer(out_, l.alignment);
  if (l.op_name) {
    out_ += ", ";
    append_literal(*l.op_name, "the op name");
  }
  out_ += ")\n";
}

inline void FunctionEmitter::render(const ir::AssertScalar& l) {
  // As Inductor writes ir.AssertScalar: the condition unsimplified, the
  // message as the error's text.
  statement();
  out_ += "if not (";
  append_expr(l.condition, "the condition");
  out_ += "):\n";
  ++indent_;
  statement();
  --indent_;
  out_ += "raise RuntimeError(";
  append_literal(l.message, "the message");
  out_ += ")\n";
}

inline void FunctionEmitter::write_prologue() {
  // Inputs.
  std::vector<std::string_view> input_names;
  for (const ir::ProgramInput& in : program_.inputs) {
    if (const auto* b = boost::variant2::get_if<ir::BufferId>(&in)) {
      input_names.push_back(buffer(*b).name);
    } else {
      const expr::Expr s = boost::variant2::get<expr::Expr>(in);
      if (!s || !s.is_symbol()) fail_program("an input is a symbolic integer that is not a symbol");
      input_names.push_back(s.name());
    }
  }
  if (!input_names.empty()) {
    statement();
    for (std::size_t i = 0; i < input_names.size(); ++i) {
      if (i) out_ += ", ";
      out_ += input_names[i];
    }
    out_ += input_names.size() == 1 ? ", = args\n" : " = args\n";
    statement();
    out_ += "args.clear()\n";
  }
  // Symbols read from input shapes.
  std::vector<std::string> sized, strided;
  for (const ir::SymbolDecl& s : program_.symbols) {
    if (s.origin != ir::SymbolOrigin::input_shape) continue;
    if (!s.source) fail_program("symbol " + ir::quote_for_diagnostic(s.symbol.name()) + " has no source input");
    const std::string_view src = buffer(*s.source).name;
    if (s.path.size() == 1 && (s.path[0].kind == ir::KeyStepKind::size || s.path[0].kind == ir::KeyStepKind::stride)) {
      const bool size = s.path[0].kind == ir::KeyStepKind::size;
      std::vector<std::string>& done = size ? sized : strided;
      std::string tuple = std::string(src) + (size ? "_size" : "_stride");
      if (std::find(done.begin(), done.end(), tuple) == done.end()) {
        tuple = helper_name(std::move(tuple));
        statement();
        out_ += tuple;
        out_ += " = ";
        out_ += src;
        out_ += size ? ".size()\n" : ".stride()\n";
        done.push_back(tuple);
      }
      statement();
      out_ += s.symbol.name();
      out_ += " = ";
      out_ += tuple;
      out_ += '[';
      append_integer(out_, s.path[0].value);
      out_ += "]\n";
    } else {
      statement();
      out_ += s.symbol.name();
      out_ += " = ";
      append_key_path(src, s.path);
      out_ += '\n';
    }
  }
  // Input asserts.
  for (const ir::ProgramInput& in : program_.inputs) {
    const auto* id = boost::variant2::get_if<ir::BufferId>(&in);
    if (!id || options_.size_asserts == SizeAsserts::none) continue;
    const ir::BufferDecl& b = buffer(*id);
    if (b.multi_output) continue;
    // Comparing the strides of an empty tensor is meaningless (Inductor
    // skips those too).
    bool empty = false;
    for (expr::Expr s : b.layout.sizes) empty = empty || s.is_integer(0);
    if (empty) continue;
    if (options_.size_asserts == SizeAsserts::eager) {
      write_input_assert(b);
    } else if (asserted_[id->index]) {
      asserted_[id->index] = 0;
      ++pending_asserts_;
    }
  }
  // One device for the whole body: guard it as Inductor does.
  if (options_.device_guard) {
    std::optional<int> device;
    bool several = false, has_context_lines = false;
    auto note = [&](const ir::Device& d) {
      if (d.type != ir::DeviceType::cuda || !d.index) return;
      if (device && *device != *d.index) several = true;
      device = d.index;
    };
    for (const ir::BufferDecl& b : program_.buffers)
      if (!b.multi_output) note(b.layout.device);
    for (const ir::Line& line : program_.body) {
      if (const auto* c = std::get_if<ir::KernelCall>(&line)) note(c->device);
      has_context_lines = has_context_lines || std::holds_alternative<ir::EnterDeviceContext>(line);
    }
    if (device && !several && !has_context_lines) {
      write_device_guard(ir::Device{ir::DeviceType::cuda, device});
      open_block(Block::auto_device, "the device guard", true, device);
      blocks_.back().has_statement = true;
      auto_guard_ = true;
    }
  }
}

inline void FunctionEmitter::write_input_assert(const ir::BufferDecl& b) {
  statement();
  out_ += "assert_size_stride(";
  out_ += b.name;
  out_ += ", ";
  append_shape(b.layout.sizes, "a size");
  out_ += ", ";
  append_shape(b.layout.strides, "a stride");
  out_ += ")\n";
}

inline void FunctionEmitter::assert_input_before_use(ir::BufferId b) {
  // Only deferred asserts leave entries unset (write_prologue).
  if (b.index >= asserted_.size() || asserted_[b.index]) return;
  asserted_[b.index] = 1;
  --pending_asserts_;
  write_input_assert(program_.buffers[b.index]);
}

/// The bytes from the first element of `b` to the end of its storage
/// (ir/view_extent.hpp): what a Reinterpret left it, or its own span.
inline expr::Expr FunctionEmitter::room_of(ir::BufferId b) const {
  const ir::BufferDecl& d = buffer(b);
  if (view_room_[b.index]) return view_room_[b.index];
  if (d.multi_output) fail("buffer " + ir::quote_for_diagnostic(d.name) + " holds a multi-output result, which has no layout to view");
  return ir::room_bytes(d.layout);
}

/// Neither reinterpret_tensor nor alloc_from_pool checks bounds: a view
/// that provably reaches past its storage is a diagnostic, and one whose
/// bounds depend on the symbols gets a guard that raises before the view
/// is taken, naming the view and both sizes.
inline void FunctionEmitter::guard_extent(const ir::ViewExtent& e, const std::string& what) {
  if (e.fit == ir::ViewFit::exceeds) fail(what + " reaches past the storage it views: " + e.problem);
  if (e.fit != ir::ViewFit::unknown) return;
  statement();
  out_ += "if not (";
  for (std::size_t i = 0; i < e.open_conditions.size(); ++i) {
    if (i) out_ += " and ";
    append_factor(e.open_conditions[i].lhs, "a bound");
    out_ += " <= ";
    append_factor(e.open_conditions[i].rhs, "a bound");
  }
  out_ += "): raise RuntimeError(";
  append_literal(what + " reaches past the storage it views: it needs %d bytes, the storage has %d", "a message");
  out_ += " % (";
  append_expr(e.needed_bytes, "a bound");
  out_ += ", ";
  append_expr(e.available_bytes, "a bound");
  out_ += "))\n";
}

inline void FunctionEmitter::guard_view(ir::BufferId b, const ir::View& v) {
  const ir::BufferDecl& d = buffer(b);
  if (v.sizes.size() != v.strides.size())
    fail("a view of " + ir::quote_for_diagnostic(d.name) + " has " + std::to_string(v.sizes.size()) + " sizes but " +
         std::to_string(v.strides.size()) + " strides");
  for (const expr::Expr e : v.sizes) if (!e) fail("a view size is a null expression");
  for (const expr::Expr e : v.strides) if (!e) fail("a view stride is a null expression");
  if (!v.offset) fail("a view offset is a null expression");
  guard_extent(ir::check_view_extent(v.sizes, v.strides, v.offset, d.layout.dtype, room_of(b)),
               "a view of " + d.name);
}

}  // namespace wrapir::python::detail
