#pragma once
/// \file
/// The Python rendering of memory, view and comment lines
/// (emit/python.hpp): allocations, frees, reuse, pools, communication
/// buffers, workspaces, device copies and `reinterpret_tensor` views.

#include <wrapir/emit/detail/python_function.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/view_extent.hpp>
#include <wrapir/run/detail/stable_hash.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace wrapir::python::detail {

inline void FunctionEmitter::render(const ir::Allocate& l) {
  const ir::BufferDecl& b = buffer(l.buffer);
  statement();
  out_ += b.name;
  out_ += " = ";
  append_allocation(b.layout);
  out_ += '\n';
}

inline void FunctionEmitter::render(const ir::FreeIfNotReused& l) {
  const ir::BufferDecl& b = buffer(l.buffer);
  if (l.reused) return;
  statement();
  out_ += "del ";
  out_ += b.name;
  out_ += '\n';
}

inline void FunctionEmitter::render(const ir::Reuse& l) {
  const ir::BufferDecl& old_buffer = buffer(l.old_buffer);
  const ir::BufferDecl& new_buffer = buffer(l.new_buffer);
  const ir::Layout& o = old_buffer.layout;
  const ir::Layout& n = new_buffer.layout;
  if (o.dtype != n.dtype || o.device != n.device)
    fail("buffer " + ir::quote_for_diagnostic(new_buffer.name) + " reuses " +
         ir::quote_for_diagnostic(old_buffer.name) +
         " of another dtype or device; Python reuses storage only between buffers of one dtype and device");
  statement();
  out_ += new_buffer.name;
  out_ += " = ";
  if (o.sizes == n.sizes && o.strides == n.strides && o.storage_offset == n.storage_offset) {
    out_ += old_buffer.name;
  } else {
    append_reinterpret(old_buffer.name, n.sizes, n.strides, n.storage_offset);
  }
  // An output keeps its name bound (Inductor checks graph outputs too).
  const bool deletes_old = l.delete_old && old_buffer.role != ir::BufferRole::output && !is_output(l.old_buffer);
  if (deletes_old) {
    out_ += "; del ";
    out_ += old_buffer.name;
  } else {
    out_ += ';';
  }
  out_ += "  # reuse\n";
  // A name bound to a pool's storage keeps the pool alive: the pool's `del`
  // must release the new name too (and not the old one once deleted here).
  const bool new_is_output = new_buffer.role == ir::BufferRole::output || is_output(l.new_buffer);
  for (std::vector<std::uint32_t>& names : pool_names_) {
    const auto at = std::find(names.begin(), names.end(), l.old_buffer.index);
    if (at == names.end()) continue;
    if (deletes_old) names.erase(at);
    if (!new_is_output) names.push_back(l.new_buffer.index);
  }
}

inline void FunctionEmitter::render(const ir::Free& l) {
  const ir::BufferDecl& b = buffer(l.buffer);
  statement();
  out_ += "del ";
  out_ += b.name;
  out_ += '\n';
}

inline void FunctionEmitter::render(const ir::PoolCreate& l) {
  const ir::PoolDecl& p = pool(l.pool);
  statement();
  out_ += p.name;
  out_ += " = ";
  if (p.tensor) {
    // Typed as Inductor types a pool the size of one of its blocks.
    if (p.tensor->sizes.size() != p.tensor->strides.size())
      fail("pool " + ir::quote_for_diagnostic(p.name) + " has a tensor with " +
           std::to_string(p.tensor->sizes.size()) + " sizes but " + std::to_string(p.tensor->strides.size()) +
           " strides");
    append_allocation(ir::pool_layout(p, *p.tensor));
  } else {
    append_empty_strided_1d(p.size_bytes, ir::DType::uint8, p.device, "the pool's size");
  }
  out_ += '\n';
  pool_names_[l.pool.index].clear();
}

inline void FunctionEmitter::render(const ir::AllocFromPool& l) {
  const ir::BufferDecl& b = buffer(l.buffer);
  const ir::PoolDecl& p = pool(l.pool);
  const ir::Layout& layout = b.layout;
  if (!l.offset_bytes || !p.size_bytes) fail("the pool offset or the pool's size is a null expression");
  // A planned program carves every buffer from an arena: most slices ask
  // a question already answered, and the check's symbolic sums were most
  // of emitting such a program (ir/pool_slice_verdicts.hpp).
  const ir::ViewExtent& slice = pool_slices_.check(layout, l.offset_bytes, p.size_bytes);
  if (slice.fit != ir::ViewFit::fits) guard_extent(slice, "buffer " + std::string(b.name) + " carved from pool " + p.name);
  statement();
  out_ += b.name;
  out_ += " = alloc_from_pool(";
  out_ += p.name;
  out_ += ", ";
  append_expr(l.offset_bytes, "the pool offset");
  if (!layout.storage_offset || !layout.storage_offset.is_integer(0)) {
    // alloc_from_pool views the pool from the byte offset on; a storage
    // offset in elements moves the start further.
    out_ += " + ";
    append_factor(layout.storage_offset, "the storage offset");
    out_ += '*';
    append_integer(out_, ir::itemsize(layout.dtype));
  }
  out_ += ", ";
  out_ += ir::torch_name(layout.dtype);
  out_ += ", ";
  append_shape(layout.sizes, "a size");
  out_ += ", ";
  append_shape(layout.strides, "a stride");
  out_ += ")\n";
  pool_names_[l.pool.index].push_back(l.buffer.index);
}

inline void FunctionEmitter::render(const ir::DeallocFromPool& l) {
  buffer(l.buffer);
  const ir::PoolDecl& p = pool(l.pool);
  if (!l.releases_pool) return;
  statement();
  out_ += "del ";
  out_ += p.name;
  for (std::uint32_t name : pool_names_[l.pool.index]) {
    out_ += ", ";
    out_ += program_.buffers[name].name;
  }
  out_ += '\n';
  pool_names_[l.pool.index].clear();
}

inline void FunctionEmitter::render(const ir::CommBufferAllocate& l) {
  const ir::BufferDecl& b = buffer(l.buffer);
  if (!b.comm) fail("buffer " + ir::quote_for_diagnostic(b.name) + " has no communication group");
  module_.uses_p2p = true;
  statement();
  out_ += b.name;
  out_ += " = empty_strided_p2p(";
  append_shape(b.layout.sizes, "a size");
  out_ += ", ";
  append_shape(b.layout.strides, "a stride");
  out_ += ", ";
  out_ += ir::torch_name(b.layout.dtype);
  out_ += ", torch.device(";
  append_literal(ir::to_string(b.layout.device), "a device");
  out_ += "), group_name=";
  append_literal(b.comm->group, "a communication group name");
  out_ += ", alloc_id=";
  // Deterministic (unlike Inductor's random id) so that every rank and
  // every run of the emitter agree on it: wrapir's one stable hash, FNV-1a
  // of "PROGRAM.BUFFER".
  using wrapir::run::detail::fnv1a_64;
  append_integer(out_, fnv1a_64(b.name, fnv1a_64(".", fnv1a_64(program_.name))));
  out_ += ")\n";
}

inline void FunctionEmitter::render(const ir::CommBufferFree& l) {
  const ir::BufferDecl& b = buffer(l.buffer);
  statement();
  out_ += "del ";
  out_ += b.name;
  out_ += " # symm_mem buffer free\n";
}

inline void FunctionEmitter::render(const ir::WorkspaceAllocate& l) {
  const ir::BufferDecl& w = buffer(l.workspace);
  if (auto err = ir::check_name(l.inner_name.text, "workspace inner")) fail(*err);
  if (w.layout.sizes.size() != 1)
    fail("workspace " + ir::quote_for_diagnostic(w.name) + " has " + std::to_string(w.layout.sizes.size()) +
         " dimensions; a workspace is 1-D");
  statement();
  out_ += w.name;
  out_ += " = ";
  append_empty_strided_1d(w.layout.sizes[0], w.layout.dtype, w.layout.device, "the workspace's size");
  out_ += '\n';
  if (l.zero_mode != ir::WorkspaceZeroMode::uninitialized) {
    statement();
    out_ += w.name;
    out_ += ".zero_()\n";
  }
}

inline void FunctionEmitter::render(const ir::WorkspaceFree& l) {
  const ir::BufferDecl& w = buffer(l.workspace);
  statement();
  out_ += "del ";
  out_ += w.name;
  out_ += '\n';
}

inline void FunctionEmitter::render(const ir::DeviceCopy& l) {
  statement();
  append_buffer_arg(l.destination);
  out_ += ".copy_(";
  append_buffer_arg(l.source);
  out_ += l.non_blocking ? ", True)\n" : ", False)\n";
}

inline void FunctionEmitter::render(const ir::Reinterpret& l) {
  const ir::BufferDecl& v = buffer(l.view);
  const ir::BufferDecl& base = buffer(l.base);
  if (v.multi_output || base.multi_output)
    fail("a Reinterpret views a multi-output result, which has no layout");
  // reinterpret_tensor keeps the base's dtype: a view declared with another
  // one would be bounds-checked in the wrong element size.
  if (v.layout.dtype != base.layout.dtype)
    fail("view " + ir::quote_for_diagnostic(v.name) + " has dtype " + std::string(ir::name(v.layout.dtype)) +
         " but its base " + ir::quote_for_diagnostic(base.name) + " has dtype " +
         std::string(ir::name(base.layout.dtype)) + "; reinterpret_tensor cannot change a dtype");
  const expr::Expr room = room_of(l.base);
  const ir::ViewExtent extent = ir::check_view_extent(v.layout, room);
  guard_extent(extent, "view " + std::string(v.name) + " of " + base.name);
  view_room_[l.view.index] = ir::view_room_bytes(v.layout, room);
  statement();
  out_ += v.name;
  out_ += " = ";
  append_reinterpret(base.name, v.layout.sizes, v.layout.strides, v.layout.storage_offset);
  out_ += "  # alias\n";
}

inline void FunctionEmitter::render(const ir::Comment& l) {
  comment_line();
  out_ += "# ";
  append_comment_text(out_, l.text);
  out_ += '\n';
}

}  // namespace wrapir::python::detail
