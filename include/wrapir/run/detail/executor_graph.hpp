#pragma once
/// \file
/// CUDA Graph mode of `run::Executor`, part one (docs/runtime.md, "CUDA
/// Graph mode"): the graph's own device memory and the prepare-time check
/// that a program can be captured. The call path (cache, capture, replay)
/// is `executor_graph_call.hpp`.
///
/// **Memory.** A captured graph writes fixed addresses, and nothing may
/// allocate from the driver while a stream is captured; so the first call
/// of a symbol tuple runs uncaptured with a *recording* `GraphMemory`: each
/// device allocation the frame makes is served by the backend as usual, and
/// its size and lifetime (allocation and release, counted on one clock) are
/// written down. From that record `plan` gives every allocation a block,
/// reusing a block of the same size once its previous user was released
/// (what the caching allocator did in the uncaptured call, made fixed), and
/// allocates the blocks; the capture then runs with a *serving*
/// `GraphMemory` that hands out views of the blocks in the same order. The
/// blocks belong to the cached graph (and to any output still referring to
/// them), never to the backend's free lists, so no other allocation can be
/// given memory a replay writes. A program's planned arena (`PoolCreate`)
/// is one such allocation: an arena-planned program gives its graph a
/// handful of blocks.
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/run/detail/executor_prepare.hpp>
#include <wrapir/run/detail/executor_values.hpp>
#include <wrapir/run/executor_backend.hpp>
#include <wrapir/run/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace wrapir::run::executor_detail {

class GraphMemory {
 public:
  enum class Mode : std::uint8_t { record, serve };

  /// Block sizes are rounded to this; block starts keep the backend's
  /// alignment (256 bytes and more for cuMemAlloc).
  static constexpr std::int64_t granularity = 512;
  static constexpr std::size_t never = std::numeric_limits<std::size_t>::max();

  struct Allocation {
    std::int64_t bytes = 0;
    ir::Device device{};
    std::size_t born = 0, died = never;  // on the record's clock
    std::size_t block = never;           // after `plan`
  };
  /// What a recording call noted, then the blocks it was given.
  struct Record {
    std::vector<Allocation> allocations;
    std::size_t clock = 0;
    std::vector<std::shared_ptr<Storage>> blocks;
  };

  /// A recording memory.
  GraphMemory() : mode_(Mode::record), record_(std::make_shared<Record>()) {}
  /// A memory that serves `record`'s planned blocks.
  explicit GraphMemory(std::shared_ptr<const Record> record) : mode_(Mode::serve), served_(std::move(record)) {}

  [[nodiscard]] Mode mode() const noexcept { return mode_; }

  /// A device storage of `bytes` for the frame. Throws `Failure`.
  std::shared_ptr<Storage> allocate(const DeviceBackend& backend, const ir::Device& device, std::int64_t bytes) {
    if (mode_ == Mode::record) return record(backend, device, bytes);
    const std::size_t i = next_++;
    if (i >= served_->allocations.size() || served_->allocations[i].bytes != bytes)
      fail("graph mode: the captured call allocates differently from the first call of the same symbols (allocation " +
           std::to_string(i) + ": " + std::to_string(bytes) + " bytes, the first call: " +
           (i < served_->allocations.size() ? std::to_string(served_->allocations[i].bytes) + " bytes" : "none") +
           "); the program's allocations must depend on its symbols only");
    auto s = std::make_shared<Storage>();
    s->device = device;
    s->nbytes = bytes;
    const Allocation& a = served_->allocations[i];
    if (a.block == never) return s;  // zero bytes: no block
    const std::shared_ptr<Storage>& block = served_->blocks[a.block];
    s->data = block->data;
    s->owner = block;  // the block outlives every view of it, the cache's entry or not
    return s;
  }

  /// After the recording call (its outputs still held): gives each
  /// allocation a block and allocates the blocks from `backend`. Returns
  /// the record, for a serving memory.
  [[nodiscard]] std::shared_ptr<const Record> plan(const DeviceBackend& backend) {
    Record& r = *record_;
    const std::size_t end = r.clock;
    struct Block {
      std::int64_t bytes;
      ir::Device device;
      std::size_t free_from;  // clock after its last user was released; never: live to the end
    };
    std::vector<Block> blocks;
    for (Allocation& a : r.allocations) {
      if (a.bytes == 0) continue;
      const std::int64_t bytes = (a.bytes + granularity - 1) / granularity * granularity;
      const std::size_t until = a.died == never || a.died > end ? never : a.died;
      std::size_t chosen = never;
      for (std::size_t b = 0; b < blocks.size() && chosen == never; ++b)
        if (blocks[b].bytes == bytes && blocks[b].device == a.device && blocks[b].free_from != never &&
            blocks[b].free_from <= a.born)
          chosen = b;
      if (chosen == never) {
        chosen = blocks.size();
        blocks.push_back(Block{bytes, a.device, never});
      }
      blocks[chosen].free_from = until;
      a.block = chosen;
    }
    r.blocks.reserve(blocks.size());
    for (const Block& b : blocks) {
      Result<std::shared_ptr<Storage>> s = backend.allocate(b.device, b.bytes);
      if (!s) fail("graph mode: allocating the graph's memory (" + std::to_string(b.bytes) + " bytes): " + s.error().message);
      r.blocks.push_back(*std::move(s));
    }
    std::shared_ptr<const Record> out = record_;
    return out;
  }

 private:
  std::shared_ptr<Storage> record(const DeviceBackend& backend, const ir::Device& device, std::int64_t bytes) {
    Result<std::shared_ptr<Storage>> real = backend.allocate(device, bytes);
    if (!real) fail(real.error().message);
    Record& r = *record_;
    const std::size_t index = r.allocations.size();
    r.allocations.push_back(Allocation{bytes, device, r.clock++});
    auto s = std::make_shared<Storage>(**real);
    // The release is noted on the record's clock; the wrapper keeps the
    // backend's storage until then.
    s->owner = std::shared_ptr<void>(s->data, [record = record_, index, keep = *std::move(real)](void*) noexcept {
      record->allocations[index].died = record->clock++;
    });
    return s;
  }

  Mode mode_;
  std::shared_ptr<Record> record_;
  std::shared_ptr<const Record> served_;
  std::size_t next_ = 0;
};

/// Why graph mode cannot capture line `l`, or empty.
template <class K>
std::string graph_refusal(const ir::Program& p, const K& l) {
  using namespace std::string_literals;
  auto on_host = [&](const ir::BufferArg& b) {
    return p.contains(b.buffer) && p.buffer(b.buffer).layout.device.type == ir::DeviceType::cpu;
  };
  if constexpr (std::is_same_v<K, ir::DynamicScalar> || std::is_same_v<K, ir::UnbackedSymbolDefs>)
    return "it reads a device value on the host (.item(), an unbacked symbol): that waits for the device inside the "
           "capture, and the rest of the program depends on the data"s;
  else if constexpr (std::is_same_v<K, ir::Conditional>) {
    if (l.predicate.template holds<ir::BufferArg>())
      return "its predicate is a tensor read on the host: which branch runs depends on the data"s;
    return {};
  } else if constexpr (std::is_same_v<K, ir::WhileLoop>)
    return "its condition is read on the host every iteration: how often the body runs depends on the data"s;
  else if constexpr (std::is_same_v<K, ir::DeviceCopy>) {
    if (on_host(l.destination) || on_host(l.source))
      return "a copy between host and device memory waits for the device or reads host memory at replay"s;
    return {};
  } else if constexpr (std::is_same_v<K, ir::KernelCall> || std::is_same_v<K, ir::MultiKernelCall>) {
    if (l.device.type == ir::DeviceType::cpu) return "a CPU kernel runs on the host when captured, not at replay"s;
    return {};
  } else if constexpr (std::is_same_v<K, ir::ExternKernelAlloc> || std::is_same_v<K, ir::ExternKernelMultiOut>)
    return "the extern allocates its result itself, outside the graph's planned memory (only externs that write an "
           "out= buffer are captured)"s;
  else
    return {};
}

/// Throws `Failure` naming the first line of `p` (or of its subgraphs)
/// graph mode cannot capture.
inline void check_capturable(const ir::Program& p, const std::string& prefix) {
  for (std::size_t i = 0; i < p.body.size(); ++i) {
    const std::string why = std::visit([&](const auto& l) { return graph_refusal(p, l); }, p.body[i]);
    if (!why.empty())
      fail(prefix + line_label(p.body[i], i) + ": graph mode (ExecutorOptions::graph, --graph) cannot capture it: " + why);
  }
  for (const ir::Program& sub : p.subgraphs) check_capturable(sub, prefix + sub.name + ": ");
}

}  // namespace wrapir::run::executor_detail
