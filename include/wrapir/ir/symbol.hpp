#pragma once
/// \file
/// Symbol declarations and key paths.
///
/// Every symbol a program's expressions mention is declared once in its
/// symbol table, with where its value comes from. Key paths say how a value
/// is read out of a tensor or a nested result: `[0]`, `['key']`,
/// `.size(1)`, `.stride(0)`, `.storage_offset()`, and the two conversions of
/// dynamic scalars (to int, divide by).

#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/ids.hpp>

#include <wrapir/ir/detail/reflection.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::ir {

/// One step of a key path.
///
/// - `index`: element `value` of a list or tuple (`[0]`);
/// - `key`: entry `key` of a dict (`['out']`), the key printed as an escaped
///   string literal;
/// - `size`, `stride`: `.size(value)`, `.stride(value)` of a tensor;
/// - `storage_offset`: `.storage_offset()` of a tensor;
/// - `convert_to_int`: a bool scalar read as 1 or 0;
/// - `divide_by`: an integer scalar divided exactly by `value` (> 0).
enum class KeyStepKind : std::uint8_t { index, key, size, stride, storage_offset, convert_to_int, divide_by };

/// The names of the key step kinds, by enumerator: the one table of them.
inline constexpr auto key_step_kind_names = std::to_array<std::string_view>(
    {"index", "key", "size", "stride", "storage_offset", "convert_to_int", "divide_by"});
inline constexpr std::size_t key_step_kind_count = key_step_kind_names.size();
static_assert(key_step_kind_count == static_cast<std::size_t>(KeyStepKind::divide_by) + 1,
              "key_step_kind_names needs one name per KeyStepKind");

[[nodiscard]] constexpr std::string_view key_step_kind_name(KeyStepKind k) noexcept {
  const auto i = static_cast<std::size_t>(k);
  return i < key_step_kind_count ? key_step_kind_names[i] : std::string_view{"<invalid key step>"};
}

struct KeyStep {
  KeyStepKind kind = KeyStepKind::index;
  /// The index, dimension or divisor; 0 for the other kinds.
  std::int64_t value = 0;
  /// The dict key for `key`; empty otherwise.
  std::string key{};

  friend bool operator==(const KeyStep&, const KeyStep&) = default;
};

using KeyPath = std::vector<KeyStep>;

/// Where a symbol's value comes from.
///
/// - `input`: the program receives it as an input (listed in its inputs);
/// - `input_shape`: read from a graph input with a key path
///   (`s0 = arg0_1.size(0)`), defined when the program starts;
/// - `unbacked`: defined by a DynamicScalar or UnbackedSymbolDefs line of
///   the body (data-dependent);
/// - `computed`: defined by a SymbolicCallArg line (a named precomputed
///   size such as `triton_poi_fused_add_0_xnumel = s0*s1`).
enum class SymbolOrigin : std::uint8_t { input, input_shape, unbacked, computed };

/// The names of the symbol origins, by enumerator: the one table of them.
inline constexpr auto symbol_origin_names =
    std::to_array<std::string_view>({"input", "input_shape", "unbacked", "computed"});
inline constexpr std::size_t symbol_origin_count = symbol_origin_names.size();
static_assert(symbol_origin_count == static_cast<std::size_t>(SymbolOrigin::computed) + 1,
              "symbol_origin_names needs one name per SymbolOrigin");

[[nodiscard]] constexpr std::string_view symbol_origin_name(SymbolOrigin o) noexcept {
  const auto i = static_cast<std::size_t>(o);
  return i < symbol_origin_count ? symbol_origin_names[i] : std::string_view{"<invalid symbol origin>"};
}

/// An entry of the symbol table.
struct SymbolDecl {
  /// A symbol of the program's context; its name is the variable name in
  /// generated code.
  expr::Expr symbol{};
  SymbolOrigin origin = SymbolOrigin::input;
  /// For `input_shape`: the input it is read from and how.
  std::optional<BufferId> source{};
  KeyPath path{};
  /// A typical value, used where a number is needed at compile time
  /// (planning sizes, autotuning); never for correctness.
  std::optional<std::int64_t> hint{};

  friend bool operator==(const SymbolDecl&, const SymbolDecl&) = default;
};

}  // namespace wrapir::ir

// Reflection (see ir/reflect.hpp). SymbolBinding is adapted with the other
// value records at the end of ir/lines.hpp; SymbolDecl, a table entry, has
// forms of its own in JSON and the text form.
WRAPIR_REFLECT(wrapir::ir::KeyStep, kind, value, key);
