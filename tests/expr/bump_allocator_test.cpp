// Tests of include/wrapir/expr/detail/bump_allocator.hpp: the expression
// context's node storage (it replaced std::pmr::monotonic_buffer_resource).

#include <wrapir/expr/detail/bump_allocator.hpp>
#include <wrapir/expr/expr.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

using wrapir::expr::detail::BumpAllocator;

TEST_CASE("expr/bump_allocator: aligned, disjoint, and lasting until the allocator dies") {
  BumpAllocator arena{64};
  struct Block {
    unsigned char* at;
    std::size_t size;
  };
  std::vector<Block> blocks;
  // Sizes and alignments that straddle chunk boundaries (first chunk 64 bytes,
  // and allocations larger than a whole chunk).
  const std::size_t alignments[] = {1, 2, 4, 8, 16, alignof(std::max_align_t)};
  for (std::size_t i = 0; i < 400; ++i) {
    const std::size_t size = (i * 37) % 300;
    const std::size_t align = alignments[i % std::size(alignments)];
    auto* p = static_cast<unsigned char*>(arena.allocate(size, align));
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % align == 0);
    std::memset(p, static_cast<int>(i & 0xff), size);
    blocks.push_back({p, size});
  }
  // Nothing overwrote an earlier block: each still holds its own byte.
  for (std::size_t i = 0; i < blocks.size(); ++i)
    for (std::size_t j = 0; j < blocks[i].size; ++j) REQUIRE(blocks[i].at[j] == static_cast<unsigned char>(i & 0xff));
}

TEST_CASE("expr/bump_allocator: impossible requests throw bad_alloc instead of wrapping around") {
  BumpAllocator arena{64};
  CHECK_THROWS_AS((void)arena.allocate(static_cast<std::size_t>(-1), 8), std::bad_alloc);
  CHECK_THROWS_AS((void)arena.allocate(static_cast<std::size_t>(-1) / 2, 8), std::bad_alloc);
  CHECK_THROWS_AS((void)arena.allocate(8, 4096), std::bad_alloc);
  // Still usable afterwards.
  CHECK(arena.allocate(16, 8) != nullptr);
}

TEST_CASE("expr/bump_allocator: a context keeps nodes larger than a chunk intact") {
  wrapir::expr::Context ctx;
  std::vector<wrapir::expr::Expr> symbols;
  for (int i = 0; i < 12'000; ++i) symbols.push_back(ctx.symbol("s" + std::to_string(i)));
  // 12000 operands: 96 KB of operand array, more than the first 64 KiB chunk.
  const auto sum = ctx.make_raw(wrapir::expr::Kind::add, symbols);
  REQUIRE(sum.operands().size() == symbols.size());
  for (std::size_t i = 0; i < symbols.size(); ++i) REQUIRE(sum.operands()[i] == symbols[i]);
  for (int i = 0; i < 12'000; ++i) CHECK(symbols[static_cast<std::size_t>(i)].name() == "s" + std::to_string(i));
  CHECK(ctx.symbol("s42") == symbols[42]);
}
