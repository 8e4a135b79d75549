// Where a loaded program's heap is, part by part: the driver behind the
// breakdown in docs/performance.md ("The loaded program's heap"). It
// counts blocks as bench/drivers/heap_per_line.cpp does (`operator new`
// replaced, `malloc_usable_size + 8` per block: glibc's header), loads a
// program with `io::program_from_json(bytes, read_at)`, prints the heap
// the program holds and the tables' lengths and capacities, then frees the
// program a part at a time (the kernel calls' argument vectors, the body,
// each table, the expression context) and prints what each part held, in
// bytes per line of the body. The parts hold everything under them: the
// body's line includes the heap its lines own other than argument vectors.
//
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude bench/drivers/program_heap.cpp -o program_heap -lboost_json
//   ./program_heap PROGRAM.json     # e.g. the chain of `pipeline_bench --lines=1000000 --keep=FILE`

#include <wrapir/io/json.hpp>

#include "counting_heap.hpp"

#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <variant>
#include <vector>

int main(int argc, char** argv) {
  using counting_heap::live_blocks;
  using counting_heap::live_bytes;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM.json\n", argv[0]);
    return 2;
  }
  const long before = live_bytes;
  const long blocks_before = live_blocks;
  wrapir::Program p = counting_heap::load_or_exit(argv[1]);
  const double lines = static_cast<double>(p.body.size());
  std::printf("body %zu lines (capacity %zu, sizeof(Line) %zu); buffers %zu (capacity %zu, sizeof(BufferDecl) %zu); "
              "kernels %zu (capacity %zu); symbols %zu (capacity %zu)\n",
              p.body.size(), p.body.capacity(), sizeof(wrapir::Line), p.buffers.size(), p.buffers.capacity(),
              sizeof(wrapir::ir::BufferDecl), p.kernels.size(), p.kernels.capacity(), p.symbols.size(),
              p.symbols.capacity());
  std::printf("the loaded program: %.2f B/line in %ld blocks\n", static_cast<double>(live_bytes - before) / lines,
              live_blocks - blocks_before);

  long last = live_bytes;
  long last_blocks = live_blocks;
  const auto freed = [&](const char* what) {
    std::printf("  %-36s %7.2f B/line %9ld blocks\n", what, static_cast<double>(last - live_bytes) / lines,
                last_blocks - live_blocks);
    last = live_bytes;
    last_blocks = live_blocks;
  };
  std::map<std::size_t, long> calls_by_arguments;
  for (wrapir::Line& line : p.body)
    if (auto* call = std::get_if<wrapir::ir::KernelCall>(&line)) {
      ++calls_by_arguments[call->args.size()];
      std::vector<wrapir::ir::Arg>().swap(call->args);
    }
  freed("kernel calls' argument vectors");
  for (const auto& [arguments, calls] : calls_by_arguments)
    std::printf("    %ld calls of %zu arguments\n", calls, arguments);
  std::vector<wrapir::Line>().swap(p.body);
  freed("body (its lines' other heap too)");
  std::vector<wrapir::ir::BufferDecl>().swap(p.buffers);
  freed("buffer table");
  std::vector<wrapir::ir::KernelDecl>().swap(p.kernels);
  freed("kernel table");
  std::vector<wrapir::ir::SymbolDecl>().swap(p.symbols);
  freed("symbol table");
  std::vector<wrapir::ir::PoolDecl>().swap(p.pools);
  std::vector<wrapir::ir::ProgramInput>().swap(p.inputs);
  std::vector<wrapir::ir::ProgramOutput>().swap(p.outputs);
  std::vector<wrapir::Program>().swap(p.subgraphs);
  std::string().swap(p.name);
  freed("pools, inputs, outputs, subgraphs");
  const long owners = p.context.use_count();
  p.context.reset();
  freed(owners == 1 ? "expression context" : "expression context (shared: not freed)");
  std::printf("  %-36s %7.2f B/line %9ld blocks\n", "left (not the program's)",
              static_cast<double>(live_bytes - before) / lines, live_blocks - blocks_before);
}
