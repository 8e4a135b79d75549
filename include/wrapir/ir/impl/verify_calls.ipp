#pragma once
// The verifier's checks of calls: arguments, kernel definitions and launches
// against signatures, multi-kernels, extern operators, fallbacks, dynamic
// scalars, asserts. Definitions of ir/detail/verifier.hpp: included by
// ir/impl/verify.ipp (header-only mode) or <wrapir/src.hpp> (separately
// compiled mode).

#include <wrapir/detail/config.hpp>
#include <wrapir/ir/detail/verifier.hpp>
#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::ir::detail::verifier {

WRAPIR_DECL void ProgramVerifier::use_arg(const Arg& a, const Where& w, int depth) {
  if (const BufferArg* b = a.get_if<BufferArg>()) {
    use_buffer_arg(*b, w);
  } else if (const expr::Expr* e = a.get_if<expr::Expr>()) {
    check_expr(*e, w);
  } else if (const Device* d = a.get_if<Device>()) {
    if (auto valid = validate(*d); !valid) report("", render(w) + ": " + valid.error().message);
  } else if (const DType* t = a.get_if<DType>()) {
    if (!is_valid(*t)) report("", render(w) + " is a dtype " + enum_value(*t) + " that is not a DType");
  } else if (const ArgList* l = a.get_if<ArgList>()) {
    if (depth >= max_arg_depth) {
      report("", render(w) + " nests lists more than " + std::to_string(max_arg_depth) + " deep");
      return;
    }
    for (const Arg& item : l->items) use_arg(item, w, depth + 1);
  }
}

WRAPIR_DECL void ProgramVerifier::use_named_args(const std::vector<NamedArg>& kwargs) {
  for (std::size_t i = 0; i < kwargs.size(); ++i) {
    check_name_field(kwargs[i].name.text, "keyword argument");
    use_arg(kwargs[i].value, Where{"keyword argument", i});
  }
}

WRAPIR_DECL bool ProgramVerifier::definable(BufferId b) const noexcept {
  return has(b) && p_.buffers[b.index].role != BufferRole::input && p_.buffers[b.index].role != BufferRole::constant;
}

WRAPIR_DECL void ProgramVerifier::check_metadata(const KernelMetadata& m) {
  for (std::size_t i = 0; i < m.constants.size(); ++i) {
    check_name_field(m.constants[i].name.text, "kernel constant");
    use_arg(m.constants[i].value, Where{"constant", i});
  }
  if (m.num_warps && *m.num_warps <= 0) report("", "num_warps " + std::to_string(*m.num_warps) + " is not positive");
  if (m.num_stages && *m.num_stages <= 0)
    report("", "num_stages " + std::to_string(*m.num_stages) + " is not positive");
  if (m.shared_memory_bytes && *m.shared_memory_bytes < 0)
    report("", "shared_memory_bytes " + std::to_string(*m.shared_memory_bytes) + " is negative");
  if (m.grid_type && static_cast<std::size_t>(*m.grid_type) >= grid_type_count)
    report("", "grid type " + enum_value(*m.grid_type) + " is not a GridType");
  for (const BlockSize& b : m.block) check_name_field(b.name.text, "block size");
}

WRAPIR_DECL void ProgramVerifier::check_metadata_of(const KernelMetadata& m, KernelId k) {
  const KernelDecl& decl = p_.kernels[k.index];
  const auto subject = [&] { return kernel_subject(k); };
  const auto is_param = [&](std::string_view name) {
    return std::any_of(decl.signature.begin(), decl.signature.end(),
                       [&](const KernelParam& p) { return p.name == name; });
  };
  // Each list names each parameter at most once.
  const auto check_names = [&](const std::vector<Name>& names, std::string_view what, auto&& check_one) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      check_name_field(names[i].text, what);
      for (std::size_t j = 0; j < i; ++j)
        if (names[j] == names[i])
          report(subject(), std::string(what) + " " + quote_for_diagnostic(names[i].text) + " is listed twice");
      check_one(names[i]);
    }
  };
  if (m.triton_meta) {
    const TritonMeta& t = *m.triton_meta;
    if (decl.language != KernelLanguage::triton)
      report(subject(), "is " + with_article(kernel_language_name(decl.language)) +
                            " kernel, but its metadata has a triton_meta");
    if (t.device) check_device(*t.device, "triton_meta device");
    if (t.compute_capability && *t.compute_capability <= 0)
      report(subject(), "triton_meta compute_capability " + std::to_string(*t.compute_capability) +
                            " is not positive");
    if (t.warp_size && (*t.warp_size <= 0 || (*t.warp_size & (*t.warp_size - 1)) != 0))
      report(subject(), "triton_meta warp_size " + std::to_string(*t.warp_size) + " is not a positive power of two");
    check_names(t.constexprs, "constexpr parameter", [&](const Name& c) {
      if (is_param(c.text))
        report(subject(), "constexpr parameter " + quote_for_diagnostic(c.text) +
                              " is also a runtime parameter of its signature");
    });
    for (std::size_t i = 0; i < t.attributes.size(); ++i) {
      const ParamAttribute& a = t.attributes[i];
      const std::string what = "triton_meta attribute " + std::to_string(i);
      if (!is_param(a.param.text) && std::find(t.constexprs.begin(), t.constexprs.end(), a.param) == t.constexprs.end())
        report(subject(), what + " is about " + quote_for_diagnostic(a.param.text) +
                              ", which is neither a parameter of its signature nor a constexpr");
      const bool dotted = !a.name.empty() && std::all_of(a.name.begin(), a.name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
      });
      if (!dotted)
        report(subject(), what + " has the name " + quote_for_diagnostic(a.name) +
                              ": expected a dotted name such as tt.divisibility");
      if (a.name == "tt.divisibility" && (a.value <= 0 || (a.value & (a.value - 1)) != 0))
        report(subject(), what + ": a divisibility of " + std::to_string(a.value) +
                              " is not a positive power of two");
    }
  }
  if (m.inductor_meta) {
    const InductorMeta& n = *m.inductor_meta;
    if (n.kernel_name && n.kernel_name->text != decl.name)
      report(subject(), "its inductor_meta names it " + quote_for_diagnostic(n.kernel_name->text));
    check_names(n.mutated_arg_names, "mutated argument", [&](const Name& a) {
      const auto it = std::find_if(decl.signature.begin(), decl.signature.end(),
                                   [&](const KernelParam& p) { return p.name == a.text; });
      if (it == decl.signature.end())
        report(subject(), "mutated argument " + quote_for_diagnostic(a.text) + " is not a parameter of its signature");
      else if (!it->type.pointer)
        report(subject(), "mutated argument " + quote_for_diagnostic(a.text) + " is a scalar " +
                              to_string(it->type) + ", not a pointer the kernel could write through");
    });
    for (std::size_t i = 0; i < n.autotune_hints.size(); ++i) {
      if (static_cast<std::size_t>(n.autotune_hints[i]) >= autotune_hint_count)
        report(subject(), "autotune hint " + enum_value(n.autotune_hints[i]) + " is not an AutotuneHint");
      for (std::size_t j = 0; j < i; ++j)
        if (n.autotune_hints[j] == n.autotune_hints[i])
          report(subject(), "autotune hint " + std::string(autotune_hint_name(n.autotune_hints[i])) +
                                " is listed twice");
    }
    const std::pair<const char*, const std::optional<std::int64_t>*> counts[] = {
        {"num_load", &n.num_load}, {"num_store", &n.num_store}, {"num_reduction", &n.num_reduction}};
    for (const auto& [what, count] : counts)
      if (*count && **count < 0)
        report(subject(), std::string("inductor_meta ") + what + " " + std::to_string(**count) + " is negative");
    if (n.backend_hash && (n.backend_hash->empty() || !is_single_line_text(*n.backend_hash)))
      report(subject(), "inductor_meta backend_hash " + quote_for_diagnostic(*n.backend_hash) +
                            " is not one line of text");
  }
  if (!m.const_params.empty() && decl.language != KernelLanguage::cpp && decl.language != KernelLanguage::cuda)
    report(subject(), "is " + with_article(kernel_language_name(decl.language)) +
                          " kernel, but its metadata declares const parameters, which only C++ definitions have");
  check_names(m.const_params, "const parameter", [&](const Name& c) {
    if (!is_param(c.text))
      report(subject(), "const parameter " + quote_for_diagnostic(c.text) + " is not a parameter of its signature");
  });
}

WRAPIR_DECL void ProgramVerifier::check_provenance(const OptionalBox<Provenance>& p) {
  if (!p) return;
  const auto check = [&](const std::string& text, const std::string& what) {
    if (text.empty() || !is_single_line_text(text))
      report("", "provenance " + what + " " + quote_for_diagnostic(text) +
                     " is not one line of text (empty, or with a line break or control character)");
  };
  for (std::size_t i = 0; i < p->source_nodes.size(); ++i)
    check(p->source_nodes[i], "source node " + std::to_string(i));
  for (std::size_t i = 0; i < p->aten.size(); ++i) check(p->aten[i], "ATen operator " + std::to_string(i));
  if (p->context) check(*p->context, "context");
}

WRAPIR_DECL void ProgramVerifier::check_fields(const KernelDefinition& l) {
  if (!report_missing(l.kernel)) {
    const KernelTrack& t = kernels_[l.kernel.index];
    if (t.def != KernelDef::none)
      report(kernel_subject(l.kernel), "defined twice: it was already defined at line " +
                                           std::to_string(t.defined_at));
    const KernelLanguage lang = p_.kernels[l.kernel.index].language;
    const bool binary = lang == KernelLanguage::ptx || lang == KernelLanguage::cubin;
    if (binary && boost::variant2::holds_alternative<SourceText>(l.source))
      report(kernel_subject(l.kernel), "is " + with_article(kernel_language_name(lang)) +
                                           " kernel, but its definition gives source text instead of a binary");
    if (!binary && boost::variant2::holds_alternative<BinaryRef>(l.source))
      report(kernel_subject(l.kernel), "is " + with_article(kernel_language_name(lang)) +
                                           " kernel, but its definition gives a binary instead of source text");
  }
  check_metadata(l.metadata);
  if (has(l.kernel)) check_metadata_of(l.metadata, l.kernel);
  if (has(l.kernel) && kernels_[l.kernel.index].def == KernelDef::none)
    kernels_[l.kernel.index] = KernelTrack{KernelDef::plain, at_};
}

WRAPIR_DECL std::string ProgramVerifier::describe_arg(const Arg& a) const {
  if (const BufferArg* b = a.get_if<BufferArg>()) {
    if (has(b->buffer)) return with_article(name(p_.buffers[b->buffer.index].layout.dtype)) + " buffer";
    return "a buffer";
  }
  if (a.holds<None>()) return "None";
  return with_article(arg_kind_name(a));
}

WRAPIR_DECL bool ProgramVerifier::fits(const Arg& a, ParamType t) const {
  if (t.pointer) {
    const BufferArg* b = a.get_if<BufferArg>();
    return b && (!has(b->buffer) || p_.buffers[b->buffer.index].layout.dtype == t.dtype);
  }
  if (!is_valid(t.dtype)) return true;  // reported with the kernel table
  if (t.dtype == DType::bool_) return a.holds<bool>() || a.holds<std::int64_t>();
  if (is_integral(t.dtype)) return a.holds<std::int64_t>() || a.holds<bool>() || a.holds<expr::Expr>();
  return a.holds<double>() || a.holds<std::int64_t>();  // floating and complex scalars
}

WRAPIR_DECL void ProgramVerifier::check_call_args(KernelId k, const std::vector<Arg>& args, std::span<const ParamType> arg_types) {
  for (std::size_t i = 0; i < args.size(); ++i) use_arg(args[i], Where{"argument", i});
  if (!has(k)) return;
  const std::vector<KernelParam>& sig = p_.kernels[k.index].signature;
  const auto subject = [&] { return kernel_subject(k); };
  if (args.size() != sig.size())
    report(subject(), "called with " + std::to_string(args.size()) + " arguments, but its signature has " +
                        std::to_string(sig.size()) + " parameters");
  if (arg_types.size() != sig.size())
    report(subject(), "called with " + std::to_string(arg_types.size()) + " argument types, but its signature has " +
                        std::to_string(sig.size()) + " parameters");
  for (std::size_t i = 0; i < std::min(arg_types.size(), sig.size()); ++i)
    if (arg_types[i] != sig[i].type)
      report(subject(), "argument type " + std::to_string(i) + " is " + to_string(arg_types[i]) + " but parameter " +
                          quote_for_diagnostic(sig[i].name) + " is " + to_string(sig[i].type));
  for (std::size_t i = 0; i < std::min(args.size(), sig.size()); ++i)
    if (!fits(args[i], sig[i].type))
      report(subject(), "argument " + std::to_string(i) + " is " + describe_arg(args[i]) + " but parameter " +
                          quote_for_diagnostic(sig[i].name) + " is " + to_string(sig[i].type));
}

WRAPIR_DECL void ProgramVerifier::check_grid(const LaunchGrid& grid) {
  if (const ExplicitGrid* g = grid_if<ExplicitGrid>(grid)) {
    check_expr(g->x, Where{"grid x"});
    check_expr(g->y, Where{"grid y"});
    check_expr(g->z, Where{"grid z"});
  } else if (const TypedGrid* t = grid_if<TypedGrid>(grid)) {
    if (static_cast<std::size_t>(t->type) >= grid_type_count)
      report("", "grid type " + enum_value(t->type) + " is not a GridType");
    for (std::size_t i = 0; i < t->numels.size(); ++i) {
      check_name_field(t->numels[i].name.text, "grid numel");
      check_expr(t->numels[i].value, Where{"grid numel", i});
    }
    for (const BlockSize& b : t->block) check_name_field(b.name.text, "block size");
  }
}

WRAPIR_DECL void ProgramVerifier::check_called(KernelId k, KernelDef wanted) {
  if (report_missing(k)) return;
  const KernelDef def = kernels_[k.index].def;
  if (def == wanted) return;
  const auto subject = [&] { return kernel_subject(k); };
  if (def == KernelDef::none)
    report(subject(), wanted == KernelDef::plain ? "called before its KernelDefinition"
                                               : "called before its MultiKernelDefinition");
  else if (def == KernelDef::multi)
    report(subject(), "is a multi-kernel, which MultiKernelCall calls");
  else
    report(subject(), "is not a multi-kernel; KernelCall calls it");
}

WRAPIR_DECL void ProgramVerifier::check_fields(const KernelCall& l) {
  check_called(l.kernel, KernelDef::plain);
  check_call_args(l.kernel, l.args, l.arg_types);
  check_grid(l.grid);
  check_device(l.device, "device");
}

WRAPIR_DECL void ProgramVerifier::check_fields(const SymbolicCallArg& l) {
  check_expr(l.value, Where{"the value"});
  define_symbol(l.symbol, SymbolOrigin::computed, Where{"the symbol"});
}

WRAPIR_DECL void ProgramVerifier::check_fields(const MultiKernelDefinition& l) {
  const bool known = !report_missing(l.kernel);
  const auto subject = [&] { return known ? kernel_subject(l.kernel) : std::string(); };
  if (known && kernels_[l.kernel.index].def != KernelDef::none)
    report(subject(), "defined twice: it was already defined at line " +
                        std::to_string(kernels_[l.kernel.index].defined_at));
  if (l.candidates.empty()) report(subject(), "has no candidate kernels");
  const std::vector<KernelParam>* sig = known ? &p_.kernels[l.kernel.index].signature : nullptr;
  if (l.arg_index.size() != l.candidates.size())
    report(subject(), "has " + std::to_string(l.candidates.size()) + " candidates but " +
                        std::to_string(l.arg_index.size()) + " arg_index entries");
  if (!l.shape_keys.empty() && l.shape_keys.size() != l.candidates.size())
    report(subject(), "has " + std::to_string(l.candidates.size()) + " candidates but " +
                        std::to_string(l.shape_keys.size()) + " shape_keys");
  for (std::size_t i = 0; i < l.candidates.size(); ++i) {
    const KernelId c = l.candidates[i];
    if (report_missing(c)) continue;
    if (c == l.kernel) {
      report(subject(), "lists itself as candidate " + std::to_string(i));
      continue;
    }
    const KernelDef def = kernels_[c.index].def;
    if (def == KernelDef::none)
      report(kernel_subject(c), "is candidate " + std::to_string(i) + " but is not defined before this line");
    else if (def == KernelDef::multi)
      report(kernel_subject(c), "is candidate " + std::to_string(i) + " but is itself a multi-kernel");
    if (sig && i < l.arg_index.size()) check_candidate_args(l, i, *sig);
  }
  if (known && kernels_[l.kernel.index].def == KernelDef::none)
    kernels_[l.kernel.index] = KernelTrack{KernelDef::multi, at_};
}

WRAPIR_DECL void ProgramVerifier::check_candidate_args(const MultiKernelDefinition& l, std::size_t i, const std::vector<KernelParam>& sig) {
  const auto subject = [&] { return kernel_subject(l.kernel); };
  const auto n = static_cast<std::int64_t>(sig.size());
  std::vector<std::size_t> selected;
  bool inside = true;
  for (const ArgSlice& s : l.arg_index[i]) {
    if (s.start < 0 || s.start > s.stop || s.stop > n) {
      report(subject(), "arg_index[" + std::to_string(i) + "] slice [" + std::to_string(s.start) + ", " +
                          std::to_string(s.stop) + ") is not inside its " + std::to_string(n) + " arguments");
      inside = false;
      continue;
    }
    for (std::int64_t a = s.start; a < s.stop; ++a) selected.push_back(static_cast<std::size_t>(a));
  }
  if (!inside) return;
  const KernelId c = l.candidates[i];
  const std::vector<KernelParam>& cs = p_.kernels[c.index].signature;
  if (selected.size() != cs.size()) {
    report(subject(), "arg_index[" + std::to_string(i) + "] selects " + std::to_string(selected.size()) +
                        " arguments but candidate " + kernel_name(c.index) + " takes " + std::to_string(cs.size()));
    return;
  }
  for (std::size_t j = 0; j < cs.size(); ++j)
    if (sig[selected[j]].type != cs[j].type)
      report(subject(), "arg_index[" + std::to_string(i) + "] passes parameter " +
                          quote_for_diagnostic(sig[selected[j]].name) + " (" + to_string(sig[selected[j]].type) +
                          ") to parameter " + quote_for_diagnostic(cs[j].name) + " (" + to_string(cs[j].type) +
                          ") of candidate " + kernel_name(c.index));
}

WRAPIR_DECL void ProgramVerifier::check_fields(const MultiKernelCall& l) {
  check_called(l.kernel, KernelDef::multi);
  check_call_args(l.kernel, l.args, l.arg_types);
  check_device(l.device, "device");
}

WRAPIR_DECL void ProgramVerifier::use_args(const std::vector<Arg>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) use_arg(args[i], Where{"argument", i});
}

WRAPIR_DECL void ProgramVerifier::check_fields(const ExternKernelAlloc& l) {
  check_op_name(l.kernel);
  use_args(l.args);
  use_named_args(l.kwargs);
}

WRAPIR_DECL void ProgramVerifier::check_fields(const ExternKernelOut& l) {
  check_op_name(l.kernel);
  use_args(l.args);
  use_named_args(l.kwargs);
  use_buffer_arg(l.out, Where{"the out argument"});
}

WRAPIR_DECL void ProgramVerifier::check_fields(const ExternKernelMultiOut& l) {
  check_op_name(l.kernel);
  use_args(l.args);
  use_named_args(l.kwargs);
  for (std::size_t i = 0; i < l.outs.size(); ++i) {
    check_name_field(l.outs[i].name.text, "out argument");
    use_buffer_arg(l.outs[i].buffer, Where{"out argument", i});
  }
}

WRAPIR_DECL std::optional<std::string> ProgramVerifier::path_problem(const KeyPath& path, bool index_and_key_only) {
  for (std::size_t i = 0; i < path.size(); ++i) {
    const KeyStep& s = path[i];
    const std::string step = "step " + std::to_string(i);
    if (static_cast<std::size_t>(s.kind) >= key_step_kind_count)
      return step + " has kind " + enum_value(s.kind) + ", which is not a KeyStepKind";
    if (index_and_key_only && s.kind != KeyStepKind::index && s.kind != KeyStepKind::key)
      return step + " is " + with_article(key_step_kind_name(s.kind)) + " step; only index and key steps select "
             "an element";
    if ((s.kind == KeyStepKind::index || s.kind == KeyStepKind::size || s.kind == KeyStepKind::stride) &&
        s.value < 0)
      return step + " (" + std::string(key_step_kind_name(s.kind)) + ") has the negative value " +
             std::to_string(s.value);
    if (s.kind == KeyStepKind::divide_by && s.value <= 0)
      return step + " divides by " + std::to_string(s.value) + "; the divisor must be positive";
  }
  return std::nullopt;
}

WRAPIR_DECL void ProgramVerifier::check_results(const MultiOutput& l) {
  if (auto problem = path_problem(l.path, true)) report("", "path " + *problem);
}

WRAPIR_DECL void ProgramVerifier::check_fields(const ScatterFallback& l) {
  check_op_name(l.kernel);
  use_buffer(l.self);
  use_buffer_arg(l.index, Where{"the index"});
  use_arg(l.src, Where{"the source"});
  use_named_args(l.kwargs);
}

WRAPIR_DECL void ProgramVerifier::check_fields(const IndexPutFallback& l) {
  check_op_name(l.kernel);
  use_buffer(l.self);
  for (std::size_t i = 0; i < l.indices.size(); ++i)
    if (l.indices[i]) use_buffer_arg(*l.indices[i], Where{"index", i});
  use_buffer_arg(l.values, Where{"the values"});
}

WRAPIR_DECL void ProgramVerifier::check_fields(const DynamicScalar& l) {
  if (use_buffer(l.source)) {
    if (const Layout* layout = layout_of(l.source)) {
      for (const expr::Expr s : layout->sizes)
        if (s.is_integer() && s.value() != 1) {
          report(buffer_subject(l.source), "is read as a scalar but has " + std::to_string(s.value()) +
                                               " elements in one dimension; it must hold one element");
          break;
        }
    }
  }
  const bool plain = l.path.empty();
  const bool to_int = l.path.size() == 1 && l.path[0].kind == KeyStepKind::convert_to_int;
  const bool divide = l.path.size() == 1 && l.path[0].kind == KeyStepKind::divide_by && l.path[0].value > 0;
  if (!plain && !to_int && !divide)
    report("", "the path must be empty, one convert_to_int step or one divide_by step with a positive divisor");
  define_symbol(l.symbol, SymbolOrigin::unbacked, Where{"the symbol"});
}

WRAPIR_DECL void ProgramVerifier::check_fields(const UnbackedSymbolDefs& l) {
  use_buffer(l.source, true);
  for (std::size_t i = 0; i < l.bindings.size(); ++i) {
    if (auto problem = path_problem(l.bindings[i].path, false))
      report("", "the path of binding " + std::to_string(i) + ": " + *problem);
    define_symbol(l.bindings[i].symbol, SymbolOrigin::unbacked, Where{"binding", i});
  }
}

WRAPIR_DECL void ProgramVerifier::check_fields(const AssertSizeStride& l) {
  use_buffer(l.buffer);
  if (l.sizes.size() != l.strides.size())
    report("", "asserts " + std::to_string(l.sizes.size()) + " sizes but " + std::to_string(l.strides.size()) +
                   " strides");
  else if (const Layout* layout = layout_of(l.buffer); layout && layout->rank() != l.sizes.size())
    report(buffer_subject(l.buffer), "has rank " + std::to_string(layout->rank()) + " but the line asserts " +
                                         std::to_string(l.sizes.size()) + " sizes");
  for (std::size_t i = 0; i < l.sizes.size(); ++i) check_expr(l.sizes[i], Where{"size", i});
  for (std::size_t i = 0; i < l.strides.size(); ++i) check_expr(l.strides[i], Where{"stride", i});
  check_assert_op_name(l.op_name);
}

WRAPIR_DECL void ProgramVerifier::check_assert_op_name(const std::optional<std::string>& op_name) {
  if (op_name && (op_name->empty() || !is_single_line_text(*op_name)))
    report("", "the op name " + quote_for_diagnostic(*op_name) +
                   " is empty or has a line break or control character; it must be one line of text");
}

WRAPIR_DECL void ProgramVerifier::check_fields(const AssertAlignment& l) {
  use_buffer(l.buffer);
  // Addresses are aligned to powers of two; anything else checks nothing
  // an allocator promises (Inductor asserts 16, GPU_ALIGN_BYTES).
  if (l.alignment < 1 || (l.alignment & (l.alignment - 1)) != 0)
    report("", "the alignment " + std::to_string(l.alignment) + " is not a positive power of two");
  check_assert_op_name(l.op_name);
}

WRAPIR_DECL void ProgramVerifier::check_fields(const AssertScalar& l) {
  if (check_expr(l.condition, Where{"the condition"}) && l.condition.is_integer(0))
    report("", "the condition is always false (it folded to 0): the program would always stop here");
  if (!is_single_line_text(l.message))
    report("", "the message " + quote_for_diagnostic(l.message) +
                   " has a line break or control character; it must be one line of text");
}

}  // namespace wrapir::ir::detail::verifier
