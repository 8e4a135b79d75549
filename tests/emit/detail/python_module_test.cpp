// The Python emitter's module-level tables (emit/detail/python_module.hpp):
// the set of a program's table names kept as 32-bit entry numbers.

// The emitter's header first: in header-only mode it includes the detail
// headers in their order.
#include <wrapir/emit/python.hpp>
#include <wrapir/emit/detail/python_module.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/program.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

namespace ir = wrapir::ir;
using wrapir::python::detail::TableNameSet;

TEST_CASE("emit/python TableNameSet: names of all three tables, found by their text") {
  ir::Program p{"names"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const wrapir::expr::Expr s0 = b.size_symbol("s0", 4);
  (void)b.input("arg0_1", {s0}, wrapir::f32);
  (void)b.empty({ctx.integer(8)}, wrapir::f32);
  p.pools.push_back(ir::PoolDecl{"pool0", wrapir::cuda_device(0), ctx.integer(1024)});
  TableNameSet set{p};
  REQUIRE(set.entries() == p.buffers.size() + p.symbols.size() + p.pools.size());
  const std::uint32_t buffers = static_cast<std::uint32_t>(p.buffers.size());
  CHECK(set.name(0) == "arg0_1");
  CHECK(set.name(buffers) == "s0");
  CHECK(set.name(buffers + 1) == "pool0");
  CHECK_FALSE(set.contains("arg0_1"));
  for (std::uint32_t e = 0; e < set.entries(); ++e) CHECK(set.insert(e));
  for (std::uint32_t e = 0; e < set.entries(); ++e) CHECK(set.contains(set.name(e)));
  CHECK_FALSE(set.contains("arg0"));
  CHECK_FALSE(set.contains("s0_"));
  CHECK_FALSE(set.contains(""));
  // A second entry with a name already there is refused, whichever table.
  p.pools.push_back(ir::PoolDecl{"s0", wrapir::cuda_device(0), ctx.integer(64)});
  CHECK_FALSE(set.insert(static_cast<std::uint32_t>(set.entries() - 1)));
  p.pools.push_back(ir::PoolDecl{"pool1", wrapir::cuda_device(0), ctx.integer(64)});
  CHECK(set.insert(static_cast<std::uint32_t>(set.entries() - 1)));
  CHECK(set.contains("pool1"));
}

TEST_CASE("emit/python TableNameSet: grows from empty past many names, duplicates still found") {
  ir::Program p{"many"};
  for (int i = 0; i < 5000; ++i) p.pools.push_back(ir::PoolDecl{"n" + std::to_string(i), wrapir::cuda_device(0), p.ctx().integer(8)});
  for (int i = 0; i < 5000; ++i) p.pools.push_back(ir::PoolDecl{"n" + std::to_string(i * 2), wrapir::cuda_device(0), p.ctx().integer(8)});
  TableNameSet set{p};  // no reserve: grows by rehashing
  std::size_t refused = 0;
  for (std::uint32_t e = 0; e < set.entries(); ++e) refused += set.insert(e) ? 0 : 1;
  CHECK(refused == 2500);  // n0, n2, ... n4998 came first
  for (int i = 0; i < 10000; ++i) CHECK(set.contains("n" + std::to_string(i)) == (i < 5000 || i % 2 == 0));
}
