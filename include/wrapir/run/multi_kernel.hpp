#pragma once
/// \file
/// Multi-kernel dispatch (reference §5), backend-generic: several candidate
/// kernels compute the same result; the first call picks one and every later
/// call launches it directly.
///
/// Two dispatchers share one validated `MultiKernelPlan`:
///
/// * `MultiKernelDispatcher` (Inductor's `MultiKernelCall`): the first call
///   takes the forced choice, or the only candidate, or the choice cached on
///   disk (run/choice_cache.hpp), or else benchmarks every candidate — after
///   warm-up, on copies of the arguments they mutate, restored before every
///   run — keeps the fastest median and caches it. Then it launches the
///   winner once on the real arguments.
/// * `SizeHintDispatcher` (Inductor's `SizeHintMultiKernelCall`, §5.4): each
///   candidate carries the shapes it was tuned for; a call picks the
///   candidate whose shapes are nearest to its own (log2 L1 distance) and
///   remembers the pick per shape. No benchmarking.
///
/// Everything backend-specific comes in through three small concepts, so the
/// selection logic is tested on the CPU with fakes and reused by the CUDA
/// backend:
///
/// * a **launcher** `launcher(candidate_index, SlicedArgs<Arg>)` launches one
///   candidate with the arguments its `arg_index` slices select;
/// * a **timer** `timer(BenchmarkPlan, prepare, run) -> std::vector<double>`
///   calls `prepare(); run();` `warmup` times untimed, then `repetitions`
///   times with only `run()` timed, returning one sample per timed run in
///   milliseconds (the CUDA timer records an event pair around each run);
/// * a **restorer** `restorer.clone(args)` returns scratch arguments in which
///   every buffer a candidate may mutate is a private copy, and whose
///   `restore()` copies the originals into those copies again (the timer's
///   `prepare`). So every candidate, every run, sees the same inputs, and the
///   real arguments are written exactly once, by the final real launch.
///
/// Argument types are the caller's (`Arg`): device pointers, tensor handles,
/// a variant. The combined argument list is a `std::span<const Arg>`; a
/// candidate sees a `SlicedArgs<Arg>` view of it, which never allocates.
///
/// Cost after the choice: `operator()` is an atomic acquire load (a plain
/// load on x86, `ldar` on ARMv8), a compare of the chosen index and of the
/// argument count (one predictable branch each), a two-pointer view and the
/// launcher call — no lookup, no allocation, no lock.
/// bench/multi_kernel_bench.cpp measures it against a direct call.
///
/// Thread safety: after the choice, any number of threads may call a
/// dispatcher concurrently (if the launcher allows it). Calls that arrive
/// during the first call wait on a mutex and then use its choice; exactly
/// one thread benchmarks. If choosing fails (every candidate failed), the
/// call returns the diagnostic and the next call tries again.
///
/// Errors: bad plans, bad argument counts and "every candidate failed" are
/// `Diagnostic`s. Exceptions thrown by the launcher, timer or restorer while
/// benchmarking mark that candidate (or the whole benchmark) as failed and
/// become diagnostics; exceptions from a real launch propagate unchanged —
/// the launcher owns its error reporting.

#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/arg_slice.hpp>
#include <wrapir/run/choice_cache.hpp>
#include <wrapir/run/detail/stable_hash.hpp>
#include <wrapir/run/detail/text.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wrapir::run {

// ---------------------------------------------------------------------------
// Specification and plan
// ---------------------------------------------------------------------------

/// A slice `[start, stop)` of the combined argument list, as Python's
/// `slice(start, stop, None)`; the IR's own type (`ir/arg_slice.hpp`, a
/// header of standard types only, so the dispatcher stays free of the IR and
/// expression headers). Unlike Python, out-of-range or reversed bounds are
/// errors, not clamped: Inductor never writes them, so they mean a bug
/// upstream.
using ir::ArgSlice;

/// The shapes of a call or of a size hint: one tuple of dimensions per
/// tensor argument (`ir::ShapeKey`).
using ir::ShapeKey;

/// One alternative kernel.
struct Candidate {
  /// The kernel's name: what the choice registry records and what generated
  /// code calls when it calls the winner directly.
  std::string name;
  /// What makes the kernel itself: its cache key or a hash of its source.
  /// Part of the cache key, so that a changed kernel is benchmarked again.
  /// The executor fills it with the provider's `ProvidedKernel::identity`
  /// (a compiled kernel's cache identity, a loaded binary's bytes), else a
  /// hash of the definition (run/kernel_identity.hpp). Empty means `name`.
  std::string identity{};
  /// Which positions of the combined argument list it receives, in order
  /// (Inductor's `arg_index[i]`).
  std::vector<ArgSlice> args{};
  /// The size hints it was compiled for (part of the cache key).
  std::vector<std::int64_t> size_hints{};
  /// For `SizeHintDispatcher`: the shapes it was tuned for (nullopt: none,
  /// chosen only when no candidate has a hint).
  std::optional<ShapeKey> shape_key{};
};

class MultiKernelPlan;
struct SelectionReport;

/// How the first call chooses.
struct MultiKernelOptions {
  /// Always this candidate: no benchmarking, no cache (Inductor's
  /// `config.triton.multi_kernel = index + 2`).
  std::optional<std::size_t> forced_choice{};
  /// Load and store choices on disk. Also off when
  /// `$WRAPIR_DISABLE_MULTI_KERNEL_CACHE` is `1`.
  bool cache_enabled = true;
  /// The cache directory; nullopt: `default_choice_cache_directory()`.
  std::optional<std::filesystem::path> cache_directory{};
  /// Anything else the timings depend on — device name, driver, compiler
  /// version — mixed into the cache key so machines sharing a directory do
  /// not share choices.
  std::string cache_context{};
  /// Untimed runs per candidate before the timed ones (caches, clocks).
  std::size_t warmup = 3;
  /// Timed runs per candidate; the median counts. At least 1.
  std::size_t repetitions = 25;
  /// Where to record each choice for code generation (not owned; must
  /// outlive the dispatcher). Null: not recorded.
  ChoiceRegistry* registry = nullptr;
  /// Receives warnings (bad cache entries, failed candidates); empty: stderr.
  WarningSink warn{};
  /// Told once per benchmarking dispatcher, when its first call has chosen
  /// (before it launches the choice), how it chose — with every
  /// candidate's timing when it benchmarked. For tools that keep the
  /// measurements with the choice (run/autotune.hpp). What it throws is
  /// reported through `warn` and does not undo the choice. Empty: nobody.
  std::function<void(const MultiKernelPlan&, const SelectionReport&)> on_choice{};
};

/// Everything needed to build a plan.
struct MultiKernelSpec {
  /// The multi-kernel's name (`multi_kernel_0`), for diagnostics and the registry.
  std::string name;
  /// Length of the combined argument list every call passes.
  std::size_t arg_count = 0;
  std::vector<Candidate> candidates{};
};

namespace detail {

/// A validated slice, as offsets.
struct CheckedSlice {
  std::size_t start = 0;
  std::size_t size = 0;
};

/// A candidate's slices, as the hot path reads them.
struct SliceList {
  const CheckedSlice* slices = nullptr;
  std::size_t slice_count = 0;
  std::size_t arg_count = 0;  // sum of the slices' sizes
};

/// Every candidate's slices. Built once and never changed, and shared by
/// copies of a plan, so `lists` (which points into `slices`) and pointers to
/// its elements stay valid as long as any copy of the plan lives.
struct SliceTable {
  std::vector<std::vector<CheckedSlice>> slices;
  std::vector<SliceList> lists;
};

}  // namespace detail

/// The arguments one candidate receives: a view of the combined list
/// through that candidate's slices; valid while the combined list and the
/// plan are. Two pointers, so that it is passed in registers: a by-value
/// struct of more than 16 bytes goes through the stack, which cost clang
/// several nanoseconds of store-forwarding stalls per dispatch.
template <class Arg>
class SlicedArgs {
 public:
  SlicedArgs(const Arg* combined, const detail::SliceList* slices) noexcept : combined_(combined), list_(slices) {}

  [[nodiscard]] std::size_t size() const noexcept { return list_->arg_count; }
  [[nodiscard]] bool empty() const noexcept { return list_->arg_count == 0; }

  /// Argument `i` of this candidate; throws `std::out_of_range` past the end.
  /// Walks the slices (usually one or two); launchers that visit every
  /// argument use `for_each` or `contiguous`.
  [[nodiscard]] const Arg& operator[](std::size_t i) const {
    for (std::size_t k = 0; k < list_->slice_count; ++k) {
      const detail::CheckedSlice& s = list_->slices[k];
      if (i < s.size) return combined_[s.start + i];
      i -= s.size;
    }
    throw std::out_of_range("multi-kernel argument index out of range");
  }

  /// Calls `f(arg)` for every argument in order.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t k = 0; k < list_->slice_count; ++k) {
      const detail::CheckedSlice& s = list_->slices[k];
      for (std::size_t j = 0; j < s.size; ++j) f(combined_[s.start + j]);
    }
  }

  /// The arguments as one span when they are contiguous (one slice, the
  /// common case), else nullopt.
  [[nodiscard]] std::optional<std::span<const Arg>> contiguous() const noexcept {
    if (list_->slice_count == 0) return std::span<const Arg>{};
    if (list_->slice_count != 1) return std::nullopt;
    return std::span<const Arg>(combined_ + list_->slices[0].start, list_->slices[0].size);
  }

  /// A copy of the arguments (allocates; for slow paths and tests).
  [[nodiscard]] std::vector<Arg> to_vector() const {
    std::vector<Arg> out;
    out.reserve(size());
    for_each([&out](const Arg& a) { out.push_back(a); });
    return out;
  }

 private:
  const Arg* combined_;
  const detail::SliceList* list_;
};

/// A validated multi-kernel: candidates with checked slices, options and the
/// cache key. Made only by `make_multi_kernel_plan`, so a plan is always
/// consistent. Copyable; immutable.
class MultiKernelPlan {
 public:
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::size_t arg_count() const noexcept { return arg_count_; }
  [[nodiscard]] std::size_t candidate_count() const noexcept { return candidates_.size(); }
  [[nodiscard]] const std::vector<Candidate>& candidates() const noexcept { return candidates_; }
  [[nodiscard]] const MultiKernelOptions& options() const noexcept { return options_; }
  /// The key of this multi-kernel's cache entry (`multi_kernel_choice_key`).
  [[nodiscard]] ChoiceKey key() const noexcept { return key_; }
  /// Whether the cache is used: enabled in the options and not disabled by
  /// the environment (read when the plan was made).
  [[nodiscard]] bool cache_enabled() const noexcept { return cache_enabled_; }

  /// Candidate `candidate`'s view of `args` (Inductor's `_get_filtered_args`),
  /// checked: a diagnostic for a bad index or argument count.
  template <class Arg>
  [[nodiscard]] Result<SlicedArgs<Arg>> arguments_for(std::size_t candidate, std::span<const Arg> args) const {
    if (candidate >= candidates_.size()) {
      return Diagnostic{prefix() + "candidate " + std::to_string(candidate) + " does not exist (" +
                        std::to_string(candidates_.size()) + " candidates)"};
    }
    if (args.size() != arg_count_) return Diagnostic{argument_count_error(args.size())};
    return SlicedArgs<Arg>(args.data(), slice_list(candidate));
  }

  /// `multi-kernel 'name': `, the start of every diagnostic about this plan.
  [[nodiscard]] std::string prefix() const { return "multi-kernel " + detail::quoted(name_) + ": "; }
  [[nodiscard]] std::string argument_count_error(std::size_t given) const {
    return prefix() + "called with " + std::to_string(given) + " arguments, expected " + std::to_string(arg_count_);
  }
  /// The slices of every candidate, indexed by candidate; valid while this
  /// plan or a copy of it lives.
  [[nodiscard]] const detail::SliceList* slice_lists() const noexcept { return table_->lists.data(); }
  [[nodiscard]] const detail::SliceList* slice_list(std::size_t i) const noexcept { return &table_->lists[i]; }

 private:
  friend Result<MultiKernelPlan> make_multi_kernel_plan(MultiKernelSpec spec, MultiKernelOptions options);
  MultiKernelPlan() = default;

  std::string name_;
  std::size_t arg_count_ = 0;
  std::vector<Candidate> candidates_;
  MultiKernelOptions options_;
  ChoiceKey key_{};
  bool cache_enabled_ = false;
  std::shared_ptr<const detail::SliceTable> table_;
};

/// The cache key of a multi-kernel: a stable hash of the key format version,
/// `options.cache_context`, the argument count and, per candidate in order,
/// its identity (or name), size hints and slices. Not the multi-kernel's
/// name: `multi_kernel_<n>` numbers depend on the order of definition, and
/// the same kernels in another program should share the entry.
[[nodiscard]] inline ChoiceKey multi_kernel_choice_key(const MultiKernelSpec& spec, std::string_view cache_context) {
  detail::StableHasher h;
  h.add_string("wrapir-multi-kernel-key/1").add_string(cache_context).add_u64(spec.arg_count);
  h.add_u64(spec.candidates.size());
  for (const Candidate& c : spec.candidates) {
    h.add_string(c.identity.empty() ? c.name : c.identity).add_i64s(c.size_hints).add_u64(c.args.size());
    for (const ArgSlice& s : c.args) h.add_i64(s.start).add_i64(s.stop);
  }
  return ChoiceKey{h.digest()};
}

/// Validates `spec` and `options` into a plan: at least one candidate, every
/// candidate named, every slice within `[0, arg_count]` with start <= stop,
/// a forced choice naming a candidate, at least one repetition.
[[nodiscard]] inline Result<MultiKernelPlan> make_multi_kernel_plan(MultiKernelSpec spec,
                                                                     MultiKernelOptions options = {}) {
  const std::string prefix = "multi-kernel " + detail::quoted(spec.name) + ": ";
  if (spec.name.empty()) return Diagnostic{"multi-kernel '': a multi-kernel needs a name"};
  if (spec.candidates.empty()) return Diagnostic{prefix + "has no candidates"};
  const std::size_t n = spec.candidates.size();
  if (options.forced_choice && *options.forced_choice >= n) {
    return Diagnostic{prefix + "forced choice " + std::to_string(*options.forced_choice) + " is out of range for " +
                      std::to_string(n) + (n == 1 ? " candidate" : " candidates")};
  }
  if (options.repetitions == 0) return Diagnostic{prefix + "repetitions must be at least 1"};

  MultiKernelPlan plan;
  auto table = std::make_shared<detail::SliceTable>();
  constexpr auto int64_max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  const auto args = static_cast<std::int64_t>(std::min(spec.arg_count, int64_max));
  for (std::size_t i = 0; i < n; ++i) {
    const Candidate& c = spec.candidates[i];
    const std::string where = prefix + "candidate " + std::to_string(i) + " " + detail::quoted(c.name) + ": ";
    if (c.name.empty()) return Diagnostic{prefix + "candidate " + std::to_string(i) + " has no name"};
    std::vector<detail::CheckedSlice> checked;
    std::size_t total = 0;
    for (std::size_t k = 0; k < c.args.size(); ++k) {
      const ArgSlice s = c.args[k];
      const std::string slice = "argument slice " + std::to_string(k) + " [" + std::to_string(s.start) + ", " +
                                std::to_string(s.stop) + ")";
      if (s.start < 0 || s.stop < 0) return Diagnostic{where + slice + " has a negative bound"};
      if (s.start > s.stop) return Diagnostic{where + slice + " starts after it stops"};
      if (s.stop > args) {
        return Diagnostic{where + slice + " ends past the " + std::to_string(spec.arg_count) + " arguments"};
      }
      checked.push_back({static_cast<std::size_t>(s.start), static_cast<std::size_t>(s.stop - s.start)});
      total += static_cast<std::size_t>(s.stop - s.start);
    }
    table->slices.push_back(std::move(checked));
    table->lists.push_back({nullptr, 0, total});
  }
  for (std::size_t i = 0; i < n; ++i) {
    table->lists[i].slices = table->slices[i].data();
    table->lists[i].slice_count = table->slices[i].size();
  }
  plan.table_ = std::move(table);
  plan.key_ = multi_kernel_choice_key(spec, options.cache_context);
  plan.cache_enabled_ = options.cache_enabled && !cache_disabled_by_environment();
  plan.name_ = std::move(spec.name);
  plan.arg_count_ = spec.arg_count;
  plan.candidates_ = std::move(spec.candidates);
  plan.options_ = std::move(options);
  return plan;
}

// ---------------------------------------------------------------------------
// Backend concepts
// ---------------------------------------------------------------------------

/// What a timer is asked to do for one candidate.
struct BenchmarkPlan {
  std::size_t candidate = 0;
  std::size_t warmup = 0;
  std::size_t repetitions = 0;
};

namespace detail {
/// Stands for the prepare/run callables in the timer concept.
struct ProbeAction {
  void operator()() const noexcept {}
};
}  // namespace detail

/// Launches candidate `i` with its arguments. Returns nothing: a launcher
/// reports a failed launch by throwing (a status the dispatcher would have
/// to drop is refused at compile time).
template <class L, class Arg>
concept CandidateLauncher = std::invocable<L&, std::size_t, SlicedArgs<Arg>> &&
                            std::same_as<std::invoke_result_t<L&, std::size_t, SlicedArgs<Arg>>, void>;

/// Times a run (see the file comment for the contract): returns one sample
/// per timed run, in milliseconds. A failed measurement may be NaN or
/// negative or throw; that candidate is then not chosen.
template <class T>
concept BenchmarkTimer =
    requires(T& timer, const BenchmarkPlan& plan, detail::ProbeAction& prepare, detail::ProbeAction& run) {
      { timer(plan, prepare, run) } -> std::convertible_to<std::vector<double>>;
    };

/// The scratch arguments of one benchmark: `args()` has the combined
/// argument count, mutated buffers replaced by private copies; `restore()`
/// resets those copies to the originals' contents.
template <class S, class Arg>
concept ScratchArguments = requires(S& scratch, const S& const_scratch) {
  { const_scratch.args() } -> std::convertible_to<std::span<const Arg>>;
  scratch.restore();
};

/// Makes scratch arguments for a benchmark.
template <class R, class Arg>
concept ArgumentRestorer = requires(R& restorer, std::span<const Arg> args) {
  { restorer.clone(args) } -> ScratchArguments<Arg>;
};

/// Benchmarks on the real arguments, restoring nothing. Only for candidates
/// that write nothing they read: their outputs are overwritten by the final
/// real launch, but an in-place update would be applied once per run.
struct NoRestore {
  template <class Arg>
  struct Scratch {
    std::span<const Arg> arguments;
    [[nodiscard]] std::span<const Arg> args() const noexcept { return arguments; }
    void restore() const noexcept {}
  };
  template <class Arg>
  [[nodiscard]] Scratch<Arg> clone(std::span<const Arg> args) const noexcept {
    return Scratch<Arg>{args};
  }
};

/// Restore semantics from three callbacks, for the arguments at the given
/// positions (the buffers some candidate mutates):
///
/// * `clone(const Arg&) -> Arg`: a new buffer with the same contents;
/// * `copy(const Arg& from, const Arg& to)`: copies contents;
/// * `release(const Arg&)`: frees a clone (also on errors; must not throw).
///
/// The CUDA backend implements the concept directly (`cuda::DeviceRestorer`):
/// it needs each position's byte size, RAII ownership of the copies, and one
/// copy per aliased address.
template <class Arg, class Clone, class Copy, class Release>
class CloningRestorer {
 public:
  /// `mutated` may be in any order and repeat; it is checked against the
  /// argument count when cloning.
  CloningRestorer(std::vector<std::size_t> mutated, Clone clone, Copy copy, Release release)
      : mutated_(std::move(mutated)), clone_(std::move(clone)), copy_(std::move(copy)), release_(std::move(release)) {
    std::sort(mutated_.begin(), mutated_.end());
    mutated_.erase(std::unique(mutated_.begin(), mutated_.end()), mutated_.end());
  }

  class Scratch {
   public:
    Scratch(const CloningRestorer& owner, std::span<const Arg> originals)
        : owner_(&owner), originals_(originals), args_(originals.begin(), originals.end()) {}
    Scratch(Scratch&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)),
          originals_(other.originals_),
          args_(std::move(other.args_)),
          cloned_(std::move(other.cloned_)) {}
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    Scratch& operator=(Scratch&&) = delete;
    ~Scratch() {
      if (owner_ == nullptr) return;
      for (const std::size_t i : cloned_) owner_->release_(args_[i]);
    }

    [[nodiscard]] std::span<const Arg> args() const noexcept { return args_; }
    void restore() {
      for (const std::size_t i : cloned_) owner_->copy_(originals_[i], args_[i]);
    }

   private:
    friend class CloningRestorer;
    const CloningRestorer* owner_;
    std::span<const Arg> originals_;
    std::vector<Arg> args_;
    std::vector<std::size_t> cloned_{};
  };

  /// Copies of the mutated arguments in place of the originals. Throws
  /// `std::out_of_range` for a position past `args` (the dispatcher turns it
  /// into a diagnostic) and releases what it cloned when anything throws.
  [[nodiscard]] Scratch clone(std::span<const Arg> args) const {
    Scratch scratch(*this, args);
    for (const std::size_t i : mutated_) {
      if (i >= args.size()) {
        throw std::out_of_range("mutated argument position " + std::to_string(i) + " is out of range for " +
                                std::to_string(args.size()) + " arguments");
      }
      scratch.args_[i] = clone_(args[i]);
      scratch.cloned_.push_back(i);
    }
    return scratch;
  }

  [[nodiscard]] const std::vector<std::size_t>& mutated() const noexcept { return mutated_; }

 private:
  std::vector<std::size_t> mutated_;
  Clone clone_;
  Copy copy_;
  Release release_;
};

/// Times each run with `std::chrono::steady_clock`: right for kernels that
/// run synchronously on the host (the CPU backend), wrong for asynchronous
/// GPU launches (which need device events).
struct SteadyClockTimer {
  template <class Prepare, class Run>
  std::vector<double> operator()(const BenchmarkPlan& plan, Prepare&& prepare, Run&& run) const {
    for (std::size_t i = 0; i < plan.warmup; ++i) {
      prepare();
      run();
    }
    std::vector<double> samples;
    samples.reserve(plan.repetitions);
    for (std::size_t i = 0; i < plan.repetitions; ++i) {
      prepare();
      const auto start = std::chrono::steady_clock::now();
      run();
      const auto stop = std::chrono::steady_clock::now();
      samples.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    }
    return samples;
  }
};

// ---------------------------------------------------------------------------
// Selection
// ---------------------------------------------------------------------------

/// The median of `samples` (the mean of the middle two for an even count),
/// or why there is none: no samples, or a NaN, infinite or negative sample
/// (a broken measurement disqualifies the whole candidate rather than being
/// dropped, since it says the run itself may be broken).
[[nodiscard]] inline Result<double> median_milliseconds(std::vector<double> samples) {
  if (samples.empty()) return Diagnostic{"the timer returned no samples"};
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double s = samples[i];
    const std::string which = "timing sample " + std::to_string(i) + " ";
    if (std::isnan(s)) return Diagnostic{which + "is NaN"};
    if (std::isinf(s)) return Diagnostic{which + "is infinite"};
    if (s < 0) return Diagnostic{which + "is negative (" + std::to_string(s) + " ms)"};
  }
  const std::size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid), samples.end());
  const double upper = samples[mid];
  if (samples.size() % 2 == 1) return upper;
  const double lower = *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + (upper - lower) / 2;
}

/// One candidate's benchmark result: its median, or why it failed.
struct CandidateTiming {
  std::optional<double> median_ms{};
  std::string failure{};
  friend bool operator==(const CandidateTiming&, const CandidateTiming&) = default;
};

/// The fastest candidate: the smallest finite non-negative median; on a tie
/// the lowest index (deterministic across runs and machines). Nullopt when
/// every candidate failed.
[[nodiscard]] inline std::optional<std::size_t> pick_fastest(std::span<const CandidateTiming> timings) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const std::optional<double>& m = timings[i].median_ms;
    if (!m || !std::isfinite(*m) || *m < 0) continue;
    if (!best || *m < *timings[*best].median_ms) best = i;
  }
  return best;
}

/// How a choice was made.
enum class ChoiceSource : std::uint8_t { forced, single_candidate, cache, benchmark, shape };

[[nodiscard]] constexpr std::string_view choice_source_name(ChoiceSource s) noexcept {
  switch (s) {
    case ChoiceSource::forced: return "forced";
    case ChoiceSource::single_candidate: return "single candidate";
    case ChoiceSource::cache: return "cache";
    case ChoiceSource::benchmark: return "benchmark";
    case ChoiceSource::shape: return "shape";
  }
  return "<invalid choice source>";
}

/// What the first call decided and why; `timings` is filled (one per
/// candidate) only when it benchmarked.
struct SelectionReport {
  std::size_t choice = 0;
  ChoiceSource source = ChoiceSource::benchmark;
  std::vector<CandidateTiming> timings{};
};

namespace detail {

inline void warn(const MultiKernelOptions& options, const std::string& message) {
  if (options.warn) {
    options.warn(message);
  } else {
    warn_to_stderr(message);
  }
}

/// Records candidate `choice` of `plan` in the options' registry, if any.
inline void record_choice(const MultiKernelPlan& plan, std::size_t choice) {
  ChoiceRegistry* registry = plan.options().registry;
  if (registry == nullptr) return;
  if (const Result<void> recorded = registry->record(plan.name(), plan.candidates()[choice].name); !recorded) {
    warn(plan.options(), recorded.error().message);
  }
}

inline constexpr std::size_t no_choice = std::numeric_limits<std::size_t>::max();

}  // namespace detail

// ---------------------------------------------------------------------------
// Benchmarking dispatcher
// ---------------------------------------------------------------------------

/// A multi-kernel that benchmarks its candidates on the first call (see the
/// file comment). Neither copyable nor movable (it owns an atomic and a
/// mutex); `make_multi_kernel_dispatcher<Arg>(...)` returns one by guaranteed
/// elision.
template <class Arg, CandidateLauncher<Arg> Launcher, BenchmarkTimer Timer, ArgumentRestorer<Arg> Restorer>
class MultiKernelDispatcher {
 public:
  MultiKernelDispatcher(MultiKernelPlan plan, Launcher launcher, Timer timer, Restorer restorer)
      : plan_(std::move(plan)),
        launcher_(std::move(launcher)),
        timer_(std::move(timer)),
        restorer_(std::move(restorer)),
        cache_(cache_directory(plan_), plan_.options().warn),
        lists_(plan_.slice_lists()) {}
  MultiKernelDispatcher(const MultiKernelDispatcher&) = delete;
  MultiKernelDispatcher& operator=(const MultiKernelDispatcher&) = delete;

  /// Launches the chosen candidate with `args` (the combined list), choosing
  /// first if needed. Returns the index launched, or why nothing was.
  Result<std::size_t> operator()(std::span<const Arg> args) {
    const std::size_t chosen = chosen_.load(std::memory_order_acquire);
    if (chosen != detail::no_choice && args.size() == plan_.arg_count()) [[likely]] {
      launcher_(chosen, SlicedArgs<Arg>(args.data(), lists_ + chosen));
      return chosen;
    }
    return first_call(args);
  }

  /// The chosen candidate, once chosen.
  [[nodiscard]] std::optional<std::size_t> chosen() const noexcept {
    const std::size_t c = chosen_.load(std::memory_order_acquire);
    return c == detail::no_choice ? std::nullopt : std::optional<std::size_t>(c);
  }

  /// How the choice was made, once chosen.
  [[nodiscard]] std::optional<SelectionReport> selection() const {
    if (!chosen()) return std::nullopt;
    return report_;  // written before chosen_ was published, never after
  }

  [[nodiscard]] const MultiKernelPlan& plan() const noexcept { return plan_; }
  [[nodiscard]] const ChoiceCache& cache() const noexcept { return cache_; }
  [[nodiscard]] Launcher& launcher() noexcept { return launcher_; }

 private:
  Result<std::size_t> first_call(std::span<const Arg> args) {
    if (args.size() != plan_.arg_count()) return Diagnostic{plan_.argument_count_error(args.size())};
    std::size_t chosen = detail::no_choice;
    {
      const std::scoped_lock lock(choose_mutex_);
      chosen = chosen_.load(std::memory_order_relaxed);
      if (chosen == detail::no_choice) {
        Result<SelectionReport> report = choose(args);
        if (!report) return report.error();
        chosen = report->choice;
        report_ = std::move(report).value();
        detail::record_choice(plan_, chosen);
        tell_choice();
        chosen_.store(chosen, std::memory_order_release);
      }
    }
    launcher_(chosen, SlicedArgs<Arg>(args.data(), lists_ + chosen));
    return chosen;
  }

  void tell_choice() const {
    if (!plan_.options().on_choice) return;
    try {
      plan_.options().on_choice(plan_, report_);
    } catch (const std::exception& e) {
      detail::warn(plan_.options(), plan_.prefix() + "the on_choice callback threw: " + e.what());
    }
  }

  Result<SelectionReport> choose(std::span<const Arg> args) {
    const std::size_t n = plan_.candidate_count();
    if (const auto forced = plan_.options().forced_choice) return SelectionReport{*forced, ChoiceSource::forced, {}};
    if (n == 1) return SelectionReport{0, ChoiceSource::single_candidate, {}};
    if (plan_.cache_enabled()) {
      if (const auto cached = cache_.load(plan_.key(), n)) return SelectionReport{*cached, ChoiceSource::cache, {}};
    }
    Result<std::vector<CandidateTiming>> timings = benchmark(args);
    if (!timings) return timings.error();
    const std::optional<std::size_t> best = pick_fastest(*timings);
    if (!best) {
      std::string message = plan_.prefix() + "every candidate failed to benchmark:";
      for (std::size_t i = 0; i < n; ++i) message += " " + describe(i) + ": " + (*timings)[i].failure + ";";
      message.pop_back();
      return Diagnostic{std::move(message)};
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!(*timings)[i].median_ms) {
        detail::warn(plan_.options(), plan_.prefix() + describe(i) + " failed to benchmark: " +
                                          (*timings)[i].failure + "; choosing among the others");
      }
    }
    if (plan_.cache_enabled()) cache_.store(plan_.key(), n, *best);
    return SelectionReport{*best, ChoiceSource::benchmark, std::move(timings).value()};
  }

  Result<std::vector<CandidateTiming>> benchmark(std::span<const Arg> args) {
    const std::size_t n = plan_.candidate_count();
    std::vector<CandidateTiming> timings(n);
    try {
      auto scratch = restorer_.clone(args);
      const std::span<const Arg> scratch_args = std::as_const(scratch).args();
      if (scratch_args.size() != args.size()) {
        return Diagnostic{plan_.prefix() + "the argument restorer returned " + std::to_string(scratch_args.size()) +
                          " arguments for " + std::to_string(args.size())};
      }
      for (std::size_t i = 0; i < n; ++i) {
        const SlicedArgs<Arg> view(scratch_args.data(), lists_ + i);
        auto prepare = [&scratch] { scratch.restore(); };
        auto run = [this, i, &view] { launcher_(i, view); };
        try {
          Result<double> median = median_milliseconds(
              timer_(BenchmarkPlan{i, plan_.options().warmup, plan_.options().repetitions}, prepare, run));
          timings[i] = median ? CandidateTiming{*median, {}} : CandidateTiming{std::nullopt, median.error().message};
        } catch (const std::exception& e) {
          timings[i] = CandidateTiming{std::nullopt, std::string("benchmarking threw: ") + e.what()};
        } catch (const wrapir::detail::Failure& f) {  // a launcher that reports with detail::fail (the executor's)
          timings[i] = CandidateTiming{std::nullopt, f.diagnostic.message};
        }
      }
    } catch (const std::exception& e) {
      return Diagnostic{plan_.prefix() + "copying the arguments for benchmarking failed: " + e.what()};
    } catch (const wrapir::detail::Failure& f) {
      return Diagnostic{plan_.prefix() + "copying the arguments for benchmarking failed: " + f.diagnostic.message};
    }
    return timings;
  }

  /// The options' directory, else the default one (not computed when the
  /// cache is off: it reads the environment).
  [[nodiscard]] static std::filesystem::path cache_directory(const MultiKernelPlan& plan) {
    if (plan.options().cache_directory) return *plan.options().cache_directory;
    return plan.cache_enabled() ? default_choice_cache_directory() : std::filesystem::path{};
  }

  [[nodiscard]] std::string describe(std::size_t i) const {
    return "candidate " + std::to_string(i) + " " + detail::quoted(plan_.candidates()[i].name);
  }

  MultiKernelPlan plan_;
  Launcher launcher_;
  Timer timer_;
  Restorer restorer_;
  ChoiceCache cache_;
  const detail::SliceList* lists_;  // plan_'s, by candidate
  std::atomic<std::size_t> chosen_{detail::no_choice};
  std::mutex choose_mutex_;
  SelectionReport report_{};
};

/// `MultiKernelDispatcher<Arg, ...>` with the other types deduced.
template <class Arg, CandidateLauncher<Arg> Launcher, BenchmarkTimer Timer, ArgumentRestorer<Arg> Restorer>
[[nodiscard]] MultiKernelDispatcher<Arg, Launcher, Timer, Restorer> make_multi_kernel_dispatcher(MultiKernelPlan plan,
                                                                                               Launcher launcher,
                                                                                               Timer timer,
                                                                                               Restorer restorer) {
  return MultiKernelDispatcher<Arg, Launcher, Timer, Restorer>(std::move(plan), std::move(launcher), std::move(timer),
                                                               std::move(restorer));
}

// ---------------------------------------------------------------------------
// Size-hint dispatcher (reference §5.4)
// ---------------------------------------------------------------------------

/// The distance of a hint to no hint: larger than any real distance
/// (Inductor's `2**62`).
inline constexpr double no_hint_distance = 4611686018427387904.0;  // 2^62

/// Inductor's `_dist_heuristic`: the sum over paired shapes of the sum over
/// paired dimensions of `|log2 x - log2 y|`, where log2 of a non-positive
/// value is taken as -1. Pairs stop at the shorter list (Python's `zip`),
/// so extra shapes or dimensions cost nothing.
[[nodiscard]] inline double shape_distance(const ShapeKey& a, const ShapeKey& b) noexcept {
  auto log2_or_minus_one = [](std::int64_t x) { return x > 0 ? std::log2(static_cast<double>(x)) : -1.0; };
  double total = 0;
  for (std::size_t s = 0; s < std::min(a.size(), b.size()); ++s) {
    for (std::size_t d = 0; d < std::min(a[s].size(), b[s].size()); ++d) {
      total += std::abs(log2_or_minus_one(a[s][d]) - log2_or_minus_one(b[s][d]));
    }
  }
  return total;
}

/// The candidate whose hint is nearest to `shapes` (no hint: `no_hint_distance`);
/// on a tie the lowest index. `hints` must not be empty (returns 0 then).
[[nodiscard]] inline std::size_t pick_by_shape(std::span<const std::optional<ShapeKey>> hints, const ShapeKey& shapes) {
  std::size_t best = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < hints.size(); ++i) {
    const double d = hints[i] ? shape_distance(shapes, *hints[i]) : no_hint_distance;
    if (d < best_distance) {
      best = i;
      best_distance = d;
    }
  }
  return best;
}

namespace detail {
struct ShapeKeyHash {
  std::size_t operator()(const ShapeKey& shapes) const noexcept {
    StableHasher h;
    h.add_u64(shapes.size());
    for (const auto& shape : shapes) h.add_i64s(shape);
    return static_cast<std::size_t>(h.digest());
  }
};
}  // namespace detail

/// A multi-kernel that picks by the call's shapes (see the file comment).
/// Uses the plan's candidates' `shape_key`s, its forced choice (which wins
/// over shapes) and its registry; ignores the cache and timing options.
/// Every call looks its shapes up in a per-shape map under a shared lock —
/// inherent to choosing per shape; the map grows by one entry per distinct
/// shape seen. The registry records the first choice only. Thread-safe.
template <class Arg, CandidateLauncher<Arg> Launcher>
class SizeHintDispatcher {
 public:
  SizeHintDispatcher(MultiKernelPlan plan, Launcher launcher)
      : plan_(std::move(plan)), launcher_(std::move(launcher)), lists_(plan_.slice_lists()) {
    hints_.reserve(plan_.candidate_count());
    for (const Candidate& c : plan_.candidates()) hints_.push_back(c.shape_key);
  }
  SizeHintDispatcher(const SizeHintDispatcher&) = delete;
  SizeHintDispatcher& operator=(const SizeHintDispatcher&) = delete;

  /// Launches the candidate chosen for `shapes` (the shapes of the call's
  /// tensor arguments, in order) with `args`. Returns the index launched.
  Result<std::size_t> operator()(std::span<const Arg> args, const ShapeKey& shapes) {
    if (args.size() != plan_.arg_count()) return Diagnostic{plan_.argument_count_error(args.size())};
    const std::size_t chosen = choice_for(shapes);
    std::call_once(recorded_, [&] { detail::record_choice(plan_, chosen); });
    launcher_(chosen, SlicedArgs<Arg>(args.data(), lists_ + chosen));
    return chosen;
  }

  /// The choice for `shapes`, made and remembered now if it was not yet.
  [[nodiscard]] std::size_t choice_for(const ShapeKey& shapes) {
    if (const auto forced = plan_.options().forced_choice) return *forced;
    {
      const std::shared_lock lock(shape_mutex_);
      if (const auto it = choices_.find(shapes); it != choices_.end()) return it->second;
    }
    const std::size_t picked = pick_by_shape(hints_, shapes);
    const std::unique_lock lock(shape_mutex_);
    return choices_.try_emplace(shapes, picked).first->second;
  }

  /// How many distinct shapes have a remembered choice.
  [[nodiscard]] std::size_t cached_shape_count() const {
    const std::shared_lock lock(shape_mutex_);
    return choices_.size();
  }

  [[nodiscard]] const MultiKernelPlan& plan() const noexcept { return plan_; }
  [[nodiscard]] Launcher& launcher() noexcept { return launcher_; }

 private:
  MultiKernelPlan plan_;
  Launcher launcher_;
  const detail::SliceList* lists_;  // plan_'s, by candidate
  std::vector<std::optional<ShapeKey>> hints_;
  mutable std::shared_mutex shape_mutex_;
  std::unordered_map<ShapeKey, std::size_t, detail::ShapeKeyHash> choices_;
  std::once_flag recorded_;
};

}  // namespace wrapir::run
