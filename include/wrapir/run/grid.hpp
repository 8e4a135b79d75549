#pragma once
/// \file
/// Launch grids, backend-generic: the grid of a launch as three expressions,
/// compiled once and evaluated on every launch, and the same grid computed
/// from concrete integers.
///
/// Inductor does not write grids at call sites: a kernel's grid type
/// (reference §4.1) and its block configuration tell the launcher how to turn
/// the numel arguments into a grid (`Grid1D`: `ceildiv(xnumel, XBLOCK)`).
/// This header does the same for `ir::TypedGrid`:
///
/// * `grid_exprs(ctx, type, numels, block)` builds the x, y and z
///   expressions, with the block sizes folded in (Grid2DWithYZOverflow's
///   prefix lines become part of its y and z expressions);
/// * `compile_grid(exprs)` turns them into a `CompiledGrid` whose `eval`
///   reads the symbol values of one launch, allocates nothing and checks
///   the result against the device's limits (`GridLimits`, CUDA's by
///   default: x up to 2^31 - 1, y and z up to 65535);
/// * `grid_dims(type, numel values, block)` computes the same grid from
///   integers, for callers that have values and no expressions;
///   `compute_grid_dims` is its `constexpr`, `noexcept` core.
///
/// Both paths share one definition of every grid type and one set of
/// checks, so they give the same grid or both fail (tests/run/grid_test.cpp
/// checks this on random numels for every grid type). A grid over the
/// limits is an error, never a truncated launch; a grid with a zero
/// dimension is `Dim3::empty()`, which means "do not launch".
///
/// Names, as Inductor spells them. Numels: `xnumel`, `ynumel`, `znumel`,
/// `r0_numel`; a combo kernel's sub-kernel `i` has `xnumel_<i>` and,
/// when tiled, `ynumel_<i>`. Block configuration: `XBLOCK`, `YBLOCK`,
/// `ZBLOCK`, `R0_BLOCK`, `RSPLIT`, `RSPLIT_SIZE`, `max_y_grid` (default
/// 65535), and for combo kernels `no_x_dim_<i>` (0 or 1, default 0),
/// `min_blocks` (optional), `XBLOCK_<i>` and `YBLOCK_<i>`. Entries a grid
/// type does not read are ignored (a config also carries `num_warps` or
/// `R0_BLOCK` of a reduction). Inductor's launcher reads a block size
/// missing from the config as 1; here a block size a grid type reads must be
/// present (`XBLOCK: 1`), so that a forgotten one is a diagnostic rather
/// than a grid of one element per block.
///
/// The grid types (cdiv is ceiling division; a dimension not given is 1):
///
/// * Grid1D: x = cdiv(xnumel, XBLOCK).
/// * Grid2D: Grid1D's x, and y = cdiv(ynumel, YBLOCK).
/// * Grid3D: Grid2D's x and y, and z = cdiv(znumel, ZBLOCK).
/// * BatchMatmulGrid3D: Grid3D with x and z swapped: x = cdiv(znumel,
///   ZBLOCK), z = cdiv(xnumel, XBLOCK).
/// * Grid2DWithYZOverflow: Grid1D's x; with raw = cdiv(ynumel, YBLOCK) and
///   div = cdiv(raw, max_y_grid), y = (div == 0 ? 0 : cdiv(raw, div)) and
///   z = div, so that a y over `max_y_grid` is split into y × z.
/// * MixOrderReductionGrid: x = cdiv(xnumel, RSPLIT_SIZE); XBLOCK must
///   divide RSPLIT_SIZE.
/// * CooperativeReductionGrid: x = RSPLIT, y = cdiv(xnumel, XBLOCK).
/// * SplitScanGrid: x = cdiv(r0_numel, R0_BLOCK), y = xnumel; XBLOCK must
///   be 1 or absent.
/// * SequentialComboKernelGrid: x = the sum over sub-kernels of their x
///   blocks: cdiv(xnumel_i, XBLOCK), or xnumel_i itself when `no_x_dim_<i>`
///   is 1. When some sub-kernel has `ynumel_<i>`, y and z are
///   Grid2DWithYZOverflow's for the largest of them.
/// * RoundRobinComboKernelGrid: x = n × the most x blocks of any sub-kernel
///   (cdiv of the largest xnumel_i with an x dimension, or xnumel_i without
///   one), for n sub-kernels; y and z as the sequential grid.
/// * SequentialFlattenComboKernelGrid: x = the sum over sub-kernels of x
///   blocks × y blocks, each sub-kernel with its own `XBLOCK_<i>` and
///   `YBLOCK_<i>` (falling back to the shared XBLOCK and YBLOCK; y blocks
///   are 1 without `ynumel_<i>`); y = z = 1.
/// * All three combo grids: `min_blocks` raises x to at least that many
///   blocks; a `znumel_<i>` is refused (z carries the y overflow).
/// * FixedGrid and PrecomputedGrid take their grid from launcher arguments
///   or per-config metadata that a `TypedGrid` does not carry: they are
///   diagnostics that ask for an `ir::ExplicitGrid`.
///
/// Ceiling division is Inductor's: block 1 gives the numel itself, and
/// `cdiv(n, b)` is `(n + (b - 1)) // b`, the form its C++ launchers print. On
/// integers, a numel within `b - 1` of 2^63 is therefore an overflow
/// diagnostic on both paths, as the printed C++ would overflow.

#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/compile.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/run/dim3.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::run {

// ---------------------------------------------------------------------------
// Dimensions, limits, errors
// ---------------------------------------------------------------------------

/// The largest grid a device launches, per dimension. The defaults are
/// CUDA's for every compute capability since 3.0. Each limit must lie in
/// [1, 2^32 - 1].
struct GridLimits {
  std::int64_t x = 2147483647;
  std::int64_t y = 65535;
  std::int64_t z = 65535;
  friend constexpr bool operator==(GridLimits, GridLimits) noexcept = default;
};

inline constexpr GridLimits cuda_grid_limits{};

/// Inductor's `get_max_y_grid()`: where Grid2DWithYZOverflow and the combo
/// grids start splitting y into y × z, unless the block configuration gives
/// `max_y_grid`.
inline constexpr std::int64_t default_max_y_grid = 65535;

/// A named integer: a numel's value, or a block-configuration entry.
struct NamedInt {
  std::string_view name{};
  std::int64_t value = 0;
};

/// What is wrong with a grid, as data (the constexpr path cannot build
/// text); `describe` turns it into the diagnostic.
enum class GridErrorKind : std::uint8_t {
  none,
  invalid_grid_type,        // value: the GridType's number
  needs_explicit_grid,      // FixedGrid, PrecomputedGrid
  missing_numel,            // name
  duplicate_numel,          // name
  null_numel,               // name
  foreign_numel,            // name: from another expression context
  missing_block,            // name
  missing_block_or_shared,  // name, index: neither <name>_<index> nor the shared <name> is given
  duplicate_block,          // name
  non_positive_block,       // name, value
  negative_setting,         // name, value
  bad_flag,                 // name, value
  not_a_multiple,           // value: RSPLIT_SIZE, other: XBLOCK
  xblock_not_one,           // value: XBLOCK
  no_sub_kernels,           //
  sub_kernel_out_of_range,  // name, other: the number of sub-kernels
  combo_z_dimension,        // name
  overflow,                 // dimension: an intermediate value left int64
  negative_dimension,       // dimension, value
  dimension_over_limit,     // dimension, value, other: the limit
  invalid_limit,            // dimension, value
};

/// One grid error. `name` always points at a string literal of this header
/// (the name that was looked up), never at caller data, so an error may
/// outlive its inputs; an indexed name is `name` + `_` + `index`.
struct GridError {
  GridErrorKind kind = GridErrorKind::none;
  std::string_view name{};
  std::int64_t index = -1;
  std::int64_t value = 0;
  std::int64_t other = 0;
  char dimension = 0;  // 'x', 'y' or 'z'

  [[nodiscard]] constexpr bool ok() const noexcept { return kind == GridErrorKind::none; }
};

/// The name an error is about (`XBLOCK`, `xnumel_1`).
[[nodiscard]] inline std::string error_subject(const GridError& e) {
  std::string s(e.name);
  if (e.index >= 0) s += "_" + std::to_string(e.index);
  return s;
}

namespace detail {

/// The limit-check part of a message: the same text on both paths.
[[nodiscard]] inline std::string describe_dimension_error(const GridError& e) {
  const std::string dim = std::string("grid ") + e.dimension;
  switch (e.kind) {
    case GridErrorKind::negative_dimension: return dim + " is " + std::to_string(e.value) + ", which is negative";
    case GridErrorKind::dimension_over_limit:
      return dim + " is " + std::to_string(e.value) + ", above the limit of " + std::to_string(e.other) +
             " blocks; the launch cannot run as one grid";
    case GridErrorKind::invalid_limit:
      return "the grid limit for " + std::string(1, e.dimension) + " is " + std::to_string(e.value) +
             "; limits must lie in [1, 4294967295]";
    case GridErrorKind::overflow: return "integer overflow while computing " + dim;
    default: return {};
  }
}

}  // namespace detail

/// The diagnostic text of `e` for a grid of type `type`: `Grid2D: missing
/// numel 'ynumel'`.
[[nodiscard]] inline std::string describe(ir::GridType type, const GridError& e) {
  const std::string type_name(ir::grid_type_name(type));
  const std::string prefix = type_name + ": ";
  const std::string subject = ir::quote_for_diagnostic(error_subject(e));
  switch (e.kind) {
    case GridErrorKind::none: return prefix + "no error";
    case GridErrorKind::invalid_grid_type: return "grid type " + std::to_string(e.value) + " is not a GridType";
    case GridErrorKind::needs_explicit_grid:
      if (type == ir::GridType::fixed) {
        return prefix +
               "the grid is the launcher's extra arguments _grid_0, _grid_1, _grid_2, which a typed grid does not "
               "carry; give the call an ExplicitGrid with their values";
      }
      return prefix +
             "the grid is an expression per autotuning config, recorded in the kernel's metadata "
             "(precomputed_grids), which a typed grid does not carry; give the call an ExplicitGrid with the chosen "
             "config's expressions";
    case GridErrorKind::missing_numel: return prefix + "missing numel " + subject;
    case GridErrorKind::duplicate_numel: return prefix + "numel " + subject + " is given more than once";
    case GridErrorKind::null_numel: return prefix + "numel " + subject + " is a null expression";
    case GridErrorKind::foreign_numel:
      return prefix + "numel " + subject + " belongs to another expression context than the grid's";
    case GridErrorKind::missing_block: {
      std::string m = prefix + "missing block size " + subject;
      if (e.name.ends_with("BLOCK")) {
        // Inductor's launcher reads an absent block size as 1; we ask for it.
        m += " (where Inductor's config has none, write " + std::string(e.name) + " 1)";
      }
      return m;
    }
    case GridErrorKind::missing_block_or_shared:
      return prefix + "missing block size " + subject + " and the shared " +
             ir::quote_for_diagnostic(e.name) + " it defaults to";
    case GridErrorKind::duplicate_block: return prefix + "block size " + subject + " is given more than once";
    case GridErrorKind::non_positive_block:
      return prefix + "block size " + subject + " is " + std::to_string(e.value) + "; it must be positive";
    case GridErrorKind::negative_setting:
      return prefix + subject + " is " + std::to_string(e.value) + "; it must not be negative";
    case GridErrorKind::bad_flag: return prefix + subject + " is " + std::to_string(e.value) + "; it must be 0 or 1";
    case GridErrorKind::not_a_multiple:
      return prefix + "RSPLIT_SIZE " + std::to_string(e.value) + " is not a multiple of XBLOCK " +
             std::to_string(e.other);
    case GridErrorKind::xblock_not_one: return prefix + "XBLOCK must be 1, got " + std::to_string(e.value);
    case GridErrorKind::no_sub_kernels: return prefix + "no sub-kernel numels; expected xnumel_0, xnumel_1, ...";
    case GridErrorKind::sub_kernel_out_of_range:
      return prefix + "numel " + subject + " names sub-kernel " + std::to_string(e.index) + ", but the grid has " +
             std::to_string(e.other) + " (xnumel_0 to xnumel_" + std::to_string(e.other - 1) + ")";
    case GridErrorKind::combo_z_dimension:
      return prefix + "numel " + subject +
             ": combo grids with a z dimension are not supported (z carries the y overflow); give the call an "
             "ExplicitGrid";
    case GridErrorKind::overflow:
    case GridErrorKind::negative_dimension:
    case GridErrorKind::dimension_over_limit:
    case GridErrorKind::invalid_limit: return prefix + detail::describe_dimension_error(e);
  }
  return prefix + "unknown grid error";
}

namespace detail {

inline constexpr std::array<char, 3> dimension_names{'x', 'y', 'z'};

/// Why `limits` cannot be used, or no error.
[[nodiscard]] constexpr GridError check_limits(GridLimits limits) noexcept {
  const std::array<std::int64_t, 3> l{limits.x, limits.y, limits.z};
  for (std::size_t d = 0; d < 3; ++d) {
    if (l[d] < 1 || l[d] > 4294967295LL) {
      return GridError{.kind = GridErrorKind::invalid_limit, .value = l[d], .dimension = dimension_names[d]};
    }
  }
  return {};
}

/// `dims` as a `Dim3`, or the first dimension that is negative or over its
/// limit. `limits` must be valid (`check_limits`).
[[nodiscard]] constexpr GridError to_dim3(const std::array<std::int64_t, 3>& dims, GridLimits limits,
                                          Dim3& out) noexcept {
  const std::array<std::int64_t, 3> l{limits.x, limits.y, limits.z};
  for (std::size_t d = 0; d < 3; ++d) {
    if (dims[d] < 0) {
      return GridError{.kind = GridErrorKind::negative_dimension, .value = dims[d], .dimension = dimension_names[d]};
    }
    if (dims[d] > l[d]) {
      return GridError{.kind = GridErrorKind::dimension_over_limit,
                       .value = dims[d],
                       .other = l[d],
                       .dimension = dimension_names[d]};
    }
  }
  out = Dim3{static_cast<std::uint32_t>(dims[0]), static_cast<std::uint32_t>(dims[1]),
             static_cast<std::uint32_t>(dims[2])};
  return {};
}

// ---------------------------------------------------------------------------
// Name lookup
// ---------------------------------------------------------------------------

[[nodiscard]] constexpr std::string_view name_of(const NamedInt& v) noexcept { return v.name; }
[[nodiscard]] inline std::string_view name_of(const ir::BlockSize& b) noexcept { return b.name.text; }
[[nodiscard]] inline std::string_view name_of(const ir::NamedExpr& n) noexcept { return n.name.text; }

/// Sub-kernel indices above this are not names Inductor writes; they stay
/// unparsed, so that digits never overflow.
inline constexpr std::int64_t max_sub_kernel_index = 999999;

/// The `i` of `<base>_<i>` (decimal, no sign, no leading zero), or -1.
[[nodiscard]] constexpr std::int64_t index_suffix(std::string_view name, std::string_view base) noexcept {
  if (name.size() <= base.size() + 1 || name.substr(0, base.size()) != base || name[base.size()] != '_') return -1;
  const std::string_view digits = name.substr(base.size() + 1);
  if (digits.size() > 6 || (digits.size() > 1 && digits.front() == '0')) return -1;
  std::int64_t value = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

/// Whether `name` is `base` (index < 0) or `<base>_<index>`.
[[nodiscard]] constexpr bool name_matches(std::string_view name, std::string_view base, std::int64_t index) noexcept {
  return index < 0 ? name == base : index_suffix(name, base) == index;
}

// ---------------------------------------------------------------------------
// Arithmetic domains: one grid definition, evaluated on integers or built
// as expressions
// ---------------------------------------------------------------------------

/// Checked int64 arithmetic with Inductor's ceiling division; an overflow
/// sets `overflowed` and yields 0.
struct IntArith {
  using Value = std::int64_t;
  bool overflowed = false;

  template <class Numel>
  constexpr bool value_of(const Numel& n, Value& out, GridErrorKind&) const noexcept {
    out = n.value;
    return true;
  }
  [[nodiscard]] constexpr Value constant(std::int64_t v) const noexcept { return v; }
  /// `(a + (b - 1)) // b` for `b > 0`, and `a` itself for `b == 1`.
  [[nodiscard]] constexpr Value ceil_div(Value a, std::int64_t b) noexcept {
    if (b == 1) return a;
    std::int64_t biased = 0;
    if (!checked::add(a, b - 1, biased)) return fail();
    return ::wrapir::floor_div(biased, b);
  }
  [[nodiscard]] constexpr Value add(Value a, Value b) noexcept {
    std::int64_t r = 0;
    return checked::add(a, b, r) ? r : fail();
  }
  [[nodiscard]] constexpr Value mul(Value a, Value b) noexcept {
    std::int64_t r = 0;
    return checked::mul(a, b, r) ? r : fail();
  }
  [[nodiscard]] constexpr Value max(Value a, Value b) const noexcept { return a < b ? b : a; }
  /// Grid2DWithYZOverflow's split of `raw` y blocks: {y, z}.
  [[nodiscard]] constexpr std::pair<Value, Value> split_y(Value raw, std::int64_t max_y_grid) noexcept {
    const Value div = ceil_div(raw, max_y_grid);
    if (div == 0) return {0, 0};
    std::int64_t biased = 0;
    std::int64_t y = 0;
    if (!checked::add(raw, div - 1, biased) || !checked::floor_div(biased, div, y)) return {fail(), div};
    return {y, div};
  }

 private:
  constexpr Value fail() noexcept {
    overflowed = true;
    return 0;
  }
};

/// The same operations building expressions in `ctx`. Constructors may throw
/// `expr::Error` (a constant fold that overflows); `grid_exprs` reports it.
struct ExprArith {
  using Value = expr::Expr;
  expr::Context* ctx;
  bool overflowed = false;  // never set: expressions overflow when evaluated

  bool value_of(const ir::NamedExpr& n, Value& out, GridErrorKind& why) const noexcept {
    if (!n.value) {
      why = GridErrorKind::null_numel;
      return false;
    }
    if (&n.value.context() != ctx) {
      why = GridErrorKind::foreign_numel;
      return false;
    }
    out = n.value;
    return true;
  }
  [[nodiscard]] Value constant(std::int64_t v) const { return ctx->integer(v); }
  [[nodiscard]] Value ceil_div(Value a, std::int64_t b) const {
    return b == 1 ? a : expr::ceil_div(a, ctx->integer(b));
  }
  [[nodiscard]] Value add(Value a, Value b) const { return expr::add(a, b); }
  [[nodiscard]] Value mul(Value a, Value b) const { return expr::mul(a, b); }
  [[nodiscard]] Value max(Value a, Value b) const { return expr::max(a, b); }
  /// Inductor's prefix lines `y_grid_raw_ = ...; y_grid_div_ = ...` inlined:
  /// y = `0 if div == 0 else (raw + (div - 1)) // div`, z = div. The
  /// division is written out rather than `expr::ceil_div`, which picks its
  /// form from what bounds know of `div`: one fixed form overflows exactly
  /// where the integer path does.
  [[nodiscard]] std::pair<Value, Value> split_y(Value raw, std::int64_t max_y_grid) const {
    const Value div = ceil_div(raw, max_y_grid);
    const Value zero = ctx->integer(0);
    const Value y = expr::floor_div(expr::add(raw, expr::sub(div, ctx->integer(1))), div);
    return {expr::where(expr::eq(div, zero), zero, y), div};
  }
};

// ---------------------------------------------------------------------------
// The grid types
// ---------------------------------------------------------------------------

/// Every grid type of §4.1, over an arithmetic domain. Reads numels and
/// block sizes by name, checks them, and writes the three dimensions; the
/// first problem found stops it.
template <class Arith, class Numel, class Block>
class GridDefinition {
 public:
  using Value = typename Arith::Value;

  constexpr GridDefinition(Arith& arith, std::span<const Numel> numels, std::span<const Block> block) noexcept
      : a_(arith), numels_(numels), block_(block) {}

  /// Builds the grid of `type` into `out` (x, y, z); the first error, or
  /// none. A configuration error wins over an overflow found before it, so
  /// that both domains report the same one.
  constexpr GridError build(ir::GridType type, std::array<Value, 3>& out) {
    out = {a_.constant(1), a_.constant(1), a_.constant(1)};
    build_dimensions(type, out);
    note_overflow();
    if (error_.ok() && a_.overflowed) {
      error_ = GridError{.kind = GridErrorKind::overflow, .dimension = overflow_dimension_};
    }
    return error_;
  }

 private:
  using Kind = GridErrorKind;

  constexpr bool fail(GridError e) {
    error_ = e;
    return false;
  }

  /// Remembers the dimension being computed when integers first overflowed.
  /// Computing goes on (with wrong values) to check the rest of the
  /// configuration.
  constexpr void note_overflow() {
    if (a_.overflowed && overflow_dimension_ == 0) overflow_dimension_ = dimension_;
  }

  /// Starts computing dimension `d`; false once an error stopped the build.
  constexpr bool start(char d) {
    if (!error_.ok()) return false;
    note_overflow();
    dimension_ = d;
    return true;
  }

  template <class Entry>
  constexpr const Entry* find(std::span<const Entry> entries, std::string_view base, std::int64_t index,
                              bool& duplicate) const {
    const Entry* found = nullptr;
    for (const Entry& e : entries) {
      if (!name_matches(name_of(e), base, index)) continue;
      if (found != nullptr) {
        duplicate = true;
        return found;
      }
      found = &e;
    }
    return found;
  }

  constexpr bool has_numel(std::string_view base, std::int64_t index = -1) const {
    bool duplicate = false;
    return find(numels_, base, index, duplicate) != nullptr;
  }

  constexpr bool numel(std::string_view base, Value& out, std::int64_t index = -1) {
    bool duplicate = false;
    const Numel* n = find(numels_, base, index, duplicate);
    if (n == nullptr) return fail({.kind = Kind::missing_numel, .name = base, .index = index});
    if (duplicate) return fail({.kind = Kind::duplicate_numel, .name = base, .index = index});
    Kind why = Kind::none;
    if (!a_.value_of(*n, out, why)) return fail({.kind = why, .name = base, .index = index});
    return true;
  }

  /// A block entry's value if present; false with an error on a duplicate.
  constexpr bool lookup_block(std::string_view base, std::int64_t index, std::optional<std::int64_t>& out) {
    bool duplicate = false;
    const Block* b = find(block_, base, index, duplicate);
    if (duplicate) return fail({.kind = Kind::duplicate_block, .name = base, .index = index});
    out = b == nullptr ? std::nullopt : std::optional<std::int64_t>(b->value);
    return true;
  }

  constexpr bool positive(std::string_view base, std::int64_t index, std::int64_t value) {
    if (value > 0) return true;
    return fail({.kind = Kind::non_positive_block, .name = base, .index = index, .value = value});
  }

  /// A block size the grid needs: present and positive.
  constexpr bool block(std::string_view base, std::int64_t& out, std::int64_t index = -1) {
    std::optional<std::int64_t> v;
    if (!lookup_block(base, index, v)) return false;
    if (!v) return fail({.kind = Kind::missing_block, .name = base, .index = index});
    out = *v;
    return positive(base, index, out);
  }

  /// `<base>_<index>`, else the shared `<base>`; positive.
  constexpr bool block_or_shared(std::string_view base, std::int64_t index, std::int64_t& out) {
    std::optional<std::int64_t> own;
    if (!lookup_block(base, index, own)) return false;
    if (own) {
      out = *own;
      return positive(base, index, out);
    }
    std::optional<std::int64_t> shared;
    if (!lookup_block(base, -1, shared)) return false;
    if (!shared) return fail({.kind = Kind::missing_block_or_shared, .name = base, .index = index});
    out = *shared;
    return positive(base, -1, out);
  }

  /// A positive block setting with a default.
  constexpr bool block_or(std::string_view base, std::int64_t fallback, std::int64_t& out) {
    std::optional<std::int64_t> v;
    if (!lookup_block(base, -1, v)) return false;
    out = v.value_or(fallback);
    return positive(base, -1, out);
  }

  /// A 0/1 flag of sub-kernel `index`, default 0.
  constexpr bool flag(std::string_view base, std::int64_t index, bool& out) {
    std::optional<std::int64_t> v;
    if (!lookup_block(base, index, v)) return false;
    if (v && *v != 0 && *v != 1) return fail({.kind = Kind::bad_flag, .name = base, .index = index, .value = *v});
    out = v.value_or(0) == 1;
    return true;
  }

  /// `cdiv(numel, block)` for named ones.
  constexpr bool blocks_of(std::string_view numel_name, std::string_view block_name, Value& out) {
    Value n{};
    std::int64_t b = 0;
    if (!numel(numel_name, n) || !block(block_name, b)) return false;
    out = a_.ceil_div(n, b);
    return true;
  }

  constexpr void build_dimensions(ir::GridType type, std::array<Value, 3>& out) {
    using G = ir::GridType;
    switch (type) {
      case G::grid_1d:
        if (start('x')) blocks_of("xnumel", "XBLOCK", out[0]);
        return;
      case G::grid_2d:
        if (start('x')) blocks_of("xnumel", "XBLOCK", out[0]);
        if (start('y')) blocks_of("ynumel", "YBLOCK", out[1]);
        return;
      case G::grid_3d:
        if (start('x')) blocks_of("xnumel", "XBLOCK", out[0]);
        if (start('y')) blocks_of("ynumel", "YBLOCK", out[1]);
        if (start('z')) blocks_of("znumel", "ZBLOCK", out[2]);
        return;
      case G::batch_matmul_grid_3d:
        // Inductor's order: xnumel (into z) first.
        if (start('z')) blocks_of("xnumel", "XBLOCK", out[2]);
        if (start('y')) blocks_of("ynumel", "YBLOCK", out[1]);
        if (start('x')) blocks_of("znumel", "ZBLOCK", out[0]);
        return;
      case G::grid_2d_with_yz_overflow: {
        if (start('x')) blocks_of("xnumel", "XBLOCK", out[0]);
        Value raw{};
        std::int64_t max_y = 0;
        if (start('y') && blocks_of("ynumel", "YBLOCK", raw) && block_or("max_y_grid", default_max_y_grid, max_y)) {
          std::tie(out[1], out[2]) = a_.split_y(raw, max_y);
        }
        return;
      }
      case G::mix_order_reduction: {
        Value n{};
        std::int64_t split_size = 0;
        std::int64_t xblock = 0;
        if (!start('x') || !numel("xnumel", n) || !block("RSPLIT_SIZE", split_size) || !block("XBLOCK", xblock)) return;
        if (split_size % xblock != 0) {
          fail({.kind = Kind::not_a_multiple, .value = split_size, .other = xblock});
          return;
        }
        out[0] = a_.ceil_div(n, split_size);
        return;
      }
      case G::cooperative_reduction: {
        std::int64_t rsplit = 0;
        if (start('x') && block("RSPLIT", rsplit)) out[0] = a_.constant(rsplit);
        if (start('y')) blocks_of("xnumel", "XBLOCK", out[1]);
        return;
      }
      case G::split_scan: {
        std::optional<std::int64_t> xblock;
        if (!start('x') || !lookup_block("XBLOCK", -1, xblock)) return;
        if (xblock && *xblock != 1) {
          fail({.kind = Kind::xblock_not_one, .value = *xblock});
          return;
        }
        blocks_of("r0_numel", "R0_BLOCK", out[0]);
        if (start('y')) numel("xnumel", out[1]);
        return;
      }
      case G::fixed:
      case G::precomputed: fail({.kind = Kind::needs_explicit_grid}); return;
      case G::sequential_combo:
      case G::round_robin_combo:
      case G::sequential_flatten_combo: build_combo(type, out); return;
    }
    fail({.kind = Kind::invalid_grid_type, .value = static_cast<std::int64_t>(type)});
  }

  /// The number of sub-kernels (one past the largest `xnumel_<i>`), after
  /// checking that no `ynumel_<i>` lies past them and no `znumel_<i>` exists.
  constexpr bool count_sub_kernels(std::int64_t& count) {
    count = 0;
    for (const Numel& n : numels_) count = std::max(count, index_suffix(name_of(n), "xnumel") + 1);
    if (count == 0) return fail({.kind = Kind::no_sub_kernels});
    for (const Numel& n : numels_) {
      if (const std::int64_t i = index_suffix(name_of(n), "znumel"); i >= 0) {
        return fail({.kind = Kind::combo_z_dimension, .name = "znumel", .index = i});
      }
      if (const std::int64_t i = index_suffix(name_of(n), "ynumel"); i >= count) {
        return fail({.kind = Kind::sub_kernel_out_of_range, .name = "ynumel", .index = i, .other = count});
      }
    }
    return true;
  }

  constexpr void build_combo(ir::GridType type, std::array<Value, 3>& out) {
    std::int64_t count = 0;
    if (!start('x') || !count_sub_kernels(count)) return;
    if (type == ir::GridType::sequential_flatten_combo) {
      build_flatten_x(count, out[0]);
    } else {
      build_combo_x(type, count, out[0]);
    }
    std::optional<std::int64_t> min_blocks;
    if (!start('x') || !lookup_block("min_blocks", -1, min_blocks)) return;
    if (min_blocks) {
      if (*min_blocks < 0) {
        fail({.kind = Kind::negative_setting, .name = "min_blocks", .value = *min_blocks});
        return;
      }
      out[0] = a_.max(out[0], a_.constant(*min_blocks));
    }
    if (type != ir::GridType::sequential_flatten_combo) build_combo_y(count, out);
  }

  /// Sequential: Σ blocks of each sub-kernel. Round robin: the most blocks
  /// of any sub-kernel, times the number of sub-kernels.
  constexpr void build_combo_x(ir::GridType type, std::int64_t count, Value& x) {
    const bool sequential = type == ir::GridType::sequential_combo;
    std::optional<Value> widest_numel;  // round robin: largest numel with an x dimension
    std::optional<Value> most_blocks;   // round robin: largest block count
    std::int64_t xblock = 0;            // read once, when a sub-kernel has an x dimension
    Value sum = a_.constant(0);
    for (std::int64_t i = 0; i < count; ++i) {
      Value n{};
      bool no_x_dim = false;
      if (!numel("xnumel", n, i) || !flag("no_x_dim", i, no_x_dim)) return;
      if (no_x_dim) {
        if (sequential) {
          sum = a_.add(sum, n);
        } else {
          most_blocks = most_blocks ? a_.max(*most_blocks, n) : n;
        }
        continue;
      }
      if (xblock == 0 && !block("XBLOCK", xblock)) return;
      if (sequential) {
        sum = a_.add(sum, a_.ceil_div(n, xblock));
      } else {
        widest_numel = widest_numel ? a_.max(*widest_numel, n) : n;
      }
    }
    if (sequential) {
      x = sum;
      return;
    }
    if (widest_numel) {
      const Value blocks = a_.ceil_div(*widest_numel, xblock);
      most_blocks = most_blocks ? a_.max(*most_blocks, blocks) : blocks;
    }
    x = a_.mul(*most_blocks, a_.constant(count));  // count >= 1, so most_blocks is set
  }

  /// Σ over sub-kernels of x blocks × y blocks, with per-sub-kernel block
  /// sizes.
  constexpr void build_flatten_x(std::int64_t count, Value& x) {
    Value sum = a_.constant(0);
    for (std::int64_t i = 0; i < count; ++i) {
      Value xn{};
      bool no_x_dim = false;
      if (!numel("xnumel", xn, i) || !flag("no_x_dim", i, no_x_dim)) return;
      Value blocks = xn;
      if (!no_x_dim) {
        std::int64_t xblock = 0;
        if (!block_or_shared("XBLOCK", i, xblock)) return;
        blocks = a_.ceil_div(xn, xblock);
      }
      if (has_numel("ynumel", i)) {
        Value yn{};
        std::int64_t yblock = 0;
        if (!numel("ynumel", yn, i) || !block_or_shared("YBLOCK", i, yblock)) return;
        blocks = a_.mul(blocks, a_.ceil_div(yn, yblock));
      }
      sum = a_.add(sum, blocks);
    }
    x = sum;
  }

  /// y from the largest `ynumel_<i>`, split into y × z past `max_y_grid`.
  constexpr void build_combo_y(std::int64_t count, std::array<Value, 3>& out) {
    if (!start('y')) return;
    std::optional<Value> widest;
    for (std::int64_t i = 0; i < count; ++i) {
      if (!has_numel("ynumel", i)) continue;
      Value n{};
      if (!numel("ynumel", n, i)) return;
      widest = widest ? a_.max(*widest, n) : n;
    }
    if (!widest) return;
    std::int64_t yblock = 0;
    std::int64_t max_y = 0;
    if (!block("YBLOCK", yblock) || !block_or("max_y_grid", default_max_y_grid, max_y)) return;
    std::tie(out[1], out[2]) = a_.split_y(a_.ceil_div(*widest, yblock), max_y);
  }

  Arith& a_;
  std::span<const Numel> numels_;
  std::span<const Block> block_;
  GridError error_{};
  char dimension_ = 'x';
  char overflow_dimension_ = 0;
};

template <class Block>
[[nodiscard]] constexpr GridError compute_grid(ir::GridType type, std::span<const NamedInt> numels,
                                               std::span<const Block> block, GridLimits limits, Dim3& out) noexcept {
  if (const GridError e = check_limits(limits); !e.ok()) return e;
  IntArith arith;
  std::array<std::int64_t, 3> dims{};
  GridDefinition<IntArith, NamedInt, Block> definition(arith, numels, block);
  if (const GridError e = definition.build(type, dims); !e.ok()) return e;
  return to_dim3(dims, limits, out);
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Integers
// ---------------------------------------------------------------------------

/// The outcome of `compute_grid_dims`: the grid, or what is wrong with it.
struct GridOutcome {
  Dim3 dims{};
  GridError error{};
  [[nodiscard]] constexpr bool ok() const noexcept { return error.ok(); }
};

/// The grid of `type` for concrete numel values and block configuration,
/// checked against `limits`. `constexpr` and allocation-free, for hot paths
/// and compile-time checks; `grid_dims` is the same with a diagnostic.
[[nodiscard]] constexpr GridOutcome compute_grid_dims(ir::GridType type, std::span<const NamedInt> numels,
                                                      std::span<const NamedInt> block,
                                                      GridLimits limits = cuda_grid_limits) noexcept {
  GridOutcome r;
  r.error = detail::compute_grid(type, numels, block, limits, r.dims);
  return r;
}

/// As above, with the block configuration as the IR stores it.
[[nodiscard]] inline GridOutcome compute_grid_dims(ir::GridType type, std::span<const NamedInt> numels,
                                                   std::span<const ir::BlockSize> block,
                                                   GridLimits limits = cuda_grid_limits) noexcept {
  GridOutcome r;
  r.error = detail::compute_grid(type, numels, block, limits, r.dims);
  return r;
}

/// The grid of `type` for concrete values, or a diagnostic: a missing or
/// bad numel or block size, an overflow, a dimension over `limits`.
[[nodiscard]] inline Result<Dim3> grid_dims(ir::GridType type, std::span<const NamedInt> numels,
                                            std::span<const NamedInt> block, GridLimits limits = cuda_grid_limits) {
  const GridOutcome r = compute_grid_dims(type, numels, block, limits);
  if (!r.ok()) return Diagnostic{describe(type, r.error)};
  return r.dims;
}

[[nodiscard]] inline Result<Dim3> grid_dims(ir::GridType type, std::span<const NamedInt> numels,
                                            std::span<const ir::BlockSize> block,
                                            GridLimits limits = cuda_grid_limits) {
  const GridOutcome r = compute_grid_dims(type, numels, block, limits);
  if (!r.ok()) return Diagnostic{describe(type, r.error)};
  return r.dims;
}

// ---------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------

/// A grid's three dimensions as expressions, in one context.
struct GridExprs {
  expr::Expr x{};
  expr::Expr y{};
  expr::Expr z{};
  friend bool operator==(const GridExprs&, const GridExprs&) = default;
};

/// The grid of `type` over `numels` with block configuration `block` (see
/// the file comment for names and semantics), built in `ctx`. The numels
/// must belong to `ctx`.
[[nodiscard]] inline Result<GridExprs> grid_exprs(expr::Context& ctx, ir::GridType type,
                                                  std::span<const ir::NamedExpr> numels,
                                                  std::span<const ir::BlockSize> block) {
  detail::ExprArith arith{&ctx};
  std::array<expr::Expr, 3> dims{};
  try {
    detail::GridDefinition<detail::ExprArith, ir::NamedExpr, ir::BlockSize> definition(arith, numels, block);
    if (const GridError e = definition.build(type, dims); !e.ok()) return Diagnostic{describe(type, e)};
  } catch (const expr::Error& e) {
    // Constant folding of literal numels that leaves int64.
    return Diagnostic{std::string(ir::grid_type_name(type)) + ": " + e.what()};
  }
  return GridExprs{dims[0], dims[1], dims[2]};
}

[[nodiscard]] inline Result<GridExprs> grid_exprs(expr::Context& ctx, const ir::TypedGrid& grid) {
  return grid_exprs(ctx, grid.type, grid.numels, grid.block);
}

/// An explicit grid's expressions, checked: none null, all of one context.
[[nodiscard]] inline Result<GridExprs> grid_exprs(const ir::ExplicitGrid& grid) {
  const std::array<expr::Expr, 3> dims{grid.x, grid.y, grid.z};
  for (std::size_t d = 0; d < 3; ++d) {
    if (!dims[d]) return Diagnostic{std::string("grid ") + detail::dimension_names[d] + " is a null expression"};
  }
  if (&grid.y.context() != &grid.x.context() || &grid.z.context() != &grid.x.context()) {
    return Diagnostic{"the grid's dimensions belong to different expression contexts"};
  }
  return GridExprs{grid.x, grid.y, grid.z};
}

// ---------------------------------------------------------------------------
// Compiled grids
// ---------------------------------------------------------------------------

/// A grid compiled for evaluation on every launch. Reads the values of
/// `symbols()` (all symbols of the three dimensions, in natural name order)
/// and evaluates each dimension's `expr::CompiledExpr` on a stack copy of
/// the values it reads: no allocation, no lookup. Immutable and copyable;
/// `eval` and `try_eval` may run on any number of threads at once.
class CompiledGrid {
 public:
  /// The most symbols a grid may read (its values are copied on the stack).
  static constexpr std::size_t max_symbols = 64;

  /// The symbols whose values `eval` reads, in order.
  [[nodiscard]] std::span<const expr::Expr> symbols() const noexcept { return symbols_; }

  /// The position in `symbols()` of the symbol called `name`.
  [[nodiscard]] std::optional<std::size_t> symbol_index(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < symbols_.size(); ++i)
      if (symbols_[i].name() == name) return i;
    return std::nullopt;
  }

  [[nodiscard]] const GridExprs& exprs() const noexcept { return exprs_; }
  [[nodiscard]] GridLimits limits() const noexcept { return limits_; }

  /// Fast path: the grid at `values`, or false on any error (wrong number of
  /// values, an overflow or broken assumption, a dimension out of limits);
  /// `eval` says which.
  [[nodiscard]] bool try_eval(std::span<const std::int64_t> values, Dim3& out) const noexcept {
    if (values.size() != symbols_.size()) return false;
    std::array<std::int64_t, 3> dims{};
    for (std::size_t d = 0; d < 3; ++d) {
      const Dimension& dim = dims_[d];
      if (!dim.code) {
        dims[d] = dim.constant;
        continue;
      }
      std::array<std::int64_t, max_symbols> own;
      if (!dim.code->try_eval(operands(dim, values, own), dims[d])) return false;
    }
    return detail::to_dim3(dims, limits_, out).ok();
  }

  /// The grid at `values` (in `symbols()` order), or a diagnostic naming
  /// the dimension and why: `grid y is 70000, above the limit of 65535
  /// blocks; ...`, `grid x: integer overflow in ...`.
  [[nodiscard]] Result<Dim3> eval(std::span<const std::int64_t> values) const {
    if (values.size() != symbols_.size()) {
      std::string names;
      for (const expr::Expr s : symbols_) names += (names.empty() ? "" : ", ") + std::string(s.name());
      return Diagnostic{"the grid reads " + std::to_string(symbols_.size()) + " symbol values (" + names + "), got " +
                        std::to_string(values.size())};
    }
    std::array<std::int64_t, 3> dims{};
    for (std::size_t d = 0; d < 3; ++d) {
      const Dimension& dim = dims_[d];
      if (!dim.code) {
        dims[d] = dim.constant;
        continue;
      }
      std::array<std::int64_t, max_symbols> own;
      const Result<std::int64_t> v = dim.code->eval(operands(dim, values, own));
      if (!v) return Diagnostic{std::string("grid ") + detail::dimension_names[d] + ": " + v.error().message};
      dims[d] = *v;
    }
    Dim3 out;
    if (const GridError e = detail::to_dim3(dims, limits_, out); !e.ok()) {
      return Diagnostic{detail::describe_dimension_error(e)};
    }
    return out;
  }

 private:
  friend Result<CompiledGrid> compile_grid(const GridExprs& exprs, GridLimits limits);
  CompiledGrid() = default;

  struct Dimension {
    std::optional<expr::CompiledExpr> code{};  // none: the dimension is `constant`
    std::int64_t constant = 1;
    std::vector<std::uint32_t> slots{};  // where code's symbols are in symbols_
    bool reads_all = false;              // code reads symbols_ as they are
  };

  /// The values `dim.code` reads: `values` itself, or its symbols gathered
  /// into `own`.
  [[nodiscard]] static std::span<const std::int64_t> operands(const Dimension& dim,
                                                              std::span<const std::int64_t> values,
                                                              std::array<std::int64_t, max_symbols>& own) noexcept {
    if (dim.reads_all) return values;
    for (std::size_t i = 0; i < dim.slots.size(); ++i) own[i] = values[dim.slots[i]];
    return {own.data(), dim.slots.size()};
  }

  std::array<Dimension, 3> dims_{};
  std::vector<expr::Expr> symbols_{};
  GridExprs exprs_{};
  GridLimits limits_{};
};

/// Compiles `exprs` (none null, one context) for `limits`. Fails on
/// invalid limits, on more than `CompiledGrid::max_symbols` symbols, and
/// where `expr::compile` does (expressions nested too deep).
[[nodiscard]] inline Result<CompiledGrid> compile_grid(const GridExprs& exprs,
                                                       GridLimits limits = cuda_grid_limits) {
  const Result<GridExprs> checked = grid_exprs(ir::ExplicitGrid{exprs.x, exprs.y, exprs.z});
  if (!checked) return checked.error();
  if (const GridError e = detail::check_limits(limits); !e.ok()) return Diagnostic{detail::describe_dimension_error(e)};
  CompiledGrid g;
  g.exprs_ = exprs;
  g.limits_ = limits;
  const std::array<expr::Expr, 3> dims{exprs.x, exprs.y, exprs.z};
  for (std::size_t d = 0; d < 3; ++d) {
    if (dims[d].is_integer()) {
      g.dims_[d].constant = dims[d].value();
      continue;
    }
    Result<expr::CompiledExpr> code = expr::compile(dims[d]);
    if (!code) return Diagnostic{std::string("grid ") + detail::dimension_names[d] + ": " + code.error().message};
    g.dims_[d].code = std::move(code).value();
    for (const expr::Expr s : g.dims_[d].code->symbols()) g.symbols_.push_back(s);
  }
  std::sort(g.symbols_.begin(), g.symbols_.end(), expr::ExprLess{});
  g.symbols_.erase(std::unique(g.symbols_.begin(), g.symbols_.end()), g.symbols_.end());
  if (g.symbols_.size() > CompiledGrid::max_symbols) {
    return Diagnostic{"the grid reads " + std::to_string(g.symbols_.size()) + " symbols, more than " +
                      std::to_string(CompiledGrid::max_symbols)};
  }
  for (CompiledGrid::Dimension& dim : g.dims_) {
    if (!dim.code) continue;
    for (const expr::Expr s : dim.code->symbols()) {
      const auto at = std::lower_bound(g.symbols_.begin(), g.symbols_.end(), s, expr::ExprLess{});
      dim.slots.push_back(static_cast<std::uint32_t>(at - g.symbols_.begin()));
    }
    dim.reads_all = dim.slots.size() == g.symbols_.size();  // both sorted, so slot i is i
  }
  return g;
}

/// `grid_exprs` and `compile_grid` in one step.
[[nodiscard]] inline Result<CompiledGrid> compile_grid(expr::Context& ctx, const ir::TypedGrid& grid,
                                                       GridLimits limits = cuda_grid_limits) {
  const Result<GridExprs> exprs = grid_exprs(ctx, grid);
  if (!exprs) return exprs.error();
  return compile_grid(*exprs, limits);
}

[[nodiscard]] inline Result<CompiledGrid> compile_grid(const ir::ExplicitGrid& grid,
                                                       GridLimits limits = cuda_grid_limits) {
  return compile_grid(GridExprs{grid.x, grid.y, grid.z}, limits);
}

}  // namespace wrapir::run
