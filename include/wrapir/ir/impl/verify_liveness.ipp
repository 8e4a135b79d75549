#pragma once
// The verifier's model of lives: symbols defined before use, buffers defined,
// used and ended as the effects table says (roles keyed off its events), reuse
// keys, pools. Definitions of ir/detail/verifier.hpp: included by
// ir/impl/verify.ipp (header-only mode) or <wrapir/src.hpp> (separately
// compiled mode).

#include <wrapir/detail/config.hpp>
#include <wrapir/ir/detail/verifier.hpp>
#include <wrapir/expr/bounds.hpp>
#include <wrapir/expr/ops.hpp>

#include <optional>
#include <string>

namespace wrapir::ir::detail::verifier {

WRAPIR_DECL bool ProgramVerifier::check_expr(expr::Expr e, const Where& w) {
  if (!e) {
    report("", render(w) + " is a null expression");
    return false;
  }
  if (ctx_ && &e.context() != ctx_) {
    report("", render(w) + " belongs to another expression context than the program's");
    return false;
  }
  switch (e.kind()) {
    case expr::Kind::integer: return true;
    case expr::Kind::symbol: check_symbol_defined(e, w); return true;
    default:
      for (const expr::Expr s : cache_.of(e)) check_symbol_defined(s, w);
      return true;
  }
}

WRAPIR_DECL void ProgramVerifier::check_symbol_defined(expr::Expr s, const Where& w) {
  const auto it = symbol_index_.find(s.node());
  if (it == symbol_index_.end()) {
    std::size_t& reported = undeclared_reported_[s.node()];
    if (reported == site_ + 1) return;
    reported = site_ + 1;
    report(symbol_subject(s), "used in " + render(w) + " but not declared in this program's symbol table");
    return;
  }
  SymbolTrack& t = symbols_[it->second];
  if (t.defined || t.reported_site == site_) return;
  t.reported_site = site_;
  const SymbolOrigin origin = p_.symbols[it->second].origin;
  if (origin == SymbolOrigin::unbacked)
    report(symbol_subject(s),
           "used in " + render(w) + " before any DynamicScalar or UnbackedSymbolDefs line defines it");
  else if (origin == SymbolOrigin::computed)
    report(symbol_subject(s), "used in " + render(w) + " before any SymbolicCallArg line defines it");
  else
    report(symbol_subject(s), "used in " + render(w) + ", but its origin " + enum_value(origin) +
                                  " is not a SymbolOrigin, so nothing defines it");
}

WRAPIR_DECL void ProgramVerifier::define_symbol(expr::Expr s, SymbolOrigin expected, const Where& w) {
  if (!s) {
    report("", render(w) + " is a null expression");
    return;
  }
  if (ctx_ && &s.context() != ctx_) {
    report("", render(w) + " belongs to another expression context than the program's");
    return;
  }
  if (!s.is_symbol()) {
    report("", render(w) + " is " + printed(s) + ", not a symbol");
    return;
  }
  const auto it = symbol_index_.find(s.node());
  if (it == symbol_index_.end()) {
    report(symbol_subject(s), "defined by this line but not declared in this program's symbol table");
    return;
  }
  SymbolTrack& t = symbols_[it->second];
  const SymbolOrigin origin = p_.symbols[it->second].origin;
  if (origin != expected)
    report(symbol_subject(s), "defined by this line, but its origin is " +
                                  std::string(symbol_origin_name(origin)) + ", not " +
                                  std::string(symbol_origin_name(expected)));
  else if (t.defined)
    report(symbol_subject(s), "defined twice: it was already defined at " + line_text(t.defined_at));
  if (!t.defined) {
    t.defined = true;
    t.defined_at = at_;
  }
}

WRAPIR_DECL std::optional<Death> ProgramVerifier::death(std::uint32_t b) const {
  std::uint32_t cur = b;
  // A chain of views is acyclic when built by this pass; the bound keeps
  // a hostile one finite all the same.
  for (std::size_t steps = 0; steps <= buffers_.size(); ++steps) {
    const BufferTrack& t = buffers_[cur];
    if (t.life != Life::live) return Death{t.life, t.ended_at, cur, t.taken_by, false};
    if (t.pool != no_id && pools_[t.pool].life == PoolLife::released)
      return Death{Life::freed, pools_[t.pool].released_at, cur, t.pool, true};
    if (!t.view || t.base == no_id) return std::nullopt;
    cur = t.base;
  }
  return std::nullopt;
}

WRAPIR_DECL std::string ProgramVerifier::event(const Death& d, std::uint32_t b) const {
  const bool self = d.buffer == b;
  const std::string at = " at line " + std::to_string(d.line);
  if (d.pool_released)
    return (self ? "its pool " + pool_name(d.other) : "the pool " + pool_name(d.other) + " of its base " +
                                                          buffer_name(d.buffer)) +
           " was released" + at;
  switch (d.life) {
    case Life::undefined:
      return self ? "no line defined it" : "its base " + buffer_name(d.buffer) + " is not defined";
    case Life::taken:
      return (self ? "its storage" : "the storage of its base " + buffer_name(d.buffer)) + " was reused by " +
             buffer_name(d.other) + at;
    default: return (self ? std::string("it") : "its base " + buffer_name(d.buffer)) + " was freed" + at;
  }
}

WRAPIR_DECL bool ProgramVerifier::use_buffer(BufferId b, bool allow_multi_output) {
  if (report_missing(b)) return false;
  if (p_.buffers[b.index].multi_output && !allow_multi_output)
    report(buffer_subject(b), "used as a tensor, but it holds a multi-output result, which only MultiOutput and "
                              "UnbackedSymbolDefs read");
  if (const auto d = death(b.index)) {
    if (d->life == Life::undefined && d->buffer == b.index)
      report(buffer_subject(b), "used before any line defines it");
    else
      report(buffer_subject(b), "used after " + event(*d, b.index));
    return false;
  }
  return true;
}

WRAPIR_DECL void ProgramVerifier::check_layout_symbols(std::uint32_t b) {
  const Layout& l = p_.buffers[b].layout;
  const Where w{"the layout", no_line, b};
  for (const expr::Expr e : l.sizes) check_expr(e, w);
  for (const expr::Expr e : l.strides) check_expr(e, w);
  check_expr(l.storage_offset, w);
}

WRAPIR_DECL bool ProgramVerifier::define_buffer(BufferId b, Definition how) {
  if (report_missing(b)) return false;
  const BufferDecl& d = p_.buffers[b.index];
  BufferTrack& t = buffers_[b.index];
  const std::string role(buffer_role_name(d.role));
  switch (d.role) {
    case BufferRole::input: report(buffer_subject(b), "is a graph input, which no line defines"); return false;
    case BufferRole::constant: report(buffer_subject(b), "is a constant, which no line defines"); return false;
    case BufferRole::workspace:
      if (!how.creates(Storage::workspace))
        report(buffer_subject(b), "is a workspace, which only WorkspaceAllocate defines");
      break;
    case BufferRole::comm:
      if (!how.creates(Storage::comm) && !how.reuses_comm())
        report(buffer_subject(b), "is a comm buffer, which only CommBufferAllocate defines");
      break;
    default: break;
  }
  if (how.creates(Storage::comm) && d.role != BufferRole::comm)
    report(buffer_subject(b), "is not a comm buffer (its role is " + role + ")");
  if (how.creates(Storage::workspace) && d.role != BufferRole::workspace)
    report(buffer_subject(b), "is not a workspace (its role is " + role + ")");
  if (how.reuses_comm() && d.role != BufferRole::comm)
    report(buffer_subject(b), "takes the storage of a comm buffer but is not one (its role is " + role + ")");
  if (d.multi_output && !how.is_result())
    report(buffer_subject(b),
           "holds a multi-output result, which only ExternKernelAlloc, ExternKernelMultiOut or MultiOutput "
           "defines");
  if (t.life != Life::undefined)
    report(buffer_subject(b), "defined twice: it was already defined at " + line_text(t.defined_at));
  if (t.layout_ok && !d.multi_output) check_layout_symbols(b.index);
  t.life = Life::live;
  t.defined_at = at_;
  t.ended_at = no_line;
  t.taken_by = no_id;
  t.kept_bound = false;
  t.view = false;
  t.base = no_id;
  t.pool = no_id;
  t.view_depth = 0;
  t.room = expr::Expr{};
  return true;
}

WRAPIR_DECL void ProgramVerifier::end_buffer(BufferId b, Release how, bool offered) {
  if (report_missing(b)) return;
  const BufferDecl& d = p_.buffers[b.index];
  BufferTrack& t = buffers_[b.index];
  const std::string role(buffer_role_name(d.role));
  switch (d.role) {
    case BufferRole::input:
      if (how == Release::free_if_not_reused)
        report(buffer_subject(b), "frees graph input " + quote_for_diagnostic(d.name) +
                                      " with FreeIfNotReused; only Free frees a donated input");
      else if (!d.donated)
        report(buffer_subject(b), "frees graph input " + quote_for_diagnostic(d.name) + ", which was not donated");
      break;
    case BufferRole::constant:
      report(buffer_subject(b), "frees constant " + quote_for_diagnostic(d.name) + ", which the caller owns");
      break;
    case BufferRole::workspace:
      if (how != Release::workspace_free)
        report(buffer_subject(b), "is a workspace, which only WorkspaceFree frees");
      else if (t.life != Life::undefined && t.zero_mode == WorkspaceZeroMode::zero_per_graph)
        report(buffer_subject(b), "is a ZERO_PER_GRAPH workspace, which lives for the whole run and is never freed");
      break;
    case BufferRole::comm:
      // Comm storage is recycled only between comm buffers: a
      // FreeIfNotReused may offer it to a Reuse, never free it.
      if (how != Release::comm_free && !(how == Release::free_if_not_reused && offered))
        report(buffer_subject(b), "is a comm buffer, which only CommBufferFree frees");
      break;
    default: break;
  }
  if (how == Release::comm_free && d.role != BufferRole::comm)
    report(buffer_subject(b), "is not a comm buffer (its role is " + role + ")");
  if (how == Release::workspace_free && d.role != BufferRole::workspace)
    report(buffer_subject(b), "is not a workspace (its role is " + role + ")");
  if (t.view) {
    report(buffer_subject(b), "is a view, which owns no storage and is never freed");
    return;
  }
  if (t.pool != no_id && how != Release::pool_dealloc)
    report(buffer_subject(b), "was carved from pool " + pool_name(t.pool) + "; DeallocFromPool ends it");
  if (offered && d.multi_output) report(buffer_subject(b), "holds a multi-output result, which is never reused");
  switch (t.life) {
    case Life::undefined: report(buffer_subject(b), "freed before any line defines it"); return;
    case Life::freed:
    case Life::offered:
      report(buffer_subject(b), "freed twice: it was already freed at line " + std::to_string(t.ended_at));
      return;
    case Life::taken:
      report(buffer_subject(b), "freed after its storage was reused by " + buffer_name(t.taken_by) + " at line " +
                                    std::to_string(t.ended_at));
      return;
    case Life::live: break;
  }
  if (t.pool != no_id && pools_[t.pool].life == PoolLife::released)
    report(buffer_subject(b), "freed after its pool " + pool_name(t.pool) + " was released at line " +
                                  std::to_string(pools_[t.pool].released_at));
  t.life = offered ? Life::offered : Life::freed;
  t.ended_at = at_;
}

WRAPIR_DECL const Layout* ProgramVerifier::layout_of(BufferId b) const {
  return has(b) && buffers_[b.index].layout_ok ? &p_.buffers[b.index].layout : nullptr;
}

WRAPIR_DECL void ProgramVerifier::reuse(const effect::Reused& e) {
  const bool old_known = !report_missing(e.old_buffer);
  if (old_known && e.old_buffer == e.new_buffer) {
    report(buffer_subject(e.old_buffer), "reuses its own storage");
    return;
  }
  bool old_comm = false;
  if (old_known) {
    const BufferDecl& d = p_.buffers[e.old_buffer.index];
    BufferTrack& t = buffers_[e.old_buffer.index];
    const auto subject = [&] { return buffer_subject(e.old_buffer); };
    old_comm = d.role == BufferRole::comm;
    if (d.role == BufferRole::input && !d.donated)
      report(subject(), "its storage is reused, but it is a graph input that was not donated");
    else if (d.role == BufferRole::constant)
      report(subject(), "its storage is reused, but it is a constant, which the caller owns");
    else if (d.role == BufferRole::workspace)
      report(subject(), "its storage is reused, but it is a workspace, which is never reused");
    if (d.multi_output) report(subject(), "holds a multi-output result, which is never reused");
    if (t.view) report(subject(), "is a view, which owns no storage to reuse");
    switch (t.life) {
      case Life::undefined: report(subject(), "its storage is reused before any line defines it"); break;
      case Life::freed:
        report(subject(), "its storage is reused after it was freed at line " + std::to_string(t.ended_at));
        break;
      case Life::taken:
        report(subject(), "its storage is reused after " + buffer_name(t.taken_by) + " already took it at line " +
                            std::to_string(t.ended_at));
        break;
      case Life::live:
        if (const auto d2 = death(e.old_buffer.index))
          report(subject(), "its storage is reused after " + event(*d2, e.old_buffer.index));
        break;
      case Life::offered: break;
    }
  }
  if (!define_buffer(e.new_buffer, Definition{Definition::By::reuse, Storage::allocate, old_comm})) return;
  if (!old_known) return;
  check_reuse_key(e.old_buffer, e.new_buffer);
  BufferTrack& old_track = buffers_[e.old_buffer.index];
  if (!old_track.view && (old_track.life == Life::live || old_track.life == Life::offered)) {
    buffers_[e.new_buffer.index].pool = old_track.pool;
    old_track.life = Life::taken;
    old_track.ended_at = at_;
    old_track.taken_by = e.new_buffer.index;
    old_track.kept_bound = !e.delete_old;
  }
}

WRAPIR_DECL void ProgramVerifier::check_reuse_key(BufferId old_id, BufferId new_id) {
  const BufferDecl& o = p_.buffers[old_id.index];
  const BufferDecl& n = p_.buffers[new_id.index];
  const auto subject = [&] { return buffer_subject(new_id); };
  const std::string old_name = buffer_name(old_id.index);
  if (o.layout.device != n.layout.device)
    report(subject(), "reuses " + old_name + " of device " + to_string(o.layout.device) + " on device " +
                        to_string(n.layout.device));
  if (o.layout.dtype != n.layout.dtype)
    report(subject(), "reuses " + old_name + " of dtype " + std::string(name(o.layout.dtype)) + " as dtype " +
                        std::string(name(n.layout.dtype)));
  if (o.aligned != n.aligned)
    report(subject(), "reuses " + std::string(o.aligned ? "aligned " : "unaligned ") + old_name + " as " +
                        (n.aligned ? "an aligned" : "an unaligned") + " buffer");
  if (o.stream != n.stream)
    report(subject(), "reuses " + old_name + " of stream " + std::to_string(o.stream) + " on stream " +
                        std::to_string(n.stream));
  if (o.comm != n.comm)
    report(subject(), "reuses " + old_name + ", whose comm buffer type or group differs");
  if (!buffers_[old_id.index].layout_ok || !buffers_[new_id.index].layout_ok) return;
  // The same shape needs no arithmetic (and builds nothing in the context).
  if (o.layout.sizes == n.layout.sizes && o.layout.strides == n.layout.strides &&
      o.layout.storage_offset == n.layout.storage_offset)
    return;
  // Same key size (Inductor compares the printed storage sizes), or the
  // new storage provably fits in the old one.
  try {
    const expr::Expr old_size = storage_elements(o.layout);
    const expr::Expr new_size = storage_elements(n.layout);
    if (old_size == new_size) return;
    if (&old_size.context() == &new_size.context() &&
        expr::bounds(expr::sub(old_size, new_size)).known_nonnegative())
      return;
    const std::string old_text = printed(old_size);
    const std::string new_text = printed(new_size);
    if (old_text == new_text) return;
    report(subject(), "needs " + new_text + " storage elements, but the storage of " + old_name + " has " + old_text +
                        " and may be smaller");
  } catch (const expr::Error& e) {
    report(subject(), "the storage sizes of " + old_name + " and " + buffer_name(new_id.index) +
                        " cannot be compared: " + e.what());
  }
}

WRAPIR_DECL void ProgramVerifier::create_pool(PoolId q) {
  if (report_missing(q)) return;
  PoolTrack& t = pools_[q.index];
  if (t.life != PoolLife::not_created)
    report(pool_subject(q), "created twice: it was already created at line " + std::to_string(t.created_at));
  check_expr(p_.pools[q.index].size_bytes, Where{"the size of the pool"});
  if (t.life == PoolLife::not_created) {
    t.life = PoolLife::live;
    t.created_at = at_;
  }
}

WRAPIR_DECL bool ProgramVerifier::use_pool(PoolId q) {
  if (report_missing(q)) return false;
  const PoolTrack& t = pools_[q.index];
  if (t.life == PoolLife::not_created) {
    report(pool_subject(q), "used before its PoolCreate");
    return false;
  }
  if (t.life == PoolLife::released) {
    report(pool_subject(q), "used after it was released at line " + std::to_string(t.released_at));
    return false;
  }
  return true;
}

WRAPIR_DECL void ProgramVerifier::carve(const effect::Carved& e) {
  use_pool(e.pool);
  if (!define_buffer(e.buffer, Definition{Definition::By::pool_region}) || !has(e.pool)) return;
  buffers_[e.buffer.index].pool = e.pool.index;
}

WRAPIR_DECL void ProgramVerifier::return_to_pool(const effect::PoolReturned& e) {
  if (!has(e.pool)) return;  // reported with the line's fields
  PoolTrack& t = pools_[e.pool.index];
  if (e.releases_pool) {
    if (t.life == PoolLife::not_created)
      report(pool_subject(e.pool), "released before its PoolCreate");
    else if (t.life == PoolLife::released)
      report(pool_subject(e.pool), "released twice: it was already released at line " +
                                       std::to_string(t.released_at));
    else {
      t.life = PoolLife::released;
      t.released_at = at_;
    }
  }
}

WRAPIR_DECL void ProgramVerifier::select(const effect::Selected& e) {
  if (use_buffer(e.tuple, true) && !p_.buffers[e.tuple.index].multi_output)
    report(buffer_subject(e.tuple), "is not a multi-output result, which MultiOutput reads");
  define_buffer(e.element, Definition{Definition::By::element});
}

WRAPIR_DECL void ProgramVerifier::check_fields(const DeallocFromPool& l) {
  const bool pool_known = !report_missing(l.pool);
  if (has(l.buffer) && pool_known && !buffers_[l.buffer.index].view &&
      buffers_[l.buffer.index].life != Life::undefined && buffers_[l.buffer.index].pool != l.pool.index)
    report(buffer_subject(l.buffer), "was not carved from pool " + pool_name(l.pool.index));
}

WRAPIR_DECL void ProgramVerifier::check_fields(const WorkspaceAllocate& l) {
  if (static_cast<std::size_t>(l.zero_mode) >= workspace_zero_mode_count)
    report("", "zero mode " + enum_value(l.zero_mode) + " is not a WorkspaceZeroMode");
  check_name_field(l.inner_name.text, "workspace inner");
}

WRAPIR_DECL void ProgramVerifier::check_results(const WorkspaceAllocate& l) {
  if (definable(l.workspace)) buffers_[l.workspace.index].zero_mode = l.zero_mode;
}

WRAPIR_DECL std::optional<Death> ProgramVerifier::death_at_end(std::uint32_t b) const {
  const auto d = death(b);
  std::uint32_t cur = b;
  for (std::size_t steps = 0; d && steps <= buffers_.size(); ++steps) {
    const BufferTrack& t = buffers_[cur];
    if (t.life != Life::taken || !t.kept_bound || t.taken_by == no_id) return d;
    cur = t.taken_by;
    if (!death(cur)) return std::nullopt;
  }
  return d;
}

}  // namespace wrapir::ir::detail::verifier
