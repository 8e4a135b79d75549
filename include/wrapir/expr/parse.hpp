#pragma once
/// \file
/// Parsing symbolic integer expressions from the text that sympy, Inductor
/// and wrapir's own printers write.
///
/// `parse(ctx, "((s0 + 7)//8)")` returns the canonical expression
/// `ceil_div(s0, 8)`: every node is built through the simplifying
/// constructors of ops.hpp. Bad input gives a one-line `Diagnostic` with the
/// 0-based column of the offending token; `parse` never throws for bad input,
/// never overflows the stack (nesting is bounded by `ParseOptions::max_depth`)
/// and never reads past `text`.
///
/// Grammar (EBNF; Python precedence, lowest first):
///
/// ```
/// input       = conditional end ;
/// conditional = comparison [ "if" comparison "else" conditional ] ;  (* p if c else q = Where(c, p, q) *)
/// comparison  = sum [ compare_op sum ] ;                               (* no chaining: a < b < c is an error *)
/// compare_op  = "==" | "!=" | "<" | "<=" | ">" | ">=" ;
/// sum         = term { ( "+" | "-" ) term } ;
/// term        = unary { ( "*" | "/" | "//" | "%" ) unary } ;           (* % is PythonMod *)
/// unary       = ( "-" | "+" ) unary | power ;
/// power       = primary [ "**" unary ] ;                               (* right-assoc; -x**2 = -(x**2) *)
/// primary     = integer | "True" | "False" | symbol | call | "(" conditional ")" ;
/// call        = function "(" [ conditional { "," conditional } [ "," ] ] ")" ;
/// function    = "FloorDiv" | "CeilDiv" | "CleanDiv" | "ModularIndexing" | "PythonMod" | "Mod"
///             | "Min" | "Max" | "min" | "max" | "Where" | "Eq" | "Ne" | "Lt" | "Le" | "Gt" | "Ge"
///             | "PowByNatural" | "Identity" | "align" | "floor" | "ceiling" ;
/// integer     = digit { digit } ;                                      (* decimal, fits int64; no leading 0 *)
/// symbol      = ( letter | "_" ) { letter | digit | "_" } ;            (* is_valid_symbol_name *)
/// ```
///
/// Spaces, tabs, carriage returns and newlines separate tokens; `#` starts a
/// comment that runs to the end of the line. `True` and `False` are 1 and 0.
/// `Min`/`Max`/`min`/`max` take one or more arguments; `align` takes `x` and
/// an optional integer alignment (default 64).
///
/// True division `/` builds an exact fraction `num / den` (as sympy's
/// `together`): products multiply numerators and denominators, sums go over
/// a common denominator, `x ** -k` (a literal or wholly negative exponent) is
/// `1 / x ** k`. A fraction that does not reduce to an integer may only be
/// the argument of `floor` (which makes `FloorDiv(num, den)`) or `ceiling`
/// (`CeilDiv(num, den)`); anywhere else it is an error at the `/` (or `**`)
/// that made it. So Inductor's `floor(x/5)` is `FloorDiv(x, 5)`,
/// `floor(2**-x)` is `FloorDiv(1, 2**x)` and `floor(1/5)` is 0. A fraction
/// whose numerator and denominator together exceed 4096 tree nodes (a sum
/// over dozens of distinct symbolic denominators) is an error.
///
/// Limits: input longer than `max_length` bytes is rejected up front; each
/// parenthesis, call, unary operator, `**` exponent and `else` branch nests
/// one level, and so does every operator of the built tree except within one
/// flat chain of `+`/`-` or of `*`/`/` (so `x % 2 % 3 % ...` nests); more
/// than `max_depth` levels is an error, and so is text whose building costs
/// more than `max_lookups` node lookups.
///
/// Cost: a chain of `+`/`-` (or of `*`) is collected and built as one n-ary
/// sum (product), so parsing is O(n log n) in the input plus the cost of the
/// other canonical constructors. What nesting multiplies (a large sum under
/// hundreds of operators is rebuilt at each) is bounded by
/// `ParseOptions::max_lookups`, so no input of `max_length` bytes takes more
/// than about a second (docs/performance.md has the hostile inputs timed).
/// A chain's value is that of adding its operands one at a time from the
/// left, overflow included; for
/// products that holds wherever the pairwise fold does not overflow (the
/// n-ary product folds its constants in another order, so the two can
/// differ only at int64's limits). An overflow is reported at the operator
/// where the pairwise fold would have stopped (for products: where the
/// running product of the operands' coefficients leaves int64), and before
/// any later error in the text.
///
/// Side effect: symbols that are not yet in the context are created (with
/// `new_symbols`) as they are read, and stay there even when a later part of
/// the text turns out to be invalid.

#include <wrapir/detail/config.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::expr {

struct ParseOptions {
  /// Symbols not yet in the context are made with this assumption.
  Assumption new_symbols = Assumption::positive;
  /// Nesting limit (see the file comment): deeper input is rejected, never a
  /// stack overflow.
  std::size_t max_depth = 256;
  /// Longer input is rejected before it is read.
  std::size_t max_length = std::size_t{1} << 20;
  /// Work limit, in node lookups (`Context::lookups`): text that puts large
  /// subexpressions under many levels of operators (250 minus signs before a
  /// sum of 60000 terms) rebuilds them at every level. Reading any flat
  /// text of `max_length` bytes takes under a million; past this limit
  /// parsing stops with a diagnostic instead of taking seconds.
  std::uint64_t max_lookups = std::uint64_t{1} << 21;
};

/// The canonical expression that `text` denotes, or a diagnostic with the
/// column where reading went wrong.
[[nodiscard]] WRAPIR_DECL Result<Expr> parse(Context& ctx, std::string_view text, const ParseOptions& options = {});

namespace detail::parsing {

// The functions the parser knows; io/text.hpp asks the table too, to tell
// them from symbols. The parser itself is in impl/parse.ipp.

enum class Function : std::uint8_t {
  floor_div,
  ceil_div,
  clean_div,
  modular_indexing,
  python_mod,
  mod,
  min,
  max,
  where,
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  pow_by_natural,
  identity,
  align,
  floor,
  ceiling,
};

struct FunctionInfo {
  std::string_view name;
  Function function;
  std::uint8_t min_args;
  std::uint8_t max_args;  // 0: unlimited
};

inline constexpr FunctionInfo parse_functions[] = {
    {"FloorDiv", Function::floor_div, 2, 2},
    {"CeilDiv", Function::ceil_div, 2, 2},
    {"CleanDiv", Function::clean_div, 2, 2},
    {"ModularIndexing", Function::modular_indexing, 3, 3},
    {"PythonMod", Function::python_mod, 2, 2},
    {"Mod", Function::mod, 2, 2},
    {"Min", Function::min, 1, 0},
    {"Max", Function::max, 1, 0},
    {"min", Function::min, 1, 0},
    {"max", Function::max, 1, 0},
    {"Where", Function::where, 3, 3},
    {"Eq", Function::eq, 2, 2},
    {"Ne", Function::ne, 2, 2},
    {"Lt", Function::lt, 2, 2},
    {"Le", Function::le, 2, 2},
    {"Gt", Function::gt, 2, 2},
    {"Ge", Function::ge, 2, 2},
    {"PowByNatural", Function::pow_by_natural, 2, 2},
    {"Identity", Function::identity, 1, 1},
    {"align", Function::align, 1, 2},
    {"floor", Function::floor, 1, 1},
    {"ceiling", Function::ceiling, 1, 1},
};

}  // namespace detail::parsing

}  // namespace wrapir::expr

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/parse.ipp>
#endif
