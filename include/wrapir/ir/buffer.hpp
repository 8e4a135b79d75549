#pragma once
/// \file
/// Buffer and pool declarations: the entries of a program's buffer and pool
/// tables.

#include <wrapir/ir/device.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/box.hpp>

#include <wrapir/ir/detail/reflection.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wrapir::ir {

/// What a buffer is for; decides which lines may create and free it.
///
/// - `input`: a graph input, passed to the program; never allocated, freed
///   only with a `Free` line and only when `donated`.
/// - `intermediate`: created by a line of the body (Allocate, Reuse,
///   AllocFromPool, Reinterpret, an extern call, MultiOutput, ...).
/// - `output`: like an intermediate, and returned by the program.
/// - `constant`: a parameter or constant owned by the caller (Inductor's
///   constants); never allocated or freed.
/// - `workspace`: scratch memory of one kernel call (WorkspaceAllocate /
///   WorkspaceFree), a 1-D buffer whose size is the workspace's count.
/// - `comm`: a communication (symmetric-memory) buffer
///   (CommBufferAllocate / CommBufferFree), with its `comm` info.
enum class BufferRole : std::uint8_t { input, intermediate, output, constant, workspace, comm };

/// The names of the buffer roles, by enumerator: the one table of them.
inline constexpr auto buffer_role_names =
    std::to_array<std::string_view>({"input", "intermediate", "output", "constant", "workspace", "comm"});
inline constexpr std::size_t buffer_role_count = buffer_role_names.size();
static_assert(buffer_role_count == static_cast<std::size_t>(BufferRole::comm) + 1,
              "buffer_role_names needs one name per BufferRole");

[[nodiscard]] constexpr std::string_view buffer_role_name(BufferRole r) noexcept {
  const auto i = static_cast<std::size_t>(r);
  return i < buffer_role_count ? buffer_role_names[i] : std::string_view{"<invalid buffer role>"};
}

/// The kind of a communication buffer. Inductor supports symmetric memory
/// (`empty_strided_p2p`) only.
enum class CommBufferType : std::uint8_t { symm_mem };

/// The names of the comm buffer types, by enumerator.
inline constexpr auto comm_buffer_type_names = std::to_array<std::string_view>({"symm_mem"});
inline constexpr std::size_t comm_buffer_type_count = comm_buffer_type_names.size();
static_assert(comm_buffer_type_count == static_cast<std::size_t>(CommBufferType::symm_mem) + 1,
              "comm_buffer_type_names needs one name per CommBufferType");

[[nodiscard]] constexpr std::string_view comm_buffer_type_name(CommBufferType t) noexcept {
  const auto i = static_cast<std::size_t>(t);
  return i < comm_buffer_type_count ? comm_buffer_type_names[i] : std::string_view{"<invalid comm buffer type>"};
}

/// The communication group of a comm buffer. `group` is the process group's
/// name, printed as a string literal (escaped), never as code.
struct CommBufferInfo {
  CommBufferType type = CommBufferType::symm_mem;
  std::string group{};
  friend bool operator==(const CommBufferInfo&, const CommBufferInfo&) = default;
};

/// An entry of the buffer table.
struct BufferDecl {
  // The members are ordered by size so that the small ones share one 8-byte
  // word after the layout: a buffer table holds one entry per buffer, 120
  // bytes (the static_assert below); ordered by meaning, with `comm` after
  // `donated`, it was 136, and no order of these member types that keeps it
  // there is smaller: 128 would need `stream` narrowed, 120 `Device::index`
  // too (docs/performance.md, "The loaded program's heap"). Name the members
  // past `donated` when initializing (`.multi_output = true`), in this order.

  /// The variable name in generated code (`buf0`, `arg0_1`).
  std::string name{};
  /// Shape, strides, storage offset, dtype and device. For a view
  /// (Reinterpret), the storage offset counts in the base's storage.
  Layout layout{};
  BufferRole role = BufferRole::intermediate;
  /// For inputs: the caller gives up the buffer, so the program may free it
  /// (and reuse planners may reuse it).
  bool donated = false;
  /// The buffer holds a tuple, list or dict of results of an extern kernel
  /// (Inductor's MultiOutputLayout), not a tensor: only MultiOutput and
  /// UnbackedSymbolDefs read it; it is never allocated, reused, passed to a
  /// kernel or returned, and its layout is not used.
  bool multi_output = false;
  /// False when the buffer's data may not be aligned as kernels assume
  /// (Inductor's unaligned_buffers); part of the reuse key.
  bool aligned = true;
  /// The stream whose work produces the buffer; reuse never crosses
  /// streams (part of Inductor's reuse key).
  std::uint32_t stream = 0;
  /// Present exactly for role `comm`.
  OptionalBox<CommBufferInfo> comm{};  // boxed: rare, and a buffer table can be long

  friend bool operator==(const BufferDecl&, const BufferDecl&) = default;
};

// 120 bytes with libstdc++'s 32-byte std::string on 64-bit targets.
static_assert(sizeof(void*) != 8 || sizeof(BufferDecl) == sizeof(std::string) + sizeof(Layout) + 16,
              "keep a BufferDecl's small members in one 8-byte word after the layout, and comm in the next");

/// The tensor a pool's storage is created as, when not bytes. Inductor
/// creates a pool whose size equals one of its blocks' as that block's
/// buffer (`pool0 = empty_strided_cuda((128, 128), (128, 1),
/// torch.float32)`), any other as `uint8` bytes; AllocFromPool views the
/// storage at byte offsets either way. Its storage must span exactly the
/// pool's `size_bytes` (`storage_bytes` of a layout with these fields and
/// offset 0; the verifier checks when the equality is decidable).
struct PoolTensor {
  DType dtype = DType::uint8;
  std::vector<expr::Expr> sizes{};
  std::vector<expr::Expr> strides{};
  friend bool operator==(const PoolTensor&, const PoolTensor&) = default;
};

/// An entry of the pool table (pool planning, reference §3.4): one block of
/// `size_bytes` bytes on `device` that AllocFromPool lines carve buffers
/// from at byte offsets. PoolCreate allocates it as `tensor` when present,
/// else as `size_bytes` `uint8` elements.
struct PoolDecl {
  std::string name{};
  Device device{};
  expr::Expr size_bytes{};
  std::optional<PoolTensor> tensor{};
  friend bool operator==(const PoolDecl&, const PoolDecl&) = default;
};

/// The layout a pool is created with (offset 0, on the pool's device).
[[nodiscard]] inline Layout pool_layout(const PoolDecl& p, const PoolTensor& t) {
  Layout l;
  l.dtype = t.dtype;
  l.device = p.device;
  l.sizes = t.sizes;
  l.strides = t.strides;
  l.storage_offset = p.size_bytes ? p.size_bytes.context().integer(0) : expr::Expr{};
  return l;
}

}  // namespace wrapir::ir

// Reflection (see ir/reflect.hpp). The table entries have forms of their own
// in JSON and the text form (defaults left out, the layout inline), so they
// are not walked field by field and not adapted.
WRAPIR_REFLECT(wrapir::ir::CommBufferInfo, type, group);
// A record in both forms (a JSON object, a text `{dtype=..., ...}`).
WRAPIR_REFLECT(wrapir::ir::PoolTensor, dtype, sizes, strides);
