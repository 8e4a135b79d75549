// wrapir autotune PROGRAM [--inputs IN.safetensors] [--device cpu|cuda] [--kernels DIR]
//                 [--symbols NAME=VALUE,...] [--warmup N] [--repetitions N]
//                 [--allow-failed-candidates] [--report REPORT.json] [--no-verify] [-o OUT.json]
//
// Autotune once, then emit (include/wrapir/run/autotune.hpp): runs the
// program once on the executor — on the CPU, or with --device cuda on GPU 0
// through the CUDA backend, with the kernels and externs `wrapir run` uses —
// so that each multi-kernel benchmarks its candidates, and writes the
// program with every measured multi-kernel call replaced by a direct call
// of the fastest candidate (the losers' definitions dropped; an
// `autotune: ...` comment before each call records the choice and the
// timings). The result goes to OUT (or stdout) as JSON; every emitter then
// renders only the chosen kernels.
//
// Inputs: the tensors and scalars of IN (the exporter's format, as for
// `wrapir run`), or else synthesised from the input buffers' declarations
// at the symbols' hints; --symbols overrides hints (s0=64,s1=128).
// --warmup and --repetitions set the benchmark per candidate (default 3 and
// 25; the median counts). A candidate that fails refuses the whole tuning
// unless --allow-failed-candidates. One line per multi-kernel goes to
// stderr (chosen, or kept and why); --report writes the choices and their
// timings as JSON.

#include "cli.hpp"
#include "device_backends.hpp"
#include "file_io.hpp"
#include "tensor_inputs.hpp"

#include <wrapir/io/json.hpp>
#include <wrapir/io/safetensors.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/run/autotune.hpp>
#ifdef WRAPIR_TOOL_CPU_BACKEND
#include <wrapir/run/cpu/backend.hpp>
#endif

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::cli {

namespace {

std::size_t count_option(const Arguments& a, std::string_view name, std::size_t fallback, std::size_t least) {
  const auto v = a.value(name);
  if (!v) return fallback;
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc{} || end != v->data() + v->size() || n < least || n > 100'000)
    throw Failure{"autotune: " + std::string(name) + " takes a count from " + std::to_string(least) +
                  " to 100000, got '" + one_line(*v, 40) + "'"};
  return n;
}

/// `--symbols s0=64,s1=128`.
void parse_symbols(std::string_view text, run::AutotuneOptions& options) {
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t eq = item.find('=');
    std::int64_t value = 0;
    const std::string_view number = eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (eq == std::string_view::npos || eq == 0 || number.empty() || ec != std::errc{} ||
        end != number.data() + number.size())
      throw Failure{"autotune: --symbols takes NAME=VALUE[,NAME=VALUE...] with integer values, got '" +
                    one_line(text, 80) + "'"};
    if (!options.symbols.emplace(std::string(item.substr(0, eq)), value).second)
      throw Failure{"autotune: --symbols gives '" + one_line(item.substr(0, eq), 60) + "' twice"};
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
}

/// The inputs of `--inputs FILE`, in program order (see `wrapir run`).
void read_inputs(std::string_view path, const Arguments& a, const ir::Program& program, run::AutotuneOptions& options) {
  auto file = io::read_safetensors(std::string(path), {.max_bytes = max_input_bytes(a)});
  if (!file) throw Failure{one_line(file.error().message, 400)};
  ProgramInputs given = program_inputs(program, *file, path, max_input_bytes(a));
  options.inputs = std::move(given.tensors);
  options.scalars = std::move(given.scalars);
}

boost::json::value time_json(const std::optional<double>& ms) {
  return ms ? boost::json::value(*ms) : boost::json::value(nullptr);
}

std::string report_json(const run::AutotuneResult& r) {
  boost::json::array choices;
  for (const run::AutotuneChoice& c : r.choices) {
    boost::json::array candidates;
    for (const auto& t : c.record.candidates)
      candidates.push_back(boost::json::object{{"name", t.name}, {"median_ms", time_json(t.median_ms)}});
    boost::json::object at;
    for (const auto& [name, value] : c.record.at) at[name] = value;
    boost::json::array failures;
    for (const std::string& f : c.failures) failures.push_back(boost::json::value(f));
    choices.push_back(boost::json::object{{"graph", c.graph},
                                          {"multi_kernel", c.record.multi_kernel},
                                          {"chosen", c.record.chosen},
                                          {"median_ms", time_json(c.record.median_ms)},
                                          {"candidates", std::move(candidates)},
                                          {"failures", std::move(failures)},
                                          {"calls_rewritten", c.calls_rewritten},
                                          {"device", c.record.device},
                                          {"warmup", c.record.warmup},
                                          {"repetitions", c.record.repetitions},
                                          {"at", std::move(at)}});
  }
  boost::json::array kept;
  for (const run::KeptMultiKernel& k : r.kept)
    kept.push_back(boost::json::object{{"graph", k.graph}, {"multi_kernel", k.multi_kernel}, {"reason", k.reason}});
  boost::json::array warnings;
  for (const std::string& w : r.warnings) warnings.push_back(boost::json::value(w));
  boost::json::object out{{"choices", std::move(choices)},
                          {"kept", std::move(kept)},
                          {"wall_ms", r.wall_ms},
                          {"warnings", std::move(warnings)}};
  return boost::json::serialize(out) + "\n";
}

int cmd_autotune(const Arguments& a) {
  a.allow_only({"--inputs", "--device", "--kernels", "--symbols", "--warmup", "--repetitions",
                "--allow-failed-candidates", "--report", "--no-verify", "--max-input-bytes", "-o"});
  const std::string_view device = a.value("--device").value_or("cpu");
  if (device != "cpu" && device != "cuda")
    throw Failure{"autotune: --device must be cpu or cuda, got '" + one_line(device, 40) + "'"};
  if (a.value("--kernels") && device != "cuda") throw Failure{"autotune: --kernels DIR is for --device cuda"};
#ifndef WRAPIR_TOOL_CUDA_BACKEND
  if (device == "cuda")
    throw Failure{"autotune: this wrapir was built without the CUDA backend (no CUDA Toolkit headers at build time); "
                  "use --device cpu"};
#endif
  run::AutotuneOptions options;
  options.executor.multi_kernel.warmup = count_option(a, "--warmup", 3, 0);
  options.executor.multi_kernel.repetitions = count_option(a, "--repetitions", 25, 1);
  options.allow_failed_candidates = a.flag("--allow-failed-candidates");
  if (auto s = a.value("--symbols")) parse_symbols(*s, options);

  const ir::Program program = load_verified_program(a);
  if (auto inputs = a.value("--inputs")) read_inputs(*inputs, a, program, options);

  if (device == "cpu") {
#ifdef WRAPIR_TOOL_CPU_BACKEND
    auto backend = run::cpu::backend_options();
    if (!backend) throw Failure{"autotune: " + one_line(backend.error().message, 600)};
    const std::size_t warmup = options.executor.multi_kernel.warmup;
    const std::size_t repetitions = options.executor.multi_kernel.repetitions;
    options.executor = *std::move(backend);
    options.executor.multi_kernel.warmup = warmup;
    options.executor.multi_kernel.repetitions = repetitions;
#endif
  } else {
#ifdef WRAPIR_TOOL_CUDA_BACKEND
    CudaExecutor cuda = cuda_executor(a, "autotune");
    const std::size_t warmup = options.executor.multi_kernel.warmup;
    const std::size_t repetitions = options.executor.multi_kernel.repetitions;
    options.executor = std::move(cuda.options);
    options.executor.multi_kernel.warmup = warmup;
    options.executor.multi_kernel.repetitions = repetitions;
    options.executor.multi_kernel.cache_context = cuda.backend->describe();
#endif
  }
  options.executor.verify = !a.flag("--no-verify");

  auto tuned = run::autotune(program, std::move(options));
  if (!tuned) throw Failure{one_line(tuned.error().message, 800)};
  for (const run::AutotuneChoice& c : tuned->choices) {
    std::string line = "autotune: " + (c.graph.empty() ? "" : c.graph + "/") + c.record.multi_kernel + " -> " +
                       c.record.chosen + " (";
    for (std::size_t i = 0; i < c.record.candidates.size(); ++i) {
      const auto& t = c.record.candidates[i];
      char ms[32] = "failed";
      if (t.median_ms) std::snprintf(ms, sizeof ms, "%.4g ms", *t.median_ms);
      line += (i ? ", " : "") + t.name + " " + ms;
    }
    line += "; " + std::to_string(c.calls_rewritten) + (c.calls_rewritten == 1 ? " call" : " calls") + " rewritten)";
    std::fprintf(stderr, "%s\n", one_line(line, 2000).c_str());
  }
  for (const run::KeptMultiKernel& k : tuned->kept)
    std::fprintf(stderr, "%s\n",
                 one_line("autotune: kept " + (k.graph.empty() ? "" : k.graph + "/") + k.multi_kernel + ": " + k.reason,
                          2000)
                     .c_str());
  std::fprintf(stderr, "autotune: measured in %.1f ms\n", tuned->wall_ms);
  if (auto report = a.value("--report")) write_output_file(*report, report_json(*tuned));
  const std::string json = io::to_json(tuned->program) + "\n";
  if (auto path = a.value("-o")) write_output_file(*path, json);
  else std::fwrite(json.data(), 1, json.size(), stdout);
  return 0;
}

}  // namespace

int run_autotune_command(const std::vector<std::string_view>& args) {
  const Arguments a("autotune", args);
  return cmd_autotune(a);
}

}  // namespace wrapir::cli
