#pragma once
/// \file
/// Definitions of <wrapir/expr/print_cpp.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/print_cpp.hpp>
#include <wrapir/expr/bounds.hpp>
#include <wrapir/expr/detail/print_engine.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wrapir::expr {

namespace detail::print {

class CppLang {
 public:
  explicit CppLang(CppStyle style) noexcept : c10_(style == CppStyle::c10) {}

  /// Piece flag: the operand is a Where condition, read as a bool.
  static constexpr std::uint8_t condition = 1;

  /// `cL*x*y`, `a - 2L*b - 5L`: factors are atoms or parenthesised, and
  /// INT64_MIN is never written as a magnitude (`9223372036854775808L` is no
  /// signed literal).
  static constexpr ArithmeticSpelling arithmetic{Prec::atom, false};

  static void append_integer(std::string& out, std::int64_t v) {
    if (v == INT64_MIN) {
      // 9223372036854775808L does not fit a signed literal.
      out.append("(-9223372036854775807L - 1)");
      return;
    }
    if (v < 0) out.push_back('-');
    append_unsigned(out, magnitude_of(v));
    out.push_back('L');
  }
  static void append_magnitude(std::string& out, std::int64_t v) {
    append_unsigned(out, magnitude_of(v));  // never INT64_MIN: see `arithmetic`
    out.push_back('L');
  }

  Form form(Expr e, std::uint8_t flags) const noexcept {
    switch (e.kind()) {
      case Kind::integer:
        return e.value() < 0 && e.value() != INT64_MIN ? Form{Prec::unary, true} : Form{Prec::atom, false};
      case Kind::add: return {Prec::add, false};
      case Kind::mul: {
        const Expr c = e.operand(0);
        if (c.is_integer(-1) && e.operands().size() == 2) return {Prec::unary, true};
        return {Prec::mul, c.is_integer() && c.value() < 0 && c.value() != INT64_MIN};
      }
      case Kind::eq:
      case Kind::ne:
      case Kind::lt:
      case Kind::le:
      case Kind::gt:
      case Kind::ge: return (flags & condition) != 0 ? Form{Prec::cmp, false} : Form{Prec::atom, false};
      default: return {Prec::atom, false};  // symbols, calls, parenthesised groups
    }
  }

  template <class Sink>
  void expand(Expr e, const Form&, std::uint8_t flags, Sink& out) const {
    switch (e.kind()) {
      case Kind::integer: out.integer(e.value()); return;
      case Kind::symbol: out.text(e.name()); return;
      case Kind::add: print::sum<arithmetic>(e.operands(), out); return;
      case Kind::mul: print::product<arithmetic>(e.operands(), out); return;
      case Kind::pow: power(e, out); return;
      case Kind::floor_div:
      case Kind::clean_div: {
        const Expr a = e.operand(0), b = e.operand(1);
        if (c10_) {
          call2("c10::div_floor_integer(", cast(a), cast(b), out);
        } else if (native_division(a, b)) {
          infix("(", a, " / ", b, ")", out);
        } else {
          call2("wrapir::floor_div(", a, b, out);
        }
        return;
      }
      case Kind::python_mod: {
        const Expr p = e.operand(0), q = e.operand(1);
        if (c10_) call2("c10::div_mod(", p, q, out);
        else if (native_division(p, q)) infix("(", p, " % ", q, ")", out);
        else call2("wrapir::python_mod(", p, q, out);
        return;
      }
      case Kind::mod: infix("(", e.operand(0), " % ", e.operand(1), ")", out); return;
      case Kind::modular_indexing: modular_indexing(e, out); return;
      case Kind::min:
      case Kind::max: min_max(e, out); return;
      case Kind::eq:
      case Kind::ne:
      case Kind::lt:
      case Kind::le:
      case Kind::gt:
      case Kind::ge: {
        const bool as_value = (flags & condition) == 0;
        if (as_value) out.text(c10_ ? "static_cast<int64_t>(" : "static_cast<std::int64_t>(");
        // == and != bind more loosely than < and <=; operands are sums at most.
        out.operand(e.operand(0), Prec::add);
        out.text(comparison_operator(e.kind()));
        out.operand(e.operand(1), Prec::add);
        if (as_value) out.text(")");
        return;
      }
      case Kind::where: {
        const Expr c = e.operand(0);
        out.text("(");
        if (is_comparison(peel(c).kind())) {
          out.operand(c, Prec::cmp, false, condition);
        } else {
          out.operand(c, Prec::add);
          out.text(" != 0");
        }
        out.text(" ? ");
        out.operand(e.operand(1), Prec::lowest);
        out.text(" : ");
        out.operand(e.operand(2), Prec::lowest);
        out.text(")");
        return;
      }
      case Kind::align:
        out.text("wrapir::align_up(");
        out.operand(e.operand(0), Prec::lowest);
        out.text(", ");
        out.integer(e.value());
        out.text(")");
        return;
      case Kind::identity: out.operand(e.operand(0), Prec::lowest); return;
    }
  }

 private:
  bool c10_;

  /// Largest literal exponent written out as repeated multiplication, and
  /// largest base (in nodes) written out: unrolling copies the base's text,
  /// so bigger bases, and bases with powers inside (whose copies would
  /// nest), call `wrapir::ipow`.
  static constexpr std::int64_t max_unrolled_exponent = 8;
  static constexpr std::uint32_t max_unrolled_base_nodes = 8;

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

  /// A cheap proof that `e >= lo` (`lo` is 0 or 1) for the common shapes of
  /// sizes and indices, visiting at most `budget` nodes; false when unsure.
  static bool quick_at_least(Expr e, std::int64_t lo, int& budget) noexcept {
    if (--budget < 0) return false;
    switch (e.kind()) {
      case Kind::integer: return e.value() >= lo;
      case Kind::symbol:
        return e.assumption() == Assumption::positive || (lo == 0 && e.assumption() == Assumption::nonnegative);
      case Kind::add: {
        // Non-negative terms, one of them positive when lo is 1.
        bool positive = lo == 0;
        for (Expr t : e.operands()) {
          if (!positive && quick_at_least(t, 1, budget)) {
            positive = true;
            continue;
          }
          if (!quick_at_least(t, 0, budget)) return false;
        }
        return positive;
      }
      case Kind::mul:
        for (Expr f : e.operands())
          if (!quick_at_least(f, lo, budget)) return false;
        return true;
      case Kind::floor_div:
      case Kind::clean_div:
        return lo == 0 && quick_at_least(e.operand(0), 0, budget) && quick_at_least(e.operand(1), 1, budget);
      case Kind::modular_indexing: return lo == 0 && quick_at_least(e.operand(2), 1, budget);  // sign of m
      case Kind::align: return quick_at_least(e.operand(0), lo, budget);
      default: return false;
    }
  }

  static bool known_at_least(Expr e, std::int64_t lo) noexcept {
    int budget = 16;
    if (quick_at_least(e, lo, budget)) return true;
    return bounds(e).known_ge(lo);
  }

  /// Truncating `/` and `%` agree with flooring for `a >= 0`, `b > 0`.
  static bool native_division(Expr a, Expr b) noexcept { return known_at_least(b, 1) && known_at_least(a, 0); }

  /// An argument wrapped as `static_cast<int64_t>(…)` (c10 style).
  struct Cast {
    Expr e;
  };
  static Cast cast(Expr e) noexcept { return {e}; }

  template <class Sink>
  static void argument(Expr e, Sink& out) { out.operand(e, Prec::lowest); }
  template <class Sink>
  static void argument(Cast c, Sink& out) {
    out.text("static_cast<int64_t>(");
    out.operand(c.e, Prec::lowest);
    out.text(")");
  }

  template <class A, class B, class Sink>
  static void call2(std::string_view open, A a, B b, Sink& out) {
    out.text(open);
    argument(a, out);
    out.text(", ");
    argument(b, out);
    out.text(")");
  }

  /// `open a op b close` with C++'s left-associative `*`, `/`, `%`.
  template <class Sink>
  static void infix(std::string_view open, Expr a, std::string_view op, Expr b, std::string_view close,
                    Sink& out) {
    out.text(open);
    out.operand(a, Prec::mul);
    out.text(op);
    out.operand(b, Prec::unary, true);
    out.text(close);
  }

  template <class Sink>
  void modular_indexing(Expr e, Sink& out) const {
    const Expr x = e.operand(0), d = e.operand(1), m = e.operand(2);
    const bool unit = d.is_integer(1);
    if (c10_) {
      out.text("(static_cast<int64_t>(");
      if (unit) argument(x, out);
      else call2("c10::div_floor_integer(", cast(x), cast(d), out);
      out.text(") % static_cast<int64_t>(");
      argument(m, out);
      out.text("))");
      return;
    }
    if (known_at_least(d, 1) && known_at_least(m, 1) && known_at_least(x, 0)) {
      if (unit) {
        infix("(", x, " % ", m, ")", out);
      } else {
        out.text("(");
        infix("(", x, " / ", d, ")", out);
        out.text(" % ");
        out.operand(m, Prec::unary, true);
        out.text(")");
      }
      return;
    }
    out.text("wrapir::python_mod(");
    call2("wrapir::floor_div(", x, d, out);
    out.text(", ");
    argument(m, out);
    out.text(")");
  }

  template <class Sink>
  void min_max(Expr e, Sink& out) const {
    const bool is_min = e.is(Kind::min);
    const auto args = e.operands();
    if (args.size() == 2) {
      if (c10_) {
        call2(is_min ? "std::min(" : "std::max(", cast(args[0]), cast(args[1]), out);
      } else {
        call2(is_min ? "std::min<std::int64_t>(" : "std::max<std::int64_t>(", args[0], args[1], out);
      }
      return;
    }
    if (c10_) out.text(is_min ? "std::min<int64_t>({" : "std::max<int64_t>({");
    else out.text(is_min ? "std::min<std::int64_t>({" : "std::max<std::int64_t>({");
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i > 0) out.text(", ");
      argument(args[i], out);
    }
    out.text("})");
  }

  /// At most `max_unrolled_base_nodes` nodes and no power inside, so that
  /// unrolled copies never nest.
  static bool small_power_free(Expr e) noexcept {
    if (e.tree_size() > max_unrolled_base_nodes) return false;
    if (e.is(Kind::pow)) return false;
    for (Expr o : e.operands())  // recursion depth <= max_unrolled_base_nodes
      if (!small_power_free(o)) return false;
    return true;
  }

  template <class Sink>
  void power(Expr e, Sink& out) const {
    const Expr base = e.operand(0), exponent = e.operand(1);
    if (exponent.is_integer(0)) {
      out.integer(1);
      return;
    }
    if (exponent.is_integer() && exponent.value() >= 1 && exponent.value() <= max_unrolled_exponent &&
        small_power_free(base)) {
      // `(x*x*x)`; `(x)` for the (non-canonical) exponent 1.
      const std::int64_t k = exponent.value();
      out.text("(");
      for (std::int64_t i = 0; i < k; ++i) {
        if (i > 0) out.text("*");
        out.operand(base, k == 1 ? Prec::lowest : Prec::atom);
      }
      out.text(")");
      return;
    }
    if (c10_ && base.is_integer(2) && !exponent.is_integer()) {
      out.text("(1L << (");
      out.operand(exponent, Prec::lowest);
      out.text("))");
      return;
    }
    call2("wrapir::ipow(", base, exponent, out);
  }
};

}  // namespace detail::print

WRAPIR_DECL void print_cpp(Expr e, std::string& out, CppStyle style) {
  detail::print::check_printable(e, "print_cpp");
  out.reserve(out.size() + 8 + 6 * static_cast<std::size_t>(std::min<std::uint32_t>(e.tree_size(), 1u << 16)));
  detail::print::run(detail::print::CppLang{style}, e, out);
}

WRAPIR_DECL std::string print_cpp(Expr e, CppStyle style) {
  std::string out;
  print_cpp(e, out, style);
  return out;
}

}  // namespace wrapir::expr