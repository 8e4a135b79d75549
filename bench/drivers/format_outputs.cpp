// Every output format of every test program: the driver behind the
// "Formats unchanged" checks of docs/performance.md ("`sizeof(Line)` from
// 152 to 104 bytes", "Arguments, layouts and call types in place"). It
// loads each .json and .wir program under REPO/tests (a file that does not
// load prints its diagnostic) and 300 seeded random programs, plain and
// mutated (tests/ir/support/random_programs.hpp), and prints for each its
// JSON, its text form, the text form read back and written as JSON, and its
// Python. Built against two include/ trees (the same REPO and random
// programs), the outputs must be byte-identical when a change claims the
// formats unchanged:
//
//   g++ -std=c++20 -O1 -I<old>/include -Itests/ir/support bench/drivers/format_outputs.cpp -o old -lboost_json
//   g++ -std=c++20 -O1 -Iinclude       -Itests/ir/support bench/drivers/format_outputs.cpp -o new -lboost_json
//   ./old . > old.txt && ./new . > new.txt && cmp old.txt new.txt

#include "random_programs.hpp"

#include <wrapir/emit/python.hpp>
#include <wrapir/emit/text.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/text.hpp>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace wrapir;

static void dump(std::ostream& o, const std::string& name, const ir::Program& p) {
  o << "=== " << name << "\n--- json\n" << io::to_json(p) << "\n--- text\n";
  const std::string text = text::to_text(p);
  o << text << "--- text round trip\n";
  auto back = text::parse_program_text(text);
  if (back) o << io::to_json(back.value()) << "\n";
  else o << "error: " << back.error().message << "\n";
  o << "--- python\n";
  try {
    auto py = python::to_python(p);
    if (py) o << py.value();
    else o << "error: " << py.error().message << "\n";
  } catch (const std::exception& e) {
    o << "threw: " << e.what() << "\n";
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " REPO\n";
    return 2;
  }
  const std::filesystem::path repo = argv[1];
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(repo / "tests"))
    if (e.path().extension() == ".json" || e.path().extension() == ".wir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::ostringstream o;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream t;
    t << in.rdbuf();
    auto p = f.extension() == ".wir" ? text::parse_program_text(t.str()) : io::program_from_json(t.str());
    const std::string rel = std::filesystem::relative(f, repo).string();
    if (!p) {
      o << "=== " << rel << " does not load: " << p.error().message << "\n";
      continue;
    }
    dump(o, rel, p.value());
  }
  for (std::uint32_t seed = 1; seed <= 150; ++seed) {
    const ir::Program p = wrapir_test::random_program(seed, {.steps = 20 + seed % 100, .hints = seed % 7 != 0});
    dump(o, "random " + std::to_string(seed), p);
    dump(o, "random " + std::to_string(seed) + " mutated", wrapir_test::mutate(p, seed));
  }
  std::cout << o.str();
}
