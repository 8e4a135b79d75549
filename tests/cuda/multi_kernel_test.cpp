// wrapir::cuda's multi-kernel parts on a real device: KernelArg, the
// candidate launcher and its argument checks, the event timer (prepare runs
// before every timed run and is not timed), the device restorer (benchmarks
// run on scratch copies, restored before every run), and the generic
// dispatcher driving all three: it picks the fast candidate and the real
// buffer is incremented exactly once by the first call.
//
// The candidates are add_in_place_i32 launched two ways over 4M ints:
// candidate 0 with one thread per block (4M blocks: about a hundred times
// slower, bound by block scheduling), candidate 1 with 256 threads per block.
// Both add the same amount to every element, which is not idempotent, so any
// benchmark run that reached the real buffer shows in the result.

#include "gpu_test_main.hpp"

#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/cuda/multi_kernel.hpp>
#include <wrapir/cuda/stream.hpp>
#include <wrapir/run/multi_kernel.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace cuda = wrapir::cuda;
namespace run = wrapir::run;

namespace {

using wrapir_test::contains;
using wrapir_test::must;

constexpr std::int32_t element_count = 1 << 22;
constexpr std::size_t buffer_bytes = element_count * sizeof(std::int32_t);
constexpr std::int32_t amount = 3;

/// The test kernels, and a stream and buffer of `element_count` ints
/// holding 0, 1, 2, ...
struct Fixture {
  cuda::Module module = must(cuda::Module::load_file(WRAPIR_TEST_KERNELS_CUBIN));
  cuda::Function add = must(module.function("add_in_place_i32"));
  cuda::Function empty = must(module.function("empty_kernel"));
  cuda::Stream stream = must(cuda::Stream::create());
  cuda::DeviceBuffer data = must(cuda::DeviceBuffer::allocate(buffer_bytes));

  Fixture() { upload(data, iota()); }

  static std::vector<std::int32_t> iota() {
    std::vector<std::int32_t> v(element_count);
    std::iota(v.begin(), v.end(), 0);
    return v;
  }
  void upload(const cuda::DeviceBuffer& to, const std::vector<std::int32_t>& values) const {
    must(cuda::copy_to_device_async(to.address(), values.data(), values.size() * sizeof(std::int32_t), stream));
    must(stream.synchronize());
  }
  [[nodiscard]] std::vector<std::int32_t> read(CUdeviceptr from) const {
    must(stream.synchronize());
    std::vector<std::int32_t> out(element_count);
    must(cuda::copy_to_host(out.data(), from, buffer_bytes));
    return out;
  }
  /// Whether `from` holds i + added at every index i.
  [[nodiscard]] bool holds_iota_plus(CUdeviceptr from, std::int32_t added) const {
    const std::vector<std::int32_t> values = read(from);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] != static_cast<std::int32_t>(i) + added) {
        MESSAGE("element " << i << " is " << values[i] << ", expected " << static_cast<std::int32_t>(i) + added);
        return false;
      }
    }
    return true;
  }

  /// Candidate 0: one thread per block (slow); candidate 1: 256 (fast).
  [[nodiscard]] std::vector<cuda::CandidateKernel> candidates() const {
    return {{add, {.grid = {static_cast<std::uint32_t>(element_count)}, .block = {1}, .stream = stream}},
            {add, {.grid = {element_count / 256}, .block = {256}, .stream = stream}}};
  }
  /// The combined arguments of add_in_place_i32(data, amount, n).
  [[nodiscard]] std::vector<cuda::KernelArg> args() const {
    return {data.as<std::int32_t>(), cuda::KernelArg::value(amount), cuda::KernelArg::value(element_count)};
  }
  [[nodiscard]] cuda::DeviceRestorer restorer() const {
    return must(cuda::DeviceRestorer::create(stream, {{.position = 0, .bytes = buffer_bytes}}));
  }
};

/// By default both candidates take the whole combined list of three arguments.
run::MultiKernelSpec two_candidates(std::vector<run::ArgSlice> slices0 = {{0, 3}},
                                    std::vector<run::ArgSlice> slices1 = {{0, 3}}, std::size_t arg_count = 3) {
  return {"multi_kernel_0",
          arg_count,
          {run::Candidate{"add_one_thread_per_block", "", std::move(slices0)},
           run::Candidate{"add_256_threads_per_block", "", std::move(slices1)}}};
}

run::MultiKernelOptions quick_options(std::vector<std::string>* warnings) {
  run::MultiKernelOptions o;
  o.cache_enabled = false;
  o.warmup = 2;
  o.repetitions = 5;
  if (warnings != nullptr) o.warn = [warnings](std::string_view m) { warnings->emplace_back(m); };
  return o;
}

run::MultiKernelPlan plan_of(run::MultiKernelSpec spec, run::MultiKernelOptions options) {
  auto plan = run::make_multi_kernel_plan(std::move(spec), std::move(options));
  REQUIRE_MESSAGE(plan.ok(), (plan.ok() ? "" : plan.error().message));
  return std::move(plan).value();
}

/// What a launcher does with a failed launch: throw.
void launch_or_throw(const cuda::Status& s) {
  if (!s) throw cuda::Error(s.error());
}

bool driver_checks_parameters() { return cuda::loaded_driver().cuFuncGetParamInfo != nullptr; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device random;
    for (int attempt = 0;; ++attempt) {
      path = std::filesystem::temp_directory_path() /
             ("wrapir-cuda-multi-kernel-test-" + std::to_string(random()) + "-" + std::to_string(random()));
      if (std::filesystem::create_directory(path)) break;
      REQUIRE(attempt < 100);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("a KernelArg holds a device pointer or a value by its bytes") {
  const cuda::KernelArg p = cuda::DevicePtr<float>{0x1000};
  CHECK(p.is_pointer());
  CHECK(p.size() == sizeof(CUdeviceptr));
  CHECK(p.address() == 0x1000);
  CHECK(p == cuda::KernelArg::pointer(0x1000));

  const cuda::KernelArg i = cuda::KernelArg::value(std::int32_t{-7});
  CHECK_FALSE(i.is_pointer());
  CHECK(i.size() == 4);
  CHECK(i.address() == 0);
  std::int32_t back = 0;
  std::memcpy(&back, i.data(), sizeof back);
  CHECK(back == -7);
  // The same bytes as a value are not a pointer.
  CHECK(cuda::KernelArg::value(CUdeviceptr{0x1000}) != p);
  CHECK(cuda::KernelArg::value(1.5).size() == 8);
  CHECK(cuda::KernelArg{}.empty());
}

TEST_CASE("the launcher launches each candidate with its own slice of the arguments") {
  Fixture fx;
  const cuda::MultiKernelLauncher launcher = must(cuda::MultiKernelLauncher::create(fx.candidates()));
  REQUIRE(launcher.candidate_count() == 2);
  CHECK(launcher.candidate(1).config.block.x == 256);

  // Candidate 1 takes [0, 3); candidate 0 takes [3, 6): another buffer and amount.
  cuda::DeviceBuffer other = must(cuda::DeviceBuffer::allocate(buffer_bytes));
  fx.upload(other, Fixture::iota());
  const std::vector<cuda::KernelArg> combined{fx.data.as<std::int32_t>(), cuda::KernelArg::value(amount),
                                              cuda::KernelArg::value(element_count), other.as<std::int32_t>(),
                                              cuda::KernelArg::value(std::int32_t{10}),
                                              cuda::KernelArg::value(element_count)};
  const run::MultiKernelPlan plan = plan_of(two_candidates({{3, 6}}, {{0, 3}}, 6), quick_options(nullptr));
  const std::span<const cuda::KernelArg> args(combined);
  must(launcher.launch(1, must(plan.arguments_for(1, args))));
  launcher(0, must(plan.arguments_for(0, args)));  // the throwing form
  CHECK(fx.holds_iota_plus(fx.data.address(), amount));
  CHECK(fx.holds_iota_plus(other.address(), 10));

  SUBCASE("a candidate that does not exist") {
    auto missing = launcher.launch(2, must(plan.arguments_for(1, args)));
    REQUIRE_FALSE(missing.ok());
    CHECK(contains(missing.error().message, "candidate 2 does not exist (2 candidates)"));
    CHECK_THROWS_AS(launcher(2, must(plan.arguments_for(1, args))), cuda::Error);
  }
  SUBCASE("arguments that do not match the kernel's parameters") {
    if (!driver_checks_parameters()) {
      MESSAGE("the driver cannot report parameter sizes (before 12.4): argument checks not tested");
      return;
    }
    const run::MultiKernelPlan short_plan = plan_of(two_candidates({{0, 2}}, {{0, 3}}), quick_options(nullptr));
    auto too_few = launcher.launch(0, must(short_plan.arguments_for(0, std::span(combined).first(3))));
    REQUIRE_FALSE(too_few.ok());
    CHECK(contains(too_few.error().message, "kernel 'add_in_place_i32' (candidate 0): given 2 arguments, it takes 3"));

    const std::vector<cuda::KernelArg> wide{fx.data.as<std::int32_t>(), cuda::KernelArg::value(std::int64_t{amount}),
                                            cuda::KernelArg::value(element_count)};
    auto wrong_size = launcher.launch(1, must(short_plan.arguments_for(1, std::span<const cuda::KernelArg>(wide))));
    REQUIRE_FALSE(wrong_size.ok());
    CHECK(contains(wrong_size.error().message,
                   "argument 1 is 8 bytes, but the kernel's parameter 1 is 4 bytes"));

    const std::vector<cuda::KernelArg> hole{fx.data.as<std::int32_t>(), cuda::KernelArg{},
                                            cuda::KernelArg::value(element_count)};
    auto empty = launcher.launch(1, must(short_plan.arguments_for(1, std::span<const cuda::KernelArg>(hole))));
    REQUIRE_FALSE(empty.ok());
    CHECK(contains(empty.error().message, "argument 1 is empty"));
    // Nothing was launched by the refused calls.
    CHECK(fx.holds_iota_plus(fx.data.address(), amount));
  }
}

TEST_CASE("the launcher refuses candidates it cannot launch") {
  auto none = cuda::MultiKernelLauncher::create({});
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message == "multi-kernel launcher: no candidates");
  auto unloaded = cuda::MultiKernelLauncher::create({cuda::CandidateKernel{}});
  REQUIRE_FALSE(unloaded.ok());
  CHECK(contains(unloaded.error().message, "candidate 0 has no function"));
}

TEST_CASE("the event timer times only run(), after prepare() and a flush of the stream") {
  Fixture fx;
  const cuda::EventTimer timer = must(cuda::EventTimer::create(fx.stream));
  CHECK(timer.stream() == fx.stream.get());
  const cuda::LaunchConfig slow{.grid = {static_cast<std::uint32_t>(element_count)}, .block = {1}, .stream = fx.stream};
  const cuda::LaunchConfig tiny{.grid = {1}, .block = {1}, .stream = fx.stream};
  auto slow_work = [&] { launch_or_throw(cuda::launch(fx.add, slow, fx.data.address(), 1, element_count)); };
  auto tiny_work = [&] { launch_or_throw(cuda::launch(fx.empty, tiny)); };

  std::size_t prepares = 0;
  std::size_t runs = 0;
  std::vector<std::size_t> order;  // 0: prepare, 1: run
  const std::vector<double> slow_runs = timer(
      run::BenchmarkPlan{0, 2, 5},
      [&] {
        ++prepares;
        order.push_back(0);
      },
      [&] {
        ++runs;
        order.push_back(1);
        slow_work();
      });
  CHECK(prepares == 7);
  CHECK(runs == 7);
  for (std::size_t i = 0; i < order.size(); ++i) CHECK(order[i] == i % 2);
  REQUIRE(slow_runs.size() == 5);
  for (const double ms : slow_runs) {
    CHECK(std::isfinite(ms));
    CHECK(ms > 0.0);
  }
  CHECK(fx.holds_iota_plus(fx.data.address(), 7));  // every run ran, warm-up included

  // The same slow work in prepare() instead: not timed.
  const std::vector<double> slow_prepares = timer(run::BenchmarkPlan{1, 1, 5}, slow_work, tiny_work);
  REQUIRE(slow_prepares.size() == 5);
  for (const double ms : slow_prepares) CHECK(ms >= 0.0);
  MESSAGE("median with the slow work timed: " << median(slow_runs)
                                              << " ms; in prepare(): " << median(slow_prepares) << " ms");
  CHECK(median(slow_prepares) * 4 < median(slow_runs));

  // No timed runs: no samples, and nothing beyond the warm-up ran.
  runs = 0;
  CHECK(timer(run::BenchmarkPlan{0, 1, 0}, [] {}, [&] { ++runs; }).empty());
  CHECK(runs == 1);

  // An exception of run() propagates (the dispatcher makes it a failed candidate).
  CHECK_THROWS_AS(timer(run::BenchmarkPlan{0, 0, 1}, [] {}, [] { throw std::runtime_error("launch failed"); }),
                  std::runtime_error);
}

TEST_CASE("the device restorer benchmarks on scratch copies, restored before every run") {
  Fixture fx;
  const cuda::DeviceRestorer restorer = fx.restorer();
  CHECK(restorer.stream() == fx.stream.get());
  const std::vector<cuda::KernelArg> args = fx.args();
  const cuda::LaunchConfig fast{.grid = {element_count / 256}, .block = {256}, .stream = fx.stream};
  {
    cuda::DeviceRestorer::Scratch scratch = restorer.clone(args);
    const std::span<const cuda::KernelArg> s = scratch.args();
    REQUIRE(s.size() == 3);
    CHECK(s[0].is_pointer());
    CHECK(s[0].address() != fx.data.address());
    CHECK(s[1] == args[1]);
    CHECK(s[2] == args[2]);
    CHECK(fx.holds_iota_plus(s[0].address(), 0));  // cloned
    for (int run = 0; run < 3; ++run) {
      scratch.restore();
      must(cuda::launch(fx.add, fast, s[0].address(), amount, element_count));
      CHECK(fx.holds_iota_plus(s[0].address(), amount));  // restored before each run: never 2 * amount
    }
  }
  CHECK(fx.holds_iota_plus(fx.data.address(), 0));  // the original was never written

  SUBCASE("arguments with the same address share one scratch copy") {
    const std::vector<cuda::KernelArg> aliased{fx.data.as<std::int32_t>(), cuda::KernelArg::value(amount),
                                               fx.data.as<const std::int32_t>()};
    const cuda::DeviceRestorer::Scratch scratch = restorer.clone(aliased);
    CHECK(scratch.args()[0].address() != fx.data.address());
    CHECK(scratch.args()[2].address() == scratch.args()[0].address());
  }
  SUBCASE("positions, sizes and values that cannot be restored") {
    auto conflicting = cuda::DeviceRestorer::create(fx.stream, {{2, 16}, {0, 8}, {2, 32}});
    REQUIRE_FALSE(conflicting.ok());
    CHECK(conflicting.error().message ==
          "multi-kernel restorer: argument 2 is listed as mutated with 16 and with 32 bytes");
    const cuda::DeviceRestorer repeated = must(cuda::DeviceRestorer::create(fx.stream, {{2, 16}, {0, 8}, {2, 16}}));
    const std::vector<cuda::MutatedArgument> sorted_once{{0, 8}, {2, 16}};
    CHECK(repeated.mutated() == sorted_once);

    const cuda::DeviceRestorer past_end = must(cuda::DeviceRestorer::create(fx.stream, {{3, 4}}));
    CHECK_THROWS_AS((void)past_end.clone(args), std::out_of_range);
    const cuda::DeviceRestorer on_a_value = must(cuda::DeviceRestorer::create(fx.stream, {{1, 4}}));
    try {
      (void)on_a_value.clone(args);
      FAIL("a value argument was cloned");
    } catch (const cuda::Error& e) {
      CHECK(contains(e.what(), "mutated argument 1 is not a device pointer (it is a 4-byte value)"));
    }
    const cuda::DeviceRestorer nothing_to_save = must(cuda::DeviceRestorer::create(fx.stream, {{0, 0}}));
    CHECK(nothing_to_save.clone(args).args()[0] == args[0]);
    const std::vector<cuda::KernelArg> null_buffer{cuda::KernelArg::pointer(0), args[1], args[2]};
    CHECK_THROWS_AS((void)restorer.clone(null_buffer), cuda::Error);
  }
}

TEST_CASE("the dispatcher benchmarks on the GPU, picks the fast candidate and writes the real buffer once") {
  Fixture fx;
  std::vector<std::string> warnings;
  const std::vector<cuda::KernelArg> args = fx.args();
  auto dispatch = run::make_multi_kernel_dispatcher<cuda::KernelArg>(
      plan_of(two_candidates(), quick_options(&warnings)), must(cuda::MultiKernelLauncher::create(fx.candidates())),
      must(cuda::EventTimer::create(fx.stream)), fx.restorer());

  const std::size_t first = must(dispatch(args));
  // 2 warm-up and 5 timed runs of each candidate ran on the scratch copy;
  // the real buffer got exactly one increment.
  CHECK(fx.holds_iota_plus(fx.data.address(), amount));
  const run::SelectionReport report = dispatch.selection().value();
  CHECK(report.source == run::ChoiceSource::benchmark);
  REQUIRE(report.timings.size() == 2);
  for (const run::CandidateTiming& t : report.timings) {
    REQUIRE(t.median_ms.has_value());
    CHECK(std::isfinite(*t.median_ms));
    CHECK(*t.median_ms > 0.0);
  }
  MESSAGE("medians: one thread per block " << *report.timings[0].median_ms << " ms, 256 threads per block "
                                           << *report.timings[1].median_ms << " ms");
  CHECK(*report.timings[0].median_ms > *report.timings[1].median_ms);
  CHECK(first == 1);
  CHECK(report.choice == first);
  CHECK(warnings.empty());

  CHECK(must(dispatch(args)) == first);
  CHECK(fx.holds_iota_plus(fx.data.address(), 2 * amount));
}

TEST_CASE("a choice cached in a directory is reused without benchmarking") {
  Fixture fx;
  TempDir dir;
  std::vector<std::string> warnings;
  run::MultiKernelOptions options = quick_options(&warnings);
  options.cache_enabled = true;
  options.cache_directory = dir.path;
  options.cache_context = must(cuda::device_info(0)).name;
  const std::vector<cuda::KernelArg> args = fx.args();
  auto make = [&] {
    return run::make_multi_kernel_dispatcher<cuda::KernelArg>(
        plan_of(two_candidates(), options), must(cuda::MultiKernelLauncher::create(fx.candidates())),
        must(cuda::EventTimer::create(fx.stream)), fx.restorer());
  };
  std::size_t benchmarked = 0;
  {
    auto dispatch = make();
    if (!dispatch.plan().cache_enabled()) {
      MESSAGE("WRAPIR_DISABLE_MULTI_KERNEL_CACHE is set: cache not tested");
      return;
    }
    benchmarked = must(dispatch(args));
    CHECK(dispatch.selection()->source == run::ChoiceSource::benchmark);
  }
  auto again = make();
  CHECK(must(again(args)) == benchmarked);
  CHECK(again.selection()->source == run::ChoiceSource::cache);
  CHECK(fx.holds_iota_plus(fx.data.address(), 2 * amount));
  CHECK(warnings.empty());
}

TEST_CASE("a forced choice launches that candidate once, without benchmarking") {
  Fixture fx;
  std::vector<std::string> warnings;
  run::MultiKernelOptions options = quick_options(&warnings);
  options.forced_choice = 0;
  auto dispatch = run::make_multi_kernel_dispatcher<cuda::KernelArg>(
      plan_of(two_candidates(), options), must(cuda::MultiKernelLauncher::create(fx.candidates())),
      must(cuda::EventTimer::create(fx.stream)), fx.restorer());
  const std::vector<cuda::KernelArg> args = fx.args();
  CHECK(must(dispatch(args)) == 0);
  CHECK(dispatch.selection()->source == run::ChoiceSource::forced);
  CHECK(dispatch.selection()->timings.empty());
  CHECK(fx.holds_iota_plus(fx.data.address(), amount));
}

TEST_CASE("a candidate that fails to launch is disqualified, and a failed real launch throws") {
  Fixture fx;
  if (!driver_checks_parameters()) {
    MESSAGE("the driver cannot report parameter sizes (before 12.4): a short argument list would not be caught");
    return;
  }
  const std::vector<cuda::KernelArg> args = fx.args();
  std::vector<std::string> warnings;
  auto make = [&](run::MultiKernelSpec spec, run::MultiKernelOptions options) {
    return run::make_multi_kernel_dispatcher<cuda::KernelArg>(
        plan_of(std::move(spec), std::move(options)), must(cuda::MultiKernelLauncher::create(fx.candidates())),
        must(cuda::EventTimer::create(fx.stream)), fx.restorer());
  };

  SUBCASE("one candidate fails: the other is chosen, with a warning") {
    auto dispatch = make(two_candidates({{0, 2}}), quick_options(&warnings));
    CHECK(must(dispatch(args)) == 1);
    const run::SelectionReport report = dispatch.selection().value();
    CHECK_FALSE(report.timings[0].median_ms.has_value());
    CHECK(contains(report.timings[0].failure, "given 2 arguments, it takes 3"));
    REQUIRE(warnings.size() == 1);
    CHECK(contains(warnings[0], "candidate 0 'add_one_thread_per_block' failed to benchmark"));
    CHECK(fx.holds_iota_plus(fx.data.address(), amount));
  }
  SUBCASE("every candidate fails: a diagnostic, and nothing launched") {
    auto dispatch = make(two_candidates({{0, 2}}, {{1, 3}}), quick_options(&warnings));
    auto result = dispatch(args);
    REQUIRE_FALSE(result.ok());
    CHECK(contains(result.error().message, "multi-kernel 'multi_kernel_0': every candidate failed to benchmark"));
    CHECK_FALSE(dispatch.chosen().has_value());
    CHECK(fx.holds_iota_plus(fx.data.address(), 0));
  }
  SUBCASE("the forced candidate cannot launch: the real launch throws") {
    run::MultiKernelOptions options = quick_options(&warnings);
    options.forced_choice = 0;
    auto dispatch = make(two_candidates({{0, 2}}), options);
    try {
      (void)dispatch(args);
      FAIL("the real launch did not throw");
    } catch (const cuda::Error& e) {
      CHECK(contains(e.diagnostic().message, "given 2 arguments, it takes 3"));
    }
    CHECK(fx.holds_iota_plus(fx.data.address(), 0));
  }
}

int main(int argc, char** argv) { return wrapir_test::run_gpu_tests(argc, argv); }
