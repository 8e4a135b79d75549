#pragma once
/// \file
/// One work budget for all the expressions of a document that a loader
/// reads (the JSON form, io/json.hpp, and the text form, io/text.hpp).
///
/// `expr::parse` bounds the work of one expression (`ParseOptions::
/// max_lookups`, 2^21 node lookups, about a second at worst), but a program
/// holds many: a document of a thousand expressions, each just under that
/// limit, would take a thousand times as long. So the expressions of one
/// document share one budget: each may use at most what the ones before it
/// left (and never more than its own limit). Flat expression text costs
/// under one lookup per byte, so the default, 2^21 plus one per byte of the
/// document, refuses only documents that nest large subexpressions deeply
/// again and again, and keeps the work of loading linear in its size.

#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/parse.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wrapir::io::detail {

class ExpressionBudget {
 public:
  /// What every document may spend, however short: one expression's limit.
  static constexpr std::uint64_t base_lookups = expr::ParseOptions{}.max_lookups;

  /// The default budget of a document of `document_bytes` bytes.
  [[nodiscard]] static constexpr std::uint64_t default_for(std::size_t document_bytes) noexcept {
    const auto bytes = static_cast<std::uint64_t>(document_bytes);
    return bytes > UINT64_MAX - base_lookups ? UINT64_MAX : base_lookups + bytes;
  }

  /// `limit`, or the default for the document's size; `option` names the
  /// option that sets it, for diagnostics (`JsonLoadOptions::max_expression_lookups`).
  ExpressionBudget(std::size_t document_bytes, std::optional<std::uint64_t> limit, std::string_view option) noexcept
      : total_(limit.value_or(default_for(document_bytes))), left_(total_), option_(option) {}

  /// Parses `text` in `ctx` as `expr::parse` does, within what is left of
  /// the budget. When the budget runs out the diagnostic says so (and where,
  /// as `expr::parse` would), and every later parse fails at once.
  [[nodiscard]] Result<expr::Expr> parse(expr::Context& ctx, std::string_view text, expr::ParseOptions options) {
    const bool budget_binds = left_ < options.max_lookups;
    options.max_lookups = std::min(options.max_lookups, left_);
    const std::uint64_t before = ctx.lookups();
    Result<expr::Expr> parsed = Diagnostic{"unreachable"};
    try {
      parsed = expr::parse(ctx, text, options);
    } catch (...) {
      charge(ctx.lookups() - before);
      throw;
    }
    const std::uint64_t used = ctx.lookups() - before;
    charge(used);
    if (!parsed && budget_binds && used > options.max_lookups)
      return Diagnostic{exhausted_message(), parsed.error().column};
    return parsed;
  }

  /// What is left, in node lookups.
  [[nodiscard]] std::uint64_t left() const noexcept { return left_; }

  /// "the expressions of this document take more than N node lookups together (OPTION)".
  [[nodiscard]] std::string exhausted_message() const {
    return "the expressions of this document take more than " + std::to_string(total_) +
           " node lookups together (" + std::string(option_) +
           "): large subexpressions nest under too many operators, again and again";
  }

 private:
  void charge(std::uint64_t used) noexcept { left_ -= std::min(used, left_); }

  std::uint64_t total_;
  std::uint64_t left_;
  std::string_view option_;
};

}  // namespace wrapir::io::detail
