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

#include <wrapir/expr/expr.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

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

/// `name` quoted for a diagnostic: at most 64 characters, control characters
/// and quotes escaped, so a hostile name cannot break the diagnostic line.
[[nodiscard]] inline std::string quote_for_diagnostic(std::string_view name) {
  std::string out = "'";
  std::size_t shown = 0;
  for (char c : name) {
    if (shown++ == 64) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "'";
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
