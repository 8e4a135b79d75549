#pragma once
/// \file
/// CUDA graphs: capture a sequence of launches once, replay it many times,
/// update its kernels' arguments in place, and cache one graph per shape.
///
/// ```
/// auto exec = cuda::capture_and_instantiate(stream, [&](CUstream s) -> cuda::Status {
///   if (auto st = add({.grid = grid, .block = {256}, .stream = s}, out.as<float>(), a.as<float>(), b.as<float>(), n);
///       !st)
///     return st;
///   return relu({.grid = grid, .block = {256}, .stream = s}, out.as<float>(), n);
/// });                                           // Result<GraphExec>; nothing has run yet
/// auto s1 = exec->launch(stream);               // both kernels, one driver call
/// auto s2 = exec.value().update_kernel(0, out2.as<float>(), a2.as<float>(), b2.as<float>(), n);  // new buffers
/// ```
///
/// **Capture.** `capture_graph(stream, record)` puts `stream` in capture
/// mode (`CU_STREAM_CAPTURE_MODE_THREAD_LOCAL`), calls `record(stream)` —
/// which enqueues work on that stream through `cuda::launch`, `Kernel`,
/// copies and fills, exactly as it would to run it — and ends the capture.
/// The work is recorded, not run. Thread-local mode makes the driver refuse
/// calls from this thread that a replay would not repeat (an allocation,
/// say) while leaving other threads free to allocate, as PyTorch's
/// allocator and data loaders do. `record` returns a `Status`; if it fails
/// (or throws), the capture is still ended and the partial graph discarded,
/// so the stream is usable again, and its diagnostic is returned. Work that
/// breaks the rules of capture (synchronising the stream, using the legacy
/// stream) invalidates it; that is reported when the capture ends. The
/// legacy default stream (`nullptr`, `CU_STREAM_LEGACY`) cannot be captured
/// at all and is refused before `record` runs. Host code inside `record`
/// runs once, at capture; only the enqueued work is replayed.
///
/// **Replay.** `GraphExec::instantiate(graph)` makes the graph executable and
/// takes it over: updates name nodes of the graph it was made from, so the
/// two live together. `launch(stream)` enqueues the whole graph with one
/// driver call; launches of one `GraphExec` run in stream order.
///
/// **Kernel nodes, in launch order.** `kernel_nodes()` lists each kernel
/// with its captured `CUDA_KERNEL_NODE_PARAMS` (function, grid, block,
/// shared memory, argument values as captured). The order is a topological
/// order of the graph (Kahn's algorithm over `cuGraphGetNodes` and
/// `cuGraphGetEdges`), ties broken by the driver's node listing. A capture on
/// one stream gives a chain, whose only topological order is the capture
/// order: kernel node `i` is the `i`-th kernel `record` launched. Memsets and
/// copies are nodes too (`node_count()`), but not kernel nodes.
///
/// **Updating arguments.** When a replay needs the same kernels with other
/// buffers (PyTorch hands over new tensors every call), re-capturing and
/// re-instantiating costs microseconds per node; instead
/// `update_kernel(i, args...)` (typed, packed like `cuda::launch`: no heap
/// allocation) or `set_kernel_arguments(i, params)` replaces kernel node
/// `i`'s arguments in the executable graph (`cuGraphExecKernelNodeSetParams`),
/// keeping its function, grid, block and shared memory. The change applies
/// to later launches only; launches already enqueued keep the old values,
/// so update-then-launch on one stream needs no synchronisation. Where the
/// driver can report parameter sizes (12.4+), `update_kernel` checks its
/// arguments' count and sizes against the kernel once per node and argument
/// types. Addresses inside memset and copy nodes are not updated: a graph
/// whose copies or fills must move needs a new capture.
///
/// **A cache per shape.** `GraphCache(max_graphs)` keeps one executable
/// graph per tuple of symbol values (the sizes a wrapper was called with).
/// `run(symbols, stream, record)` replays the tuple's graph, or captures,
/// instantiates and launches one; once `max_graphs` are held, new tuples
/// run `record` directly on the stream (uncaptured): each graph costs
/// microseconds per node to instantiate and holds device resources, so a
/// wrapper called with ever new sizes must not grow without bound. Keys
/// compare as whole tuples, never by hash: the hash only picks a bucket,
/// and tuples of different lengths never match.
/// `find(symbols)` gives the `GraphExec` to update before a replay.
///
/// None of these objects is thread-safe: the driver forbids concurrent use
/// of one graph; keep one per thread or guard it. All calls need the
/// context the graph was captured in to be current.

#include <wrapir/cuda/detail/unique_handle.hpp>
#include <wrapir/detail/hash.hpp>
#include <wrapir/cuda/driver.hpp>
#include <wrapir/cuda/launch.hpp>
#include <wrapir/run/dim3.hpp>

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wrapir::cuda {

namespace detail {
struct DestroyGraph {
  void operator()(CUgraph g) const noexcept { (void)loaded_driver().cuGraphDestroy(g); }
};
struct DestroyGraphExec {
  void operator()(CUgraphExec e) const noexcept { (void)loaded_driver().cuGraphExecDestroy(e); }
};

inline std::string graph_count_text(std::size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}
inline std::string graph_given_text(std::size_t n) {
  return graph_count_text(n, "argument") + (n == 1 ? " was given" : " were given");
}
}  // namespace detail

/// What `capture_graph` accepts as a recording: called once with the
/// capturing stream, it enqueues work on it and says whether that worked.
template <class Record>
concept GraphRecorder =
    std::invocable<Record&, CUstream> && std::convertible_to<std::invoke_result_t<Record&, CUstream>, Status>;

/// A captured graph (`CUgraph`), not yet executable. Move-only.
class Graph {
 public:
  Graph() = default;
  /// Takes ownership of `graph` (destroyed with this object).
  explicit Graph(CUgraph graph) noexcept : graph_(graph) {}

  [[nodiscard]] CUgraph get() const noexcept { return graph_.get(); }
  [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(graph_); }

  /// How many nodes (kernels, copies, fills, ...) the graph holds.
  [[nodiscard]] Result<std::size_t> node_count() const {
    if (!graph_) return Diagnostic{"Graph::node_count: the graph is empty (moved from, or never captured)"};
    std::size_t n = 0;
    if (const CUresult r = loaded_driver().cuGraphGetNodes(graph_.get(), nullptr, &n); r != CUDA_SUCCESS)
      return driver_error("cuGraphGetNodes", r);
    return n;
  }

 private:
  detail::UniqueHandle<CUgraph, detail::DestroyGraph> graph_{};
};

namespace detail {

/// Ends a capture that `capture_graph` began and did not end itself (its
/// `record` threw), so that the stream leaves capture mode whatever happens.
class CaptureGuard {
 public:
  explicit CaptureGuard(CUstream stream) noexcept : stream_(stream) {}
  CaptureGuard(const CaptureGuard&) = delete;
  CaptureGuard& operator=(const CaptureGuard&) = delete;
  ~CaptureGuard() {
    if (!active_) return;
    CUgraph partial = nullptr;
    (void)loaded_driver().cuStreamEndCapture(stream_, &partial);
    if (partial) (void)loaded_driver().cuGraphDestroy(partial);
  }

  /// Ends the capture now: the graph, or the driver's failure (with null).
  CUresult end(CUgraph* graph) noexcept {
    active_ = false;
    *graph = nullptr;
    return loaded_driver().cuStreamEndCapture(stream_, graph);
  }

 private:
  CUstream stream_;
  bool active_ = true;
};

[[nodiscard]] inline Diagnostic end_capture_error(CUresult r) {
  Diagnostic d = driver_error("cuStreamEndCapture", r);
  if (r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    d.message += " (the capture was invalidated: work recorded during it failed, or did what capture forbids — "
                 "synchronising or querying the capturing stream, or using the legacy default stream; nothing "
                 "recorded was run)";
  else if (r == CUDA_ERROR_STREAM_CAPTURE_UNJOINED)
    d.message += " (work forked onto another stream during the capture was not joined back into the capturing "
                 "stream before the capture ended)";
  return d;
}

/// The graph's nodes in a topological order: Kahn's algorithm, taking among
/// the ready nodes the one listed first by cuGraphGetNodes. For a capture
/// on one stream (a chain) this is the capture order whatever the listing.
[[nodiscard]] inline Result<std::vector<CUgraphNode>> nodes_in_launch_order(CUgraph graph) {
  const Driver& d = loaded_driver();
  std::size_t n = 0;
  if (const CUresult r = d.cuGraphGetNodes(graph, nullptr, &n); r != CUDA_SUCCESS)
    return driver_error("cuGraphGetNodes", r);
  std::vector<CUgraphNode> listed(n);
  if (n > 0) {
    if (const CUresult r = d.cuGraphGetNodes(graph, listed.data(), &n); r != CUDA_SUCCESS)
      return driver_error("cuGraphGetNodes", r);
    listed.resize(n);
  }
  std::size_t edge_count = 0;
  if (const CUresult r = d.cuGraphGetEdges(graph, nullptr, nullptr, &edge_count); r != CUDA_SUCCESS)
    return driver_error("cuGraphGetEdges", r);
  std::vector<CUgraphNode> from(edge_count), to(edge_count);
  if (edge_count > 0) {
    if (const CUresult r = d.cuGraphGetEdges(graph, from.data(), to.data(), &edge_count); r != CUDA_SUCCESS)
      return driver_error("cuGraphGetEdges", r);
    from.resize(edge_count);
    to.resize(edge_count);
  }

  // Node handle -> position in the listing, by binary search over a sorted copy.
  std::vector<std::pair<CUgraphNode, std::size_t>> position(n);
  for (std::size_t i = 0; i < n; ++i) position[i] = {listed[i], i};
  const auto by_handle = [](const auto& a, const auto& b) { return std::less<CUgraphNode>{}(a.first, b.first); };
  std::sort(position.begin(), position.end(), by_handle);
  const auto index_of = [&](CUgraphNode node) -> std::size_t {
    const auto it = std::lower_bound(position.begin(), position.end(), std::pair<CUgraphNode, std::size_t>{node, 0},
                                     by_handle);
    return it != position.end() && it->first == node ? it->second : n;
  };

  // Successors as compressed rows: successors of i are successor[first[i] .. first[i + 1]).
  std::vector<std::size_t> first(n + 1, 0), unmet_dependencies(n, 0), successor(edge_count);
  std::vector<std::pair<std::size_t, std::size_t>> edges(edge_count);
  for (std::size_t e = 0; e < edge_count; ++e) {
    edges[e] = {index_of(from[e]), index_of(to[e])};
    if (edges[e].first == n || edges[e].second == n)
      return Diagnostic{"cuGraphGetEdges returned an edge between nodes that cuGraphGetNodes does not list"};
    ++first[edges[e].first + 1];
    ++unmet_dependencies[edges[e].second];
  }
  for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<std::size_t> fill(first.begin(), first.end() - 1);
  for (const auto& [source, target] : edges) successor[fill[source]++] = target;

  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (unmet_dependencies[i] == 0) ready.push(i);
  std::vector<CUgraphNode> order;
  order.reserve(n);
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    order.push_back(listed[i]);
    for (std::size_t k = first[i]; k < first[i + 1]; ++k)
      if (--unmet_dependencies[successor[k]] == 0) ready.push(successor[k]);
  }
  if (order.size() != n)
    return Diagnostic{"the CUDA graph's dependencies form a cycle (" + std::to_string(n - order.size()) + " of " +
                      std::to_string(n) + " nodes are on or after one)"};
  return order;
}

/// One address per distinct argument-type list, to remember which typed
/// update a kernel node's signature was already checked for.
template <class... Args>
inline constexpr char update_signature_tag = 0;

}  // namespace detail

/// Captures the work `record(stream)` enqueues on `stream` into a graph,
/// without running it. See the file comment for the rules.
template <class Record>
  requires GraphRecorder<Record>
[[nodiscard]] Result<Graph> capture_graph(CUstream stream, Record&& record) {
  auto d = driver();
  if (!d) return d.error();
  if (stream == nullptr || stream == CU_STREAM_LEGACY)
    return Diagnostic{"cannot capture a CUDA graph on the legacy default stream (nullptr or CU_STREAM_LEGACY): the "
                      "driver does not capture it; capture on a created stream (cuda::Stream::create) or "
                      "CU_STREAM_PER_THREAD"};
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (const CUresult r = (*d)->cuStreamIsCapturing(stream, &status); r != CUDA_SUCCESS)
    return driver_error("cuStreamIsCapturing", r);
  if (status == CU_STREAM_CAPTURE_STATUS_ACTIVE)
    return Diagnostic{"cannot capture a CUDA graph: the stream is already being captured (captures do not nest; "
                      "record the work into the capture in progress instead)"};
  if (status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
    return Diagnostic{"cannot capture a CUDA graph: the stream is in an invalidated capture that was never ended"};
  if (const CUresult r = (*d)->cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL); r != CUDA_SUCCESS)
    return driver_error("cuStreamBeginCapture", r);

  detail::CaptureGuard guard(stream);
  Status recorded = std::invoke(record, stream);
  CUgraph captured = nullptr;
  const CUresult ended = guard.end(&captured);
  Graph graph(captured);
  if (!recorded) return recorded.error();
  if (ended != CUDA_SUCCESS) return detail::end_capture_error(ended);
  if (!graph) return Diagnostic{"cuStreamEndCapture returned no graph"};
  return graph;
}

/// A kernel node of an executable graph, as captured.
struct KernelNode {
  /// The node in the graph the executable graph was instantiated from.
  CUgraphNode node = nullptr;
  /// As captured (cuGraphKernelNodeGetParams); `kernelParams[i]` points to
  /// the captured value of argument `i`, owned by the graph. Updates change
  /// the executable graph only, never these.
  CUDA_KERNEL_NODE_PARAMS_v2 params{};

  [[nodiscard]] CUfunction function() const noexcept { return params.func; }
  [[nodiscard]] Dim3 grid() const noexcept { return {params.gridDimX, params.gridDimY, params.gridDimZ}; }
  [[nodiscard]] Dim3 block() const noexcept { return {params.blockDimX, params.blockDimY, params.blockDimZ}; }
  [[nodiscard]] std::uint32_t shared_bytes() const noexcept { return params.sharedMemBytes; }
};

/// An executable graph (`CUgraphExec`) with the graph it was made from.
/// Move-only.
class GraphExec {
 public:
  GraphExec() = default;

  /// Makes `graph` executable and reads its kernel nodes in launch order.
  /// Takes the graph over: kernel-node updates refer to its nodes.
  [[nodiscard]] static Result<GraphExec> instantiate(Graph graph) {
    if (!graph) return Diagnostic{"GraphExec::instantiate: the graph is empty (moved from, or never captured)"};
    auto order = detail::nodes_in_launch_order(graph.get());
    if (!order) return order.error();
    const Driver& d = loaded_driver();
    GraphExec out;
    out.node_count_ = order->size();
    for (CUgraphNode node : *order) {
      CUgraphNodeType type{};
      if (const CUresult r = d.cuGraphNodeGetType(node, &type); r != CUDA_SUCCESS)
        return driver_error("cuGraphNodeGetType", r);
      if (type != CU_GRAPH_NODE_TYPE_KERNEL) continue;
      KernelNode k;
      k.node = node;
      if (const CUresult r = d.cuGraphKernelNodeGetParams(node, &k.params); r != CUDA_SUCCESS)
        return driver_error("cuGraphKernelNodeGetParams(kernel node " + std::to_string(out.kernels_.size()) + ")", r);
      out.kernels_.push_back(k);
    }
    out.checked_signature_.assign(out.kernels_.size(), nullptr);
    CUgraphExec exec = nullptr;
    if (const CUresult r = d.cuGraphInstantiateWithFlags(&exec, graph.get(), 0); r != CUDA_SUCCESS)
      return driver_error(
          "cuGraphInstantiateWithFlags(graph of " + detail::graph_count_text(out.node_count_, "node") + ")", r);
    out.graph_ = std::move(graph);
    out.exec_ = detail::UniqueHandle<CUgraphExec, detail::DestroyGraphExec>(exec);
    return out;
  }

  /// Enqueues the whole graph on `stream` (any stream, the legacy one too).
  /// A graph without nodes enqueues nothing.
  [[nodiscard]] Status launch(CUstream stream) const {
    if (!exec_) return Diagnostic{"GraphExec::launch: the graph is empty (moved from, or never instantiated)"};
    if (node_count_ == 0) return {};
    const CUresult r = loaded_driver().cuGraphLaunch(exec_.get(), stream);
    if (r == CUDA_SUCCESS) [[likely]]
      return {};
    return driver_error("cuGraphLaunch(graph of " + detail::graph_count_text(node_count_, "node") + ")", r);
  }

  [[nodiscard]] CUgraphExec get() const noexcept { return exec_.get(); }
  [[nodiscard]] const Graph& graph() const noexcept { return graph_; }
  /// Every node: kernels, copies, fills, ...
  [[nodiscard]] std::size_t node_count() const noexcept { return node_count_; }
  [[nodiscard]] std::size_t kernel_count() const noexcept { return kernels_.size(); }
  /// The kernel nodes in launch order (see the file comment).
  [[nodiscard]] std::span<const KernelNode> kernel_nodes() const noexcept { return kernels_; }

  /// Replaces kernel node `index`'s arguments for later launches: `params[i]`
  /// points to argument `i`'s value, which the driver copies now. Grid,
  /// block, shared memory and function stay as captured. Nothing checks
  /// that `params` matches the kernel's signature; `update_kernel` does.
  [[nodiscard]] Status set_kernel_arguments(std::size_t index, void** params) {
    if (auto s = check_index(index); !s) return s;
    CUDA_KERNEL_NODE_PARAMS_v2 p = kernels_[index].params;
    p.kernelParams = params;
    p.extra = nullptr;
    const CUresult r = loaded_driver().cuGraphExecKernelNodeSetParams(exec_.get(), kernels_[index].node, &p);
    if (r == CUDA_SUCCESS) [[likely]]
      return {};
    return driver_error("cuGraphExecKernelNodeSetParams(kernel node " + std::to_string(index) + " of " +
                            std::to_string(kernels_.size()) + ")",
                        r);
  }

  /// `set_kernel_arguments` with `args` packed as `cuda::launch` packs them
  /// (each must have exactly the type the kernel declares). Where the
  /// driver reports parameter sizes, the count and sizes are checked, once
  /// per node and argument-type list.
  template <class... Args>
  [[nodiscard]] Status update_kernel(std::size_t index, const Args&... args) {
    if (auto s = check_index(index); !s) return s;
    if (checked_signature_[index] != &detail::update_signature_tag<Args...>) {
      constexpr std::array<std::size_t, sizeof...(Args)> sizes{sizeof(Args)...};
      if (auto s = check_signature(index, sizes); !s) return s;
      checked_signature_[index] = &detail::update_signature_tag<Args...>;
    }
    auto params = detail::argument_addresses(args...);
    return set_kernel_arguments(index, params.data());
  }

 private:
  [[nodiscard]] Status check_index(std::size_t index) const {
    if (!exec_) return Diagnostic{"GraphExec: the graph is empty (moved from, or never instantiated)"};
    if (index < kernels_.size()) [[likely]]
      return {};
    return Diagnostic{"kernel node index " + std::to_string(index) + " is out of range: the graph has " +
                      detail::graph_count_text(kernels_.size(), "kernel node") +
                      (kernels_.empty() ? std::string{} : " (0 to " + std::to_string(kernels_.size() - 1) + ")")};
  }

  [[nodiscard]] Status check_signature(std::size_t index, std::span<const std::size_t> sizes) const {
    const CUfunction f = kernels_[index].params.func;
    if (!loaded_driver().cuFuncGetParamInfo || !f) return {};
    const std::string where = "update of kernel node " + std::to_string(index);
    auto actual = detail::parameter_sizes_of(f, where);
    if (!actual) return actual.error();
    // The first differing size, then the count: as the driver is asked, parameter by parameter.
    const std::size_t shared = std::min(actual->size(), sizes.size());
    for (std::size_t i = 0; i < shared; ++i)
      if ((*actual)[i] != sizes[i])
        return Diagnostic{where + ": parameter " + std::to_string(i) + " is " + std::to_string((*actual)[i]) +
                          " bytes but the argument given is " + std::to_string(sizes[i]) + " bytes"};
    if (actual->size() != sizes.size())
      return Diagnostic{where + ": the kernel has " + detail::graph_count_text(actual->size(), "parameter") + " but " +
                        detail::graph_given_text(sizes.size())};
    return {};
  }

  // Declared first so that it is destroyed last, after the executable graph.
  Graph graph_{};
  detail::UniqueHandle<CUgraphExec, detail::DestroyGraphExec> exec_{};
  std::vector<KernelNode> kernels_{};
  // Per kernel node: the update_signature_tag of the last argument types checked.
  std::vector<const void*> checked_signature_{};
  std::size_t node_count_ = 0;
};

/// `capture_graph` then `GraphExec::instantiate`.
template <class Record>
  requires GraphRecorder<Record>
[[nodiscard]] Result<GraphExec> capture_and_instantiate(CUstream stream, Record&& record) {
  auto graph = capture_graph(stream, record);
  if (!graph) return graph.error();
  return GraphExec::instantiate(std::move(graph).value());
}

/// What `GraphCache::run` did.
enum class GraphRun {
  replayed,   ///< launched the graph cached for the symbols
  captured,   ///< captured, instantiated, cached and launched a new graph
  uncaptured  ///< the cache was full: ran `record` directly on the stream
};

[[nodiscard]] constexpr const char* to_string(GraphRun run) noexcept {
  switch (run) {
    case GraphRun::replayed: return "replayed";
    case GraphRun::captured: return "captured";
    case GraphRun::uncaptured: return "uncaptured";
  }
  return "unknown";
}

/// How often each of `GraphRun`'s outcomes happened.
struct GraphCacheStats {
  std::uint64_t replayed = 0;
  std::uint64_t captured = 0;
  std::uint64_t uncaptured = 0;
};

/// The default hash of a symbol tuple: it only picks a bucket; entries are
/// matched by comparing whole tuples. The length is hashed too.
struct SymbolTupleHash {
  [[nodiscard]] std::size_t operator()(std::span<const std::int64_t> symbols) const noexcept {
    std::size_t h = symbols.size();
    for (const std::int64_t v : symbols) h = ::wrapir::detail::hash_mix(h, static_cast<std::size_t>(v));
    return h;
  }
};

/// One executable graph per tuple of symbol values, up to `max_graphs`.
/// `Hash` maps a `std::span<const std::int64_t>` to a bucket; it is a
/// parameter so that tests can force collisions (`GraphCache` is the
/// default). Move-only.
template <class Hash = SymbolTupleHash>
class BasicGraphCache {
 public:
  explicit BasicGraphCache(std::size_t max_graphs, Hash hash = Hash{})
      : graphs_(0, KeyHash{std::move(hash)}, KeyEqual{}), max_graphs_(max_graphs) {}

  /// Replays the graph cached for `symbols` on `stream`; else, below the
  /// cap, captures `record` on `stream`, caches the graph and launches it;
  /// else runs `record(stream)` uncaptured. Either way the work runs once.
  /// `record` must enqueue the same kernels in the same order every time
  /// it is called for the same symbols. On an error nothing is cached;
  /// a failed capture ran none of the recorded work.
  template <class Record>
    requires GraphRecorder<Record>
  [[nodiscard]] Result<GraphRun> run(std::span<const std::int64_t> symbols, CUstream stream, Record&& record) {
    if (GraphExec* exec = find(symbols)) {
      if (auto s = exec->launch(stream); !s) return s.error();
      ++stats_.replayed;
      return GraphRun::replayed;
    }
    if (graphs_.size() >= max_graphs_) {
      Status s = std::invoke(record, stream);
      if (!s) return s.error();
      ++stats_.uncaptured;
      return GraphRun::uncaptured;
    }
    auto exec = capture_and_instantiate(stream, record);
    if (!exec)
      return Diagnostic{"capturing the CUDA graph for symbols " + symbols_text(symbols) + ": " +
                        exec.error().message};
    auto [entry, inserted] =
        graphs_.emplace(std::vector<std::int64_t>(symbols.begin(), symbols.end()), std::move(exec).value());
    (void)inserted;  // find() above said the key was absent
    if (auto s = entry->second.launch(stream); !s) return s.error();
    ++stats_.captured;
    return GraphRun::captured;
  }

  /// The graph cached for `symbols` (to update its kernels' arguments
  /// before a replay), or null. Valid until `clear()` or destruction.
  [[nodiscard]] GraphExec* find(std::span<const std::int64_t> symbols) {
    const auto it = graphs_.find(symbols);
    return it == graphs_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] const GraphExec* find(std::span<const std::int64_t> symbols) const {
    const auto it = graphs_.find(symbols);
    return it == graphs_.end() ? nullptr : &it->second;
  }

  [[nodiscard]] std::size_t size() const noexcept { return graphs_.size(); }
  [[nodiscard]] std::size_t max_graphs() const noexcept { return max_graphs_; }
  [[nodiscard]] const GraphCacheStats& stats() const noexcept { return stats_; }
  /// Drops every graph (the counts stay); later calls capture again.
  void clear() noexcept { graphs_.clear(); }

  /// "(4, 128)": symbols as diagnostics print them.
  [[nodiscard]] static std::string symbols_text(std::span<const std::int64_t> symbols) {
    std::string out = "(";
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      if (i > 0) out += ", ";
      out += std::to_string(symbols[i]);
    }
    return out + ")";
  }

 private:
  // Transparent, so that a lookup by span allocates no key.
  struct KeyHash {
    using is_transparent = void;
    Hash hash;
    std::size_t operator()(std::span<const std::int64_t> symbols) const { return hash(symbols); }
  };
  struct KeyEqual {
    using is_transparent = void;
    bool operator()(std::span<const std::int64_t> a, std::span<const std::int64_t> b) const noexcept {
      return std::ranges::equal(a, b);
    }
  };

  std::unordered_map<std::vector<std::int64_t>, GraphExec, KeyHash, KeyEqual> graphs_;
  std::size_t max_graphs_;
  GraphCacheStats stats_{};
};

using GraphCache = BasicGraphCache<>;

}  // namespace wrapir::cuda
