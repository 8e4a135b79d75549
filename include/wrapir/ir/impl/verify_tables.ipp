#pragma once
// The verifier's names and tables: ids out of range, names, the buffer,
// symbol, kernel, pool, subgraph and input tables. Definitions of
// ir/detail/verifier.hpp: included by ir/impl/verify.ipp (header-only mode) or
// <wrapir/src.hpp> (separately compiled mode).

#include <wrapir/detail/config.hpp>
#include <wrapir/ir/detail/verifier.hpp>
#include <wrapir/emit/detail/python_keywords.hpp>
#include <boost/variant2/variant.hpp>

#include <string>
#include <vector>

namespace wrapir::ir::detail::verifier {

WRAPIR_DECL std::string ProgramVerifier::buffer_name(std::uint32_t b) const {
  return b < p_.buffers.size() ? shown(p_.buffers[b].name) : "#" + std::to_string(b);
}

WRAPIR_DECL std::string ProgramVerifier::kernel_name(std::uint32_t k) const {
  return k < p_.kernels.size() ? shown(p_.kernels[k].name) : "#" + std::to_string(k);
}

WRAPIR_DECL void ProgramVerifier::check_pool_tensor(const PoolDecl& q, const std::string& subject) {
  const PoolTensor& t = *q.tensor;
  if (!is_valid(t.dtype)) {
    report(subject, "its tensor has dtype " + enum_value(t.dtype) + ", which is not a DType");
    return;
  }
  if (t.sizes.size() != t.strides.size()) {
    report(subject, "its tensor has " + std::to_string(t.sizes.size()) + " sizes but " +
                        std::to_string(t.strides.size()) + " strides");
    return;
  }
  for (const auto* dims : {&t.sizes, &t.strides})
    for (const expr::Expr& e : *dims)
      if (!e || !q.size_bytes || &e.context() != &q.size_bytes.context()) {
        report(subject, "its tensor has a null expression or one of another context");
        return;
      }
  // AllocFromPool carves by bytes: the tensor must span the pool's bytes.
  try {
    const expr::Expr spanned = storage_bytes(pool_layout(q, t));
    const expr::Interval d = expr::bounds(expr::sub(spanned, q.size_bytes));
    if (d.known_positive() || d.known_negative())
      report(subject, "its tensor spans " + printed(spanned) + " bytes, not its size " + printed(q.size_bytes));
  } catch (const expr::Error& e) {
    report(subject, std::string("its tensor's span cannot be computed: ") + e.what());
  }
}

WRAPIR_DECL std::string ProgramVerifier::pool_name(std::uint32_t q) const {
  return q < p_.pools.size() ? shown(p_.pools[q].name) : "#" + std::to_string(q);
}

WRAPIR_DECL std::string ProgramVerifier::graph_subject(GraphId g) const {
  return "subgraph " + (has(g) ? shown(p_.subgraphs[g.index].name) : "#" + std::to_string(g.index));
}

WRAPIR_DECL std::string ProgramVerifier::render(const Where& w) const {
  std::string s = w.text;
  if (w.index != no_line) s += " " + std::to_string(w.index);
  if (w.buffer != no_id) s += " of " + buffer_name(w.buffer);
  return s;
}

WRAPIR_DECL std::string ProgramVerifier::line_text(std::size_t line) {
  return line == at_start ? std::string("the start") : "line " + std::to_string(line);
}

WRAPIR_DECL bool ProgramVerifier::report_missing(BufferId b) {
  if (has(b)) return false;
  report(buffer_subject(b), "not in this program's buffer table (" + std::to_string(p_.buffers.size()) + " entries)");
  return true;
}

WRAPIR_DECL bool ProgramVerifier::report_missing(KernelId k) {
  if (has(k)) return false;
  report(kernel_subject(k), "not in this program's kernel table (" + std::to_string(p_.kernels.size()) + " entries)");
  return true;
}

WRAPIR_DECL bool ProgramVerifier::report_missing(PoolId q) {
  if (has(q)) return false;
  report(pool_subject(q), "not in this program's pool table (" + std::to_string(p_.pools.size()) + " entries)");
  return true;
}

WRAPIR_DECL bool ProgramVerifier::report_missing(GraphId g) {
  if (has(g)) return false;
  report(graph_subject(g),
         "not in this program's subgraph table (" + std::to_string(p_.subgraphs.size()) + " entries)");
  return true;
}

WRAPIR_DECL void ProgramVerifier::check_name_field(std::string_view name, std::string_view what) {
  if (auto err = check_name(name, what)) report("", *std::move(err));
}

WRAPIR_DECL void ProgramVerifier::check_op_name(const OpName& op) {
  if (auto err = check_operator_path(op.text, options_.operators)) {
    report("", *std::move(err));
    return;
  }
  if (const std::string_view kw = python::detail::python_keyword_part(op.text); !kw.empty())
    report("", "operator " + quote_for_diagnostic(op.text) + " has the part '" + std::string(kw) +
                   "', a Python keyword, so the Python and FX targets cannot print it");
}

WRAPIR_DECL void ProgramVerifier::check_device(const Device& d, const char* what) {
  if (auto valid = validate(d); !valid) report("", std::string(what) + ": " + valid.error().message);
}

WRAPIR_DECL void ProgramVerifier::check_tables() {
  kind_ = "program";
  if (depth_ == 0) check_name_field(p_.name, "program");
  if (!ctx_) report("", "the program has no expression context");
  else if (root_ctx_ && ctx_ != root_ctx_)
    report("", "the subgraph's expression context is not the root program's");

  buffers_.resize(p_.buffers.size());
  symbols_.resize(p_.symbols.size());
  kernels_.resize(p_.kernels.size());
  pools_.resize(p_.pools.size());
  names_.reserve(p_.buffers.size() + p_.symbols.size() + p_.kernels.size() + p_.pools.size() + p_.subgraphs.size());

  kind_ = "buffers";
  for (std::uint32_t i = 0; i < p_.buffers.size(); ++i) {
    ++site_;
    const BufferDecl& d = p_.buffers[i];
    const BufferId id{i};
    const auto subject = [&] { return buffer_subject(id); };
    if (auto err = check_name(d.name, "buffer")) report(subject(), *std::move(err));
    note_name(d.name, "buffer", subject);
    if (static_cast<std::size_t>(d.role) >= buffer_role_count)
      report(subject(), "its role " + enum_value(d.role) + " is not a BufferRole");
    if (auto valid = validate(d.layout); !valid)
      report(subject(), "invalid layout: " + valid.error().message);
    else if (ctx_ && &d.layout.storage_offset.context() != ctx_)
      report(subject(), "its layout belongs to another expression context than the program's");
    else
      buffers_[i].layout_ok = true;
    if (d.role == BufferRole::comm && !d.comm) report(subject(), "is a comm buffer without comm info");
    if (d.role != BufferRole::comm && d.comm)
      report(subject(), "has comm info but its role is " + std::string(buffer_role_name(d.role)));
    if (d.comm && d.comm->type != CommBufferType::symm_mem)
      report(subject(), "its comm buffer type " + enum_value(d.comm->type) + " is not a CommBufferType");
    if (d.donated && d.role != BufferRole::input) report(subject(), "is donated but is not a graph input");
    if (d.multi_output && d.role != BufferRole::intermediate)
      report(subject(), "holds a multi-output result, so its role must be intermediate, not " +
                          std::string(buffer_role_name(d.role)));
    if (d.role == BufferRole::workspace && buffers_[i].layout_ok && d.layout.rank() != 1)
      report(subject(), "is a workspace of rank " + std::to_string(d.layout.rank()) + "; workspaces are 1-D");
    if (d.role == BufferRole::input || d.role == BufferRole::constant) {
      buffers_[i].life = Life::live;
      buffers_[i].defined_at = at_start;
    }
  }

  kind_ = "symbols";
  symbol_index_.reserve(p_.symbols.size());
  for (std::uint32_t i = 0; i < p_.symbols.size(); ++i) {
    ++site_;
    const SymbolDecl& s = p_.symbols[i];
    const auto index_subject = [&] { return "symbol #" + std::to_string(i); };
    if (!s.symbol) {
      report(index_subject(), "is a null expression");
      continue;
    }
    if (ctx_ && &s.symbol.context() != ctx_) {
      report(index_subject(), "belongs to another expression context than the program's");
      continue;
    }
    if (!s.symbol.is_symbol()) {
      report(index_subject(), "is " + printed(s.symbol) + ", not a symbol");
      continue;
    }
    const auto subject = [&] { return symbol_subject(s.symbol); };
    if (auto err = check_name(s.symbol.name(), "symbol")) report(subject(), *std::move(err));
    note_name(s.symbol.name(), "symbol", subject);
    symbol_index_.try_emplace(s.symbol.node(), i);
    switch (s.origin) {
      case SymbolOrigin::input: symbols_[i] = SymbolTrack{true, at_start, no_line}; break;
      case SymbolOrigin::input_shape: {
        symbols_[i] = SymbolTrack{true, at_start, no_line};
        check_shape_source(s, subject());
        break;
      }
      case SymbolOrigin::unbacked:
      case SymbolOrigin::computed: break;
      default: report(subject(), "its origin " + enum_value(s.origin) + " is not a SymbolOrigin");
    }
    if (s.origin != SymbolOrigin::input_shape && (s.source || !s.path.empty()))
      report(subject(), "has a source or path, which only input_shape symbols have");
  }

  kind_ = "kernels";
  for (std::uint32_t i = 0; i < p_.kernels.size(); ++i) {
    const KernelDecl& k = p_.kernels[i];
    const auto subject = [&] { return kernel_subject(KernelId{i}); };
    if (auto err = check_name(k.name, "kernel")) report(subject(), *std::move(err));
    note_name(k.name, "kernel", subject);
    if (static_cast<std::size_t>(k.language) >= kernel_language_count)
      report(subject(), "its language " + enum_value(k.language) + " is not a KernelLanguage");
    for (const KernelParam& param : k.signature) {
      if (auto err = check_name(param.name, "kernel parameter")) report(subject(), *std::move(err));
      if (!is_valid(param.type.dtype))
        report(subject(), "parameter " + quote_for_diagnostic(param.name) + " has dtype " +
                            enum_value(param.type.dtype) + ", which is not a DType");
    }
  }

  kind_ = "pools";
  for (std::uint32_t i = 0; i < p_.pools.size(); ++i) {
    const PoolDecl& q = p_.pools[i];
    const auto subject = [&] { return pool_subject(PoolId{i}); };
    if (auto err = check_name(q.name, "pool")) report(subject(), *std::move(err));
    note_name(q.name, "pool", subject);
    if (auto valid = validate(q.device); !valid) report(subject(), valid.error().message);
    if (q.tensor) check_pool_tensor(q, subject());
  }

  kind_ = "subgraphs";
  for (std::uint32_t i = 0; i < p_.subgraphs.size(); ++i) {
    const auto subject = [&] { return graph_subject(GraphId{i}); };
    if (auto err = check_name(p_.subgraphs[i].name, "subgraph")) report(subject(), *std::move(err));
    note_name(p_.subgraphs[i].name, "subgraph", subject);
  }

  check_inputs();

  // Inputs and constants exist when the program starts: their layouts may
  // use only the symbols defined then.
  kind_ = "buffers";
  for (std::uint32_t i = 0; i < p_.buffers.size(); ++i) {
    const BufferRole role = p_.buffers[i].role;
    if ((role == BufferRole::input || role == BufferRole::constant) && buffers_[i].layout_ok) {
      ++site_;
      check_layout_symbols(i);
    }
  }
}

WRAPIR_DECL void ProgramVerifier::check_shape_source(const SymbolDecl& s, const std::string& subject) {
  if (!s.source || !has(*s.source) || p_.buffers[s.source->index].role != BufferRole::input) {
    report(subject, "has origin input_shape but its source is not a graph input buffer of this program");
    return;
  }
  const bool one_step = s.path.size() == 1;
  const KeyStep* step = one_step ? &s.path[0] : nullptr;
  if (!step || (step->kind != KeyStepKind::size && step->kind != KeyStepKind::stride &&
                step->kind != KeyStepKind::storage_offset)) {
    report(subject, "has origin input_shape, so its path must be one size, stride or storage_offset step");
    return;
  }
  const Layout* l = layout_of(*s.source);
  if (step->kind != KeyStepKind::storage_offset && l &&
      (step->value < 0 || static_cast<std::uint64_t>(step->value) >= l->rank()))
    report(subject, "reads dimension " + std::to_string(step->value) + " of " + buffer_name(s.source->index) +
                        ", which has rank " + std::to_string(l->rank()));
}

WRAPIR_DECL void ProgramVerifier::check_inputs() {
  kind_ = "inputs";
  std::vector<std::size_t> buffer_input(p_.buffers.size(), no_line);
  std::vector<std::size_t> symbol_input(p_.symbols.size(), no_line);
  for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
    ++site_;
    const ProgramInput& in = p_.inputs[i];
    if (const BufferId* b = boost::variant2::get_if<BufferId>(&in)) {
      if (report_missing(*b)) continue;
      const BufferDecl& d = p_.buffers[b->index];
      if (d.role != BufferRole::input)
        report(buffer_subject(*b), "is input " + std::to_string(i) + " but its role is " +
                                       std::string(buffer_role_name(d.role)) + ", not input");
      if (buffer_input[b->index] != no_line)
        report(buffer_subject(*b), "is input " + std::to_string(buffer_input[b->index]) + " and input " +
                                       std::to_string(i));
      else
        buffer_input[b->index] = i;
    } else {
      const expr::Expr e = boost::variant2::get<expr::Expr>(in);
      const std::string where = "input " + std::to_string(i);
      if (!e) {
        report("", where + " is a null expression");
        continue;
      }
      if (ctx_ && &e.context() != ctx_) {
        report("", where + " belongs to another expression context than the program's");
        continue;
      }
      if (!e.is_symbol()) {
        report("", where + " is " + printed(e) + ", not a symbol");
        continue;
      }
      const auto it = symbol_index_.find(e.node());
      if (it == symbol_index_.end()) {
        report(symbol_subject(e), "is " + where + " but not declared in this program's symbol table");
        continue;
      }
      const SymbolOrigin origin = p_.symbols[it->second].origin;
      if (origin != SymbolOrigin::input)
        report(symbol_subject(e), "is " + where + " but its origin is " + std::string(symbol_origin_name(origin)) +
                                      ", not input");
      if (symbol_input[it->second] != no_line)
        report(symbol_subject(e), "is input " + std::to_string(symbol_input[it->second]) + " and " + where);
      else
        symbol_input[it->second] = i;
    }
  }
  kind_ = "buffers";
  for (std::uint32_t i = 0; i < p_.buffers.size(); ++i)
    if (p_.buffers[i].role == BufferRole::input && buffer_input[i] == no_line)
      report(buffer_subject(BufferId{i}), "has role input but is not one of the program's inputs");
  kind_ = "symbols";
  for (std::uint32_t i = 0; i < p_.symbols.size(); ++i) {
    const SymbolDecl& s = p_.symbols[i];
    // Entries not in the index (null, foreign, duplicate) were reported.
    const auto it = s.symbol ? symbol_index_.find(s.symbol.node()) : symbol_index_.end();
    if (s.origin == SymbolOrigin::input && it != symbol_index_.end() && it->second == i &&
        symbol_input[i] == no_line)
      report(symbol_subject(s.symbol), "has origin input but is not one of the program's inputs");
  }
}

}  // namespace wrapir::ir::detail::verifier
