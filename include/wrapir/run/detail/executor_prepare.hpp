#pragma once
/// \file
/// Preparing a program for the CPU executor (run/executor.hpp): the
/// per-graph plan (symbol slots, input bindings and solvers, compiled
/// expressions, resolved kernels and externs, multi-kernel dispatchers).
/// Built once by `Executor::prepare`, read-only afterwards.
#include <wrapir/expr/compile.hpp>
#include <wrapir/expr/query.hpp>
#include <wrapir/expr/solve.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/run/detail/executor_streams.hpp>
#include <wrapir/run/detail/executor_values.hpp>
#include <wrapir/run/executor.hpp>
#include <wrapir/run/grid.hpp>
#include <wrapir/run/kernel_identity.hpp>
#include <wrapir/run/multi_kernel.hpp>

#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

namespace wrapir::run::executor_detail {

/// How an expression is evaluated at run time.
struct Evaluable {
  enum class How : std::uint8_t { slot, compiled, tree } how = How::tree;
  std::uint32_t slot = 0;                  // How::slot: a symbol's slot
  std::optional<expr::CompiledExpr> code;  // How::compiled
  std::vector<std::uint32_t> slots;        // the slots of code's symbols, in its order
};

/// `symbol = input.path` (an input_shape symbol read directly).
struct ShapeBinding {
  std::uint32_t slot = 0;
  std::size_t input = 0;  // position in the graph's inputs
  ir::KeyPath path;
  expr::Expr symbol;
};

/// `symbol` solved from an input dimension written as a linear expression
/// of it: the observed value goes to `observed_slot`, then `value` (checked
/// by `condition`) is the symbol's value.
struct Solver {
  std::uint32_t slot = 0;
  std::uint32_t observed_slot = 0;
  std::size_t input = 0;
  ir::KeyStep step;
  expr::Expr symbol, dimension, value, condition;
};

/// One argument of a kernel launch, resolved when the program is prepared
/// so that a launch packs it without looking anything up: a plain buffer
/// (its data pointer), a value packed beforehand, or a symbol's slot.
struct FastArg {
  enum class Kind : std::uint8_t { buffer, constant, slot_i64, slot_i32, expression } kind = Kind::constant;
  std::uint32_t index = 0;  // buffer: buffer index; slot_*: symbol slot
  ArgSlot value{};          // constant
  expr::Expr expression{};  // expression: evaluated per launch, packed as `dtype`
  ir::DType dtype = ir::DType::int64;
};

/// A kernel call's arguments, all resolved (`usable`), else the call packs
/// through the general path (which gives the diagnostics).
struct FastLaunch {
  bool usable = false;
  std::vector<FastArg> args;
  /// The grid the call gives, for a kernel that launches over it
  /// (`launches_over_call_grid`): evaluated per launch and passed after the
  /// arguments, by both paths; null expressions otherwise.
  std::array<expr::Expr, 3> grid{};
};

/// A buffer's layout when every size, stride and the offset are integers
/// (a static shape): evaluated once when prepared, so that an Allocate, a
/// Reuse or an input check copies or compares it instead of evaluating
/// expressions and measuring the extent per call.
struct StaticLayout {
  bool known = false;
  std::vector<std::int64_t> sizes, strides;
  std::int64_t offset = 0;
  std::int64_t bytes = 0;          // bytes_spanned with `offset`
  std::int64_t bytes_at_zero = 0;  // bytes_spanned with offset 0 (an input's own offset is its tensor's)

  /// Whether `sizes` and `strides` are exactly this layout's.
  [[nodiscard]] bool same_dims(const std::vector<std::int64_t>& s, const std::vector<std::int64_t>& t) const noexcept {
    return s == sizes && t == strides;
  }
};

/// `l`'s static layout, or one that is not `known` (a symbolic dimension,
/// or a layout whose extent does not measure: the per-call path then gives
/// the diagnostic).
inline StaticLayout static_layout_of(std::span<const expr::Expr> sizes, std::span<const expr::Expr> strides,
                                     expr::Expr offset, ir::DType dtype) {
  StaticLayout out;
  if (sizes.size() != strides.size() || !offset || !offset.is_integer()) return out;
  for (expr::Expr e : sizes) {
    if (!e || !e.is_integer()) return StaticLayout{};
    out.sizes.push_back(e.value());
  }
  for (expr::Expr e : strides) {
    if (!e || !e.is_integer()) return StaticLayout{};
    out.strides.push_back(e.value());
  }
  out.offset = offset.value();
  Result<std::int64_t> bytes = bytes_spanned(out.sizes, out.strides, out.offset, dtype);
  Result<std::int64_t> at_zero = bytes_spanned(out.sizes, out.strides, 0, dtype);
  if (!bytes || !at_zero) return StaticLayout{};
  out.bytes = *bytes;
  out.bytes_at_zero = *at_zero;
  out.known = true;
  return out;
}
inline StaticLayout static_layout_of(const ir::Layout& l) {
  return static_layout_of(l.sizes, l.strides, l.storage_offset, l.dtype);
}

/// What the memory lines (Allocate, Reuse, Reinterpret, Free) read of a
/// buffer, in one small record per buffer (`Graph::buffer_plans`, two to a
/// cache line): its device, dtype and, for a static layout, its offset and
/// extent. A memory line then reads neither the program's `BufferDecl` nor
/// the `StaticLayout`'s vectors (those only when the buffer's tensor does
/// not hold its dimensions yet: `FrameState::static_dims`).
struct BufferPlan {
  std::int64_t bytes = 0;   // known: StaticLayout::bytes
  std::int64_t offset = 0;  // known: StaticLayout::offset
  ir::Device device{};
  ir::DType dtype = ir::DType::float32;
  bool known = false;       // the layout is static (Graph::layouts[b].known)
  bool on_backend = false;  // the host, or the device of the executor's backend (checked when prepared)
};

/// A tensor input of a static layout (`fast`; false for any other input),
/// gathered in one compact table so that binding reads neither the
/// program's input variants nor its buffer declarations.
struct InputPlan {
  bool fast = false;
  std::uint32_t buffer = 0;  // its layout: Graph::layouts[buffer]
  ir::DeviceType device = ir::DeviceType::cpu;
  ir::DType dtype = ir::DType::float32;
  std::int64_t bytes_at_zero = 0;  // StaticLayout::bytes_at_zero
  /// The layout's sizes then strides, here when its rank is at most
  /// `inline_rank` (the common case): binding compares the input's
  /// dimensions with them without reading the layout's vectors.
  static constexpr std::size_t inline_rank = 4;
  std::uint8_t rank = 0;
  bool inlined = false;
  std::array<std::int64_t, 2 * inline_rank> dims{};

  /// Whether `sizes` and `strides` are exactly the layout's (`known`, the
  /// layout, read only when its dimensions are not inline).
  /// (Inlined into binding: a call per input for a few compares cost as
  /// much as the compares on programs of many inputs.)
  [[nodiscard]] [[gnu::always_inline]] bool same_dims(const StaticLayout& known, const std::vector<std::int64_t>& sizes,
                                                      const std::vector<std::int64_t>& strides) const noexcept {
    if (!inlined) return known.same_dims(sizes, strides);
    if (sizes.size() != rank || strides.size() != rank) return false;
    for (std::size_t d = 0; d < rank; ++d)
      if (sizes[d] != dims[d] || strides[d] != dims[rank + d]) return false;
    return true;
  }
  static InputPlan of(std::uint32_t buffer, const ir::Layout& l, const StaticLayout& known) {
    InputPlan out{true, buffer, l.device.type, l.dtype, known.bytes_at_zero};
    if (known.sizes.size() <= inline_rank) {
      out.rank = static_cast<std::uint8_t>(known.sizes.size());
      out.inlined = true;
      for (std::size_t d = 0; d < known.sizes.size(); ++d) {
        out.dims[d] = known.sizes[d];
        out.dims[out.rank + d] = known.strides[d];
      }
    }
    return out;
  }
};

/// One line a call visits (`Graph::steps`), with what the hot line kinds
/// need beside it, so that the line loop dispatches on a byte and reads a
/// few compact records instead of visiting the program's line variant. A
/// step's handler takes the general path (the visit, which gives the
/// diagnostics) whenever its shortcut does not apply.
struct Step {
  enum class Kind : std::uint8_t {
    visit,     // any line: std::visit of the line
    allocate,  // Allocate of a static device buffer (`operand`: the buffer)
    free,      // Free, or FreeIfNotReused that was not reused (`operand`: the buffer)
    launch,    // KernelCall with a usable FastLaunch (`operand`: the kernel)
    reuse,     // Reuse with delete_old of a static buffer (`operand`: the new buffer, `old`: the old one)
    // Stream contexts on a device backend (run/detail/executor_streams.hpp;
    // stream 0 is the frame's base stream):
    stream_enter,  // EnterStreamContext: `old` records, `operand` waits and becomes current
    stream_exit,   // ExitStreamContext: `operand` records, `old` becomes current
    stream_join,   // before line `line` or at the end: stream `old` waits for stream `operand`
  };
  Kind kind = Kind::visit;
  std::uint32_t line = 0;
  std::uint32_t operand = 0;
  std::uint32_t old = 0;
};

struct Graph {
  const ir::Program* program = nullptr;
  std::string prefix;  // "" for the top level, "name: " for a subgraph
  std::unordered_map<expr::Expr, std::uint32_t> slot_of;
  std::vector<expr::Expr> slot_symbols;
  std::unordered_map<expr::Expr, Evaluable> compiled;
  std::vector<ShapeBinding> shape_bindings;
  std::vector<Solver> solvers;
  std::vector<CpuKernelFn> kernels;          // by kernel id (plain kernels)
  std::vector<std::int32_t> multi;           // by kernel id: dispatcher index, -1
  std::vector<const ExternFn*> line_externs;  // by line index (extern lines)
  std::vector<Graph> subgraphs;              // by graph id
  std::size_t max_args = 0;
  std::vector<FastLaunch> launches;          // by line index (KernelCall lines)
  std::vector<StaticLayout> layouts;         // by buffer index
  std::vector<BufferPlan> buffer_plans;      // by buffer index
  /// By line index, for the extern lines whose arguments are gathered into
  /// kept lists (ExternKernelAlloc, ExternKernelOut, ExternKernelMultiOut):
  /// per position (the arguments, then the keyword arguments, then the
  /// outputs) a view whose layout is all integers, measured in its base
  /// buffer's dtype; not `known` for any other position.
  std::vector<std::vector<StaticLayout>> extern_views;
  std::vector<InputPlan> input_plans;        // by program input
  /// Every input is a tensor input of a static layout whose dimensions are
  /// inline (`InputPlan::fast` and `inlined`): the top level then binds in
  /// one tight loop over the caller's span (`Frame::bind_planned`).
  bool inputs_planned = false;
  /// ... and binding has nothing more to do after them: no symbol read from
  /// an input's shape or solved from it, no constant buffer.
  bool nothing_after_planned = false;
  std::vector<std::uint32_t> constant_buffers;  // the buffers of role constant, ascending
  /// The lines a call visits, ascending: every line but those whose work
  /// was all done when prepared (comments, Null, kernel and multi-kernel
  /// definitions, GetRawStream, a FreeIfNotReused that was reused). An
  /// exported program has one of those for about every working line, each
  /// a visit per call for nothing. The memory lines and launches carry what
  /// they need (`Step`).
  std::vector<Step> steps;
  /// The steps hold stream actions (a device backend and stream contexts):
  /// a call that fails puts the thread back on its base stream.
  bool uses_streams = false;
  /// By program output: the output is a plain buffer (no view)
  /// that no other output names, so the end of a call may move its storage
  /// out of the frame instead of copying it (no reference count to touch,
  /// none to drop when the state is scrubbed).
  std::vector<std::uint8_t> output_moves;
};

/// Whether a line kind does nothing when a call runs it (its work is done
/// when prepared): `Graph::steps` leaves it out.
template <class L>
inline constexpr bool prepared_only =
    std::is_same_v<L, ir::Comment> || std::is_same_v<L, ir::Null> || std::is_same_v<L, ir::KernelDefinition> ||
    std::is_same_v<L, ir::MultiKernelDefinition> || std::is_same_v<L, ir::GetRawStream>;

// ---------------------------------------------------------------------------
// Multi-kernel dispatch
// ---------------------------------------------------------------------------

/// One argument of a multi-kernel call: the packed parameter and, for a
/// pointer, the tensor it points into (what benchmarking clones).
struct PackedArg {
  void* param = nullptr;
  const Tensor* tensor = nullptr;
  void* clone = nullptr;  // a clone's owner, released by the restorer
};

struct CandidateLauncher {
  std::shared_ptr<const std::vector<CpuKernelFn>> fns;
  std::vector<std::string> names;
  void operator()(std::size_t i, SlicedArgs<PackedArg> args) const {
    std::vector<void*> params;
    params.reserve(args.size());
    for (std::size_t k = 0; k < args.size(); ++k) params.push_back(args[k].param);
    if (Result<void> r = (*fns)[i](std::span<void* const>(params)); !r)
      fail("candidate " + ir::quote_for_diagnostic(names[i]) + ": " + r.error().message);
  }
};

struct Clone {
  Tensor tensor;
  void* address = nullptr;
};

/// Copies a whole storage's bytes (host or device) for benchmarking.
inline void copy_storage(const DeviceBackend* backend, Storage& to, const Storage& from) {
  if (from.nbytes <= 0) return;
  if (to.device.type == ir::DeviceType::cpu && from.device.type == ir::DeviceType::cpu) {
    std::memcpy(to.data, from.data, static_cast<std::size_t>(from.nbytes));
    return;
  }
  if (backend == nullptr) fail("copying device memory needs a device backend");
  if (Result<void> r = backend->copy(to.data, to.device, from.data, from.device, from.nbytes); !r)
    fail(r.error().message);
}

struct CloneArg {
  const DeviceBackend* backend = nullptr;
  PackedArg operator()(const PackedArg& a) const {
    if (a.tensor == nullptr || !a.tensor->storage) return a;
    const Storage& from = *a.tensor->storage;
    auto clone = std::make_unique<Clone>();
    clone->tensor = allocate_on(backend, from.device, {from.nbytes}, {1}, 0, ir::DType::uint8);
    copy_storage(backend, *clone->tensor.storage, from);
    Tensor view = *a.tensor;
    view.storage = clone->tensor.storage;
    clone->tensor = std::move(view);
    clone->address = clone->tensor.data();
    Clone* raw = clone.release();
    return PackedArg{&raw->address, &raw->tensor, raw};
  }
};
struct CopyArg {
  const DeviceBackend* backend = nullptr;
  void operator()(const PackedArg& from, const PackedArg& to) const {
    if (from.tensor == nullptr || to.tensor == nullptr || !from.tensor->storage || !to.tensor->storage) return;
    copy_storage(backend, *to.tensor->storage, *from.tensor->storage);
  }
};
struct ReleaseArg {
  void operator()(const PackedArg& a) const noexcept { delete static_cast<Clone*>(a.clone); }
};

using Restorer = CloningRestorer<PackedArg, CloneArg, CopyArg, ReleaseArg>;

struct MultiDispatch {
  virtual ~MultiDispatch() = default;
  /// Launches the chosen candidate; `shapes` are the tensor arguments'.
  virtual Result<std::size_t> call(std::span<const PackedArg> args, const ir::ShapeKey& shapes) = 0;
  virtual bool wants_shapes() const noexcept = 0;
};

/// Host timing that waits for the device around each run: right for
/// asynchronous launches, and the steady clock alone on the CPU.
struct BackendTimer {
  const DeviceBackend* backend = nullptr;
  void wait() const {
    if (backend == nullptr) return;
    if (Result<void> r = backend->synchronize(); !r) fail(r.error().message);
  }
  template <class Prepare, class Run>
  std::vector<double> operator()(const BenchmarkPlan& plan, Prepare&& prepare, Run&& run) const {
    return SteadyClockTimer{}(
        plan,
        [&] {
          prepare();
          wait();
        },
        [&] {
          run();
          wait();
        });
  }
};

struct BenchmarkDispatch final : MultiDispatch {
  MultiKernelDispatcher<PackedArg, CandidateLauncher, BackendTimer, Restorer> dispatcher;
  BenchmarkDispatch(MultiKernelPlan plan, CandidateLauncher launcher, BackendTimer timer, Restorer restorer)
      : dispatcher(std::move(plan), std::move(launcher), timer, std::move(restorer)) {}
  Result<std::size_t> call(std::span<const PackedArg> args, const ir::ShapeKey&) override { return dispatcher(args); }
  bool wants_shapes() const noexcept override { return false; }
};

struct ShapeDispatch final : MultiDispatch {
  SizeHintDispatcher<PackedArg, CandidateLauncher> dispatcher;
  ShapeDispatch(MultiKernelPlan plan, CandidateLauncher launcher) : dispatcher(std::move(plan), std::move(launcher)) {}
  Result<std::size_t> call(std::span<const PackedArg> args, const ir::ShapeKey& shapes) override {
    return dispatcher(args, shapes);
  }
  bool wants_shapes() const noexcept override { return true; }
};

}  // namespace wrapir::run::executor_detail

namespace wrapir::run::executor_detail {

/// An extern line's argument lists, kept between calls so that a call
/// assigns into them instead of building them (names, list shapes and the
/// tensors' size and stride vectors keep their memory).
struct ExternScratch {
  bool built = false;
  std::vector<Value> args;
  std::vector<KeywordArg> kwargs;
  /// Per tensor position (the arguments, then the keyword arguments and
  /// outputs): what the kept tensor's sizes and strides already hold, so
  /// that a call copies them only when they change.
  enum class Dims : std::uint8_t { unknown, base_static, view_static };
  std::vector<Dims> dims;
  /// Once a call has built the lists and every position is a constant or a
  /// tensor whose dimensions stay (`Dims` not unknown), a later call only
  /// patches each tensor's storage, dtype and offset from its buffer
  /// (`Frame::patch_extern`): one compact record per tensor position, no
  /// visit of the line's arguments. `patched` says the records are valid;
  /// the general path rebuilds them.
  struct Patch {
    Tensor* tensor = nullptr;               // in `args` or `kwargs`
    const StaticLayout* view = nullptr;     // null: the buffer's own tensor (base_static)
    std::uint32_t buffer = 0;
    ir::DType view_dtype = ir::DType::float32;  // a view's base's declared dtype
  };
  std::vector<Patch> patches;
  bool patched = false;
};

/// The per-call state of a frame (run/detail/executor_lines.hpp). The
/// top level's is recycled between calls (`FramePool`): the vectors keep
/// their memory and every buffer's `Tensor` its size and stride vectors, so
/// a call in steady state allocates no host memory for them. Between calls
/// it holds no buffer's storage (`scrub`): no value of a call outlives it;
/// only device memory its buffers freed may wait for the next call
/// (`spare`, bounded by `max_kept_bytes`).
struct FrameState {
  std::vector<Value> buffers;
  std::vector<std::uint8_t> live;
  std::vector<std::int64_t> values;
  std::vector<std::uint8_t> bound;
  std::vector<std::shared_ptr<Storage>> pools;
  std::vector<ArgSlot> slots;
  std::vector<void*> params;
  std::vector<Tensor> arg_tensors;
  std::vector<ExternScratch> externs;  // by line index (extern lines only)
  std::vector<std::uint8_t> scopes;
  std::vector<std::uint8_t> exact_inputs;  // bind's scratch: by input
  /// By buffer: 1 when the buffer's tensor holds its static layout's sizes
  /// and strides (copied in by an Allocate, Reuse or Reinterpret, or bound
  /// from an input of exactly those), so that the next definition of the
  /// buffer copies nothing; 0 after any other definition. Kept between
  /// calls, as the tensors' vectors are.
  std::vector<std::uint8_t> static_dims;
  /// A device storage freed during this call that nothing else holds, with
  /// its size and device beside it (a search reads no storage).
  struct Spare {
    std::int64_t bytes = 0;
    ir::DeviceType device = ir::DeviceType::cpu;
    std::shared_ptr<Storage> storage;
  };
  /// Device storages freed by a call that nothing else holds, for the
  /// next Allocate of the same size (no allocator lock, heap block or
  /// reference count). At most `max_spare`, the first `spare_count` used.
  /// A call that returned keeps them for the next call of the state while
  /// they come to at most `max_kept_bytes` (`scrub`): a program's
  /// intermediates freed late in one call (Inductor frees most at the end)
  /// are then its first Allocates of the next, which reach the allocator
  /// for its outputs only. What they hold is memory, not values: a storage
  /// is kept only once its buffer was freed. When they come to more than
  /// that, or the call failed, all go back to the allocator, as they do
  /// when the executor goes.
  static constexpr std::size_t max_spare = 8;
  static constexpr std::int64_t max_kept_bytes = std::int64_t{16} << 20;
  std::array<Spare, max_spare> spare{};
  std::size_t spare_count = 0;
  /// Set by `Executor::run` when the call returned its outputs: then only
  /// the live buffers hold storages (every line that gives a buffer a
  /// storage makes it live before the next line, a Free drops it, and
  /// every extern's and launch's argument storages were dropped after it),
  /// so `scrub` visits those alone. A call that failed half way is scrubbed
  /// whole.
  bool completed = false;
  /// The graph whose tables this state is sized for (the frame then skips
  /// resizing them); null for a fresh state.
  const void* shaped_for = nullptr;

  /// Drops every storage the last call left (outputs handed out, inputs,
  /// failures half way), keeping the vectors' memory.
  /// Leaves `live` all 0 (a recycled state's frame does not clear it).
  void scrub() noexcept {
    for (auto& p : pools) p.reset();
    keep_spares(completed);
    if (completed) {
      completed = false;
      for (std::size_t i = 0; i < live.size() && i < buffers.size(); ++i)
        if (live[i]) {
          drop(buffers[i]);
          live[i] = 0;
        }
      return;
    }
    for (Value& v : buffers) drop(v);
    std::fill(live.begin(), live.end(), std::uint8_t{0});
    for (Tensor& t : arg_tensors) t.storage.reset();
    for (ExternScratch& e : externs) drop_storages(e);
  }
  /// The spares kept for the next call: all of them while they come to at
  /// most `max_kept_bytes` after a call that returned, else none.
  void keep_spares(bool returned) noexcept {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < spare_count; ++i) total += spare[i].bytes;
    if (returned && total <= max_kept_bytes) return;
    for (std::size_t i = 0; i < spare_count; ++i) spare[i].storage.reset();
    spare_count = 0;
  }
  /// A buffer's storage dropped; its tensor's vectors kept.
  static void drop(Value& v) noexcept {
    if (Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) t->storage.reset();
    else if (!v.holds<ir::None>()) v = Value{};
  }
  static void drop_storages(ExternScratch& e) noexcept {
    for (Value& v : e.args)
      if (Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) t->storage.reset();
    for (KeywordArg& k : e.kwargs)
      if (Tensor* t = boost::variant2::get_if<Tensor>(&k.value.value)) t->storage.reset();
  }
};

/// Frame states of the top level waiting for a call: one per thread that
/// runs the executor at once, at most `max_kept`.
class FramePool {
 public:
  static constexpr std::size_t max_kept = 8;
  FramePool() = default;
  FramePool(const FramePool&) = delete;
  FramePool& operator=(const FramePool&) = delete;
  ~FramePool() { delete ready_.exchange(nullptr, std::memory_order_acquire); }

  /// One state waits in `ready_` (a call on one thread at a time takes and
  /// gives it back without a lock); the others in the locked list.
  std::unique_ptr<FrameState> take() {
    if (FrameState* s = ready_.exchange(nullptr, std::memory_order_acquire)) [[likely]]
      return std::unique_ptr<FrameState>(s);
    std::lock_guard lock(mutex_);
    if (kept_.empty()) return std::make_unique<FrameState>();
    std::unique_ptr<FrameState> s = std::move(kept_.back());
    kept_.pop_back();
    return s;
  }
  void give_back(std::unique_ptr<FrameState> s) noexcept {
    s->scrub();
    FrameState* expected = nullptr;
    if (ready_.compare_exchange_strong(expected, s.get(), std::memory_order_release, std::memory_order_relaxed)) [[likely]] {
      (void)s.release();
      return;
    }
    std::lock_guard lock(mutex_);
    if (kept_.size() + 1 < max_kept) {  // with ready_: max_kept at most
      try {
        kept_.push_back(std::move(s));
      } catch (...) {  // no memory for the list: the state just goes
      }
    }
  }

 private:
  std::atomic<FrameState*> ready_{nullptr};
  std::mutex mutex_;
  std::vector<std::unique_ptr<FrameState>> kept_;
};

struct Dispatchers {
  std::vector<std::unique_ptr<MultiDispatch>> all;
  FramePool frames;
};

class DebugPrinter;  // run/detail/executor_debug.hpp

struct Prepared {
  std::shared_ptr<const ir::Program> program;
  ExecutorOptions options;
  std::shared_ptr<const ExternRegistry> externs;
  Graph top;
  std::vector<Tensor> constants;  // by buffer index of the top level (empty Tensor: none)
  std::size_t tensor_inputs = 0, scalar_inputs = 0;
  std::vector<std::uint32_t> input_index;  // program input -> position among the tensor or scalar inputs
  std::unique_ptr<const DebugPrinter> debug;  // null when ExecutorOptions::debug.level is 0
};

template <class K>
inline std::string line_label(std::size_t index) {
  return "line " + std::to_string(index) + " (" + std::string(K::kind) + ")";
}

inline std::string line_label(const ir::Line& line, std::size_t index) {
  return std::visit([&]<class K>(const K&) { return line_label<K>(index); }, line);
}

/// Builds the plan of one graph (and its subgraphs).
class GraphPreparer {
 public:
  GraphPreparer(const ExecutorOptions& options, const CpuKernelProvider& kernels, const ExternRegistry& externs,
                Dispatchers& dispatchers)
      : options_(options), kernels_(kernels), externs_(externs), dispatchers_(dispatchers) {}

  void prepare(Graph& g, const ir::Program& p, std::string prefix) {
    g.program = &p;
    g.prefix = std::move(prefix);
    g.kernels.assign(p.kernels.size(), CpuKernelFn{});
    g.multi.assign(p.kernels.size(), -1);
    g.line_externs.assign(p.body.size(), nullptr);
    g.launches.assign(p.body.size(), FastLaunch{});
    g.extern_views.assign(p.body.size(), {});
    for (const ir::SymbolDecl& s : p.symbols) slot(g, s.symbol);
    g.layouts.assign(p.buffers.size(), StaticLayout{});
    for (std::size_t i = 0; i < p.buffers.size(); ++i)
      if (!p.buffers[i].multi_output) g.layouts[i] = static_layout_of(p.buffers[i].layout);
    g.buffer_plans.assign(p.buffers.size(), BufferPlan{});
    for (std::size_t i = 0; i < p.buffers.size(); ++i) {
      const ir::Layout& l = p.buffers[i].layout;
      const StaticLayout& known = g.layouts[i];
      g.buffer_plans[i] = BufferPlan{known.bytes, known.offset, l.device, l.dtype, known.known, runs_on(l.device)};
    }
    g.constant_buffers.clear();
    for (std::size_t i = 0; i < p.buffers.size(); ++i)
      if (p.buffers[i].role == ir::BufferRole::constant) g.constant_buffers.push_back(static_cast<std::uint32_t>(i));
    g.input_plans.assign(p.inputs.size(), InputPlan{});
    for (std::size_t i = 0; i < p.inputs.size(); ++i)
      if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&p.inputs[i]);
          b != nullptr && p.contains(*b) && g.layouts[b->index].known)
        g.input_plans[i] = InputPlan::of(b->index, p.buffers[b->index].layout, g.layouts[b->index]);
    for (const ir::BufferDecl& b : p.buffers) {
      if (b.multi_output) continue;
      if (!runs_on(b.layout.device))
        fail(g.prefix + "buffer " + ir::quote_for_diagnostic(b.name) + " is on " + ir::to_string(b.layout.device) +
             "; " + no_backend(b.layout.device));
      for (expr::Expr e : b.layout.sizes) collect(g, e);
      for (expr::Expr e : b.layout.strides) collect(g, e);
      collect(g, b.layout.storage_offset);
    }
    for (const ir::PoolDecl& pool : p.pools) {
      if (!runs_on(pool.device))
        fail(g.prefix + "pool " + ir::quote_for_diagnostic(pool.name) + " is on " + ir::to_string(pool.device) + "; " +
             no_backend(pool.device));
      collect(g, pool.size_bytes);
    }
    bind_inputs(g, p);
    g.subgraphs.resize(p.subgraphs.size());
    for (std::size_t i = 0; i < p.subgraphs.size(); ++i)
      prepare(g.subgraphs[i], p.subgraphs[i], g.prefix + p.subgraphs[i].name + ": ");
    for (std::size_t i = 0; i < p.body.size(); ++i) {
      try {
        std::visit([&](const auto& line) { prepare_line(g, line, i); }, p.body[i]);
      } catch (wrapir::detail::Failure& f) {
        fail(g.prefix + line_label(p.body[i], i) + ": " + f.diagnostic.message);
      }
    }
    g.steps.clear();
    // Stream contexts (executor_streams.hpp): checked on every backend; on
    // a device backend their forks and derived joins become steps. Without
    // stream contexts the plan is empty and the steps are what they were.
    const StreamPlan streams = plan_streams(p, DeviceBackend::max_streams, [&](std::size_t i) {
      return g.prefix + line_label(p.body[i], i);
    });
    const bool stream_steps = streams.any && options_.device != nullptr;
    g.uses_streams = stream_steps;
    auto to_step = [](const StreamAction& a) {
      const Step::Kind kind = a.kind == StreamAction::Kind::enter  ? Step::Kind::stream_enter
                              : a.kind == StreamAction::Kind::exit ? Step::Kind::stream_exit
                                                                   : Step::Kind::stream_join;
      return Step{kind, a.line, a.stream, a.other};
    };
    std::size_t next_action = 0;
    for (std::size_t i = 0; i < p.body.size(); ++i) {
      bool replaced = false;
      for (; stream_steps && next_action < streams.actions.size() && streams.actions[next_action].line == i; ++next_action) {
        const StreamAction& a = streams.actions[next_action];
        g.steps.push_back(to_step(a));
        replaced = replaced || a.kind != StreamAction::Kind::join;
      }
      if (replaced) continue;
      if (std::visit([]<class L>(const L&) { return prepared_only<L>; }, p.body[i])) continue;
      if (const auto* f = std::get_if<ir::FreeIfNotReused>(&p.body[i]); f != nullptr && f->reused) continue;
      g.steps.push_back(step_of(g, p, i));
    }
    if (stream_steps)
      for (const StreamAction& a : streams.at_end) g.steps.push_back(to_step(a));
    g.inputs_planned = std::all_of(g.input_plans.begin(), g.input_plans.end(),
                                   [](const InputPlan& plan) { return plan.fast && plan.inlined; });
    g.nothing_after_planned = g.inputs_planned && g.shape_bindings.empty() && g.solvers.empty() && g.constant_buffers.empty();
    g.output_moves.assign(p.outputs.size(), 0);
    for (std::size_t i = 0; i < p.outputs.size(); ++i) {
      const ir::BufferArg* b = boost::variant2::get_if<ir::BufferArg>(&p.outputs[i]);
      if (b == nullptr || b->view) continue;
      bool alone = true;
      for (std::size_t j = 0; j < p.outputs.size() && alone; ++j)
        if (const ir::BufferArg* o = boost::variant2::get_if<ir::BufferArg>(&p.outputs[j]); j != i && o != nullptr)
          alone = o->buffer != b->buffer;
      g.output_moves[i] = alone ? 1 : 0;
    }
  }

 private:
  /// Line `i`'s step: a memory line or launch that can take its shortcut
  /// says so; anything else is visited.
  static Step step_of(const Graph& g, const ir::Program& p, std::size_t i) {
    const auto line = static_cast<std::uint32_t>(i);
    auto buffer_step = [&](Step::Kind kind, ir::BufferId b) {
      if (!p.contains(b)) return Step{Step::Kind::visit, line, 0};
      return Step{kind, line, b.index};
    };
    if (const auto* a = std::get_if<ir::Allocate>(&p.body[i])) {
      if (!p.contains(a->buffer)) return Step{Step::Kind::visit, line, 0};
      const BufferPlan& plan = g.buffer_plans[a->buffer.index];
      const bool shortcut = plan.known && plan.on_backend && plan.device.type != ir::DeviceType::cpu;
      return shortcut ? buffer_step(Step::Kind::allocate, a->buffer) : Step{Step::Kind::visit, line, 0};
    }
    if (const auto* f = std::get_if<ir::Free>(&p.body[i])) return buffer_step(Step::Kind::free, f->buffer);
    if (const auto* f = std::get_if<ir::FreeIfNotReused>(&p.body[i])) return buffer_step(Step::Kind::free, f->buffer);
    if (const auto* k = std::get_if<ir::KernelCall>(&p.body[i]); k != nullptr && g.launches[i].usable)
      return Step{Step::Kind::launch, line, k->kernel.index};
    if (const auto* r = std::get_if<ir::Reuse>(&p.body[i]);
        r != nullptr && r->delete_old && p.contains(r->old_buffer) && p.contains(r->new_buffer) &&
        g.buffer_plans[r->new_buffer.index].known)
      return Step{Step::Kind::reuse, line, r->new_buffer.index, r->old_buffer.index};
    return Step{Step::Kind::visit, line, 0};
  }

  static std::uint32_t slot(Graph& g, expr::Expr s) {
    const auto [it, inserted] = g.slot_of.try_emplace(s, static_cast<std::uint32_t>(g.slot_symbols.size()));
    if (inserted) g.slot_symbols.push_back(s);
    return it->second;
  }

  void collect(Graph& g, expr::Expr e) {
    if (!e || e.is_integer() || g.compiled.contains(e)) return;
    Evaluable ev;
    if (e.is_symbol()) {
      ev.how = Evaluable::How::slot;
      ev.slot = slot(g, e);
    } else if (Result<expr::CompiledExpr> code = expr::compile(e)) {
      ev.how = Evaluable::How::compiled;
      for (expr::Expr s : code->symbols()) ev.slots.push_back(slot(g, s));
      ev.code = *std::move(code);
    } else {
      for (expr::Expr s : expr::free_symbols(e)) (void)slot(g, s);
      ev.how = Evaluable::How::tree;
    }
    g.compiled.emplace(e, std::move(ev));
  }

  void collect(Graph& g, const ir::Arg& a) {
    if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) collect(g, *b);
    else if (const expr::Expr* e = a.get_if<expr::Expr>()) collect(g, *e);
    else if (const ir::ArgList* l = a.get_if<ir::ArgList>())
      for (const ir::Arg& x : l->items) collect(g, x);
  }
  void collect(Graph& g, const ir::BufferArg& b) {
    if (!b.view) return;
    for (expr::Expr e : b.view->sizes) collect(g, e);
    for (expr::Expr e : b.view->strides) collect(g, e);
    collect(g, b.view->offset);
  }
  void collect(Graph& g, const std::vector<ir::Arg>& args) {
    for (const ir::Arg& a : args) collect(g, a);
  }
  void collect(Graph& g, const std::vector<ir::NamedArg>& args) {
    for (const ir::NamedArg& a : args) collect(g, a.value);
  }

  /// Symbols bound from the inputs: scalar inputs, input_shape key paths,
  /// and solutions of input dimensions that are linear in their symbol.
  void bind_inputs(Graph& g, const ir::Program& p) {
    std::unordered_map<std::uint32_t, std::size_t> input_position;
    for (std::size_t i = 0; i < p.inputs.size(); ++i)
      if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&p.inputs[i])) input_position[b->index] = i;
    std::vector<expr::Expr> knowns;
    for (const ir::SymbolDecl& s : p.symbols)
      if (s.origin == ir::SymbolOrigin::input || s.origin == ir::SymbolOrigin::input_shape) knowns.push_back(s.symbol);
    for (const ir::SymbolDecl& s : p.symbols) {
      if (s.origin != ir::SymbolOrigin::input_shape) continue;
      const std::string who = g.prefix + "symbol " + ir::quote_for_diagnostic(s.symbol.name());
      if (!s.source) fail(who + " is read from an input shape but names no input");
      const auto pos = input_position.find(s.source->index);
      if (pos == input_position.end()) fail(who + " is read from a buffer that is not an input");
      const ir::BufferDecl& src = p.buffer(*s.source);
      // A size or stride written as a linear expression of the symbol is
      // solved for it (`2*s0` of 10 gives s0 = 5), as Inductor binds sizes.
      if (s.path.size() == 1 &&
          (s.path[0].kind == ir::KeyStepKind::size || s.path[0].kind == ir::KeyStepKind::stride)) {
        const auto& dims = s.path[0].kind == ir::KeyStepKind::size ? src.layout.sizes : src.layout.strides;
        const std::int64_t d = s.path[0].value;
        if (d >= 0 && static_cast<std::size_t>(d) < dims.size() && dims[static_cast<std::size_t>(d)] &&
            dims[static_cast<std::size_t>(d)] != s.symbol && expr::depends_on(dims[static_cast<std::size_t>(d)], s.symbol)) {
          const expr::Expr dimension = dims[static_cast<std::size_t>(d)];
          const expr::Expr observed = p.ctx().symbol("wrapir_observed_dimension", expr::Assumption::integer);
          std::vector<expr::Expr> others;
          for (expr::Expr k : knowns)
            if (k != s.symbol) others.push_back(k);
          Result<expr::Solution> sol = expr::solve(dimension, observed, s.symbol, others);
          if (!sol) fail(who + ": " + sol.error().message);
          Solver solver{slot(g, s.symbol), slot(g, observed), pos->second, s.path[0], s.symbol, dimension,
                        sol->value, sol->condition};
          collect(g, sol->value);
          collect(g, sol->condition);
          g.solvers.push_back(std::move(solver));
          continue;
        }
      }
      g.shape_bindings.push_back(ShapeBinding{slot(g, s.symbol), pos->second, s.path, s.symbol});
    }
  }

  /// The CPU, or the device of the options' backend.
  [[nodiscard]] bool runs_on(const ir::Device& d) const noexcept {
    return d.type == ir::DeviceType::cpu || (options_.device && options_.device->device_type() == d.type);
  }
  [[nodiscard]] std::string no_backend(const ir::Device& d) const {
    if (options_.device)
      return "the executor's device backend is " + options_.device->describe() + ", which is not " +
             std::string(ir::device_type_name(d.type));
    return "the executor has no backend for " + std::string(ir::device_type_name(d.type)) +
           " (ExecutorOptions::device; run/cuda/backend.hpp for CUDA)";
  }
  void check_device(const ir::Device& d, const char* what) {
    if (!runs_on(d)) fail(std::string(what) + " is on " + ir::to_string(d) + "; " + no_backend(d));
  }

  const ExternFn* find_extern(const ir::OpName& op_name) {
    const std::string& op = op_name.text;
    const ExternFn* fn = externs_.find(op);
    if (fn == nullptr)
      fail("extern " + ir::quote_for_diagnostic(op) +
           " is not registered: add it to the executor's ExternRegistry (ExecutorOptions::externs)");
    return fn;
  }

  void prepare_line(Graph& g, const ir::KernelDefinition& l, std::size_t) {
    const ir::Program& p = *g.program;
    const ir::KernelDecl& decl = p.kernel(l.kernel);
    std::string_view source;
    if (const ir::SourceText* s = boost::variant2::get_if<ir::SourceText>(&l.source)) source = s->text;
    KernelRequest request{decl.name, decl.language, source, decl.signature, &*l.metadata,
                          boost::variant2::get_if<ir::BinaryRef>(&l.source)};
    Result<ProvidedKernel> provided = kernels_.provide(request);
    if (!provided) fail("kernel " + ir::quote_for_diagnostic(decl.name) + ": " + provided.error().message);
    if (!*provided)
      fail("no kernel provider has kernel " + ir::quote_for_diagnostic(decl.name) + " (language " +
           std::string(ir::kernel_language_name(decl.language)) + "; asked " + kernels_.describe() +
           "): register it in a KernelRegistry or add a provider that compiles it");
    g.kernels[l.kernel.index] = std::move(provided->fn);
    // What the kernel is, for the multi-kernel choice cache's key
    // (run/kernel_identity.hpp): the provider's identity (a compiled
    // kernel's cache identity covers its headers, compiler and flags; a
    // loaded binary's, its bytes), else its definition's hash. A kernel
    // built differently under the same name is benchmarked again, never
    // handed another build's stored choice.
    std::vector<std::string>& identities = kernel_identities_[g.program];
    identities.resize(p.kernels.size());
    identities[l.kernel.index] =
        provided->identity.empty() ? definition_identity(request) : std::move(provided->identity);
  }

  /// The launch's arguments resolved, or none usable (a view, a
  /// multi-output buffer, a dtype mismatch, a value out of range: the
  /// general path then says what is wrong).
  static FastLaunch fast_launch(Graph& g, const ir::KernelCall& l) {
    const ir::Program& p = *g.program;
    FastLaunch out;
    if (!p.contains(l.kernel)) return out;
    const ir::KernelDecl& k = p.kernel(l.kernel);
    if (l.args.size() != k.signature.size()) return out;
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      const ir::ParamType type = k.signature[i].type;
      const ir::Arg& a = l.args[i];
      FastArg f;
      if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) {
        if (b->view || !type.pointer || !p.contains(b->buffer)) return out;
        const ir::BufferDecl& d = p.buffer(b->buffer);
        if (d.multi_output || d.layout.dtype != type.dtype) return out;
        f.kind = FastArg::Kind::buffer;
        f.index = b->buffer.index;
      } else if (type.pointer) {
        if (!a.holds<ir::None>()) return out;
        store(f.value, static_cast<void*>(nullptr));
      } else if (const expr::Expr* e = a.get_if<expr::Expr>()) {
        if (!*e) return out;
        if (e->is_integer()) {
          if (!packs(f.value, e->value(), type.dtype)) return out;
        } else if (e->is_symbol() && (type.dtype == ir::DType::int64 || type.dtype == ir::DType::int32)) {
          f.kind = type.dtype == ir::DType::int64 ? FastArg::Kind::slot_i64 : FastArg::Kind::slot_i32;
          f.index = slot(g, *e);
        } else {
          f.kind = FastArg::Kind::expression;
          f.expression = *e;
          f.dtype = type.dtype;
        }
      } else if (const std::int64_t* n = a.get_if<std::int64_t>()) {
        if (!packs(f.value, *n, type.dtype)) return out;
      } else if (const bool* x = a.get_if<bool>()) {
        if (!packs(f.value, *x ? 1 : 0, type.dtype)) return out;
      } else if (const double* v = a.get_if<double>()) {
        if (type.dtype != ir::DType::float32 && type.dtype != ir::DType::float64) return out;
        store_float(f.value, *v, type.dtype);
      } else {
        return out;
      }
      out.args.push_back(std::move(f));
    }
    out.usable = true;
    return out;
  }
  /// Packs `v` as `dtype` when it fits (no diagnostic: the general path
  /// gives it).
  static bool packs(ArgSlot& slot, std::int64_t v, ir::DType dtype) {
    try {
      store_integer(slot, v, dtype, "");
      return true;
    } catch (wrapir::detail::Failure&) {
      return false;
    }
  }

  void prepare_line(Graph& g, const ir::KernelCall& l, std::size_t line) {
    check_device(l.device, "the launch");
    // A device kernel computes its grid from its launcher metadata and its
    // numel arguments (what Inductor's launchers do), or launches its own
    // device code (CUDA C++); grids written at such a call are refused. PTX
    // and cubin kernels are launched over the grid their call gives, which
    // is passed after the arguments.
    const ir::Program& p = *g.program;
    const bool call_grid = p.contains(l.kernel) && launches_over_call_grid(p.kernel(l.kernel).language);
    if (!call_grid && l.device.type != ir::DeviceType::cpu &&
        !boost::variant2::holds_alternative<ir::LauncherGrid>(l.grid))
      fail("the launch gives its grid at the call; the executor launches device kernels with their launcher's grid "
           "only");
    collect(g, l.args);
    g.max_args = std::max(g.max_args, l.args.size() + (call_grid ? call_grid_arguments : 0));
    g.launches[line] = fast_launch(g, l);
    if (call_grid) g.launches[line].grid = call_grid_of(g, l);
  }
  /// The grid a PTX or cubin kernel's call gives, its dimensions collected
  /// for evaluation.
  std::array<expr::Expr, 3> call_grid_of(Graph& g, const ir::KernelCall& l) {
    const ir::KernelDecl& k = g.program->kernel(l.kernel);
    Result<GridExprs> grid = Diagnostic{"the call gives no grid"};
    if (const auto* e = ir::grid_if<ir::ExplicitGrid>(l.grid)) grid = grid_exprs(*e);
    else if (const auto* t = ir::grid_if<ir::TypedGrid>(l.grid)) grid = grid_exprs(g.program->ctx(), *t);
    else
      fail("kernel " + ir::quote_for_diagnostic(k.name) + " is a " + std::string(ir::kernel_language_name(k.language)) +
           " kernel, launched over the grid its call gives, but the call leaves the grid to a launcher (give an "
           "ExplicitGrid or a TypedGrid)");
    if (!grid) fail("kernel " + ir::quote_for_diagnostic(k.name) + ": " + grid.error().message);
    for (expr::Expr e : {grid->x, grid->y, grid->z}) collect(g, e);
    return {grid->x, grid->y, grid->z};
  }

  void prepare_line(Graph& g, const ir::MultiKernelCall& l, std::size_t) {
    check_device(l.device, "the launch");
    collect(g, l.args);
    g.max_args = std::max(g.max_args, l.args.size());
  }

  void prepare_line(Graph& g, const ir::MultiKernelDefinition& l, std::size_t index) {
    const ir::Program& p = *g.program;
    // The combined argument count is the calls'.
    std::optional<std::size_t> arg_count;
    for (std::size_t i = index + 1; i < p.body.size() && !arg_count; ++i)
      if (const auto* call = std::get_if<ir::MultiKernelCall>(&p.body[i]); call && call->kernel == l.kernel)
        arg_count = call->args.size();
    if (!arg_count) return;  // never called: nothing to dispatch
    MultiKernelSpec spec;
    spec.name = p.kernel(l.kernel).name;
    spec.arg_count = *arg_count;
    auto fns = std::make_shared<std::vector<CpuKernelFn>>();
    CandidateLauncher launcher;
    bool shape_keys = false;
    for (std::size_t c = 0; c < l.candidates.size(); ++c) {
      const ir::KernelId k = l.candidates[c];
      if (!g.kernels.at(k.index))
        fail("candidate " + ir::quote_for_diagnostic(p.kernel(k).name) + " is not a defined plain kernel");
      fns->push_back(g.kernels[k.index]);
      Candidate cand;
      cand.name = p.kernel(k).name;
      if (const auto ids = kernel_identities_.find(g.program); ids != kernel_identities_.end() && k.index < ids->second.size())
        cand.identity = ids->second[k.index];
      if (c < l.arg_index.size()) cand.args = l.arg_index[c];
      else cand.args = {ir::ArgSlice{0, static_cast<std::int64_t>(*arg_count)}};
      if (c < l.shape_keys.size() && l.shape_keys[c]) {
        cand.shape_key = l.shape_keys[c];
        shape_keys = true;
      }
      launcher.names.push_back(cand.name);
      spec.candidates.push_back(std::move(cand));
    }
    launcher.fns = std::move(fns);
    Result<MultiKernelPlan> plan = make_multi_kernel_plan(std::move(spec), options_.multi_kernel);
    if (!plan) fail(plan.error().message);
    std::vector<std::size_t> mutated;
    for (std::size_t i = index + 1; i < p.body.size(); ++i)
      if (const auto* call = std::get_if<ir::MultiKernelCall>(&p.body[i]); call && call->kernel == l.kernel) {
        for (std::size_t a = 0; a < call->args.size(); ++a)
          if (call->args[a].holds<ir::BufferArg>()) mutated.push_back(a);
        break;
      }
    std::unique_ptr<MultiDispatch> d;
    if (shape_keys) d = std::make_unique<ShapeDispatch>(*std::move(plan), std::move(launcher));
    else
      d = std::make_unique<BenchmarkDispatch>(
          *std::move(plan), std::move(launcher), BackendTimer{options_.device.get()},
          Restorer(std::move(mutated), CloneArg{options_.device.get()}, CopyArg{options_.device.get()}, ReleaseArg{}));
    g.multi[l.kernel.index] = static_cast<std::int32_t>(dispatchers_.all.size());
    dispatchers_.all.push_back(std::move(d));
  }

  /// The static views among an extern line's positions (Graph::extern_views).
  static void static_views(Graph& g, std::size_t line, const std::vector<ir::Arg>& args,
                           const std::vector<ir::NamedArg>& kwargs, std::span<const ir::BufferArg* const> outs) {
    std::vector<StaticLayout>& views = g.extern_views[line];
    views.clear();
    auto add = [&](const ir::BufferArg* b) {
      const ir::Program& p = *g.program;
      if (b == nullptr || !b->view || !p.contains(b->buffer) || p.buffer(b->buffer).multi_output) {
        views.emplace_back();
        return;
      }
      views.push_back(static_layout_of(b->view->sizes, b->view->strides, b->view->offset,
                                       p.buffer(b->buffer).layout.dtype));
    };
    for (const ir::Arg& a : args) add(a.get_if<ir::BufferArg>());
    for (const ir::NamedArg& k : kwargs) add(k.value.get_if<ir::BufferArg>());
    for (const ir::BufferArg* o : outs) add(o);
    bool any = false;
    for (const StaticLayout& v : views) any = any || v.known;
    if (!any) views.clear();  // nothing to read per call
  }

  void prepare_line(Graph& g, const ir::ExternKernelAlloc& l, std::size_t i) {
    collect(g, l.args);
    collect(g, l.kwargs);
    g.line_externs[i] = find_extern(l.kernel);
    static_views(g, i, l.args, l.kwargs, {});
  }
  void prepare_line(Graph& g, const ir::ExternKernelOut& l, std::size_t i) {
    collect(g, l.args);
    collect(g, l.kwargs);
    collect(g, l.out);
    g.line_externs[i] = find_extern(l.kernel);
    const ir::BufferArg* out = &l.out;
    static_views(g, i, l.args, l.kwargs, {&out, 1});
  }
  void prepare_line(Graph& g, const ir::ExternKernelMultiOut& l, std::size_t i) {
    collect(g, l.args);
    collect(g, l.kwargs);
    for (const ir::NamedBuffer& o : l.outs) collect(g, o.buffer);
    g.line_externs[i] = find_extern(l.kernel);
    std::vector<const ir::BufferArg*> outs;
    for (const ir::NamedBuffer& o : l.outs) outs.push_back(&o.buffer);
    static_views(g, i, l.args, l.kwargs, outs);
  }
  void prepare_line(Graph& g, const ir::ScatterFallback& l, std::size_t i) {
    collect(g, l.index);
    collect(g, l.src);
    collect(g, l.kwargs);
    g.line_externs[i] = find_extern(l.kernel);
  }
  void prepare_line(Graph& g, const ir::IndexPutFallback& l, std::size_t i) {
    for (const auto& ix : l.indices)
      if (ix) collect(g, *ix);
    collect(g, l.values);
    g.line_externs[i] = find_extern(l.kernel);
  }
  void prepare_line(Graph& g, const ir::DeviceCopy& l, std::size_t) {
    collect(g, l.destination);
    collect(g, l.source);
  }
  void prepare_line(Graph& g, const ir::AllocFromPool& l, std::size_t) { collect(g, l.offset_bytes); }
  void prepare_line(Graph& g, const ir::SymbolicCallArg& l, std::size_t) {
    collect(g, l.value);
    (void)slot(g, l.symbol);
  }
  void prepare_line(Graph& g, const ir::AssertSizeStride& l, std::size_t) {
    for (expr::Expr e : l.sizes) collect(g, e);
    for (expr::Expr e : l.strides) collect(g, e);
  }
  void prepare_line(Graph& g, const ir::Conditional& l, std::size_t) {
    collect(g, l.predicate);
    collect(g, l.operands);
  }
  void prepare_line(Graph& g, const ir::WhileLoop& l, std::size_t) {
    collect(g, l.carried);
    collect(g, l.additional);
  }
  void prepare_line(Graph&, const ir::EnterDeviceContext& l, std::size_t) { check_device(l.device, "the device context"); }
  void prepare_line(Graph&, const ir::GetRawStream& l, std::size_t) { check_device(l.device, "the stream"); }
  // Every other kind needs nothing prepared beyond the tables.
  template <class K>
  void prepare_line(Graph&, const K&, std::size_t) {}

  const ExecutorOptions& options_;
  const CpuKernelProvider& kernels_;
  const ExternRegistry& externs_;
  Dispatchers& dispatchers_;
  /// Per graph, each defined kernel's identity (its provider's, else its
  /// definition's: run/kernel_identity.hpp).
  std::unordered_map<const ir::Program*, std::vector<std::string>> kernel_identities_;
};

}  // namespace wrapir::run::executor_detail
