#pragma once
// The definitions of ir/verify.hpp: included by that header in header-only
// mode, and by <wrapir/src.hpp> in separately compiled mode (see
// wrapir/detail/config.hpp). The verifier's pieces are in the
// ir/impl/verify_*.ipp files this one includes.

#include <wrapir/detail/config.hpp>
#include <wrapir/ir/detail/verifier.hpp>
#include <wrapir/ir/impl/verify_calls.ipp>
#include <wrapir/ir/impl/verify_control.ipp>
#include <wrapir/ir/impl/verify_liveness.ipp>
#include <wrapir/ir/impl/verify_tables.ipp>
#include <wrapir/ir/impl/verify_views.ipp>
#include <wrapir/ir/verify.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace wrapir::ir {

WRAPIR_DECL std::string to_string(const Finding& f) {
  std::string s;
  if (!f.graph_path.empty()) {
    s += f.graph_path;
    s += ": ";
  }
  if (f.line) {
    s += "line ";
    s += std::to_string(*f.line);
    s += " (";
    s += f.kind;
    s += ')';
  } else {
    s += f.kind;
  }
  if (!f.subject.empty()) {
    s += ": ";
    s += f.subject;
  }
  s += ": ";
  s += f.message;
  return s;
}

WRAPIR_DECL std::vector<Finding> verify(const Program& program, const VerifyOptions& options) {
  std::vector<Finding> findings;
  detail::verifier::FreeSymbolCache cache;
  detail::verifier::ProgramVerifier root(program, std::string(), program.context.get(), cache, findings, 0, options,
                                         nullptr);
  root.run();
  return findings;
}

WRAPIR_DECL std::vector<RuntimeCheck> runtime_checks(const Program& program, const VerifyOptions& options) {
  std::vector<Finding> findings;
  std::vector<RuntimeCheck> checks;
  detail::verifier::FreeSymbolCache cache;
  detail::verifier::ProgramVerifier root(program, std::string(), program.context.get(), cache, findings, 0, options,
                                         &checks);
  root.run();
  return checks;
}

namespace detail::verifier {

WRAPIR_DECL void ProgramVerifier::run() {
  check_tables();
  check_body();
  check_outputs();
  check_subgraphs();
}

WRAPIR_DECL void ProgramVerifier::report(std::string subject, std::string message) {
  out_.push_back(Finding{path_, at_ == no_line ? std::nullopt : std::optional<std::size_t>(at_), kind_,
                         std::move(subject), std::move(message)});
}

WRAPIR_DECL void ProgramVerifier::check_body() {
  const std::size_t first_line_finding = out_.size();
  for (std::size_t i = 0; i < p_.body.size(); ++i) {
    at_ = i;
    ++site_;
    const Line& line = p_.body[i];
    if (line.valueless_by_exception()) {
      kind_ = "<valueless>";
      report("", "the line holds no line kind (an exception left it valueless)");
      continue;
    }
    kind_ = kind_name(line);
    std::visit([this](const auto& l) { this->check_line(l); }, line);
  }
  // What the end of the body leaves open, reported at the line that
  // opened it.
  for (const OpenScope& s : scopes_) {
    at_ = s.line;
    kind_ = enter_name(s.scope);
    report("", "is never closed: no " + std::string(exit_name(s.scope)) + " matches it");
  }
  for (std::uint32_t i = 0; i < buffers_.size(); ++i) {
    if (buffers_[i].life != Life::offered) continue;
    at_ = buffers_[i].ended_at;
    kind_ = FreeIfNotReused::kind;
    report(buffer_subject(BufferId{i}), "marked reused, but no Reuse line takes its storage");
  }
  at_ = no_line;
  auto by_line = [](const Finding& a, const Finding& b) { return *a.line < *b.line; };
  const auto first = out_.begin() + static_cast<std::ptrdiff_t>(first_line_finding);
  if (!std::is_sorted(first, out_.end(), by_line)) std::stable_sort(first, out_.end(), by_line);
}

}  // namespace detail::verifier

}  // namespace wrapir::ir
