#pragma once
/// \file
/// Prints an expression as Python source, in the style of Inductor's
/// Python wrapper (`s77*(s27 // 4)`, `max(1, s27 // 4)`, `(xindex % ks0)`,
/// `-((s0*s1) // -(1024))`).
///
/// The text is valid Python whose value, with the symbols bound to ints, is
/// the value of the expression (comparisons print as Python comparisons,
/// whose `bool` result acts as 0 or 1 in arithmetic; `align` needs Inductor's
/// helper `align(x, alignment=64)` in scope). It uses the fewest parentheses
/// Python's precedence and associativity need, plus a few that Inductor
/// writes for readability: a floor division, or anything that starts with a
/// minus, is parenthesised as a factor of a product (`2*(s0 // 4)`,
/// `2*(-s1)`), and `%` is always parenthesised (`(p % q)`).
///
/// | kind               | printed                                              |
/// |--------------------|------------------------------------------------------|
/// | Add, Mul, Pow      | `2*s0 - s1 + 3`, `-s0*s1`, `s0**2`                   |
/// | FloorDiv, CleanDiv | `a // b`; a ceiling division `-((a) // -(b))`        |
/// | PythonMod, Mod     | `(p % q)`                                            |
/// | ModularIndexing    | `((x // d) % m)`, `(x % m)` when `d` is 1            |
/// | Min, Max           | `min(a, b)`, `max(a, b, c)`                          |
/// | comparisons        | `a == b`, `a != b`, `a < b`, `a <= b`, `a > b`, `a >= b` |
/// | Where              | `(p if c else q)`                                    |
/// | align              | `align(x)` for 64, `align(x, 128)` otherwise         |
/// | Identity           | its operand                                          |
///
/// Ceiling division. The canonical form of `ceil(a / c)` is
/// `FloorDiv(a + (c - 1), c)`; it prints as Inductor writes a ceiling,
/// `-((a) // -(c))`, when `c` is a literal >= 2, the numerator's only
/// constant term is `c - 1`, and the other terms, `a`, have positive
/// coefficients sharing no factor with `c` — exactly the cases where parsing
/// the text gives back the same canonical node (`-((2*s0) // -(4))` would
/// read back as `(s0 + 1) // 2`, so `(2*s0 + 3) // 4` stays as it is).
/// `FloorDiv(a + d - 1, d)` with a provably positive, non-sum divisor `d`
/// (Inductor's CeilDiv by a symbol) prints as `-((a) // -(d))` under the
/// same conditions: the terms of `a` positive and none a multiple of `d`.
/// Both texts have the same value.
///
/// Printing only reads the expression (it never builds nodes), so it may run
/// concurrently with other readers of the context. Its C++ stack use is
/// bounded whatever the tree's depth (detail/print_engine.hpp); it throws `Error`
/// for a null expression and for a DAG whose printed tree would exceed
/// `detail::print::max_printed_nodes` nodes.

#include <wrapir/detail/config.hpp>
#include <wrapir/expr/expr.hpp>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>

namespace wrapir::expr {

/// `e` as Python source text.
[[nodiscard]] WRAPIR_DECL std::string print_python(Expr e);

/// Appends `e` as Python source text to `out`.
WRAPIR_DECL void print_python(Expr e, std::string& out);

/// Writes `e` as Python source text (`<null>` for a null handle).
WRAPIR_DECL std::ostream& operator<<(std::ostream& os, Expr e);

/// `e` as Python source text (`<null>` for a null handle), for messages and
/// debugging.
[[nodiscard]] WRAPIR_DECL std::string to_string(Expr e);

}  // namespace wrapir::expr

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/print_python.ipp>
#endif
