#pragma once
/// \file
/// Validation of names that end up in generated code.
///
/// Every name a program carries (buffers, symbols, kernels, pools,
/// subgraphs, workspace inner names, extern operator names) is printed into
/// Python and C++ source by the emitters. A name that is not a plain
/// identifier — `x; import os`, `__import__('os')`, a quote, a newline — would
/// change the meaning of that source, so names are checked where they enter a
/// program (the builder, the JSON loader, the text parser) and again by the
/// verifier, and free text (comments, kernel sources) is always escaped.
///
/// Operator paths are called by generated code, so beyond being dotted
/// identifiers they must name real operators (`check_operator_path`) or a
/// path an `OperatorRegistry` declares.

#include <wrapir/detail/escape.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::ir {

/// Whether `name` can name a buffer, kernel, pool or subgraph in generated
/// code: `[A-Za-z_][A-Za-z0-9_]*`, at most 256 characters, not starting with
/// two underscores, not a Python or C++ keyword and not a name the printed
/// code itself uses (the same rule as symbol names).
[[nodiscard]] inline bool is_valid_name(std::string_view name) noexcept { return expr::is_valid_symbol_name(name); }

/// Whether `name` is a dotted path of valid names (`torch.ops.aten.mm.default`,
/// `extern_kernels.mm`): what an extern kernel's operator may be called.
[[nodiscard]] inline bool is_valid_qualified_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 512) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string_view part = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    // Parts of an operator path may be keywords of the other language
    // (`aten.max.default`), but never anything that is not an identifier.
    if (part.empty() || part.size() > 256) return false;
    auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    if (!alpha(part.front())) return false;
    for (char c : part)
      if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
    if (part.size() >= 2 && part[0] == '_' && part[1] == '_') return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

/// `name` quoted for a diagnostic: at most 64 characters, quotes,
/// backslashes, control characters and the Unicode controls that reorder
/// displayed text escaped (wrapir/detail/escape.hpp, the one diagnostic
/// quoter), so a hostile name cannot break or forge the diagnostic line.
[[nodiscard]] inline std::string quote_for_diagnostic(std::string_view name) {
  return wrapir::detail::quote_for_diagnostic(name);
}

/// Why `name` cannot be used as the name of a `what` (e.g. "buffer"), or
/// nothing when it can.
[[nodiscard]] inline std::optional<std::string> check_name(std::string_view name, std::string_view what) {
  if (is_valid_name(name)) return std::nullopt;
  return "invalid " + std::string(what) + " name " + quote_for_diagnostic(name) +
         ": expected an identifier [A-Za-z_][A-Za-z0-9_]* that is not a keyword or a reserved name";
}

/// Why `name` cannot be used as an operator path, or nothing when it can.
[[nodiscard]] inline std::optional<std::string> check_qualified_name(std::string_view name, std::string_view what) {
  if (is_valid_qualified_name(name)) return std::nullopt;
  return "invalid " + std::string(what) + " name " + quote_for_diagnostic(name) +
         ": expected a dotted path of identifiers such as aten.mm.default";
}

/// Extra operator paths a program may call besides the built-in forms of
/// `check_operator_path`: a user-extensible allow-list, passed to the
/// verifier (`VerifyOptions::operators`) and to the emitters and executors
/// that call operators (`python::PythonOptions::operators`), so that they all
/// agree on what a program may call. Only exact paths are declared (no
/// wildcards): each names one callable the embedding application vouches
/// for, such as `torch.nn.functional.gelu`.
///
/// A plain value: copy it into each options struct that needs it.
class OperatorRegistry {
 public:
  OperatorRegistry() = default;
  /// Declares every path of `paths`; throws std::invalid_argument for one
  /// that `declare` refuses (for literal lists written in code).
  OperatorRegistry(std::initializer_list<std::string_view> paths) {
    for (std::string_view p : paths)
      if (auto refused = declare(p); !refused) throw std::invalid_argument(refused.error().message);
  }

  /// Declares `path` callable. Refused, with a diagnostic, unless it is a
  /// dotted path of at least two identifiers none of which starts with two
  /// underscores (`is_valid_qualified_name`): a registry cannot open the
  /// door to `__import__` or `__builtins__` either. Declaring a path twice
  /// is fine.
  Result<void> declare(std::string_view path) {
    if (!is_valid_qualified_name(path) || path.find('.') == std::string_view::npos)
      return Diagnostic{"cannot declare operator " + quote_for_diagnostic(path) +
                        ": expected a dotted path of two or more identifiers, none starting with '__'"};
    const auto it = std::lower_bound(paths_.begin(), paths_.end(), path);
    if (it == paths_.end() || *it != path) paths_.insert(it, std::string(path));
    return {};
  }

  [[nodiscard]] bool contains(std::string_view path) const noexcept {
    return std::binary_search(paths_.begin(), paths_.end(), path, std::less<>{});
  }
  [[nodiscard]] bool empty() const noexcept { return paths_.empty(); }
  /// The declared paths, sorted.
  [[nodiscard]] const std::vector<std::string>& paths() const noexcept { return paths_; }

  friend bool operator==(const OperatorRegistry&, const OperatorRegistry&) = default;

 private:
  std::vector<std::string> paths_;
};

namespace detail {

/// The parts of a dotted path (`a.b.c` -> a, b, c); empty parts kept.
[[nodiscard]] inline std::vector<std::string_view> path_parts(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

/// Attributes of torch's operator namespace objects that are not operators
/// (`torch.ops.load_library` loads a shared library; `aten.name` is a
/// string, `aten._dir` a list): an operator path never selects them.
[[nodiscard]] inline bool is_namespace_attribute(std::string_view part) noexcept {
  return part == "load_library" || part == "import_module" || part == "loaded_libraries" || part == "_dir" ||
         part == "_ops" || part == "name";
}

/// The aten operators whose names are Python dunders (the bitwise and shift
/// operators, `aten.__and__.Tensor`): real operators, so the one exception
/// to "no part starts with two underscores", and only as the operator part
/// of an aten path.
[[nodiscard]] inline bool is_aten_dunder_operator(std::string_view part) noexcept {
  for (std::string_view op : {"__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__iand__", "__ior__",
                              "__ixor__", "__ilshift__", "__irshift__"})
    if (part == op) return true;
  return false;
}

}  // namespace detail

/// The grammar of an operator path, which loaders and the builder check
/// field by field: `check_qualified_name`, except that the operator part of
/// an aten path (`aten.<op>`, `torch.ops.aten.<op>`) may be one of aten's
/// dunder operators (`aten.__and__.Tensor`). Which namespaces may be called
/// is `check_operator_path`'s business.
[[nodiscard]] inline std::optional<std::string> check_operator_name(std::string_view path) {
  const std::vector<std::string_view> parts = detail::path_parts(path);
  const bool aten_root = parts[0] == "aten";
  const bool torch_ops_aten = parts.size() > 3 && parts[0] == "torch" && parts[1] == "ops" && parts[2] == "aten";
  if (const std::size_t op = aten_root ? 1 : 3;
      (aten_root || torch_ops_aten) && parts.size() > op && detail::is_aten_dunder_operator(parts[op])) {
    // The grammar, with the dunder operator standing in for a plain identifier.
    std::string probe(path);
    probe.replace(static_cast<std::size_t>(parts[op].data() - path.data()), parts[op].size(), "op");
    if (is_valid_qualified_name(probe)) return std::nullopt;
  }
  return check_qualified_name(path, "operator");
}

/// Why `path` is not an operator a program may call, or nothing when it
/// is. The built-in forms name real operator namespaces only:
///
/// - `aten.<op>` and `aten.<op>.<overload>` (`aten.scatter_`,
///   `aten.scatter_reduce_.two`; `aten` is `torch.ops.aten`);
/// - `torch.ops.<namespace>.<op>` and `torch.ops.<namespace>.<op>.<overload>`
///   (`torch.ops.aten.mm.default`, `torch.ops.mylib.foo.default`);
/// - `inductor_ops.<op>[.<overload>]` and `_quantized.<op>[.<overload>]`,
///   Inductor's aliases of `torch.ops.inductor` and `torch.ops._quantized`;
/// - `extern_kernels.<name>` (`extern_kernels.mm`);
///
/// plus the exact paths `extra` declares. Every part is an identifier that
/// does not start with two underscores (except the operator part of an aten
/// path naming one of aten's dunder operators, `aten.__and__.Tensor`,
/// `torch.ops.aten.__rshift__.Scalar`); an overload does not start with an
/// underscore (real overload names never do, and `_schema`, `_op` are the
/// overload objects' internals); a namespace or operator part is not one of
/// the attributes torch's namespace objects hold besides operators
/// (`torch.ops.load_library`). So `torch.builtins.exec`, `torch.os.system`,
/// `torch.load` and `aten.mm.default.py_impl` are refused: generated code
/// never calls anything a program merely names.
///
/// This is the data-level grammar, shared by every target. Whether a part is
/// a keyword of the language an emitter prints (`aten.import.default` in
/// Python) is checked by that emitter, and by the verifier for the Python
/// and FX targets (see `ir::verify`).
[[nodiscard]] inline std::optional<std::string> check_operator_path(std::string_view path,
                                                                    const OperatorRegistry& extra) {
  if (auto err = check_operator_name(path)) return err;
  if (extra.contains(path)) return std::nullopt;
  const std::vector<std::string_view> parts = detail::path_parts(path);
  const auto refuse = [&](std::string_view why) {
    return "operator " + quote_for_diagnostic(path) + " is not an operator a program may call: " + std::string(why);
  };
  const auto op_and_overload = [&](std::size_t op) -> std::optional<std::string> {
    // parts[op] is the operator, parts[op + 1] (if any) its overload.
    if (parts.size() < op + 1 || parts.size() > op + 2)
      return refuse("expected " + std::string(op == 1 ? "<namespace>.<op>" : "torch.ops.<namespace>.<op>") +
                    " with an optional .<overload>");
    if (detail::is_namespace_attribute(parts[op]))
      return refuse("'" + std::string(parts[op]) + "' is an attribute of torch's operator namespace, not an operator");
    if (parts.size() == op + 2 && parts[op + 1].front() == '_')
      return refuse("the overload '" + std::string(parts[op + 1]) + "' starts with '_'; overload names never do");
    return std::nullopt;
  };
  const std::string_view root = parts[0];
  if (root == "aten" || root == "inductor_ops" || root == "_quantized") return op_and_overload(1);
  if (root == "torch") {
    if (parts.size() < 4 || parts[1] != "ops")
      return refuse("under 'torch' only torch.ops.<namespace>.<op>[.<overload>] is callable");
    if (detail::is_namespace_attribute(parts[2]))
      return refuse("'" + std::string(parts[2]) + "' is an attribute of torch.ops, not an operator namespace");
    return op_and_overload(3);
  }
  if (root == "extern_kernels") {
    if (parts.size() != 2) return refuse("expected extern_kernels.<name>");
    return std::nullopt;
  }
  return refuse("expected aten.<op>[.<overload>], torch.ops.<namespace>.<op>[.<overload>], "
                "inductor_ops.<op>[.<overload>], _quantized.<op>[.<overload>], extern_kernels.<name> or a path "
                "declared in the operator registry");
}

[[nodiscard]] inline std::optional<std::string> check_operator_path(std::string_view path) {
  return check_operator_path(path, OperatorRegistry{});
}

/// A name that is printed into generated code as an identifier (a keyword
/// argument's name, a workspace's inner name). A distinct type so that the
/// JSON loader, the text parser and the verifier know to check it with
/// `is_valid_name`; it converts from and to strings freely.
struct Name {
  std::string text;

  Name() = default;
  Name(std::string s) : text(std::move(s)) {}          // NOLINT: implicit by design
  Name(const char* s) : text(s) {}                     // NOLINT
  Name(std::string_view s) : text(s) {}                // NOLINT
  operator std::string_view() const noexcept { return text; }  // NOLINT
  friend bool operator==(const Name&, const Name&) = default;
};

/// A dotted operator path printed into generated code (`aten.mm.default`,
/// `extern_kernels.mm`), checked with `is_valid_qualified_name`.
struct OpName {
  std::string text;

  OpName() = default;
  OpName(std::string s) : text(std::move(s)) {}        // NOLINT: implicit by design
  OpName(const char* s) : text(s) {}                   // NOLINT
  OpName(std::string_view s) : text(s) {}              // NOLINT
  operator std::string_view() const noexcept { return text; }  // NOLINT
  friend bool operator==(const OpName&, const OpName&) = default;
};

/// Whether `text` may be written into generated code inside a comment: no
/// control characters other than tab, so it cannot end the comment line.
[[nodiscard]] inline bool is_single_line_text(std::string_view text) noexcept {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

}  // namespace wrapir::ir
