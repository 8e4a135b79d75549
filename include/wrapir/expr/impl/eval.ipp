#pragma once
/// \file
/// Definitions of <wrapir/expr/eval.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/print_python.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace wrapir::expr {

WRAPIR_DECL Bindings& Bindings::set(Expr symbol, std::int64_t value) {
  if (const std::size_t at = position(symbol); at != values_.size()) {
    values_[at].second = value;
    return *this;
  }
  values_.emplace_back(symbol, value);
  if (values_.size() == indexed_from) {
    index_.reserve(2 * indexed_from);
    for (std::size_t i = 0; i < values_.size(); ++i) index_.emplace(values_[i].first.node(), i);
  } else if (values_.size() > indexed_from) {
    index_.emplace(symbol.node(), values_.size() - 1);
  }
  return *this;
}

namespace detail {

__extension__ typedef __int128 eval_wide;

/// Deeper trees than this are refused rather than risking the stack (a
/// frame is about 4 KiB under AddressSanitizer). Wrapper expressions are
/// a few levels deep; the parser accepts 256.
inline constexpr int max_eval_depth = 512;

/// Shortened text of an expression for messages.
inline std::string quote(Expr e) {
  // Huge trees are named by kind: printing them would cost more than the
  // evaluation that failed.
  if (e.tree_size() > 256) return "a " + std::string(kind_name(e.kind())) + " of " + std::to_string(e.tree_size()) + " nodes";
  std::string text = print_python(e);
  if (text.size() > 120) text = text.substr(0, 117) + "...";
  return "`" + text + "`";
}

class Evaluator {
 public:
  explicit Evaluator(const Bindings& b) : bindings_(b) {}

  bool run(Expr e, std::int64_t& out, int depth) {
    if (depth > max_eval_depth) return fail("expression is nested deeper than " + std::to_string(max_eval_depth) + " levels");
    switch (e.kind()) {
      case Kind::integer: out = e.value(); return true;
      case Kind::symbol: {
        auto v = bindings_.get(e);
        if (!v) return fail("unbound symbol '" + std::string(e.name()) + "'");
        if (!satisfies(e.assumption(), *v))
          return fail("symbol '" + std::string(e.name()) + "' = " + std::to_string(*v) + " breaks its assumption (" +
                      std::string(assumption_name(e.assumption())) + ")");
        out = *v;
        return true;
      }
      case Kind::add: {
        eval_wide sum = 0;  // n int64 terms cannot overflow 128 bits
        for (Expr t : e.operands()) {
          std::int64_t v = 0;
          if (!run(t, v, depth + 1)) return false;
          sum += v;
        }
        return narrow(sum, e, out);
      }
      case Kind::mul: {
        // Every factor is evaluated, so that errors do not depend on the
        // order of operands; then a zero factor makes the node 0 however
        // large the others are.
        std::vector<std::int64_t> values;
        values.reserve(e.operands().size());
        for (Expr f : e.operands()) {
          std::int64_t v = 0;
          if (!run(f, v, depth + 1)) return false;
          values.push_back(v);
        }
        for (std::int64_t v : values) {
          if (v == 0) {
            out = 0;
            return true;
          }
        }
        eval_wide product = 1;
        for (std::int64_t v : values) {
          product *= v;  // |product| <= 2^63 before, so this fits in 127 bits
          const eval_wide limit = static_cast<eval_wide>(1) << 63;
          if (product > limit || product < -limit) return overflow(e);
        }
        return narrow(product, e, out);
      }
      case Kind::pow: {
        std::int64_t b = 0, n = 0;
        if (!run(e.operand(0), b, depth + 1) || !run(e.operand(1), n, depth + 1)) return false;
        if (n < 0) return fail("negative exponent " + std::to_string(n) + " in " + quote(e));
        if (!checked::pow(b, n, out)) return overflow(e);
        return true;
      }
      case Kind::floor_div:
      case Kind::clean_div: {
        std::int64_t a = 0, b = 0;
        if (!run(e.operand(0), a, depth + 1) || !run(e.operand(1), b, depth + 1)) return false;
        if (b == 0) return fail("division by zero in " + quote(e));
        if (!checked::floor_div(a, b, out)) return overflow(e);
        if (e.is(Kind::clean_div) && ::wrapir::python_mod(a, b) != 0)
          return fail("CleanDiv is not exact in " + quote(e) + ": " + std::to_string(b) + " does not divide " +
                      std::to_string(a));
        return true;
      }
      case Kind::modular_indexing: {
        std::int64_t x = 0, d = 0, m = 0, q = 0;
        if (!run(e.operand(0), x, depth + 1) || !run(e.operand(1), d, depth + 1) || !run(e.operand(2), m, depth + 1))
          return false;
        if (d == 0) return fail("division by zero in " + quote(e));
        if (m == 0) return fail("modulo by zero in " + quote(e));
        if (!checked::floor_div(x, d, q)) return overflow(e);
        out = ::wrapir::python_mod(q, m);
        return true;
      }
      case Kind::python_mod:
      case Kind::mod: {
        std::int64_t p = 0, q = 0;
        if (!run(e.operand(0), p, depth + 1) || !run(e.operand(1), q, depth + 1)) return false;
        if (q == 0) return fail("modulo by zero in " + quote(e));
        if (e.is(Kind::mod) && (p < 0 || q < 0))
          return fail("Mod is defined only for a non-negative dividend and a positive modulus, got " + std::to_string(p) +
                      " % " + std::to_string(q) + " in " + quote(e));
        out = ::wrapir::python_mod(p, q);
        return true;
      }
      case Kind::min:
      case Kind::max: {
        bool first = true;
        for (Expr a : e.operands()) {
          std::int64_t v = 0;
          if (!run(a, v, depth + 1)) return false;
          if (first || (e.is(Kind::min) ? v < out : v > out)) out = v;
          first = false;
        }
        return true;
      }
      case Kind::eq:
      case Kind::ne:
      case Kind::lt:
      case Kind::le:
      case Kind::gt:
      case Kind::ge: {
        std::int64_t a = 0, b = 0;
        if (!run(e.operand(0), a, depth + 1) || !run(e.operand(1), b, depth + 1)) return false;
        out = compare_values(e.kind(), a, b) ? 1 : 0;
        return true;
      }
      case Kind::where: {
        std::int64_t c = 0;
        if (!run(e.operand(0), c, depth + 1)) return false;
        return run(e.operand(c != 0 ? 1 : 2), out, depth + 1);
      }
      case Kind::align: {
        std::int64_t x = 0;
        if (!run(e.operand(0), x, depth + 1)) return false;
        if (!checked::align_up(x, e.value(), out)) return overflow(e);
        return true;
      }
      case Kind::identity: return run(e.operand(0), out, depth + 1);
    }
    return fail("unknown expression kind");
  }

  static constexpr bool compare_values(Kind k, std::int64_t a, std::int64_t b) noexcept {
    switch (k) {
      case Kind::eq: return a == b;
      case Kind::ne: return a != b;
      case Kind::lt: return a < b;
      case Kind::le: return a <= b;
      case Kind::gt: return a > b;
      case Kind::ge: return a >= b;
      default: return false;
    }
  }

  std::string message;

 private:
  bool fail(std::string m) {
    message = std::move(m);
    return false;
  }
  bool overflow(Expr e) { return fail("integer overflow: the value of " + quote(e) + " does not fit in int64"); }
  bool narrow(eval_wide v, Expr e, std::int64_t& out) {
    if (v > INT64_MAX || v < INT64_MIN) return overflow(e);
    out = static_cast<std::int64_t>(v);
    return true;
  }

  const Bindings& bindings_;
};

}  // namespace detail

WRAPIR_DECL Result<std::int64_t> eval(Expr e, const Bindings& bindings) {
  if (!e) return Diagnostic{"cannot evaluate a null expression"};
  detail::Evaluator ev(bindings);
  std::int64_t out = 0;
  if (!ev.run(e, out, 0)) return Diagnostic{std::move(ev.message)};
  return out;
}

WRAPIR_DECL Result<std::int64_t> eval_with(Expr e,
                                      std::initializer_list<std::pair<std::string_view, std::int64_t>> by_name) {
  if (!e) return Diagnostic{"cannot evaluate a null expression"};
  Bindings b;
  for (const auto& [name, value] : by_name) {
    Expr s = e.context().find_symbol(name);
    if (!s) return Diagnostic{"no symbol named '" + std::string(name) + "' exists in this context"};
    b.set(s, value);
  }
  return eval(e, b);
}

}  // namespace wrapir::expr