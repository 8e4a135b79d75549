#pragma once
/// \file
/// Synthetic allocation traces for property tests and planner benchmarks.
///
/// Each generator simulates a schedule of kernels and records, for every
/// tensor it makes, the step that produced it and the last step that read
/// it, so the traces have the structure of real wrapper programs: a
/// transformer (per layer attention and MLP activations, a residual stream
/// that outlives each block, key/value outputs that live to the end, and in
/// training mode activations saved until the backward pass), an MLP, a
/// conv-like encoder/decoder (feature maps shrinking then growing, skip
/// connections held across the bottleneck) and uniformly random blocks.
///
/// Generators are deterministic functions of their options and seed: they
/// use their own `SplitMix64` rather than `<random>`'s distributions, whose
/// results differ between standard libraries. Sizes are in realistic byte
/// ranges (fp16/fp32 activations of kilobytes to hundreds of megabytes).
///
/// `program_from_trace` turns a trace into a wrapper program with the same
/// shape of lifetimes, so that the program-level planners (reuse, pools,
/// arena) can be compared on the same corpus.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/trace.hpp>

namespace wrapir::pass {

/// A small, fast, well-mixed 64-bit generator (Steele, Lea, Flood 2014);
/// identical results on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) noexcept : state_(seed) {}

  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  /// Uniform in `[lo, hi]` (`lo <= hi`).
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) noexcept {
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    return span == 0 ? lo + static_cast<std::int64_t>(next()) : lo + static_cast<std::int64_t>(next() % span);
  }

  /// Uniform in `[0, 1)`.
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Log-uniform in `[lo, hi]` (`0 < lo <= hi`): every order of magnitude
  /// is equally likely, as tensor sizes are.
  std::int64_t log_uniform(std::int64_t lo, std::int64_t hi) noexcept {
    const double l = std::log(static_cast<double>(lo)), h = std::log(static_cast<double>(hi));
    const auto v = static_cast<std::int64_t>(std::exp(l + (h - l) * unit()));
    return std::clamp(v, lo, hi);
  }

 private:
  std::uint64_t state_;
};

namespace detail {

/// Records a schedule: `make` a tensor at the current step, `use` it at the
/// current step, `step` to the next kernel. A tensor lives from the step
/// that made it to one past the last step that used it.
class ScheduleRecorder {
 public:
  std::size_t make(std::int64_t bytes, std::string_view kind, std::int32_t device = 0) {
    trace_.allocations.push_back(
        TracedAllocation{std::string(kind) + std::to_string(trace_.allocations.size()), bytes, now_, now_ + 1, device});
    return trace_.allocations.size() - 1;
  }
  void use(std::size_t id) { trace_.allocations[id].end = std::max(trace_.allocations[id].end, now_ + 1); }
  void output(std::size_t id) { outputs_.push_back(id); }
  void step() { ++now_; }
  /// A kernel reading `inputs` and writing a new tensor of `bytes`.
  std::size_t kernel(std::int64_t bytes, std::initializer_list<std::size_t> inputs, std::string_view kind) {
    step();
    for (const std::size_t i : inputs) use(i);
    return make(bytes, kind);
  }

  AllocationTrace finish() && {
    step();
    trace_.steps = now_;
    for (const std::size_t o : outputs_) {
      trace_.allocations[o].is_output = true;
      trace_.allocations[o].end = now_;
    }
    return std::move(trace_);
  }

 private:
  AllocationTrace trace_;
  std::vector<std::size_t> outputs_;
  std::size_t now_ = 0;
};

}  // namespace detail

struct TransformerTraceOptions {
  std::size_t layers = 12;
  /// Batch size and sequence length; each tensor's token count is their
  /// product.
  std::int64_t batch = 4;
  std::int64_t sequence = 1024;
  std::int64_t hidden = 1024;
  std::int64_t heads = 16;
  std::int64_t item_bytes = 2;
  /// Keep each layer's activations until a backward pass that walks the
  /// layers in reverse (long-lived blocks of many sizes).
  bool training = false;
  /// Return each layer's keys and values (outputs that live to the end).
  bool kv_outputs = true;
};

/// A decoder-only transformer's forward (and, when training, backward)
/// pass. The seed jitters the sequence length per trace and the sizes of
/// a few scratch tensors so that traces differ.
[[nodiscard]] inline AllocationTrace transformer_trace(const TransformerTraceOptions& o, std::uint64_t seed = 0) {
  SplitMix64 rng(seed);
  detail::ScheduleRecorder r;
  const std::int64_t seq = std::max<std::int64_t>(16, o.sequence - rng.uniform(0, o.sequence / 4));
  const std::int64_t tokens = o.batch * seq;
  const std::int64_t act = tokens * o.hidden * o.item_bytes;
  const std::int64_t scores = o.batch * o.heads * seq * seq * o.item_bytes;
  const std::int64_t stats = tokens * o.heads * 4;  // fp32 softmax statistics
  std::size_t x = r.make(act, "embed");
  struct Saved {
    std::size_t ln1, qkv, probs, attn, ln2, up, act;
  };
  std::vector<Saved> saved;
  for (std::size_t l = 0; l < o.layers; ++l) {
    const std::size_t ln1 = r.kernel(act, {x}, "ln");
    const std::size_t qkv = r.kernel(3 * act, {ln1}, "qkv");
    if (o.kv_outputs) {
      const std::size_t k = r.kernel(act, {qkv}, "key");
      const std::size_t v = r.kernel(act, {qkv}, "value");
      r.output(k);
      r.output(v);
    }
    const std::size_t s = r.kernel(scores, {qkv}, "scores");
    const std::size_t m = r.kernel(stats + 64 * rng.uniform(0, 8), {s}, "rowmax");
    const std::size_t p = r.kernel(scores, {s, m}, "probs");
    const std::size_t attn = r.kernel(act, {p, qkv}, "attn");
    const std::size_t proj = r.kernel(act, {attn}, "proj");
    const std::size_t x2 = r.kernel(act, {x, proj}, "residual");
    const std::size_t ln2 = r.kernel(act, {x2}, "ln");
    const std::size_t up = r.kernel(4 * act, {ln2}, "up");
    const std::size_t a = r.kernel(4 * act, {up}, "gelu");
    const std::size_t down = r.kernel(act, {a}, "down");
    x = r.kernel(act, {x2, down}, "residual");
    if (o.training) saved.push_back({ln1, qkv, p, attn, ln2, up, a});
  }
  const std::size_t logits = r.kernel(tokens * 4096 * o.item_bytes, {x}, "logits");
  if (!o.training) {
    r.output(logits);
    return std::move(r).finish();
  }
  std::size_t grad = r.kernel(tokens * 4096 * o.item_bytes, {logits}, "dlogits");
  grad = r.kernel(act, {grad, x}, "dx");
  for (std::size_t l = saved.size(); l-- > 0;) {
    const Saved& sv = saved[l];
    const std::size_t da = r.kernel(4 * act, {grad, sv.act}, "dgelu");
    const std::size_t du = r.kernel(4 * act, {da, sv.up}, "dup");
    const std::size_t dln2 = r.kernel(act, {du, sv.ln2}, "dln");
    const std::size_t dx2 = r.kernel(act, {dln2, grad}, "dresidual");
    const std::size_t dattn = r.kernel(act, {dx2, sv.attn}, "dproj");
    const std::size_t dp = r.kernel(scores, {dattn, sv.qkv}, "dprobs");
    const std::size_t ds = r.kernel(scores, {dp, sv.probs}, "dscores");
    const std::size_t dqkv = r.kernel(3 * act, {ds, sv.qkv}, "dqkv");
    const std::size_t dln1 = r.kernel(act, {dqkv, sv.ln1}, "dln");
    grad = r.kernel(act, {dln1, dx2}, "dresidual");
    // Weight gradients are outputs: small next to activations.
    r.output(r.kernel(o.hidden * o.hidden * 12 * 4, {dqkv, du}, "dweight"));
  }
  r.output(grad);
  return std::move(r).finish();
}

struct MlpTraceOptions {
  std::size_t layers = 24;
  std::int64_t batch = 4096;
  /// Widths are drawn log-uniformly in `[min_width, max_width]`.
  std::int64_t min_width = 256;
  std::int64_t max_width = 16384;
  std::int64_t item_bytes = 4;
  bool training = true;
};

/// A stack of linear layers with activations between them; in training
/// mode every pre-activation is kept for the backward pass.
[[nodiscard]] inline AllocationTrace mlp_trace(const MlpTraceOptions& o, std::uint64_t seed = 0) {
  SplitMix64 rng(seed);
  detail::ScheduleRecorder r;
  std::vector<std::int64_t> widths;
  for (std::size_t l = 0; l <= o.layers; ++l) widths.push_back(rng.log_uniform(o.min_width, o.max_width));
  std::size_t x = r.make(o.batch * widths[0] * o.item_bytes, "input");
  std::vector<std::size_t> pre;
  for (std::size_t l = 0; l < o.layers; ++l) {
    const std::int64_t bytes = o.batch * widths[l + 1] * o.item_bytes;
    const std::size_t z = r.kernel(bytes, {x}, "linear");
    x = r.kernel(bytes, {z}, "relu");
    if (o.training) pre.push_back(z);
  }
  if (!o.training) {
    r.output(x);
    return std::move(r).finish();
  }
  std::size_t grad = r.kernel(o.batch * widths[o.layers] * o.item_bytes, {x}, "dloss");
  for (std::size_t l = pre.size(); l-- > 0;) {
    const std::size_t dz = r.kernel(o.batch * widths[l + 1] * o.item_bytes, {grad, pre[l]}, "drelu");
    r.output(r.kernel(widths[l] * widths[l + 1] * o.item_bytes, {dz}, "dweight"));
    grad = r.kernel(o.batch * widths[l] * o.item_bytes, {dz}, "dx");
  }
  r.output(grad);
  return std::move(r).finish();
}

struct ConvTraceOptions {
  /// Resolution levels of the encoder (and of the decoder).
  std::size_t levels = 5;
  /// Convolutions per level.
  std::size_t blocks_per_level = 2;
  std::int64_t batch = 16;
  std::int64_t channels = 64;
  std::int64_t resolution = 256;
  std::int64_t item_bytes = 2;
};

/// A U-Net-like encoder/decoder: each encoder level halves the resolution
/// and doubles the channels; its last feature map (the skip connection)
/// lives until the decoder level that concatenates it.
[[nodiscard]] inline AllocationTrace conv_trace(const ConvTraceOptions& o, std::uint64_t seed = 0) {
  SplitMix64 rng(seed);
  detail::ScheduleRecorder r;
  const auto fmap = [&](std::int64_t c, std::int64_t hw) { return o.batch * c * hw * hw * o.item_bytes; };
  std::int64_t c = o.channels, hw = o.resolution;
  std::size_t x = r.make(o.batch * 3 * hw * hw * o.item_bytes, "image");
  std::vector<std::size_t> skips;
  for (std::size_t l = 0; l < o.levels; ++l) {
    for (std::size_t b = 0; b < o.blocks_per_level; ++b) {
      // Convolutions sometimes need a scratch workspace next to their output.
      if (rng.unit() < 0.3) {
        const std::size_t ws = r.kernel(rng.log_uniform(4096, fmap(c, hw) / 4 + 4096), {x}, "workspace");
        x = r.kernel(fmap(c, hw), {x, ws}, "conv");
      } else {
        x = r.kernel(fmap(c, hw), {x}, "conv");
      }
    }
    skips.push_back(x);
    if (l + 1 < o.levels) {
      hw /= 2;
      c *= 2;
      x = r.kernel(fmap(c / 2, hw), {x}, "pool");
    }
  }
  for (std::size_t l = o.levels - 1; l-- > 0;) {
    hw *= 2;
    c /= 2;
    const std::size_t up = r.kernel(fmap(c, hw), {x}, "upsample");
    x = r.kernel(fmap(2 * c, hw), {up, skips[l]}, "concat");
    for (std::size_t b = 0; b < o.blocks_per_level; ++b) x = r.kernel(fmap(c, hw), {x}, "conv");
  }
  r.output(r.kernel(o.batch * 2 * hw * hw * o.item_bytes, {x}, "head"));
  return std::move(r).finish();
}

struct RandomTraceOptions {
  std::size_t blocks = 1000;
  /// Steps of the schedule; 0 means as many as blocks.
  std::size_t steps = 0;
  std::int64_t min_bytes = 256;
  std::int64_t max_bytes = std::int64_t{64} << 20;
  /// Lifetimes are log-uniform in `[1, max_lifetime]` steps.
  std::size_t max_lifetime = 64;
  /// Devices the blocks are spread over (device indices 0..devices-1).
  std::int32_t devices = 1;
  /// The share of blocks that are outputs (live to the end).
  double output_share = 0.02;
  /// The share of sizes that are not a multiple of 64 bytes.
  double unaligned_share = 0.1;
};

/// Blocks with random begins, log-uniform sizes and lifetimes.
[[nodiscard]] inline AllocationTrace random_trace(const RandomTraceOptions& o, std::uint64_t seed = 0) {
  SplitMix64 rng(seed);
  AllocationTrace t;
  t.steps = o.steps == 0 ? std::max<std::size_t>(o.blocks, 1) : o.steps;
  t.allocations.reserve(o.blocks);
  for (std::size_t i = 0; i < o.blocks; ++i) {
    TracedAllocation a;
    a.name = "buf" + std::to_string(i);
    a.bytes = rng.log_uniform(std::max<std::int64_t>(o.min_bytes, 1), std::max(o.min_bytes, o.max_bytes));
    a.bytes = rng.unit() < o.unaligned_share ? a.bytes : (a.bytes + 63) / 64 * 64;
    a.begin = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(t.steps) - 1));
    const auto life = static_cast<std::size_t>(
        rng.log_uniform(1, static_cast<std::int64_t>(std::max<std::size_t>(o.max_lifetime, 1))));
    a.end = std::min(t.steps, a.begin + life);
    a.device = static_cast<std::int32_t>(rng.uniform(0, std::max(o.devices, 1) - 1));
    if (rng.unit() < o.output_share) {
      a.is_output = true;
      a.end = t.steps;
    }
    t.allocations.push_back(std::move(a));
  }
  return t;
}

struct ChainTraceOptions {
  std::size_t blocks = 1000;
  /// Sizes are log-uniform in `[min_bytes, max_bytes]`; equal bounds give
  /// every block the same size, as a chain of one op repeated has.
  std::int64_t min_bytes = 4096;
  std::int64_t max_bytes = std::int64_t{16} << 20;
};

/// A chain: each kernel reads the previous kernel's output and writes the
/// next, so block `i` lives over `[i, i + 2)` and only neighbours overlap;
/// the last block is the output. The shape of a long elementwise or
/// sequential program, and the worst case for planners whose work grows
/// with the number of blocks placed before one, rather than with the
/// number it overlaps.
[[nodiscard]] inline AllocationTrace chain_trace(const ChainTraceOptions& o, std::uint64_t seed = 0) {
  SplitMix64 rng(seed);
  detail::ScheduleRecorder r;
  const std::int64_t lo = std::max<std::int64_t>(o.min_bytes, 1), hi = std::max(lo, o.max_bytes);
  if (o.blocks == 0) return std::move(r).finish();
  std::size_t x = r.make(rng.log_uniform(lo, hi), "chain");
  for (std::size_t i = 1; i < o.blocks; ++i) x = r.kernel(rng.log_uniform(lo, hi), {x}, "chain");
  r.output(x);
  return std::move(r).finish();
}

struct FanOutTraceOptions {
  std::size_t blocks = 1000;
  /// Consumers of each source tensor.
  std::size_t fan = 8;
  std::int64_t min_bytes = 4096;
  std::int64_t max_bytes = std::int64_t{16} << 20;
};

/// Fan-out and fan-in: a source tensor is read by `fan` kernels in turn,
/// each writing a branch tensor, and one kernel joins all branches into
/// the next source (as the heads of a multi-branch block, or a split
/// followed by a concat). Branches stay live until the join, so a branch
/// overlaps `fan + 1` blocks and a source the `2 * fan` branches around it;
/// `blocks` is rounded down to one source plus whole groups of `fan + 1`.
[[nodiscard]] inline AllocationTrace fan_out_trace(const FanOutTraceOptions& o, std::uint64_t seed = 0) {
  SplitMix64 rng(seed);
  detail::ScheduleRecorder r;
  const std::int64_t lo = std::max<std::int64_t>(o.min_bytes, 1), hi = std::max(lo, o.max_bytes);
  const std::size_t fan = std::max<std::size_t>(o.fan, 1);
  if (o.blocks == 0) return std::move(r).finish();
  std::size_t x = r.make(rng.log_uniform(lo, hi), "source");
  std::vector<std::size_t> branches;
  for (std::size_t made = 1; made + fan + 1 <= std::max(o.blocks, fan + 2);) {
    branches.clear();
    for (std::size_t k = 0; k < fan; ++k) branches.push_back(r.kernel(rng.log_uniform(lo, hi), {x}, "branch"));
    r.step();
    for (const std::size_t b : branches) r.use(b);
    x = r.make(rng.log_uniform(lo, hi), "join");
    made += fan + 1;
  }
  r.output(x);
  return std::move(r).finish();
}

/// A named trace of the corpus.
struct NamedTrace {
  std::string name;
  AllocationTrace trace;
};

/// The planner benchmark corpus: a few of each kind, small enough that the
/// whole corpus is made in milliseconds. The same seed gives the same corpus.
[[nodiscard]] inline std::vector<NamedTrace> trace_corpus(std::uint64_t seed = 0) {
  std::vector<NamedTrace> corpus;
  corpus.push_back({"transformer_infer", transformer_trace({}, seed)});
  corpus.push_back({"transformer_train", transformer_trace({.layers = 8, .training = true}, seed + 1)});
  corpus.push_back(
      {"transformer_train_small",
       transformer_trace(
           {.layers = 4, .batch = 2, .sequence = 256, .hidden = 512, .heads = 8, .training = true, .kv_outputs = false},
           seed + 2)});
  corpus.push_back(
      {"llm_decode",
       transformer_trace({.layers = 32, .batch = 8, .sequence = 128, .hidden = 4096, .heads = 32}, seed + 3)});
  corpus.push_back({"mlp_train", mlp_trace({}, seed + 4)});
  corpus.push_back({"mlp_infer", mlp_trace({.layers = 16, .training = false}, seed + 5)});
  corpus.push_back({"unet", conv_trace({}, seed + 6)});
  corpus.push_back({"unet_deep", conv_trace({.levels = 7, .blocks_per_level = 3, .batch = 8}, seed + 7)});
  corpus.push_back({"random_1k", random_trace({}, seed + 8)});
  corpus.push_back({"random_long_lived", random_trace({.blocks = 2000, .max_lifetime = 1000}, seed + 9)});
  corpus.push_back(
      {"random_small_sizes",
       random_trace({.blocks = 2000, .min_bytes = 1, .max_bytes = 4096, .unaligned_share = 0.5}, seed + 10)});
  corpus.push_back({"random_two_devices", random_trace({.blocks = 2000, .devices = 2}, seed + 11)});
  return corpus;
}

struct ProgramFromTraceOptions {
  /// Give every other block the size `k * s0` bytes (`s0` a size symbol
  /// with hint 64, `k` the block's bytes / 64 rounded up), so that planners
  /// meet symbolic sizes; the others keep their static sizes.
  bool symbolic = false;
};

/// A program whose storage lives as `trace` says: block `i` is a 1-D uint8
/// buffer of its bytes on `cuda:<device>` (devices must be in [0, 255]),
/// allocated in the run of memory lines of its begin step, touched by a
/// kernel call at its first and last step, and freed (FreeIfNotReused) at
/// its end step unless it is an output. Blocks of zero bytes are 1 byte, so
/// that every block is a real allocation. Throws `std::invalid_argument`
/// for an invalid trace or device.
[[nodiscard]] inline ir::Program program_from_trace(const AllocationTrace& trace,
                                                    const ProgramFromTraceOptions& options = {}) {
  if (auto bad = validate_trace(trace)) throw std::invalid_argument("program_from_trace: " + *bad);
  ir::Program p{"traced"};
  ir::Builder b{p};
  const ir::KernelId touch = b.triton_kernel("touch", "@triton.jit\ndef touch(in_ptr0):\n    pass\n", "in_ptr0: *u8");
  const expr::Expr s0 = options.symbolic ? b.size_symbol("s0", 64) : expr::Expr{};
  std::size_t steps = trace.steps;
  for (const TracedAllocation& a : trace.allocations) steps = std::max(steps, a.end);
  std::vector<std::vector<std::size_t>> begins(steps + 1), ends(steps + 1), uses(steps + 1);
  for (std::size_t i = 0; i < trace.allocations.size(); ++i) {
    const TracedAllocation& a = trace.allocations[i];
    if (a.device < 0 || a.device > 255)
      throw std::invalid_argument("program_from_trace: block " + a.name + " has the device " +
                                  std::to_string(a.device) + ", outside [0, 255]");
    begins[a.begin].push_back(i);
    if (!a.is_output) ends[a.end].push_back(i);
    uses[a.begin].push_back(i);
    if (a.end - 1 != a.begin) uses[a.end - 1].push_back(i);
  }
  std::vector<ir::BufferId> buffer(trace.allocations.size());
  for (std::size_t t = 0; t <= steps; ++t) {
    for (const std::size_t i : ends[t]) b.free({buffer[i]});
    for (const std::size_t i : begins[t]) {
      const TracedAllocation& a = trace.allocations[i];
      const ir::Device device{ir::DeviceType::cuda, a.device};
      const std::int64_t bytes = std::max<std::int64_t>(a.bytes, 1);
      const expr::Expr size =
          options.symbolic && i % 2 == 0 ? expr::mul(p.ctx().integer((bytes + 63) / 64), s0) : p.ctx().integer(bytes);
      buffer[i] = b.empty({size}, ir::DType::uint8, device);
    }
    for (const std::size_t i : uses[t]) {
      const ir::Device device{ir::DeviceType::cuda, trace.allocations[i].device};
      b.call(touch, {buffer[i]}, {.device = device});
    }
  }
  for (std::size_t i = 0; i < trace.allocations.size(); ++i)
    if (trace.allocations[i].is_output) b.output(buffer[i]);
  return p;
}

}  // namespace wrapir::pass
