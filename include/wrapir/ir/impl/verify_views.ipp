#pragma once
// The verifier's view bounds: views, argument views, pool slices and copies
// stay inside their storage (ir/view_extent.hpp). Definitions of
// ir/detail/verifier.hpp: included by ir/impl/verify.ipp (header-only mode) or
// <wrapir/src.hpp> (separately compiled mode).

#include <wrapir/detail/config.hpp>
#include <wrapir/ir/detail/verifier.hpp>
#include <wrapir/expr/bounds.hpp>

#include <algorithm>
#include <span>
#include <string>

namespace wrapir::ir::detail::verifier {

WRAPIR_DECL bool ProgramVerifier::check_view(const View& v, const Where& w) {
  bool ok = true;
  if (v.sizes.size() != v.strides.size()) {
    report("", render(w) + " is a view with " + std::to_string(v.sizes.size()) + " sizes but " +
                   std::to_string(v.strides.size()) + " strides");
    ok = false;
  }
  for (const expr::Expr e : v.sizes) ok = check_expr(e, w) && ok;
  for (const expr::Expr e : v.strides) ok = check_expr(e, w) && ok;
  return check_expr(v.offset, w) && ok;
}

WRAPIR_DECL expr::Expr ProgramVerifier::room_of(std::uint32_t b) const {
  const BufferTrack& t = buffers_[b];
  if (t.view) return t.room;
  if (!t.layout_ok || p_.buffers[b].multi_output) return expr::Expr{};
  try {
    return room_bytes(p_.buffers[b].layout);
  } catch (const expr::Error&) {
    return expr::Expr{};
  }
}

WRAPIR_DECL void ProgramVerifier::check_extent(const ViewExtent& e, const std::string& subject, const std::string& what) {
  if (e.fit == ViewFit::exceeds) report(subject, what + " reaches past the storage it views: " + e.problem);
  if (e.fit == ViewFit::unknown && runtime_checks_)
    runtime_checks_->push_back(RuntimeCheck{path_, at_, kind_, subject.empty() ? what : subject + ": " + what, e});
}

WRAPIR_DECL void ProgramVerifier::check_arg_view_extent(const BufferArg& a, const Where& w) {
  const expr::Expr room = room_of(a.buffer.index);
  if (!room) return;
  check_extent(check_view_extent(a.view->sizes, a.view->strides, a.view->offset,
                                 p_.buffers[a.buffer.index].layout.dtype, room),
               "", render(w) + ", a view of " + buffer_name(a.buffer.index) + ",");
}

WRAPIR_DECL bool ProgramVerifier::use_buffer_arg(const BufferArg& a, const Where& w) {
  const bool ok = use_buffer(a.buffer);
  if (a.view && check_view(*a.view, w) && ok) check_arg_view_extent(a, w);
  return ok;
}

WRAPIR_DECL void ProgramVerifier::alias(const effect::Aliased& e) {
  if (e.view == e.base && has(e.view)) {
    report(buffer_subject(e.view), "is a view of itself");
    return;
  }
  const bool base_ok = use_buffer(e.base);
  if (!define_buffer(e.view, Definition{Definition::By::view})) return;
  BufferTrack& t = buffers_[e.view.index];
  t.view = true;
  if (!base_ok) return;
  t.base = e.base.index;
  const BufferTrack& base_track = buffers_[e.base.index];
  t.view_depth = base_track.view ? static_cast<std::uint16_t>(std::min(base_track.view_depth, max_view_depth) + 1) : 1;
  const Layout& v = p_.buffers[e.view.index].layout;
  const Layout& b = p_.buffers[e.base.index].layout;
  if (v.dtype != b.dtype)
    report(buffer_subject(e.view), "has dtype " + std::string(name(v.dtype)) + " but its base " +
                                       buffer_name(e.base.index) + " has dtype " + std::string(name(b.dtype)));
  if (v.device != b.device)
    report(buffer_subject(e.view), "is on " + to_string(v.device) + " but its base " + buffer_name(e.base.index) +
                                       " is on " + to_string(b.device));
  if (t.view_depth > max_view_depth) {
    report(buffer_subject(e.view), "is a view of a view more than " + std::to_string(max_view_depth) +
                                       " levels deep; its bounds are not checked");
    return;
  }
  if (!buffers_[e.view.index].layout_ok || p_.buffers[e.view.index].multi_output) return;
  const expr::Expr room = room_of(e.base.index);
  if (!room) return;
  const ViewExtent extent = check_view_extent(v, room);
  check_extent(extent, buffer_subject(e.view), "the view of " + buffer_name(e.base.index));
  if (extent.fit == ViewFit::exceeds) return;
  try {
    t.room = view_room_bytes(v, room);
  } catch (const expr::Error&) {
  }
}

WRAPIR_DECL void ProgramVerifier::check_fields(const AllocFromPool& l) {
  if (check_expr(l.offset_bytes, Where{"the byte offset"}) && expr::bounds(l.offset_bytes).known_negative())
    report("", "the byte offset " + printed(l.offset_bytes) + " is negative");
}

WRAPIR_DECL void ProgramVerifier::check_results(const AllocFromPool& l) {
  if (!definable(l.buffer) || !has(l.pool)) return;
  const Device& buffer_device = p_.buffers[l.buffer.index].layout.device;
  const Device& pool_device = p_.pools[l.pool.index].device;
  if (buffer_device != pool_device)
    report(buffer_subject(l.buffer), "is on " + to_string(buffer_device) + " but pool " +
                                         pool_name(l.pool.index) + " is on " + to_string(pool_device));
  const expr::Expr pool_bytes = p_.pools[l.pool.index].size_bytes;
  // A malformed or negative offset was reported with the fields.
  const bool offset_ok = l.offset_bytes && (!ctx_ || &l.offset_bytes.context() == ctx_);
  if (!buffers_[l.buffer.index].layout_ok || !offset_ok || expr::bounds(l.offset_bytes).known_negative() ||
      !pool_bytes || &pool_bytes.context() != ctx_)
    return;
  // Remembered verdicts: a planned program carves every buffer from an
  // arena, mostly asking the same few questions (ir/pool_slice_verdicts.hpp).
  const ViewExtent& slice = pool_slices_.check(p_.buffers[l.buffer.index].layout, l.offset_bytes, pool_bytes);
  if (slice.fit != ViewFit::fits)
    check_extent(slice, buffer_subject(l.buffer), "the slice of pool " + pool_name(l.pool.index));
}

WRAPIR_DECL std::span<const expr::Expr> ProgramVerifier::sizes_of(const BufferArg& a) const {
  if (a.view) return a.view->sizes;
  if (const Layout* l = layout_of(a.buffer)) return l->sizes;
  return {};
}

WRAPIR_DECL void ProgramVerifier::check_fields(const DeviceCopy& l) {
  const bool dst_ok = use_buffer_arg(l.destination, Where{"the destination"});
  const bool src_ok = use_buffer_arg(l.source, Where{"the source"});
  if (!dst_ok || !src_ok || !rank_known(l.destination) || !rank_known(l.source)) return;
  const auto dst = sizes_of(l.destination);
  const auto src = sizes_of(l.source);
  if (dst.size() != src.size()) {
    report("", "copies " + std::to_string(src.size()) + " dimensions into " + std::to_string(dst.size()));
    return;
  }
  for (std::size_t i = 0; i < dst.size(); ++i)
    if (dst[i] && src[i] && dst[i].is_integer() && src[i].is_integer() && dst[i] != src[i])
      report("", "size " + std::to_string(i) + " of the source is " + std::to_string(src[i].value()) +
                     " but the destination's is " + std::to_string(dst[i].value()));
}

}  // namespace wrapir::ir::detail::verifier
