#pragma once
/// \file
/// Definitions of <wrapir/expr/print_python.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/print_python.hpp>
#include <wrapir/expr/bounds.hpp>
#include <wrapir/expr/detail/print_engine.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>

namespace wrapir::expr {

namespace detail::print {

/// Where a ceiling division's numerator keeps its other terms: the indices
/// of the numerator's terms that the ceiling form leaves out.
struct CeilParts {
  std::size_t constant = 0;            // the `c - 1` or `-1` term
  std::size_t divisor = static_cast<std::size_t>(-1);  // the `d` term (symbolic divisor), else npos
};

/// Whether monomial `d` divides monomial `t` exactly (coefficients and
/// powers), as `exact_quotient` decides it, without building nodes.
inline bool divides_monomial(Expr d, Expr t) noexcept {
  auto coefficient = [](Expr m) { return m.is(Kind::mul) && m.operand(0).is_integer() ? m.operand(0).value() : 1; };
  // By reference: the span may point at `m` itself, which is `d` or `t`.
  auto factors = [](const Expr& m) {
    auto ops = m.is(Kind::mul) ? m.operands() : std::span<const Expr>(&m, 1);
    return !ops.empty() && ops[0].is_integer() ? ops.subspan(1) : ops;
  };
  auto base_and_power = [](Expr f, Expr& base) {
    if (f.is(Kind::pow) && f.operand(1).is_integer()) {
      base = f.operand(0);
      return f.operand(1).value();
    }
    base = f;
    return std::int64_t{1};
  };
  const std::int64_t cd = coefficient(d), ct = coefficient(t);
  if (cd == 0 || (cd == -1 && ct == INT64_MIN) || ct % cd != 0) return false;
  for (Expr fd : factors(d)) {
    Expr bd;
    const std::int64_t pd = base_and_power(fd, bd);
    bool found = false;
    for (Expr ft : factors(t)) {
      Expr bt;
      const std::int64_t pt = base_and_power(ft, bt);
      if (bt == bd) {
        found = pt >= pd;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

/// Whether `FloorDiv(n, d)` is the canonical form of a ceiling division
/// `ceil(rest / d)`, and which terms of `n` are not `rest`.
inline bool ceil_parts(Expr div, CeilParts& parts) noexcept {
  const Expr n = div.operand(0), d = div.operand(1);
  if (!n.is(Kind::add)) return false;
  const auto terms = n.operands();
  std::size_t constants = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].is_integer()) {
      ++constants;
      parts.constant = i;
    }
  }
  if (constants != 1) return false;
  const std::int64_t constant = terms[parts.constant].value();
  if (d.is_integer()) {
    // terms.size() >= 2, so at least one term remains.
    parts.divisor = static_cast<std::size_t>(-1);
    const std::int64_t c = d.value();
    if (c < 2 || constant != c - 1) return false;
    // Only where the text parses back to this very node: the canonical
    // constructors rewrite `(-a) // c` to `-((a + c - 1) // c)` only when
    // every term of `a` is positive, and they would first cancel a common
    // factor of `a` and `c` (`-((2*s0) // -(4))` reads back as
    // `(s0 + 1) // 2`). Otherwise the plain `(a + c - 1) // c` is printed.
    std::uint64_t g = static_cast<std::uint64_t>(c);
    for (std::size_t i = 0; i < terms.size(); ++i) {
      if (i == parts.constant) continue;
      const Expr t = terms[i];
      std::int64_t coefficient = 1;
      if (t.is(Kind::mul) && t.operand(0).is_integer()) coefficient = t.operand(0).value();
      if (coefficient <= 0) return false;
      if (coefficient == 1) {
        g = 1;
        continue;
      }
      for (std::uint64_t a = static_cast<std::uint64_t>(coefficient); a != 0;) {
        const std::uint64_t r = g % a;
        g = a;
        a = r;
      }
    }
    return g == 1;
  }
  if (d.is(Kind::add) || constant != -1 || terms.size() < 3) return false;
  parts.divisor = static_cast<std::size_t>(-1);
  for (std::size_t i = 0; i < terms.size(); ++i)
    if (terms[i] == d) parts.divisor = i;
  if (parts.divisor == static_cast<std::size_t>(-1)) return false;
  // As for literal divisors, only where the text reads back as this node:
  // every other term positive (else `(-a) // d` stays as it is) and none a
  // multiple of `d` (else the quotient leaves the division).
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (i == parts.constant || i == parts.divisor) continue;
    const Expr t = terms[i];
    if (t.is(Kind::mul) && t.operand(0).is_integer() && t.operand(0).value() <= 0) return false;
    if (divides_monomial(d, t)) return false;
  }
  // floor((r + d - 1) / d) == -((r) // -(d)) needs d > 0.
  return bounds(d).known_positive();
}

class PythonLang {
 public:
  /// `c*x*y`, `a - 2*b - 5`: factors are powers or atoms (a floor division
  /// or a negative factor is parenthesised), and a sum may subtract
  /// 9223372036854775808 like any other magnitude.
  static constexpr ArithmeticSpelling arithmetic{Prec::pow, true};

  static void append_integer(std::string& out, std::int64_t v) {
    if (v < 0) out.push_back('-');
    append_unsigned(out, magnitude_of(v));
  }
  static void append_magnitude(std::string& out, std::int64_t v) { append_unsigned(out, magnitude_of(v)); }

  static Form form(Expr e, std::uint8_t) noexcept {
    if (e.is(Kind::floor_div) || e.is(Kind::clean_div)) {
      CeilParts parts;
      if (ceil_parts(e, parts)) {
        // Hand the special terms to expand (as index + 1; 0: none).
        return {Prec::unary, true, static_cast<std::uint32_t>(parts.constant + 1),
                parts.divisor == npos ? 0u : static_cast<std::uint32_t>(parts.divisor + 1)};
      }
      // `a // b` starts with whatever its (unparenthesised) numerator starts
      // with. Look a bounded way down a chain of divisions: the flag is only
      // cosmetic (see Piece::rhs).
      Expr n = peel(e.operand(0));
      for (int steps = 0; steps < 32 && (n.is(Kind::floor_div) || n.is(Kind::clean_div)) && !ceil_parts(n, parts);
           ++steps)
        n = peel(n.operand(0));
      const bool unresolved = (n.is(Kind::floor_div) || n.is(Kind::clean_div)) && !ceil_parts(n, parts);
      const Form f = unresolved ? Form{Prec::mul, false} : basic_form(n);
      return {Prec::mul, f.prec >= Prec::mul && f.leading_minus};
    }
    return basic_form(e);
  }

  template <class Sink>
  static void expand(Expr e, const Form& form, std::uint8_t, Sink& out) {
    switch (e.kind()) {
      case Kind::integer: out.integer(e.value()); return;
      case Kind::symbol: out.text(e.name()); return;
      case Kind::add: print::sum<arithmetic>(e.operands(), out); return;
      case Kind::mul: print::product<arithmetic>(e.operands(), out); return;
      case Kind::pow:
        out.operand(e.operand(0), Prec::atom);
        out.text("**");
        out.operand(e.operand(1), Prec::atom);
        return;
      case Kind::floor_div:
      case Kind::clean_div: {
        if (form.data1 != 0) {  // a ceiling division, see form()
          const CeilParts parts{form.data1 - std::size_t{1}, form.data2 == 0 ? npos : form.data2 - std::size_t{1}};
          const auto terms = e.operand(0).operands();
          out.text("-((");
          if (terms.size() - (parts.divisor == npos ? 1 : 2) == 1) {
            for (std::size_t i = 0; i < terms.size(); ++i)
              if (i != parts.constant && i != parts.divisor) out.operand(terms[i], Prec::lowest);
          } else {
            print::sum<arithmetic>(terms, out, parts.constant, parts.divisor);
          }
          out.text(") // -(");
          if (parts.divisor == npos) out.integer(e.operand(1).value());
          else out.operand(e.operand(1), Prec::lowest);
          out.text("))");
          return;
        }
        out.operand(e.operand(0), Prec::mul);
        out.text(" // ");
        out.operand(e.operand(1), Prec::unary, true);
        return;
      }
      case Kind::python_mod:
      case Kind::mod:
        out.text("(");
        out.operand(e.operand(0), dividend_need(e.operand(0)));
        out.text(" % ");
        out.operand(e.operand(1), Prec::unary, true);
        out.text(")");
        return;
      case Kind::modular_indexing:
        if (e.operand(1).is_integer(1)) {
          out.text("(");
          out.operand(e.operand(0), dividend_need(e.operand(0)));
        } else {
          out.text("((");
          out.operand(e.operand(0), Prec::mul);
          out.text(" // ");
          out.operand(e.operand(1), Prec::unary, true);
          out.text(")");
        }
        out.text(" % ");
        out.operand(e.operand(2), Prec::unary, true);
        out.text(")");
        return;
      case Kind::min:
      case Kind::max:
        out.text(e.is(Kind::min) ? "min(" : "max(");
        for (std::size_t i = 0; i < e.operands().size(); ++i) {
          if (i > 0) out.text(", ");
          out.operand(e.operand(i), Prec::lowest);
        }
        out.text(")");
        return;
      case Kind::eq:
      case Kind::ne:
      case Kind::lt:
      case Kind::le:
      case Kind::gt:
      case Kind::ge:
        // Python chains comparisons: an operand that is one needs parentheses.
        out.operand(e.operand(0), Prec::add);
        out.text(comparison_operator(e.kind()));
        out.operand(e.operand(1), Prec::add);
        return;
      case Kind::where:
        out.text("(");
        out.operand(e.operand(1), Prec::lowest);
        out.text(" if ");
        out.operand(e.operand(0), Prec::lowest);
        out.text(" else ");
        out.operand(e.operand(2), Prec::lowest);
        out.text(")");
        return;
      case Kind::align:
        out.text("align(");
        out.operand(e.operand(0), Prec::lowest);
        if (e.value() != 64) {
          out.text(", ");
          out.integer(e.value());
        }
        out.text(")");
        return;
      case Kind::identity: out.operand(e.operand(0), Prec::lowest); return;
    }
  }

 private:
  static std::string_view comparison_operator(Kind k) noexcept {
    switch (k) {
      case Kind::eq: return " == ";
      case Kind::ne: return " != ";
      case Kind::lt: return " < ";
      case Kind::le: return " <= ";
      case Kind::gt: return " > ";
      default: return " >= ";
    }
  }

  /// The form of anything but a plain floor division.
  static Form basic_form(Expr e) noexcept {
    switch (e.kind()) {
      case Kind::integer: return e.value() < 0 ? Form{Prec::unary, true} : Form{Prec::atom, false};
      case Kind::add: return {Prec::add, false};
      case Kind::mul: {
        const Expr c = e.operand(0);
        if (c.is_integer(-1) && e.operands().size() == 2) return {Prec::unary, true};
        return {Prec::mul, c.is_integer() && c.value() < 0};
      }
      case Kind::pow: return {Prec::pow, false};
      case Kind::floor_div:
      case Kind::clean_div: return {Prec::unary, true};  // a ceiling; plain ones are handled by form
      case Kind::eq:
      case Kind::ne:
      case Kind::lt:
      case Kind::le:
      case Kind::gt:
      case Kind::ge: return {Prec::cmp, false};
      default: return {Prec::atom, false};  // symbols, calls, `(p % q)`, `(p if c else q)`
    }
  }

  /// The left operand of `%`: a product may stand bare (`(2*s0 % 7)`), a
  /// floor division is parenthesised as Inductor does (`((x // 4) % 8)`).
  static Prec dividend_need(Expr p) noexcept {
    const Expr q = peel(p);
    CeilParts parts;
    const bool plain_division = (q.is(Kind::floor_div) || q.is(Kind::clean_div)) && !ceil_parts(q, parts);
    return plain_division ? Prec::unary : Prec::mul;
  }
};

}  // namespace detail::print

WRAPIR_DECL void print_python(Expr e, std::string& out) {
  detail::print::check_printable(e, "print_python");
  out.reserve(out.size() + 8 + 4 * static_cast<std::size_t>(std::min<std::uint32_t>(e.tree_size(), 1u << 16)));
  detail::print::run(detail::print::PythonLang{}, e, out);
}

WRAPIR_DECL std::string print_python(Expr e) {
  std::string out;
  print_python(e, out);
  return out;
}

WRAPIR_DECL std::string to_string(Expr e) {
  if (!e) return "<null>";
  return print_python(e);
}

WRAPIR_DECL std::ostream& operator<<(std::ostream& os, Expr e) { return os << to_string(e); }

}  // namespace wrapir::expr