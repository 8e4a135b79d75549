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

#include <malloc.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <span>
#include <string>
#include <variant>
#include <vector>

// The replaced operators pair malloc with free; g++ cannot see that through
// inlined library code and warns.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
long live_bytes = 0;
long live_blocks = 0;
long counted(void* p) { return static_cast<long>(malloc_usable_size(p)) + 8; }
}  // namespace

void* operator new(std::size_t n) {
  void* p = std::malloc(n != 0 ? n : 1);
  if (p == nullptr) throw std::bad_alloc{};
  live_bytes += counted(p);
  ++live_blocks;
  return p;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  live_bytes -= counted(p);
  --live_blocks;
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM.json\n", argv[0]);
    return 2;
  }
  std::FILE* file = std::fopen(argv[1], "rb");
  if (file == nullptr || std::fseek(file, 0, SEEK_END) != 0) {
    std::fprintf(stderr, "cannot open %s\n", argv[1]);
    return 1;
  }
  const std::size_t bytes = static_cast<std::size_t>(std::ftell(file));
  const auto read_at = [file](std::size_t offset, std::span<char> out) -> wrapir::Result<std::size_t> {
    if (std::fseek(file, static_cast<long>(offset), SEEK_SET) != 0) return wrapir::Diagnostic{"seek failed"};
    return std::fread(out.data(), 1, out.size(), file);
  };
  const long before = live_bytes;
  const long blocks_before = live_blocks;
  auto loaded = wrapir::io::program_from_json(bytes, read_at, {});
  std::fclose(file);
  if (!loaded) {
    std::fprintf(stderr, "load: %s\n", loaded.error().message.c_str());
    return 1;
  }
  wrapir::Program& p = loaded.value();
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
