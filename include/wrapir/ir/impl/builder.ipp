#pragma once
/// \file
/// Definitions of <wrapir/ir/builder.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/ir/builder.hpp>

#include <boost/variant2/variant.hpp>

namespace wrapir::ir {

WRAPIR_DECL Builder::Builder(Program& program, Device default_device) : program_(&program), device_(default_device) {
  for (const BufferDecl& b : program.buffers) names_.insert(b.name);
  for (const KernelDecl& k : program.kernels) names_.insert(k.name);
  for (const PoolDecl& pl : program.pools) names_.insert(pl.name);
  for (const Program& g : program.subgraphs) names_.insert(g.name);
  for (const SymbolDecl& s : program.symbols)
    if (s.symbol) names_.insert(std::string(s.symbol.name()));
}

WRAPIR_DECL std::string Builder::fresh_name(std::string_view prefix) {
  std::size_t& next = counters_[std::string(prefix)];
  while (true) {
    std::string candidate = std::string(prefix) + std::to_string(next++);
    if (!names_.contains(candidate)) return candidate;
  }
}

WRAPIR_DECL expr::Expr Builder::size_symbol(std::string_view name, std::optional<std::int64_t> hint) {
  expr::Expr s = declare_symbol(name, expr::Assumption::positive, false, SymbolOrigin::input, hint);
  program_->inputs.emplace_back(s);
  return s;
}

WRAPIR_DECL expr::Expr Builder::shape_symbol(std::string_view name, BufferId input, KeyStep step,
                                             std::optional<std::int64_t> hint) {
  check_buffer(input, "shape_symbol");
  expr::Expr s = declare_symbol(name, expr::Assumption::positive, false, SymbolOrigin::input_shape, hint);
  SymbolDecl& d = program_->symbols.back();
  d.source = input;
  d.path = {std::move(step)};
  return s;
}

WRAPIR_DECL expr::Expr Builder::unbacked_symbol(std::string_view name, std::optional<std::int64_t> hint) {
  return declare_symbol(name, expr::Assumption::nonnegative, true, SymbolOrigin::unbacked, hint);
}

WRAPIR_DECL expr::Expr Builder::computed_symbol(std::string_view name, expr::Expr value) {
  check_expr(value, "computed_symbol");
  expr::Expr s = declare_symbol(name, expr::Assumption::nonnegative, false, SymbolOrigin::computed, std::nullopt);
  append(SymbolicCallArg{s, value});
  return s;
}

WRAPIR_DECL BufferId Builder::input(std::string_view name, LayoutDims sizes, DType dtype,
                                    std::optional<Device> device) {
  return input(name, contiguous_layout(std::move(sizes), dtype, device.value_or(device_)));
}

WRAPIR_DECL BufferId Builder::input(std::string_view name, Layout layout, bool donated) {
  BufferId id = declare(name, std::move(layout), BufferRole::input);
  program_->buffers[id.index].donated = donated;
  program_->inputs.emplace_back(id);
  return id;
}

WRAPIR_DECL BufferId Builder::constant(std::string_view name, Layout layout) {
  return declare(name, std::move(layout), BufferRole::constant);
}

WRAPIR_DECL BufferId Builder::declare(std::string_view name, Layout layout, BufferRole role) {
  if (auto err = check_name(name, "buffer")) throw BuildError("declare: " + *err);
  if (names_.contains(std::string(name)))
    throw BuildError("declare: the name " + quote_for_diagnostic(name) + " is already used in program " +
                     quote_for_diagnostic(program_->name));
  if (auto valid = validate(layout); !valid)
    throw BuildError("declare: buffer " + quote_for_diagnostic(name) + ": " + valid.error().message);
  if (&layout.storage_offset.context() != &ctx())
    throw BuildError("declare: buffer " + quote_for_diagnostic(name) +
                     ": the layout's expressions belong to another context than the program's");
  names_.insert(std::string(name));
  program_->buffers.push_back(BufferDecl{std::string(name), std::move(layout), role});
  return BufferId{static_cast<std::uint32_t>(program_->buffers.size() - 1)};
}

WRAPIR_DECL BufferId Builder::empty(LayoutDims sizes, DType dtype, std::optional<Device> device) {
  return allocate(contiguous_layout(std::move(sizes), dtype, device.value_or(device_)));
}

WRAPIR_DECL BufferId Builder::allocate(Layout layout, BufferRole role) {
  BufferId id = declare(fresh_name("buf"), std::move(layout), role);
  append(Allocate{id});
  return id;
}

WRAPIR_DECL BufferId Builder::workspace(expr::Expr count, WorkspaceZeroMode mode, Name inner_name, DType dtype,
                                        std::optional<Device> device) {
  check_expr(count, "workspace");
  if (auto err = check_name(inner_name.text, "workspace inner")) throw BuildError("workspace: " + *err);
  const Device where = device.value_or(device_);
  if (mode == WorkspaceZeroMode::zero_per_graph) {
    for (const auto& [shared, inner] : zero_per_graph_) {
      BufferDecl& b = program_->buffers[shared.index];
      if (b.layout.dtype != dtype || b.layout.device != where || inner != inner_name.text) continue;
      b.layout.sizes.front() = expr::max(b.layout.sizes.front(), count);
      return shared;
    }
  }
  BufferId id = declare(fresh_name("workspace_"), contiguous_layout({count}, dtype, where), BufferRole::workspace);
  if (mode == WorkspaceZeroMode::zero_per_graph) zero_per_graph_.emplace_back(id, inner_name.text);
  append(WorkspaceAllocate{id, mode, std::move(inner_name)});
  return id;
}

WRAPIR_DECL BufferId Builder::comm_buffer(LayoutDims sizes, DType dtype, std::string group,
                                          std::optional<Device> device) {
  BufferId id = declare(fresh_name("buf"), contiguous_layout(std::move(sizes), dtype, device.value_or(device_)),
                        BufferRole::comm);
  program_->buffers[id.index].comm = CommBufferInfo{CommBufferType::symm_mem, std::move(group)};
  append(CommBufferAllocate{id});
  return id;
}

WRAPIR_DECL void Builder::free(std::initializer_list<BufferId> buffers) {
  free(std::span<const BufferId>(buffers.begin(), buffers.size()));
}

WRAPIR_DECL void Builder::free(std::span<const BufferId> buffers) {
  for (BufferId b : buffers) {
    check_buffer(b, "free");
    switch (program_->buffers[b.index].role) {
      case BufferRole::input:
        append(Free{b});
        break;
      case BufferRole::comm:
        append(CommBufferFree{b});
        break;
      case BufferRole::workspace:
        // A zero_per_graph workspace lives for the whole run.
        if (std::none_of(zero_per_graph_.begin(), zero_per_graph_.end(),
                         [&](const auto& shared) { return shared.first == b; }))
          append(WorkspaceFree{b});
        break;
      default:
        append(FreeIfNotReused{b});
        break;
    }
  }
}

WRAPIR_DECL BufferId Builder::view(BufferId base, LayoutDims sizes, LayoutDims strides,
                                   expr::Expr offset) {
  check_buffer(base, "view");
  const Layout& b = program_->buffers[base.index].layout;
  BufferId id = declare(fresh_name("buf"), Layout{std::move(sizes), std::move(strides), offset, b.dtype, b.device},
                        BufferRole::intermediate);
  append(Reinterpret{id, base});
  return id;
}

WRAPIR_DECL KernelId Builder::triton_kernel(std::string_view name, std::string source, std::string_view signature,
                                            KernelMetadata metadata) {
  return kernel(name, KernelLanguage::triton, SourceText{std::move(source)}, signature, std::move(metadata));
}

WRAPIR_DECL KernelId Builder::kernel(std::string_view name, KernelLanguage language, KernelSource source,
                                     std::string_view signature, KernelMetadata metadata) {
  auto params = parse_signature(signature);
  if (!params) throw BuildError("kernel " + quote_for_diagnostic(name) + ": signature: " + params.error().to_string());
  KernelId id = declare_kernel(name, language, std::move(params).value());
  append(KernelDefinition{id, std::move(source), std::move(metadata)});
  return id;
}

WRAPIR_DECL KernelId Builder::declare_kernel(std::string_view name, KernelLanguage language,
                                             std::vector<KernelParam> signature) {
  if (auto err = check_name(name, "kernel")) throw BuildError("kernel: " + *err);
  if (names_.contains(std::string(name)))
    throw BuildError("kernel: the name " + quote_for_diagnostic(name) + " is already used");
  names_.insert(std::string(name));
  program_->kernels.push_back(KernelDecl{std::string(name), language, std::move(signature)});
  return KernelId{static_cast<std::uint32_t>(program_->kernels.size() - 1)};
}

WRAPIR_DECL void Builder::call(KernelId kernel, std::vector<Arg> args, CallOptions options) {
  check_kernel(kernel, "call");
  const KernelDecl& k = program_->kernels[kernel.index];
  if (args.size() + options.workspaces.size() != k.signature.size())
    throw BuildError("call of " + quote_for_diagnostic(k.name) + ": " + std::to_string(args.size()) + " arguments" +
                     (options.workspaces.empty()
                          ? std::string()
                          : " and " + std::to_string(options.workspaces.size()) + " workspaces") +
                     " for a signature of " + std::to_string(k.signature.size()) + " parameters");
  const Device device = options.device.value_or(device_);
  const std::vector<BufferId> workspaces =
      allocate_workspaces(std::move(options.workspaces), device, /*merge=*/false, k.name);
  for (BufferId w : workspaces) args.emplace_back(w);
  ArgTypes types;
  types.reserve(k.signature.size());
  for (const KernelParam& p : k.signature) types.push_back(p.type);
  append(KernelCall{kernel, std::move(args), std::move(types), std::move(options.grid), device, options.stream});
  free_workspaces(workspaces);
  free(options.free_after);
}

WRAPIR_DECL KernelId Builder::multi_kernel(std::vector<KernelId> candidates,
                                           std::vector<std::vector<ArgSlice>> arg_index,
                                           std::vector<std::optional<ShapeKey>> shape_keys) {
  if (candidates.size() < 2) throw BuildError("multi_kernel: needs at least two candidate kernels");
  for (KernelId c : candidates) check_kernel(c, "multi_kernel");
  const KernelDecl& first = program_->kernels[candidates.front().index];
  if (arg_index.empty())
    arg_index.assign(candidates.size(), {ArgSlice{0, static_cast<std::int64_t>(first.signature.size())}});
  KernelId id = declare_kernel(fresh_name("multi_kernel_"), first.language, first.signature);
  append(MultiKernelDefinition{id, std::move(candidates), std::move(arg_index), std::move(shape_keys)});
  return id;
}

WRAPIR_DECL void Builder::call_multi(KernelId multi, std::vector<Arg> args, CallOptions options) {
  check_kernel(multi, "call_multi");
  const KernelDecl& k = program_->kernels[multi.index];
  const Device device = options.device.value_or(device_);
  const std::vector<BufferId> workspaces =
      allocate_workspaces(std::move(options.workspaces), device, /*merge=*/true, k.name);
  for (BufferId w : workspaces) args.emplace_back(w);
  ArgTypes types;
  for (const KernelParam& p : k.signature) types.push_back(p.type);
  append(MultiKernelCall{multi, std::move(args), std::move(types), device, options.stream});
  free_workspaces(workspaces);
  free(options.free_after);
}

WRAPIR_DECL BufferId Builder::extern_alloc(OpName op, std::vector<Arg> args, Layout result,
                                           std::vector<NamedArg> kwargs) {
  check_op(op, "extern_alloc");
  BufferId id = declare(fresh_name("buf"), std::move(result), BufferRole::intermediate);
  append(ExternKernelAlloc{id, std::move(op), std::move(args), std::move(kwargs)});
  return id;
}

WRAPIR_DECL BufferId Builder::extern_alloc_multi(OpName op, std::vector<Arg> args, std::vector<NamedArg> kwargs) {
  check_op(op, "extern_alloc_multi");
  BufferId id =
      declare(fresh_name("buf"), Layout{{}, {}, ctx().integer(0), DType::uint8, device_}, BufferRole::intermediate);
  program_->buffers[id.index].multi_output = true;
  append(ExternKernelAlloc{id, std::move(op), std::move(args), std::move(kwargs)});
  return id;
}

WRAPIR_DECL void Builder::extern_out(OpName op, std::vector<Arg> args, BufferArg out, std::vector<NamedArg> kwargs) {
  check_op(op, "extern_out");
  check_buffer(out.buffer, "extern_out");
  append(ExternKernelOut{std::move(op), std::move(args), std::move(kwargs), std::move(out)});
}

WRAPIR_DECL std::vector<BufferId> Builder::unpack(BufferId source, std::vector<Layout> layouts) {
  check_buffer(source, "unpack");
  std::vector<BufferId> results;
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    BufferId id = declare(fresh_name("buf"), std::move(layouts[i]), BufferRole::intermediate);
    append(MultiOutput{id, source, {KeyStep{KeyStepKind::index, static_cast<std::int64_t>(i)}}});
    results.push_back(id);
  }
  return results;
}

WRAPIR_DECL void Builder::dynamic_scalar(expr::Expr symbol, BufferId source, KeyPath path) {
  check_expr(symbol, "dynamic_scalar");
  check_buffer(source, "dynamic_scalar");
  append(DynamicScalar{symbol, source, std::move(path)});
}

WRAPIR_DECL void Builder::assert_size_stride(BufferId buffer) {
  check_buffer(buffer, "assert_size_stride");
  const Layout& l = program_->buffers[buffer.index].layout;
  append(AssertSizeStride{buffer, l.sizes.to_vector(), l.strides.to_vector()});
}

WRAPIR_DECL std::vector<BufferId> Builder::conditional(Arg predicate, std::vector<Arg> operands,
                                                       const SubgraphFn& true_branch, const SubgraphFn& false_branch) {
  const std::string suffix = std::to_string(conditional_count_++);
  GraphId t = subgraph("true_graph_" + suffix, operands, true_branch);
  GraphId f = subgraph("false_graph_" + suffix, operands, false_branch);
  std::vector<BufferId> outputs = outputs_like(program_->subgraphs[t.index], "conditional");
  append(Conditional{std::move(predicate), t, f, std::move(operands), outputs});
  return outputs;
}

WRAPIR_DECL std::vector<BufferId> Builder::while_loop(std::vector<Arg> carried, std::vector<Arg> additional,
                                                      const SubgraphFn& condition, const SubgraphFn& body) {
  const std::string suffix = std::to_string(while_count_++);
  std::vector<Arg> all = carried;
  all.insert(all.end(), additional.begin(), additional.end());
  GraphId c = subgraph("cond_fn_" + suffix, all, condition);
  GraphId b = subgraph("body_fn_" + suffix, all, body);
  std::vector<BufferId> outputs = outputs_like(program_->subgraphs[b.index], "while_loop");
  append(WhileLoop{c, b, std::move(carried), std::move(additional), outputs});
  return outputs;
}

WRAPIR_DECL void Builder::enter_device(Device d) { append(EnterDeviceContext{d}); }

WRAPIR_DECL void Builder::exit_device() { append(ExitDeviceContext{}); }

WRAPIR_DECL void Builder::comment(std::string text) {
  if (!is_single_line_text(text)) throw BuildError("comment: the text has a line break or control character");
  append(Comment{std::move(text)});
}

WRAPIR_DECL void Builder::output(ProgramOutput out) { program_->outputs.push_back(std::move(out)); }

WRAPIR_DECL void Builder::output(expr::Expr scalar) {
  program_->outputs.emplace_back(boost::variant2::in_place_type_t<expr::Expr>{}, scalar);
}

WRAPIR_DECL void Builder::output(BufferId b) {
  check_buffer(b, "output");
  if (program_->buffers[b.index].role == BufferRole::intermediate) program_->buffers[b.index].role = BufferRole::output;
  program_->outputs.emplace_back(BufferArg{b, std::nullopt});
}

WRAPIR_DECL void Builder::append(Line line) { program_->body.push_back(std::move(line)); }

WRAPIR_DECL std::vector<BufferId> Builder::allocate_workspaces(std::vector<WorkspaceRequest> requests,
                                                               Device call_device, bool merge,
                                                               std::string_view kernel) {
  const std::string who = "workspaces of " + quote_for_diagnostic(kernel);
  std::vector<WorkspaceRequest> merged;
  for (WorkspaceRequest& r : requests) {
    if (!r.device) r.device = call_device;
    check_expr(r.count, "workspace");
    auto same = std::find_if(merged.begin(), merged.end(),
                             [&](const WorkspaceRequest& m) { return m.inner_name == r.inner_name; });
    if (same == merged.end()) {
      merged.push_back(std::move(r));
      continue;
    }
    if (!merge) throw BuildError(who + ": two requests for the parameter " + quote_for_diagnostic(r.inner_name.text));
    if (same->dtype != r.dtype || same->device != r.device)
      throw BuildError(who + ": the requests for " + quote_for_diagnostic(r.inner_name.text) +
                       " differ in dtype or device, so they cannot share one workspace");
    const auto mode = combine(same->zero_mode, r.zero_mode);
    if (!mode)
      throw BuildError(who + ": the requests for " + quote_for_diagnostic(r.inner_name.text) + " want zero modes " +
                       std::string(workspace_zero_mode_name(same->zero_mode)) + " and " +
                       std::string(workspace_zero_mode_name(r.zero_mode)) + ", which do not combine");
    same->zero_mode = *mode;
    same->count = expr::max(same->count, r.count);
  }
  std::vector<BufferId> ids;
  ids.reserve(merged.size());
  for (WorkspaceRequest& r : merged)
    ids.push_back(workspace(r.count, r.zero_mode, std::move(r.inner_name), r.dtype, r.device));
  return ids;
}

WRAPIR_DECL void Builder::free_workspaces(const std::vector<BufferId>& workspaces) {
  for (auto it = workspaces.rbegin(); it != workspaces.rend(); ++it) free({*it});
}

WRAPIR_DECL expr::Expr Builder::declare_symbol(std::string_view name, expr::Assumption assumption, bool unbacked,
                                               SymbolOrigin origin, std::optional<std::int64_t> hint) {
  if (auto err = check_name(name, "symbol")) throw BuildError("symbol: " + *err);
  if (names_.contains(std::string(name)))
    throw BuildError("symbol: the name " + quote_for_diagnostic(name) + " is already used");
  expr::Expr s;
  try {
    s = ctx().symbol(name, assumption, unbacked);
  } catch (const expr::Error& e) {
    throw BuildError(std::string("symbol: ") + e.what());
  }
  names_.insert(std::string(name));
  program_->symbols.push_back(SymbolDecl{s, origin, std::nullopt, {}, hint});
  return s;
}

WRAPIR_DECL GraphId Builder::subgraph(std::string name, const std::vector<Arg>& operands, const SubgraphFn& build) {
  if (names_.contains(name)) name = fresh_name(name + "_");
  names_.insert(name);
  Program sub{name, program_->context};
  Builder sb{sub, device_};
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const Arg& a = operands[i];
    if (const BufferArg* b = a.get_if<BufferArg>()) {
      check_buffer(b->buffer, "subgraph operand");
      sb.input("arg" + std::to_string(i) + "_1", layout_of(*program_, *b));
    } else if (const expr::Expr* e = a.get_if<expr::Expr>(); e && e->kind() == expr::Kind::symbol) {
      sb.declare_symbol(e->name(), e->assumption(), e->unbacked(), SymbolOrigin::input, std::nullopt);
      sub.inputs.emplace_back(*e);
    } else {
      throw BuildError("subgraph " + quote_for_diagnostic(name) + ": operand " + std::to_string(i) + " is a " +
                       arg_kind_name(a) + "; operands must be buffers or symbols");
    }
  }
  declare_shape_symbols(sub, sb);
  build(sb, std::span<const ProgramInput>(sub.inputs));
  program_->subgraphs.push_back(std::move(sub));
  return GraphId{static_cast<std::uint32_t>(program_->subgraphs.size() - 1)};
}

WRAPIR_DECL void Builder::declare_shape_symbols(Program& sub, Builder& sb) {
  for (const ProgramInput& in : sub.inputs) {
    const BufferId* id = boost::variant2::get_if<BufferId>(&in);
    if (!id) continue;
    const Layout layout = sub.buffers[id->index].layout;
    auto declare_from = [&](expr::Expr e, KeyStepKind kind, std::size_t dim) {
      if (!e.is(expr::Kind::symbol) || sub.find_symbol(e)) return;
      sb.declare_symbol(e.name(), e.assumption(), e.unbacked(), SymbolOrigin::input_shape, std::nullopt);
      sub.symbols.back().source = *id;
      sub.symbols.back().path = {KeyStep{kind, static_cast<std::int64_t>(dim)}};
    };
    for (std::size_t d = 0; d < layout.sizes.size(); ++d) declare_from(layout.sizes[d], KeyStepKind::size, d);
    for (std::size_t d = 0; d < layout.strides.size(); ++d) declare_from(layout.strides[d], KeyStepKind::stride, d);
  }
  for (const BufferDecl& b : sub.buffers) {
    auto check = [&](expr::Expr e) {
      for (expr::Expr s : expr::free_symbols(e))
        if (!sub.find_symbol(s))
          throw BuildError("subgraph " + quote_for_diagnostic(sub.name) + ": input " + quote_for_diagnostic(b.name) +
                           " has symbol " + quote_for_diagnostic(s.name()) +
                           " inside a larger expression of its layout; pass it as an operand");
    };
    for (expr::Expr e : b.layout.sizes) check(e);
    for (expr::Expr e : b.layout.strides) check(e);
    check(b.layout.storage_offset);
  }
}

WRAPIR_DECL std::vector<BufferId> Builder::outputs_like(const Program& sub, const char* who) {
  std::vector<BufferId> outputs;
  for (const ProgramOutput& o : sub.outputs) {
    const BufferArg* b = boost::variant2::get_if<BufferArg>(&o);
    if (!b || !sub.contains(b->buffer))
      throw BuildError(std::string(who) + ": subgraph " + quote_for_diagnostic(sub.name) + " must return buffers only");
    outputs.push_back(declare(fresh_name("buf"), layout_of(sub, *b), BufferRole::intermediate));
  }
  return outputs;
}

WRAPIR_DECL Layout Builder::layout_of(const Program& p, const BufferArg& arg) {
  Layout l = p.buffers[arg.buffer.index].layout;
  if (arg.view) {
    l.sizes = arg.view->sizes;
    l.strides = arg.view->strides;
    l.storage_offset = arg.view->offset;
  }
  return l;
}

WRAPIR_DECL Layout Builder::contiguous_layout(LayoutDims sizes, DType dtype, Device device) {
  try {
    return Layout::contiguous(ctx(), std::move(sizes), dtype, device);
  } catch (const expr::Error& e) {
    throw BuildError(std::string("layout: ") + e.what());
  }
}

WRAPIR_DECL void Builder::check_buffer(BufferId id, const char* who) const {
  if (!program_->contains(id))
    throw BuildError(std::string(who) + ": buffer id " + std::to_string(id.index) + " is not in program " +
                     quote_for_diagnostic(program_->name));
}

WRAPIR_DECL void Builder::check_kernel(KernelId id, const char* who) const {
  if (!program_->contains(id))
    throw BuildError(std::string(who) + ": kernel id " + std::to_string(id.index) + " is not in program " +
                     quote_for_diagnostic(program_->name));
}

WRAPIR_DECL void Builder::check_expr(expr::Expr e, const char* who) const {
  if (!e) throw BuildError(std::string(who) + ": null expression");
  if (&e.context() != &program_->ctx())
    throw BuildError(std::string(who) + ": the expression belongs to another context than the program's");
}

WRAPIR_DECL void Builder::check_op(const OpName& op, const char* who) {
  if (auto err = check_operator_name(op.text)) throw BuildError(std::string(who) + ": " + *err);
}

}  // namespace wrapir::ir
