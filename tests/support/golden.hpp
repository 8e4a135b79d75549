#pragma once
// Golden files of the emitter tests (tests/golden/<emitter>/): one
// comparison, byte for byte, reporting the first differing line.
// WRAPIR_UPDATE_GOLDEN=1 rewrites the file instead.

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

namespace wrapir_test {

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void check_golden_file(const std::filesystem::path& path, const std::string& actual) {
  const char* update = std::getenv("WRAPIR_UPDATE_GOLDEN");
  if (update && std::string_view(update) == "1") {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    MESSAGE("rewrote golden " << path.string());
    return;
  }
  REQUIRE_MESSAGE(std::filesystem::exists(path),
                  "golden " << path.string() << " is missing; run with WRAPIR_UPDATE_GOLDEN=1 to create it");
  const std::string expected = read_file(path);
  if (expected == actual) return;
  std::istringstream e(expected), a(actual);
  std::string el, al;
  for (int line = 1;; ++line) {
    const bool more_e = static_cast<bool>(std::getline(e, el));
    const bool more_a = static_cast<bool>(std::getline(a, al));
    if (!more_e && !more_a) break;
    if (!more_e || !more_a || el != al) {
      FAIL_CHECK("golden " << path.string() << " differs at line " << line << "\n  expected: "
                           << (more_e ? el : "<end of file>") << "\n  actual:   " << (more_a ? al : "<end of file>")
                           << "\n(WRAPIR_UPDATE_GOLDEN=1 rewrites the golden)");
      return;
    }
  }
  FAIL_CHECK("golden " << path.string() << " differs in line endings or a final newline");
}

}  // namespace wrapir_test
