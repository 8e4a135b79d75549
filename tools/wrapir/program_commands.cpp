// wrapir verify | dump | stats FILE: the program commands. FILE holds a
// program as JSON (io/json.hpp) or in the text form (io/text.hpp).
//
//   verify  exit 0 and "FILE: ok (N lines, B buffers, K kernels, G subgraphs)",
//           or exit 1 and one line per finding on stderr
//   dump    the program's text form on stdout
//   stats   one line: lines, kernels, launches, allocations, bytes allocated
//           (symbolic, and at the size hints), a naive peak at the hints, and
//           the count of each line kind that occurs
//
// A file that cannot be read or loaded is one line on stderr and exit 1.

#include "cli.hpp"

#include <wrapir/emit/text.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/text.hpp>
#include <wrapir/ir/stats.hpp>
#include <wrapir/ir/verify.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::cli {

std::string read_file(std::string_view path) {
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) throw Failure{"cannot open '" + one_line(path, 200) + "'"};
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Failure{"cannot read '" + one_line(path, 200) + "'"};
  return std::move(s).str();
}

// JSON when the first non-blank character opens an object, else the text
// form (so that a bug report's .wir file can be checked as it is).
ir::Program load_program(std::string_view path) {
  const std::string content = read_file(path);
  const std::size_t first = content.find_first_not_of(" \t\r\n");
  auto program = first != std::string::npos && content[first] == '{' ? io::program_from_json(content)
                                                                     : text::parse_program_text(content);
  if (!program) throw Failure{one_line(path, 200) + ": " + one_line(program.error().to_string(), 400)};
  return std::move(program).value();
}

namespace {

std::size_t total_buffers(const ir::Program& p) {
  std::size_t n = p.buffers.size();
  for (const ir::Program& g : p.subgraphs) n += total_buffers(g);
  return n;
}

int cmd_verify(std::string_view path) {
  const ir::Program program = load_program(path);
  const std::vector<ir::Finding> findings = ir::verify(program);
  if (!findings.empty()) {
    for (const ir::Finding& f : findings)
      std::fprintf(stderr, "%s: %s\n", one_line(path, 200).c_str(), one_line(to_string(f), 400).c_str());
    return 1;
  }
  const ir::ProgramStats st = ir::program_stats(program);
  std::printf("%s: ok (%zu lines, %zu buffers, %zu kernels, %zu subgraphs)\n", one_line(path, 200).c_str(), st.lines,
              total_buffers(program), st.kernels, st.subgraphs);
  return 0;
}

int cmd_dump(std::string_view path) {
  const std::string text = text::to_text(load_program(path));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int cmd_stats(std::string_view path) {
  // The program owns the expression context that st.bytes_allocated lives in.
  const ir::Program program = load_program(path);
  const ir::ProgramStats st = ir::program_stats(program);
  std::string out = "lines=" + std::to_string(st.lines) + " kernels=" + std::to_string(st.kernels) +
                    " launches=" + std::to_string(st.launches) + " allocations=" + std::to_string(st.allocations) +
                    " bytes_allocated=" + (st.bytes_allocated ? expr::print_python(st.bytes_allocated) : "unknown");
  out += " bytes_at_hints=" + (st.bytes_allocated_at_hints ? std::to_string(*st.bytes_allocated_at_hints) : "unknown");
  out += " peak_at_hints=" + (st.peak_bytes_at_hints ? std::to_string(*st.peak_bytes_at_hints) : "unknown");
  for (std::size_t i = 0; i < ir::line_kind_count; ++i)
    if (st.lines_per_kind[i]) out += " " + std::string(ir::line_kind_names[i]) + "=" + std::to_string(st.lines_per_kind[i]);
  std::printf("%s\n", out.c_str());
  return 0;
}

}  // namespace

int run_program_command(std::string_view command, const std::vector<std::string_view>& args) {
  if (args.size() != 1) throw Failure{std::string(command) + " takes one file: wrapir " + std::string(command) + " FILE.json"};
  if (command == "verify") return cmd_verify(args[0]);
  if (command == "dump") return cmd_dump(args[0]);
  return cmd_stats(args[0]);
}

}  // namespace wrapir::cli
