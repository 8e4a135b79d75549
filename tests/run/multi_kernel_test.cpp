// Tests of include/wrapir/run/multi_kernel.hpp with fake launchers and
// scripted timers: plan validation, argument slicing, the median and the
// choice rules (ties, NaN, failures, one candidate, forced), the disk cache
// round trip and its corrupt entries, restore semantics (every candidate sees
// the same inputs; the real arguments are written exactly once), concurrent
// first calls, the cache key, and the size-hint variant.

#include <wrapir/run/choice_cache.hpp>
#include <wrapir/run/multi_kernel.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

// The dispatcher and the IR share one ArgSlice and one ShapeKey
// (ir/arg_slice.hpp), without the dispatcher including the IR.
static_assert(std::is_same_v<wrapir::run::ArgSlice, wrapir::ir::ArgSlice>);
static_assert(std::is_same_v<wrapir::run::ShapeKey, wrapir::ir::ShapeKey>);

namespace {

namespace fs = std::filesystem;
using namespace wrapir::run;
using wrapir::Diagnostic;
using wrapir::Result;

constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device random;
    const fs::path base = fs::temp_directory_path();
    for (int attempt = 0;; ++attempt) {
      path = base / ("wrapir-multi-kernel-test-" + std::to_string(random()) + "-" + std::to_string(random()));
      if (fs::create_directory(path)) break;
      REQUIRE(attempt < 100);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  [[nodiscard]] std::size_t file_count() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(path)) ++n;
    return n;
  }
};

/// What the fakes saw: launches in order, timer calls, warnings.
struct Log {
  std::mutex mutex;
  std::vector<std::pair<std::size_t, std::vector<int>>> launches;
  std::vector<std::size_t> timed;  // candidate of each timer call
  std::vector<std::string> warnings;
  std::atomic<int> launch_count{0};

  WarningSink sink() {
    return [this](std::string_view m) {
      const std::scoped_lock lock(mutex);
      warnings.emplace_back(m);
    };
  }
  std::size_t launches_of(std::size_t candidate) {
    const std::scoped_lock lock(mutex);
    std::size_t n = 0;
    for (const auto& l : launches) n += l.first == candidate ? 1 : 0;
    return n;
  }
};

/// Launches nothing; records the candidate and the arguments it received.
struct RecordingLauncher {
  Log* log;
  void operator()(std::size_t candidate, SlicedArgs<int> args) const {
    const std::scoped_lock lock(log->mutex);
    log->launches.emplace_back(candidate, args.to_vector());
    ++log->launch_count;
  }
};

/// Follows the timer contract (prepare before every run, warm-up untimed)
/// and returns scripted samples; a candidate without a script throws.
struct ScriptedTimer {
  Log* log;
  std::map<std::size_t, std::vector<double>> samples;
  template <class Prepare, class Run>
  std::vector<double> operator()(const BenchmarkPlan& plan, Prepare&& prepare, Run&& run) const {
    {
      const std::scoped_lock lock(log->mutex);
      log->timed.push_back(plan.candidate);
    }
    for (std::size_t i = 0; i < plan.warmup + plan.repetitions; ++i) {
      prepare();
      run();
    }
    const auto it = samples.find(plan.candidate);
    if (it == samples.end()) throw std::runtime_error("no timing scripted");
    return it->second;
  }
};

static_assert(CandidateLauncher<RecordingLauncher, int>);
static_assert(BenchmarkTimer<ScriptedTimer>);
static_assert(BenchmarkTimer<SteadyClockTimer>);
static_assert(ArgumentRestorer<NoRestore, int>);
static_assert(!CandidateLauncher<int, int>);
// A launcher must not return a status the dispatcher would drop.
static_assert(!CandidateLauncher<int (*)(std::size_t, SlicedArgs<int>), int>);
static_assert(CandidateLauncher<void (*)(std::size_t, SlicedArgs<int>), int>);

/// Two candidates over five int arguments, each taking all of them.
MultiKernelSpec two_candidates(std::string identity_suffix = "") {
  return MultiKernelSpec{"multi_kernel_0",
                         5,
                         {Candidate{"triton_red_fused_sum_0", "red-source" + identity_suffix, {{0, 5}}, {1024, 64}},
                          Candidate{"triton_per_fused_sum_1", "per-source" + identity_suffix, {{0, 5}}, {1024, 64}}}};
}

MultiKernelPlan plan_of(MultiKernelSpec spec, MultiKernelOptions options) {
  Result<MultiKernelPlan> plan = make_multi_kernel_plan(std::move(spec), std::move(options));
  REQUIRE_MESSAGE(plan.ok(), (plan.ok() ? "" : plan.error().message));
  return std::move(plan).value();
}

/// Options with the cache in `dir`, warnings into `log`, few repetitions.
MultiKernelOptions options_in(const TempDir& dir, Log& log) {
  MultiKernelOptions o;
  o.cache_directory = dir.path;
  o.warn = log.sink();
  o.warmup = 2;
  o.repetitions = 3;
  return o;
}

auto dispatcher(MultiKernelPlan plan, Log& log, std::map<std::size_t, std::vector<double>> samples) {
  return make_multi_kernel_dispatcher<int>(std::move(plan), RecordingLauncher{&log},
                                           ScriptedTimer{&log, std::move(samples)}, NoRestore{});
}

const std::vector<int> five_args{10, 11, 12, 13, 14};

std::string plan_error(MultiKernelSpec spec, MultiKernelOptions options = {}) {
  const Result<MultiKernelPlan> plan = make_multi_kernel_plan(std::move(spec), std::move(options));
  REQUIRE_FALSE(plan.ok());
  return plan.error().message;
}

/// The environment must not switch the cache off under these tests.
struct CacheNotDisabledByEnvironment {
  CacheNotDisabledByEnvironment() {
#if defined(__unix__) || defined(__APPLE__)
    ::unsetenv(disable_cache_variable);
#endif
  }
};

}  // namespace

// ---------------------------------------------------------------------------
// Plans and argument slices
// ---------------------------------------------------------------------------

TEST_CASE("multi-kernel plan: bad specifications get clear diagnostics") {
  CHECK(plan_error(MultiKernelSpec{"", 1, {Candidate{"k"}}}) == "multi-kernel '': a multi-kernel needs a name");
  CHECK(plan_error(MultiKernelSpec{"mk", 1, {}}) == "multi-kernel 'mk': has no candidates");
  CHECK(plan_error(MultiKernelSpec{"mk", 1, {Candidate{"k"}, Candidate{""}}}) ==
        "multi-kernel 'mk': candidate 1 has no name");
  CHECK(plan_error(MultiKernelSpec{"mk", 5, {Candidate{"k", "", {{0, 5}, {3, 7}}}}}) ==
        "multi-kernel 'mk': candidate 0 'k': argument slice 1 [3, 7) ends past the 5 arguments");
  CHECK(plan_error(MultiKernelSpec{"mk", 5, {Candidate{"k", "", {{4, 2}}}}}) ==
        "multi-kernel 'mk': candidate 0 'k': argument slice 0 [4, 2) starts after it stops");
  CHECK(plan_error(MultiKernelSpec{"mk", 5, {Candidate{"k", "", {{-1, 2}}}}}) ==
        "multi-kernel 'mk': candidate 0 'k': argument slice 0 [-1, 2) has a negative bound");
  MultiKernelOptions forced;
  forced.forced_choice = 2;
  CHECK(plan_error(two_candidates(), forced) == "multi-kernel 'multi_kernel_0': forced choice 2 is out of range for 2 "
                                                "candidates");
  MultiKernelOptions no_repetitions;
  no_repetitions.repetitions = 0;
  CHECK(plan_error(two_candidates(), no_repetitions) ==
        "multi-kernel 'multi_kernel_0': repetitions must be at least 1");
  // A hostile name cannot break the diagnostic's line.
  CHECK(plan_error(MultiKernelSpec{"a\nb", 1, {}}) == "multi-kernel 'a\\x0ab': has no candidates");

  // Edge slices are fine: empty, and ending exactly at the argument count.
  CHECK(make_multi_kernel_plan(MultiKernelSpec{"mk", 5, {Candidate{"k", "", {{5, 5}, {0, 5}}}}}).ok());
}

TEST_CASE("multi-kernel plan: arg_index slices select and concatenate arguments") {
  // Inductor's template form: common args [0, 2) plus each kernel's own extra args.
  const MultiKernelPlan plan = plan_of(
      MultiKernelSpec{"mk", 5, {Candidate{"k0", "", {{0, 2}, {2, 3}}}, Candidate{"k1", "", {{0, 2}, {3, 5}}},
                                Candidate{"k2", "", {}}}},
      {});
  const std::span<const int> args(five_args);
  auto k0 = plan.arguments_for<int>(0, args);
  auto k1 = plan.arguments_for<int>(1, args);
  auto k2 = plan.arguments_for<int>(2, args);
  REQUIRE(k0.ok());
  REQUIRE(k1.ok());
  REQUIRE(k2.ok());
  CHECK(k0->to_vector() == std::vector<int>{10, 11, 12});
  CHECK(k1->to_vector() == std::vector<int>{10, 11, 13, 14});
  CHECK(k1->size() == 4);
  CHECK((*k1)[2] == 13);
  CHECK((*k1)[3] == 14);
  CHECK_THROWS_AS((void)(*k1)[4], std::out_of_range);
  CHECK_FALSE(k1->contiguous());
  CHECK(k2->empty());
  REQUIRE(k2->contiguous());
  CHECK(k2->contiguous()->empty());

  const MultiKernelPlan single = plan_of(MultiKernelSpec{"mk", 5, {Candidate{"k", "", {{1, 4}}}}}, {});
  const auto view = single.arguments_for<int>(0, args);
  REQUIRE(view.ok());
  REQUIRE(view->contiguous());
  CHECK(view->contiguous()->data() == five_args.data() + 1);
  CHECK(view->contiguous()->size() == 3);

  // Views made through a copy stay valid after the original is gone (the
  // slices are shared, not pointed into a dead plan; ASan checks this).
  std::optional<MultiKernelPlan> original = plan;
  const MultiKernelPlan copy = *original;
  original.reset();
  CHECK(copy.arguments_for<int>(1, args)->to_vector() == std::vector<int>{10, 11, 13, 14});

  CHECK(plan.arguments_for<int>(3, args).error().message ==
        "multi-kernel 'mk': candidate 3 does not exist (3 candidates)");
  CHECK(plan.arguments_for<int>(0, args.first(4)).error().message ==
        "multi-kernel 'mk': called with 4 arguments, expected 5");
}

// ---------------------------------------------------------------------------
// Median and choice rules
// ---------------------------------------------------------------------------

TEST_CASE("multi-kernel selection: median of samples") {
  CHECK(median_milliseconds({3.0}) == 3.0);
  CHECK(median_milliseconds({5.0, 1.0, 3.0}) == 3.0);
  CHECK(median_milliseconds({4.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(median_milliseconds({0.0, 0.0}) == 0.0);
  CHECK(median_milliseconds({}).error().message == "the timer returned no samples");
  CHECK(median_milliseconds({1.0, not_a_number}).error().message == "timing sample 1 is NaN");
  CHECK(median_milliseconds({inf, 1.0}).error().message == "timing sample 0 is infinite");
  CHECK(median_milliseconds({1.0, 2.0, -0.5}).error().message == "timing sample 2 is negative (-0.500000 ms)");
}

TEST_CASE("multi-kernel selection: fastest median, ties to the lowest index, failures skipped") {
  using T = CandidateTiming;
  const std::vector<T> plain{T{3.0, {}}, T{1.0, {}}, T{2.0, {}}};
  CHECK(pick_fastest(plain) == 1U);
  const std::vector<T> tie{T{2.0, {}}, T{1.0, {}}, T{1.0, {}}};
  CHECK(pick_fastest(tie) == 1U);
  const std::vector<T> first_fails{T{std::nullopt, "NaN"}, T{5.0, {}}};
  CHECK(pick_fastest(first_fails) == 1U);
  // Medians that should never have been produced are still not chosen.
  const std::vector<T> broken{T{not_a_number, {}}, T{-1.0, {}}, T{inf, {}}, T{7.0, {}}};
  CHECK(pick_fastest(broken) == 3U);
  const std::vector<T> zero{T{1.0, {}}, T{0.0, {}}};
  CHECK(pick_fastest(zero) == 1U);
  const std::vector<T> all_fail{T{std::nullopt, "a"}, T{not_a_number, {}}};
  CHECK_FALSE(pick_fastest(all_fail));
  CHECK_FALSE(pick_fastest({}));
}

// ---------------------------------------------------------------------------
// The benchmarking dispatcher
// ---------------------------------------------------------------------------

TEST_CASE("multi-kernel dispatch: benchmarks once, picks the fastest median, then launches it directly") {
  const CacheNotDisabledByEnvironment env;
  TempDir dir;
  Log log;
  ChoiceRegistry registry;
  MultiKernelOptions options = options_in(dir, log);
  options.registry = &registry;
  // By minimum candidate 0 would win, by mean too; by median candidate 1 does.
  auto mk = dispatcher(plan_of(two_candidates(), options), log, {{0, {1.0, 5.0, 6.0}}, {1, {3.0, 3.0, 10.0}}});
  CHECK_FALSE(mk.chosen());
  CHECK_FALSE(mk.selection());

  const Result<std::size_t> first = mk(five_args);
  REQUIRE(first.ok());
  CHECK(*first == 1);
  CHECK(log.timed == std::vector<std::size_t>{0, 1});
  // warm-up + repetitions benchmark runs each, plus one real launch of the winner.
  CHECK(log.launches_of(0) == 5);
  CHECK(log.launches_of(1) == 6);
  CHECK(log.launches.back() == std::pair<std::size_t, std::vector<int>>{1, five_args});

  const auto report = mk.selection();
  REQUIRE(report);
  CHECK(report->choice == 1);
  CHECK(report->source == ChoiceSource::benchmark);
  CHECK(report->timings == std::vector<CandidateTiming>{{5.0, {}}, {3.0, {}}});
  CHECK(registry.lookup("multi_kernel_0") == std::string("triton_per_fused_sum_1"));

  for (int i = 0; i < 10; ++i) CHECK(mk(five_args) == 1U);
  CHECK(log.timed.size() == 2);  // no more benchmarking
  CHECK(log.launches_of(1) == 16);
  CHECK(log.launches_of(0) == 5);
  CHECK(log.warnings.empty());
}

TEST_CASE("multi-kernel dispatch: ties go to the lowest index") {
  TempDir dir;
  Log log;
  MultiKernelOptions options = options_in(dir, log);
  options.cache_enabled = false;
  MultiKernelSpec spec = two_candidates();
  spec.candidates.push_back(Candidate{"third", "", {{0, 5}}});
  auto mk = dispatcher(plan_of(spec, options), log, {{0, {2.0}}, {1, {1.0, 1.0}}, {2, {1.0}}});
  CHECK(mk(five_args) == 1U);
}

TEST_CASE("multi-kernel dispatch: NaN, negative or throwing timings disqualify a candidate, with a warning") {
  TempDir dir;
  Log log;
  MultiKernelOptions options = options_in(dir, log);
  options.cache_enabled = false;
  MultiKernelSpec spec = two_candidates();
  spec.candidates.push_back(Candidate{"third", "", {{0, 5}}});
  spec.candidates.push_back(Candidate{"fourth", "", {{0, 5}}});
  // Candidate 1 is "fastest" by its NaN-free samples but has a NaN; 2 throws (no script).
  auto mk = dispatcher(plan_of(spec, options), log, {{0, {9.0}}, {1, {0.1, not_a_number, 0.1}}, {3, {8.0, -1.0}}});
  CHECK(mk(five_args) == 0U);
  REQUIRE(log.warnings.size() == 3);
  CHECK(log.warnings[0] ==
        "multi-kernel 'multi_kernel_0': candidate 1 'triton_per_fused_sum_1' failed to benchmark: timing sample 1 is "
        "NaN; choosing among the others");
  CHECK(log.warnings[1] ==
        "multi-kernel 'multi_kernel_0': candidate 2 'third' failed to benchmark: benchmarking threw: no timing "
        "scripted; choosing among the others");
  CHECK(log.warnings[2].find("candidate 3 'fourth' failed to benchmark: timing sample 1 is negative") !=
        std::string::npos);
}

TEST_CASE("multi-kernel dispatch: when every candidate fails the call fails, launches nothing, and retries next time") {
  TempDir dir;
  Log log;
  auto mk = dispatcher(plan_of(two_candidates(), options_in(dir, log)), log, {{0, {not_a_number}}, {1, {inf}}});
  const Result<std::size_t> r = mk(five_args);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "multi-kernel 'multi_kernel_0': every candidate failed to benchmark: candidate 0 'triton_red_fused_sum_0': "
        "timing sample 0 is NaN; candidate 1 'triton_per_fused_sum_1': timing sample 0 is infinite");
  CHECK_FALSE(mk.chosen());
  const int benchmark_launches = log.launch_count;
  CHECK(benchmark_launches == 10);  // benchmark runs only, no real launch
  CHECK(dir.file_count() == 0);     // nothing cached
  CHECK_FALSE(mk(five_args).ok());
  CHECK(log.timed.size() == 4);
}

TEST_CASE("multi-kernel dispatch: one candidate or a forced choice skips benchmarking and the cache") {
  const CacheNotDisabledByEnvironment env;
  TempDir dir;
  Log log;
  ChoiceRegistry registry;
  MultiKernelOptions options = options_in(dir, log);
  options.registry = &registry;
  {
    auto mk = dispatcher(plan_of(MultiKernelSpec{"single", 5, {Candidate{"only", "", {{0, 5}}}}}, options), log, {});
    CHECK(mk(five_args) == 0U);
    CHECK(mk.selection()->source == ChoiceSource::single_candidate);
  }
  {
    options.forced_choice = 0;
    auto mk = dispatcher(plan_of(two_candidates(), options), log, {{0, {9.0}}, {1, {1.0}}});
    CHECK(mk(five_args) == 0U);
    CHECK(mk.selection()->source == ChoiceSource::forced);
    CHECK(mk.selection()->timings.empty());
  }
  CHECK(log.timed.empty());
  CHECK(log.launch_count == 2);
  CHECK(dir.file_count() == 0);
  CHECK(registry.lookup("single") == std::string("only"));
  CHECK(registry.lookup("multi_kernel_0") == std::string("triton_red_fused_sum_0"));
}

TEST_CASE("multi-kernel dispatch: the choice persists in the cache directory across dispatchers") {
  const CacheNotDisabledByEnvironment env;
  TempDir dir;
  Log log;
  const MultiKernelOptions options = options_in(dir, log);
  {
    auto mk = dispatcher(plan_of(two_candidates(), options), log, {{0, {2.0}}, {1, {1.0}}});
    CHECK(mk(five_args) == 1U);
    CHECK(mk.selection()->source == ChoiceSource::benchmark);
    CHECK(fs::exists(mk.cache().path_for(mk.plan().key())));
  }
  CHECK(dir.file_count() == 1);
  {
    // A new process would do the same: no benchmarking, the cached index.
    auto mk = dispatcher(plan_of(two_candidates(), options), log, {{0, {1.0}}, {1, {2.0}}});
    CHECK(mk(five_args) == 1U);
    CHECK(mk.selection()->source == ChoiceSource::cache);
  }
  CHECK(log.timed.size() == 2);
  {
    // Changed kernels have another key: benchmarked again, and now 0 wins.
    auto mk = dispatcher(plan_of(two_candidates("-v2"), options), log, {{0, {1.0}}, {1, {2.0}}});
    CHECK(mk(five_args) == 0U);
    CHECK(mk.selection()->source == ChoiceSource::benchmark);
  }
  CHECK(log.timed.size() == 4);
  CHECK(dir.file_count() == 2);
  CHECK(log.warnings.empty());
}

TEST_CASE("multi-kernel dispatch: corrupt or out-of-range cache entries are re-benchmarked and rewritten") {
  const CacheNotDisabledByEnvironment env;
  TempDir dir;
  Log log;
  const MultiKernelOptions options = options_in(dir, log);
  const MultiKernelPlan plan = plan_of(two_candidates(), options);
  const fs::path entry = ChoiceCache(dir.path).path_for(plan.key());
  const std::vector<std::string> bad_entries{
      "garbage",
      format_choice_record(ChoiceRecord{plan.key(), 2, 1}).substr(0, 40),
      format_choice_record(ChoiceRecord{plan.key(), 2, 7}),  // checksummed, out of range
      format_choice_record(ChoiceRecord{plan.key(), 3, 2}),  // for three candidates
  };
  for (const std::string& bad : bad_entries) {
    CAPTURE(bad);
    {
      std::ofstream out(entry, std::ios::binary | std::ios::trunc);
      out << bad;
    }
    log.warnings.clear();
    auto mk = dispatcher(plan, log, {{0, {2.0}}, {1, {1.0}}});
    CHECK(mk(five_args) == 1U);
    CHECK(mk.selection()->source == ChoiceSource::benchmark);
    REQUIRE(log.warnings.size() == 1);
    CHECK(log.warnings[0].find("ignoring multi-kernel cache entry") == 0);
    // Rewritten: the next dispatcher reads it without warning.
    CHECK(ChoiceCache(dir.path).load(plan.key(), 2) == 1U);
  }
}

TEST_CASE("multi-kernel dispatch: with the cache disabled nothing is read or written") {
  TempDir dir;
  Log log;
  MultiKernelOptions options = options_in(dir, log);
  options.cache_enabled = false;
  const MultiKernelPlan plan = plan_of(two_candidates(), options);
  CHECK_FALSE(plan.cache_enabled());
  // A valid entry that would say 0 is ignored.
  REQUIRE(ChoiceCache(dir.path).store(plan.key(), 2, 0));
  auto mk = dispatcher(plan, log, {{0, {2.0}}, {1, {1.0}}});
  CHECK(mk(five_args) == 1U);
  CHECK(mk.selection()->source == ChoiceSource::benchmark);
  CHECK(ChoiceCache(dir.path).load(plan.key(), 2) == 0U);
}

#if defined(__unix__) || defined(__APPLE__)
TEST_CASE("multi-kernel dispatch: WRAPIR_DISABLE_MULTI_KERNEL_CACHE=1 disables the cache") {
  TempDir dir;
  Log log;
  ::setenv(disable_cache_variable, "1", 1);
  const MultiKernelPlan plan = plan_of(two_candidates(), options_in(dir, log));
  ::unsetenv(disable_cache_variable);
  CHECK_FALSE(plan.cache_enabled());
  auto mk = dispatcher(plan, log, {{0, {2.0}}, {1, {1.0}}});
  CHECK(mk(five_args) == 1U);
  CHECK(dir.file_count() == 0);
}
#endif

TEST_CASE("multi-kernel dispatch: a wrong argument count is a diagnostic before and after the choice") {
  TempDir dir;
  Log log;
  MultiKernelOptions options = options_in(dir, log);
  options.cache_enabled = false;
  auto mk = dispatcher(plan_of(two_candidates(), options), log, {{0, {2.0}}, {1, {1.0}}});
  const std::vector<int> four{1, 2, 3, 4};
  CHECK(mk(four).error().message == "multi-kernel 'multi_kernel_0': called with 4 arguments, expected 5");
  CHECK(log.launch_count == 0);
  CHECK(mk(five_args) == 1U);
  const int launches = log.launch_count;
  CHECK(mk(four).error().message == "multi-kernel 'multi_kernel_0': called with 4 arguments, expected 5");
  CHECK(log.launch_count == launches);
}

TEST_CASE("multi-kernel dispatch: concurrent first calls benchmark once and agree") {
  TempDir dir;
  Log log;
  MultiKernelOptions options = options_in(dir, log);
  options.cache_enabled = false;
  auto mk = dispatcher(plan_of(two_candidates(), options), log, {{0, {2.0}}, {1, {1.0}}});
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (mk(five_args) != 1U) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(log.timed.size() == 2);
  CHECK(log.launches_of(1) == 5 + 400);
}

// ---------------------------------------------------------------------------
// Restore semantics
// ---------------------------------------------------------------------------

namespace {

/// A host "buffer" standing in for device memory.
using Buffer = std::vector<int>;

/// Counts live clones, so leaks show.
struct CloneCounter {
  int live = 0;
  int made = 0;
};

auto counting_restorer(std::vector<std::size_t> mutated, CloneCounter& counter) {
  auto clone = [&counter](Buffer* const& b) {
    ++counter.live;
    ++counter.made;
    return new Buffer(*b);  // NOLINT(cppcoreguidelines-owning-memory): released by `release`
  };
  auto copy = [](Buffer* const& from, Buffer* const& to) { *to = *from; };
  auto release = [&counter](Buffer* const& b) {
    --counter.live;
    delete b;  // NOLINT(cppcoreguidelines-owning-memory)
  };
  return CloningRestorer<Buffer*, decltype(clone), decltype(copy), decltype(release)>(std::move(mutated), clone, copy,
                                                                                      release);
}

/// Candidate i adds i+1 to x[0] in place and writes x[0] to out[0]; it
/// records the x[0] it saw on entry.
struct InPlaceAddLauncher {
  std::vector<int>* seen;
  void operator()(std::size_t candidate, SlicedArgs<Buffer*> args) const {
    Buffer& x = *args[0];
    Buffer& out = *args[1];
    seen->push_back(x[0]);
    x[0] += static_cast<int>(candidate) + 1;
    out[0] = x[0];
  }
};

}  // namespace

TEST_CASE("multi-kernel dispatch: every benchmark run sees the same inputs; the real ones are mutated once") {
  TempDir dir;
  Log log;
  MultiKernelOptions options = options_in(dir, log);
  options.cache_enabled = false;
  CloneCounter clones;
  Buffer x{100};
  Buffer out{0};
  std::vector<int> seen;
  MultiKernelSpec spec{"mk", 2, {Candidate{"add1", "", {{0, 2}}}, Candidate{"add2", "", {{0, 2}}}}};
  auto mk = make_multi_kernel_dispatcher<Buffer*>(plan_of(spec, options), InPlaceAddLauncher{&seen},
                                                  ScriptedTimer{&log, {{0, {2.0}}, {1, {1.0}}}},
                                                  counting_restorer({0, 0}, clones));
  const std::vector<Buffer*> args{&x, &out};
  CHECK(mk(args) == 1U);
  // 2 candidates x (2 warm-up + 3 timed) runs, then the real one: all saw 100.
  CHECK(seen == std::vector<int>(11, 100));
  CHECK(x[0] == 102);   // the winner (adds 2) ran once on the real buffer
  CHECK(out[0] == 102);
  CHECK(clones.made == 1);  // the repeated position was cloned once
  CHECK(clones.live == 0);
  CHECK(mk(args) == 1U);
  CHECK(x[0] == 104);
}

TEST_CASE("multi-kernel dispatch: without a restorer the benchmark mutates the real arguments") {
  // The contrast that shows the test above can fail: NoRestore on an
  // in-place kernel applies the update once per benchmark run.
  TempDir dir;
  Log log;
  MultiKernelOptions options = options_in(dir, log);
  options.cache_enabled = false;
  Buffer x{100};
  Buffer out{0};
  std::vector<int> seen;
  MultiKernelSpec spec{"mk", 2, {Candidate{"add1", "", {{0, 2}}}, Candidate{"add2", "", {{0, 2}}}}};
  auto mk = make_multi_kernel_dispatcher<Buffer*>(plan_of(spec, options), InPlaceAddLauncher{&seen},
                                                  ScriptedTimer{&log, {{0, {2.0}}, {1, {1.0}}}}, NoRestore{});
  const std::vector<Buffer*> args{&x, &out};
  CHECK(mk(args) == 1U);
  CHECK(x[0] == 100 + 5 * 1 + 5 * 2 + 2);
}

TEST_CASE("multi-kernel dispatch: a restorer that cannot clone is a diagnostic, and clones are released") {
  TempDir dir;
  Log log;
  MultiKernelOptions options = options_in(dir, log);
  options.cache_enabled = false;
  CloneCounter clones;
  Buffer x{1};
  Buffer out{0};
  std::vector<int> seen;
  MultiKernelSpec spec{"mk", 2, {Candidate{"add1", "", {{0, 2}}}, Candidate{"add2", "", {{0, 2}}}}};
  auto mk = make_multi_kernel_dispatcher<Buffer*>(plan_of(spec, options), InPlaceAddLauncher{&seen},
                                                  ScriptedTimer{&log, {{0, {2.0}}, {1, {1.0}}}},
                                                  counting_restorer({1, 7}, clones));
  const std::vector<Buffer*> args{&x, &out};
  const auto r = mk(args);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "multi-kernel 'mk': copying the arguments for benchmarking failed: mutated argument position 7 is out of "
        "range for 2 arguments");
  CHECK(clones.made == 1);
  CHECK(clones.live == 0);
  CHECK(seen.empty());
  CHECK(x[0] == 1);
}

// ---------------------------------------------------------------------------
// Cache key
// ---------------------------------------------------------------------------

TEST_CASE("multi-kernel cache key: stable, and sensitive to exactly what the timings depend on") {
  const MultiKernelSpec base = two_candidates();
  const ChoiceKey key = multi_kernel_choice_key(base, "");
  // A golden value: a change of the key's encoding orphans every cache entry
  // and must be deliberate (bump "wrapir-multi-kernel-key/1"). Cross-checked
  // with an independent Python encoding: FNV-1a 64 over u64-LE-length-prefixed
  // strings, u64 LE integers, in the order multi_kernel_choice_key documents.
  CHECK(key.hex() == "f0d7f0c6720e6fbe");

  auto differs = [&](MultiKernelSpec changed, std::string_view context = "") {
    return multi_kernel_choice_key(changed, context) != key;
  };
  CHECK(differs(base, "sm_90"));
  MultiKernelSpec s = base;
  s.candidates[0].identity = "red-source-changed";
  CHECK(differs(s));
  s = base;
  s.candidates[1].size_hints = {2048, 64};
  CHECK(differs(s));
  s = base;
  s.candidates[1].args = {{0, 4}};
  CHECK(differs(s));
  s = base;
  std::swap(s.candidates[0], s.candidates[1]);
  CHECK(differs(s));
  s = base;
  s.arg_count = 6;
  CHECK(differs(s));
  s = base;
  s.candidates[0].identity.clear();  // falls back to the name
  CHECK(differs(s));

  // Not part of the key: the multi-kernel's own name and the candidate names when identities are given.
  s = base;
  s.name = "multi_kernel_7";
  s.candidates[0].name = "renamed";
  CHECK_FALSE(differs(s));
  MultiKernelOptions forced;
  forced.forced_choice = 1;
  CHECK(plan_of(base, forced).key() == key);
}

// ---------------------------------------------------------------------------
// Size-hint variant
// ---------------------------------------------------------------------------

TEST_CASE("size-hint multi-kernel: log2 L1 distance") {
  CHECK(shape_distance({{64, 64}}, {{64, 64}}) == 0.0);
  CHECK(shape_distance({{64, 128}}, {{32, 128}}) == 1.0);
  CHECK(shape_distance({{64, 128}, {8}}, {{32, 512}, {2}}) == 1.0 + 2.0 + 2.0);
  CHECK(shape_distance({{8}}, {{0}}) == 4.0);    // log2 0 := -1
  CHECK(shape_distance({{-5}}, {{0}}) == 0.0);   // both non-positive
  CHECK(shape_distance({{1}}, {{-3}}) == 1.0);   // log2 1 = 0 vs -1
  CHECK(shape_distance({{3}}, {{5}}) == doctest::Approx(std::log2(5.0 / 3.0)));
  // Pairs stop at the shorter list, like Python's zip.
  CHECK(shape_distance({{4, 4}, {2}}, {{4}}) == 0.0);
  CHECK(shape_distance({}, {{1024}}) == 0.0);
  CHECK(shape_distance({{std::numeric_limits<std::int64_t>::max()}}, {{1}}) == doctest::Approx(63.0));
}

TEST_CASE("size-hint multi-kernel: nearest hint, ties to the lowest index, no hint last") {
  const std::vector<std::optional<ShapeKey>> hints{ShapeKey{{64, 64}}, ShapeKey{{1024, 1024}}, std::nullopt,
                                                   ShapeKey{{1024, 1024}}};
  CHECK(pick_by_shape(hints, {{64, 32}}) == 0);
  CHECK(pick_by_shape(hints, {{2048, 1024}}) == 1);  // ties with 3
  CHECK(pick_by_shape(hints, {{256, 256}}) == 0);    // 2+2 vs 2+2: tie to 0
  CHECK(pick_by_shape(hints, {{512, 256}}) == 1);    // 3+2 vs 1+2
  const std::vector<std::optional<ShapeKey>> none{std::nullopt, std::nullopt};
  CHECK(pick_by_shape(none, {{1}}) == 0);
  const std::vector<std::optional<ShapeKey>> late_hint{std::nullopt, ShapeKey{{1}}};
  CHECK(pick_by_shape(late_hint, {{std::numeric_limits<std::int64_t>::max()}}) == 1);
}

TEST_CASE("size-hint multi-kernel: chooses per shape, remembers, slices arguments, records the first choice") {
  Log log;
  ChoiceRegistry registry;
  MultiKernelOptions options;
  options.registry = &registry;
  options.warn = log.sink();
  MultiKernelSpec spec{"multi_kernel_3",
                       5,
                       {Candidate{"triton_mm_small", "", {{0, 3}, {3, 4}}, {}, ShapeKey{{64, 64}, {64, 64}}},
                        Candidate{"triton_mm_large", "", {{0, 3}, {4, 5}}, {}, ShapeKey{{4096, 4096}, {4096, 4096}}}}};
  SizeHintDispatcher<int, RecordingLauncher> mk(plan_of(spec, options), RecordingLauncher{&log});
  CHECK(mk(five_args, {{128, 64}, {64, 128}}) == 0U);
  CHECK(mk(five_args, {{2048, 4096}, {4096, 4096}}) == 1U);
  CHECK(mk(five_args, {{128, 64}, {64, 128}}) == 0U);
  CHECK(mk.cached_shape_count() == 2);
  REQUIRE(log.launches.size() == 3);
  CHECK(log.launches[0].second == std::vector<int>{10, 11, 12, 13});
  CHECK(log.launches[1].second == std::vector<int>{10, 11, 12, 14});
  CHECK(registry.lookup("multi_kernel_3") == std::string("triton_mm_small"));
  CHECK(log.warnings.empty());
  CHECK(mk(std::span<const int>(five_args).first(3), {{64, 64}}).error().message ==
        "multi-kernel 'multi_kernel_3': called with 3 arguments, expected 5");
  CHECK(log.launches.size() == 3);

  options.forced_choice = 1;
  options.registry = nullptr;
  SizeHintDispatcher<int, RecordingLauncher> forced(plan_of(spec, options), RecordingLauncher{&log});
  CHECK(forced(five_args, {{64, 64}, {64, 64}}) == 1U);
  CHECK(forced.cached_shape_count() == 0);
}

TEST_CASE("size-hint multi-kernel: concurrent callers agree per shape") {
  Log log;
  MultiKernelSpec spec{"mk", 5,
                       {Candidate{"small", "", {{0, 5}}, {}, ShapeKey{{16}}},
                        Candidate{"large", "", {{0, 5}}, {}, ShapeKey{{65536}}}}};
  SizeHintDispatcher<int, RecordingLauncher> mk(plan_of(spec, {}), RecordingLauncher{&log});
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::int64_t power = 1; power <= std::int64_t{1} << 17; power *= 2) {
        const std::int64_t size = t % 2 == 0 ? power : 3 * power;
        // Nearer to 16 than to 65536 in log2 exactly when log2(size) <= 10 (a tie at 1024 goes to 0).
        const std::size_t expected = size <= 1024 ? 0 : 1;
        if (mk(five_args, {{size}}) != expected) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(mk.cached_shape_count() == 36);  // 18 powers of two and 18 three-times-powers
}
