// Prints what every storage consumer computes (liveness, traces, held
// traces, program and plan statistics, the reuse, in-place, pool and arena
// plans) for the test fixtures and for seeded random programs, verified and
// mutated. Built once against the headers before a refactoring and once
// after, the two outputs must be byte-identical: this is how the move of
// the line kinds' effects into one table (ir/effects.hpp) was checked.
//
//   g++ -std=c++20 -O1 -I<old>/include  tests/ir/support/effects_equivalence.cpp -lboost_json -o old
//   g++ -std=c++20 -O1 -Iinclude        tests/ir/support/effects_equivalence.cpp -lboost_json -o new
//   ./old <repo> > old.txt && ./new <repo> > new.txt && cmp old.txt new.txt
//
// Not a *_test.cpp: it is not part of wrapir_tests.

#include "random_programs.hpp"

#include <wrapir/emit/text.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/ir/stats.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/inplace.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/plan_stats.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/reuse.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

using namespace wrapir;

namespace {

std::string expr_text(expr::Expr e) {
  if (!e) return "<null>";
  try {
    return expr::print_python(e);
  } catch (const std::exception& x) {
    return std::string("<") + x.what() + ">";
  }
}

void dump_trace(std::ostream& o, const pass::AllocationTrace& t) {
  o << "  steps " << t.steps << "\n";
  for (const auto& a : t.allocations)
    o << "  " << a.name << " " << a.bytes << " [" << a.begin << "," << a.end << ") d" << a.device << " o"
      << a.is_output << "\n";
}

void dump_stats(std::ostream& o, const pass::PlanStats& s) {
  o << "  peak " << s.peak_bytes << " bound " << s.lower_bound_bytes << " allocs " << s.allocations << " reuses "
    << s.reuses << " pools " << s.pools << " arenas " << s.arenas << " pool_bytes " << s.pool_bytes << "\n";
}

void dump_analyses(std::ostream& o, const ir::Program& p) {
  if (auto l = pass::liveness_of(p)) {
    o << " liveness steps " << l.value().steps << "\n";
    for (const auto& b : l.value().lifetimes) {
      o << "  b" << b.buffer.index << " " << b.first_line << ".." << b.last_line << " origin "
        << static_cast<int>(b.origin) << " out " << b.is_output << " aliases";
      for (auto a : b.aliases) o << " " << a.index;
      o << "\n";
    }
    o << "  storage_of";
    for (auto s : l.value().storage_of) o << " " << static_cast<long long>(s);
    o << "\n";
  } else {
    o << " liveness error: " << l.error().message << "\n";
  }
  if (auto t = pass::trace_of(p)) {
    o << " trace\n";
    dump_trace(o, t.value());
  } else {
    o << " trace error: " << t.error().message << "\n";
  }
  if (auto h = pass::held_trace(p)) {
    o << " held\n";
    dump_trace(o, h.value().trace);
    for (const auto& w : h.value().owners)
      o << "  owner " << (w.buffer ? static_cast<long long>(w.buffer->index) : -1) << " "
        << (w.pool ? static_cast<long long>(w.pool->index) : -1) << "\n";
  } else {
    o << " held error: " << h.error().message << "\n";
  }
  const ir::ProgramStats s = ir::program_stats(p);
  o << " stats lines " << s.lines << " sub " << s.subgraphs << " kernels " << s.kernels << " launches " << s.launches
    << " allocs " << s.allocations << " bytes " << expr_text(s.bytes_allocated) << " at_hints "
    << (s.bytes_allocated_at_hints ? std::to_string(*s.bytes_allocated_at_hints) : "-") << " peak "
    << (s.peak_bytes_at_hints ? std::to_string(*s.peak_bytes_at_hints) : "-") << " per_kind";
  for (auto n : s.lines_per_kind) o << " " << n;
  o << "\n";
  if (auto m = pass::measure_plan(p, p)) {
    o << " measure\n";
    dump_stats(o, m.value());
  } else {
    o << " measure error: " << m.error().message << "\n";
  }
}

void dump_plan(std::ostream& o, const char* what, const Result<pass::PlanResult>& r, bool analyse) {
  if (!r) {
    o << " " << what << " error: " << r.error().message << "\n";
    return;
  }
  o << " " << what << "\n";
  dump_stats(o, r.value().stats);
  o << text::to_text(r.value().program);
  if (analyse) {
    o << " " << what << " analyses\n";
    dump_analyses(o, r.value().program);
  }
}

void dump_program(std::ostream& o, const std::string& name, const ir::Program& p) {
  o << "=== " << name << "\n";
  dump_analyses(o, p);
  for (const bool guard : {true, false}) {
    pass::ReuseOptions r;
    r.peak_guard = guard;
    dump_plan(o, guard ? "reuse" : "reuse-unguarded", pass::plan_reuse(p, r), guard);
  }
  pass::InplaceOptions in;
  in.may_alias = [](const ir::KernelDecl& k, std::size_t i, std::size_t out) {
    return k.name == "binary_f32" ? i == 0 && out == 1 : i != out;
  };
  dump_plan(o, "inplace", pass::plan_inplace(p, in), true);
  dump_plan(o, "pools", pass::plan_pools(p), true);
  dump_plan(o, "arena", pass::plan_arena(p), true);
}

}  // namespace

int main(int argc, char** argv) {
  std::ostringstream o;
  const std::filesystem::path repo = argc > 1 ? argv[1] : ".";
  for (const char* dir : {"tests/gpu_python/programs", "tests/tools/programs", "tests/tools/programs/bad"}) {
    std::vector<std::filesystem::path> files;
    if (!std::filesystem::exists(repo / dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(repo / dir))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f);
      std::stringstream text;
      text << in.rdbuf();
      auto p = io::program_from_json(text.str());
      if (!p) {
        o << "=== " << f.filename().string() << " does not load\n";
        continue;
      }
      dump_program(o, f.filename().string(), p.value());
      for (std::uint32_t m = 1; m <= 8; ++m)
        dump_program(o, f.filename().string() + " mutated " + std::to_string(m), wrapir_test::mutate(p.value(), m));
    }
  }
  const std::uint32_t seeds = argc > 2 ? static_cast<std::uint32_t>(std::stoul(argv[2])) : 200;
  for (std::uint32_t seed = 1; seed <= seeds; ++seed) {
    const ir::Program p = wrapir_test::random_program(seed, {.steps = 20 + seed % 100, .hints = seed % 7 != 0});
    dump_program(o, "random " + std::to_string(seed), p);
    dump_program(o, "random " + std::to_string(seed) + " mutated", wrapir_test::mutate(p, seed));
  }
  std::cout << o.str();
}
