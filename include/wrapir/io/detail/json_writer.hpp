#pragma once
/// \file
/// Writing JSON text: string escaping and `TextWriter`, which places
/// separators, newlines and indentation.
///
/// Part of the JSON codec (io/json.hpp says what it does and how);
/// include <wrapir/io/json.hpp>, not this.

#include <wrapir/io/json.hpp>

#include <wrapir/detail/utf8.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/parse.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/enum_names.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/reflect.hpp>
#include <wrapir/ir/symbol.hpp>

#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/string_view.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <boost/mp11/utility.hpp>
#include <boost/unordered/unordered_flat_map.hpp>
#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>


namespace wrapir::io::detail::json {

namespace bj = boost::json;

// ===========================================================================
// Writing
// ===========================================================================

/// Appends `s` as a JSON string literal: quotes, backslashes and control
/// characters escaped, invalid UTF-8 replaced by U+FFFD.
inline void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  const auto* const begin = reinterpret_cast<const unsigned char*>(s.data());
  const auto* p = begin;
  const auto* const end = p + s.size();
  const auto* run = p;  // start of the bytes not yet copied
  auto flush = [&] { out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run)); };
  while (p != end) {
    const unsigned char c = *p;
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++p;
      continue;
    }
    if (c >= 0x80) {
      if (const std::size_t n = wrapir::detail::utf8_sequence_length(s, static_cast<std::size_t>(p - begin))) {
        p += n;
        continue;
      }
      flush();
      out += "\\ufffd";
      run = ++p;
      continue;
    }
    flush();
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default: {
        constexpr char hex[] = "0123456789abcdef";
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
      }
    }
    run = ++p;
  }
  flush();
  out += '"';
}

/// Appends JSON text to a string, placing separators, newlines and
/// indentation. Keys are this file's own field names (ASCII identifiers),
/// so they are written without escaping. Pretty output puts a container
/// whose members are all scalars on one line (`{"kind": "Allocate",
/// "buffer": "buf0"}`, `["s0", "1"]`) and indents the others.
class TextWriter {
 public:
  TextWriter(std::string& out, const JsonOptions& options)
      : out_(out), pretty_(options.pretty), indent_(options.indent) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  void key(std::string_view k) {
    separate();
    out_ += '"';
    out_ += k;
    out_ += pretty_ ? "\": " : "\":";
    after_key_ = true;
  }

  void string(std::string_view s) {
    before_value();
    append_json_string(out_, s);
  }
  /// A string known to need no escaping (enum and dtype names).
  void plain_string(std::string_view s) {
    before_value();
    out_ += '"';
    out_ += s;
    out_ += '"';
  }
  void integer(std::int64_t v) {
    before_value();
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
  }
  void boolean(bool b) {
    before_value();
    out_ += b ? "true" : "false";
  }
  void null() {
    before_value();
    out_ += "null";
  }
  /// A finite double in the shortest form that reads back exactly, always
  /// with a '.' or an exponent so that it reads back as a float (`-0.0`, not
  /// `-0`); inf and nan as the strings "inf", "-inf", "nan".
  void floating(double d) {
    if (std::isnan(d)) return plain_string("nan");
    if (std::isinf(d)) return plain_string(d > 0 ? "inf" : "-inf");
    before_value();
    char buf[40];
    const auto r = std::to_chars(buf, buf + sizeof buf, d);
    const std::string_view text(buf, static_cast<std::size_t>(r.ptr - buf));
    out_ += text;
    if (text.find_first_of(".e") == std::string_view::npos) out_ += ".0";
  }
  /// Appends an expression as a string, printed straight into the output.
  void expression(expr::Expr e) {
    if (!e) return null();
    before_value();
    const std::size_t start = out_.size();
    out_ += '"';
    expr::print_python(e, out_);
    // Printed expressions are ASCII without quotes or backslashes; check
    // rather than trust, and escape the rare exception.
    bool plain = true;
    for (std::size_t i = start + 1; i < out_.size() && plain; ++i) {
      const auto c = static_cast<unsigned char>(out_[i]);
      plain = c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
    }
    if (plain) {
      out_ += '"';
      return;
    }
    const std::string printed = out_.substr(start + 1);
    out_.resize(start);
    append_json_string(out_, printed);
  }
  /// Appends a device as `cuda:0` without a temporary string.
  void device(const ir::Device& d) {
    before_value();
    out_ += '"';
    out_ += ir::device_type_name(d.type);
    if (d.index) {
      out_ += ':';
      char buf[16];
      const auto r = std::to_chars(buf, buf + sizeof buf, *d.index);
      out_.append(buf, r.ptr);
    }
    out_ += '"';
  }

 private:
  void open(char c) {
    before_value();
    out_ += c;
    nesting_.push_back(Level{first_, true, out_.size()});
    first_ = true;
  }
  void close(char c) {
    const bool had_items = !first_;
    const Level level = nesting_.back();
    first_ = level.enclosing_first;
    nesting_.pop_back();
    if (pretty_ && had_items) {
      if (level.scalars_only) join_lines(level.start);
      else newline();
    }
    out_ += c;
    // An empty container reads as a scalar; any other makes its parent
    // span lines.
    if (had_items && !nesting_.empty()) nesting_.back().scalars_only = false;
  }
  /// Turns the one-item-per-line text from `start` on into one line. The
  /// writer's newlines are the only ones in it (strings escape theirs).
  void join_lines(std::size_t start) {
    std::size_t to = start;
    for (std::size_t from = start; from < out_.size();) {
      if (out_[from] != '\n') {
        out_[to++] = out_[from++];
        continue;
      }
      ++from;
      while (from < out_.size() && out_[from] == ' ') ++from;
      if (to > start && out_[to - 1] == ',') out_[to++] = ' ';
    }
    out_.resize(to);
  }
  void before_value() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!nesting_.empty()) separate();
  }
  void separate() {
    if (!first_) out_ += ',';
    first_ = false;
    if (pretty_) newline();
  }
  void newline() {
    out_ += '\n';
    out_.append(nesting_.size() * indent_, ' ');
  }

  std::string& out_;
  bool pretty_;
  std::size_t indent_;
  struct Level {
    bool enclosing_first;  // the enclosing container's `first_`
    bool scalars_only;     // no non-empty container inside yet
    std::size_t start;     // where the contents begin in `out_`
  };

  bool first_ = true;
  bool after_key_ = false;
  std::vector<Level> nesting_;
};

}  // namespace wrapir::io::detail::json
