#pragma once
/// \file
/// Liveness of storage and its allocation trace: which lines of a program
/// create each block of storage, which line touches it last, and how many
/// bytes it holds at the size hints. Memory planners start from here: the
/// reuse planner (`pass/reuse.hpp`) for its peak estimate, the pool and
/// arena planners for the blocks they place, `pass/plan_stats.hpp` for the
/// max-live lower bound.
///
/// Storage blocks
/// --------------
/// One block per storage the body creates, named by the buffer whose line
/// creates it (`BufferLifetime::buffer`):
/// - `Allocate`, `WorkspaceAllocate`, `CommBufferAllocate`, `AllocFromPool`
///   (the carved region, not the pool);
/// - the `result` of `ExternKernelAlloc` / `ExternKernelMultiOut`, unless it
///   is a multi-output tuple (which holds no storage of its own);
/// - the `result` of `MultiOutput`: an element of a tuple, whose storage the
///   extern call created, so the block starts at the line that defined the
///   tuple, and it lives while the tuple does too (the tuple holds a
///   reference to it); two MultiOutput lines selecting the same element are
///   counted twice;
/// - the `outputs` of `Conditional` and `WhileLoop`.
///
/// Aliases join their base's block and extend it: a `Reinterpret` view is
/// its base's storage, and a `Reuse` hands the old buffer's storage to the
/// new one (a Reuse of a graph input's storage, an in-place reuse of a
/// donated input, belongs to no block: inputs are not traced). Graph inputs
/// and constants own no block.
///
/// Time
/// ----
/// Time steps are the indices of the body's lines. A block lives over the
/// closed range `[first_line, last_line]`: `first_line` is the line that
/// creates it, `last_line` the last line that names it or any of its
/// aliases, in any field (an argument, a free, a Reuse, a view's base); a
/// program output's block lives to the last line (`steps - 1`). In a trace
/// this is the half-open interval `[first_line, last_line + 1)`; a block no
/// line uses after creating it lives for its creating line only. The end is
/// the last use, not the free line where a program frees late or never:
/// the trace is what a planner may assume, and its max-live bytes are a
/// lower bound on every placement's peak.
///
/// Scope: the top-level body of the program given. Lines between
/// EnterSubgraph and ExitSubgraph are part of that body and are traced; the
/// programs in `subgraphs` are separate scopes with their own tables and
/// are not (trace each on its own, passing the parent's hints through
/// `TraceOptions::hints`).
///
/// Sizes
/// -----
/// A block's bytes are `storage_elements(layout) * itemsize(dtype)` of the
/// creating buffer, evaluated with each symbol bound to its declared hint.
/// A symbol without a hint (an unbacked symbol, a computed one, one the
/// tables do not declare) takes `TraceOptions::fallback_hint`, 8192 by
/// default like Inductor's `unbacked_symint_fallback`: sizes of unknown
/// symbols are guesses either way, and a planner needs a number for each.
/// A size that cannot be evaluated even so (overflow, a division by zero at
/// the hints, a negative size) or a malformed layout is a diagnostic.
///
/// Devices fold into the trace's int32 as `type * 256 + index`, with index
/// 255 for a device without one (`device_key`).

#include <wrapir/detail/hash.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/query.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/hints.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/detail/prefetch.hpp>
#include <wrapir/pass/trace.hpp>

#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::pass {

/// Which kind of line created a block of storage. Planners place only the
/// blocks they can rewrite the creating line of (`allocate`, `workspace`,
/// `comm`); the others are created by library calls or subgraphs.
enum class StorageOrigin : std::uint8_t {
  allocate,              // Allocate
  workspace,             // WorkspaceAllocate
  comm,                  // CommBufferAllocate
  pool,                  // AllocFromPool: a region of a pool
  extern_result,         // ExternKernelAlloc / ExternKernelMultiOut result
  multi_output_element,  // MultiOutput result
  control_result,        // Conditional / WhileLoop outputs
};

/// The origin of storage a line allocates (`ir::effect::Allocated`).
[[nodiscard]] constexpr StorageOrigin storage_origin(ir::Storage s) noexcept {
  switch (s) {
    case ir::Storage::allocate: return StorageOrigin::allocate;
    case ir::Storage::workspace: return StorageOrigin::workspace;
    case ir::Storage::comm: return StorageOrigin::comm;
    case ir::Storage::extern_result: return StorageOrigin::extern_result;
    case ir::Storage::control_result: return StorageOrigin::control_result;
  }
  return StorageOrigin::allocate;
}

/// The lifetime of one block of storage.
struct BufferLifetime {
  /// The buffer whose line creates the storage.
  ir::BufferId buffer{};
  /// The line that creates the storage (for a MultiOutput element, the line
  /// that defined its tuple, where the storage came to be).
  std::size_t first_line = 0;
  /// The last line that names the buffer or one of its aliases; the last
  /// line of the body for a program output.
  std::size_t last_line = 0;
  StorageOrigin origin = StorageOrigin::allocate;
  /// The storage (through the buffer or an alias) is a program output.
  bool is_output = false;
  /// The other buffers naming this storage, in the order their lines come:
  /// views (Reinterpret) and the new buffers of Reuse lines.
  std::vector<ir::BufferId> aliases{};

  friend bool operator==(const BufferLifetime&, const BufferLifetime&) = default;
};

struct Liveness {
  static constexpr std::size_t no_storage = std::numeric_limits<std::size_t>::max();
  /// In the order of the lines that create them (the fields' order within
  /// a line).
  std::vector<BufferLifetime> lifetimes;
  /// For each buffer of the table, the index of its block in `lifetimes`,
  /// or `no_storage` (inputs, constants, multi-output tuples, buffers no line
  /// defines, views of inputs).
  std::vector<std::size_t> storage_of;
  /// The number of lines of the body.
  std::size_t steps = 0;
};

namespace detail {

[[nodiscard]] inline std::string buffer_label(const ir::Program& p, ir::BufferId b) {
  return "buffer " + (p.contains(b) ? p.buffer(b).name : "#" + std::to_string(b.index));
}

}  // namespace detail

/// The storage blocks of `p`'s body and their lifetimes (see the file
/// comment). Fails on what makes lifetimes meaningless: a buffer id out of
/// range, a buffer defined twice, a line left valueless by an exception.
/// Linear in the size of the body.
[[nodiscard]] inline Result<Liveness> liveness_of(const ir::Program& p) {
  Liveness out;
  out.steps = p.body.size();
  out.storage_of.assign(p.buffers.size(), Liveness::no_storage);
  // Each block is created by a buffer's definition, so the table bounds
  // them; reserved, the vector is never moved while it fills.
  out.lifetimes.reserve(p.buffers.size());
  // Multi-output tuples: their elements' blocks, and the tuple's own line.
  // Sized at the first MultiOutput: most programs have none, and a table
  // per buffer, read for every reference, was a cache miss per reference.
  std::vector<std::vector<std::size_t>> tuple_elements;
  std::vector<std::size_t> defined_at(p.buffers.size(), Liveness::no_storage);
  std::optional<Diagnostic> error;

  auto fail = [&](std::size_t line, std::string message) {
    if (!error) error = Diagnostic{"line " + std::to_string(line) + ": " + message};
  };
  auto define = [&](std::size_t line, ir::BufferId b) -> bool {
    if (!p.contains(b)) {
      fail(line, "buffer #" + std::to_string(b.index) + " is not in the buffer table");
      return false;
    }
    if (defined_at[b.index] != Liveness::no_storage) {
      fail(line, detail::buffer_label(p, b) + " is defined twice: first at line " +
                     std::to_string(defined_at[b.index]));
      return false;
    }
    defined_at[b.index] = line;
    return true;
  };
  auto new_block = [&](std::size_t line, ir::BufferId b, StorageOrigin origin) {
    if (!define(line, b)) return;
    if (p.buffer(b).multi_output) return;  // a tuple: its elements hold the storage
    out.storage_of[b.index] = out.lifetimes.size();
    out.lifetimes.push_back(BufferLifetime{b, line, line, origin, false, {}});
  };
  auto alias = [&](std::size_t line, ir::BufferId a, ir::BufferId base) {
    if (!p.contains(base)) return;  // reported as a reference below
    if (!define(line, a)) return;
    const std::size_t s = out.storage_of[base.index];
    out.storage_of[a.index] = s;
    if (s != Liveness::no_storage) out.lifetimes[s].aliases.push_back(a);
  };

  // A reference extends the block behind the buffer (and, for a tuple,
  // its elements' blocks) to this line.
  auto touch = [&](std::size_t line, ir::BufferId b) {
    if (!p.contains(b)) {
      fail(line, "buffer #" + std::to_string(b.index) + " is not in the buffer table");
      return;
    }
    if (const std::size_t s = out.storage_of[b.index]; s != Liveness::no_storage) out.lifetimes[s].last_line = line;
    // A tuple keeps its elements' storage alive.
    if (!tuple_elements.empty())
      for (const std::size_t s : tuple_elements[b.index]) out.lifetimes[s].last_line = line;
  };

  for (std::size_t i = 0; i < p.body.size() && !error; ++i) {
    const ir::Line& line = p.body[i];
    if (line.valueless_by_exception()) {
      fail(i, "the line holds no line kind (an exception left it valueless)");
      break;
    }
    // Each definition starts or joins a block; every buffer an effect names
    // (defined ones included) is a use at this line.
    namespace fx = ir::effect;
    ir::for_each_effect(line, fx::Handlers{
        [&](const fx::Allocated& e) {
          new_block(i, e.buffer, storage_origin(e.storage));
          touch(i, e.buffer);
        },
        [&](const fx::Carved& e) {
          new_block(i, e.buffer, StorageOrigin::pool);
          touch(i, e.buffer);
        },
        [&](const fx::Selected& e) {
          // The element's storage came to be with its tuple, and lives while
          // the tuple does.
          new_block(i, e.element, StorageOrigin::multi_output_element);
          if (p.contains(e.element) && p.contains(e.tuple)) {
            if (const std::size_t s = out.storage_of[e.element.index]; s != Liveness::no_storage) {
              if (defined_at[e.tuple.index] != Liveness::no_storage)
                out.lifetimes[s].first_line = std::min(out.lifetimes[s].first_line, defined_at[e.tuple.index]);
              if (tuple_elements.empty()) tuple_elements.resize(p.buffers.size());
              tuple_elements[e.tuple.index].push_back(s);
            }
          }
          touch(i, e.element);
          touch(i, e.tuple);
        },
        [&](const fx::Aliased& e) {
          alias(i, e.view, e.base);
          touch(i, e.view);
          touch(i, e.base);
        },
        [&](const fx::Reused& e) {
          alias(i, e.new_buffer, e.old_buffer);
          touch(i, e.old_buffer);
          touch(i, e.new_buffer);
        },
        [&](const fx::Accessed& e) { touch(i, e.buffer); },
        [&](const fx::Released& e) { touch(i, e.buffer); },
        [](const auto&) {},
    });
  }
  if (error) return *error;

  for (const ir::ProgramOutput& o : p.outputs) {
    const ir::BufferArg* b = boost::variant2::get_if<ir::BufferArg>(&o);
    if (!b) continue;
    if (!p.contains(b->buffer))
      return Diagnostic{"outputs: buffer #" + std::to_string(b->buffer.index) + " is not in the buffer table"};
    if (const std::size_t s = out.storage_of[b->buffer.index]; s != Liveness::no_storage) {
      out.lifetimes[s].is_output = true;
      out.lifetimes[s].last_line = out.steps - 1;  // a block exists, so the body is not empty
    }
  }
  return out;
}

/// The int32 a trace keys devices by: `type * 256 + index`, index 255 for
/// a device without one. Distinct devices give distinct keys.
[[nodiscard]] constexpr std::int32_t device_key(const ir::Device& d) noexcept {
  return static_cast<std::int32_t>(d.type) * 256 + (d.index ? *d.index : 255);
}

/// Options of `trace_of`.
struct TraceOptions {
  /// The value of a symbol that has no hint (see the file comment).
  std::int64_t fallback_hint = 8192;
  /// Hints that take precedence over the program's own: a subgraph's
  /// parent's, or values to trace the program at.
  expr::Bindings hints{};
};

/// Evaluates sizes at the hints of one program (declared hints, then
/// `TraceOptions::hints`, then the fallback). Caches per layout and per
/// expression: programs repeat a few shapes over many buffers. It builds
/// expressions in the program's context (storage sizes), so it must not
/// run while another thread builds there.
class HintEvaluator {
 public:
  HintEvaluator(const ir::Program& p, const TraceOptions& options)
      : fallback_(options.fallback_hint), buffer_sizes_(p.buffers.size(), nullptr) {
    ir::bind_hints(p, bindings_, fallback_);
    for (const auto& [symbol, value] : options.hints.entries()) bindings_.set(symbol, value);
  }
  // Not copyable: the per-buffer cache points into the layout cache.
  HintEvaluator(const HintEvaluator&) = delete;
  HintEvaluator& operator=(const HintEvaluator&) = delete;
  HintEvaluator(HintEvaluator&&) = default;
  HintEvaluator& operator=(HintEvaluator&&) = default;

  /// `storage_elements(l)`, or why `l` has none (a malformed layout, a
  /// size too large to build); cached by the layout's expressions, so that
  /// a layout is validated and its size built once per shape.
  [[nodiscard]] Result<expr::Expr> storage_size(const ir::Layout& l) { return cached_storage_size(l); }

  /// `storage_size` of buffer `b` of `p`, which must be the program this
  /// evaluator was made for or one with the same buffer table (a copy
  /// being planned); cached per buffer.
  [[nodiscard]] const Result<expr::Expr>& buffer_storage_size(const ir::Program& p, ir::BufferId b) {
    if (b.index >= buffer_sizes_.size()) buffer_sizes_.resize(b.index + 1, nullptr);
    const Result<expr::Expr>*& cached = buffer_sizes_[b.index];
    if (!cached) cached = &cached_storage_size(p.buffer(b).layout);  // map nodes are stable
    return *cached;
  }

  /// `bytes` of buffer `b` of `p` (see `buffer_storage_size`); cached per
  /// buffer, since planners ask for every buffer several times.
  [[nodiscard]] Result<std::int64_t> buffer_bytes(const ir::Program& p, ir::BufferId b) {
    if (b.index < buffer_bytes_.size() && buffer_bytes_[b.index] >= 0) return buffer_bytes_[b.index];
    const Result<expr::Expr>& size = buffer_storage_size(p, b);
    if (!size) return size.error();
    Result<std::int64_t> bytes = bytes_of(size.value(), p.buffer(b).layout.dtype);
    // Only values are cached (as non-negative numbers, -1 for none yet): an
    // error is computed again, the same way, the next time it is asked.
    if (bytes) {
      if (b.index >= buffer_bytes_.size())
        buffer_bytes_.resize(std::max(p.buffers.size(), b.index + std::size_t{1}), -1);
      buffer_bytes_[b.index] = bytes.value();
    }
    return bytes;
  }

  /// The value of `e` at the hints.
  [[nodiscard]] Result<std::int64_t> value(expr::Expr e) {
    if (!e) return Diagnostic{"cannot evaluate a null expression"};
    if (auto it = values_.find(e.node()); it != values_.end()) return it->second;
    Result<std::int64_t> v = expr::eval(e, bindings_);
    if (!v) {
      // A symbol the tables do not declare takes the fallback too.
      bool bound_more = false;
      for (expr::Expr s : expr::free_symbols(e))
        if (!bindings_.get(s)) {
          bindings_.set(s, fallback_);
          bound_more = true;
        }
      if (bound_more) v = expr::eval(e, bindings_);
    }
    if (v) values_.emplace(e.node(), v.value());
    return v;
  }

  /// Storage elements of `l` at the hints; a diagnostic for a malformed
  /// layout or a size that does not evaluate to a non-negative int64.
  [[nodiscard]] Result<std::int64_t> elements(const ir::Layout& l) {
    Result<expr::Expr> size = storage_size(l);
    if (!size) return size.error();
    Result<std::int64_t> v = value(size.value());
    if (!v) return Diagnostic{"its storage size does not evaluate at the hints: " + v.error().message};
    if (v.value() < 0) return Diagnostic{"its storage size is negative at the hints"};
    return v;
  }

  /// `elements(l) * itemsize(l.dtype)`, checked for overflow.
  [[nodiscard]] Result<std::int64_t> bytes(const ir::Layout& l) {
    Result<expr::Expr> size = storage_size(l);
    if (!size) return size.error();
    return bytes_of(size.value(), l.dtype);
  }

  [[nodiscard]] const expr::Bindings& bindings() const noexcept { return bindings_; }

  /// Binds `symbol`, which no expression evaluated so far reads, to the
  /// value of `value` at the hints: a symbol a planner defines (a named
  /// arena offset), so that the planned program evaluates where the
  /// original did.
  [[nodiscard]] Result<std::int64_t> define(expr::Expr symbol, expr::Expr value) {
    Result<std::int64_t> v = this->value(value);
    if (v) bindings_.set(symbol, v.value());
    return v;
  }

 private:
  Result<std::int64_t> bytes_of(expr::Expr size, ir::DType dtype) {
    Result<std::int64_t> n = value(size);
    if (!n) return Diagnostic{"its storage size does not evaluate at the hints: " + n.error().message};
    if (n.value() < 0) return Diagnostic{"its storage size is negative at the hints"};
    const std::int64_t item = static_cast<std::int64_t>(ir::itemsize(dtype));
    if (item > 0 && n.value() > std::numeric_limits<std::int64_t>::max() / item)
      return Diagnostic{"its storage of " + std::to_string(n.value()) + " elements overflows int64 bytes"};
    return n.value() * item;
  }

  struct KeyHash {
    std::size_t operator()(const std::vector<const expr::Node*>& k) const noexcept {
      std::size_t h = k.size();
      for (const expr::Node* n : k) h = wrapir::detail::hash_mix(h, std::hash<const expr::Node*>{}(n));
      return h;
    }
  };

  std::int64_t fallback_;
  expr::Bindings bindings_;
  std::vector<const expr::Node*> key_;
  const Result<expr::Expr>& cached_storage_size(const ir::Layout& l) {
    key_.clear();
    key_.reserve(l.sizes.size() + l.strides.size() + 2);
    for (expr::Expr e : l.sizes) key_.push_back(e.node());
    key_.push_back(nullptr);  // separates sizes from strides of another rank
    for (expr::Expr e : l.strides) key_.push_back(e.node());
    key_.push_back(l.storage_offset.node());
    if (auto it = layouts_.find(key_); it != layouts_.end()) return it->second;
    return layouts_.emplace(key_, build_storage_size(l)).first->second;
  }

  static Result<expr::Expr> build_storage_size(const ir::Layout& l) {
    if (Result<void> valid = ir::validate(l); !valid) return std::move(valid).error();
    try {
      return ir::storage_elements(l);
    } catch (const expr::Error& e) {
      return Diagnostic{std::string("its storage size cannot be built: ") + e.what()};
    }
  }

  std::unordered_map<std::vector<const expr::Node*>, Result<expr::Expr>, KeyHash> layouts_;
  std::unordered_map<const expr::Node*, std::int64_t> values_;
  std::vector<const Result<expr::Expr>*> buffer_sizes_;
  std::vector<std::int64_t> buffer_bytes_;
};

/// A program's trace with the liveness it came from:
/// `trace.allocations[i]` is the block `liveness.lifetimes[i]`, created by
/// the buffer `buffers[i]`.
struct ProgramTrace {
  AllocationTrace trace;
  std::vector<ir::BufferId> buffers;
  Liveness liveness;
};

namespace detail {

/// A trace entry without its name: what a sum of live bytes needs. The
/// planners' internal traces are made of these, since copying a name per
/// block only to drop it was a good part of their cost.
struct LiveSpan {
  std::size_t begin = 0, end = 0;
  std::int64_t bytes = 0;
  std::int32_t device = 0;
  bool is_output = false;
};

/// Prefetches the sizes and strides of `l`, which sit elsewhere on the heap.
inline void prefetch_layout(const ir::Layout& l) noexcept {
  prefetch(l.sizes.data());
  prefetch(l.strides.data());
}

/// The trace of `l`, a liveness of `p`, with sizes from `hints`, without
/// names: entry `i` is the block `l.lifetimes[i]`.
[[nodiscard]] inline Result<std::vector<LiveSpan>> spans_from(const ir::Program& p, const Liveness& l,
                                                              HintEvaluator& hints) {
  std::vector<LiveSpan> spans;
  spans.reserve(l.lifetimes.size());
  // The first size of a buffer reads its layout's sizes and strides: in a
  // large program two cache misses per block that the loop waited on, most
  // of its time; asked for some blocks ahead, they overlap.
  constexpr std::size_t ahead = 8;
  for (std::size_t i = 0; i < l.lifetimes.size(); ++i) {
    if (i + ahead < l.lifetimes.size()) prefetch_layout(p.buffer(l.lifetimes[i + ahead].buffer).layout);
    const BufferLifetime& b = l.lifetimes[i];
    Result<std::int64_t> bytes = hints.buffer_bytes(p, b.buffer);
    if (!bytes)
      return Diagnostic{"buffer " + p.buffer(b.buffer).name + ": " +
                        bytes.error().message};
    spans.push_back(LiveSpan{b.first_line, b.last_line + 1, bytes.value(), device_key(p.buffer(b.buffer).layout.device),
                             b.is_output});
  }
  return spans;
}

/// The trace of `l`, a liveness of `p`, with sizes from `hints`.
[[nodiscard]] inline Result<AllocationTrace> trace_from(const ir::Program& p, const Liveness& l,
                                                         HintEvaluator& hints) {
  Result<std::vector<LiveSpan>> spans = spans_from(p, l, hints);
  if (!spans) return spans.error();
  AllocationTrace trace;
  trace.steps = l.steps;
  trace.allocations.reserve(l.lifetimes.size());
  for (std::size_t i = 0; i < l.lifetimes.size(); ++i) {
    const LiveSpan& s = spans.value()[i];
    trace.allocations.push_back(
        TracedAllocation{p.buffer(l.lifetimes[i].buffer).name, s.bytes, s.begin, s.end, s.device, s.is_output});
  }
  return trace;
}

}  // namespace detail

/// The allocation trace of `p` with its liveness (see the file comment).
[[nodiscard]] inline Result<ProgramTrace> trace_program(const ir::Program& p, const TraceOptions& options = {}) {
  Result<Liveness> live = liveness_of(p);
  if (!live) return live.error();
  HintEvaluator hints{p, options};
  Result<AllocationTrace> trace = detail::trace_from(p, live.value(), hints);
  if (!trace) return trace.error();
  ProgramTrace out{std::move(trace).value(), {}, std::move(live).value()};
  out.buffers.reserve(out.liveness.lifetimes.size());
  for (const BufferLifetime& b : out.liveness.lifetimes) out.buffers.push_back(b.buffer);
  return out;
}

/// The allocation trace of `p` (see the file comment); `trace_program`
/// also gives the buffers and lifetimes behind each entry.
[[nodiscard]] inline Result<AllocationTrace> trace_of(const ir::Program& p, const TraceOptions& options = {}) {
  Result<ProgramTrace> t = trace_program(p, options);
  if (!t) return t.error();
  return std::move(t).value().trace;
}

}  // namespace wrapir::pass
