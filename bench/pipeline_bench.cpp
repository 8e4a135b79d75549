// The end-to-end cost of a long program through the arena pipeline: a chain
// program of `--lines` lines (default 1M: Allocate / KernelCall /
// FreeIfNotReused triples, each kernel reading the previous buffer, every
// buffer of the symbolic size s0*s1 floats; `bench::make_program(lines,
// false)`, 333k buffers at 1M lines) is built and written as JSON once by a
// child process, so that building it does not count towards the peak;
// then, for each way of loading (`--load=whole|chunks|both`, default both:
// old and new side by side, each in a process of its own so that each has
// its own peak), a child process times, one run each:
//   load    io::program_from_json: `whole` reads the file into a string and
//           loads that (the text held for the whole load); `chunks` reads it
//           in chunks with `pread` (io::program_from_json(bytes, read_at),
//           the text never held)
//   verify  ir::verify
//   plan    pass::plan_arena (trace, packing, symbolic offsets, rewrite,
//           statistics)
//   emit    python::to_python of the planned program, written through a
//           TextSink to `--python=FILE` (default /dev/null) with write(2),
//           a piece (256 KiB) at a time: the module is never whole in
//           memory; the size printed is the bytes write(2) took
// and after each stage the peak resident set (getrusage ru_maxrss) per
// line. The target: all four under 3 s together on the 2-core dev
// VM, and a peak under 250 bytes per line.
//
// Not a Google Benchmark loop: one shot of each stage is the cost a user
// pays, and the peak memory of a process is only meaningful once. Run it
// from the release preset:
//   build/release/bench/pipeline_bench [--lines=N] [--keep=FILE] [--load=whole|chunks|both] [--python=FILE]
// (`--benchmark_*` arguments, which bench.smoke passes, make it a quick run
// of 30k lines.) docs/performance.md records the results.

#include "bench_programs.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>

#include <chrono>
#include <ctime>
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

/// Loads the program at `path` one way, then verifies, plans and emits it,
/// printing each stage's time and the peak resident set per line after it.
int run_pipeline(const std::string& path, bool whole, const std::string& python_path) {
  using clock = std::chrono::steady_clock;
  const auto seconds = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  std::string text;
  int fd = -1;
  std::size_t json_bytes = 0;
  if (whole) {
    std::ifstream in(path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    json_bytes = text.size();
  } else {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) return fail("cannot open " + path);
    json_bytes = static_cast<std::size_t>(st.st_size);
  }
  const auto read_at = [fd](std::size_t offset, std::span<char> buffer) -> wrapir::Result<std::size_t> {
    std::size_t filled = 0;
    while (filled < buffer.size()) {
      const ssize_t got = ::pread(fd, buffer.data() + filled, buffer.size() - filled, static_cast<off_t>(offset + filled));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return wrapir::Diagnostic{std::strerror(errno)};
      if (got == 0) break;
      filled += static_cast<std::size_t>(got);
    }
    return filled;
  };

  const long base_kib = peak_rss_kib();
  // CPU seconds too: on the shared machine wall time is mostly waiting.
  const auto cpu = [] { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; };
  const double c0 = cpu();
  auto t0 = clock::now();
  auto loaded = whole ? wrapir::io::program_from_json(text, {}) : wrapir::io::program_from_json(json_bytes, read_at, {});
  auto t1 = clock::now();
  const double c1 = cpu();
  if (!loaded) return fail("load: " + loaded.error().message);
  if (fd >= 0) ::close(fd);
  const wrapir::ir::Program& program = loaded.value();
  const std::size_t n = program.body.size();
  const long load_kib = peak_rss_kib();
  std::string().swap(text);

  const auto findings = wrapir::ir::verify(program);
  auto t2 = clock::now();
  const double c2 = cpu();
  if (!findings.empty()) return fail("verify: " + wrapir::ir::to_string(findings.front()));
  const long verify_kib = peak_rss_kib();

  // The && overload plans the loaded program in place: no copy of it.
  auto planned = wrapir::pass::plan_arena(std::move(loaded.value()));
  auto t3 = clock::now();
  const double c3 = cpu();
  if (!planned) return fail("plan_arena: " + planned.error().message);
  const long plan_kib = peak_rss_kib();

  const int out_fd = ::open(python_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0) return fail("cannot open " + python_path + ": " + std::strerror(errno));
  std::size_t python_bytes = 0;
  const wrapir::TextSink sink{[&](std::string_view piece) -> wrapir::Result<void> {
    for (std::size_t done = 0; done < piece.size();) {
      const ssize_t n = ::write(out_fd, piece.data() + done, piece.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return wrapir::Diagnostic{std::string("write failed: ") + std::strerror(n < 0 ? errno : EIO)};
      done += static_cast<std::size_t>(n);
      python_bytes += static_cast<std::size_t>(n);
    }
    return {};
  }};
  auto python = wrapir::python::to_python(planned.value().program, sink);
  auto t4 = clock::now();
  const double c4 = cpu();
  if (!python) return fail("to_python: " + python.error().message);
  if (::close(out_fd) != 0) return fail("closing " + python_path + " failed");
  const long emit_kib = peak_rss_kib();

  const auto per_line = [&](long kib) { return static_cast<double>(kib) * 1024.0 / static_cast<double>(n); };
  std::printf("load %s: lines %zu, buffers %zu, JSON %.1f MB, python %.1f MB (to %s), arena peak/bound %.4f\n",
              whole ? "whole (the text held)" : "in chunks (io::program_from_json(bytes, read_at))", n,
              planned.value().program.buffers.size(), static_cast<double>(json_bytes) / 1e6,
              static_cast<double>(python_bytes) / 1e6, python_path.c_str(),
              static_cast<double>(planned.value().stats.peak_bytes) /
                  static_cast<double>(planned.value().stats.lower_bound_bytes));
  std::printf("%-8s %9s %9s %14s\n", "stage", "seconds", "CPU s", "peak B/line");
  std::printf("%-8s %9s %9s %14.1f\n", "start", "", "", per_line(base_kib));
  std::printf("%-8s %9.3f %9.3f %14.1f\n", "load", seconds(t0, t1), c1 - c0, per_line(load_kib));
  std::printf("%-8s %9.3f %9.3f %14.1f\n", "verify", seconds(t1, t2), c2 - c1, per_line(verify_kib));
  std::printf("%-8s %9.3f %9.3f %14.1f\n", "plan", seconds(t2, t3), c3 - c2, per_line(plan_kib));
  std::printf("%-8s %9.3f %9.3f %14.1f\n", "emit", seconds(t3, t4), c4 - c3, per_line(emit_kib));
  std::printf("%-8s %9.3f %9.3f %14.1f\n", "total", seconds(t0, t4), c4 - c0, per_line(emit_kib));
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t lines = 1'000'000;
  std::string keep;
  std::string load = "both";
  std::string python_path = "/dev/null";
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--lines=")) {
      lines = std::stoul(std::string(a.substr(8)));
    } else if (a.starts_with("--keep=")) {
      keep = std::string(a.substr(7));
    } else if (a.starts_with("--load=")) {
      load = std::string(a.substr(7));
      if (load != "whole" && load != "chunks" && load != "both") return fail("--load takes whole, chunks or both");
    } else if (a.starts_with("--python=")) {
      python_path = std::string(a.substr(9));
    } else if (a.starts_with("--benchmark_")) {
      lines = 30'000;
    } else {
      return fail("unknown argument " + std::string(a) + " (expected --lines=N, --keep=FILE, --load=whole|chunks|both, --python=FILE)");
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
  // Each way of loading in a child of its own: its own peak.
  int result = 0;
  for (const bool whole : {true, false}) {
    if ((whole && load == "chunks") || (!whole && load == "whole")) continue;
    const pid_t child = fork();
    if (child < 0) return fail("fork failed");
    if (child == 0) std::_Exit(run_pipeline(path, whole, python_path));
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) result = 1;
  }
  if (keep.empty()) std::remove(path.c_str());
  return result;
}
