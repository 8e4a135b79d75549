// wrapir emit | plan: the pipeline commands.
//
//   wrapir emit --target python|text|dot|NAME [options] FILE [-o OUT]
//       the program rendered by a target of the emit registry
//       (emit/registry.hpp; the built-ins are emit/targets.hpp), on stdout
//       or in OUT. --options KEY=VALUE[,KEY=VALUE...] passes the target's
//       options (`--options legend=false,direction=LR` for dot). For python
//       also: --no-device-guard, --no-benchmark-harness,
//       --size-asserts none|eager|deferred; for python and cpp:
//       --debug-level 0-3, --debug-kernels NAME[,NAME...]
//       The output is written a piece at a time as it is rendered
//       (EmitterRegistry::emit to a TextSink; python streams, so a large
//       module is never whole in memory).
//   wrapir plan --strategy reuse|pools|arena [options] FILE [-o OUT] [--timeline SVG]
//       the planned program as JSON on stdout (or in OUT), one statistics
//       line on stderr, and with --timeline the memory timeline picture.
//       Options: --pool-policy none|intermediates|outputs|combined (pools);
//       --no-spill (arena: every block in the arena, even where leaving one
//       to the allocator lowers the peak; docs/memory-planning.md)
//
// FILE holds a program as JSON or in the text form. Both commands verify
// the program first and refuse an invalid one (the findings on stderr, exit
// 1) unless --no-verify is given; both take --max-input-bytes N. OUT and SVG
// are written atomically and never through a symbolic link (file_io.hpp).
// Errors are one line on stderr and exit 1, as for every wrapir command.

#include "cli.hpp"
#include "file_io.hpp"

#include <wrapir/emit/registry.hpp>
#include <wrapir/emit/targets.hpp>
#include <wrapir/emit/text_sink.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/timeline_svg.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/reuse.hpp>
#include <wrapir/pass/timeline.hpp>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::cli {
namespace {

void write_output(const Arguments& a, std::string_view text) {
  if (auto path = a.value("-o")) write_output_file(*path, text);
  else std::fwrite(text.data(), 1, text.size(), stdout);
}

void debug_flags(const Arguments& a, EmitOptions& options);

/// The Python flags as options of the `python` target, checked here so that
/// their errors name the flags.
void python_flags(const Arguments& a, EmitOptions& options) {
  if (a.flag("--no-device-guard")) options.values.emplace_back("device_guard", "false");
  if (a.flag("--no-benchmark-harness")) options.values.emplace_back("benchmark_harness", "false");
  if (auto s = a.value("--size-asserts")) {
    if (*s != "none" && *s != "eager" && *s != "deferred")
      throw Failure{"emit: --size-asserts takes none, eager or deferred, not '" + one_line(*s, 40) + "'"};
    options.values.emplace_back("size_asserts", *s);
  }
  debug_flags(a, options);
}

/// The debug printer's flags (python and cpp targets).
void debug_flags(const Arguments& a, EmitOptions& options) {
  if (auto level = a.value("--debug-level")) {
    int v = -1;
    const auto r = std::from_chars(level->data(), level->data() + level->size(), v);
    if (r.ec != std::errc{} || r.ptr != level->data() + level->size() || v < 0 || v > 3)
      throw Failure{"emit: --debug-level takes 0, 1, 2 or 3, not '" + one_line(*level, 40) + "'"};
    options.values.emplace_back("debug_level", *level);
  }
  if (auto names = a.value("--debug-kernels")) {
    std::string_view rest = *names;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      if (comma == 0 || comma + 1 == rest.size())
        throw Failure{"emit: --debug-kernels has an empty name in '" + one_line(*names, 80) + "'"};
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    options.values.emplace_back("debug_kernels", *names);
  }
}

/// `--options KEY=VALUE[,KEY=VALUE...]` as the target's options.
void generic_options(const Arguments& a, EmitOptions& options) {
  const auto given = a.value("--options");
  if (!given) return;
  std::string_view rest = *given;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw Failure{"emit: --options takes KEY=VALUE[,KEY=VALUE...], not '" + one_line(item, 80) + "'"};
    options.values.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
}

int cmd_emit(const Arguments& a) {
  a.allow_only({"--target", "-o", "--options", "--no-device-guard", "--no-benchmark-harness", "--size-asserts",
                "--debug-level", "--debug-kernels", "--no-verify", "--max-input-bytes"});
  EmitterRegistry registry;
  if (Result<void> builtin = register_builtin_targets(registry); !builtin)
    throw Failure{"emit: " + one_line(builtin.error().to_string(), 400)};
  const auto target = a.value("--target");
  if (!target) throw Failure{"emit needs --target TARGET, one of " + registry.known()};
  if (Result<const EmitTarget*> known = registry.lookup(*target); !known)
    throw Failure{"emit: " + one_line(known.error().to_string(), 400)};

  EmitOptions options;
  if (*target == "python") {
    python_flags(a, options);
  } else {
    const bool debug = *target == "cpp";  // the C++ unit has the debug printer too
    for (std::string_view flag : {"--no-device-guard", "--no-benchmark-harness", "--size-asserts"})
      if (a.flag(flag)) throw Failure{"emit: " + std::string(flag) + " applies to --target python only"};
    for (std::string_view flag : {"--debug-level", "--debug-kernels"})
      if (!debug && a.flag(flag)) throw Failure{"emit: " + std::string(flag) + " applies to --target python and cpp only"};
    if (debug) debug_flags(a, options);
  }
  generic_options(a, options);

  const ir::Program program = load_verified_program(a);
  // Straight to the output a piece at a time (TextSink): a module of a
  // million lines is never whole in memory. With -o the pieces go to a
  // temporary file renamed over OUT only when the emission succeeded.
  std::optional<Diagnostic> emit_error;
  const auto emit_to = [&](const detail::FileWriter& write) -> Result<void> {
    Result<void> done = registry.emit(*target, program, TextSink{write}, options);
    if (!done) emit_error = done.error();
    return done;
  };
  const auto failed = [&](const Diagnostic& d) -> Failure {
    // An emission's diagnostic (the sink's included) names the program;
    // one of the output file's own steps (create, rename) names the file.
    if (emit_error) return Failure{one_line(a.file(), 200) + ": " + one_line(d.to_string(), 400)};
    return Failure{d.message};
  };
  if (auto path = a.value("-o")) {
    if (Result<void> done = detail::write_file_atomically_streamed(std::string(*path), emit_to); !done)
      throw failed(done.error());
  } else {
    const detail::FileWriter to_stdout = [](std::string_view piece) -> Result<void> {
      if (std::fwrite(piece.data(), 1, piece.size(), stdout) != piece.size()) return Diagnostic{"writing to stdout failed"};
      return {};
    };
    if (Result<void> done = emit_to(to_stdout); !done) throw failed(done.error());
  }
  return 0;
}

/// Whether a planner's byte count saturated: the planners add bytes with
/// saturation at INT64_MAX (pass/trace.hpp), so that value means "more than
/// int64 holds", not a size.
constexpr bool saturated(std::int64_t bytes) noexcept { return bytes == std::numeric_limits<std::int64_t>::max(); }

/// A planner's byte count as `plan` prints it: "unknown" where it saturated,
/// as `wrapir stats` says of a peak that overflowed.
std::string bytes_figure(std::int64_t bytes) { return saturated(bytes) ? "unknown" : std::to_string(bytes); }

int cmd_plan(const Arguments& a) {
  a.allow_only({"--strategy", "-o", "--timeline", "--pool-policy", "--no-spill", "--no-verify", "--max-input-bytes"});
  const auto strategy = a.value("--strategy");
  if (!strategy) throw Failure{"plan needs --strategy reuse, pools or arena"};
  if (*strategy != "reuse" && *strategy != "pools" && *strategy != "arena")
    throw Failure{"plan: unknown strategy '" + one_line(*strategy, 40) + "'; expected reuse, pools or arena"};
  if (a.value("--pool-policy") && *strategy != "pools") throw Failure{"plan: --pool-policy needs --strategy pools"};
  if (a.flag("--no-spill") && *strategy != "arena") throw Failure{"plan: --no-spill needs --strategy arena"};

  const ir::Program program = load_verified_program(a);
  const auto start = std::chrono::steady_clock::now();
  Result<pass::PlanResult> planned = Diagnostic{"no strategy ran"};
  if (*strategy == "reuse") {
    planned = pass::plan_reuse(program);
  } else if (*strategy == "arena") {
    planned = pass::plan_arena(program, {.spill = !a.flag("--no-spill")});
  } else {
    pass::PoolOptions options;
    if (auto policy = a.value("--pool-policy")) {
      bool known = false;
      for (pass::PoolPolicy p : {pass::PoolPolicy::none, pass::PoolPolicy::intermediates, pass::PoolPolicy::outputs,
                                 pass::PoolPolicy::combined})
        if (pass::pool_policy_name(p) == *policy) {
          options.policy = p;
          known = true;
        }
      if (!known)
        throw Failure{"plan: --pool-policy takes none, intermediates, outputs or combined, not '" +
                      one_line(*policy, 40) + "'"};
    }
    planned = pass::plan_pools(program, options);
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!planned) throw Failure{one_line(a.file(), 200) + ": " + one_line(planned.error().to_string(), 400)};
  const pass::PlanResult& result = planned.value();

  if (auto svg_path = a.value("--timeline")) {
    auto timeline = pass::planned_timeline(result.program);
    if (!timeline) throw Failure{"plan: --timeline: " + one_line(timeline.error().to_string(), 400)};
    io::TimelineOptions options;
    options.title = result.program.name + ": --strategy " + std::string(*strategy);
    write_output_file(*svg_path, io::timeline_svg(timeline->trace, timeline->placement, timeline->roles, options));
  }
  write_output(a, io::to_json(result.program, {.pretty = true}));

  const pass::PlanStats& st = result.stats;
  char ratio[32] = "n/a";
  if (st.lower_bound_bytes > 0 && !saturated(st.peak_bytes) && !saturated(st.lower_bound_bytes))
    std::snprintf(ratio, sizeof ratio, "%.4f", static_cast<double>(st.peak_bytes) / static_cast<double>(st.lower_bound_bytes));
  std::fprintf(stderr,
               "strategy=%s peak_bytes=%s lower_bound_bytes=%s peak_over_bound=%s allocations=%zu reuses=%zu "
               "pools=%zu time_ms=%.3f\n",
               std::string(*strategy).c_str(), bytes_figure(st.peak_bytes).c_str(),
               bytes_figure(st.lower_bound_bytes).c_str(), ratio, st.allocations, st.reuses, st.pools, ms);
  return 0;
}

}  // namespace

int run_pipeline_command(std::string_view command, const std::vector<std::string_view>& args) {
  const Arguments a(command, args);
  return command == "emit" ? cmd_emit(a) : cmd_plan(a);
}

}  // namespace wrapir::cli
