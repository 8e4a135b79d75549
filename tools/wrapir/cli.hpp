// Shared pieces of the wrapir command-line tool.
#pragma once

#include <wrapir/detail/safe_file.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
/// and bytes that are not UTF-8 become \\xHH (detail::printable) and the
/// text is cut at `limit` bytes.
inline std::string one_line(std::string_view text, std::size_t limit = 200) {
  std::string out = detail::printable(text.substr(0, limit), /*escape_backslash=*/false);
  if (text.size() > limit) out += "...";
  return out;
}

/// Command-line arguments of the commands that read a program: `--flag`,
/// `--option VALUE` and one positional FILE, each option at most once.
class Arguments {
 public:
  Arguments(std::string_view command, const std::vector<std::string_view>& args) : command_(command) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string_view a = args[i];
      if (a.starts_with("-") && a != "-") {
        if (seen(a)) throw Failure{command_ + ": " + one_line(a, 40) + " is given twice"};
        if (takes_value(a)) {
          if (i + 1 == args.size()) throw Failure{command_ + ": " + std::string(a) + " needs a value"};
          values_.emplace_back(a, args[++i]);
        } else {
          values_.emplace_back(a, std::string_view{});
        }
      } else if (!file_) {
        file_ = a;
      } else {
        throw Failure{command_ + " takes one file, got '" + one_line(*file_, 80) + "' and '" + one_line(a, 80) + "'"};
      }
    }
    if (!file_) throw Failure{command_ + " takes one file: wrapir " + command_ + " ... FILE.json"};
  }

  /// Refuses options that the command does not know.
  void allow_only(std::initializer_list<std::string_view> known) const {
    for (const auto& [name, value] : values_) {
      bool ok = false;
      for (std::string_view k : known) ok = ok || k == name;
      if (!ok) throw Failure{command_ + ": unknown option '" + one_line(name, 40) + "'; try 'wrapir --help'"};
    }
  }

  [[nodiscard]] std::string_view command() const { return command_; }
  [[nodiscard]] std::string_view file() const { return *file_; }
  [[nodiscard]] bool flag(std::string_view name) const { return seen(name); }
  [[nodiscard]] std::optional<std::string_view> value(std::string_view name) const {
    for (const auto& [n, v] : values_)
      if (n == name) return v;
    return std::nullopt;
  }

 private:
  static bool takes_value(std::string_view name) {
    return name == "--target" || name == "--options" || name == "-o" || name == "--size-asserts" || name == "--debug-level" ||
           name == "--debug-kernels" || name == "--strategy" || name == "--timeline" || name == "--pool-policy" ||
           name == "--max-input-bytes" || name == "--inputs" || name == "--device" || name == "--repeat" ||
           name == "--kernels" || name == "--symbols" || name == "--warmup" || name == "--repetitions" ||
           name == "--report";
  }
  [[nodiscard]] bool seen(std::string_view name) const {
    for (const auto& [n, v] : values_)
      if (n == name) return true;
    return false;
  }

  std::string command_;
  std::optional<std::string_view> file_;
  std::vector<std::pair<std::string_view, std::string_view>> values_;
};

/// The program in the file at `path` (at most `max_bytes` long): JSON when
/// its first non-blank character opens an object, else the text form.
ir::Program load_program(std::string_view path, std::uint64_t max_bytes);

/// Loads the program named by `a` (honouring --max-input-bytes) and, unless
/// `--no-verify` is given, verifies it: findings go to stderr, one per line
/// as `wrapir verify` prints them, and the command fails.
ir::Program load_verified_program(const Arguments& a);

/// `verify`, `dump` or `stats` with its arguments; returns the exit code.
int run_program_command(std::string_view command, const std::vector<std::string_view>& args);

/// `run` with its arguments (run_command.cpp); returns the exit code.
int run_run_command(const std::vector<std::string_view>& args);

/// `autotune` with its arguments (autotune_command.cpp).
int run_autotune_command(const std::vector<std::string_view>& args);

/// `emit-cpp` or `run-cpp` with its arguments (emit_cpp_command.cpp).
int run_emit_cpp_command(std::string_view command, const std::vector<std::string_view>& args);

/// `emit` or `plan` with its arguments; returns the exit code.
int run_pipeline_command(std::string_view command, const std::vector<std::string_view>& args);

}  // namespace wrapir::cli
