#pragma once
/// \file
/// Autotune once, then emit: `run::autotune(program, options)` measures the
/// candidates of every multi-kernel on the executor's device, records each
/// choice in the program, and returns a program in which every call of a
/// measured multi-kernel is a direct `KernelCall` of its winner — so every
/// emitter (Python, C++, DOT, the text form, FX) renders only the chosen
/// kernels, in one pass. AOTInductor's cpp-wrapper gets there with two
/// codegen passes (a Python wrapper that runs and records
/// `multi_kernel_to_choice`, then the C++ wrapper calling `lookup_choice`,
/// reference §2.2 and §5.3); here the choice is data in the IR, and code is
/// generated once, from the tuned program.
///
/// How it measures: it runs the whole program once on the executor
/// (run/executor.hpp) with the caller's kernels, externs and device
/// backend, the on-disk choice cache and any forced choice switched off.
/// Each multi-kernel's dispatcher (run/multi_kernel.hpp) then benchmarks its
/// candidates on its first call exactly as at run time: on private copies
/// of the buffers the call may write, restored before every run, with
/// `warmup` untimed and `repetitions` timed runs (the median counts), timed
/// by the executor's backend timer (the steady clock around each run, with
/// the device synchronised before and after: the CPU in CI, the same code on
/// CUDA). Its `on_choice` hook hands the timings back. The arguments are
/// what the program computes before the call, from the inputs: the caller's
/// (`AutotuneOptions::inputs`, host tensors placed on the program's device),
/// or synthesised from the input buffers' declarations at the measured
/// symbol values (detail/autotune_inputs.hpp). The copies go with the
/// dispatcher: the tuned program keeps no clone of a mutated input.
///
/// Where it measures: at the symbols' hints, overridden by
/// `AutotuneOptions::symbols` (every symbol an input layout or scalar input
/// needs must get a value one way or the other). For a dynamic program the
/// choice made there holds for every shape — the rule of the run-time
/// dispatcher (which benchmarks at its first call's shapes and keeps that
/// choice) and of Inductor's cpp-wrapper (which records the choice made
/// while autotuning at the hints). The symbol values are written into each
/// record (`at=`).
///
/// What it leaves as it was, listed in `AutotuneResult::kept` with the
/// reason: size-hint multi-kernels (`shape_keys`: they choose by the call's
/// shapes at run time, without benchmarking, so a dynamic program keeps the
/// choice per shape key); multi-kernels the measured run never called (in a
/// branch not taken, or never called at all); and multi-kernels whose name
/// is defined in more than one graph (the dispatchers report by name). The
/// tuned program still runs those through the dispatcher.
///
/// What a tuned call looks like (detail/autotune_rewrite.hpp): the
/// `MultiKernelCall` becomes a `Comment` holding the record
/// (detail/autotune_record.hpp: `autotune: multi_kernel=... chose=... ms=...
/// candidates=...`, read back with `parse_autotune_comment`) and a
/// `KernelCall` of the winner with the arguments its `arg_index` slices
/// select, its launcher grid, the call's device, stream and provenance. The
/// `MultiKernelDefinition`, the definitions of candidates nothing else
/// calls, and their kernel-table entries are dropped. The result is
/// verified again (unless `executor.verify` is off): a tuned program that
/// does not verify is refused, never returned. The records come back as
/// data too (`AutotuneResult::choices`).
///
/// Candidate Triton configs: the IR carries one launch configuration per
/// kernel (`KernelMetadata`: num_warps, num_stages, block constants), and
/// the bridge exports only a heuristics decorator's first config (it
/// reports the others as lost), so the candidates measured here are
/// multi-kernel alternatives. A kernel tuned over configs reaches the IR as
/// the config Inductor picked.
///
/// Refusals (diagnostics, nothing half done): a program that does not
/// verify; one with no multi-kernel (nothing to tune); a multi-kernel with
/// no candidates; a candidate that fails to run or to be timed (unless
/// `allow_failed_candidates`, when the others compete and the failure is in
/// the record as an untimed candidate); a measuring run that fails; inputs
/// that do not match the program.
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/ir/hints.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/run/detail/autotune_inputs.hpp>
#include <wrapir/run/detail/autotune_record.hpp>
#include <wrapir/run/detail/autotune_rewrite.hpp>
#include <wrapir/run/executor.hpp>
#include <wrapir/run/multi_kernel.hpp>
#include <wrapir/run/tensor.hpp>

#include <boost/variant2/variant.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::run {

struct AutotuneOptions {
  /// The device backend, kernels, externs and constants to measure with,
  /// and whether to verify first. Of `executor.multi_kernel`, `warmup`,
  /// `repetitions` and `cache_context` are used; the cache, a forced
  /// choice, the registry and `on_choice` are the pass's own.
  ExecutorOptions executor{};
  /// Symbol values that replace the hints, by symbol name.
  std::map<std::string, std::int64_t, std::less<>> symbols{};
  /// The program's tensor inputs in order; nullopt: synthesised.
  std::optional<std::vector<Tensor>> inputs{};
  /// The program's scalar inputs in order; nullopt: the values of their
  /// symbols (hints or `symbols`).
  std::optional<std::vector<std::int64_t>> scalars{};
  /// Seeds the synthesised inputs.
  std::uint64_t seed = 0x5eed;
  /// The most bytes synthesised inputs may take together.
  std::int64_t max_synthesised_bytes = std::int64_t{1} << 32;
  /// Choose among the candidates that ran when some fail (else refuse).
  bool allow_failed_candidates = false;
};

/// A multi-kernel the pass left as it was, and why.
struct KeptMultiKernel {
  std::string graph;  // "" for the top level, else subgraph names joined by '/'
  std::string multi_kernel;
  std::string reason;
};

/// One tuned multi-kernel.
struct AutotuneChoice {
  std::string graph;
  AutotuneRecord record;
  /// Failures of candidates that did not compete (allow_failed_candidates).
  std::vector<std::string> failures{};
  std::size_t calls_rewritten = 0;
};

struct AutotuneResult {
  /// The tuned program.
  ir::Program program;
  std::vector<AutotuneChoice> choices{};
  std::vector<KeptMultiKernel> kept{};
  /// The measuring run's wall time (every candidate's warm-up and timed
  /// runs, plus the program itself), in milliseconds.
  double wall_ms = 0;
  /// Warnings the dispatchers gave while measuring.
  std::vector<std::string> warnings{};
};

namespace autotune_detail {

/// A multi-kernel definition and where it is.
struct Found {
  std::string graph;
  std::string name;
  std::size_t candidates = 0;
  bool shape_keyed = false;
};

inline void find_multi_kernels(const ir::Program& g, const std::string& path, std::vector<Found>& out) {
  for (const ir::Line& line : g.body)
    if (const auto* d = std::get_if<ir::MultiKernelDefinition>(&line)) {
      if (!g.contains(d->kernel)) continue;  // an unverified program's bad id: the executor refuses it
      bool keyed = false;
      for (const auto& k : d->shape_keys) keyed = keyed || k.has_value();
      out.push_back(Found{path, g.kernel(d->kernel).name, d->candidates.size(), keyed});
    }
  for (const ir::Program& s : g.subgraphs) find_multi_kernels(s, path.empty() ? s.name : path + "/" + s.name, out);
}

/// What the dispatchers told, by multi-kernel name.
struct Told {
  std::vector<std::string> candidates;
  SelectionReport report;
  std::size_t times = 0;
};

inline std::size_t apply(ir::Program& g, const std::string& path,
                         const std::map<std::pair<std::string, std::string>, Decision>& decided) {
  std::unordered_map<std::uint32_t, Decision> here;
  for (const ir::Line& line : g.body)
    if (const auto* d = std::get_if<ir::MultiKernelDefinition>(&line); d && g.contains(d->kernel))
      if (const auto it = decided.find({path, g.kernel(d->kernel).name}); it != decided.end())
        here.emplace(d->kernel.index, it->second);
  std::size_t n = rewrite_graph(g, here);
  for (ir::Program& s : g.subgraphs) n += apply(s, path.empty() ? s.name : path + "/" + s.name, decided);
  return n;
}

inline std::string device_name(const ExecutorOptions& o) { return o.device ? o.device->describe() : "cpu"; }

}  // namespace autotune_detail

namespace autotune_detail {

inline Result<AutotuneResult> autotune_checked(const ir::Program& program, AutotuneOptions options) {
  auto refuse = [](std::string m) { return Diagnostic{"autotune: " + std::move(m)}; };

  std::vector<Found> found;
  find_multi_kernels(program, "", found);
  if (found.empty())
    return refuse("nothing to tune: the program has no multi-kernel (no kernel with several candidates; the IR "
                  "carries one launch configuration per kernel)");
  for (const Found& f : found)
    if (f.candidates == 0)
      return refuse("multi-kernel " + ir::quote_for_diagnostic(f.name) + (f.graph.empty() ? "" : " in " + f.graph) +
                    " has no candidates");
  if (options.executor.verify) {
    const std::vector<ir::Finding> findings = ir::verify(program);
    if (!findings.empty())
      return refuse("the program does not verify (" + std::to_string(findings.size()) +
                    (findings.size() == 1 ? " finding" : " findings") + "): " + ir::to_string(findings.front()));
  }

  // The symbol values measured at: hints, then the caller's.
  expr::Bindings at = ir::hint_bindings(program);
  for (const auto& [name, value] : options.symbols) {
    const expr::Expr s = program.ctx().find_symbol(name);
    bool declared = false;
    for (const ir::SymbolDecl& d : program.symbols) declared = declared || d.symbol == s;
    if (!s || !declared)
      return refuse("symbol " + ir::quote_for_diagnostic(name) + " is not a symbol of the program");
    if (!expr::satisfies(s.assumption(), value))
      return refuse("symbol " + ir::quote_for_diagnostic(name) + " = " + std::to_string(value) + " breaks its assumption (" +
                    std::string(expr::assumption_name(s.assumption())) + ")");
    at.set(s, value);
  }
  std::vector<std::pair<std::string, std::int64_t>> at_record;
  for (const ir::SymbolDecl& d : program.symbols)
    if (const auto v = at.get(d.symbol); v && (d.origin == ir::SymbolOrigin::input ||
                                              d.origin == ir::SymbolOrigin::input_shape))
      at_record.emplace_back(std::string(d.symbol.name()), *v);

  // The inputs.
  const DeviceBackend* backend = options.executor.device.get();
  std::vector<Tensor> tensors;
  std::vector<std::int64_t> scalars;
  Result<int> inputs_ready = wrapir::detail::catch_failure([&] {
    std::size_t tensor_inputs = 0;
    for (const ir::ProgramInput& in : program.inputs)
      tensor_inputs += boost::variant2::holds_alternative<ir::BufferId>(in) ? 1 : 0;
    if (options.inputs && options.inputs->size() != tensor_inputs)
      wrapir::detail::fail(std::to_string(options.inputs->size()) + " tensor inputs given, the program has " +
                           std::to_string(tensor_inputs));
    SplitMix64 random{options.seed};
    std::int64_t budget = options.max_synthesised_bytes;
    for (const ir::ProgramInput& in : program.inputs) {
      if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&in)) {
        const ir::BufferDecl& decl = program.buffer(*b);
        tensors.push_back(options.inputs ? place((*options.inputs)[tensors.size()], decl, backend)
                                         : synthesise(decl, at, backend, random, budget));
      } else if (!options.scalars) {
        const expr::Expr s = boost::variant2::get<expr::Expr>(in);
        scalars.push_back(value_of(s, at, "scalar input " + ir::quote_for_diagnostic(s.name())));
      }
    }
    if (options.scalars) scalars = *options.scalars;
    return 0;
  });
  if (!inputs_ready) return refuse("inputs: " + inputs_ready.error().message);

  // Measure: one run with the dispatchers reporting their choices.
  auto told = std::make_shared<std::map<std::string, Told, std::less<>>>();
  auto warnings = std::make_shared<std::vector<std::string>>();
  ExecutorOptions exec = options.executor;
  exec.verify = false;  // verified above
  exec.multi_kernel.cache_enabled = false;
  exec.multi_kernel.forced_choice.reset();
  exec.multi_kernel.registry = nullptr;
  exec.multi_kernel.warn = [warnings](std::string_view w) { warnings->emplace_back(w); };
  exec.multi_kernel.on_choice = [told](const MultiKernelPlan& plan, const SelectionReport& report) {
    Told& t = (*told)[plan.name()];
    t.candidates.clear();
    for (const Candidate& c : plan.candidates()) t.candidates.push_back(c.name);
    t.report = report;
    ++t.times;
  };
  const std::size_t warmup = exec.multi_kernel.warmup, repetitions = exec.multi_kernel.repetitions;
  const std::string device = device_name(exec);
  Result<Executor> executor = Executor::prepare(program, std::move(exec));
  if (!executor) return refuse("preparing the measuring run: " + executor.error().message);
  const auto start = std::chrono::steady_clock::now();
  Result<std::vector<Value>> ran = executor->run(tensors, scalars);
  if (ran && backend != nullptr)
    if (Result<void> r = backend->synchronize(); !r) ran = r.error();
  const auto stop = std::chrono::steady_clock::now();
  if (!ran) return refuse("the measuring run failed: " + ran.error().message);

  // Decide.
  AutotuneResult result{program};
  result.wall_ms = std::chrono::duration<double, std::milli>(stop - start).count();
  result.warnings = *warnings;
  std::map<std::string, std::size_t, std::less<>> graphs_of_name;
  for (const Found& f : found) ++graphs_of_name[f.name];
  std::vector<std::size_t> choice_index;  // by choice: the candidate chosen
  for (const Found& f : found) {
    auto keep = [&](std::string why) { result.kept.push_back(KeptMultiKernel{f.graph, f.name, std::move(why)}); };
    if (f.shape_keyed) {
      keep("a size-hint multi-kernel: it chooses by the call's shapes at run time, without benchmarking");
      continue;
    }
    if (graphs_of_name[f.name] > 1) {
      keep("its name is defined in " + std::to_string(graphs_of_name[f.name]) +
           " graphs, and the dispatchers report by name");
      continue;
    }
    const auto it = told->find(f.name);
    if (it == told->end()) {
      keep("the measuring run never called it");
      continue;
    }
    const Told& t = it->second;
    AutotuneChoice choice{f.graph, AutotuneRecord{}};
    AutotuneRecord& rec = choice.record;
    rec.multi_kernel = f.name;
    rec.chosen = t.candidates.at(t.report.choice);
    rec.device = device;
    rec.warmup = warmup;
    rec.repetitions = repetitions;
    rec.at = at_record;
    for (std::size_t i = 0; i < t.candidates.size(); ++i) {
      AutotuneRecord::Timing timing{t.candidates[i], std::nullopt};
      if (i < t.report.timings.size()) {
        timing.median_ms = t.report.timings[i].median_ms;
        if (!t.report.timings[i].failure.empty())
          choice.failures.push_back("candidate " + std::to_string(i) + " " + ir::quote_for_diagnostic(t.candidates[i]) +
                                    ": " + t.report.timings[i].failure);
      }
      rec.candidates.push_back(std::move(timing));
    }
    rec.median_ms = rec.candidates.at(t.report.choice).median_ms;
    if (!choice.failures.empty() && !options.allow_failed_candidates) {
      std::string message = "multi-kernel " + ir::quote_for_diagnostic(f.name) + ": ";
      for (std::size_t i = 0; i < choice.failures.size(); ++i) message += (i ? "; " : "") + choice.failures[i];
      return refuse(message + " (fix or remove the candidate, or allow failed candidates to choose among the others)");
    }
    result.choices.push_back(std::move(choice));
    choice_index.push_back(t.report.choice);
  }

  // Rewrite.
  std::map<std::pair<std::string, std::string>, Decision> decided;
  for (std::size_t i = 0; i < result.choices.size(); ++i) {
    AutotuneChoice& c = result.choices[i];
    decided.emplace(std::pair{c.graph, c.record.multi_kernel},
                    Decision{choice_index[i], autotune_comment(c.record), &c.calls_rewritten});
  }
  Result<std::size_t> rewritten = wrapir::detail::catch_failure([&] { return apply(result.program, "", decided); });
  if (!rewritten) return refuse(rewritten.error().message);
  // A direct call must fit its candidate (arguments against the signature):
  // what passes here is what every emitter will render.
  if (options.executor.verify)
    if (const std::vector<ir::Finding> findings = ir::verify(result.program); !findings.empty())
      return refuse("the tuned program does not verify (" + std::to_string(findings.size()) +
                    (findings.size() == 1 ? " finding" : " findings") + "): " + ir::to_string(findings.front()));
  return result;
}

}  // namespace autotune_detail

/// Measures, chooses and rewrites (see the file comment).
[[nodiscard]] inline Result<AutotuneResult> autotune(const ir::Program& program, AutotuneOptions options = {}) {
  try {
    return autotune_detail::autotune_checked(program, std::move(options));
  } catch (const std::exception& e) {  // an unverified program's bad id (std::out_of_range), or out of memory
    return Diagnostic{std::string("autotune: ") + e.what()};
  }
}

}  // namespace wrapir::run
