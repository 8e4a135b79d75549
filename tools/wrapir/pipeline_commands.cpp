// wrapir emit | plan: the pipeline commands.
//
//   wrapir emit --target python [options] FILE [-o OUT]
//       the program as a Python module (emit/python.hpp), on stdout or in OUT.
//       Options: --no-device-guard, --no-benchmark-harness,
//       --size-asserts none|eager|deferred, --debug-level 0-3,
//       --debug-kernels NAME[,NAME...]
//   wrapir plan --strategy reuse|pools|arena [options] FILE [-o OUT] [--timeline SVG]
//       the planned program as JSON on stdout (or in OUT), one statistics
//       line on stderr, and with --timeline the memory timeline picture.
//       Options: --pool-policy none|intermediates|outputs|combined (pools)
//
// FILE holds a program as JSON or in the text form. Both commands verify
// the program first and refuse an invalid one (the findings on stderr, exit
// 1) unless --no-verify is given; both take --max-input-bytes N. OUT and SVG
// are written atomically and never through a symbolic link (file_io.hpp).
// Errors are one line on stderr and exit 1, as for every wrapir command.

#include "cli.hpp"
#include "file_io.hpp"

#include <wrapir/emit/python.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/timeline_svg.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/reuse.hpp>
#include <wrapir/pass/timeline.hpp>

#include <charconv>
#include <chrono>
#include <cstdio>
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

int cmd_emit(const Arguments& a) {
  a.allow_only({"--target", "-o", "--no-device-guard", "--no-benchmark-harness", "--size-asserts", "--debug-level",
                "--debug-kernels", "--no-verify", "--max-input-bytes"});
  const auto target = a.value("--target");
  if (!target) throw Failure{"emit needs --target python"};
  if (*target != "python") throw Failure{"emit: unknown target '" + one_line(*target, 40) + "'; expected python"};

  python::PythonOptions options;
  options.device_guard = !a.flag("--no-device-guard");
  options.benchmark_harness = !a.flag("--no-benchmark-harness");
  if (auto s = a.value("--size-asserts")) {
    if (*s == "none") options.size_asserts = python::SizeAsserts::none;
    else if (*s == "eager") options.size_asserts = python::SizeAsserts::eager;
    else if (*s == "deferred") options.size_asserts = python::SizeAsserts::deferred;
    else throw Failure{"emit: --size-asserts takes none, eager or deferred, not '" + one_line(*s, 40) + "'"};
  }
  if (auto level = a.value("--debug-level")) {
    int v = -1;
    const auto r = std::from_chars(level->data(), level->data() + level->size(), v);
    if (r.ec != std::errc{} || r.ptr != level->data() + level->size() || v < 0 || v > 3)
      throw Failure{"emit: --debug-level takes 0, 1, 2 or 3, not '" + one_line(*level, 40) + "'"};
    options.debug_level = v;
  }
  if (auto names = a.value("--debug-kernels")) {
    std::string_view rest = *names;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view name = rest.substr(0, comma);
      if (name.empty()) throw Failure{"emit: --debug-kernels has an empty name in '" + one_line(*names, 80) + "'"};
      options.debug_kernel_filter.emplace_back(name);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }

  const ir::Program program = load_verified_program(a);
  auto module = python::to_python(program, options);
  if (!module) throw Failure{one_line(a.file(), 200) + ": " + one_line(module.error().to_string(), 400)};
  write_output(a, module.value());
  return 0;
}

int cmd_plan(const Arguments& a) {
  a.allow_only({"--strategy", "-o", "--timeline", "--pool-policy", "--no-verify", "--max-input-bytes"});
  const auto strategy = a.value("--strategy");
  if (!strategy) throw Failure{"plan needs --strategy reuse, pools or arena"};
  if (*strategy != "reuse" && *strategy != "pools" && *strategy != "arena")
    throw Failure{"plan: unknown strategy '" + one_line(*strategy, 40) + "'; expected reuse, pools or arena"};
  if (a.value("--pool-policy") && *strategy != "pools") throw Failure{"plan: --pool-policy needs --strategy pools"};

  const ir::Program program = load_verified_program(a);
  const auto start = std::chrono::steady_clock::now();
  Result<pass::PlanResult> planned = Diagnostic{"no strategy ran"};
  if (*strategy == "reuse") {
    planned = pass::plan_reuse(program);
  } else if (*strategy == "arena") {
    planned = pass::plan_arena(program);
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
  if (st.lower_bound_bytes > 0)
    std::snprintf(ratio, sizeof ratio, "%.4f", static_cast<double>(st.peak_bytes) / static_cast<double>(st.lower_bound_bytes));
  std::fprintf(stderr,
               "strategy=%s peak_bytes=%lld lower_bound_bytes=%lld peak_over_bound=%s allocations=%zu reuses=%zu "
               "pools=%zu time_ms=%.3f\n",
               std::string(*strategy).c_str(), static_cast<long long>(st.peak_bytes),
               static_cast<long long>(st.lower_bound_bytes), ratio, st.allocations, st.reuses, st.pools, ms);
  return 0;
}

}  // namespace

int run_pipeline_command(std::string_view command, const std::vector<std::string_view>& args) {
  const Arguments a(command, args);
  return command == "emit" ? cmd_emit(a) : cmd_plan(a);
}

}  // namespace wrapir::cli
