// The end-to-end cost of a long program through the arena pipeline: a chain
// program of `--lines` lines (default 1M: Allocate / KernelCall /
// FreeIfNotReused triples, each kernel reading the previous buffer, every
// buffer of the symbolic size s0*s1 floats; `bench::make_program(lines,
// false)`, 333k buffers at 1M lines) is built and written as JSON once by a
// child process, so that building it does not count towards the peak;
// then this process reads the file and times, one run each:
//   load    io::program_from_json
//   verify  ir::verify
//   plan    pass::plan_arena (trace, packing, symbolic offsets, rewrite,
//           statistics)
//   emit    python::to_python of the planned program
// and after each stage the peak resident set (getrusage ru_maxrss) per
// line. The target: all four under 3 s together on the 2-core dev
// VM, and a peak under 250 bytes per line.
//
// Not a Google Benchmark loop: one shot of each stage is the cost a user
// pays, and the peak memory of a process is only meaningful once. Run it
// from the release preset:
//   build/release/bench/pipeline_bench [--lines=N] [--keep=FILE]
// (`--benchmark_*` arguments, which bench.smoke passes, make it a quick run
// of 30k lines.) docs/performance.md records the results.

#include "bench_programs.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <wrapir/emit/python.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/arena.hpp>

namespace {

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;  // KiB on Linux
}

int fail(const std::string& what) {
  std::fprintf(stderr, "pipeline_bench: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t lines = 1'000'000;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--lines=")) {
      lines = std::stoul(std::string(a.substr(8)));
    } else if (a.starts_with("--keep=")) {
      keep = std::string(a.substr(7));
    } else if (a.starts_with("--benchmark_")) {
      lines = 30'000;
    } else {
      return fail("unknown argument " + std::string(a) + " (expected --lines=N, --keep=FILE)");
    }
  }
  const std::string path = keep.empty() ? "/tmp/wrapir_pipeline_bench_" + std::to_string(getpid()) + ".json" : keep;

  // The program is built and saved in a child, so its memory is not ours.
  if (keep.empty() || !std::ifstream(path)) {
    const pid_t child = fork();
    if (child < 0) return fail("fork failed");
    if (child == 0) {
      const wrapir::ir::Program p = wrapir::bench::make_program(lines, false);
      std::ofstream out(path, std::ios::binary);
      out << wrapir::io::to_json(p, {});
      std::_Exit(out ? 0 : 1);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return fail("the child that writes " + path + " failed");
  }
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (keep.empty()) std::remove(path.c_str());

  using clock = std::chrono::steady_clock;
  const auto seconds = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const std::size_t json_bytes = text.size();
  const long base_kib = peak_rss_kib();
  auto t0 = clock::now();
  auto loaded = wrapir::io::program_from_json(text, {});
  auto t1 = clock::now();
  if (!loaded) return fail("load: " + loaded.error().message);
  const wrapir::ir::Program& program = loaded.value();
  const std::size_t n = program.body.size();
  const long load_kib = peak_rss_kib();
  std::string().swap(text);

  const auto findings = wrapir::ir::verify(program);
  auto t2 = clock::now();
  if (!findings.empty()) return fail("verify: " + wrapir::ir::to_string(findings.front()));
  const long verify_kib = peak_rss_kib();

  // The && overload plans the loaded program in place: no copy of it.
  auto planned = wrapir::pass::plan_arena(std::move(loaded.value()));
  auto t3 = clock::now();
  if (!planned) return fail("plan_arena: " + planned.error().message);
  const long plan_kib = peak_rss_kib();

  auto python = wrapir::python::to_python(planned.value().program);
  auto t4 = clock::now();
  if (!python) return fail("to_python: " + python.error().message);
  const long emit_kib = peak_rss_kib();

  const auto per_line = [&](long kib) { return static_cast<double>(kib) * 1024.0 / static_cast<double>(n); };
  std::printf("lines %zu, buffers %zu, JSON %.1f MB, python %.1f MB, arena peak/bound %.4f\n", n,
              planned.value().program.buffers.size(), static_cast<double>(json_bytes) / 1e6, static_cast<double>(python.value().size()) / 1e6,
              static_cast<double>(planned.value().stats.peak_bytes) /
                  static_cast<double>(planned.value().stats.lower_bound_bytes));
  std::printf("%-8s %9s %14s\n", "stage", "seconds", "peak B/line");
  std::printf("%-8s %9s %14.1f\n", "start", "", per_line(base_kib));
  std::printf("%-8s %9.3f %14.1f\n", "load", seconds(t0, t1), per_line(load_kib));
  std::printf("%-8s %9.3f %14.1f\n", "verify", seconds(t1, t2), per_line(verify_kib));
  std::printf("%-8s %9.3f %14.1f\n", "plan", seconds(t2, t3), per_line(plan_kib));
  std::printf("%-8s %9.3f %14.1f\n", "emit", seconds(t3, t4), per_line(emit_kib));
  std::printf("%-8s %9.3f %14.1f\n", "total", seconds(t0, t4), per_line(emit_kib));
  return 0;
}
