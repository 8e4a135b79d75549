#pragma once
/// \file
/// Typed ids: the small integers by which lines refer to the entries of a
/// program's tables (buffers, kernels, pools, subgraphs).
///
/// An id is an index into one table of one Program, so it is meaningful only
/// together with that program; a `BufferId` cannot be passed where a
/// `KernelId` is expected. Ids keep passes fast (no string lookups) and
/// let JSON and the text form refer to entries by their names, which the
/// tables hold once.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace wrapir::ir {

/// An index into the table named by `Tag`.
template <class Tag>
struct Id {
  std::uint32_t index = 0;

  friend constexpr bool operator==(Id, Id) = default;
  friend constexpr auto operator<=>(Id, Id) = default;
};

struct BufferTag {};
struct KernelTag {};
struct PoolTag {};
struct GraphTag {};

/// A buffer of `Program::buffers` (inputs, intermediates, outputs, views,
/// constants, workspaces, comm buffers).
using BufferId = Id<BufferTag>;
/// A kernel of `Program::kernels`.
using KernelId = Id<KernelTag>;
/// A memory pool of `Program::pools`.
using PoolId = Id<PoolTag>;
/// A subgraph of `Program::subgraphs`.
using GraphId = Id<GraphTag>;

}  // namespace wrapir::ir

template <class Tag>
struct std::hash<wrapir::ir::Id<Tag>> {
  std::size_t operator()(wrapir::ir::Id<Tag> id) const noexcept { return std::hash<std::uint32_t>{}(id.index); }
};
