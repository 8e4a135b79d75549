// Shared pieces of the wrapir command-line tool.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wrapir::ir {
struct Program;
}

namespace wrapir::cli {

/// Thrown to end the command with a one-line message on stderr.
struct Failure {
  std::string message;
};

/// Keeps a message on one line whatever the input held: control characters
/// become \\xHH and the text is cut at `limit` characters.
inline std::string one_line(std::string_view text, std::size_t limit = 200) {
  std::string out;
  for (char c : text.substr(0, limit)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

/// The whole content of the file at `path`.
std::string read_file(std::string_view path);

/// The program in the file at `path`: JSON when its first non-blank
/// character opens an object, else the text form.
ir::Program load_program(std::string_view path);

/// `verify`, `dump` or `stats` with its arguments; returns the exit code.
int run_program_command(std::string_view command, const std::vector<std::string_view>& args);

/// `emit` or `plan` with its arguments; returns the exit code.
int run_pipeline_command(std::string_view command, const std::vector<std::string_view>& args);

}  // namespace wrapir::cli
