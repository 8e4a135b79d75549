// Plans a fixed set of programs with plan_arena and prints, per program,
// the arenas' total bytes at six bindings of every size symbol, the peak,
// the bound, a hash of the planned program's text and the verifier's
// finding count; each planned text goes to OUT_DIR. Built against two
// trees' include/, the two outputs diffed say which plans changed and
// whether any grew: the driver behind "Which plans changed" of
// "Unrelated sizes: names, not joins" in docs/performance.md.
//
//   g++ -std=c++20 -O2 -DNDEBUG -I<tree>/include bench/drivers/plan_compare.cpp -o plan_compare -lboost_json
//   ./plan_compare REPO OUT_DIR > plans.txt      # REPO: where tests/ is read from

#include <wrapir/expr/eval.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/text.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/traces.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace pass = wrapir::pass;

static void plan_one(const std::string& name, const wrapir::ir::Program& p, const std::string& out_dir) {
  auto planned = pass::plan_arena(p);
  if (!planned) {
    std::printf("%-40s error %s\n", name.c_str(), planned.error().message.c_str());
    return;
  }
  const std::string text = wrapir::text::to_text(planned->program);
  std::ofstream(out_dir + "/" + name + ".txt") << text;
  std::string totals;
  for (std::int64_t v : {1, 13, 64, 100, 1000, 100000}) {
    wrapir::expr::Bindings b;
    for (const auto& d : planned->program.symbols)
      if (d.origin != wrapir::ir::SymbolOrigin::computed) b.set(d.symbol, v);
    for (const auto& l : planned->program.body)
      if (const auto* a = std::get_if<wrapir::ir::SymbolicCallArg>(&l)) b.set(a->symbol, wrapir::expr::eval(a->value, b).value());
    long long total = 0;
    for (const auto& pool : planned->program.pools) total += wrapir::expr::eval(pool.size_bytes, b).value();
    totals += " " + std::to_string(total);
  }
  std::printf("%-40s pools_at%s\n", name.c_str(), totals.c_str());
  std::printf("%-40s peak %lld bound %lld ratio %.4f hash %016zx verify %zu\n", name.c_str(),
              static_cast<long long>(planned->stats.peak_bytes), static_cast<long long>(planned->stats.lower_bound_bytes),
              static_cast<double>(planned->stats.peak_bytes) /
                  static_cast<double>(std::max<std::int64_t>(1, planned->stats.lower_bound_bytes)),
              std::hash<std::string>{}(text), wrapir::verify(planned->program).size());
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s REPO OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string repo = argv[1], out_dir = argv[2];
  std::filesystem::create_directories(out_dir);
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"tests/gpu_python/programs", "tests/golden/dot", "tests/fuzz/corpus/json_fuzz"})
    for (const auto& e : std::filesystem::directory_iterator(repo + "/" + dir))
      if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    if (auto p = wrapir::io::program_from_json(text.str())) plan_one("json_" + f.stem().string(), p.value(), out_dir);
  }
  const auto symbolic = [](const pass::AllocationTrace& t) { return pass::program_from_trace(t, {.symbolic = true}); };
  for (const auto& n : pass::trace_corpus()) {
    plan_one("corpus_" + n.name, pass::program_from_trace(n.trace, {.symbolic = false}), out_dir);
    plan_one("corpus_" + n.name + "_sym", symbolic(n.trace), out_dir);
  }
  for (std::uint64_t seed = 0; seed < 20; ++seed)
    plan_one("random_sym_" + std::to_string(seed), symbolic(pass::random_trace({.blocks = 50 + 40 * seed}, seed)), out_dir);
  for (std::size_t n : {100, 400, 1000, 2000})
    plan_one("bench_symbolic_random_" + std::to_string(n), symbolic(pass::random_trace({.blocks = n}, 42)), out_dir);
  plan_one("bench_symbolic_transformer", symbolic(pass::transformer_trace({.layers = 32}, 1)), out_dir);
  for (std::size_t n : {1000, 10000}) {
    plan_one("chain_sym_" + std::to_string(n), symbolic(pass::chain_trace({.blocks = n}, 1)), out_dir);
    plan_one("fan_out_sym_" + std::to_string(n), symbolic(pass::fan_out_trace({.blocks = n}, 2)), out_dir);
    plan_one("transformer_sym_" + std::to_string(n), symbolic(pass::transformer_trace({.layers = n / 14}, 1)), out_dir);
  }
  for (std::size_t layers : {2, 12})
    plan_one("transformer_train_sym_" + std::to_string(layers),
             symbolic(pass::transformer_trace({.layers = layers, .training = true}, 3)), out_dir);
}
