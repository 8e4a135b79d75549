// The verifier's bounds on hostile input that would make it slow (issue 12
// §4): bench/verify_bench.cpp times the worst shapes; these are the limits
// that keep them linear.

#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <vector>

using namespace wrapir;
using namespace wrapir::ir;

namespace {

/// An input, a buffer, and `depth` views each of the previous one.
std::vector<Finding> view_chain_findings(std::size_t depth) {
  Program p{"graph"};
  Builder b{p};
  const expr::Expr s0 = b.size_symbol("s0", 8);
  b.input("arg0_1", {s0}, DType::float32);
  BufferId prev = b.empty({s0}, DType::float32);
  for (std::size_t i = 0; i < depth; ++i) prev = b.view(prev, {s0}, {p.ctx().integer(1)}, p.ctx().integer(0));
  b.output(prev);
  return verify(p);
}

}  // namespace

TEST_CASE("ir/verify: views of views deeper than the limit are reported, not checked") {
  // Regression: each view's room derives from its base's, so a chain of a
  // few thousand views at distinct symbolic offsets (1 MB of JSON) took
  // 3.9 s of CPU to verify.
  CHECK(view_chain_findings(256).empty());
  const std::vector<Finding> found = view_chain_findings(260);
  REQUIRE(found.size() == 4);
  // Line 0 allocates; the view of depth d is line d.
  CHECK(to_string(found[0]) ==
        "line 257 (Reinterpret): buffer buf257: is a view of a view more than 256 levels deep; its bounds are not "
        "checked");
  CHECK(*found[3].line == 260);
}
