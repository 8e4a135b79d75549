// The `wrapir` command-line tool:
//
//   wrapir expr simplify EXPR                   canonical form, Python syntax
//   wrapir expr eval EXPR NAME=VALUE...         the integer value (bindings of
//                                               symbols it lacks are ignored)
//   wrapir expr print --lang python|cpp [--style standalone|c10] EXPR
//   wrapir expr solve --for SYMBOL EXPR VALUE   SYMBOL with EXPR == VALUE
//   wrapir verify FILE                          findings of the verifier
//   wrapir dump FILE                            the program's text form
//   wrapir stats FILE                           counts, bytes, a naive peak
//   wrapir emit --target python|text|dot|cpp|fx|fx-python FILE [-o OUT]
//                                               the program as a Python module,
//                                               its text form or a Graphviz graph
//   wrapir plan --strategy reuse|pools|arena FILE [-o OUT] [--timeline SVG]
//                                               the planned program as JSON,
//                                               statistics on stderr
//   wrapir run FILE --inputs T.safetensors [--device cpu] [--repeat N] [-o OUT]
//                                               runs the program on the CPU
//                                               executor (run_command.cpp)
//   wrapir autotune FILE [--inputs T.safetensors] [--device cpu|cuda] [-o OUT]
//                                               measures multi-kernels once and
//                                               writes the program calling the
//                                               winners (autotune_command.cpp)
//
// FILE is a program as JSON or in the text form: a regular file of at most
// 1 GiB (--max-input-bytes N or $WRAPIR_MAX_INPUT_BYTES changes the cap).
// dump, stats, emit and plan verify the program first and refuse an invalid
// one unless --no-verify is given. Outputs are written atomically and never
// through a symbolic link (file_io.hpp).
//
// Expression symbols are positive integers (Inductor's convention for
// sizes). On success the result goes to stdout (one line; the text form for
// dump, emit and plan: the program) and the exit code is 0; on any error
// one line per problem goes to stderr and the exit code is 1. The program
// commands live in program_commands.cpp, emit and plan in
// pipeline_commands.cpp.

#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/parse.hpp>
#include <wrapir/expr/print_cpp.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/expr/solve.hpp>

#include "cli.hpp"

#include <charconv>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace ex = wrapir::expr;

constexpr std::string_view usage =
    "usage: wrapir expr simplify EXPR\n"
    "       wrapir expr eval EXPR NAME=VALUE...\n"
    "       wrapir expr print --lang python|cpp [--style standalone|c10] EXPR\n"
    "       wrapir expr solve --for SYMBOL EXPR VALUE\n"
    "       wrapir verify FILE.json\n"
    "       wrapir dump [--no-verify] FILE.json\n"
    "       wrapir stats [--no-verify] FILE.json\n"
    "       wrapir emit --target python|text|dot|cpp|fx|fx-python [--options KEY=VALUE,...] [--no-verify]\n"
    "                   FILE.json [-o OUT]\n"
    "                   python: [--no-device-guard] [--no-benchmark-harness]\n"
    "                   [--size-asserts none|eager|deferred]; python, cpp: [--debug-level 0-3]\n"
    "                   [--debug-kernels NAME,...]; dot: --options legend=false,\n"
    "                   subgraphs=false, direction=LR\n"
    "       wrapir plan --strategy reuse|pools|arena [--pool-policy none|intermediates|outputs|combined]\n"
    "                   [--no-spill] [--no-verify] FILE.json [-o OUT.json] [--timeline OUT.svg]\n"
    "       wrapir run FILE.json --inputs IN.safetensors [--device cpu|cuda [--kernels DIR] [--graph]] [--repeat N]\n"
    "                  [--no-verify] [-o OUT.safetensors] [--debug-level 0-3 [--debug-kernels NAME,...]]\n"
    "       wrapir autotune FILE.json [--inputs IN.safetensors] [--device cpu|cuda] [--kernels DIR]\n"
    "                  [--symbols NAME=VALUE,...] [--warmup N] [--repetitions N]\n"
    "                  [--allow-failed-candidates] [--report REPORT.json] [--no-verify] [-o OUT.json]\n"
    "       wrapir emit-cpp [--prefix P] [--no-input-asserts] [--no-verify] [--kernels DIR] [--embed-cubins]\n"
    "                  [--companion OUT.cu] FILE.json [-o OUT.cpp]\n"
    "       wrapir emit-cpp --print-flags\n"
    "       wrapir run-cpp FILE.json --library LIB.so --inputs IN.safetensors [--prefix P]\n"
    "                  [--device cpu|cuda [--kernels DIR]] [--repeat N] [--no-verify] [-o OUT.safetensors]\n"
    "Symbols are positive integers; expr eval ignores bindings of symbols the\n"
    "expression lacks, so one set of bindings serves many expressions.\n"
    "FILE: JSON or the text form; a regular file (no directory, FIFO or device)\n"
    "of at most 1 GiB: every FILE command takes --max-input-bytes N[K|M|G], or\n"
    "set WRAPIR_MAX_INPUT_BYTES.\n"
    "dump, stats, emit and plan verify the program first and refuse an invalid\n"
    "one (findings on stderr, exit 1); --no-verify skips that check.\n"
    "-o and --timeline replace their file atomically (temporary file + rename)\n"
    "and refuse a target that is a symbolic link, directory, FIFO or device.\n"
    "Output: one line (dump, emit, plan: the whole text); errors: one line per\n"
    "problem on stderr, exit 1.\n";

using wrapir::cli::Failure;
using wrapir::cli::one_line;

ex::Expr parse_or_fail(ex::Context& ctx, std::string_view text, std::string_view what) {
  auto r = ex::parse(ctx, text);
  if (!r)
    throw Failure{"cannot parse " + std::string(what) + " '" + one_line(text, 80) + "': " + one_line(r.error().to_string(), 400)};
  return *r;
}

std::string cmd_simplify(const std::vector<std::string_view>& args) {
  if (args.size() != 1) throw Failure{"expr simplify takes one expression"};
  ex::Context ctx;
  return ex::print_python(parse_or_fail(ctx, args[0], "expression"));
}

std::string cmd_eval(const std::vector<std::string_view>& args) {
  if (args.empty()) throw Failure{"expr eval takes an expression and NAME=VALUE bindings"};
  ex::Context ctx;
  const ex::Expr e = parse_or_fail(ctx, args[0], "expression");
  ex::Bindings bindings;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string_view a = args[i];
    const auto eq = a.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw Failure{"binding '" + one_line(a, 60) + "' is not of the form NAME=VALUE"};
    const std::string_view name = a.substr(0, eq), text = a.substr(eq + 1);
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range)
      throw Failure{"value of '" + one_line(name, 60) + "' does not fit in int64: " + one_line(text, 40)};
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
      throw Failure{"value of '" + one_line(name, 60) + "' is not an integer: '" + one_line(text, 40) + "'"};
    // A binding for a symbol the expression lacks is kept, not refused: one
    // set of bindings serves many expressions (and `s0 - s0` has none left).
    if (!ex::is_valid_symbol_name(name))
      throw Failure{"binding '" + one_line(a, 60) + "': '" + one_line(name, 60) + "' is not a valid symbol name"};
    ex::Expr s = ctx.find_symbol(name);
    if (!s) s = ctx.symbol(name);
    if (!ex::satisfies(s.assumption(), value))
      throw Failure{"symbol '" + one_line(name, 60) + "' = " + std::to_string(value) + " breaks its assumption (" +
                    std::string(ex::assumption_name(s.assumption())) + ")"};
    if (bindings.get(s)) throw Failure{"'" + one_line(name, 60) + "' is bound twice"};
    bindings.set(s, value);
  }
  auto r = ex::eval(e, bindings);
  if (!r) throw Failure{"cannot evaluate: " + one_line(r.error().message, 400)};
  return std::to_string(*r);
}

std::string cmd_print(const std::vector<std::string_view>& args) {
  std::string_view lang, style = "standalone", text;
  bool have_text = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--lang" && i + 1 < args.size()) lang = args[++i];
    else if (args[i] == "--style" && i + 1 < args.size()) style = args[++i];
    else if (!have_text) { text = args[i]; have_text = true; }
    else throw Failure{"expr print: unexpected argument '" + one_line(args[i], 60) + "'"};
  }
  if (!have_text) throw Failure{"expr print takes --lang python|cpp and an expression"};
  if (lang != "python" && lang != "cpp") throw Failure{"expr print: --lang must be python or cpp"};
  if (style != "standalone" && style != "c10") throw Failure{"expr print: --style must be standalone or c10"};
  ex::Context ctx;
  const ex::Expr e = parse_or_fail(ctx, text, "expression");
  if (lang == "python") return ex::print_python(e);
  return ex::print_cpp(e, style == "c10" ? ex::CppStyle::c10 : ex::CppStyle::standalone);
}

std::string cmd_solve(const std::vector<std::string_view>& args) {
  std::string_view unknown;
  std::vector<std::string_view> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--for" && i + 1 < args.size()) unknown = args[++i];
    else rest.push_back(args[i]);
  }
  if (unknown.empty() || rest.size() != 2) throw Failure{"expr solve takes --for SYMBOL, an expression and a value"};
  ex::Context ctx;
  const ex::Expr e = parse_or_fail(ctx, rest[0], "expression");
  const ex::Expr v = parse_or_fail(ctx, rest[1], "value");
  const ex::Expr s = ctx.find_symbol(unknown);
  if (!s || !ex::depends_on(e, s))
    throw Failure{"'" + one_line(unknown, 60) + "' does not occur in '" + one_line(rest[0], 80) + "'"};
  auto r = ex::solve(e, v, s);
  // Capped as every message that may quote user text (issue 12: a 94 KB
  // sum once made a 200 KB line; the solver now shortens what it quotes).
  if (!r) throw Failure{one_line(r.error().message, 400)};
  std::string out = ex::print_python(r->value);
  // The condition goes in a Python comment: the line stays a valid expression.
  if (!r->unconditional()) out += "  # requires " + ex::print_python(r->condition);
  return out;
}

int run(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(usage.data(), args.empty() ? stderr : stdout);
    return args.empty() ? 1 : 0;
  }
  if (args[0] == "verify" || args[0] == "dump" || args[0] == "stats")
    return wrapir::cli::run_program_command(args[0], std::vector<std::string_view>(args.begin() + 1, args.end()));
  if (args[0] == "emit" || args[0] == "plan")
    return wrapir::cli::run_pipeline_command(args[0], std::vector<std::string_view>(args.begin() + 1, args.end()));
  if (args[0] == "run") return wrapir::cli::run_run_command(std::vector<std::string_view>(args.begin() + 1, args.end()));
  if (args[0] == "autotune")
    return wrapir::cli::run_autotune_command(std::vector<std::string_view>(args.begin() + 1, args.end()));
  if (args[0] == "emit-cpp" || args[0] == "run-cpp")  // emit_cpp_command.cpp
    return wrapir::cli::run_emit_cpp_command(args[0], std::vector<std::string_view>(args.begin() + 1, args.end()));
  if (args[0] != "expr") throw Failure{"unknown command '" + one_line(args[0], 40) + "'; try 'wrapir --help'"};
  if (args.size() < 2) throw Failure{"expr needs a subcommand: simplify, eval, print or solve"};
  const std::string_view sub = args[1];
  const std::vector<std::string_view> rest(args.begin() + 2, args.end());
  std::string out;
  if (sub == "simplify") out = cmd_simplify(rest);
  else if (sub == "eval") out = cmd_eval(rest);
  else if (sub == "print") out = cmd_print(rest);
  else if (sub == "solve") out = cmd_solve(rest);
  else throw Failure{"unknown expr subcommand '" + one_line(sub, 40) + "'; expected simplify, eval, print or solve"};
  std::fputs((out + "\n").c_str(), stdout);
  return 0;
}

/// A command whose output could not be written (a full disk, a closed pipe
/// with SIGPIPE ignored) must not report success.
int finish(int code) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fputs("wrapir: error: cannot write to standard output\n", stderr);
    return 1;
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return finish(run(argc, argv));
  } catch (const Failure& f) {
    std::fprintf(stderr, "wrapir: error: %s\n", f.message.c_str());
  } catch (const ex::Error& e) {
    std::fprintf(stderr, "wrapir: error: %s\n", one_line(e.what()).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wrapir: internal error: %s\n", one_line(e.what()).c_str());
  }
  return 1;
}
