#pragma once
/// \file
/// Prints an expression as a C++ expression of type `int64_t`.
///
/// Two styles:
///
/// * `CppStyle::standalone` — C++17/20 that needs only `<cstdint>`,
///   `<algorithm>` and `<wrapir/expr/int_math.hpp>`, and computes exactly the
///   value of the expression (Python semantics of `//` and `%`) with the
///   symbols as `int64_t` variables, wherever no intermediate value leaves
///   int64. Division and modulo are native C++ `/` and `%` where the operands
///   are provably non-negative and positive (there truncation and flooring
///   agree), else calls of `wrapir::floor_div` / `wrapir::python_mod`.
/// * `CppStyle::c10` — Inductor's C++ wrapper renderings, for code that
///   includes c10 (`c10::div_floor_integer`, `c10::div_mod`, casts to
///   `int64_t`).
///
/// | kind            | standalone                                  | c10                                                     |
/// |-----------------|---------------------------------------------|---------------------------------------------------------|
/// | integer         | `5L`, `-5L`, `(-9223372036854775807L - 1)`  | same                                                    |
/// | Add, Mul        | `s0 + 2L*s1 - 1L`, `-s0*s1`                 | same                                                    |
/// | Pow (literal k) | `(x*x*x)` for k <= 8 and a small power-free base, else `wrapir::ipow(x, k)` | same                  |
/// | Pow (symbolic)  | `wrapir::ipow(b, n)`                        | `(1L << (n))` for base 2, else `wrapir::ipow(b, n)`      |
/// | FloorDiv        | `(a / b)` or `wrapir::floor_div(a, b)`      | `c10::div_floor_integer(static_cast<int64_t>(a), static_cast<int64_t>(b))` |
/// | PythonMod       | `(p % q)` or `wrapir::python_mod(p, q)`     | `c10::div_mod(p, q)`                                    |
/// | Mod             | `(p % q)`                                   | `(p % q)`                                               |
/// | ModularIndexing | `((x / d) % m)`, `(x % m)` for d = 1        | `(static_cast<int64_t>(c10::div_floor_integer(…)) % static_cast<int64_t>(m))` |
/// | Min, Max        | `std::min<std::int64_t>(a, b)`, `std::min<std::int64_t>({a, b, c})` | `std::min(static_cast<int64_t>(a), static_cast<int64_t>(b))`, `std::min<int64_t>({a, b, c})` |
/// | comparison      | `static_cast<std::int64_t>(a < b)`; a bare `a < b` as a Where condition | `static_cast<int64_t>(a < b)`       |
/// | Where           | `(c ? p : q)`; a non-comparison condition as `c != 0` | same                                          |
/// | align           | `wrapir::align_up(x, 64L)`                  | same (c10 has no equivalent)                            |
/// | Identity        | its operand                                 | same                                                    |
///
/// Integer literals carry the suffix `L`, as Inductor prints them on Linux
/// (where `long` is `int64_t`). A ceiling division prints as the floor
/// division it is (`-((a) // -(b))` would be wrong in C++, whose `/`
/// truncates). `wrapir::ipow(base, exponent)` is an `int_math.hpp` function;
/// the c10 style's shift `(1L << (n))` is exact for every `n` with `2**n` in
/// int64. The c10 ModularIndexing rendering uses C's `%`, which is right
/// because canonical ModularIndexing has `x >= 0`, `d > 0`, `m > 0`.
///
/// Printing only reads the expression, uses bounded C++ stack whatever the
/// tree's depth, and throws `Error` for a null expression or one too large to print (see
/// print_python.hpp).

#include <wrapir/detail/config.hpp>
#include <wrapir/expr/expr.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace wrapir::expr {

enum class CppStyle : std::uint8_t { standalone, c10 };

/// `e` as a C++ expression.
[[nodiscard]] WRAPIR_DECL std::string print_cpp(Expr e, CppStyle style = CppStyle::standalone);

/// Appends `e` as a C++ expression to `out`.
WRAPIR_DECL void print_cpp(Expr e, std::string& out, CppStyle style = CppStyle::standalone);

}  // namespace wrapir::expr

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/print_cpp.ipp>
#endif
