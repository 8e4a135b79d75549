#pragma once
/// \file
/// Running a prepared program (run/executor.hpp): the per-call frame and
/// one handler per line kind. A line kind without a handler here is a
/// compile error naming it (`no_executor_handler_for_line_kind<Kind>`), as
/// for emitters: adding a kind to the IR means deciding what it does here.
#include <wrapir/detail/phase_clock.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/run/detail/executor_graph.hpp>
#include <wrapir/run/detail/executor_prepare.hpp>
#include <wrapir/run/detail/executor_values.hpp>
#include <wrapir/run/executor.hpp>

#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace wrapir::run::executor_detail {

template <class T>
inline constexpr bool always_false = false;

/// Instantiated only for a line kind the executor has no handler for; the
/// compiler's "in instantiation of" note names the kind.
template <class LineKind>
struct no_executor_handler_for_line_kind {
  static_assert(always_false<LineKind>,
                "run::Executor has no handler for this line kind: add `void operator()(const Kind&)` to "
                "executor_detail::Frame (run/detail/executor_lines.hpp)");
};

struct EvaluatedLayout {
  std::vector<std::int64_t> sizes, strides;
  std::int64_t offset = 0;
};

/// `stream`: the stream the graph's base is (a subgraph called inside a
/// stream context runs on it; executor_streams.hpp).
inline std::vector<Value> run_graph(const Prepared& prep, Dispatchers& disp, const Graph& g,
                                    std::span<const Value> inputs, GraphMemory* memory = nullptr,
                                    std::uint32_t stream = 0);

/// The state of one run of one graph. Handlers throw `Failure`; `run`
/// adds the line.
class Frame {
 public:
  /// `memory`: graph mode's device memory (executor_graph.hpp), else null:
  /// device allocations come from the backend.
  /// `state`: a recycled state (FramePool) or null for a fresh one.
  /// `base_stream`: the stream this frame's stream 0 is (a subgraph's
  /// caller's current stream; executor_streams.hpp).
  Frame(const Prepared& prep, Dispatchers& disp, const Graph& g, GraphMemory* memory = nullptr,
        FrameState* state = nullptr, std::uint32_t base_stream = 0)
      : prep_(prep),
        disp_(disp),
        g_(g),
        p_(*g.program),
        own_(state != nullptr ? nullptr : std::make_unique<FrameState>()),
        st_(state != nullptr ? *state : *own_),
        memory_(memory),
        base_stream_(base_stream),
        stream_(base_stream) {
    if (st_.shaped_for == &g_) [[likely]] {
      // A recycled state sized for this graph by its last call: its tables
      // have their sizes, `live` is all 0 (`scrub`), and only the symbols'
      // bound flags and the scope stack start again.
      std::fill(st_.bound.begin(), st_.bound.end(), std::uint8_t{0});
      st_.scopes.clear();
      return;
    }
    st_.buffers.resize(p_.buffers.size());
    // A recycled state's `live` is all 0 (`scrub`); a fresh one is empty.
    if (st_.live.size() != p_.buffers.size()) st_.live.assign(p_.buffers.size(), 0);
    st_.static_dims.resize(p_.buffers.size(), 0);  // a recycled state's stay: its tensors keep their dimensions
    st_.values.resize(g.slot_symbols.size());  // read only where `st_.bound` says so
    st_.bound.assign(g.slot_symbols.size(), 0);
    st_.pools.resize(p_.pools.size());
    if (st_.slots.size() < g.max_args) {
      st_.slots.resize(g.max_args);
      st_.params.resize(g.max_args);
      st_.arg_tensors.resize(g.max_args);
      // Each parameter points at its slot for good (a launch writes the
      // slots only).
      for (std::size_t i = 0; i < st_.slots.size(); ++i) st_.params[i] = &st_.slots[i];
    }
    st_.scopes.clear();
    st_.shaped_for = &g_;
  }

  /// Binds the top level's inputs straight from the caller's spans (no
  /// list of values is built): `index[i]` is program input i's position in
  /// `tensors` or `scalars`.
  void bind_top_inputs(std::span<const Tensor> tensors, std::span<const std::int64_t> scalars,
                       std::span<const std::uint32_t> index);

  void bind_inputs(std::span<const Value> inputs);
  template <class Inputs>
  void bind(const Inputs& inputs);
  /// The top level's tensor inputs when every one is planned
  /// (`Graph::inputs_planned`, so input i is `tensors[i]`): each matching
  /// input whose buffer's tensor holds the static dimensions already (a
  /// call before bound it) is borrowed by writing its storage pointer,
  /// dtype and offset. False at the first that does not match: `bind`'s
  /// general loop then binds them all again, naming what is wrong.
  bool bind_planned(std::span<const Tensor> tensors);
  void run_body();
  std::vector<Value> outputs();
  /// The value of symbol slot `slot` once bound (graph mode's key).
  [[nodiscard]] std::int64_t slot_value(std::uint32_t slot) const {
    if (!st_.bound.at(slot)) unbound(slot);
    return st_.values[slot];
  }

  // ---- memory ------------------------------------------------------------
  void operator()(const ir::Allocate& l) { allocate_in_place(l.buffer); }
  void operator()(const ir::FreeIfNotReused& l) {
    if (!l.reused) release(l.buffer);
  }
  void operator()(const ir::Reuse& l) {
    // Written in place: the new buffer's tensor keeps its vectors' memory.
    // When the old buffer goes, its storage moves over (no reference count
    // to touch).
    const Tensor& old = tensor(l.old_buffer);
    const BufferPlan& plan = buffer_plan(l.new_buffer);
    std::shared_ptr<Storage> storage;
    if (l.delete_old) {
      storage = std::move(boost::variant2::get_if<Tensor>(&st_.buffers[l.old_buffer.index].value)->storage);
      release(l.old_buffer);
    } else {
      storage = old.storage;
    }
    Tensor& t = own_tensor(l.new_buffer);
    t.storage = std::move(storage);
    t.dtype = plan.dtype;
    lay_out(l.new_buffer, t);
    if (plan.known && t.storage && plan.bytes <= t.storage->nbytes) [[likely]] {
      st_.live[l.new_buffer.index] = 1;
      return;
    }
    if (Result<void> r = fits(t); !r) {
      t.storage.reset();
      fail(name(l.new_buffer) + " cannot take the storage of " + name(l.old_buffer) + ": " + r.error().message);
    }
    st_.live[l.new_buffer.index] = 1;
  }
  void operator()(const ir::Free& l) { release(l.buffer); }
  void operator()(const ir::Null&) {}
  void operator()(const ir::PoolCreate& l) {
    const ir::PoolDecl& pool = p_.pool(l.pool);
    const std::int64_t bytes = eval(pool.size_bytes);
    if (bytes < 0) fail("pool " + ir::quote_for_diagnostic(pool.name) + " has negative size " + std::to_string(bytes));
    st_.pools[l.pool.index] = allocate_tensor(pool.device, {bytes}, {1}, 0, ir::DType::uint8).storage;
  }
  void operator()(const ir::AllocFromPool& l) {
    const ir::PoolDecl& pool = p_.pool(l.pool);
    const std::shared_ptr<Storage>& storage = st_.pools.at(l.pool.index);
    if (!storage) fail("pool " + ir::quote_for_diagnostic(pool.name) + " is not live");
    const std::int64_t offset = eval(l.offset_bytes);
    if (offset < 0 || offset > storage->nbytes)
      fail(name(l.buffer) + " starts at byte " + std::to_string(offset) + " of pool " +
           ir::quote_for_diagnostic(pool.name) + ", which has " + std::to_string(storage->nbytes) + " bytes");
    auto region = std::make_shared<Storage>();
    region->data = storage->data == nullptr ? nullptr : storage->data + offset;
    region->nbytes = storage->nbytes - offset;
    region->device = storage->device;
    region->owner = storage;  // the region keeps the whole pool alive
    EvaluatedLayout lay = layout(l.buffer);
    Result<Tensor> t = as_strided(Tensor{region, decl(l.buffer).layout.dtype, {}, {}, 0}, std::move(lay.sizes),
                                  std::move(lay.strides), lay.offset);
    if (!t) fail(name(l.buffer) + " does not fit in pool " + ir::quote_for_diagnostic(pool.name) + ": " + t.error().message);
    define(l.buffer, *std::move(t));
  }
  void operator()(const ir::DeallocFromPool& l) {
    release(l.buffer);
    if (l.releases_pool) st_.pools.at(l.pool.index).reset();
  }
  // A single process has no peers: a comm buffer is plain memory here.
  void operator()(const ir::CommBufferAllocate& l) { define(l.buffer, allocate(l.buffer)); }
  void operator()(const ir::CommBufferFree& l) { release(l.buffer); }
  void operator()(const ir::WorkspaceAllocate& l) {
    Tensor t = allocate(l.workspace);
    // zero_per_graph: the workspace lives for this run only, so zeroing it
    // at allocation is zeroing it once per run.
    if (l.zero_mode != ir::WorkspaceZeroMode::uninitialized && t.storage && t.storage->nbytes > 0) {
      if (t.device().type == ir::DeviceType::cpu) {
        std::memset(t.storage->data, 0, static_cast<std::size_t>(t.storage->nbytes));
      } else if (Result<void> z = backend()->zero(t.storage->data, t.storage->nbytes); !z) {
        fail("zeroing " + name(l.workspace) + ": " + z.error().message);
      }
    }
    define(l.workspace, std::move(t));
  }
  void operator()(const ir::WorkspaceFree& l) { release(l.workspace); }
  void operator()(const ir::DeviceCopy& l) { copy_tensor(backend(), resolve(l.destination), resolve(l.source)); }

  // ---- views -------------------------------------------------------------
  void operator()(const ir::Reinterpret& l) {
    const Tensor& base_tensor = tensor(l.base);
    const ir::DType base_dtype = base_tensor.dtype;
    std::shared_ptr<Storage> storage = base_tensor.storage;
    const BufferPlan& plan = buffer_plan(l.view);
    const ir::DType dtype = plan.dtype;
    // Written in place (the view's tensor keeps its vectors' memory).
    Tensor& t = own_tensor(l.view);
    t.storage = std::move(storage);
    t.dtype = dtype;
    lay_out(l.view, t);  // offset in elements of the base's dtype
    st_.live[l.view.index] = 0;
    if (dtype == base_dtype && plan.known && t.storage && plan.bytes <= t.storage->nbytes) [[likely]] {
      st_.live[l.view.index] = 1;  // measured when prepared: it fits
      return;
    }
    if (dtype != base_dtype) {
      const std::int64_t bytes = t.offset * ir::itemsize(base_dtype);
      if (bytes % ir::itemsize(dtype) != 0)
        fail("the view's offset of " + std::to_string(bytes) + " bytes is not a whole number of " +
             std::string(ir::name(dtype)) + " elements");
      t.offset = bytes / ir::itemsize(dtype);
    }
    if (Result<void> r = fits(t); !r) fail("view " + name(l.view) + " of " + name(l.base) + ": " + r.error().message);
    st_.live[l.view.index] = 1;
  }

  // ---- kernels -----------------------------------------------------------
  void operator()(const ir::KernelDefinition&) {}  // resolved when prepared
  void operator()(const ir::KernelCall& l) {
    if (prep_.debug != nullptr) [[unlikely]]
      return debug_around(p_.kernel(l.kernel).name, [&] { return debug_kernel_args(l); }, [&] { launch(l); });
    launch(l);
  }
  void launch(const ir::KernelCall& l) {
    if (const FastLaunch& fast = g_.launches[line_]; fast.usable) [[likely]]
      if (launch_fast(l.kernel, fast)) return;
    const ir::KernelDecl& k = p_.kernel(l.kernel);
    const CpuKernelFn& fn = g_.kernels.at(l.kernel.index);
    if (!fn) fail("kernel " + ir::quote_for_diagnostic(k.name) + " is called but was never defined");
    if (l.args.size() != k.signature.size())
      fail("kernel " + ir::quote_for_diagnostic(k.name) + " takes " + std::to_string(k.signature.size()) +
           " arguments, the call passes " + std::to_string(l.args.size()));
    for (std::size_t i = 0; i < l.args.size(); ++i) (void)pack(i, l.args[i], k.signature[i].type);
    const std::size_t count = pack_call_grid(g_.launches[line_], l.args.size());
    if (Result<void> r = fn(std::span<void* const>(st_.params.data(), count)); !r)
      fail("kernel " + ir::quote_for_diagnostic(k.name) + ": " + r.error().message);
    drop_views(l.args);
  }
  void operator()(const ir::SymbolicCallArg& l) { set_symbol(l.symbol, eval(l.value)); }
  void operator()(const ir::MultiKernelDefinition&) {}  // dispatcher built when prepared
  void operator()(const ir::MultiKernelCall& l) {
    const ir::KernelDecl& k = p_.kernel(l.kernel);
    const std::int32_t index = g_.multi.at(l.kernel.index);
    if (index < 0) fail("multi-kernel " + ir::quote_for_diagnostic(k.name) + " is called but was never defined");
    MultiDispatch& d = *disp_.all.at(static_cast<std::size_t>(index));
    std::vector<PackedArg> packed(l.args.size());
    ir::ShapeKey shapes;
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      ir::ParamType type{};
      if (i < l.arg_types.size()) {
        type = l.arg_types[i];
      } else if (l.args[i].holds<ir::BufferArg>()) {
        type = ir::ParamType{true, decl(l.args[i].get_if<ir::BufferArg>()->buffer).layout.dtype};
      }
      const Tensor* t = pack(i, l.args[i], type);
      packed[i].param = st_.params[i];
      if (t != nullptr) {
        packed[i].tensor = t;
        if (d.wants_shapes()) shapes.push_back(t->sizes);
      }
    }
    Result<std::size_t> r = d.call(packed, shapes);
    if (!r) fail(r.error().message);
    drop_views(l.args);
  }

  // ---- extern kernels ----------------------------------------------------
  // The argument lists of an extern line are kept in the frame's state and
  // assigned into per call (`extern_arguments`): no list, name or tensor
  // layout is allocated once the state has seen the line.
  void operator()(const ir::ExternKernelAlloc& l) {
    if (prep_.debug != nullptr) [[unlikely]]
      return debug_around(l.kernel.text, [&] { return debug_extern_args(l.args, l.kwargs, {}); }, [&] { extern_alloc(l); });
    extern_alloc(l);
  }
  void extern_alloc(const ir::ExternKernelAlloc& l) {
    ExternScratch& s = extern_arguments(l.args, l.kwargs, {});
    Value result = call_extern(l.kernel, s);
    if (l.result) define_result(*l.result, std::move(result));
  }
  void operator()(const ir::ExternKernelOut& l) {
    if (prep_.debug != nullptr) [[unlikely]]
      return debug_around(l.kernel.text, [&] { return debug_extern_args(l.args, l.kwargs, {&l.out, 1}); },
                          [&] { extern_out(l); });
    extern_out(l);
  }
  void extern_out(const ir::ExternKernelOut& l) {
    const std::array<std::pair<std::string_view, const ir::BufferArg*>, 1> out{{{"out", &l.out}}};
    // The result is discarded, so no argument's storage can outlive the
    // call through it: the lists borrow the buffers' storages (no
    // reference count), as they do the caller's inputs.
    ExternScratch& s = extern_arguments(l.args, l.kwargs, out, Ownership::borrowed);
    (void)call_extern(l.kernel, s);
  }
  void operator()(const ir::ExternKernelMultiOut& l) {
    if (prep_.debug != nullptr) [[unlikely]] {
      std::vector<ir::BufferArg> outs;
      for (const ir::NamedBuffer& o : l.outs) outs.push_back(o.buffer);
      return debug_around(l.kernel.text, [&] { return debug_extern_args(l.args, l.kwargs, outs); },
                          [&] { extern_multi_out(l); });
    }
    extern_multi_out(l);
  }
  void extern_multi_out(const ir::ExternKernelMultiOut& l) {
    constexpr std::size_t small = 8;
    std::array<std::pair<std::string_view, const ir::BufferArg*>, small> local{};
    std::vector<std::pair<std::string_view, const ir::BufferArg*>> large;
    std::pair<std::string_view, const ir::BufferArg*>* outs = local.data();
    if (l.outs.size() > small) {
      large.resize(l.outs.size());
      outs = large.data();
    }
    for (std::size_t i = 0; i < l.outs.size(); ++i) outs[i] = {l.outs[i].name.text, &l.outs[i].buffer};
    ExternScratch& s = extern_arguments(l.args, l.kwargs, {outs, l.outs.size()});
    Value result = call_extern(l.kernel, s);
    if (l.result) define_result(*l.result, std::move(result));
  }
  void operator()(const ir::MultiOutput& l) {
    const Value element = follow_path(value(l.source), l.path, ("the result of " + name(l.source)).c_str());
    if (!element.holds<Tensor>()) fail("the element of " + name(l.source) + " that the path selects is not a tensor");
    define_result(l.result, element);
  }
  void operator()(const ir::ScatterFallback& l) {
    std::vector<Value> args{Value{tensor(l.self)}, Value{l.dim}, Value{resolve(l.index)}, value_of(l.src)};
    (void)call_extern(l.kernel, std::move(args), named_values_of(l.kwargs));
  }
  void operator()(const ir::IndexPutFallback& l) {
    ValueList indices;
    for (const auto& ix : l.indices) indices.items.push_back(ix ? Value{resolve(*ix)} : Value{});
    std::vector<Value> args{Value{tensor(l.self)}, Value{std::move(indices)}, Value{resolve(l.values)},
                            Value{l.accumulate}};
    (void)call_extern(l.kernel, std::move(args), {});
  }
  void operator()(const ir::DynamicScalar& l) {
    const std::string what = "the scalar in " + name(l.source);
    const Value v = follow_path(host_scalars(backend(), Value{tensor(l.source)}), l.path, what.c_str());
    set_symbol(l.symbol, integer_of(v, what.c_str()));
  }
  void operator()(const ir::UnbackedSymbolDefs& l) {
    for (const ir::SymbolBinding& b : l.bindings) {
      const std::string what = "symbol " + ir::quote_for_diagnostic(b.symbol.name()) + " from " + name(l.source);
      const Value v = follow_path(host_scalars(backend(), value(l.source)), b.path, what.c_str());
      set_symbol(b.symbol, integer_of(v, what.c_str()));
    }
  }
  void operator()(const ir::AssertSizeStride& l) {
    const Tensor& t = tensor(l.buffer);
    std::vector<std::int64_t> sizes, strides;
    for (expr::Expr e : l.sizes) sizes.push_back(eval(e));
    for (expr::Expr e : l.strides) strides.push_back(eval(e));
    check_layout(t, sizes, strides, [&] { return name(l.buffer); });
  }
  void operator()(const ir::AssertAlignment& l) {
    const Tensor& t = tensor(l.buffer);
    if (l.alignment <= 0) fail("alignment " + std::to_string(l.alignment) + " is not positive");
    const auto address = reinterpret_cast<std::uintptr_t>(t.data());
    if (address % static_cast<std::uintptr_t>(l.alignment) != 0)
      fail(name(l.buffer) + " is not aligned to " + std::to_string(l.alignment) + " bytes" +
           (l.op_name ? " (the result of " + *l.op_name + ")" : std::string{}));
  }
  void operator()(const ir::AssertScalar& l) {
    if (eval(l.condition) == 0) fail("runtime assert failed: " + l.message);
  }

  // ---- control -----------------------------------------------------------
  void operator()(const ir::EnterSubgraph&) { st_.scopes.push_back(static_cast<std::uint8_t>(Scope::subgraph)); }
  void operator()(const ir::ExitSubgraph&) { exit_scope(Scope::subgraph, "ExitSubgraph"); }
  void operator()(const ir::Conditional& l) {
    bool taken = false;
    if (const ir::BufferArg* b = l.predicate.get_if<ir::BufferArg>()) {
      taken = read_scalar(*host_scalars(backend(), Value{resolve(*b)}).get_if<Tensor>(), "the predicate").truth();
    } else {
      const Value v = value_of(l.predicate);
      if (const std::int64_t* i = v.get_if<std::int64_t>()) taken = *i != 0;
      else if (const bool* x = v.get_if<bool>()) taken = *x;
      else fail("the predicate must be a buffer, an integer or a bool");
    }
    const ir::GraphId graph = taken ? l.true_graph : l.false_graph;
    std::vector<Value> results =
        run_graph(prep_, disp_, g_.subgraphs.at(graph.index), values_of(l.operands), memory_, stream_);
    bind_outputs(l.outputs, results, p_.subgraph(graph).name);
  }
  void operator()(const ir::WhileLoop& l) {
    std::vector<Value> carried = values_of(l.carried);
    const std::vector<Value> additional = values_of(l.additional);
    const Graph& cond = g_.subgraphs.at(l.cond_graph.index);
    const Graph& body = g_.subgraphs.at(l.body_graph.index);
    for (std::size_t iteration = 0;; ++iteration) {
      std::vector<Value> in = carried;
      in.insert(in.end(), additional.begin(), additional.end());
      const std::vector<Value> test = run_graph(prep_, disp_, cond, in, memory_, stream_);
      if (test.size() != 1) fail("the loop condition returned " + std::to_string(test.size()) + " values, not one");
      bool go = false;
      if (test[0].holds<Tensor>())
        go = read_scalar(*host_scalars(backend(), test[0]).get_if<Tensor>(), "the loop condition").truth();
      else if (const std::int64_t* i = test[0].get_if<std::int64_t>()) go = *i != 0;
      else fail("the loop condition returned neither a tensor nor an integer");
      if (!go) break;
      if (iteration >= prep_.options.max_loop_iterations)
        fail("the loop ran " + std::to_string(iteration) + " iterations, the executor's limit " +
             "(ExecutorOptions::max_loop_iterations)");
      std::vector<Value> next = run_graph(prep_, disp_, body, in, memory_, stream_);
      if (next.size() != carried.size())
        fail("the loop body returned " + std::to_string(next.size()) + " values for " +
             std::to_string(carried.size()) + " carried ones");
      carried = std::move(next);
    }
    bind_outputs(l.outputs, carried, "the loop");
  }
  void operator()(const ir::EnterDeviceContext&) { st_.scopes.push_back(static_cast<std::uint8_t>(Scope::device)); }
  void operator()(const ir::ExitDeviceContext&) { exit_scope(Scope::device, "ExitDeviceContext"); }
  // Visited only without a device backend (the CPU runs one stream): scope
  // markers. On a device backend they are stream steps (`stream_step`).
  void operator()(const ir::EnterStreamContext&) { st_.scopes.push_back(static_cast<std::uint8_t>(Scope::stream)); }
  void operator()(const ir::ExitStreamContext&) { exit_scope(Scope::stream, "ExitStreamContext"); }
  void operator()(const ir::GetRawStream&) {}  // the launchers find the current stream themselves

  // ---- misc --------------------------------------------------------------
  void operator()(const ir::Comment&) {}

  template <class K>
  void operator()(const K&) {
    (void)no_executor_handler_for_line_kind<K>{};
  }

 private:
  enum class Scope : std::uint8_t { subgraph, device, stream };

  void exit_scope(Scope kind, const char* what) {
    if (st_.scopes.empty() || st_.scopes.back() != static_cast<std::uint8_t>(kind)) fail(std::string(what) + " closes no matching scope");
    st_.scopes.pop_back();
  }

  [[nodiscard]] const DeviceBackend* backend() const noexcept { return prep_.options.device.get(); }

  // ---- streams (executor_streams.hpp) --------------------------------------
  /// A stream of the plan (0: this frame's base) as the backend numbers it.
  [[nodiscard]] std::uint32_t backend_stream(std::uint32_t planned) const noexcept {
    return planned == 0 ? base_stream_ : planned;
  }
  void stream_check(Result<void> r, const char* what) const {
    if (!r) fail(std::string(what) + ": " + r.error().message);
  }
  void stream_step(const Step& step) {
    const DeviceBackend& b = *backend();
    const std::uint32_t k = backend_stream(step.operand), other = backend_stream(step.old);
    switch (step.kind) {
      case Step::Kind::stream_enter:
        // Fork: k sees everything queued on the current stream so far.
        stream_check(b.record_stream(other), "entering the stream context");
        stream_check(b.wait_stream(k, other), "entering the stream context");
        stream_check(b.use_stream(k), "entering the stream context");
        st_.scopes.push_back(static_cast<std::uint8_t>(Scope::stream));
        stream_ = k;
        break;
      case Step::Kind::stream_exit:
        exit_scope(Scope::stream, "ExitStreamContext");
        stream_check(b.record_stream(k), "leaving the stream context");
        stream_check(b.use_stream(other), "leaving the stream context");
        stream_ = other;
        break;
      case Step::Kind::stream_join:
        stream_check(b.wait_stream(other, k), "joining a side stream");
        break;
      default: break;
    }
  }
  /// After a failure: the thread's work goes to this frame's base again,
  /// and the device drains, as the joins a failed call skipped would have
  /// ordered the memory it gives back (its spare storages, its buffers)
  /// after the side streams' work.
  void reset_stream() noexcept {
    if (backend() == nullptr) return;
    if (stream_ != base_stream_) (void)backend()->use_stream(base_stream_);
    stream_ = base_stream_;
    (void)backend()->synchronize();
  }

  // ---- debug printer (ExecutorOptions::debug; executor_debug.hpp) ----------
  template <class Gather, class Call>
  void debug_around(std::string_view kernel, const Gather& gather, const Call& call) {
    if (!prep_.debug->wraps(kernel)) return call();
    prep_.debug->print("before_launch", kernel, gather());
    call();
    prep_.debug->print("after_launch", kernel, gather());
  }
  /// Every argument of a launch (level 1 saves the pointer ones).
  std::vector<DebugArg> debug_kernel_args(const ir::KernelCall& l) const {
    std::vector<DebugArg> out;
    const ir::KernelDecl& k = p_.kernel(l.kernel);
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      const ir::Arg& a = l.args[i];
      const bool pointer = i < k.signature.size() ? k.signature[i].type.pointer : a.holds<ir::BufferArg>();
      if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) {
        out.push_back(DebugArg{decl(b->buffer).name, Value{resolve(*b)}, pointer});
      } else if (const expr::Expr* e = a.get_if<expr::Expr>()) {
        out.push_back(DebugArg{expr::print_python(*e), Value{eval(*e)}, pointer});
      } else {
        Value v = value_of(a);
        std::string label = "None";
        if (const std::int64_t* n = v.get_if<std::int64_t>()) label = std::to_string(*n);
        else if (const double* d = v.get_if<double>()) label = number_text(*d);
        else if (const bool* x = v.get_if<bool>()) label = *x ? "True" : "False";
        out.push_back(DebugArg{std::move(label), std::move(v), pointer});
      }
    }
    return out;
  }
  /// The buffers an extern call passes: arguments, keyword arguments, outputs.
  std::vector<DebugArg> debug_extern_args(const std::vector<ir::Arg>& args, const std::vector<ir::NamedArg>& kwargs,
                                          std::span<const ir::BufferArg> outs) const {
    std::vector<DebugArg> out;
    auto add = [&](const ir::Arg& a) {
      if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) out.push_back(DebugArg{decl(b->buffer).name, Value{resolve(*b)}, true});
    };
    for (const ir::Arg& a : args) add(a);
    for (const ir::NamedArg& k : kwargs) add(k.value);
    for (const ir::BufferArg& b : outs) out.push_back(DebugArg{decl(b.buffer).name, Value{resolve(b)}, true});
    return out;
  }

  [[nodiscard]] const ir::BufferDecl& decl(ir::BufferId b) const {
    if (!p_.contains(b)) [[unlikely]]
      not_a_buffer(b);
    return p_.buffers[b.index];
  }
  [[noreturn]] [[gnu::noinline]] void not_a_buffer(ir::BufferId b) const {
    fail("buffer #" + std::to_string(b.index) + " is not in the buffer table");
  }
  [[nodiscard]] std::string name(ir::BufferId b) const { return ir::quote_for_diagnostic(decl(b).name); }
  /// `b`'s compact record (the memory lines read it, not the declaration).
  [[nodiscard]] const BufferPlan& buffer_plan(ir::BufferId b) const {
    if (b.index >= g_.buffer_plans.size()) [[unlikely]]
      not_a_buffer(b);
    return g_.buffer_plans[b.index];
  }

  void define(ir::BufferId b, Tensor t) {
    Value v;
    v.value = std::move(t);
    define(b, std::move(v));
  }
  void define(ir::BufferId b, Value v) {
    (void)decl(b);
    if (const Tensor* t = v.get_if<Tensor>()) {
      assign(slot_tensor(b), *t);
    } else {
      st_.buffers[b.index] = std::move(v);
      st_.static_dims[b.index] = 0;
    }
    st_.live[b.index] = 1;
  }
  /// `from` copied into `to`, reusing `to`'s vectors' memory.
  /// `from` into `to` with a borrowed storage: a pointer that owns
  /// nothing (no reference count to touch, twice per input per call). Only
  /// for the caller's inputs, which outlive the call; `Executor::run` gives
  /// an output that still borrows its input's owning pointer back
  /// (`own_borrowed`).
  static void assign_borrowed(Tensor& to, const Tensor& from) {
    to.storage = std::shared_ptr<Storage>(std::shared_ptr<Storage>{}, from.storage.get());
    to.dtype = from.dtype;
    copy_dims(to.sizes, from.sizes);
    copy_dims(to.strides, from.strides);
    to.offset = from.offset;
  }
  /// The input binding of `Inputs`: the top level's borrow (SpanInputs).
  template <class Inputs>
  static void bind_tensor(Tensor& to, const Tensor& from) {
    if constexpr (Inputs::borrows) assign_borrowed(to, from);
    else assign(to, from);
  }
  /// `bind_tensor` for a `to` whose sizes and strides are `from`'s already.
  template <class Inputs>
  static void bind_storage(Tensor& to, const Tensor& from) {
    if constexpr (Inputs::borrows) to.storage = std::shared_ptr<Storage>(std::shared_ptr<Storage>{}, from.storage.get());
    else to.storage = from.storage;
    to.dtype = from.dtype;
    to.offset = from.offset;
  }
  static void assign(Tensor& to, const Tensor& from) {
    if (&to == &from) return;
    to.storage = from.storage;
    to.dtype = from.dtype;
    copy_dims(to.sizes, from.sizes);
    copy_dims(to.strides, from.strides);
    to.offset = from.offset;
  }
  /// `from` into `to`, element by element when the ranks agree (the
  /// recycled state's case: a few integers, cheaper than a library copy).
  static void copy_dims(std::vector<std::int64_t>& to, const std::vector<std::int64_t>& from) {
    if (to.size() != from.size()) {
      to.assign(from.begin(), from.end());
      return;
    }
    for (std::size_t i = 0; i < from.size(); ++i) to[i] = from[i];
  }
  /// The tensor a definition of `b` is written into (its previous layout's
  /// vectors reused).
  Tensor& slot_tensor(ir::BufferId b) {
    Tensor& t = own_tensor(b);
    st_.static_dims[b.index] = 0;  // the caller writes other dimensions
    return t;
  }
  /// `b`'s own tensor as it is (its dimensions, and `static_dims`, kept):
  /// for `lay_out`, which says what it writes.
  Tensor& own_tensor(ir::BufferId b) {
    (void)buffer_plan(b);
    Value& v = st_.buffers[b.index];
    if (Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) [[likely]]
      return *t;
    st_.static_dims[b.index] = 0;
    return v.value.template emplace<Tensor>();
  }
  void release(ir::BufferId b) {
    (void)decl(b);
    if (!st_.live[b.index]) fail(name(b) + " is freed but is not live");
    // The storage goes (its memory back to the allocator); the tensor's
    // vectors stay for the next definition.
    if (Tensor* t = boost::variant2::get_if<Tensor>(&st_.buffers[b.index].value)) {
      keep_or_drop(std::move(t->storage));
    } else {
      st_.buffers[b.index] = Value{};
      st_.static_dims[b.index] = 0;
    }
    st_.live[b.index] = 0;
  }
  /// `Free` (or an unreused `FreeIfNotReused`) of buffer `b` as a step: a
  /// live tensor drops its storage (a borrowed input's is a pointer clear:
  /// no reference count). False when `release` must run instead, to name
  /// what is wrong.
  bool free_step(std::uint32_t b) {
    if (!st_.live[b]) [[unlikely]]
      return false;
    Tensor* t = boost::variant2::get_if<Tensor>(&st_.buffers[b].value);
    if (t == nullptr) [[unlikely]]
      return false;
    keep_or_drop(std::move(t->storage));
    st_.live[b] = 0;
    return true;
  }
  /// `Allocate` of a static device buffer (`Step::Kind::allocate`) whose
  /// tensor holds its static dimensions already (`static_dims`): only the
  /// storage, dtype and offset to write, the storage a spare of its size or
  /// the backend's. False (nothing done) when `allocate_in_place` must run.
  bool allocate_step(std::uint32_t b) {
    Tensor* t = boost::variant2::get_if<Tensor>(&st_.buffers[b].value);
    if (t == nullptr || !st_.static_dims[b] || memory_ != nullptr) [[unlikely]]
      return false;
    const BufferPlan& plan = g_.buffer_plans[b];
    t->storage.reset();
    st_.live[b] = 0;
    t->dtype = plan.dtype;
    t->offset = plan.offset;
    if (std::shared_ptr<Storage> kept = take_spare(plan.device.type, plan.bytes)) {
      t->storage = std::move(kept);
    } else {
      Result<std::shared_ptr<Storage>> storage = backend()->allocate(plan.device, plan.bytes);
      if (!storage) [[unlikely]]
        fail("cannot allocate " + name(ir::BufferId{b}) + ": " + storage.error().message);
      t->storage = *std::move(storage);
    }
    st_.live[b] = 1;
    return true;
  }
  /// `Reuse` with `delete_old` of a static buffer as a step: the old
  /// buffer's storage moves to the new one when it holds the new layout's
  /// measured bytes and the new buffer's tensor holds its static dimensions.
  /// False (nothing done) when the visit must run, to check and name.
  bool reuse_step(std::uint32_t old_buffer, std::uint32_t new_buffer) {
    if (!st_.live[old_buffer]) [[unlikely]]
      return false;
    Tensor* old = boost::variant2::get_if<Tensor>(&st_.buffers[old_buffer].value);
    Tensor* t = boost::variant2::get_if<Tensor>(&st_.buffers[new_buffer].value);
    if (old == nullptr || t == nullptr || !st_.static_dims[new_buffer]) [[unlikely]]
      return false;
    const BufferPlan& plan = g_.buffer_plans[new_buffer];
    if (!old->storage || plan.bytes > old->storage->nbytes) [[unlikely]]
      return false;
    std::shared_ptr<Storage> storage = std::move(old->storage);
    st_.live[old_buffer] = 0;
    t->storage = std::move(storage);
    t->dtype = plan.dtype;
    t->offset = plan.offset;
    st_.live[new_buffer] = 1;
    return true;
  }
  /// A freed storage: kept for this call's next device Allocate of its size
  /// when this frame held the only reference (no view, alias or extern
  /// result still uses it) and no graph-mode memory serves the frame; the
  /// backend's one stream orders its next user after every earlier one, as
  /// the caching allocator's reuse is ordered.
  void keep_or_drop(std::shared_ptr<Storage>&& storage) {
    if (memory_ == nullptr && storage && storage.use_count() == 1 && storage->device.type != ir::DeviceType::cpu &&
        st_.spare_count < FrameState::max_spare) {
      FrameState::Spare& s = st_.spare[st_.spare_count++];
      s.bytes = storage->nbytes;
      s.device = storage->device.type;
      s.storage = std::move(storage);
      return;
    }
    storage.reset();
  }
  /// A kept storage of exactly `bytes` on `device`'s type, or null.
  std::shared_ptr<Storage> take_spare(ir::DeviceType device, std::int64_t bytes) {
    for (std::size_t i = st_.spare_count; i-- > 0;) {
      FrameState::Spare& s = st_.spare[i];
      if (s.bytes != bytes || s.device != device) continue;
      std::shared_ptr<Storage> taken = std::move(s.storage);
      if (FrameState::Spare& last = st_.spare[--st_.spare_count]; &last != &s) s = std::move(last);
      return taken;
    }
    return nullptr;
  }
  [[nodiscard]] const Value& value(ir::BufferId b) const {
    (void)decl(b);
    if (!st_.live[b.index]) fail(name(b) + " is used but is not live (never defined, or already freed)");
    return st_.buffers[b.index];
  }
  /// `b`'s tensor when it is live and a tensor, else null (`outputs`
  /// then takes the general path, which names what is wrong).
  [[nodiscard]] Tensor* movable_output(ir::BufferId b) {
    if (!p_.contains(b) || !st_.live[b.index]) return nullptr;
    return boost::variant2::get_if<Tensor>(&st_.buffers[b.index].value);
  }
  /// The checks in line, their messages out of line (`tensor_of_failed`):
  /// small enough to inline into the memory lines and argument lists that
  /// call it for every buffer they touch.
  [[nodiscard]] const Tensor& tensor(ir::BufferId b) const {
    if (p_.contains(b) && st_.live[b.index]) [[likely]]
      if (const Tensor* t = boost::variant2::get_if<Tensor>(&st_.buffers[b.index].value)) [[likely]]
        return *t;
    tensor_of_failed(b);
  }
  [[noreturn]] [[gnu::noinline]] void tensor_of_failed(ir::BufferId b) const {
    (void)value(b);  // not a buffer, or not live: fails, naming which
    fail(name(b) + " holds a multi-output result, not a tensor");
  }
  /// `a` written into `t` (a view evaluated into `t`'s vectors).
  void resolve_into(Tensor& t, const ir::BufferArg& a) const {
    const Tensor& base = tensor(a.buffer);
    if (!a.view) return assign(t, base);
    t.storage = base.storage;
    t.dtype = base.dtype;
    t.sizes.resize(a.view->sizes.size());
    t.strides.resize(a.view->strides.size());
    for (std::size_t i = 0; i < t.sizes.size(); ++i) t.sizes[i] = eval(a.view->sizes[i]);
    for (std::size_t i = 0; i < t.strides.size(); ++i) t.strides[i] = eval(a.view->strides[i]);
    t.offset = eval(a.view->offset);
    if (Result<void> r = fits(t); !r) {
      t.storage.reset();
      fail("a view of " + name(a.buffer) + ": " + r.error().message);
    }
  }
  /// Whether `t`'s layout stays inside its storage (`as_strided`'s check).
  [[nodiscard]] static Result<void> fits(const Tensor& t) {
    Result<std::int64_t> bytes = bytes_spanned(t.sizes, t.strides, t.offset, t.dtype);
    if (!bytes) return bytes.error();
    const std::int64_t available = t.storage ? t.storage->nbytes : 0;
    if (*bytes > available)
      return Diagnostic{"the view reaches " + std::to_string(*bytes) + " bytes but its storage has " +
                        std::to_string(available)};
    return {};
  }
  [[nodiscard]] Tensor resolve(const ir::BufferArg& a) const {
    const Tensor& base = tensor(a.buffer);
    if (!a.view) return base;
    std::vector<std::int64_t> sizes, strides;
    for (expr::Expr e : a.view->sizes) sizes.push_back(eval(e));
    for (expr::Expr e : a.view->strides) strides.push_back(eval(e));
    Result<Tensor> t = as_strided(base, std::move(sizes), std::move(strides), eval(a.view->offset));
    if (!t) fail("a view of " + name(a.buffer) + ": " + t.error().message);
    return *std::move(t);
  }

  [[nodiscard]] EvaluatedLayout layout(ir::BufferId b) const {
    const ir::Layout& l = decl(b).layout;
    EvaluatedLayout out;
    out.sizes.reserve(l.sizes.size());
    out.strides.reserve(l.strides.size());
    for (expr::Expr e : l.sizes) out.sizes.push_back(eval(e));
    for (expr::Expr e : l.strides) out.strides.push_back(eval(e));
    out.offset = eval(l.storage_offset);
    return out;
  }
  /// `b`'s layout evaluated into `t`, `b`'s own tensor (`own_tensor`). A
  /// static layout is copied only when the tensor does not hold it yet
  /// (`FrameState::static_dims`): a recycled state's tensor keeps it from
  /// the last call, so an Allocate, Reuse or Reinterpret then reads and
  /// writes none of the dimension vectors.
  void lay_out(ir::BufferId b, Tensor& t) {
    const BufferPlan& plan = buffer_plan(b);
    std::uint8_t& in_place = st_.static_dims[b.index];
    if (plan.known) [[likely]] {
      if (!in_place) {
        const StaticLayout& known = g_.layouts[b.index];
        copy_dims(t.sizes, known.sizes);
        copy_dims(t.strides, known.strides);
        in_place = 1;
      }
      t.offset = plan.offset;
      return;
    }
    in_place = 0;
    const ir::Layout& l = decl(b).layout;
    t.sizes.resize(l.sizes.size());
    t.strides.resize(l.strides.size());
    for (std::size_t i = 0; i < t.sizes.size(); ++i) t.sizes[i] = eval(l.sizes[i]);
    for (std::size_t i = 0; i < t.strides.size(); ++i) t.strides[i] = eval(l.strides[i]);
    t.offset = eval(l.storage_offset);
  }
  /// `Allocate`: the layout evaluated into the buffer's own tensor, the
  /// storage from the backend (or graph mode's memory, or the host).
  void allocate_in_place(ir::BufferId b) {
    const BufferPlan& plan = buffer_plan(b);
    Tensor& t = own_tensor(b);
    t.storage.reset();
    st_.live[b.index] = 0;
    t.dtype = plan.dtype;
    lay_out(b, t);
    try {
      if (plan.device.type == ir::DeviceType::cpu) {
        t.storage = allocate_cpu(t.sizes, t.strides, t.offset, t.dtype).storage;
      } else {
        // on_backend: the backend's device type, compared when prepared.
        if (!plan.on_backend) [[unlikely]]
          fail("no backend for " + ir::to_string(plan.device) + " (ExecutorOptions::device)");
        Result<std::int64_t> bytes =
            plan.known ? Result<std::int64_t>(plan.bytes) : bytes_spanned(t.sizes, t.strides, t.offset, t.dtype);
        if (!bytes) fail(bytes.error().message);
        if (memory_ != nullptr) {
          t.storage = memory_->allocate(*backend(), plan.device, *bytes);
        } else if (std::shared_ptr<Storage> kept = take_spare(plan.device.type, *bytes)) {
          t.storage = std::move(kept);
        } else {
          Result<std::shared_ptr<Storage>> storage = backend()->allocate(plan.device, *bytes);
          if (!storage) fail(storage.error().message);
          t.storage = *std::move(storage);
        }
      }
    } catch (wrapir::detail::Failure& f) {
      fail("cannot allocate " + name(b) + ": " + f.diagnostic.message);
    }
    st_.live[b.index] = 1;
  }
  [[nodiscard]] Tensor allocate(ir::BufferId b) const {
    EvaluatedLayout lay = layout(b);
    try {
      return allocate_tensor(decl(b).layout.device, std::move(lay.sizes), std::move(lay.strides), lay.offset,
                             decl(b).layout.dtype);
    } catch (wrapir::detail::Failure& f) {
      fail("cannot allocate " + name(b) + ": " + f.diagnostic.message);
    }
  }

  /// A new tensor on `device`: from graph mode's memory when the frame has
  /// one and the device is not the host, else as `allocate_on`.
  [[nodiscard]] Tensor allocate_tensor(const ir::Device& device, std::vector<std::int64_t> sizes,
                                       std::vector<std::int64_t> strides, std::int64_t offset, ir::DType dtype) const {
    if (memory_ == nullptr || device.type == ir::DeviceType::cpu)
      return allocate_on(backend(), device, std::move(sizes), std::move(strides), offset, dtype);
    if (backend() == nullptr || backend()->device_type() != device.type)
      fail("no backend for " + ir::to_string(device) + " (ExecutorOptions::device)");
    Result<std::int64_t> bytes = bytes_spanned(sizes, strides, offset, dtype);
    if (!bytes) fail(bytes.error().message);
    return Tensor{memory_->allocate(*backend(), device, *bytes), dtype, std::move(sizes), std::move(strides), offset};
  }

  /// Sizes must match; strides too, except where the size is 0 or 1 (any
  /// stride addresses the same elements), as torch's assert_size_stride.
  template <class Who>
  static void check_layout(const Tensor& t, std::span<const std::int64_t> sizes, std::span<const std::int64_t> strides,
                           const Who& who_of) {
    auto who = [&] {
      if constexpr (std::is_invocable_v<const Who&>) return std::string(who_of());
      else return std::string(who_of);
    };
    auto text = [](std::span<const std::int64_t> v) {
      std::string s = "[";
      for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
      return s + "]";
    };
    if (t.sizes.size() != sizes.size() || !std::equal(sizes.begin(), sizes.end(), t.sizes.begin()))
      fail(who() + " has sizes " + text(t.sizes) + ", the program expects " + text(sizes));
    bool empty = false;
    for (std::int64_t s : sizes) empty = empty || s == 0;
    if (empty) return;
    for (std::size_t i = 0; i < strides.size() && i < t.strides.size(); ++i)
      if (sizes[i] > 1 && t.strides[i] != strides[i])
        fail(who() + " has strides " + text(t.strides) + ", the program expects " + text(strides));
  }

  void set_symbol(expr::Expr s, std::int64_t v) {
    const auto it = g_.slot_of.find(s);
    if (it == g_.slot_of.end()) fail("symbol " + ir::quote_for_diagnostic(s.name()) + " is not declared");
    if (!expr::satisfies(s.assumption(), v))
      fail("symbol " + ir::quote_for_diagnostic(s.name()) + " would be " + std::to_string(v) + ", which breaks its assumption (" +
           std::string(expr::assumption_name(s.assumption())) + ")");
    st_.values[it->second] = v;
    st_.bound[it->second] = 1;
  }

  /// An integer is read in line (most layouts and views of a static
  /// program); anything else goes to `eval_symbolic`.
  [[nodiscard]] std::int64_t eval(expr::Expr e) const {
    if (e && e.is_integer()) [[likely]]
      return e.value();
    return eval_symbolic(e);
  }
  [[nodiscard]] [[gnu::noinline]] std::int64_t eval_symbolic(expr::Expr e) const {
    if (!e) fail("an expression is null");
    if (e.is_integer()) return e.value();
    const auto it = g_.compiled.find(e);
    if (it == g_.compiled.end()) return eval_tree(e);
    const Evaluable& ev = it->second;
    if (ev.how == Evaluable::How::slot) {
      if (!st_.bound[ev.slot]) unbound(ev.slot);
      return st_.values[ev.slot];
    }
    if (ev.how == Evaluable::How::tree) return eval_tree(e);
    constexpr std::size_t small = 16;
    std::array<std::int64_t, small> local{};
    std::vector<std::int64_t> large;
    std::int64_t* gathered = local.data();
    if (ev.slots.size() > small) {
      large.resize(ev.slots.size());
      gathered = large.data();
    }
    for (std::size_t i = 0; i < ev.slots.size(); ++i) {
      if (!st_.bound[ev.slots[i]]) unbound(ev.slots[i]);
      gathered[i] = st_.values[ev.slots[i]];
    }
    const std::span<const std::int64_t> values(gathered, ev.slots.size());
    std::int64_t out = 0;
    if (ev.code->try_eval(values, out)) [[likely]]
      return out;
    Result<std::int64_t> r = ev.code->eval(values);
    if (!r) fail(r.error().message);
    return *r;
  }
  [[noreturn]] void unbound(std::uint32_t slot) const {
    fail("symbol " + ir::quote_for_diagnostic(g_.slot_symbols[slot].name()) + " is used before it is defined");
  }
  [[nodiscard]] std::int64_t eval_tree(expr::Expr e) const {
    expr::Bindings b;
    for (std::size_t i = 0; i < g_.slot_symbols.size(); ++i)
      if (st_.bound[i]) b.set(g_.slot_symbols[i], st_.values[i]);
    Result<std::int64_t> r = expr::eval(e, b);
    if (!r) fail(r.error().message);
    return *r;
  }

  /// Views made for a call's arguments hold their storage: dropped after
  /// the call, so that a Free later releases the memory.
  void drop_views(const std::vector<ir::Arg>& args) {
    for (std::size_t i = 0; i < args.size(); ++i)
      if (const ir::BufferArg* b = args[i].get_if<ir::BufferArg>(); b && b->view) st_.arg_tensors[i].storage.reset();
  }

  /// The tensor a buffer argument passes: the buffer's own (no copy) or,
  /// for a view, the view made in argument `i`'s scratch.
  const Tensor& argument_tensor(std::size_t i, const ir::BufferArg& b) {
    if (!b.view) return tensor(b.buffer);
    resolve_into(st_.arg_tensors[i], b);
    return st_.arg_tensors[i];
  }

  /// A kernel call whose arguments were resolved when prepared: packs them
  /// without lookups and calls the kernel. False (nothing done) when the
  /// general path must run instead, to give its diagnostic.
  bool launch_fast(ir::KernelId kernel, const FastLaunch& fast) {
    WRAPIR_PHASE_MARK(line_dispatch);
    const CpuKernelFn& fn = g_.kernels[kernel.index];
    if (!fn) return false;
    const std::size_t n = fast.args.size();
    for (std::size_t i = 0; i < n; ++i) {
      const FastArg& a = fast.args[i];
      ArgSlot& slot = st_.slots[i];  // st_.params[i] points at it (the frame's constructor)
      switch (a.kind) {
        case FastArg::Kind::buffer: {
          if (!st_.live[a.index]) [[unlikely]]
            return false;
          const Tensor* t = st_.buffers[a.index].get_if<Tensor>();
          if (t == nullptr) [[unlikely]]
            return false;
          store(slot, t->data());
          break;
        }
        case FastArg::Kind::constant: slot = a.value; break;
        case FastArg::Kind::slot_i64:
          if (!st_.bound[a.index]) [[unlikely]]
            return false;
          store(slot, st_.values[a.index]);
          break;
        case FastArg::Kind::slot_i32: {
          if (!st_.bound[a.index]) [[unlikely]]
            return false;
          const std::int64_t v = st_.values[a.index];
          if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) [[unlikely]]
            return false;
          store(slot, static_cast<std::int32_t>(v));
          break;
        }
        case FastArg::Kind::expression:
          store_integer(slot, eval(a.expression), a.dtype, [i] { return "argument " + std::to_string(i); });
          break;
      }
    }
    const std::size_t count = pack_call_grid(fast, n);
    WRAPIR_PHASE_MARK(pack);
    if (Result<void> r = fn(std::span<void* const>(st_.params.data(), count)); !r)
      fail("kernel " + ir::quote_for_diagnostic(p_.kernel(kernel).name) + ": " + r.error().message);
    return true;
  }

  /// Packs the grid a PTX or cubin kernel's call gives after its `n`
  /// arguments (`launches_over_call_grid`); the count to pass.
  std::size_t pack_call_grid(const FastLaunch& launch, std::size_t n) {
    if (!launch.grid[0]) [[likely]]
      return n;
    for (std::size_t d = 0; d < call_grid_arguments; ++d) {
      ArgSlot& slot = st_.slots[n + d];
      st_.params[n + d] = &slot;
      store(slot, eval(launch.grid[d]));
    }
    return n + call_grid_arguments;
  }

  /// Packs argument `i` as a parameter of `type` into the scratch slots;
  /// returns the tensor of a buffer argument (else null). Messages are
  /// built only on failure: this runs for every argument of every launch.
  const Tensor* pack(std::size_t i, const ir::Arg& a, ir::ParamType type) {
    auto what = [i] { return "argument " + std::to_string(i); };
    ArgSlot& slot = st_.slots[i];
    st_.params[i] = &slot;
    if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) {
      if (!type.pointer) fail(what() + " is a buffer but the parameter is a scalar " + ir::to_string(type));
      const Tensor& t = argument_tensor(i, *b);
      if (t.dtype != type.dtype) [[unlikely]]
        fail(what() + " is " + name(b->buffer) + " of " + std::string(ir::name(t.dtype)) +
             " but the parameter is " + ir::to_string(type));
      store(slot, t.data());
      return &t;
    }
    if (type.pointer) {
      if (a.holds<ir::None>()) {
        store(slot, static_cast<void*>(nullptr));
        return nullptr;
      }
      fail(what() + " is a " + std::string(ir::arg_kind_name(a)) + " but the parameter is a pointer " +
           ir::to_string(type));
    }
    if (const expr::Expr* e = a.get_if<expr::Expr>()) {
      const std::int64_t v = eval(*e);
      if (type.dtype == ir::DType::int64) [[likely]] store(slot, v);
      else store_integer(slot, v, type.dtype, what);
    } else if (const std::int64_t* n = a.get_if<std::int64_t>()) {
      store_integer(slot, *n, type.dtype, what);
    } else if (const bool* x = a.get_if<bool>()) {
      store_integer(slot, *x ? 1 : 0, type.dtype, what);
    } else if (const double* d = a.get_if<double>()) {
      store_float(slot, *d, type.dtype);
    } else {
      fail(what() + " is a " + std::string(ir::arg_kind_name(a)) + ", which a CPU kernel cannot take");
    }
    return nullptr;
  }

  [[nodiscard]] Value value_of(const ir::Arg& a) const {
    if (a.holds<ir::None>()) return Value{};
    if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) return Value{resolve(*b)};
    if (const expr::Expr* e = a.get_if<expr::Expr>()) return Value{eval(*e)};
    if (const std::int64_t* n = a.get_if<std::int64_t>()) return Value{*n};
    if (const double* d = a.get_if<double>()) return Value{*d};
    if (const bool* x = a.get_if<bool>()) return Value{*x};
    if (const std::string* s = a.get_if<std::string>()) return Value{*s};
    if (const ir::Device* dev = a.get_if<ir::Device>()) return Value{*dev};
    if (const ir::DType* dt = a.get_if<ir::DType>()) return Value{*dt};
    ValueList list;
    for (const ir::Arg& x : a.get_if<ir::ArgList>()->items) list.items.push_back(value_of(x));
    return Value{std::move(list)};
  }
  [[nodiscard]] std::vector<Value> values_of(const std::vector<ir::Arg>& args) const {
    std::vector<Value> out;
    out.reserve(args.size());
    for (const ir::Arg& a : args) out.push_back(value_of(a));
    return out;
  }
  [[nodiscard]] std::vector<KeywordArg> named_values_of(const std::vector<ir::NamedArg>& args) const {
    std::vector<KeywordArg> out;
    out.reserve(args.size());
    for (const ir::NamedArg& a : args) out.push_back(KeywordArg{a.name.text, value_of(a.value)});
    return out;
  }

  /// The frame's kept argument lists for this extern line, assigned from
  /// `args`, `kwargs` and the output buffers `outs` (name, buffer).
  /// How an extern line's kept lists hold their tensors' storages:
  /// `borrowed` (a pointer that owns nothing) only for a line whose result
  /// is discarded (ExternKernelOut): the frame's buffers hold the storages
  /// for the whole call and the lists are dropped right after it.
  enum class Ownership : std::uint8_t { shared, borrowed };
  ExternScratch& extern_arguments(const std::vector<ir::Arg>& args, const std::vector<ir::NamedArg>& kwargs,
                                  std::span<const std::pair<std::string_view, const ir::BufferArg*>> outs,
                                  Ownership ownership = Ownership::shared) {
    if (st_.externs.size() < p_.body.size()) st_.externs.resize(p_.body.size());
    ExternScratch& s = st_.externs[line_];
    if (s.patched && patch_extern(s, ownership)) [[likely]]
      return s;
    s.patched = false;
    if (!s.built || s.args.size() != args.size() || s.kwargs.size() != kwargs.size() + outs.size()) {
      s.args.assign(args.size(), Value{});
      s.kwargs.clear();
      s.kwargs.reserve(kwargs.size() + outs.size());
      for (const ir::NamedArg& k : kwargs) s.kwargs.push_back(KeywordArg{k.name.text, Value{}});
      for (const auto& o : outs) s.kwargs.push_back(KeywordArg{std::string(o.first), Value{}});
      s.dims.assign(args.size() + kwargs.size() + outs.size(), ExternScratch::Dims::unknown);
      s.built = true;
    }
    const std::vector<StaticLayout>& views = g_.extern_views[line_];
    const StaticLayout* view = views.empty() ? nullptr : views.data();  // by position, when any is static
    std::size_t at = 0;
    for (std::size_t i = 0; i < args.size(); ++i, ++at)
      value_into(s.args[i], args[i], s.dims[at], view, at, ownership);
    for (std::size_t i = 0; i < kwargs.size(); ++i, ++at)
      value_into(s.kwargs[i].value, kwargs[i].value, s.dims[at], view, at, ownership);
    for (std::size_t i = 0; i < outs.size(); ++i, ++at) {
      Value& v = s.kwargs[kwargs.size() + i].value;
      Tensor* t = boost::variant2::get_if<Tensor>(&v.value);
      if (t == nullptr) {
        t = &v.value.template emplace<Tensor>();
        s.dims[at] = ExternScratch::Dims::unknown;
      }
      argument_into(*t, *outs[i].second, s.dims[at], view != nullptr ? &view[at] : nullptr, ownership);
    }
    plan_patches(s, args, kwargs, outs, view);
    return s;
  }
  /// Whether an argument is the same value on every call (its kept value
  /// then stays as the first call wrote it).
  [[nodiscard]] static bool constant_argument(const ir::Arg& a) {
    if (const expr::Expr* e = a.get_if<expr::Expr>()) return *e && e->is_integer();
    return a.holds<ir::None>() || a.holds<std::int64_t>() || a.holds<double>() || a.holds<bool>() ||
           a.holds<std::string>() || a.holds<ir::Device>() || a.holds<ir::DType>();
  }
  /// The patch records of a line's kept lists just built (`ExternScratch::Patch`),
  /// when every position qualifies; else the next call takes the general path again.
  void plan_patches(ExternScratch& s, const std::vector<ir::Arg>& args, const std::vector<ir::NamedArg>& kwargs,
                    std::span<const std::pair<std::string_view, const ir::BufferArg*>> outs, const StaticLayout* views) {
    using Dims = ExternScratch::Dims;
    s.patches.clear();
    std::size_t at = 0;
    auto add = [&](Value& v, const ir::BufferArg& b) {
      Tensor* t = boost::variant2::get_if<Tensor>(&v.value);
      if (t == nullptr) return false;
      if (s.dims[at] == Dims::base_static && !b.view) {
        s.patches.push_back(ExternScratch::Patch{t, nullptr, b.buffer.index, ir::DType::float32});
        return true;
      }
      if (s.dims[at] == Dims::view_static && b.view && views != nullptr && views[at].known) {
        s.patches.push_back(ExternScratch::Patch{t, &views[at], b.buffer.index, buffer_plan(b.buffer).dtype});
        return true;
      }
      return false;
    };
    auto position = [&](Value& v, const ir::Arg& a) {
      const ir::BufferArg* b = a.get_if<ir::BufferArg>();
      return b != nullptr ? add(v, *b) : constant_argument(a);
    };
    for (std::size_t i = 0; i < args.size(); ++i, ++at)
      if (!position(s.args[i], args[i])) return;
    for (std::size_t i = 0; i < kwargs.size(); ++i, ++at)
      if (!position(s.kwargs[i].value, kwargs[i].value)) return;
    for (std::size_t i = 0; i < outs.size(); ++i, ++at)
      if (!add(s.kwargs[kwargs.size() + i].value, *outs[i].second)) return;
    s.patched = true;
  }
  /// A later call's lists from the patch records: each tensor takes its
  /// buffer's storage (shared or borrowed), dtype and offset. False (some
  /// written, which the general path then rewrites) when a buffer is not
  /// live, not a tensor, no longer holds its static dimensions or a view
  /// would reach past its storage: the general path checks and names.
  bool patch_extern(ExternScratch& s, Ownership ownership) {
    for (const ExternScratch::Patch& p : s.patches) {
      if (!st_.live[p.buffer]) [[unlikely]]
        return false;
      const Tensor* base = boost::variant2::get_if<Tensor>(&st_.buffers[p.buffer].value);
      if (base == nullptr) [[unlikely]]
        return false;
      Tensor& t = *p.tensor;
      if (p.view == nullptr) {
        if (!st_.static_dims[p.buffer]) [[unlikely]]
          return false;
        t.offset = base->offset;
      } else {
        if (base->dtype != p.view_dtype || !base->storage || p.view->bytes > base->storage->nbytes) [[unlikely]]
          return false;
        t.offset = p.view->offset;
      }
      if (ownership == Ownership::borrowed) t.storage = std::shared_ptr<Storage>(std::shared_ptr<Storage>{}, base->storage.get());
      else t.storage = base->storage;
      t.dtype = base->dtype;
    }
    return true;
  }
  /// `value_into` for position `at` of an extern line's kept lists: a
  /// tensor copies only what changed (`argument_into`).
  void value_into(Value& to, const ir::Arg& a, ExternScratch::Dims& dims, const StaticLayout* views, std::size_t at,
                  Ownership ownership) {
    const ir::BufferArg* b = a.get_if<ir::BufferArg>();
    if (b == nullptr) return value_into(to, a);
    Tensor* t = boost::variant2::get_if<Tensor>(&to.value);
    if (t == nullptr) {
      t = &to.value.template emplace<Tensor>();
      dims = ExternScratch::Dims::unknown;
    }
    argument_into(*t, *b, dims, views != nullptr ? &views[at] : nullptr, ownership);
  }
  /// `resolve_into` for a kept tensor that remembers what its sizes and
  /// strides hold (`dims`): a buffer whose tensor holds its static layout
  /// (`FrameState::static_dims`), or a view measured when prepared
  /// (`view`, known), is not copied again; only the storage, dtype and
  /// offset are. Anything else is `resolve_into`, which checks and names.
  /// `ownership`: whether the kept tensor shares or borrows the storage on
  /// these shortcuts (the general path shares).
  void argument_into(Tensor& t, const ir::BufferArg& a, ExternScratch::Dims& dims, const StaticLayout* view,
                     Ownership ownership) {
    using Dims = ExternScratch::Dims;
    auto take_storage = [ownership](Tensor& to, const std::shared_ptr<Storage>& from) {
      if (ownership == Ownership::borrowed) to.storage = std::shared_ptr<Storage>(std::shared_ptr<Storage>{}, from.get());
      else to.storage = from;
    };
    if (!a.view) {
      const Tensor& base = tensor(a.buffer);
      const bool base_static = st_.static_dims[a.buffer.index] != 0;
      if (base_static && dims == Dims::base_static) [[likely]] {
        take_storage(t, base.storage);
        t.dtype = base.dtype;
        t.offset = base.offset;
        return;
      }
      dims = Dims::unknown;
      assign(t, base);
      if (base_static) dims = Dims::base_static;
      return;
    }
    if (view != nullptr && view->known) {
      const Tensor& base = tensor(a.buffer);
      if (base.dtype == buffer_plan(a.buffer).dtype && base.storage && view->bytes <= base.storage->nbytes) [[likely]] {
        // Measured in the base's declared dtype when prepared: it fits.
        take_storage(t, base.storage);
        t.dtype = base.dtype;
        if (dims != Dims::view_static) {
          dims = Dims::unknown;
          copy_dims(t.sizes, view->sizes);
          copy_dims(t.strides, view->strides);
          dims = Dims::view_static;
        }
        t.offset = view->offset;
        return;
      }
    }
    dims = Dims::unknown;
    resolve_into(t, a);
  }
  /// `a`'s value written into `to`; a tensor reuses `to`'s tensor's vectors.
  void value_into(Value& to, const ir::Arg& a) const {
    if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) {
      Tensor* t = boost::variant2::get_if<Tensor>(&to.value);
      if (t == nullptr) t = &to.value.template emplace<Tensor>();
      resolve_into(*t, *b);
      return;
    }
    if (const expr::Expr* e = a.get_if<expr::Expr>()) {
      to.value = eval(*e);
      return;
    }
    if (const std::int64_t* n = a.get_if<std::int64_t>()) {
      to.value = *n;
      return;
    }
    to = value_of(a);
  }
  Value call_extern(const ir::OpName& op_name, ExternScratch& s) {
    Value result = call_extern(op_name, std::span<const Value>(s.args), std::span<const KeywordArg>(s.kwargs));
    FrameState::drop_storages(s);  // a Free later releases the memory
    return result;
  }
  Value call_extern(const ir::OpName& op_name, std::span<const Value> args, std::span<const KeywordArg> kwargs) {
    const std::string& op = op_name.text;
    const ExternFn* fn = g_.line_externs.at(line_);
    if (fn == nullptr) fail("extern " + ir::quote_for_diagnostic(op) + " was not resolved");
    ExternCall call{op, args, kwargs};
    Result<Value> r = (*fn)(call);
    if (!r) fail("extern " + ir::quote_for_diagnostic(op) + ": " + r.error().message);
    return *std::move(r);
  }

  /// Binds an extern's or a selection's result to `b`: a tensor for a
  /// tensor buffer (its sizes checked against the buffer's layout), any
  /// value for a multi-output buffer.
  void define_result(ir::BufferId b, Value v) {
    const ir::BufferDecl& d = decl(b);
    if (d.multi_output) {
      define(b, std::move(v));
      return;
    }
    const Tensor* t = v.get_if<Tensor>();
    if (t == nullptr) fail(name(b) + " must be a tensor, the call returned something else");
    if (t->device().type != d.layout.device.type)
      fail(name(b) + " is on " + ir::to_string(t->device()) + ", the program expects " + ir::to_string(d.layout.device));
    if (t->dtype != d.layout.dtype)
      fail(name(b) + " is " + std::string(ir::name(t->dtype)) + ", the program expects " +
           std::string(ir::name(d.layout.dtype)));
    EvaluatedLayout lay = layout(b);
    if (t->sizes != lay.sizes) check_layout(*t, lay.sizes, {}, name(b));
    define(b, std::move(v));
  }

  void bind_outputs(const std::vector<ir::BufferId>& outputs, const std::vector<Value>& results, const std::string& who) {
    if (results.size() != outputs.size())
      fail(who + " returned " + std::to_string(results.size()) + " values for " + std::to_string(outputs.size()) +
           " outputs");
    for (std::size_t i = 0; i < outputs.size(); ++i) define_result(outputs[i], results[i]);
  }

  const Prepared& prep_;
  Dispatchers& disp_;
  const Graph& g_;
  const ir::Program& p_;
  std::unique_ptr<FrameState> own_;  // null when the state is recycled
  FrameState& st_;  // its tables are the frame's (`st_.buffers`, `st_.live`, ...): no reference to each to set per call
  std::size_t line_ = 0;
  GraphMemory* memory_ = nullptr;
  std::uint32_t base_stream_ = 0;  // the stream this frame's stream 0 is
  std::uint32_t stream_ = 0;       // the current stream (stream steps move it)
};

/// A graph's inputs as a list of values (subgraphs).
struct ValueInputs {
  /// Subgraph inputs are the parent frame's values: owned, as they were.
  static constexpr bool borrows = false;
  std::span<const Value> values;
  [[nodiscard]] std::size_t size() const noexcept { return values.size(); }
  [[nodiscard]] const Tensor* tensor(std::size_t i) const noexcept { return values[i].get_if<Tensor>(); }
  [[nodiscard]] const Tensor* planned_tensor(std::size_t i) const noexcept { return tensor(i); }
  [[nodiscard]] const std::int64_t* scalar(std::size_t i) const noexcept { return values[i].get_if<std::int64_t>(); }
  [[nodiscard]] const Value& value(std::size_t i) const noexcept { return values[i]; }
};

/// The top level's inputs as the caller's spans.
struct SpanInputs {
  /// The caller's tensors outlive the call: their storages are borrowed.
  static constexpr bool borrows = true;
  std::span<const Tensor> tensors;
  std::span<const std::int64_t> scalars;
  std::span<const std::uint32_t> index;  // program input -> position in its span
  const ir::Program* program = nullptr;
  [[nodiscard]] std::size_t size() const noexcept { return index.size(); }
  [[nodiscard]] bool is_tensor(std::size_t i) const noexcept {
    return boost::variant2::holds_alternative<ir::BufferId>(program->inputs[i]);
  }
  [[nodiscard]] const Tensor* tensor(std::size_t i) const noexcept { return is_tensor(i) ? &tensors[index[i]] : nullptr; }
  /// `tensor(i)` for an input whose `InputPlan` is `fast`, which only a
  /// tensor input's is: the program's input list is not read.
  [[nodiscard]] const Tensor* planned_tensor(std::size_t i) const noexcept { return &tensors[index[i]]; }
  [[nodiscard]] const std::int64_t* scalar(std::size_t i) const noexcept {
    return is_tensor(i) ? nullptr : &scalars[index[i]];
  }
  /// Only for key paths longer than one step (copies).
  [[nodiscard]] Value value(std::size_t i) const {
    return is_tensor(i) ? Value{tensors[index[i]]} : Value{scalars[index[i]]};
  }
};

inline void Frame::bind_inputs(std::span<const Value> inputs) { bind(ValueInputs{inputs}); }

inline bool Frame::bind_planned(std::span<const Tensor> tensors) {
  if (tensors.size() != g_.input_plans.size()) [[unlikely]]
    return false;
  const InputPlan* plan = g_.input_plans.data();
  for (const Tensor& t : tensors) {
    Storage* const storage = t.storage.get();
    const std::uint32_t b = plan->buffer;
    if (storage == nullptr || storage->device.type != plan->device || t.dtype != plan->dtype || t.offset != 0 ||
        plan->bytes_at_zero <= 0 || plan->bytes_at_zero > storage->nbytes) [[unlikely]]
      return false;
    if (t.sizes.size() != plan->rank || t.strides.size() != plan->rank) [[unlikely]]
      return false;
    for (std::size_t d = 0; d < plan->rank; ++d)
      if (t.sizes[d] != plan->dims[d] || t.strides[d] != plan->dims[plan->rank + d]) [[unlikely]]
        return false;
    Tensor* slot = boost::variant2::get_if<Tensor>(&st_.buffers[b].value);
    if (slot == nullptr || !st_.static_dims[b]) [[unlikely]]
      return false;
    slot->storage = std::shared_ptr<Storage>(std::shared_ptr<Storage>{}, storage);  // borrowed: owns nothing
    slot->dtype = t.dtype;
    slot->offset = 0;
    st_.live[b] = 1;
    ++plan;
  }
  return true;
}

inline void Frame::bind_top_inputs(std::span<const Tensor> tensors, std::span<const std::int64_t> scalars,
                                   std::span<const std::uint32_t> index) {
  bind(SpanInputs{tensors, scalars, index, &p_});
}

template <class Inputs>
inline void Frame::bind(const Inputs& inputs) {
  if (inputs.size() != p_.inputs.size())
    fail("the program takes " + std::to_string(p_.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  // exact[i]: input i has its static layout's dimensions exactly, so the
  // layout check below has nothing left to compare.
  std::vector<std::uint8_t>& exact = st_.exact_inputs;
  // Every input planned and matching: bound in one tight loop, nothing
  // left for the loop below or the layout check.
  bool planned = false;
  if constexpr (Inputs::borrows) planned = g_.inputs_planned && bind_planned(inputs.tensors);
  if (!planned) exact.resize(inputs.size());
  bool all_exact = true;  // then the check below has nothing to visit
  for (std::size_t i = 0; !planned && i < inputs.size(); ++i) {
    exact[i] = 0;
    auto who = [i] { return "input " + std::to_string(i); };
    if (const InputPlan& plan = g_.input_plans[i]; plan.fast) [[likely]] {
      // A tensor input of a static layout, read from one compact table: the
      // tensor is taken as it is when it is on the right device, of the
      // right dtype, at offset 0, with exactly the layout's dimensions and
      // a storage that holds them; anything else takes the general path
      // below, which names what is wrong.
      const Tensor* t = inputs.planned_tensor(i);
      if (t != nullptr && t->storage && t->storage->device.type == plan.device && t->dtype == plan.dtype &&
          t->offset == 0 && plan.bytes_at_zero > 0 && plan.same_dims(g_.layouts[plan.buffer], t->sizes, t->strides) &&
          plan.bytes_at_zero <= t->storage->nbytes) [[likely]] {
        Value& v = st_.buffers[plan.buffer];
        Tensor* slot = boost::variant2::get_if<Tensor>(&v.value);
        std::uint8_t& in_place = st_.static_dims[plan.buffer];
        if (slot != nullptr && in_place) [[likely]] {
          // The slot holds the static layout's dimensions, which are the
          // input's: only the storage, dtype and offset to write.
          bind_storage<Inputs>(*slot, *t);
        } else {
          bind_tensor<Inputs>(slot != nullptr ? *slot : v.value.template emplace<Tensor>(), *t);
          in_place = 1;
        }
        st_.live[plan.buffer] = 1;
        exact[i] = 1;
        continue;
      }
    }
    all_exact = false;
    if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&p_.inputs[i])) {
      const Tensor* t = inputs.tensor(i);
      if (t == nullptr) fail(who() + " (" + name(*b) + ") must be a tensor");
      const ir::BufferDecl& d = decl(*b);
      if (t->device().type != d.layout.device.type)
        fail(who() + " (" + name(*b) + ") is on " + ir::to_string(t->device()) + ", the program expects " +
             ir::to_string(d.layout.device));
      if (t->dtype != d.layout.dtype)
        fail(who() + " (" + name(*b) + ") is " + std::string(ir::name(t->dtype)) + ", the program expects " +
             std::string(ir::name(d.layout.dtype)));
      if (t->sizes.size() != d.layout.sizes.size() || t->strides.size() != t->sizes.size())
        fail(who() + " (" + name(*b) + ") has " + std::to_string(t->sizes.size()) + " dimensions, the program expects " +
             std::to_string(d.layout.sizes.size()));
      // A tensor that reaches past its storage would let kernels read
      // past it: refused whatever check_inputs says. A tensor with exactly
      // the static layout's dimensions reaches what was measured when
      // prepared, shifted by its offset.
      const StaticLayout& known = g_.layouts[b->index];
      exact[i] = known.known && known.same_dims(t->sizes, t->strides) ? 1 : 0;
      std::int64_t shifted = 0;
      Result<std::int64_t> reach =
          exact[i] && t->offset >= 0 && known.bytes_at_zero > 0 &&
                  !__builtin_mul_overflow(t->offset, static_cast<std::int64_t>(ir::itemsize(t->dtype)), &shifted) &&
                  !__builtin_add_overflow(shifted, known.bytes_at_zero, &shifted)
              ? Result<std::int64_t>(shifted)
              : bytes_spanned(t->sizes, t->strides, t->offset, t->dtype);
      if (!reach) fail(who() + " (" + name(*b) + "): " + reach.error().message);
      if (*reach > (t->storage ? t->storage->nbytes : 0))
        fail(who() + " (" + name(*b) + ") reaches " + std::to_string(*reach) + " bytes past a storage of " +
             std::to_string(t->storage ? t->storage->nbytes : 0));
      bind_tensor<Inputs>(slot_tensor(*b), *t);
      st_.live[b->index] = 1;
    } else {
      const expr::Expr s = boost::variant2::get<expr::Expr>(p_.inputs[i]);
      const std::int64_t* v = inputs.scalar(i);
      if (v == nullptr) fail(who() + " (symbol " + ir::quote_for_diagnostic(s.name()) + ") must be an integer");
      set_symbol(s, *v);
    }
  }
  // A program of planned inputs alone, no symbol read from them and no
  // constant: nothing below to do.
  if (planned && g_.nothing_after_planned) [[likely]]
    return;
  for (const ShapeBinding& sb : g_.shape_bindings) {
    // A single size or stride step is the common case: read directly.
    const Tensor* t = inputs.tensor(sb.input);
    if (t != nullptr && sb.path.size() == 1 && sb.path[0].value >= 0 &&
        static_cast<std::size_t>(sb.path[0].value) < t->dim() &&
        (sb.path[0].kind == ir::KeyStepKind::size || sb.path[0].kind == ir::KeyStepKind::stride)) {
      const auto d = static_cast<std::size_t>(sb.path[0].value);
      set_symbol(sb.symbol, sb.path[0].kind == ir::KeyStepKind::size ? t->sizes[d] : t->strides[d]);
      continue;
    }
    const std::string what = "symbol " + ir::quote_for_diagnostic(sb.symbol.name());
    set_symbol(sb.symbol, integer_of(follow_path(inputs.value(sb.input), sb.path, what.c_str()), what.c_str()));
  }
  for (const Solver& s : g_.solvers) {
    const std::string what = "symbol " + ir::quote_for_diagnostic(s.symbol.name());
    st_.values[s.observed_slot] = integer_of(follow_path(inputs.value(s.input), ir::KeyPath{s.step}, what.c_str()), what.c_str());
    st_.bound[s.observed_slot] = 1;
    if (eval(s.condition) == 0)
      fail(what + ": input " + std::to_string(s.input) + " has " + std::to_string(st_.values[s.observed_slot]) +
           " where the program expects " + expr::print_python(s.dimension) + ", which no integer value solves");
    set_symbol(s.symbol, eval(s.value));
  }
  if (&g_ == &prep_.top)
    for (const std::uint32_t b : g_.constant_buffers) {
      if (!prep_.constants[b].storage)
        fail("constant " + ir::quote_for_diagnostic(p_.buffers[b].name) + " was not given (ExecutorOptions::constants)");
      assign(slot_tensor(ir::BufferId{b}), prep_.constants[b]);
      st_.live[b] = 1;
    }
  if (prep_.options.check_inputs && !all_exact)
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&p_.inputs[i])) {
        // Compared dimension by dimension (no vectors built); the layout is
        // evaluated whole only for the diagnostic.
        if (exact[i]) [[likely]]
          continue;
        const Tensor& t = *inputs.tensor(i);
        const ir::Layout& want = decl(*b).layout;
        bool same = t.sizes.size() == want.sizes.size(), empty = false;
        for (std::size_t d = 0; same && d < want.sizes.size(); ++d) {
          same = t.sizes[d] == eval(want.sizes[d]);
          empty = empty || t.sizes[d] == 0;
        }
        for (std::size_t d = 0; same && !empty && d < want.strides.size() && d < t.strides.size(); ++d)
          same = t.sizes[d] <= 1 || t.strides[d] == eval(want.strides[d]);
        if (same) continue;
        const EvaluatedLayout lay = layout(*b);
        check_layout(t, lay.sizes, lay.strides, [&] { return "input " + std::to_string(i) + " (" + name(*b) + ")"; });
      }
}

#if WRAPIR_EXECUTOR_PHASE_CLOCK
/// The phase a line's own work is counted in (a launch marks its parts
/// itself; what is left after cuLaunchKernel is `after_launch`).
inline phase_clock::Phase line_phase(const ir::Line& line) noexcept {
  using phase_clock::Phase;
  return std::visit(
      []<class L>(const L&) {
        if constexpr (std::is_same_v<L, ir::KernelCall>) return Phase::after_launch;
        else if constexpr (std::is_same_v<L, ir::Allocate> || std::is_same_v<L, ir::Reuse> ||
                           std::is_same_v<L, ir::Reinterpret>)
          return Phase::allocate;
        else if constexpr (std::is_same_v<L, ir::Free> || std::is_same_v<L, ir::FreeIfNotReused>)
          return Phase::free;
        else if constexpr (std::is_same_v<L, ir::ExternKernelOut> || std::is_same_v<L, ir::ExternKernelAlloc> ||
                           std::is_same_v<L, ir::ExternKernelMultiOut>)
          return Phase::extern_call;
        else return Phase::other_line;
      },
      line);
}
#endif

inline void Frame::run_body() {
  for (const Step& step : g_.steps) {  // the lines that do work, in order
    line_ = step.line;
    try {
      // The hot line kinds dispatch on the step's byte and read its record
      // (no visit, no read of the line); each falls back to the visit.
      switch (step.kind) {
        case Step::Kind::allocate:
          if (!allocate_step(step.operand)) std::visit(*this, p_.body[line_]);
          break;
        case Step::Kind::free:
          if (!free_step(step.operand)) std::visit(*this, p_.body[line_]);
          break;
        case Step::Kind::launch:
          if (prep_.debug != nullptr || !launch_fast(ir::KernelId{step.operand}, g_.launches[line_]))
            std::visit(*this, p_.body[line_]);
          break;
        case Step::Kind::reuse:
          if (!reuse_step(step.old, step.operand)) std::visit(*this, p_.body[line_]);
          break;
        case Step::Kind::visit: std::visit(*this, p_.body[line_]); break;
        case Step::Kind::stream_enter:
        case Step::Kind::stream_exit:
        case Step::Kind::stream_join: stream_step(step); break;
      }
#if WRAPIR_EXECUTOR_PHASE_CLOCK
      phase_clock::mark(line_phase(p_.body[line_]));
#endif
    } catch (wrapir::detail::Failure& f) {
      if (g_.uses_streams) reset_stream();
      fail(g_.prefix + line_label(p_.body[line_], line_) + ": " + f.diagnostic.message);
    } catch (const std::bad_alloc&) {
      if (g_.uses_streams) reset_stream();
      fail(g_.prefix + line_label(p_.body[line_], line_) + ": out of memory");
    } catch (const std::exception& e) {
      if (g_.uses_streams) reset_stream();
      fail(g_.prefix + line_label(p_.body[line_], line_) + ": " + e.what());
    }
  }
  if (!st_.scopes.empty()) fail(g_.prefix + "the body ends inside " + std::to_string(st_.scopes.size()) + " open scope(s)");
}

inline std::vector<Value> Frame::outputs() {
  std::vector<Value> out(p_.outputs.size());  // each None until written
  for (std::size_t i = 0; i < p_.outputs.size(); ++i) {
    try {
      const ir::ProgramOutput& o = p_.outputs[i];
      if (const ir::BufferArg* b = boost::variant2::get_if<ir::BufferArg>(&o)) {
        if (Tensor* t = g_.output_moves[i] ? movable_output(b->buffer) : nullptr) {
          // The frame's last use of the buffer: its storage moves out (its
          // size and stride vectors stay for the next call), the result's
          // tensor built where it lies.
          out[i].value.template emplace<Tensor>(
              Tensor{std::move(t->storage), t->dtype, std::vector<std::int64_t>(t->sizes.begin(), t->sizes.end()),
                     std::vector<std::int64_t>(t->strides.begin(), t->strides.end()), t->offset});
          st_.live[b->buffer.index] = 0;
        } else {
          out[i] = Value{resolve(*b)};
        }
      } else if (const expr::Expr* e = boost::variant2::get_if<expr::Expr>(&o)) {
        out[i] = Value{eval(*e)};
      }
    } catch (wrapir::detail::Failure& f) {
      fail(g_.prefix + "output " + std::to_string(i) + ": " + f.diagnostic.message);
    }
  }
  return out;
}

inline std::vector<Value> run_graph(const Prepared& prep, Dispatchers& disp, const Graph& g,
                                    std::span<const Value> inputs, GraphMemory* memory, std::uint32_t stream) {
  Frame frame(prep, disp, g, memory, nullptr, stream);
  try {
    frame.bind_inputs(inputs);
  } catch (wrapir::detail::Failure& f) {
    fail(g.prefix + f.diagnostic.message);
  }
  frame.run_body();
  return frame.outputs();
}

/// Gives each output tensor that borrows an input's storage (bound by
/// `assign_borrowed`, maybe passed through views, reinterprets or an
/// extern's result) the caller's owning pointer, so that the output keeps
/// its memory alive as every other output does.
inline void own_borrowed(std::vector<Value>& outputs, std::span<const Tensor> inputs) {
  for (Value& v : outputs) {
    Tensor* t = boost::variant2::get_if<Tensor>(&v.value);
    if (t == nullptr || !t->storage || t->storage.use_count() != 0) continue;
    const Storage* borrowed = t->storage.get();
    const Tensor* owner = nullptr;
    for (const Tensor& in : inputs)
      if (in.storage.get() == borrowed) {
        owner = &in;
        break;
      }
    // Only inputs are borrowed; a caller's input that itself owns nothing
    // stays as the caller gave it.
    if (owner != nullptr) t->storage = owner->storage;
  }
}

/// Graph mode (executor_graph_call.hpp).
inline std::shared_ptr<GraphCalls> make_graph_calls(const Prepared& prep);
inline std::vector<Value> run_graph_mode(const Prepared& prep, Dispatchers& disp, GraphCalls& calls,
                                         std::span<const Tensor> inputs, std::span<const std::int64_t> scalars);

}  // namespace wrapir::run::executor_detail

namespace wrapir::run {

inline Result<Executor> Executor::prepare(const ir::Program& program, ExecutorOptions options) {
  if (options.verify) {
    std::vector<ir::Finding> findings = ir::verify(program);
    if (!findings.empty()) {
      std::string message = "the program does not verify (" + std::to_string(findings.size()) + " finding" +
                            (findings.size() == 1 ? "" : "s") + "): " + ir::to_string(findings.front());
      return Diagnostic{std::move(message)};
    }
  }
  try {
    return wrapir::detail::catch_failure([&]() -> Executor {
      auto prepared = std::make_shared<executor_detail::Prepared>();
      auto dispatchers = std::make_shared<executor_detail::Dispatchers>();
      prepared->program = std::make_shared<const ir::Program>(program);
      if (!options.kernels) options.kernels = default_cpu_providers();
      prepared->externs = options.externs ? options.externs : default_cpu_externs();
      const ir::Program& p = *prepared->program;
      prepared->constants.resize(p.buffers.size());
      for (auto& [name, tensor] : options.constants) {
        const auto b = p.find_buffer(name);
        if (!b || p.buffer(*b).role != ir::BufferRole::constant)
          wrapir::detail::fail("constant " + ir::quote_for_diagnostic(name) + " is not a constant of the program");
        prepared->constants[b->index] = tensor;
      }
      for (const ir::ProgramInput& in : p.inputs) {
        if (boost::variant2::holds_alternative<ir::BufferId>(in))
          prepared->input_index.push_back(static_cast<std::uint32_t>(prepared->tensor_inputs++));
        else
          prepared->input_index.push_back(static_cast<std::uint32_t>(prepared->scalar_inputs++));
      }
      executor_detail::GraphPreparer preparer(options, *options.kernels, *prepared->externs, *dispatchers);
      preparer.prepare(prepared->top, p, "");
      prepared->options = std::move(options);
      const DebugPrintOptions& debug = prepared->options.debug;
      if (debug.level < 0 || debug.level > 3)
        wrapir::detail::fail("ExecutorOptions::debug.level must be 0, 1, 2 or 3, not " + std::to_string(debug.level));
      if (debug.level != 0 && prepared->options.graph.enabled)
        wrapir::detail::fail("the debug printer (ExecutorOptions::debug) and graph mode cannot be on together: "
                             "the printer reads values on the host, which a captured graph cannot replay");
      if (debug.level != 0)
        prepared->debug = std::make_unique<const executor_detail::DebugPrinter>(debug, prepared->options.device.get());
      Executor e;
      if (prepared->options.graph.enabled) e.graphs_ = executor_detail::make_graph_calls(*prepared);
      e.prepared_ = std::move(prepared);
      e.dispatchers_ = std::move(dispatchers);
      return e;
    });
  } catch (const std::exception& e) {
    return Diagnostic{std::string("cannot prepare the program: ") + e.what()};
  }
}

inline Result<std::vector<Value>> Executor::run(std::span<const Tensor> inputs,
                                                std::span<const std::int64_t> scalars) const {
  const executor_detail::Prepared& prep = *prepared_;
  if (inputs.size() != prep.tensor_inputs || scalars.size() != prep.scalar_inputs)
    return Diagnostic{"the program takes " + std::to_string(prep.tensor_inputs) + " tensor and " +
                      std::to_string(prep.scalar_inputs) + " scalar inputs, got " + std::to_string(inputs.size()) +
                      " and " + std::to_string(scalars.size())};
  if (graphs_) {
    try {
      return wrapir::detail::catch_failure(
          [&] { return executor_detail::run_graph_mode(prep, *dispatchers_, *graphs_, inputs, scalars); });
    } catch (const std::bad_alloc&) {
      return Diagnostic{"out of memory"};
    } catch (const std::exception& e) {
      return Diagnostic{e.what()};
    }
  }
  // The top level's frame state is recycled between calls (FramePool): in
  // steady state a call allocates host memory only for its outputs.
  struct Recycled {
    executor_detail::FramePool& pool;
    std::unique_ptr<executor_detail::FrameState> state;
    ~Recycled() {
      pool.give_back(std::move(state));
      WRAPIR_PHASE_MARK(leave);
    }
  } recycled{dispatchers_->frames, dispatchers_->frames.take()};
  try {
    return wrapir::detail::catch_failure([&] {
      executor_detail::Frame frame(prep, *dispatchers_, prep.top, nullptr, recycled.state.get());
      WRAPIR_PHASE_MARK(enter);
      try {
        frame.bind_top_inputs(inputs, scalars, prep.input_index);
      } catch (wrapir::detail::Failure& f) {
        wrapir::detail::fail(prep.top.prefix + f.diagnostic.message);
      }
      WRAPIR_PHASE_MARK(bind);
      frame.run_body();
      std::vector<Value> out = frame.outputs();
      executor_detail::own_borrowed(out, inputs);
      recycled.state->completed = true;  // its scrub visits the live buffers only
      WRAPIR_PHASE_MARK(outputs);
      return out;
    });
  } catch (const std::bad_alloc&) {
    return Diagnostic{"out of memory"};
  } catch (const std::exception& e) {
    return Diagnostic{e.what()};
  }
}

inline const ir::Program& Executor::program() const noexcept { return *prepared_->program; }
inline std::size_t Executor::tensor_input_count() const noexcept { return prepared_->tensor_inputs; }
inline std::size_t Executor::scalar_input_count() const noexcept { return prepared_->scalar_inputs; }

}  // namespace wrapir::run
