#pragma once
/// \file
/// The JSON form of a wrapir program, both directions (schema version 1).
///
/// ```
/// std::string text = wrapir::io::to_json(program);              // compact
/// std::string pretty = wrapir::io::to_json(program, {.pretty = true});
/// wrapir::Result<wrapir::Program> loaded = wrapir::io::program_from_json(text);
/// if (!loaded) std::cerr << loaded.error().to_string() << "\n";
/// ```
///
/// A document is `{"format": "wrapir", "version": 1, "program": {...}}`.
/// Tables hold names; lines, inputs and outputs refer to buffers, kernels,
/// pools and subgraphs by those names; expressions are strings in the syntax
/// of `expr::print_python` (integers also as JSON numbers); lines are
/// `{"kind": "<line kind>", <member>: <value>, ...}` with the members of the
/// line's struct as keys. docs/json-schema.md describes every field.
///
/// Writing is generic over the line kinds through their reflection
/// (`ir::for_each_field`), and so is reading, which dispatches on `"kind"`
/// over `ir::LineKinds`: a new line kind whose member types are known here
/// needs no code in this file.
///
/// Loading checks everything a hostile document could get wrong and answers
/// with one `Diagnostic` whose message starts with the JSON path of the
/// culprit (`$.program.body[3].buffer: unknown buffer 'buf9'`), or, for text
/// that is not JSON, its line and column. Every string that becomes a name in
/// generated code is validated (`ir::check_name`, `ir::check_qualified_name`);
/// unknown fields, duplicate keys, duplicate names and undeclared symbols are
/// errors; nesting and size are bounded (`JsonLoadOptions`). A failed load
/// returns no program at all. It may leave new symbols and expressions in a
/// context given through `JsonLoadOptions::context` (contexts only grow).
///
/// Parsing uses Boost.JSON's conforming parser (`boost::json::basic_parser`)
/// with a handler that builds a compact tape of the document (16 bytes per
/// value, strings viewing the input) instead of a `boost::json::value` tree,
/// rejects duplicate keys, and re-reads floating-point numbers with
/// `std::from_chars` (Boost 1.81 rounds some of them wrongly). Names are
/// resolved through hash maps and each distinct expression string is parsed
/// once per program. Writing appends to one `std::string` with a small
/// escaping writer (no DOM).

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
#include <boost/unordered/unordered_flat_map.hpp>
#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
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

namespace wrapir::io {

/// The `"format"` of every document.
inline constexpr std::string_view json_format_name = "wrapir";
/// The schema version this wrapir writes and the only one it reads.
inline constexpr std::int64_t json_format_version = 1;

/// How `to_json` writes.
struct JsonOptions {
  /// Newlines and indentation; compact (no whitespace at all) by default.
  bool pretty = false;
  /// Spaces per level when `pretty`.
  unsigned indent = 2;
};

/// How `program_from_json` reads.
struct JsonLoadOptions {
  /// The expression context to load into; a fresh one when null. Loading a
  /// program's JSON into the program's own context gives a program `==` to
  /// it (expressions compare by identity within one context).
  std::shared_ptr<expr::Context> context{};
  /// Longer input is refused before it is parsed.
  std::size_t max_bytes = std::size_t{1} << 30;
  /// Nesting limit of JSON arrays and objects; it bounds subgraph nesting and
  /// argument-list nesting too, and with them the recursion of the loader
  /// (a few hundred bytes of stack per level).
  std::size_t max_depth = 256;
  /// `expr::ParseOptions::max_depth` for each expression string.
  std::size_t max_expression_depth = 256;
};

/// Appends the JSON form of `program` to `out`.
///
/// Never fails for a well-formed program. For an ill-formed one it still
/// writes a document, which loading then refuses with a diagnostic: a null
/// expression is written as `null`, an id outside its table as the name
/// `<invalid buffer id N>`, and bytes of free text that are not UTF-8 as
/// U+FFFD. Throws `expr::Error` only for an expression too large to print
/// (see `expr::print_python`).
void to_json(const ir::Program& program, std::string& out, const JsonOptions& options = {});

/// The JSON form of `program`.
[[nodiscard]] std::string to_json(const ir::Program& program, const JsonOptions& options = {});

/// The program `text` describes, or the first problem found in it.
[[nodiscard]] Result<ir::Program> program_from_json(std::string_view text, const JsonLoadOptions& options = {});

// ---------------------------------------------------------------------------
// Implementation

namespace detail::json {

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

template <class T>
inline constexpr bool is_optional_v = false;
template <class T>
inline constexpr bool is_optional_v<std::optional<T>> = true;

using ir::enum_choices;
using ir::enum_from_name;
using ir::EnumNames;

/// Writes a program as JSON text. Ids are written as the names of the
/// entries they index in the program being written (`current_`).
class Encoder {
 public:
  Encoder(std::string& out, const JsonOptions& options) : w_(out, options) {}

  void document(const ir::Program& p) {
    w_.begin_object();
    w_.key("format");
    w_.plain_string(json_format_name);
    w_.key("version");
    w_.integer(json_format_version);
    w_.key("program");
    program(p);
    w_.end_object();
  }

 private:
  void program(const ir::Program& p) {
    const ir::Program* const enclosing = current_;
    current_ = &p;
    w_.begin_object();
    w_.key("name");
    w_.string(p.name);
    w_.key("symbols");
    array(p.symbols, [&](const ir::SymbolDecl& s) { symbol(s); });
    w_.key("buffers");
    array(p.buffers, [&](const ir::BufferDecl& b) { buffer(b); });
    w_.key("kernels");
    array(p.kernels, [&](const ir::KernelDecl& k) { kernel(k); });
    w_.key("pools");
    array(p.pools, [&](const ir::PoolDecl& pool) { this->pool(pool); });
    w_.key("inputs");
    array(p.inputs, [&](const ir::ProgramInput& in) { input(in); });
    w_.key("body");
    array(p.body, [&](const ir::Line& l) { line(l); });
    w_.key("outputs");
    array(p.outputs, [&](const ir::ProgramOutput& out) { output(out); });
    w_.key("subgraphs");
    array(p.subgraphs, [&](const ir::Program& g) { program(g); });
    w_.end_object();
    current_ = enclosing;
  }

  template <class T, class F>
  void array(const std::vector<T>& items, F&& each) {
    w_.begin_array();
    for (const T& x : items) each(x);
    w_.end_array();
  }

  // ---- tables: fields equal to their defaults are left out ----------------

  void symbol(const ir::SymbolDecl& s) {
    w_.begin_object();
    w_.key("name");
    if (s.symbol && s.symbol.is_symbol()) w_.string(s.symbol.name());
    else w_.expression(s.symbol);  // not a symbol: loading refuses the name
    if (s.origin != ir::SymbolOrigin::input) {
      w_.key("origin");
      put(s.origin);
    }
    if (s.symbol && s.symbol.is_symbol()) {
      if (s.symbol.assumption() != expr::Assumption::positive) {
        w_.key("assumption");
        put(s.symbol.assumption());
      }
      if (s.symbol.unbacked()) {
        w_.key("unbacked");
        w_.boolean(true);
      }
    }
    if (s.hint) {
      w_.key("hint");
      w_.integer(*s.hint);
    }
    if (s.source) {
      w_.key("source");
      put(*s.source);
    }
    if (!s.path.empty()) {
      w_.key("path");
      put(s.path);
    }
    w_.end_object();
  }

  void buffer(const ir::BufferDecl& b) {
    w_.begin_object();
    w_.key("name");
    w_.string(b.name);
    if (b.role != ir::BufferRole::intermediate) {
      w_.key("role");
      put(b.role);
    }
    w_.key("dtype");
    put(b.layout.dtype);
    w_.key("device");
    put(b.layout.device);
    w_.key("sizes");
    put(b.layout.sizes);
    w_.key("strides");
    put(b.layout.strides);
    if (!b.layout.storage_offset || !b.layout.storage_offset.is_integer(0)) {
      w_.key("offset");
      w_.expression(b.layout.storage_offset);
    }
    if (b.donated) {
      w_.key("donated");
      w_.boolean(true);
    }
    if (b.comm) {
      w_.key("comm");
      w_.begin_object();
      w_.key("type");
      put(b.comm->type);
      w_.key("group");
      w_.string(b.comm->group);
      w_.end_object();
    }
    if (b.multi_output) {
      w_.key("multi_output");
      w_.boolean(true);
    }
    if (b.stream != 0) {
      w_.key("stream");
      w_.integer(b.stream);
    }
    if (!b.aligned) {
      w_.key("aligned");
      w_.boolean(false);
    }
    w_.end_object();
  }

  void kernel(const ir::KernelDecl& k) {
    w_.begin_object();
    w_.key("name");
    w_.string(k.name);
    if (k.language != ir::KernelLanguage::triton) {
      w_.key("language");
      put(k.language);
    }
    if (!k.signature.empty()) {
      w_.key("signature");
      array(k.signature, [&](const ir::KernelParam& param) {
        w_.begin_object();
        w_.key("name");
        w_.string(param.name);
        w_.key("type");
        put(param.type);
        w_.end_object();
      });
    }
    w_.end_object();
  }

  void pool(const ir::PoolDecl& p) {
    w_.begin_object();
    w_.key("name");
    w_.string(p.name);
    w_.key("device");
    put(p.device);
    w_.key("size_bytes");
    w_.expression(p.size_bytes);
    w_.end_object();
  }

  void input(const ir::ProgramInput& in) {
    w_.begin_object();
    if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&in)) {
      w_.key("buffer");
      put(*b);
    } else {
      w_.key("expr");
      w_.expression(boost::variant2::get<expr::Expr>(in));
    }
    w_.end_object();
  }

  void output(const ir::ProgramOutput& out) {
    boost::variant2::visit([&](const auto& v) { put(ir::Arg(v)); }, out);
  }

  // ---- lines ---------------------------------------------------------------

  void line(const ir::Line& l) {
    std::visit(
        [&](const auto& ln) {
          using T = std::remove_cvref_t<decltype(ln)>;
          w_.begin_object();
          w_.key("kind");
          w_.plain_string(T::kind);
          ir::for_each_field(ln, [&](std::string_view name, const auto& field) {
            using F = std::remove_cvref_t<decltype(field)>;
            if constexpr (is_optional_v<F>) {
              if (!field) return;  // absent
            }
            w_.key(name);
            put(field);
          });
          w_.end_object();
        },
        l);
  }

  // ---- one overload per field type -----------------------------------------

  void put(bool b) { w_.boolean(b); }
  void put(std::int64_t v) { w_.integer(v); }
  void put(std::uint32_t v) { w_.integer(v); }
  void put(const std::string& s) { w_.string(s); }
  void put(const ir::Name& n) { w_.string(n.text); }
  void put(const ir::OpName& n) { w_.string(n.text); }
  void put(expr::Expr e) { w_.expression(e); }
  void put(const ir::Device& d) { w_.device(d); }
  void put(ir::DType d) { w_.plain_string(ir::name(d)); }
  void put(ir::ParamType t) {
    if (!ir::is_valid(t.dtype)) return w_.string("<invalid dtype>");
    std::string text = t.pointer ? "*" : "";
    text += ir::triton_type_name(t.dtype);
    w_.plain_string(text);
  }
  template <class E>
    requires std::is_enum_v<E>
  void put(E e) {
    w_.string(EnumNames<E>::name(e));
  }

  void put(ir::BufferId id) { table_name(current_->buffers, id.index, "buffer"); }
  void put(ir::KernelId id) { table_name(current_->kernels, id.index, "kernel"); }
  void put(ir::PoolId id) { table_name(current_->pools, id.index, "pool"); }
  void put(ir::GraphId id) { table_name(current_->subgraphs, id.index, "subgraph"); }

  template <class Entry>
  void table_name(const std::vector<Entry>& table, std::uint32_t index, const char* what) {
    if (index < table.size()) return w_.string(table[index].name);
    w_.string("<invalid " + std::string(what) + " id " + std::to_string(index) + ">");
  }

  template <class T>
  void put(const std::optional<T>& o) {
    if (o) put(*o);
    else w_.null();
  }
  template <class T>
  void put(const std::vector<T>& v) {
    w_.begin_array();
    for (const T& x : v) put(x);
    w_.end_array();
  }

  void put(const ir::View& v) {
    w_.begin_object();
    w_.key("sizes");
    put(v.sizes);
    w_.key("strides");
    put(v.strides);
    w_.key("offset");
    put(v.offset);
    w_.end_object();
  }
  void put(const ir::BufferArg& b) {
    w_.begin_object();
    w_.key("buffer");
    put(b.buffer);
    if (b.view) {
      w_.key("view");
      put(*b.view);
    }
    w_.end_object();
  }
  void put(const ir::Arg& a) {
    if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) return put(*b);
    w_.begin_object();
    boost::variant2::visit(
        [&](const auto& v) {
          using V = std::remove_cvref_t<decltype(v)>;
          if constexpr (std::is_same_v<V, ir::None>) {
            w_.key("none");
            w_.null();
          } else if constexpr (std::is_same_v<V, ir::BufferArg>) {
            // handled above
          } else if constexpr (std::is_same_v<V, expr::Expr>) {
            w_.key("expr");
            w_.expression(v);
          } else if constexpr (std::is_same_v<V, std::int64_t>) {
            w_.key("int");
            w_.integer(v);
          } else if constexpr (std::is_same_v<V, double>) {
            w_.key("float");
            w_.floating(v);
          } else if constexpr (std::is_same_v<V, bool>) {
            w_.key("bool");
            w_.boolean(v);
          } else if constexpr (std::is_same_v<V, std::string>) {
            w_.key("string");
            w_.string(v);
          } else if constexpr (std::is_same_v<V, ir::Device>) {
            w_.key("device");
            w_.device(v);
          } else if constexpr (std::is_same_v<V, ir::DType>) {
            w_.key("dtype");
            put(v);
          } else {
            static_assert(std::is_same_v<V, ir::ArgList>, "an Arg alternative without a JSON form");
            w_.key("list");
            put(v.items);
          }
        },
        a.value);
    w_.end_object();
  }
  /// Small value records (ir::is_record): one member per field, every
  /// field written, in declaration order, named as the member is.
  template <class T>
    requires ir::is_record<T>
  void put(const T& record) {
    w_.begin_object();
    boost::hana::for_each(boost::hana::accessors<T>(), [&](auto accessor) {
      w_.key(boost::hana::to<const char*>(boost::hana::first(accessor)));
      put(boost::hana::second(accessor)(record));
    });
    w_.end_object();
  }
  void put(const ir::KeyStep& s) {
    w_.begin_object();
    w_.key("kind");
    put(s.kind);
    if (s.value != 0) {
      w_.key("value");
      put(s.value);
    }
    if (!s.key.empty()) {
      w_.key("key");
      put(s.key);
    }
    w_.end_object();
  }
  void put(const ir::LaunchGrid& g) {
    w_.begin_object();
    w_.key("kind");
    if (boost::variant2::holds_alternative<ir::LauncherGrid>(g)) {
      w_.plain_string("launcher");
    } else if (const ir::ExplicitGrid* e = boost::variant2::get_if<ir::ExplicitGrid>(&g)) {
      w_.plain_string("explicit");
      w_.key("x");
      put(e->x);
      w_.key("y");
      put(e->y);
      w_.key("z");
      put(e->z);
    } else {
      const ir::TypedGrid& t = boost::variant2::get<ir::TypedGrid>(g);
      w_.plain_string("typed");
      w_.key("type");
      put(t.type);
      w_.key("numels");
      put(t.numels);
      w_.key("block");
      put(t.block);
    }
    w_.end_object();
  }
  void put(const ir::KernelSource& s) {
    w_.begin_object();
    w_.key("kind");
    if (const ir::SourceText* t = boost::variant2::get_if<ir::SourceText>(&s)) {
      w_.plain_string("text");
      w_.key("text");
      put(t->text);
    } else {
      const ir::BinaryRef& b = boost::variant2::get<ir::BinaryRef>(s);
      w_.plain_string("binary");
      w_.key("path");
      put(b.path);
      w_.key("entry");
      put(b.entry);
    }
    w_.end_object();
  }
  void put(const ir::KernelMetadata& m) {
    w_.begin_object();
    if (!m.constants.empty()) {
      w_.key("constants");
      put(m.constants);
    }
    auto optional_int = [&](std::string_view key, const std::optional<std::int64_t>& v) {
      if (!v) return;
      w_.key(key);
      w_.integer(*v);
    };
    optional_int("num_warps", m.num_warps);
    optional_int("num_stages", m.num_stages);
    optional_int("shared_memory_bytes", m.shared_memory_bytes);
    if (m.grid_type) {
      w_.key("grid_type");
      put(*m.grid_type);
    }
    if (!m.block.empty()) {
      w_.key("block");
      put(m.block);
    }
    w_.end_object();
  }

  TextWriter w_;
  const ir::Program* current_ = nullptr;
};

// ===========================================================================
// Parsing JSON text
// ===========================================================================

/// The kinds of JSON values on a tape.
enum class NodeKind : std::uint8_t { null, boolean, int64, uint64, number, string, array, object, key };

/// One JSON value (or object key) of a parsed document. A document is a
/// tape of nodes in document order: a container is followed by its
/// contents (an object by key, value, key, value, ...), and `span` says
/// how many nodes those take, so that its next sibling is `this + 1 + span`.
/// Strings view the input text, or the tape's own storage when they had
/// escapes.
struct Node {
  union {
    const char* chars;
    std::int64_t int64;
    std::uint64_t uint64;
    double number;
    std::uint64_t span;  // array, object: the nodes of the contents
    bool boolean;
  };
  /// string, key: the length in bytes; array: the element count; object:
  /// the member count.
  std::uint32_t size;
  NodeKind kind;

  [[nodiscard]] bool is(NodeKind k) const noexcept { return kind == k; }
  [[nodiscard]] std::string_view text() const noexcept { return {chars, size}; }
  [[nodiscard]] const Node* first() const noexcept { return this + 1; }
  [[nodiscard]] const Node* next() const noexcept {
    return this + 1 + (kind == NodeKind::array || kind == NodeKind::object ? span : 0);
  }
};

/// `a == b` for the short strings of keys and names, without a library call.
inline bool same_text(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

/// Builds the tape of a document from the events of Boost.JSON's
/// conforming parser (`boost::json::basic_parser`), which checks the syntax,
/// the UTF-8, the escapes and the nesting depth. Two checks are added:
/// duplicate keys in an object are an error, and floating-point numbers are
/// read again from their text with `std::from_chars`, which rounds
/// correctly (Boost 1.81's own conversion is off by one unit in the last
/// place for many inputs).
///
/// A tape is about 16 bytes per value, several times smaller and faster
/// to build than a `boost::json::value` tree, which matters at 100k lines.
class TapeBuilder {
 public:
  static constexpr std::size_t max_object_size = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t max_array_size = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t max_key_size = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t max_string_size = std::numeric_limits<std::uint32_t>::max();

  explicit TapeBuilder(std::string_view input) : input_(input) {
    // About one value per 7 bytes of JSON as wrapir writes it.
    nodes.reserve(input.size() / 7 + 16);
  }

  std::vector<Node> nodes;
  /// Where strings with escapes live; a deque, so they never move.
  std::deque<std::string> escaped;
  /// Set when parsing stopped at a duplicate key.
  std::optional<std::string> duplicate_key{};

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_object_begin(bj::error_code&) { return open(NodeKind::object); }
  bool on_object_end(std::size_t n, bj::error_code& ec) {
    const std::size_t at = close(n);
    if (const auto dup = find_duplicate(nodes[at])) {
      duplicate_key = std::string(*dup);
      ec = bj::error::syntax;
      return false;
    }
    return true;
  }
  bool on_array_begin(bj::error_code&) { return open(NodeKind::array); }
  bool on_array_end(std::size_t n, bj::error_code&) {
    close(n);
    return true;
  }
  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) { return part(s); }
  bool on_key(bj::string_view s, std::size_t, bj::error_code&) { return text(NodeKind::key, s); }
  bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) { return part(s); }
  bool on_string(bj::string_view s, std::size_t, bj::error_code&) { return text(NodeKind::string, s); }
  bool on_number_part(bj::string_view s, bj::error_code&) {
    number_parts_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, bj::string_view, bj::error_code&) {
    number_parts_.clear();
    Node& n = push(NodeKind::int64);
    n.int64 = i;
    return true;
  }
  bool on_uint64(std::uint64_t u, bj::string_view, bj::error_code&) {
    number_parts_.clear();
    Node& n = push(NodeKind::uint64);
    n.uint64 = u;
    return true;
  }
  bool on_double(double d, bj::string_view s, bj::error_code&) {
    number_parts_.append(s.data(), s.size());
    double exact = 0;
    const char* first = number_parts_.data();
    const char* last = first + number_parts_.size();
    const auto r = std::from_chars(first, last, exact);
    // Out of range (1e400) keeps Boost's value: an infinity or zero.
    if (r.ec == std::errc{} && r.ptr == last) d = exact;
    number_parts_.clear();
    Node& n = push(NodeKind::number);
    n.number = d;
    return true;
  }
  bool on_bool(bool b, bj::error_code&) {
    Node& n = push(NodeKind::boolean);
    n.boolean = b;
    return true;
  }
  bool on_null(bj::error_code&) {
    push(NodeKind::null);
    return true;
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

 private:
  Node& push(NodeKind kind) {
    Node& n = nodes.emplace_back();
    n.uint64 = 0;
    n.size = 0;
    n.kind = kind;
    return n;
  }
  bool open(NodeKind kind) {
    open_.push_back(nodes.size());
    push(kind);
    return true;
  }
  /// Completes the innermost open container; returns its index.
  std::size_t close(std::size_t count) {
    const std::size_t at = open_.back();
    open_.pop_back();
    nodes[at].span = nodes.size() - at - 1;
    nodes[at].size = static_cast<std::uint32_t>(count);
    return at;
  }
  bool part(bj::string_view s) {
    parts_.append(s.data(), s.size());
    in_parts_ = true;
    return true;
  }
  bool text(NodeKind kind, bj::string_view s) {
    std::string_view piece(s.data(), s.size());
    if (in_parts_ || !within_input(piece)) {
      // Unescaped into the parser's scratch space, or delivered in parts:
      // keep a copy for the life of the tape.
      parts_.append(piece);
      piece = escaped.emplace_back(std::move(parts_));
      parts_.clear();
      in_parts_ = false;
    }
    Node& n = push(kind);
    n.chars = piece.data();
    n.size = static_cast<std::uint32_t>(piece.size());
    return true;
  }
  [[nodiscard]] bool within_input(std::string_view s) const noexcept {
    const auto lo = reinterpret_cast<std::uintptr_t>(input_.data());
    const auto p = reinterpret_cast<std::uintptr_t>(s.data());
    return p >= lo && p + s.size() <= lo + input_.size();
  }

  static std::optional<std::string_view> find_duplicate(const Node& object) {
    if (object.size < 2) return std::nullopt;
    if (object.size <= 16) {  // every object wrapir writes: compare pairs
      std::array<const Node*, 16> keys;
      const Node* k = object.first();
      for (std::size_t i = 0; i < object.size; ++i, k = k->first()->next()) {
        keys[i] = k;
        for (std::size_t j = 0; j < i; ++j)
          if (same_text(keys[j]->text(), k->text())) return k->text();
      }
      return std::nullopt;
    }
    std::vector<std::string_view> keys;
    keys.reserve(object.size);
    for (const Node* k = object.first(); keys.size() < object.size; k = k->first()->next()) keys.push_back(k->text());
    std::sort(keys.begin(), keys.end());
    const auto dup = std::adjacent_find(keys.begin(), keys.end());
    if (dup != keys.end()) return *dup;
    return std::nullopt;
  }

  std::string_view input_;
  std::vector<std::size_t> open_;  // indices of the open containers
  std::string parts_;
  bool in_parts_ = false;
  std::string number_parts_;
};

/// 1-based line and column (in bytes) of byte `offset` of `text`.
inline std::string text_position(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1) + " (byte " +
         std::to_string(offset) + ")";
}

// ===========================================================================
// Reading
// ===========================================================================

/// A JSON path (`$.program.body[3].buffer`) as a chain of stack objects, so
/// that descending costs nothing and text is made only for a diagnostic.
struct Path {
  const Path* parent = nullptr;
  std::string_view key{};  // this file's own keys only, never input text
  std::size_t index = 0;
  bool is_index = false;

  [[nodiscard]] Path operator/(std::string_view k) const { return Path{this, k, 0, false}; }
  [[nodiscard]] Path operator[](std::size_t i) const { return Path{this, {}, i, true}; }

  [[nodiscard]] std::string text() const {
    std::vector<const Path*> chain;
    for (const Path* p = this; p; p = p->parent) chain.push_back(p);
    std::string out = "$";
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Path* p = *it;
      if (!p->parent) continue;  // the root
      if (p->is_index) out += "[" + std::to_string(p->index) + "]";
      else out += "." + std::string(p->key);
    }
    return out;
  }
};

/// A load error on its way out; always caught by `program_from_json`.
struct LoadError {
  std::string message;
};

[[noreturn]] inline void fail(const Path& where, std::string why) {
  throw LoadError{where.text() + ": " + std::move(why)};
}

inline const char* describe(const Node& v) noexcept {
  switch (v.kind) {
    case NodeKind::null: return "null";
    case NodeKind::boolean: return "a boolean";
    case NodeKind::int64:
    case NodeKind::uint64:
    case NodeKind::number: return "a number";
    case NodeKind::string:
    case NodeKind::key: return "a string";
    case NodeKind::array: return "an array";
    case NodeKind::object: return "an object";
  }
  return "a value";
}

inline const Node& as_object(const Node& v, const Path& p) {
  if (v.is(NodeKind::object)) return v;
  fail(p, std::string("expected an object, got ") + describe(v));
}
inline const Node& as_array(const Node& v, const Path& p) {
  if (v.is(NodeKind::array)) return v;
  fail(p, std::string("expected an array, got ") + describe(v));
}
inline std::string_view as_string(const Node& v, const Path& p) {
  if (v.is(NodeKind::string)) return v.text();
  fail(p, std::string("expected a string, got ") + describe(v));
}
inline std::int64_t as_int64(const Node& v, const Path& p) {
  if (v.is(NodeKind::int64)) return v.int64;
  if (v.is(NodeKind::uint64)) fail(p, "integer " + std::to_string(v.uint64) + " is out of range (more than 2^63 - 1)");
  if (v.is(NodeKind::number)) fail(p, "expected an integer, got a number with a fraction or exponent");
  fail(p, std::string("expected an integer, got ") + describe(v));
}

/// Calls `f(index, element)` for each element of an array.
template <class F>
void for_each_element(const Node& array, F&& f) {
  const Node* e = array.first();
  for (std::size_t i = 0; i < array.size; ++i, e = e->next()) f(i, *e);
}

/// Reads the members of one JSON object: each lookup records the key, and
/// `finish` refuses any member that was not looked up (a typo, or a field
/// this version does not know).
class ObjectReader {
 public:
  ObjectReader(const Node& v, const Path& path) : object_(as_object(v, path)), path_(path), next_(v.first()) {}

  [[nodiscard]] const Path& path() const noexcept { return path_; }
  [[nodiscard]] std::size_t size() const noexcept { return object_.size; }

  /// The member `key`, or null when it is absent.
  const Node* optional(std::string_view key) {
    if (known_count_ < max_known) known_[known_count_++] = Key{key.data(), key.size()};
    // Every member taken (keys are unique): the rest are absent. Defaults are
    // not written, so most optional lookups of a table entry end here.
    if (used_ == object_.size) return nullptr;
    // Members usually come in the order this file writes and reads them:
    // try the one after the last found before searching.
    if (next_ != end() && same_text(next_->text(), key)) return take(next_);
    const Node* k = object_.first();
    for (std::size_t i = 0; i < object_.size; ++i, k = k->first()->next())
      if (same_text(k->text(), key)) return take(k);
    return nullptr;
  }
  /// The member `key`; absent is an error.
  const Node& required(std::string_view key) {
    if (const Node* v = optional(key)) return *v;
    fail(path_, "missing field '" + std::string(key) + "'");
  }

  /// Refuses members that no lookup asked for.
  void finish() const {
    if (object_.size == used_) return;
    const Node* k = object_.first();
    for (std::size_t m = 0; m < object_.size; ++m, k = k->first()->next()) {
      bool known = false;
      for (std::size_t i = 0; i < known_count_ && !known; ++i) known = known_[i].text() == k->text();
      if (known) continue;
      std::string expected;
      for (std::size_t i = 0; i < known_count_; ++i) expected += (i ? ", " : "") + std::string(known_[i].text());
      fail(path_, "unknown field " + ir::quote_for_diagnostic(k->text()) + " (expected: " + expected + ")");
    }
  }

 private:
  [[nodiscard]] const Node* end() const noexcept { return object_.next(); }
  const Node* take(const Node* key) {
    ++used_;
    const Node* value = key->first();
    next_ = value->next();
    return value;
  }

  // The keys looked up, for the message about an unknown one. Trivial and
  // left uninitialised: a reader is made for every object of a document.
  struct Key {
    const char* chars;
    std::size_t size;
    [[nodiscard]] std::string_view text() const noexcept { return {chars, size}; }
  };
  static constexpr std::size_t max_known = 24;

  const Node& object_;
  const Path& path_;
  const Node* next_;  // the key expected next
  Key known_[max_known];
  std::size_t known_count_ = 0;
  std::size_t used_ = 0;
};

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

enum class Table : std::uint8_t { symbol, buffer, kernel, pool, subgraph };

inline const char* table_entry_name(Table t) noexcept {
  constexpr const char* names[] = {"symbol", "buffer", "kernel", "pool", "subgraph"};
  return names[static_cast<std::size_t>(t)];
}

/// One program being loaded: its names (all tables share one namespace, as
/// they do in generated code) and its parsed expressions. Keys view strings
/// of the document, which outlives the load.
struct Scope {
  struct Entry {
    Table table;
    std::uint32_t index;
  };
  ir::Program* program = nullptr;
  boost::unordered_flat_map<std::string_view, Entry, StringHash> names;
  boost::unordered_flat_map<std::string_view, expr::Expr, StringHash> expressions;
};

template <class T>
struct IdTable;
template <>
struct IdTable<ir::BufferId> {
  static constexpr Table table = Table::buffer;
};
template <>
struct IdTable<ir::KernelId> {
  static constexpr Table table = Table::kernel;
};
template <>
struct IdTable<ir::PoolId> {
  static constexpr Table table = Table::pool;
};
template <>
struct IdTable<ir::GraphId> {
  static constexpr Table table = Table::subgraph;
};

/// Builds a program from a parsed document.
class Decoder {
 public:
  Decoder(expr::Context& ctx, const JsonLoadOptions& options) : ctx_(ctx), options_(options) {}

  void document(const Node& root, ir::Program& out) {
    const Path path;
    ObjectReader r(root, path);
    const Node& format = r.required("format");
    if (!format.is(NodeKind::string) || format.text() != json_format_name)
      fail(path / "format", "expected the string \"wrapir\", got " +
                                (format.is(NodeKind::string) ? ir::quote_for_diagnostic(format.text())
                                                             : std::string(describe(format))) +
                                ": this is not a wrapir program");
    const std::int64_t version = as_int64(r.required("version"), path / "version");
    if (version != json_format_version)
      fail(path / "version", "unsupported version " + std::to_string(version) + " (this wrapir reads version " +
                                 std::to_string(json_format_version) + ")");
    program(r.required("program"), out, path / "program");
    r.finish();
  }

 private:
  // ---- programs --------------------------------------------------------------

  void program(const Node& v, ir::Program& out, const Path& path) {
    ObjectReader r(v, path);
    out.name = std::string(name_of(r.required("name"), path / "name", "program"));

    Scope scope;
    scope.program = &out;
    Scope* const enclosing = scope_;
    scope_ = &scope;

    const Node* symbols = optional_array(r, "symbols");
    const Node* buffers = optional_array(r, "buffers");
    const Node* kernels = optional_array(r, "kernels");
    const Node* pools = optional_array(r, "pools");
    const Node* inputs = optional_array(r, "inputs");
    const Node* body = optional_array(r, "body");
    const Node* outputs = optional_array(r, "outputs");
    const Node* subgraphs = optional_array(r, "subgraphs");
    r.finish();

    // Every name first, so that references resolve whatever the order of
    // the tables; then the symbols, so that they exist with their
    // assumptions before any expression is parsed.
    std::size_t entries = 0;
    for (const Node* t : {symbols, buffers, kernels, pools, subgraphs}) entries += t ? t->size : 0;
    scope.names.reserve(entries);
    register_names(symbols, path / "symbols", Table::symbol);
    register_names(buffers, path / "buffers", Table::buffer);
    register_names(kernels, path / "kernels", Table::kernel);
    register_names(pools, path / "pools", Table::pool);
    register_names(subgraphs, path / "subgraphs", Table::subgraph);

    table(symbols, out.symbols, path / "symbols", [&](const Node& e, ir::SymbolDecl& s, const Path& p) {
      symbol(e, s, p);
    });
    table(buffers, out.buffers, path / "buffers", [&](const Node& e, ir::BufferDecl& b, const Path& p) {
      buffer(e, b, p);
    });
    table(kernels, out.kernels, path / "kernels", [&](const Node& e, ir::KernelDecl& k, const Path& p) {
      kernel(e, k, p);
    });
    table(pools, out.pools, path / "pools", [&](const Node& e, ir::PoolDecl& pl, const Path& p) { pool(e, pl, p); });
    if (subgraphs) {
      const Path sub_path = path / "subgraphs";
      out.subgraphs.reserve(subgraphs->size);
      for_each_element(*subgraphs, [&](std::size_t i, const Node& g) {
        out.subgraphs.emplace_back(std::string(), out.context);
        program(g, out.subgraphs.back(), sub_path[i]);
      });
    }

    if (inputs) {
      const Path in_path = path / "inputs";
      out.inputs.reserve(inputs->size);
      for_each_element(*inputs, [&](std::size_t i, const Node& e) { out.inputs.push_back(input(e, in_path[i])); });
    }
    if (body) {
      const Path body_path = path / "body";
      out.body.reserve(body->size);
      for_each_element(*body, [&](std::size_t i, const Node& e) { line(e, out.body, body_path[i]); });
    }
    if (outputs) {
      const Path out_path = path / "outputs";
      out.outputs.reserve(outputs->size);
      for_each_element(*outputs, [&](std::size_t i, const Node& e) { out.outputs.push_back(output(e, out_path[i])); });
    }
    scope_ = enclosing;
  }

  static const Node* optional_array(ObjectReader& r, std::string_view key) {
    const Node* v = r.optional(key);
    return v ? &as_array(*v, r.path() / key) : nullptr;
  }

  /// A valid name of a `what` (buffer, kernel, ...).
  static std::string_view name_of(const Node& v, const Path& p, std::string_view what) {
    const std::string_view name = as_string(v, p);
    if (auto err = ir::check_name(name, what)) fail(p, *std::move(err));
    return name;
  }

  void register_names(const Node* entries, const Path& path, Table table) {
    if (!entries) return;
    for_each_element(*entries, [&](std::size_t i, const Node& e) {
      const Path entry_path = path[i];
      ObjectReader entry(e, entry_path);
      const Path name_path = entry_path / "name";
      const std::string_view name = name_of(entry.required("name"), name_path, table_entry_name(table));
      const auto [it, inserted] = scope_->names.try_emplace(name, Scope::Entry{table, static_cast<std::uint32_t>(i)});
      if (!inserted)
        fail(name_path, "duplicate name " + ir::quote_for_diagnostic(name) + ": already the name of " +
                            table_entry_name(it->second.table) + " " + std::to_string(it->second.index) +
                            " of program " + ir::quote_for_diagnostic(scope_->program->name));
    });
  }

  template <class T, class F>
  void table(const Node* entries, std::vector<T>& out, const Path& path, F&& decode) {
    if (!entries) return;
    out.reserve(entries->size);
    for_each_element(*entries, [&](std::size_t i, const Node& e) { decode(e, out.emplace_back(), path[i]); });
  }

  void symbol(const Node& v, ir::SymbolDecl& out, const Path& path) {
    ObjectReader r(v, path);
    const std::string_view name = r.required("name").text();  // checked when registered
    if (const Node* o = r.optional("origin")) get(*o, out.origin, path / "origin");
    expr::Assumption assumption = expr::Assumption::positive;
    if (const Node* a = r.optional("assumption")) get(*a, assumption, path / "assumption");
    bool unbacked = false;
    if (const Node* u = r.optional("unbacked")) get(*u, unbacked, path / "unbacked");
    if (const Node* h = r.optional("hint")) get(*h, out.hint, path / "hint");
    if (const Node* s = r.optional("source")) get(*s, out.source, path / "source");
    if (const Node* p = r.optional("path")) get(*p, out.path, path / "path");
    r.finish();
    try {
      out.symbol = ctx_.symbol(name, assumption, unbacked);
    } catch (const expr::Error& e) {
      fail(path, e.what());
    }
  }

  void buffer(const Node& v, ir::BufferDecl& out, const Path& path) {
    ObjectReader r(v, path);
    out.name = std::string(r.required("name").text());  // checked when registered
    if (const Node* x = r.optional("role")) get(*x, out.role, path / "role");
    get(r.required("dtype"), out.layout.dtype, path / "dtype");
    get(r.required("device"), out.layout.device, path / "device");
    get(r.required("sizes"), out.layout.sizes, path / "sizes");
    get(r.required("strides"), out.layout.strides, path / "strides");
    if (const Node* x = r.optional("offset")) get(*x, out.layout.storage_offset, path / "offset");
    else out.layout.storage_offset = ctx_.integer(0);
    if (const Node* x = r.optional("donated")) get(*x, out.donated, path / "donated");
    if (const Node* x = r.optional("comm")) {
      const Path comm_path = path / "comm";
      ObjectReader c(*x, comm_path);
      ir::CommBufferInfo info;
      if (const Node* t = c.optional("type")) get(*t, info.type, comm_path / "type");
      get(c.required("group"), info.group, comm_path / "group");
      c.finish();
      out.comm = std::move(info);
    }
    if (const Node* x = r.optional("multi_output")) get(*x, out.multi_output, path / "multi_output");
    if (const Node* x = r.optional("stream")) get(*x, out.stream, path / "stream");
    if (const Node* x = r.optional("aligned")) get(*x, out.aligned, path / "aligned");
    r.finish();
  }

  void kernel(const Node& v, ir::KernelDecl& out, const Path& path) {
    ObjectReader r(v, path);
    out.name = std::string(r.required("name").text());  // checked when registered
    if (const Node* x = r.optional("language")) get(*x, out.language, path / "language");
    if (const Node* x = r.optional("signature")) {
      const Path sig_path = path / "signature";
      const Node& params = as_array(*x, sig_path);
      out.signature.reserve(params.size);
      for_each_element(params, [&](std::size_t i, const Node& e) {
        const Path param_path = sig_path[i];
        ObjectReader p(e, param_path);
        ir::KernelParam param;
        param.name = std::string(name_of(p.required("name"), param_path / "name", "kernel parameter"));
        get(p.required("type"), param.type, param_path / "type");
        p.finish();
        out.signature.push_back(std::move(param));
      });
    }
    r.finish();
  }

  void pool(const Node& v, ir::PoolDecl& out, const Path& path) {
    ObjectReader r(v, path);
    out.name = std::string(r.required("name").text());  // checked when registered
    get(r.required("device"), out.device, path / "device");
    get(r.required("size_bytes"), out.size_bytes, path / "size_bytes");
    r.finish();
  }

  ir::ProgramInput input(const Node& v, const Path& path) {
    ObjectReader r(v, path);
    ir::ProgramInput result;
    if (const Node* b = r.optional("buffer")) {
      ir::BufferId id;
      get(*b, id, path / "buffer");
      result = id;
    } else if (const Node* e = r.optional("expr")) {
      result = expression(*e, path / "expr");
    } else {
      fail(path, "expected an input: {\"buffer\": name} or {\"expr\": symbol}");
    }
    r.finish();
    return result;
  }

  ir::ProgramOutput output(const Node& v, const Path& path) {
    ir::Arg a;
    get(v, a, path);
    if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) return *b;
    if (const expr::Expr* e = a.get_if<expr::Expr>()) return *e;
    if (a.holds<ir::None>()) return ir::None{};
    fail(path, std::string("a program output is a buffer, an expression or none, got ") + ir::arg_kind_name(a));
  }

  // ---- lines -----------------------------------------------------------------

  /// `ir::line_kind_from_name`, remembered per distinct text.
  std::optional<std::size_t> kind_index(std::string_view name) {
    const auto [it, inserted] = kinds_.try_emplace(name);
    if (inserted) it->second = ir::line_kind_from_name(name);
    return it->second;
  }

  void line(const Node& v, std::vector<ir::Line>& body, const Path& path) {
    ObjectReader r(v, path);
    const Path kind_path = path / "kind";
    const std::string_view kind = as_string(r.required("kind"), kind_path);
    const std::optional<std::size_t> index = kind_index(kind);
    if (!index) fail(kind_path, "unknown line kind " + ir::quote_for_diagnostic(kind));
    boost::mp11::mp_with_index<ir::line_kind_count>(*index, [&](auto i) {
      using T = boost::mp11::mp_at_c<ir::LineKinds, decltype(i)::value>;
      T& ln = std::get<T>(body.emplace_back(std::in_place_type<T>));
      ir::for_each_field(ln, [&](std::string_view name, auto& field) {
        using F = std::remove_cvref_t<decltype(field)>;
        if constexpr (is_optional_v<F>) {
          if (const Node* x = r.optional(name)) get(*x, field, path / name);
        } else {
          get(r.required(name), field, path / name);
        }
      });
      r.finish();
      check_line(ln, path);
    });
  }

  /// Checks a line kind needs beyond its field types.
  template <class T>
  static void check_line(const T&, const Path&) {}
  static void check_line(const ir::Comment& c, const Path& path) {
    if (!ir::is_single_line_text(c.text))
      fail(path / "text", "comment text must be one line: no line breaks or control characters other than tab");
  }

  // ---- expressions -------------------------------------------------------------

  expr::Expr expression(const Node& v, const Path& path) {
    if (v.is(NodeKind::string)) {
      const auto [it, inserted] = scope_->expressions.try_emplace(v.text());
      if (inserted) it->second = parse_expression(v.text(), path);
      return it->second;
    }
    if (v.is(NodeKind::int64)) return ctx_.integer(v.int64);
    if (v.is(NodeKind::uint64))
      fail(path, "integer " + std::to_string(v.uint64) + " is out of range (more than 2^63 - 1)");
    fail(path, std::string("expected an expression (a string such as \"s0*4\", or an integer), got ") + describe(v));
  }

  expr::Expr parse_expression(std::string_view text, const Path& path) {
    // Undeclared symbols are refused before parsing, which would create
    // them in the context.
    check_symbols_declared(text, path);
    expr::ParseOptions options;
    options.max_depth = options_.max_expression_depth;
    auto parsed = expr::parse(ctx_, text, options);
    if (!parsed) fail(path, "invalid expression " + ir::quote_for_diagnostic(text) + ": " + parsed.error().to_string());
    return *parsed;
  }

  /// Fails unless every identifier of `text` that could name a symbol is a
  /// symbol of the program being loaded. Reserved words and function names
  /// are left to the expression parser, which refuses misused ones.
  void check_symbols_declared(std::string_view text, const Path& path) const {
    auto ident_start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    auto ident_char = [&](char c) { return ident_start(c) || (c >= '0' && c <= '9'); };
    std::size_t i = 0;
    while (i < text.size()) {
      const char c = text[i];
      if (c == '#') {  // a comment runs to the end of the line
        while (i < text.size() && text[i] != '\n') ++i;
        continue;
      }
      if (c >= '0' && c <= '9') {  // a number, with whatever letters stick to it
        while (i < text.size() && ident_char(text[i])) ++i;
        continue;
      }
      if (!ident_start(c)) {
        ++i;
        continue;
      }
      const std::size_t begin = i;
      while (i < text.size() && ident_char(text[i])) ++i;
      const std::string_view name = text.substr(begin, i - begin);
      if (!expr::is_valid_symbol_name(name)) continue;
      std::size_t next = i;
      while (next < text.size() &&
             (text[next] == ' ' || text[next] == '\t' || text[next] == '\r' || text[next] == '\n'))
        ++next;
      if (next < text.size() && text[next] == '(') continue;  // a call
      const auto it = scope_->names.find(name);
      if (it == scope_->names.end() || it->second.table != Table::symbol) {
        // A syntax error is the better diagnostic when there is one: parse
        // in a scratch context, where new symbols do no harm.
        expr::Context scratch;
        expr::ParseOptions options;
        options.max_depth = options_.max_expression_depth;
        auto parsed = expr::parse(scratch, text, options);
        if (!parsed)
          fail(path, "invalid expression " + ir::quote_for_diagnostic(text) + ": " + parsed.error().to_string());
        fail(path, "expression " + ir::quote_for_diagnostic(text) + " uses the symbol " +
                       ir::quote_for_diagnostic(name) + ", which the symbol table of program " +
                       ir::quote_for_diagnostic(scope_->program->name) + " does not declare");
      }
    }
  }

  // ---- one overload per field type -------------------------------------------

  void get(const Node& v, bool& out, const Path& path) {
    if (!v.is(NodeKind::boolean)) fail(path, std::string("expected a boolean, got ") + describe(v));
    out = v.boolean;
  }
  void get(const Node& v, std::int64_t& out, const Path& path) { out = as_int64(v, path); }
  void get(const Node& v, std::uint32_t& out, const Path& path) {
    const std::int64_t i = as_int64(v, path);
    if (i < 0 || i > std::numeric_limits<std::uint32_t>::max())
      fail(path, "integer " + std::to_string(i) + " is out of range [0, 4294967295]");
    out = static_cast<std::uint32_t>(i);
  }
  void get(const Node& v, std::string& out, const Path& path) { out = std::string(as_string(v, path)); }
  void get(const Node& v, ir::Name& out, const Path& path) {
    const std::string_view s = as_string(v, path);
    if (!ir::is_valid_name(s))
      fail(path, "invalid name " + ir::quote_for_diagnostic(s) +
                     ": expected an identifier [A-Za-z_][A-Za-z0-9_]* that is not a keyword or a reserved name");
    out.text = std::string(s);
  }
  void get(const Node& v, ir::OpName& out, const Path& path) {
    const std::string_view s = as_string(v, path);
    if (auto err = ir::check_qualified_name(s, "operator")) fail(path, *std::move(err));
    out.text = std::string(s);
  }
  void get(const Node& v, expr::Expr& out, const Path& path) { out = expression(v, path); }

  // Devices, dtypes and parameter types repeat on every line; each distinct
  // text is parsed once.
  void get(const Node& v, ir::Device& out, const Path& path) {
    const std::string_view s = as_string(v, path);
    if (const auto it = devices_.find(s); it != devices_.end()) {
      out = it->second;
      return;
    }
    auto d = ir::parse_device(s);
    if (!d) {
      // parse_device quotes the text as it is; keep the diagnostic one line.
      if (!ir::is_single_line_text(s))
        fail(path, "invalid device " + ir::quote_for_diagnostic(s) + ": expected such as cuda:0 or cpu");
      fail(path, d.error().message);
    }
    out = devices_[s] = *d;
  }
  void get(const Node& v, ir::DType& out, const Path& path) {
    const std::string_view s = as_string(v, path);
    if (const auto it = dtypes_.find(s); it != dtypes_.end()) {
      out = it->second;
      return;
    }
    const auto d = ir::dtype_from_name(s);
    if (!d) fail(path, "unknown dtype " + ir::quote_for_diagnostic(s) + " (expected a name such as float32)");
    out = dtypes_[s] = *d;
  }
  void get(const Node& v, ir::ParamType& out, const Path& path) {
    const std::string_view s = as_string(v, path);
    if (const auto it = param_types_.find(s); it != param_types_.end()) {
      out = it->second;
      return;
    }
    const auto t = ir::parse_param_type(s);
    if (!t) fail(path, "unknown parameter type " + ir::quote_for_diagnostic(s) + " (expected such as *fp32 or i32)");
    out = param_types_[s] = *t;
  }
  template <class E>
    requires std::is_enum_v<E>
  void get(const Node& v, E& out, const Path& path) {
    const std::string_view s = as_string(v, path);
    const auto e = enum_from_name<E>(s);
    if (!e)
      fail(path, "unknown " + std::string(EnumNames<E>::what) + " " + ir::quote_for_diagnostic(s) +
                     " (expected one of " + enum_choices<E>() + ")");
    out = *e;
  }

  template <class Id>
    requires requires { IdTable<Id>::table; }
  void get(const Node& v, Id& out, const Path& path) {
    constexpr Table wanted = IdTable<Id>::table;
    const std::string_view name = as_string(v, path);
    const auto it = scope_->names.find(name);
    if (it == scope_->names.end())
      fail(path, std::string("unknown ") + table_entry_name(wanted) + " " + ir::quote_for_diagnostic(name));
    if (it->second.table != wanted)
      fail(path, ir::quote_for_diagnostic(name) + " is a " + table_entry_name(it->second.table) + ", not a " +
                     table_entry_name(wanted));
    out.index = it->second.index;
  }

  template <class T>
  void get(const Node& v, std::optional<T>& out, const Path& path) {
    if (v.is(NodeKind::null)) {
      out.reset();
      return;
    }
    get(v, out.emplace(), path);
  }
  template <class T>
  void get(const Node& v, std::vector<T>& out, const Path& path) {
    const Node& a = as_array(v, path);
    out.clear();
    out.reserve(a.size);  // reserved, not touched: a bad element stops before the rest costs memory
    for_each_element(a, [&](std::size_t i, const Node& e) { get(e, out.emplace_back(), path[i]); });
  }

  void get(const Node& v, ir::View& out, const Path& path) {
    ObjectReader r(v, path);
    get(r.required("sizes"), out.sizes, path / "sizes");
    get(r.required("strides"), out.strides, path / "strides");
    get(r.required("offset"), out.offset, path / "offset");
    r.finish();
  }
  void get(const Node& v, ir::BufferArg& out, const Path& path) {
    ObjectReader r(v, path);
    get(r.required("buffer"), out.buffer, path / "buffer");
    if (const Node* view = r.optional("view")) get(*view, out.view, path / "view");
    r.finish();
  }

  static constexpr std::string_view arg_tags = "buffer, expr, int, float, bool, string, none, device, dtype, list";

  void get(const Node& v, ir::Arg& out, const Path& path) {
    as_object(v, path);
    // {"buffer": name[, "view": ...]} is a BufferArg; every other argument
    // is an object with one key, its tag.
    const Node* first_key = v.first();
    if (v.size >= 1 && (first_key->text() == "buffer" || (v.size == 2 && first_key->first()->next()->text() == "buffer"))) {
      ir::BufferArg b;
      get(v, b, path);
      out.value = std::move(b);
      return;
    }
    if (v.size != 1)
      fail(path, "expected an argument: an object with one key of " + std::string(arg_tags) + ", got " +
                     std::to_string(v.size) + " keys");
    const std::string_view tag = first_key->text();
    const Node& x = *first_key->first();
    if (tag == "expr") {
      out.value = expression(x, path / "expr");
    } else if (tag == "int") {
      out.value = as_int64(x, path / "int");
    } else if (tag == "float") {
      out.value = floating(x, path / "float");
    } else if (tag == "bool") {
      bool b = false;
      get(x, b, path / "bool");
      out.value = b;
    } else if (tag == "string") {
      out.value = std::string(as_string(x, path / "string"));
    } else if (tag == "none") {
      if (!x.is(NodeKind::null)) fail(path / "none", std::string("expected null, got ") + describe(x));
      out.value = ir::None{};
    } else if (tag == "device") {
      ir::Device d;
      get(x, d, path / "device");
      out.value = d;
    } else if (tag == "dtype") {
      ir::DType d{};
      get(x, d, path / "dtype");
      out.value = d;
    } else if (tag == "list") {
      ir::ArgList list;
      get(x, list.items, path / "list");
      out.value = std::move(list);
    } else {
      fail(path, "unknown argument key " + ir::quote_for_diagnostic(tag) + " (expected one of " +
                     std::string(arg_tags) + ")");
    }
  }

  static double floating(const Node& v, const Path& path) {
    switch (v.kind) {
      case NodeKind::number: return v.number;
      case NodeKind::int64: return static_cast<double>(v.int64);
      case NodeKind::uint64: return static_cast<double>(v.uint64);
      case NodeKind::string: {
        const std::string_view text = v.text();
        if (text == "inf") return std::numeric_limits<double>::infinity();
        if (text == "-inf") return -std::numeric_limits<double>::infinity();
        if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
        fail(path, "expected a number or one of \"inf\", \"-inf\", \"nan\", got the string " +
                       ir::quote_for_diagnostic(text));
      }
      default: fail(path, std::string("expected a number, got ") + describe(v));
    }
  }

  /// Small value records (ir::is_record): every field required.
  template <class T>
    requires ir::is_record<T>
  void get(const Node& v, T& out, const Path& path) {
    ObjectReader r(v, path);
    boost::hana::for_each(boost::hana::accessors<T>(), [&](auto accessor) {
      const char* name = boost::hana::to<const char*>(boost::hana::first(accessor));
      get(r.required(name), boost::hana::second(accessor)(out), path / name);
    });
    r.finish();
  }
  void get(const Node& v, ir::KeyStep& out, const Path& path) {
    ObjectReader r(v, path);
    get(r.required("kind"), out.kind, path / "kind");
    if (const Node* x = r.optional("value")) get(*x, out.value, path / "value");
    if (const Node* x = r.optional("key")) get(*x, out.key, path / "key");
    r.finish();
  }
  void get(const Node& v, ir::LaunchGrid& out, const Path& path) {
    ObjectReader r(v, path);
    const std::string_view kind = as_string(r.required("kind"), path / "kind");
    if (kind == "launcher") {
      out = ir::LauncherGrid{};
    } else if (kind == "explicit") {
      ir::ExplicitGrid g;
      get(r.required("x"), g.x, path / "x");
      get(r.required("y"), g.y, path / "y");
      get(r.required("z"), g.z, path / "z");
      out = g;
    } else if (kind == "typed") {
      ir::TypedGrid g;
      get(r.required("type"), g.type, path / "type");
      get(r.required("numels"), g.numels, path / "numels");
      get(r.required("block"), g.block, path / "block");
      out = std::move(g);
    } else {
      fail(path / "kind",
           "unknown grid kind " + ir::quote_for_diagnostic(kind) + " (expected one of launcher, explicit, typed)");
    }
    r.finish();
  }
  void get(const Node& v, ir::KernelSource& out, const Path& path) {
    ObjectReader r(v, path);
    const std::string_view kind = as_string(r.required("kind"), path / "kind");
    if (kind == "text") {
      ir::SourceText t;
      get(r.required("text"), t.text, path / "text");
      out = std::move(t);
    } else if (kind == "binary") {
      ir::BinaryRef b;
      get(r.required("path"), b.path, path / "path");
      get(r.required("entry"), b.entry, path / "entry");
      out = std::move(b);
    } else {
      fail(path / "kind",
           "unknown kernel source kind " + ir::quote_for_diagnostic(kind) + " (expected text or binary)");
    }
    r.finish();
  }
  void get(const Node& v, ir::KernelMetadata& out, const Path& path) {
    ObjectReader r(v, path);
    if (const Node* x = r.optional("constants")) get(*x, out.constants, path / "constants");
    if (const Node* x = r.optional("num_warps")) get(*x, out.num_warps, path / "num_warps");
    if (const Node* x = r.optional("num_stages")) get(*x, out.num_stages, path / "num_stages");
    if (const Node* x = r.optional("shared_memory_bytes"))
      get(*x, out.shared_memory_bytes, path / "shared_memory_bytes");
    if (const Node* x = r.optional("grid_type")) get(*x, out.grid_type, path / "grid_type");
    if (const Node* x = r.optional("block")) get(*x, out.block, path / "block");
    r.finish();
  }

  template <class T>
  using TextMap = boost::unordered_flat_map<std::string_view, T, StringHash>;

  expr::Context& ctx_;
  const JsonLoadOptions& options_;
  Scope* scope_ = nullptr;
  TextMap<std::optional<std::size_t>> kinds_;
  TextMap<ir::Device> devices_;
  TextMap<ir::DType> dtypes_;
  TextMap<ir::ParamType> param_types_;
};

}  // namespace detail::json

inline void to_json(const ir::Program& program, std::string& out, const JsonOptions& options) {
  // Roughly what a line and a table entry take, so that the string seldom
  // grows more than once.
  out.reserve(out.size() + 128 * (ir::total_lines(program) + program.buffers.size()) + 256);
  detail::json::Encoder encoder(out, options);
  encoder.document(program);
}

inline std::string to_json(const ir::Program& program, const JsonOptions& options) {
  std::string out;
  to_json(program, out, options);
  return out;
}

namespace detail::json {

/// The tape of `text`, or why it is not a JSON document.
inline Result<TapeBuilder> parse_tape(std::string_view text, std::size_t max_depth) {
  bj::parse_options parse_options;
  parse_options.max_depth = max_depth;
  bj::basic_parser<TapeBuilder> parser(parse_options, text);
  bj::error_code ec;
  const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
  if (ec) {
    const std::string where = text_position(text, consumed);
    if (parser.handler().duplicate_key)
      return Diagnostic{"invalid JSON at " + where + ": duplicate key " +
                        ir::quote_for_diagnostic(*parser.handler().duplicate_key) + " in the object ending here"};
    if (ec == bj::error::too_deep)
      return Diagnostic{"invalid JSON at " + where + ": nesting deeper than " + std::to_string(max_depth) +
                        " levels (JsonLoadOptions::max_depth)"};
    return Diagnostic{"invalid JSON at " + where + ": " + ec.message()};
  }
  if (consumed != text.size())
    return Diagnostic{"invalid JSON at " + text_position(text, consumed) + ": unexpected text after the document"};
  return std::move(parser.handler());
}

}  // namespace detail::json

inline Result<ir::Program> program_from_json(std::string_view text, const JsonLoadOptions& options) {
  using namespace detail::json;
  if (text.size() > options.max_bytes)
    return Diagnostic{"input is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                      std::to_string(options.max_bytes) + " (JsonLoadOptions::max_bytes)"};
  try {
    Result<TapeBuilder> tape = parse_tape(text, options.max_depth);
    if (!tape) return tape.error();
    std::shared_ptr<expr::Context> context = options.context ? options.context : std::make_shared<expr::Context>();
    ir::Program program{"program", context};
    Decoder decoder(*context, options);
    decoder.document(tape.value().nodes.front(), program);
    return program;
  } catch (LoadError& e) {
    return Diagnostic{std::move(e.message)};
  } catch (const std::bad_alloc&) {
    // A reservation sized by the document (an array's length) can exceed
    // what the machine has.
    return Diagnostic{"out of memory while loading a " + std::to_string(text.size()) + "-byte document"};
  }
}

}  // namespace wrapir::io
