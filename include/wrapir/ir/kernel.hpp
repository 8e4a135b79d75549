#pragma once
/// \file
/// Kernels: declarations (name, language, signature), parameter types,
/// sources, launch metadata and launch grids.
///
/// A program's kernel table holds one `KernelDecl` per kernel; a
/// `KernelDefinition` line gives its source and metadata, and `KernelCall`
/// lines launch it. The grid of a launch is either explicit expressions or,
/// as Inductor does for Triton, a grid type (reference §4.1) plus the block
/// configuration the launcher applies to the numel arguments.

#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/arg_slice.hpp>
#include <wrapir/ir/box.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/small_vector.hpp>

#include <wrapir/ir/detail/reflection.hpp>
#include <boost/variant2/variant.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace wrapir::ir {

/// What a kernel is written in, which decides how emitters define and call
/// it: Triton source (`async_compile.triton`), CUDA C++ source, C++ source
/// (CPU kernels), or a PTX / cubin binary loaded by reference.
enum class KernelLanguage : std::uint8_t { triton, cuda, cpp, ptx, cubin };

/// The names of the kernel languages, by enumerator: the one table that
/// `kernel_language_name`, the count and the codecs (ir/enum_names.hpp) read.
inline constexpr auto kernel_language_names =
    std::to_array<std::string_view>({"triton", "cuda", "cpp", "ptx", "cubin"});
inline constexpr std::size_t kernel_language_count = kernel_language_names.size();
static_assert(kernel_language_count == static_cast<std::size_t>(KernelLanguage::cubin) + 1,
              "kernel_language_names needs one name per KernelLanguage");

[[nodiscard]] constexpr std::string_view kernel_language_name(KernelLanguage l) noexcept {
  const auto i = static_cast<std::size_t>(l);
  return i < kernel_language_count ? kernel_language_names[i] : std::string_view{"<invalid kernel language>"};
}

/// Triton's short name of a dtype as its signatures spell it (`fp32`, `i64`,
/// `i1`, `fp8e4nv`); dtypes Triton has no name for use wrapir's name.
[[nodiscard]] constexpr std::string_view triton_type_name(DType d) noexcept {
  switch (d) {
    case DType::bool_: return "i1";
    case DType::uint8: return "u8";
    case DType::int8: return "i8";
    case DType::int16: return "i16";
    case DType::int32: return "i32";
    case DType::int64: return "i64";
    case DType::uint16: return "u16";
    case DType::uint32: return "u32";
    case DType::uint64: return "u64";
    case DType::float16: return "fp16";
    case DType::bfloat16: return "bf16";
    case DType::float32: return "fp32";
    case DType::float64: return "fp64";
    case DType::float8_e4m3fn: return "fp8e4nv";
    case DType::float8_e5m2: return "fp8e5";
    case DType::float8_e4m3fnuz: return "fp8e4b8";
    case DType::float8_e5m2fnuz: return "fp8e5b16";
    default: return name(d);
  }
}

/// The type of one kernel parameter: a pointer to elements of `dtype`
/// (a buffer argument) or a scalar of `dtype` (an int, float, bool or
/// symbolic integer argument). Written as Triton writes signatures:
/// `*fp32`, `i32`.
struct ParamType {
  bool pointer = false;
  DType dtype = DType::int64;

  friend constexpr bool operator==(ParamType, ParamType) = default;
};

/// The parameter types of a kernel call, one per argument: up to eight held
/// in place, in the 24 bytes of the `std::vector` they replace (a call's
/// types were a heap block of their own, 32 bytes a call for a 4-parameter
/// kernel; most of the corpus's kernels take at most eight).
using ArgTypes = SmallVector<ParamType, 8>;

[[nodiscard]] inline std::string to_string(ParamType t) {
  // Appended piecewise: `"*" + std::string(...)` trips g++ 12's -Wrestrict
  // false positive at -O3.
  std::string s;
  if (t.pointer) s += '*';
  s += triton_type_name(t.dtype);
  return s;
}

/// Parses `*fp32`, `i32`, `*float32`, ... (Triton or wrapir dtype names).
[[nodiscard]] inline std::optional<ParamType> parse_param_type(std::string_view s) noexcept {
  ParamType t{};
  if (!s.empty() && s.front() == '*') {
    t.pointer = true;
    s.remove_prefix(1);
  }
  for (std::size_t i = 0; i < dtype_count; ++i) {
    const auto d = static_cast<DType>(i);
    if (triton_type_name(d) == s || name(d) == s) {
      t.dtype = d;
      return t;
    }
  }
  return std::nullopt;
}

/// One declared parameter of a kernel. Names are printed into generated C++
/// launchers and must be valid names.
struct KernelParam {
  std::string name{};
  ParamType type{};

  friend bool operator==(const KernelParam&, const KernelParam&) = default;
};

/// Parses a signature written as `name: type, name: type` (`in_ptr0: *fp32,
/// out_ptr0: *fp32, xnumel: i32`); whitespace is free. A bad name or type
/// is a diagnostic whose column points at it.
[[nodiscard]] inline Result<std::vector<KernelParam>> parse_signature(std::string_view text) {
  std::vector<KernelParam> params{};
  std::size_t pos = 0;
  auto skip_space = [&] {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  };
  skip_space();
  if (pos == text.size()) return params;
  while (true) {
    skip_space();
    const std::size_t name_start = pos;
    while (pos < text.size() && text[pos] != ':' && text[pos] != ',' && text[pos] != ' ') ++pos;
    const std::string_view param_name = text.substr(name_start, pos - name_start);
    if (auto err = check_name(param_name, "kernel parameter")) return Diagnostic{*err, name_start};
    skip_space();
    if (pos == text.size() || text[pos] != ':')
      return Diagnostic{"expected ':' and a type after parameter " + quote_for_diagnostic(param_name), pos};
    ++pos;
    skip_space();
    const std::size_t type_start = pos;
    while (pos < text.size() && text[pos] != ',' && text[pos] != ' ') ++pos;
    const std::string_view type_text = text.substr(type_start, pos - type_start);
    const auto type = parse_param_type(type_text);
    if (!type)
      return Diagnostic{"unknown parameter type " + quote_for_diagnostic(type_text) +
                            ": expected a dtype such as i32 or fp32, or a pointer such as *fp32",
                        type_start};
    params.push_back(KernelParam{std::string(param_name), *type});
    skip_space();
    if (pos == text.size()) return params;
    if (text[pos] != ',') return Diagnostic{"expected ',' between parameters", pos};
    ++pos;
  }
}

/// An entry of the kernel table: what calls are checked against.
/// `signature` lists the runtime parameters in call order (constexpr
/// parameters are metadata constants, not parameters).
struct KernelDecl {
  std::string name{};
  KernelLanguage language = KernelLanguage::triton;
  std::vector<KernelParam> signature{};

  friend bool operator==(const KernelDecl&, const KernelDecl&) = default;
};

/// Kernel source text (Triton, CUDA C++, C++), stored verbatim; emitters
/// escape it.
struct SourceText {
  std::string text{};
  friend bool operator==(const SourceText&, const SourceText&) = default;
};

/// A compiled kernel loaded from a file: a PTX or cubin `path` and the name
/// of the `entry` function inside it.
struct BinaryRef {
  std::string path{};
  std::string entry{};
  friend bool operator==(const BinaryRef&, const BinaryRef&) = default;
};

using KernelSource = boost::variant2::variant<SourceText, BinaryRef>;

/// The grid types of Inductor's launchers (reference §4.1), by the name of
/// Inductor's GridExpr class.
enum class GridType : std::uint8_t {
  grid_1d,
  grid_2d,
  grid_3d,
  batch_matmul_grid_3d,
  grid_2d_with_yz_overflow,
  mix_order_reduction,
  cooperative_reduction,
  split_scan,
  fixed,
  precomputed,
  sequential_combo,
  round_robin_combo,
  sequential_flatten_combo,
};

/// Inductor's class names (`Grid1D`, `BatchMatmulGrid3D`, ...), by
/// enumerator: the one table of grid type names.
inline constexpr auto grid_type_names = std::to_array<std::string_view>({
    "Grid1D", "Grid2D", "Grid3D", "BatchMatmulGrid3D", "Grid2DWithYZOverflow", "MixOrderReductionGrid",
    "CooperativeReductionGrid", "SplitScanGrid", "FixedGrid", "PrecomputedGrid", "SequentialComboKernelGrid",
    "RoundRobinComboKernelGrid", "SequentialFlattenComboKernelGrid"});
inline constexpr std::size_t grid_type_count = grid_type_names.size();
static_assert(grid_type_count == static_cast<std::size_t>(GridType::sequential_flatten_combo) + 1,
              "grid_type_names needs one name per GridType");

/// Inductor's class name: `Grid1D`, `BatchMatmulGrid3D`, ...
[[nodiscard]] constexpr std::string_view grid_type_name(GridType g) noexcept {
  const auto i = static_cast<std::size_t>(g);
  return i < grid_type_count ? grid_type_names[i] : std::string_view{"<invalid grid type>"};
}

/// One entry of a block configuration (`XBLOCK: 1024`, `R0_BLOCK: 8`,
/// `RSPLIT: 4`, `max_y_grid: 65535`).
struct BlockSize {
  Name name{};
  std::int64_t value = 0;
  friend bool operator==(const BlockSize&, const BlockSize&) = default;
};

/// A named symbolic value: the numel arguments of a typed grid (`xnumel`,
/// `ynumel`, `r0_numel`).
struct NamedExpr {
  Name name{};
  expr::Expr value{};
  friend bool operator==(const NamedExpr&, const NamedExpr&) = default;
};

/// The grid is computed by the kernel's launcher from its definition's grid
/// type and block configuration and the numel arguments of the call (how
/// Inductor launches Triton kernels); CPU kernels have no grid.
struct LauncherGrid {
  friend constexpr bool operator==(LauncherGrid, LauncherGrid) noexcept { return true; }
};

/// Grid dimensions given as expressions (user kernels, FixedGrid, CUDA).
struct ExplicitGrid {
  expr::Expr x{}, y{}, z{};
  friend bool operator==(const ExplicitGrid&, const ExplicitGrid&) = default;
};

/// A grid type with its numels and block configuration written at the call,
/// so that the grid can be computed without the kernel's launcher.
struct TypedGrid {
  GridType type = GridType::grid_1d;
  std::vector<NamedExpr> numels{};
  std::vector<BlockSize> block{};
  friend bool operator==(const TypedGrid&, const TypedGrid&) = default;
};

/// How a call's grid is given. The explicit and typed forms are boxed (one
/// pointer each) so that a launch grid takes 16 bytes rather than 64: every
/// line of a program is as large as its largest kind, and the launcher grid
/// of Inductor's programs needs no storage. A grid reads as its form through
/// `grid_if` (`if (const ExplicitGrid* g = grid_if<ExplicitGrid>(call.grid))`)
/// and is assigned from any form (`call.grid = ExplicitGrid{x, y, z}`); a
/// visitor may take `const ExplicitGrid&`, which a `Box` converts to.
using LaunchGrid = boost::variant2::variant<LauncherGrid, Box<ExplicitGrid>, Box<TypedGrid>>;

/// The form `G` (LauncherGrid, ExplicitGrid or TypedGrid) of `grid`, or null
/// when it has another.
template <class G>
[[nodiscard]] const G* grid_if(const LaunchGrid& grid) noexcept {
  if constexpr (std::is_same_v<G, LauncherGrid>) {
    return boost::variant2::get_if<LauncherGrid>(&grid);
  } else {
    const Box<G>* boxed = boost::variant2::get_if<Box<G>>(&grid);
    return boxed ? &**boxed : nullptr;
  }
}
template <class G>
[[nodiscard]] G* grid_if(LaunchGrid& grid) noexcept {
  if constexpr (std::is_same_v<G, LauncherGrid>) {
    return boost::variant2::get_if<LauncherGrid>(&grid);
  } else {
    Box<G>* boxed = boost::variant2::get_if<Box<G>>(&grid);
    return boxed ? &**boxed : nullptr;
  }
}

/// Inductor's autotuning hints (`inductor_meta["autotune_hints"]`, members
/// of its `AutotuneHint` enumeration), by Inductor's member names.
enum class AutotuneHint : std::uint8_t { one_element_per_thread };

inline constexpr auto autotune_hint_names = std::to_array<std::string_view>({"ONE_ELEMENT_PER_THREAD"});
inline constexpr std::size_t autotune_hint_count = autotune_hint_names.size();
static_assert(autotune_hint_count == static_cast<std::size_t>(AutotuneHint::one_element_per_thread) + 1,
              "autotune_hint_names needs one name per AutotuneHint");

[[nodiscard]] constexpr std::string_view autotune_hint_name(AutotuneHint h) noexcept {
  const auto i = static_cast<std::size_t>(h);
  return i < autotune_hint_count ? autotune_hint_names[i] : std::string_view{"<invalid autotune hint>"};
}

/// One fact Triton's compiler may assume of a parameter, from the
/// `triton_meta["configs"]` of a Triton kernel: `{(0,): [['tt.divisibility',
/// 16]]}` is `{param=in_ptr0, name="tt.divisibility", value=16}` (the
/// pointer is 16-byte aligned; an integer, a multiple of 16). `param` names
/// a parameter of the kernel's signature or one of its constexprs.
struct ParamAttribute {
  Name param{};
  std::string name{};
  std::int64_t value = 0;
  friend bool operator==(const ParamAttribute&, const ParamAttribute&) = default;
};

/// What Inductor's `triton_meta` says beyond the signature (which the kernel
/// table holds) and the constants (`KernelMetadata::constants`): the
/// compiler's target and what it may assume of the parameters.
struct TritonMeta {
  /// The device compiled for (`DeviceProperties(type, index)`).
  std::optional<Device> device{};
  /// `DeviceProperties.cc`: 90 for sm_90. A cubin runs only on a device of
  /// this compute capability.
  std::optional<std::int64_t> compute_capability{};
  /// Threads per warp (`DeviceProperties.warp_size`): a launch runs
  /// `num_warps * warp_size` threads per block.
  std::optional<std::int64_t> warp_size{};
  /// The parameters the signature types `constexpr` (`XBLOCK`, `R0_BLOCK`,
  /// constants), in signature order: bound at compile time, never passed.
  std::vector<Name> constexprs{};
  /// `triton_meta["configs"]`: facts about parameters (divisibility).
  std::vector<ParamAttribute> attributes{};
  /// Whether launches use programmatic dependent launch (`launch_pdl`).
  std::optional<bool> launch_pdl{};
  friend bool operator==(const TritonMeta&, const TritonMeta&) = default;
};

/// What Inductor's `inductor_meta` says that launchers and emitters use
/// (its `grid_type` is `KernelMetadata::grid_type`).
struct InductorMeta {
  /// The kernel's name as Inductor recorded it: the kernel table's name.
  std::optional<Name> kernel_name{};
  /// The parameters the kernel updates in place (`in_out_ptr0`): inputs it
  /// writes, which a benchmarking launcher must clone.
  std::vector<Name> mutated_arg_names{};
  std::vector<AutotuneHint> autotune_hints{};
  /// Inductor's counts of loads, stores and reductions in the kernel (its
  /// autotuner's heuristics read them).
  std::optional<std::int64_t> num_load{};
  std::optional<std::int64_t> num_store{};
  std::optional<std::int64_t> num_reduction{};
  /// Inductor's hash of its Triton backend (`backend_hash`): opaque, one
  /// line of text; a cache key, never interpreted.
  std::optional<std::string> backend_hash{};
  friend bool operator==(const InductorMeta&, const InductorMeta&) = default;
};

/// What a kernel definition tells its launcher (Triton's `triton_meta` and
/// `inductor_meta`, reduced to what launching needs). Absent values are left
/// to the kernel's defaults.
struct KernelMetadata {
  /// constexpr parameters bound at definition time (`XBLOCK: 1024`; for an
  /// Inductor kernel, `triton_meta["constants"]`).
  std::vector<NamedArg> constants{};
  std::optional<std::int64_t> num_warps{};
  std::optional<std::int64_t> num_stages{};
  /// Dynamic shared memory the kernel needs, in bytes.
  std::optional<std::int64_t> shared_memory_bytes{};
  std::optional<GridType> grid_type{};
  std::vector<BlockSize> block{};
  /// Triton kernels: the rest of `triton_meta` and of `inductor_meta`.
  OptionalBox<TritonMeta> triton_meta{};      // boxed: CPU kernels have none
  OptionalBox<InductorMeta> inductor_meta{};  // boxed: as triton_meta
  /// C++ kernels: the parameters the definition declares `const` (`const
  /// float* in_ptr0`, `const int64_t ks0`), which the kernel only reads.
  /// With the kernel table's types they give the definition's C++
  /// parameter types (`cpp_param_type`).
  std::vector<Name> const_params{};
  friend bool operator==(const KernelMetadata&, const KernelMetadata&) = default;
};

/// The C++ type of parameter `param` as Inductor's C++ kernel definitions
/// and `cpp_pybinding` spell it: `const float*`, `float*`, `const int64_t`.
[[nodiscard]] inline std::string cpp_param_type(const KernelParam& param, const KernelMetadata& metadata) {
  std::string type;
  for (const Name& c : metadata.const_params)
    if (c.text == param.name) {
      type = "const ";
      break;
    }
  type += cpp_type(param.type.dtype);
  if (param.type.pointer) type += '*';
  return type;
}

}  // namespace wrapir::ir

// Reflection: every field, in declaration order, for the generic hashing,
// JSON and text codecs (ir/reflect.hpp). A field left out here is invisible
// to them; a static_assert in ir/reflect.hpp counts the fields. ParamType
// (one string, `*fp32`, in every codec) and the kernel table's entries
// (their own forms in JSON and text) are not walked, so not adapted: each
// adapter costs every translation unit that includes it.
WRAPIR_REFLECT(wrapir::ir::SourceText, text);
WRAPIR_REFLECT(wrapir::ir::BinaryRef, path, entry);
WRAPIR_REFLECT(wrapir::ir::LauncherGrid);
WRAPIR_REFLECT(wrapir::ir::ExplicitGrid, x, y, z);
WRAPIR_REFLECT(wrapir::ir::TypedGrid, type, numels, block);
WRAPIR_REFLECT(wrapir::ir::ParamAttribute, param, name, value);
WRAPIR_REFLECT(wrapir::ir::TritonMeta, device, compute_capability, warp_size, constexprs, attributes, launch_pdl);
WRAPIR_REFLECT(wrapir::ir::InductorMeta, kernel_name, mutated_arg_names, autotune_hints, num_load, num_store,
               num_reduction, backend_hash);
WRAPIR_REFLECT(wrapir::ir::KernelMetadata, constants, num_warps, num_stages, shared_memory_bytes, grid_type,
               block, triton_meta, inductor_meta, const_params);
// NamedExpr, BlockSize and ArgSlice are adapted with the other value records
// at the end of ir/lines.hpp.
