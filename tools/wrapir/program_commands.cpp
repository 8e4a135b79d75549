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
// dump and stats verify the program first and refuse an invalid one (the
// findings on stderr, exit 1) unless --no-verify is given; every command
// takes --max-input-bytes N (file_io.hpp). A file that cannot be read or
// loaded is one line on stderr and exit 1.

#include "cli.hpp"
#include "file_io.hpp"

#include <wrapir/emit/text.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/text.hpp>
#include <wrapir/ir/stats.hpp>
#include <wrapir/ir/verify.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::cli {

// JSON when the first non-blank character opens an object, else the text
// form (so that a bug report's .wir file can be checked as it is). JSON is
// loaded in chunks straight from the file (`program_from_json(bytes,
// read_at)`), so a large program costs its IR and not its text as well; the
// text form is parsed whole. The loaders' own size limits follow the input
// cap, so that raising the cap is enough to load a larger program.
ir::Program load_program(std::string_view path, std::uint64_t max_bytes) {
  const detail::RegularFile file = open_input(path, max_bytes);
  const auto limit = static_cast<std::size_t>(max_bytes);
  const std::string where = one_line(path, 200);
  const io::JsonReadAt read_at = [&file, path](std::size_t offset, std::span<char> buffer) -> Result<std::size_t> {
    Result<std::size_t> got = file.read_at(offset, buffer);
    if (!got) return Diagnostic{"cannot read " + detail::quoted_path(std::string(path)) + ": " + got.error().message};
    return got;
  };
  auto program = starts_with_object(file)
                     ? io::program_from_json(static_cast<std::size_t>(file.size()), read_at,
                                             io::JsonLoadOptions{.max_bytes = limit})
                     : text::parse_program_text(read_whole(file, path),
                                                text::TextParseOptions{.max_length = limit});
  if (!program) throw Failure{where + ": " + one_line(program.error().to_string(), 400)};
  return std::move(program).value();
}

namespace {

/// Prints each finding as "FILE: finding" on stderr; returns how many.
std::size_t print_findings(std::string_view path, const ir::Program& program) {
  const std::vector<ir::Finding> findings = ir::verify(program);
  for (const ir::Finding& f : findings)
    std::fprintf(stderr, "%s: %s\n", one_line(path, 200).c_str(), one_line(to_string(f), 400).c_str());
  return findings.size();
}

}  // namespace

ir::Program load_verified_program(const Arguments& a) {
  ir::Program program = load_program(a.file(), max_input_bytes(a));
  if (a.flag("--no-verify")) return program;
  if (const std::size_t findings = print_findings(a.file(), program); findings > 0) {
    throw Failure{std::string(a.command()) + ": '" + one_line(a.file(), 200) + "' is not a valid program (" +
                  std::to_string(findings) + (findings == 1 ? " finding" : " findings") +
                  " above); --no-verify skips this check"};
  }
  return program;
}

namespace {

std::size_t total_buffers(const ir::Program& p) {
  std::size_t n = p.buffers.size();
  for (const ir::Program& g : p.subgraphs) n += total_buffers(g);
  return n;
}

int cmd_verify(const Arguments& a) {
  a.allow_only({"--max-input-bytes"});
  const std::string_view path = a.file();
  const ir::Program program = load_program(path, max_input_bytes(a));
  if (print_findings(path, program) > 0) return 1;
  const ir::ProgramStats st = ir::program_stats(program);
  std::printf("%s: ok (%zu lines, %zu buffers, %zu kernels, %zu subgraphs)\n", one_line(path, 200).c_str(), st.lines,
              total_buffers(program), st.kernels, st.subgraphs);
  return 0;
}

int cmd_dump(const Arguments& a) {
  a.allow_only({"--max-input-bytes", "--no-verify"});
  const std::string text = text::to_text(load_verified_program(a));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int cmd_stats(const Arguments& a) {
  a.allow_only({"--max-input-bytes", "--no-verify"});
  // The program owns the expression context that st.bytes_allocated lives in.
  const ir::Program program = load_verified_program(a);
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
  const Arguments a(command, args);
  if (command == "verify") return cmd_verify(a);
  if (command == "dump") return cmd_dump(a);
  return cmd_stats(a);
}

}  // namespace wrapir::cli
