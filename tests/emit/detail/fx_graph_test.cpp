// The FX emitter's namespace (emit/detail/fx_graph.hpp) against a plain
// model of torch.fx 2.11's `_Namespace.create_name` (obj None): the fast
// paths (a base's count remembers that the bare base is taken) must give
// the names torch gives, in every order of candidates.

#include <wrapir/emit/detail/fx_graph.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fxd = wrapir::fx::detail;

/// torch.fx's rules, written as plainly as they read: split `base_N`,
/// count by the candidate, suffix an illegal name, then count up past the
/// used names; record the base's count.
class ModelNamespace {
 public:
  std::string create(const std::string& candidate) {
    std::string base = candidate;
    std::string digits;
    if (const auto us = candidate.rfind('_'); us != std::string::npos && us > 0 && us + 1 < candidate.size()) {
      const std::string tail = candidate.substr(us + 1);
      if (tail.find_first_not_of("0123456789") == std::string::npos) {
        base = candidate.substr(0, us);
        digits = tail;
      }
    }
    std::string name = candidate;
    std::uint64_t num = 0;
    if (digits.empty() || used_.count(candidate) != 0) {
      num = count_[candidate];
      if (fxd::is_fx_illegal_name(candidate)) name = base + "_" + std::to_string(++num);
    } else {
      num = std::stoull(digits);
    }
    while (used_.count(name) != 0) name = base + "_" + std::to_string(++num);
    used_.insert(name);
    count_[base] = num;
    return name;
  }

 private:
  std::set<std::string> used_;
  std::map<std::string, std::uint64_t> count_;
};

}  // namespace

TEST_CASE("emit/fx/namespace: names as torch.fx's create_name gives them, in any order of candidates") {
  // Bases asked for again and again, explicit suffixes that lower a base's
  // count or take a name the counter would make, illegal names, bases that
  // end in digits.
  const std::vector<std::string> candidates{
      "empty_strided", "empty_strided_1", "empty_strided_3", "empty_strided_2", "pow", "pow_1", "buf0", "buf0_1",
      "x",             "x_0",             "x_01",            "x_1_2",           "x_1", "sum", "arg0_1", "arg0",
      // Past the bitmaps' range, and at its edge; a leading zero; a base
      // that is only an underscore and digits.
      "y_4294967295", "y_4294967296", "y", "y_4294967294", "x_00", "_5", "_5_1", "y_9999999999"};
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> pick(0, seed % 3 == 0 ? 3 : candidates.size() - 1);
    fxd::Namespace ns;
    ModelNamespace model;
    for (int i = 0; i < 300; ++i) {
      const std::string& c = candidates[pick(rng)];
      const std::string want = model.create(c);
      if (rng() % 4 == 0) {
        // A name taken for a node renamed right after: recorded the same.
        ns.take_sanitized(c);
        continue;
      }
      const std::string got(ns.create_sanitized(c));
      REQUIRE_MESSAGE(got == want, "seed " << seed << ", call " << i << ", candidate " << c);
    }
  }
}

TEST_CASE("emit/fx/namespace: a repeated base counts up, an illegal one starts at _1") {
  fxd::Namespace ns;
  CHECK(ns.create_sanitized("empty_strided") == "empty_strided");
  CHECK(ns.create_sanitized("empty_strided") == "empty_strided_1");
  CHECK(ns.create_sanitized("empty_strided_1") == "empty_strided_2");
  CHECK(ns.create_sanitized("empty_strided") == "empty_strided_3");
  CHECK(ns.create_sanitized("pow") == "pow_1");
  CHECK(ns.create_sanitized("pow") == "pow_2");
}

TEST_CASE("emit/fx/namespace: counted names across the bitmaps' blocks match the model") {
  // Thousands of one base, explicit suffixes at the 512-number block edges
  // that lower the count (torch.fx then counts up past the used names).
  const std::vector<std::string> candidates{"a", "a", "a", "a", "a_511", "a_512", "a_1023", "a_1024", "a_3", "a_0", "b"};
  // The model counts up one name at a time, so a seed costs seconds under
  // the sanitizers: five seeds, each checked to count past two blocks.
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> pick(0, candidates.size() - 1);
    fxd::Namespace ns;
    ModelNamespace model;
    std::uint64_t highest = 0;
    for (int i = 0; i < 3000; ++i) {
      const std::string& c = candidates[pick(rng)];
      const std::string want = model.create(c);
      if (want.starts_with("a_")) highest = std::max<std::uint64_t>(highest, std::stoull(want.substr(2)));
      if (rng() % 4 == 0) {
        // A name taken for a node renamed right after: recorded the same.
        ns.take_sanitized(c);
        continue;
      }
      const std::string got(ns.create_sanitized(c));
      REQUIRE_MESSAGE(got == want, "seed " << seed << ", call " << i << ", candidate " << c);
    }
    CHECK_MESSAGE(highest > 1024, "seed " << seed << " never counted past the second block");
  }
}
