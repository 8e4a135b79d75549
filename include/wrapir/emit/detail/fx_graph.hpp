#pragma once
/// \file
/// The FX emitter's graph (emit/fx.hpp): nodes as torch.fx holds them, the
/// names torch.fx would give them, and the two renderings of a node's
/// arguments — as `str(gm.graph)` prints them and as Python that passes
/// them to `graph.call_function`.
///
/// Names. torch.fx names a node from its target through a namespace
/// (`empty_strided`, `empty_strided_1`, ...; `mm.out` becomes `mm_out`; a
/// builtin such as `pow` becomes `pow_1`), and Inductor then renames some
/// nodes by assigning `node.name`, which leaves the namespace's record of
/// the first name in place. `Namespace` follows torch.fx 2.11's rules
/// exactly (its `_Namespace.create_name`), so that the text printed here
/// equals what torch prints for the graph the Python rendering builds; the
/// bridge's `fx` check compares the two with real torch.fx.
///
/// Arguments are rendered once, when the node is made, into two strings
/// (text and Python) in which a reference to another node is a marker byte
/// and the node's index; the names are filled in when the graph is printed,
/// after the users of every node are known.

#include <wrapir/detail/escape.hpp>
#include <wrapir/emit/detail/python_literals.hpp>
#include <wrapir/emit/detail/shortest_double.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace wrapir::fx::detail {

/// Marks a node reference inside rendered arguments; followed by the
/// node's index in 8 hex digits. Never part of a rendered literal: strings
/// are escaped (text form) or quoted with escapes (Python form) first.
inline constexpr char node_marker = '\x01';

/// Python's keywords and builtins, and the names torch.fx reserves for its
/// generated code (`torch`, `device`, `inf`, ...): a node named after one of
/// these gets a numeric suffix (torch.fx's `_illegal_names`, Python 3.11).
[[nodiscard]] inline bool is_fx_illegal_name(std::string_view name) {
  static const std::unordered_set<std::string_view> names{
      "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
      "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
      "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
      "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception",
      "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
      "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError", "IndexError",
      "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError",
      "ModuleNotFoundError", "NameError", "None", "NoneType", "NotADirectoryError", "NotImplemented",
      "NotImplementedError", "OSError", "OverflowError", "PendingDeprecationWarning", "PermissionError",
      "ProcessLookupError", "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError",
      "RuntimeWarning", "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError",
      "SystemExit", "TabError", "TimeoutError", "True", "TypeError", "UnboundLocalError", "UnicodeDecodeError",
      "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning",
      "ValueError", "Warning", "ZeroDivisionError", "__build_class__", "__debug__", "__doc__", "__import__",
      "__loader__", "__name__", "__package__", "__spec__", "abs", "aiter", "all", "and", "anext", "any", "as",
      "ascii", "assert", "async", "await", "bin", "bool", "break", "breakpoint", "bytearray", "bytes",
      "callable", "chr", "class", "classmethod", "compile", "complex", "continue", "copyright", "credits",
      "def", "del", "delattr", "device", "dict", "dir", "divmod", "elif", "else", "enumerate", "eval",
      "except", "exec", "exit", "filter", "finally", "float", "for", "format", "from", "frozenset",
      "fx_pytree", "getattr", "global", "globals", "hasattr", "hash", "help", "hex", "id", "if", "import",
      "in", "inf", "input", "int", "is", "isinstance", "issubclass", "iter", "lambda", "len", "license",
      "list", "locals", "map", "max", "memoryview", "min", "nan", "next", "nonlocal", "not", "object", "oct",
      "open", "or", "ord", "pass", "pow", "print", "property", "pytree", "quit", "raise", "range", "repr",
      "return", "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum",
      "super", "torch", "try", "tuple", "type", "vars", "while", "with", "yield", "zip"};
  return names.contains(name);
}

/// torch.fx's `_Namespace`: unique names made from candidates.
class Namespace {
 public:
  /// `create_name(candidate, None)`.
  std::string create_name(std::string_view raw) {
    std::string candidate = sanitize(raw);
    // Split `base_N` (torch.fx: `^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$`).
    std::string_view base = candidate;
    std::string_view digits;
    if (const std::size_t us = candidate.rfind('_'); us != std::string::npos && us > 0 && us + 1 < candidate.size()) {
      const std::string_view tail = std::string_view(candidate).substr(us + 1);
      if (std::all_of(tail.begin(), tail.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        base = std::string_view(candidate).substr(0, us);
        digits = tail;
      }
    }
    std::uint64_t num = 0;
    std::string result = candidate;
    if (digits.empty() || used_.contains(candidate)) {
      const auto it = count_.find(candidate);
      num = it == count_.end() ? 0 : it->second;
      if (is_fx_illegal_name(candidate)) {
        ++num;
        result = std::string(base) + "_" + std::to_string(num);
      }
    } else {
      num = parse_digits(digits);
    }
    while (used_.contains(result)) {
      ++num;
      result = std::string(base) + "_" + std::to_string(num);
    }
    used_.insert(result);
    count_[std::string(base)] = num;
    return result;
  }

 private:
  static std::uint64_t parse_digits(std::string_view d) {
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
    (void)p;
    // Python's int() is unbounded; a suffix past 2^64 is not a name any
    // program here makes, and saturating keeps the loop finite.
    return ec == std::errc{} ? v : UINT64_MAX / 2;
  }
  static std::string sanitize(std::string_view raw) {
    std::string s;
    s.reserve(raw.size() + 1);
    // `[^0-9a-zA-Z_]+` → `_` (a run of illegal characters is one underscore).
    bool in_run = false;
    for (char c : raw) {
      const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
      if (ok) {
        s += c;
        in_run = false;
      } else if (!in_run) {
        s += '_';
        in_run = true;
      }
    }
    if (s.empty()) s = "_unnamed";
    if (s[0] >= '0' && s[0] <= '9') s.insert(s.begin(), '_');
    return s;
  }
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, std::uint64_t> count_;
};

/// torch.fx's `_snake_case`: `_` before an upper-case letter that follows a
/// lower-case one, then everything lower-case.
[[nodiscard]] inline std::string snake_case(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 4);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool upper = c >= 'A' && c <= 'Z';
    if (upper && i > 0 && s[i - 1] >= 'a' && s[i - 1] <= 'z') out += '_';
    out += upper ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

/// A callable a node calls: how `str(graph)` prints it, the Python
/// expression that names it, and the `__name__` torch.fx makes the node's
/// first name from.
struct Target {
  std::string printed;
  std::string python;
  std::string name;
};

enum class Op : std::uint8_t { placeholder, get_attr, call_function, output };

/// Arguments in both renderings (see the file comment).
struct Rendered {
  std::string text;
  std::string python;
};

struct Node {
  Op op = Op::call_function;
  std::string name;
  /// Placeholder / get_attr: the target string; call_function: the printed target.
  std::string target;
  std::string target_python;
  /// The name the namespace gave the node before Inductor renamed it
  /// (the Python rendering renames only when they differ).
  std::string created_name;
  /// Set when the name was made by `create_name(reserved)` before the node
  /// (Inductor's `<buffer>_view` names).
  std::string reserved;
  Rendered args;    // a tuple: `(a, b)`
  Rendered kwargs;  // a dict: `{k: v}`
  std::uint32_t users = 0;
};

/// Writes one argument structure into both renderings at once.
class ArgWriter {
 public:
  void node(std::uint32_t index) {
    char hex[9];
    for (int i = 7; i >= 0; --i) {
      hex[i] = "0123456789abcdef"[index & 0xF];
      index >>= 4;
    }
    hex[8] = '\0';
    r_.text += node_marker;
    r_.text.append(hex, 8);
    r_.python += node_marker;
    r_.python.append(hex, 8);
  }
  void integer(std::int64_t v) {
    const std::string s = std::to_string(v);
    r_.text += s;
    r_.python += s;
  }
  void floating(double v) {
    std::string s;
    if (std::isnan(v)) {
      r_.text += "nan";
      r_.python += "float('nan')";
      return;
    }
    if (std::isinf(v)) {
      r_.text += v < 0 ? "-inf" : "inf";
      r_.python += v < 0 ? "float('-inf')" : "float('inf')";
      return;
    }
    wrapir::detail::append_shortest_double(s, v);
    r_.text += s;
    r_.python += s;
  }
  void boolean(bool b) { both(b ? "True" : "False"); }
  void none() { both("None"); }
  /// A Python `str` value: printed bare by torch.fx, quoted in Python.
  /// Escaped in the text (control characters as `\xNN`) so that one
  /// printed node stays one line.
  [[nodiscard]] bool string(std::string_view s) {
    for (char c : s) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        static constexpr char hex[] = "0123456789abcdef";
        r_.text += "\\x";
        r_.text += hex[(static_cast<unsigned char>(c) >> 4) & 0xF];
        r_.text += hex[static_cast<unsigned char>(c) & 0xF];
      } else {
        r_.text += c;
      }
    }
    return python::detail::append_string_literal(r_.python, s);
  }
  /// The same text in both renderings (`torch.float32`, `[`, `, `).
  void both(std::string_view s) {
    r_.text += s;
    r_.python += s;
  }
  void raw(std::string_view text, std::string_view python) {
    r_.text += text;
    r_.python += python;
  }
  /// A dict key: `k: ` printed, `'k': ` in Python.
  void key(std::string_view k) {
    r_.text += k;
    r_.text += ": ";
    r_.python += '\'';
    r_.python += k;
    r_.python += "': ";
  }
  [[nodiscard]] Rendered take() { return std::move(r_); }
  [[nodiscard]] const Rendered& peek() const noexcept { return r_; }

 private:
  Rendered r_;
};

/// Reads the index after a node marker at `s[i]` (which holds the marker).
[[nodiscard]] inline std::uint32_t marker_index(std::string_view s, std::size_t i) {
  std::uint32_t v = 0;
  for (std::size_t k = i + 1; k < i + 9; ++k) {
    const char c = s[k];
    v = (v << 4) | static_cast<std::uint32_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  return v;
}

/// One FX graph under construction.
class Graph {
 public:
  std::vector<Node> nodes;
  /// The output node's value (`return ...`), rendered like arguments; the
  /// text form as Python's `str` of a Node or list of Nodes (no `%`).
  Rendered output;
  bool has_output = false;
  Namespace names;

  std::uint32_t placeholder(std::string_view target) {
    Node n;
    n.op = Op::placeholder;
    n.target = std::string(target);
    n.name = names.create_name(snake_case(target));
    n.created_name = n.name;
    return push(std::move(n));
  }
  std::uint32_t get_attr(std::string_view target) {
    Node n;
    n.op = Op::get_attr;
    n.target = std::string(target);
    n.name = names.create_name(snake_case(target));
    n.created_name = n.name;
    return push(std::move(n));
  }
  std::uint32_t call_function(const Target& target, Rendered args, Rendered kwargs) {
    Node n;
    n.op = Op::call_function;
    n.target = target.printed;
    n.target_python = target.python;
    n.name = names.create_name(snake_case(target.name));
    n.created_name = n.name;
    n.args = std::move(args);
    n.kwargs = std::move(kwargs);
    return push(std::move(n));
  }
  std::uint32_t push(Node n) {
    nodes.push_back(std::move(n));
    return static_cast<std::uint32_t>(nodes.size() - 1);
  }
  /// `node.name = name`, as Inductor renames (the namespace keeps the old name).
  void rename(std::uint32_t index, std::string name) { nodes[index].name = std::move(name); }

  void set_output(Rendered value) {
    output = std::move(value);
    has_output = true;
  }

  /// Counts each node's users (distinct nodes, the output included), as
  /// torch.fx's `len(node.users)`.
  void count_users() {
    for (Node& n : nodes) n.users = 0;
    std::vector<std::uint32_t> seen(nodes.size(), UINT32_MAX);
    auto scan = [&](std::string_view s, std::uint32_t user) {
      for (std::size_t i = 0; i < s.size(); ++i)
        if (s[i] == node_marker) {
          const std::uint32_t used = marker_index(s, i);
          if (used < nodes.size() && seen[used] != user) {
            seen[used] = user;
            ++nodes[used].users;
          }
          i += 8;
        }
    };
    for (std::uint32_t u = 0; u < nodes.size(); ++u) {
      scan(nodes[u].args.text, u);
      scan(nodes[u].kwargs.text, u);
    }
    if (has_output) scan(output.text, static_cast<std::uint32_t>(nodes.size()));
  }

  /// Appends `s` with each node marker replaced by `prefix` + the node's
  /// name (text) or by `variable(index)` (Python).
  template <class Name>
  void substitute(std::string& out, std::string_view s, Name&& name_of) const {
    std::size_t from = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s[i] == node_marker) {
        out.append(s.data() + from, i - from);
        name_of(out, marker_index(s, i));
        i += 8;
        from = i + 1;
      }
    out.append(s.data() + from, s.size() - from);
  }

  /// The graph as `str(graph)` prints it, without a final newline.
  void print(std::string& out) const {
    out += "graph():";
    auto name = [&](std::string& o, std::uint32_t i) {
      o += '%';
      o += nodes[i].name;
    };
    for (const Node& n : nodes) {
      out += "\n    %";
      out += n.name;
      out += " : [num_users=";
      out += std::to_string(n.users);
      out += "] = ";
      switch (n.op) {
        case Op::placeholder:
          out += "placeholder[target=";
          out += n.target;
          out += ']';
          break;
        case Op::get_attr:
          out += "get_attr[target=";
          out += n.target;
          out += ']';
          break;
        case Op::call_function:
          out += "call_function[target=";
          out += n.target;
          out += "](args = ";
          substitute(out, n.args.text, name);
          out += ", kwargs = ";
          substitute(out, n.kwargs.text, name);
          out += ')';
          break;
        case Op::output: break;
      }
    }
    if (has_output) {
      out += "\n    return ";
      substitute(out, output.text, [&](std::string& o, std::uint32_t i) { o += nodes[i].name; });
    }
  }
};

}  // namespace wrapir::fx::detail
