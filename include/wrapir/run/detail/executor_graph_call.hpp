#pragma once
/// \file
/// CUDA Graph mode of `run::Executor`, part two (docs/runtime.md, "CUDA
/// Graph mode"): the cache of captured calls and the call path.
///
/// A call's **key** is the full tuple of the values of the symbols the
/// inputs bind (scalar inputs, sizes and strides read from input shapes,
/// solved dimensions), in a fixed order. Keys compare as whole tuples (the
/// hash only picks a bucket). Per key:
///
/// 1. **First call**: the program runs uncaptured, with a recording
///    `GraphMemory` (executor_graph.hpp); its outputs are the call's. Then
///    the graph's memory is planned and allocated, and the program is
///    captured on the backend (nothing runs: the first call's results are
///    already there, and a program that updates an input in place is not
///    applied twice). Multi-kernels choose in the uncaptured run, so the
///    capture only dispatches.
/// 2. **Later calls, same input addresses**: each tensor input is compared
///    with what the graph was captured with (address, dtype, device, sizes,
///    strides, offset; so a layout the program would refuse never replays),
///    and the graph is launched: one driver call. The outputs are the
///    graph's memory — **overwritten by the next call of the same key**, as
///    with `torch.compile(mode="reduce-overhead")`; copy what must survive.
///    Outputs that alias an input are rebuilt on the caller's input.
/// 3. **Later calls, an input moved**: the program is captured again (host
///    work only, into the same memory) and the cached executable graph is
///    updated in place from the new capture (`DeviceGraph::update`,
///    `cuGraphExecUpdate` on CUDA), then launched. That covers every node —
///    Triton kernels, cuBLAS's own kernels, fills and copies — whose
///    arguments the executor could not patch one by one (cuBLAS's are
///    opaque), at about the cost of one uncaptured call; unchanged
///    addresses cost nothing.
///
/// The cache holds at most `GraphModeOptions::max_graphs` graphs; a new key
/// beyond that evicts the least recently used one (its memory goes when no
/// output refers to it any more). `max_graphs == 0` runs every call
/// uncaptured. Calls of one executor in graph mode are serialised (a mutex):
/// the driver forbids launching or updating one graph from two threads,
/// and a capture records everything enqueued on the backend's stream by
/// this thread, so other executors on the same backend must not enqueue
/// from this thread meanwhile.
#include <wrapir/diagnostic.hpp>
#include <wrapir/detail/hash.hpp>
#include <wrapir/run/detail/executor_graph.hpp>
#include <wrapir/run/detail/executor_lines.hpp>
#include <wrapir/run/executor.hpp>

#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wrapir::run::executor_detail {

class GraphCalls {
 public:
  /// Where a key element comes from without binding a frame.
  struct KeySource {
    enum class Kind : std::uint8_t { scalar, size, stride } kind = Kind::scalar;
    std::size_t index = 0;  // scalar: position among the scalars; else among the tensors
    std::size_t dim = 0;
  };
  /// What a tensor input was captured with; its sizes and strides are
  /// `Entry::dims[first .. first + 2*rank)`, flat, so that the check a
  /// replay makes reads one array and calls nothing.
  struct InputSignature {
    const void* data = nullptr;
    ir::DType dtype{};
    ir::Device device{};
    std::int64_t offset = 0;
    std::int64_t reach = 0;  // bytes of storage the layout needs
    std::size_t first = 0, rank = 0;
  };
  struct Entry {
    std::vector<std::int64_t> key;
    std::unique_ptr<DeviceGraph> graph;
    std::shared_ptr<const GraphMemory::Record> memory;
    std::vector<InputSignature> inputs;
    std::vector<std::int64_t> dims;
    std::vector<Value> outputs;
    std::vector<std::int32_t> alias;  // per output: the tensor input whose storage it shares, or -1
  };

  explicit GraphCalls(std::size_t max_graphs) : max_graphs_(max_graphs) {}

  std::mutex mutex;
  std::vector<std::uint32_t> key_slots;  // the frame's symbol slots, in key order
  std::vector<KeySource> fast;           // one per key slot, when `fast_key`
  bool fast_key = false;
  std::vector<std::int64_t> scratch;     // the key being looked up
  GraphModeStats stats{};

  [[nodiscard]] std::size_t max_graphs() const noexcept { return max_graphs_; }
  [[nodiscard]] std::size_t size() const noexcept { return lru_.size(); }

  /// The entry for `key`, made most recently used; or null.
  Entry* find(std::span<const std::int64_t> key) {
    const auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return &*it->second;
  }
  /// Caches `e` (its key absent), evicting the least recently used entry
  /// at the cap.
  Entry& insert(Entry e) {
    while (!lru_.empty() && lru_.size() >= max_graphs_) {
      index_.erase(std::span<const std::int64_t>(lru_.back().key));
      lru_.pop_back();
      ++stats.evicted;
    }
    lru_.push_front(std::move(e));
    index_.emplace(std::span<const std::int64_t>(lru_.front().key), lru_.begin());
    return lru_.front();
  }

 private:
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::span<const std::int64_t> k) const noexcept {
      std::size_t h = k.size();
      for (std::int64_t v : k) h = ::wrapir::detail::hash_mix(h, static_cast<std::size_t>(v));
      return h;
    }
  };
  struct KeyEqual {
    using is_transparent = void;
    bool operator()(std::span<const std::int64_t> a, std::span<const std::int64_t> b) const noexcept {
      return std::ranges::equal(a, b);
    }
  };
  std::size_t max_graphs_;
  std::list<Entry> lru_;  // most recently used first
  // Keys are spans of the entries' own keys (list nodes never move).
  std::unordered_map<std::span<const std::int64_t>, std::list<Entry>::iterator, KeyHash, KeyEqual> index_;
};

inline std::shared_ptr<GraphCalls> make_graph_calls(const Prepared& prep) {
  const ir::Program& p = *prep.program;
  const DeviceBackend* backend = prep.options.device.get();
  if (backend == nullptr)
    fail("graph mode (ExecutorOptions::graph) needs a device backend that captures (ExecutorOptions::device)");
  if (Result<void> r = backend->can_capture(); !r) fail("graph mode: " + r.error().message);
  check_capturable(p, "");
  auto calls = std::make_shared<GraphCalls>(prep.options.graph.max_graphs);
  const Graph& g = prep.top;
  // Positions of each program input among the tensors and the scalars.
  std::vector<std::size_t> among(p.inputs.size());
  std::size_t tensors = 0, scalars = 0;
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    if (const expr::Expr* s = boost::variant2::get_if<expr::Expr>(&p.inputs[i])) {
      calls->key_slots.push_back(g.slot_of.at(*s));
      calls->fast.push_back({GraphCalls::KeySource::Kind::scalar, scalars, 0});
      among[i] = scalars++;
    } else {
      among[i] = tensors++;
    }
  }
  calls->fast_key = g.solvers.empty();
  for (const ShapeBinding& sb : g.shape_bindings) {
    calls->key_slots.push_back(sb.slot);
    const bool simple = sb.path.size() == 1 && sb.path[0].value >= 0 &&
                        (sb.path[0].kind == ir::KeyStepKind::size || sb.path[0].kind == ir::KeyStepKind::stride);
    if (!simple) {
      calls->fast_key = false;
      continue;
    }
    calls->fast.push_back({sb.path[0].kind == ir::KeyStepKind::size ? GraphCalls::KeySource::Kind::size
                                                                     : GraphCalls::KeySource::Kind::stride,
                           among[sb.input], static_cast<std::size_t>(sb.path[0].value)});
  }
  for (const Solver& s : g.solvers) calls->key_slots.push_back(s.slot);
  return calls;
}

namespace graph_mode {

/// The key straight from the inputs, when every key symbol is a scalar
/// input or one size or stride of a tensor input; false otherwise.
inline bool fast_key(GraphCalls& calls, std::span<const Tensor> inputs, std::span<const std::int64_t> scalars) {
  std::vector<std::int64_t>& key = calls.scratch;
  key.clear();
  for (const GraphCalls::KeySource& k : calls.fast) {
    if (k.kind == GraphCalls::KeySource::Kind::scalar) {
      key.push_back(scalars[k.index]);
      continue;
    }
    const Tensor& t = inputs[k.index];
    const auto& dims = k.kind == GraphCalls::KeySource::Kind::size ? t.sizes : t.strides;
    if (k.dim >= dims.size()) return false;
    key.push_back(dims[k.dim]);
  }
  return true;
}

/// Whether `inputs` are exactly what `e` was captured with (addresses,
/// dtypes, devices, offsets, sizes, strides, storage large enough). This
/// is the whole per-input cost of a replay: hand-written loops, no calls.
inline bool same_inputs(const GraphCalls::Entry& e, std::span<const Tensor> inputs) {
  if (inputs.size() != e.inputs.size()) return false;
  const std::int64_t* dims = e.dims.data();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    const GraphCalls::InputSignature& s = e.inputs[i];
    const Storage* storage = t.storage.get();
    if (storage == nullptr || t.data() != s.data || t.dtype != s.dtype ||
        t.offset != s.offset || storage->nbytes < s.reach || storage->device.type != s.device.type ||
        storage->device.index != s.device.index || t.sizes.size() != s.rank || t.strides.size() != s.rank)
      return false;
    const std::int64_t* sizes = dims + s.first;
    const std::int64_t* strides = sizes + s.rank;
    for (std::size_t d = 0; d < s.rank; ++d)
      if (t.sizes[d] != sizes[d] || t.strides[d] != strides[d]) return false;
  }
  return true;
}

inline void keep_signatures(GraphCalls::Entry& e, std::span<const Tensor> inputs) {
  e.inputs.clear();
  e.dims.clear();
  for (const Tensor& t : inputs) {
    Result<std::int64_t> reach = bytes_spanned(t.sizes, t.strides, t.offset, t.dtype);
    const void* data = t.data();
    e.inputs.push_back({data, t.dtype, t.device(), t.offset, reach ? *reach : 0, e.dims.size(), t.sizes.size()});
    e.dims.insert(e.dims.end(), t.sizes.begin(), t.sizes.end());
    e.dims.insert(e.dims.end(), t.strides.begin(), t.strides.end());
    if (t.strides.size() != t.sizes.size()) e.inputs.back().rank = static_cast<std::size_t>(-1);  // never matches
  }
}

/// The outputs to hand back: the captured ones, those aliasing an input
/// rebuilt on the caller's input.
inline std::vector<Value> outputs_of(const GraphCalls::Entry& e, std::span<const Tensor> inputs) {
  std::vector<Value> out = e.outputs;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (e.alias[i] >= 0)
      if (const Tensor* t = out[i].get_if<Tensor>()) {
        Tensor on_input = *t;
        on_input.storage = inputs[static_cast<std::size_t>(e.alias[i])].storage;
        out[i] = Value{std::move(on_input)};
      }
  return out;
}

inline void keep_outputs(GraphCalls::Entry& e, std::vector<Value> outputs, std::span<const Tensor> inputs) {
  e.alias.assign(outputs.size(), -1);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Tensor* t = outputs[i].get_if<Tensor>();
    if (t == nullptr || !t->storage) continue;
    for (std::size_t j = 0; j < inputs.size(); ++j)
      if (inputs[j].storage == t->storage) {
        e.alias[i] = static_cast<std::int32_t>(j);
        Tensor detached = *t;
        detached.storage.reset();  // the entry must not keep the caller's input alive
        outputs[i] = Value{std::move(detached)};
        break;
      }
  }
  e.outputs = std::move(outputs);
  keep_signatures(e, inputs);
}

inline std::vector<Value> all_inputs(const Prepared& prep, std::span<const Tensor> inputs,
                                     std::span<const std::int64_t> scalars) {
  std::vector<Value> all;
  all.reserve(inputs.size() + scalars.size());
  std::size_t t = 0, s = 0;
  for (const ir::ProgramInput& in : prep.program->inputs) {
    if (boost::variant2::holds_alternative<ir::BufferId>(in)) all.push_back(Value{inputs[t++]});
    else all.push_back(Value{scalars[s++]});
  }
  return all;
}

struct Captured {
  std::vector<Value> outputs;
  std::unique_ptr<DeviceGraph> graph;
};

/// Binds `all` in a frame that allocates from `memory` and captures its
/// body on the backend. Nothing runs.
inline Captured capture(const Prepared& prep, Dispatchers& disp, std::span<const Value> all, GraphMemory& memory,
                        bool executable) {
  const DeviceBackend& backend = *prep.options.device;
  Frame frame(prep, disp, prep.top, &memory);
  frame.bind_inputs(all);
  if (Result<void> r = backend.begin_capture(); !r) fail("graph mode: " + r.error().message);
  Captured out;
  try {
    frame.run_body();
    out.outputs = frame.outputs();
  } catch (...) {
    (void)backend.end_capture(false);  // leaves capture mode; the partial graph is dropped
    throw;
  }
  Result<std::unique_ptr<DeviceGraph>> graph = backend.end_capture(executable);
  if (!graph) fail("graph mode: capturing the program: " + graph.error().message);
  out.graph = *std::move(graph);
  return out;
}

}  // namespace graph_mode

inline std::vector<Value> run_graph_mode(const Prepared& prep, Dispatchers& disp, GraphCalls& calls,
                                         std::span<const Tensor> inputs, std::span<const std::int64_t> scalars) {
  namespace gm = graph_mode;
  std::lock_guard lock(calls.mutex);
  // The common case first: a known key, the same input addresses.
  if (calls.fast_key && gm::fast_key(calls, inputs, scalars)) {
    if (GraphCalls::Entry* e = calls.find(calls.scratch); e && gm::same_inputs(*e, inputs)) {
      if (Result<void> r = e->graph->launch(); !r) fail("graph mode: launching the graph: " + r.error().message);
      ++calls.stats.replayed;
      return gm::outputs_of(*e, inputs);
    }
  }
  const std::vector<Value> all = gm::all_inputs(prep, inputs, scalars);
  std::vector<std::int64_t> key;
  {
    Frame probe(prep, disp, prep.top);  // checks the inputs as an uncaptured call does
    probe.bind_inputs(all);
    key.reserve(calls.key_slots.size());
    for (std::uint32_t slot : calls.key_slots) key.push_back(probe.slot_value(slot));
  }
  if (GraphCalls::Entry* e = calls.find(key)) {
    if (gm::same_inputs(*e, inputs)) {  // a key the inputs do not give directly (a solved dimension)
      if (Result<void> r = e->graph->launch(); !r) fail("graph mode: launching the graph: " + r.error().message);
      ++calls.stats.replayed;
      return gm::outputs_of(*e, inputs);
    }
    // An input moved: capture again into the same memory, update in place.
    GraphMemory memory(e->memory);
    gm::Captured again = gm::capture(prep, disp, all, memory, false);
    if (Result<void> r = e->graph->update(*again.graph); !r)
      fail("graph mode: updating the graph for new input addresses: " + r.error().message);
    gm::keep_outputs(*e, std::move(again.outputs), inputs);
    if (Result<void> r = e->graph->launch(); !r) fail("graph mode: launching the graph: " + r.error().message);
    ++calls.stats.updated;
    return gm::outputs_of(*e, inputs);
  }
  // A new key: run it, recording its memory, then capture it.
  GraphMemory record;
  std::vector<Value> result = run_graph(prep, disp, prep.top, all, &record);
  if (calls.max_graphs() == 0) return result;
  std::shared_ptr<const GraphMemory::Record> planned = record.plan(*prep.options.device);
  GraphMemory serve(planned);
  gm::Captured first = gm::capture(prep, disp, all, serve, true);
  GraphCalls::Entry entry;
  entry.key = std::move(key);
  entry.graph = std::move(first.graph);
  entry.memory = std::move(planned);
  gm::keep_outputs(entry, std::move(first.outputs), inputs);
  calls.insert(std::move(entry));
  ++calls.stats.captured;
  return result;
}

}  // namespace wrapir::run::executor_detail

namespace wrapir::run {

inline GraphModeStats Executor::graph_stats() const {
  if (!graphs_) return {};
  std::lock_guard lock(graphs_->mutex);
  GraphModeStats s = graphs_->stats;
  s.cached = graphs_->size();
  return s;
}

}  // namespace wrapir::run
