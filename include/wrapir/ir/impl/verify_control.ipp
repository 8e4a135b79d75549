#pragma once
// The verifier's control flow: scopes, Conditional and WhileLoop against their
// subgraphs, the program's outputs, nested subgraphs. Definitions of
// ir/detail/verifier.hpp: included by ir/impl/verify.ipp (header-only mode) or
// <wrapir/src.hpp> (separately compiled mode).

#include <wrapir/detail/config.hpp>
#include <wrapir/ir/detail/verifier.hpp>
#include <boost/variant2/variant.hpp>

#include <optional>
#include <string>
#include <vector>

namespace wrapir::ir::detail::verifier {

WRAPIR_DECL void ProgramVerifier::close_scope(ScopeKind s) {
  if (scopes_.empty()) {
    report("", "closes no open scope: there is no " + std::string(enter_name(s)) + " before it");
    return;
  }
  const OpenScope top = scopes_.back();
  scopes_.pop_back();
  if (top.scope != s)
    report("", "closes the " + std::string(enter_name(top.scope)) + " of line " + std::to_string(top.line) +
                   "; only " + std::string(exit_name(top.scope)) + " closes it");
}

WRAPIR_DECL void ProgramVerifier::use_operands(const std::vector<Arg>& operands, const char* what) {
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const Arg& a = operands[i];
    if (a.holds<BufferArg>() || a.holds<expr::Expr>())
      use_arg(a, Where{what, i});
    else
      report("", std::string(what) + " " + std::to_string(i) + " is " + describe_arg(a) +
                     "; subgraphs take buffers and symbolic integers");
  }
}

WRAPIR_DECL std::size_t ProgramVerifier::rank_of(const BufferArg& a) const {
  return a.view ? a.view->sizes.size() : p_.buffers[a.buffer.index].layout.rank();
}

WRAPIR_DECL void ProgramVerifier::match_inputs(const Program& g, const std::string& subject, const std::vector<const Arg*>& operands,
    std::string_view caller) {
  if (g.inputs.size() != operands.size()) {
    report(subject, "takes " + std::to_string(g.inputs.size()) + " inputs but the " + std::string(caller) +
                        " passes " + std::to_string(operands.size()));
    return;
  }
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const Arg& a = *operands[i];
    const std::string input = "input " + std::to_string(i);
    if (const BufferId* in = boost::variant2::get_if<BufferId>(&g.inputs[i])) {
      const BufferArg* b = a.get_if<BufferArg>();
      if (!b) {
        report(subject, input + " is a buffer but the " + std::string(caller) + " passes " + describe_arg(a));
        continue;
      }
      if (!has(b->buffer) || in->index >= g.buffers.size()) continue;
      const Layout& want = g.buffers[in->index].layout;
      const Layout& got = p_.buffers[b->buffer.index].layout;
      if (want.dtype != got.dtype)
        report(subject, input + " has dtype " + std::string(name(want.dtype)) + " but the " + std::string(caller) +
                            " passes " + std::string(name(got.dtype)));
      if (want.device != got.device)
        report(subject, input + " is on " + to_string(want.device) + " but the " + std::string(caller) +
                            " passes a buffer on " + to_string(got.device));
      if (want.rank() != rank_of(*b))
        report(subject, input + " has rank " + std::to_string(want.rank()) + " but the " + std::string(caller) +
                            " passes a buffer of rank " + std::to_string(rank_of(*b)));
    } else if (!a.holds<expr::Expr>()) {
      report(subject, input + " is a symbolic integer but the " + std::string(caller) + " passes " +
                          describe_arg(a));
    }
  }
}

WRAPIR_DECL std::optional<DType> ProgramVerifier::output_dtype(const Program& g, std::size_t i) {
  const BufferArg* b = boost::variant2::get_if<BufferArg>(&g.outputs[i]);
  if (!b || b->buffer.index >= g.buffers.size()) return std::nullopt;
  return g.buffers[b->buffer.index].layout.dtype;
}

WRAPIR_DECL const char* ProgramVerifier::output_kind(const ProgramOutput& o) {
  if (boost::variant2::holds_alternative<None>(o)) return "None";
  if (boost::variant2::holds_alternative<expr::Expr>(o)) return "a symbolic integer";
  return "a buffer";
}

WRAPIR_DECL void ProgramVerifier::check_fields(const Conditional& l) {
  if (const BufferArg* b = l.predicate.get_if<BufferArg>()) {
    if (use_buffer_arg(*b, Where{"the predicate"})) {
      const Layout& layout = p_.buffers[b->buffer.index].layout;
      if (layout.dtype != DType::bool_)
        report(buffer_subject(b->buffer), "is the predicate but has dtype " + std::string(name(layout.dtype)) +
                                              "; a predicate buffer is bool");
      for (const expr::Expr s : sizes_of(*b))
        if (s && !s.is_integer(1)) {
          report(buffer_subject(b->buffer),
                 "is the predicate but has a size " + printed(s) + "; a predicate buffer holds one element");
          break;
        }
    }
  } else if (const expr::Expr* e = l.predicate.get_if<expr::Expr>()) {
    check_expr(*e, Where{"the predicate"});
  } else {
    report("", "the predicate is " + describe_arg(l.predicate) +
                   "; it must be a bool buffer of one element or a symbolic integer");
  }
  use_operands(l.operands, "operand");
  std::vector<const Arg*> operands;
  operands.reserve(l.operands.size());
  for (const Arg& a : l.operands) operands.push_back(&a);
  for (const GraphId g : {l.true_graph, l.false_graph}) {
    if (report_missing(g)) continue;
    const Program& sub = p_.subgraphs[g.index];
    const auto subject = [&] { return graph_subject(g); };
    match_inputs(sub, subject(), operands, "Conditional");
    if (sub.outputs.size() != l.outputs.size()) {
      report(subject(), "returns " + std::to_string(sub.outputs.size()) + " outputs but the Conditional has " +
                          std::to_string(l.outputs.size()));
      continue;
    }
    for (std::size_t i = 0; i < sub.outputs.size(); ++i) {
      if (!boost::variant2::holds_alternative<BufferArg>(sub.outputs[i])) {
        report(subject(), "output " + std::to_string(i) + " is " + output_kind(sub.outputs[i]) +
                            "; a Conditional's outputs are buffers");
        continue;
      }
      const auto dtype = output_dtype(sub, i);
      if (dtype && has(l.outputs[i]) && *dtype != p_.buffers[l.outputs[i].index].layout.dtype)
        report(subject(), "output " + std::to_string(i) + " has dtype " + std::string(name(*dtype)) +
                            " but the Conditional's output " + buffer_name(l.outputs[i].index) + " has dtype " +
                            std::string(name(p_.buffers[l.outputs[i].index].layout.dtype)));
    }
  }
}

WRAPIR_DECL void ProgramVerifier::check_fields(const WhileLoop& l) {
  use_operands(l.carried, "carried value");
  use_operands(l.additional, "additional value");
  std::vector<const Arg*> operands;
  operands.reserve(l.carried.size() + l.additional.size());
  for (const Arg& a : l.carried) operands.push_back(&a);
  for (const Arg& a : l.additional) operands.push_back(&a);
  if (!report_missing(l.cond_graph)) {
    const Program& cond = p_.subgraphs[l.cond_graph.index];
    const auto subject = [&] { return graph_subject(l.cond_graph); };
    match_inputs(cond, subject(), operands, "WhileLoop");
    if (cond.outputs.size() != 1)
      report(subject(), "returns " + std::to_string(cond.outputs.size()) +
                          " outputs; a loop condition returns one bool buffer");
    else if (!boost::variant2::holds_alternative<BufferArg>(cond.outputs[0]))
      report(subject(), "returns " + std::string(output_kind(cond.outputs[0])) +
                          "; a loop condition returns one bool buffer");
    else if (const auto dtype = output_dtype(cond, 0); dtype && *dtype != DType::bool_)
      report(subject(),
             "returns " + with_article(name(*dtype)) + " buffer; a loop condition returns one bool buffer");
  }
  if (!report_missing(l.body_graph)) {
    const Program& body = p_.subgraphs[l.body_graph.index];
    const auto subject = [&] { return graph_subject(l.body_graph); };
    match_inputs(body, subject(), operands, "WhileLoop");
    if (body.outputs.size() != l.carried.size()) {
      report(subject(), "returns " + std::to_string(body.outputs.size()) + " outputs but the WhileLoop carries " +
                          std::to_string(l.carried.size()) + " values");
    } else {
      for (std::size_t i = 0; i < body.outputs.size(); ++i) {
        const BufferArg* carried = l.carried[i].get_if<BufferArg>();
        const bool out_is_buffer = boost::variant2::holds_alternative<BufferArg>(body.outputs[i]);
        const std::string output = "output " + std::to_string(i);
        if (carried && !out_is_buffer) {
          report(subject(), output + " is " + output_kind(body.outputs[i]) + " but carried value " +
                              std::to_string(i) + " is a buffer");
        } else if (!carried && l.carried[i].holds<expr::Expr>() &&
                   !boost::variant2::holds_alternative<expr::Expr>(body.outputs[i])) {
          report(subject(), output + " is " + output_kind(body.outputs[i]) + " but carried value " +
                              std::to_string(i) + " is a symbolic integer");
        } else if (carried && has(carried->buffer)) {
          const auto dtype = output_dtype(body, i);
          const DType want = p_.buffers[carried->buffer.index].layout.dtype;
          if (dtype && *dtype != want)
            report(subject(), output + " has dtype " + std::string(name(*dtype)) + " but carried value " +
                                std::to_string(i) + " has dtype " + std::string(name(want)));
        }
      }
    }
  }
  if (l.outputs.size() != l.carried.size()) {
    report("", "has " + std::to_string(l.outputs.size()) + " outputs but carries " +
                   std::to_string(l.carried.size()) + " values");
  } else {
    for (std::size_t i = 0; i < l.outputs.size(); ++i) {
      const BufferArg* carried = l.carried[i].get_if<BufferArg>();
      if (!carried || !has(carried->buffer) || !has(l.outputs[i])) continue;
      const DType want = p_.buffers[carried->buffer.index].layout.dtype;
      const DType got = p_.buffers[l.outputs[i].index].layout.dtype;
      if (want != got)
        report(buffer_subject(l.outputs[i]), "is output " + std::to_string(i) + " with dtype " +
                                                 std::string(name(got)) + " but carried value " +
                                                 std::to_string(i) + " has dtype " + std::string(name(want)));
    }
  }
}

WRAPIR_DECL void ProgramVerifier::check_fields(const EnterStreamContext& l) {
  if (l.stream == 0) report("", "enters stream 0, the default stream; side streams are numbered from 1");
}

WRAPIR_DECL void ProgramVerifier::check_fields(const Comment& l) {
  if (!is_single_line_text(l.text))
    report("", "the text " + quote_for_diagnostic(l.text) +
                   " has a line break or control character; a comment is one line");
}

WRAPIR_DECL void ProgramVerifier::check_outputs() {
  kind_ = "outputs";
  at_ = no_line;
  for (std::size_t i = 0; i < p_.outputs.size(); ++i) {
    ++site_;
    const ProgramOutput& o = p_.outputs[i];
    const std::string output = "output " + std::to_string(i);
    if (const BufferArg* b = boost::variant2::get_if<BufferArg>(&o)) {
      if (report_missing(b->buffer)) continue;
      if (p_.buffers[b->buffer.index].multi_output)
        report(buffer_subject(b->buffer),
               "is " + output + " but holds a multi-output result, which is never returned");
      if (const auto d = death_at_end(b->buffer.index)) {
        if (d->life == Life::undefined && d->buffer == b->buffer.index)
          report(buffer_subject(b->buffer), output + " is never defined");
        else
          report(buffer_subject(b->buffer),
                 output + " is not live at the end of the program: " + event(*d, b->buffer.index));
      }
      if (b->view && check_view(*b->view, Where{"output", i})) check_arg_view_extent(*b, Where{"output", i});
    } else if (const expr::Expr* e = boost::variant2::get_if<expr::Expr>(&o)) {
      check_expr(*e, Where{"output", i});
    }
  }
}

WRAPIR_DECL void ProgramVerifier::check_subgraphs() {
  for (const Program& g : p_.subgraphs) {
    std::string path = path_.empty() ? shown(g.name) : path_ + "/" + shown(g.name);
    if (depth_ + 1 >= max_graph_depth) {
      kind_ = "subgraphs";
      report("subgraph " + shown(g.name),
             "is nested more than " + std::to_string(max_graph_depth) + " levels deep and was not verified");
      continue;
    }
    ProgramVerifier sub(g, std::move(path), root_ctx_, cache_, out_, depth_ + 1, options_,
                                  runtime_checks_);
    sub.run();
  }
}

}  // namespace wrapir::ir::detail::verifier
