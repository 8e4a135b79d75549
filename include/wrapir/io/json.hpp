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
/// context given through `JsonLoadOptions::context` (contexts only grow), but
/// no new symbol unless the text is a whole JSON document with the right
/// `"format"` and `"version"`.
///
/// Parsing uses Boost.JSON's conforming parser (`boost::json::basic_parser`)
/// with a handler that builds a compact tape of the document (16 bytes per
/// value, strings viewing the input) instead of a `boost::json::value` tree,
/// rejects duplicate keys, and re-reads floating-point numbers with
/// `std::from_chars` (Boost 1.81 rounds some of them wrongly). When the
/// document's `"format"` and `"version"` and a program's tables come first
/// (as `to_json` writes them), each table entry and each line is decoded as
/// soon as its object is complete and leaves the tape, so that a large
/// document never sits in memory twice; the result and the first diagnostic
/// are those of any other member order (`detail::json::Decoder` says why).
/// Names are resolved through hash maps and each distinct expression string
/// is parsed once per program. Writing appends to one `std::string` with a
/// small escaping writer (no DOM).

#include <wrapir/detail/utf8.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/parse.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/detail/reflect_hana.hpp>
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
  /// it (expressions compare by identity within one context). A program
  /// whose symbols this context lacks is decoded only once the whole
  /// document has parsed (new symbols are made only then), which keeps all
  /// of its lines on the parser's tape at once.
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

// ---- records ---------------------------------------------------------------
//
// A reflected record (ir::Reflected: View, BufferArg, KeyStep, KernelMetadata,
// ExplicitGrid, ...) is an object with one member per field, named as the
// field, in declaration order, written and read by `Encoder::put` and
// `Decoder::get` through the reflection: no record has a codec of its own.
// Every field is written and required, except `std::optional` ones, which
// are left out when empty and may be absent or null (as in lines), and the
// fields a record lists below.

/// The field names of the reflected `T`, at compile time.
template <class T>
inline constexpr auto reflected_names = [] {
  std::array<std::string_view, ir::field_count<T>> names{};
  std::size_t i = 0;
  boost::hana::for_each(boost::hana::accessors<T>(), [&](auto accessor) {
    names[i++] = boost::hana::to<const char*>(boost::hana::first(accessor));
  });
  return names;
}();

/// The fields of `T` that keep their default value when absent; unless
/// `written`, they are also left out when equal to it.
template <class T>
struct JsonDefaults {
  static constexpr std::array<std::string_view, 0> fields{};
  static constexpr bool written = false;
};
template <>
struct JsonDefaults<ir::KeyStep> {
  static constexpr std::array<std::string_view, 2> fields{"value", "key"};
  static constexpr bool written = false;
};
template <>
struct JsonDefaults<ir::KernelMetadata> {
  static constexpr std::array<std::string_view, 2> fields{"constants", "block"};
  static constexpr bool written = false;
};
template <>
struct JsonDefaults<ir::CommBufferInfo> {
  static constexpr std::array<std::string_view, 1> fields{"type"};
  static constexpr bool written = true;
};

/// A record as value-initialised: what its defaulted fields are compared with.
template <class T>
inline const T json_default_record{};

template <class T>
constexpr bool json_defaulted(std::string_view field) noexcept {
  for (std::string_view f : JsonDefaults<T>::fields)
    if (f == field) return true;
  return false;
}

template <class T>
constexpr bool json_defaults_are_fields() {
  for (std::string_view f : JsonDefaults<T>::fields) {
    bool found = false;
    for (std::string_view name : reflected_names<T>) found = found || name == f;
    if (!found) return false;
  }
  return true;
}

/// Variants of records (a launch grid, a kernel source) are one object: a
/// `"kind"` member that names the alternative, then its record's fields.
template <class T>
inline constexpr std::string_view json_kind{};
template <>
inline constexpr std::string_view json_kind<ir::LauncherGrid> = "launcher";
template <>
inline constexpr std::string_view json_kind<ir::ExplicitGrid> = "explicit";
template <>
inline constexpr std::string_view json_kind<ir::TypedGrid> = "typed";
template <>
inline constexpr std::string_view json_kind<ir::SourceText> = "text";
template <>
inline constexpr std::string_view json_kind<ir::BinaryRef> = "binary";

/// What a diagnostic calls the `"kind"` of a variant of records.
template <class V>
inline constexpr std::string_view json_variant_what{};
template <>
inline constexpr std::string_view json_variant_what<ir::LaunchGrid> = "grid kind";
template <>
inline constexpr std::string_view json_variant_what<ir::KernelSource> = "kernel source kind";

template <class V>
struct is_record_variant : std::false_type {};
template <class... Ts>
struct is_record_variant<boost::variant2::variant<Ts...>>
    : std::bool_constant<((ir::Reflected<Ts> && !json_kind<Ts>.empty()) && ...)> {};

/// "a or b", "one of a, b, c": the kinds of a variant of records.
template <class... Ts>
std::string json_kind_choices(boost::mp11::mp_list<Ts...>) {
  constexpr std::array<std::string_view, sizeof...(Ts)> kinds{json_kind<Ts>...};
  std::string out = kinds.size() == 2 ? "" : "one of ";
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i) out += kinds.size() == 2 ? " or " : ", ";
    out += kinds[i];
  }
  return out;
}

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
      put(*b.comm);
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
  /// A reflected record: one member per field (see `JsonDefaults`).
  template <ir::Reflected T>
  void put(const T& record) {
    w_.begin_object();
    put_fields(record);
    w_.end_object();
  }
  /// A variant of records: `"kind"`, then the alternative's fields.
  template <class V>
    requires is_record_variant<V>::value
  void put(const V& variant) {
    w_.begin_object();
    boost::variant2::visit(
        [&](const auto& record) {
          w_.key("kind");
          w_.plain_string(json_kind<std::remove_cvref_t<decltype(record)>>);
          put_fields(record);
        },
        variant);
    w_.end_object();
  }
  template <class T>
  void put_fields(const T& record) {
    boost::hana::for_each(boost::hana::accessors<T>(), [&](auto accessor) {
      using FieldName = std::remove_cvref_t<decltype(boost::hana::first(accessor))>;
      constexpr std::string_view name = boost::hana::to<const char*>(FieldName{});
      const auto& field = boost::hana::second(accessor)(record);
      if constexpr (is_optional_v<std::remove_cvref_t<decltype(field)>>) {
        if (!field) return;
      } else if constexpr (json_defaulted<T>(name) && !JsonDefaults<T>::written) {
        if (field == boost::hana::second(accessor)(json_default_record<T>)) return;
      }
      w_.key(name);
      put(field);
    });
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

/// Fails the load (`wrapir::detail::fail`, caught by `program_from_json`)
/// with a diagnostic that starts with the JSON path `where`.
[[noreturn]] inline void fail(const Path& where, std::string why) {
  wrapir::detail::fail(where.text() + ": " + std::move(why));
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

/// Reads `n` bytes (1 to 8) at `p` as one word.
inline std::uint64_t load_word(const char* p, std::size_t n) noexcept {
  std::uint64_t w = 0;
  if (n >= 8) std::memcpy(&w, p, 8);
  else if (n >= 4) {
    std::uint32_t lo = 0, hi = 0;  // two loads that overlap cover every byte
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    w = lo | std::uint64_t{hi} << 32;
  } else {
    w = static_cast<unsigned char>(p[0]) | std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8 |
        std::uint64_t{static_cast<unsigned char>(p[n - 1])} << 16;
  }
  return w;
}

/// The high and low halves of the 128-bit product of `a` and `b`, added
/// up bitwise: a multiplication that, unlike a 64-bit one, loses bits, so
/// that no word of input can be chosen to undo what came before it.
inline std::uint64_t folded_product(std::uint64_t a, std::uint64_t b) noexcept {
  __extension__ typedef unsigned __int128 wide;
  const wide product = static_cast<wide>(a) * b;
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}

/// The secret of `StringHash`: the addresses of a global and of a stack
/// variable, which address-space layout randomisation moves from run to
/// run, so that a document cannot be written whose names all collide.
struct StringHashSeed {
  std::uint64_t first;
  std::uint64_t second;
};
inline const StringHashSeed string_hash_seed = [] {
  const int on_the_stack = 0;
  const std::uint64_t addresses = reinterpret_cast<std::uintptr_t>(&string_hash_seed) ^
                                  (std::uint64_t{reinterpret_cast<std::uintptr_t>(&on_the_stack)} << 17);
  const std::uint64_t first = folded_product(addresses ^ 0xa0761d6478bd642fULL, 0xe7037ed1a0b428dbULL);
  return StringHashSeed{first | 1, folded_product(first ^ 0x8ebc6af09c88c6e3ULL, 0x589965cc75374cc3ULL) | 1};
}();

/// Hash of the short strings the loader looks up (names, expressions,
/// dtypes), inline and sixteen bytes at a time (wyhash's scheme): most of
/// those strings take one multiplication.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    const char* p = s.data();
    std::size_t n = s.size();
    const StringHashSeed& seed = string_hash_seed;
    // The length times a secret: xored in plainly, it would undo a change
    // in the last byte of a string one byte longer.
    std::uint64_t state = seed.first ^ (n * seed.second);
    std::uint64_t a = 0, b = 0;
    if (n <= 8) {
      if (n) a = load_word(p, n);
    } else if (n <= 16) {
      a = load_word(p, 8);
      b = load_word(p + n - 8, 8);  // overlapping the first word
    } else {
      for (; n > 16; p += 16, n -= 16)
        state = folded_product(load_word(p, 8) ^ seed.second, load_word(p + 8, 8) ^ state);
      a = load_word(p + n - 16, 8);  // the last sixteen bytes, overlapping those before
      b = load_word(p + n - 8, 8);
    }
    // One product mixes the last (or only) sixteen bytes; the table mixes
    // the hash further (it does not claim to avalanche).
    return folded_product(a ^ seed.second, b ^ state);
  }
};

/// Equality of those strings, inline: they are mostly shorter than 16 bytes.
struct StringEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept {
    std::size_t n = a.size();
    if (n != b.size()) return false;
    if (n == 0) return true;
    const char* p = a.data();
    const char* q = b.data();
    for (; n > 8; p += 8, q += 8, n -= 8)
      if (load_word(p, 8) != load_word(q, 8)) return false;
    return load_word(p, n) == load_word(q, n);
  }
};

/// A name with its hash, as the names table keeps it: growing the table
/// rehashes without reading the names again from all over the input.
struct HashedName {
  std::string_view text;
  std::uint64_t hash;
  explicit HashedName(std::string_view name) noexcept : text(name), hash(StringHash{}(name)) {}
  HashedName(std::string_view name, std::uint64_t h) noexcept : text(name), hash(h) {}
};
struct HashedNameHash {
  using is_transparent = void;
  std::size_t operator()(const HashedName& n) const noexcept { return n.hash; }
};
struct HashedNameEqual {
  using is_transparent = void;
  bool operator()(const HashedName& a, const HashedName& b) const noexcept {
    return a.hash == b.hash && StringEqual{}(a.text, b.text);
  }
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
  /// For diagnostics.
  std::string_view program_name{};
  /// Unique among the scopes of a load, from 1.
  std::size_t serial = 0;
  /// The buffer table as read so far, and the entry after the last one that
  /// a lookup found: programs mostly name buffers for the first time in the
  /// order of their table.
  const std::vector<ir::BufferDecl>* buffers = nullptr;
  std::size_t next_buffer = 0;
  boost::unordered_flat_map<HashedName, Entry, HashedNameHash, HashedNameEqual> names;
  boost::unordered_flat_map<std::string_view, expr::Expr, StringHash, StringEqual> expressions;
};

/// A table of a program that its lines refer to: its key in the program
/// object and what its entries are.
struct LineTable {
  std::string_view key;
  Table table;
};
/// Those tables, in the order they are read: a program's names are
/// registered in this order, then the subgraphs' names, then the entries are
/// read in this order.
inline constexpr std::array<LineTable, 4> line_tables{{
    {"symbols", Table::symbol},
    {"buffers", Table::buffer},
    {"kernels", Table::kernel},
    {"pools", Table::pool},
}};

/// The shortest line, `{"kind":"X"}`, and the comma before the next one:
/// no more lines than a thirteenth of the input left can follow.
inline constexpr std::size_t min_line_bytes = 13;
/// How many lines of a streamed body are read before its length is
/// estimated (`body_capacity`).
inline constexpr std::size_t body_sample = 1024;

/// The capacity to give a streamed body that is full at `lines` lines.
/// Those lines took at least `read` bytes of input, the lines after the
/// first `body_sample / 2` of them at least `read_later` (0 when not known
/// yet), and at most `left` bytes follow them.
///
/// Doubling while small, then the count that the bytes per line so far
/// suggest for the rest of the input, plus an eighth. The body is usually
/// most of the document, so that one estimate fits it: growing by doubling
/// would touch twice its size in fresh memory and move it all. The bytes
/// per line are the least of those of all lines and of the later ones, as
/// the first lines of a program are often longer (kernel definitions). Never
/// more than the input left can hold, however little of it the positions
/// accounted for.
inline std::size_t body_capacity(std::size_t lines, std::size_t read, std::size_t read_later,
                                 std::size_t left) noexcept {
  const std::size_t most = lines + 1 + left / min_line_bytes;
  if (lines < body_sample) return std::min(std::max<std::size_t>(2 * lines, 16), most);
  double per_line = static_cast<double>(read) / static_cast<double>(lines);
  if (read_later != 0)
    per_line = std::min(per_line, static_cast<double>(read_later) / static_cast<double>(lines - body_sample / 2));
  per_line = std::max(per_line, static_cast<double>(min_line_bytes));
  const double estimate =
      (static_cast<double>(lines) + static_cast<double>(left) / per_line) * (1.0 + 1.0 / 8) + 64;
  // At most (lines + left / 13) * 9 / 8 + 64: no overflow.
  const auto estimated = static_cast<std::size_t>(estimate);
  return std::min(std::max(estimated, lines + lines / 8), most);
}

/// What reading ahead did in one load, for tests of it.
struct LoadStatistics {
  /// Table entries read while parsing.
  std::size_t entries_read_ahead = 0;
  /// Lines read while parsing.
  std::size_t lines_read_ahead = 0;
  /// The largest capacity given to a body read while parsing, before any
  /// capacity left unused was given back.
  std::size_t largest_body_capacity = 0;
};

/// A name that something read ahead refers to before its table: a line
/// naming a subgraph (subgraphs come after the body as `to_json` writes
/// them) or a symbol read from an input buffer (buffers come after symbols).
/// The final pass looks the name up, where it would have read it.
struct LaterName {
  std::size_t item;     // the line's index in the body, or the symbol's in its table
  std::size_t ordinal;  // which of the line's subgraph ids, in reading order
  std::string_view name;
};

/// What of a program was read while its document was still being parsed
/// (see `TapeBuilder` and `Decoder`): the first entries of its tables, in
/// the reading order, and the first lines of its body.
struct ReadAhead {
  Scope scope;
  /// How many tables of `line_tables`, from the first, were read whole.
  /// Of table `i`, the first `entries_read[i]` entries were read; the others
  /// stay on the tape for the final pass.
  std::size_t tables_read = 0;
  std::array<std::size_t, line_tables.size()> entries_read{};
  /// Which tables began: a table read ahead once is not read ahead again
  /// when its key repeats (the document is refused for that anyway).
  std::array<bool, line_tables.size()> tables_begun{};
  std::vector<ir::SymbolDecl> symbols;
  std::vector<ir::BufferDecl> buffers;
  std::vector<ir::KernelDecl> kernels;
  std::vector<ir::PoolDecl> pools;
  /// The buffers that symbols read ahead are read from (`SymbolDecl::source`).
  std::vector<LaterName> symbol_sources;
  /// The first lines of the body. Reading ahead stops at the first line
  /// that does not read (a name that comes later, or an error): that line
  /// and those after it stay on the tape, and the final pass reads them,
  /// reporting any error.
  bool body_begun = false;
  std::vector<ir::Line> body;
  std::vector<LaterName> graph_references;
  /// The input from the body's key to the end, and where the first
  /// `body_sample / 2` lines ended, for `body_capacity`.
  const char* start = nullptr;
  const char* end = nullptr;
  const char* half = nullptr;
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

/// Builds a program from a parsed document, in one pass over the tape
/// (`document`) that checks everything in a fixed order, so that the first
/// problem in that order is the one reported: per program, its members'
/// types, then the names of all its tables (`line_tables`, then the
/// subgraphs), then the tables' entries, the subgraphs, the inputs, the
/// lines and the outputs.
///
/// Most of a document is read earlier, though, while the parser is still in
/// it (`TapeBuilder` calls the `begin_`, `stream_` and `end_` functions): a
/// table entry or a line as soon as its object is complete, so that the
/// tape never holds them all. That reading ahead changes no result and no
/// diagnostic:
///  * reading a table or a body ahead stops at its first entry or line that
///    does not read (it names something that comes later, or it is wrong):
///    that one and those after it stay on the tape, and the final pass reads
///    them in order, reporting the failure if it is one. A table that stops
///    stops the tables after it, so that names are always registered in the
///    final pass's order;
///  * the exceptions are the names that come later in a document as
///    `to_json` writes it, which the final pass looks up in their place
///    (`LaterName`): the subgraphs that lines name, and the buffers that
///    symbols are read from;
///  * what reads ahead reads the same in the final pass, which only knows
///    more names: lookups that succeed find the same entries, and a name
///    that comes later twice is a duplicate that the final pass refuses
///    before it reads any entry;
///  * the only side effect whose order matters, making symbols in the
///    expression context, keeps the final pass's order: a program's symbols
///    are read ahead only when those of every program before it in the
///    document were (programs are read in preorder, their document order).
///    And none is made in a context that the caller gave, or before the
///    document showed its format and version: reading ahead only uses the
///    symbols that such a context has already.
class Decoder {
 public:
  Decoder(expr::Context& ctx, const JsonLoadOptions& options, LoadStatistics* statistics = nullptr)
      : ctx_(ctx), options_(options), statistics_(statistics) {}

  /// The final pass over the tape whose first node is `tape[0]`.
  void document(const Node* tape, ir::Program& out) {
    tape_ = tape;
    const Path path;
    ObjectReader r(tape[0], path);
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

  // ---- reading ahead, called by the parser -----------------------------------

  /// Table `table_index` of `line_tables` begins in the program at
  /// `tape[program_node]`, whose read-ahead so far is `ahead` (null before
  /// its symbols) and whose place among the programs of the document is
  /// `program_ordinal`. Returns the read-ahead its entries go to, or null
  /// when they stay on the tape.
  ReadAhead* begin_table(ReadAhead* ahead, std::size_t table_index, std::size_t program_node,
                         std::size_t program_ordinal) {
    if (table_index == 0) {
      if (ahead || program_ordinal != programs_read_ahead_) return nullptr;
      auto made = std::make_unique<ReadAhead>();
      made->scope.serial = ++scopes_;
      made->scope.buffers = &made->buffers;
      made->tables_begun[0] = true;
      ahead = made.get();
      read_ahead_.emplace(program_node, std::move(made));
      return ahead;
    }
    if (!ahead || ahead->tables_read != table_index || ahead->tables_begun[table_index]) return nullptr;
    ahead->tables_begun[table_index] = true;
    return ahead;
  }

  /// An entry of table `table_index` is complete on the tape. True when it
  /// was read (its nodes may go); false when it stays, and the rest of the
  /// table too.
  bool stream_entry(ReadAhead& ahead, std::size_t table_index, const Node& entry) {
    Scope* const enclosing = scope_;
    scope_ = &ahead.scope;
    const std::size_t index = ahead.entries_read[table_index];
    entry_ahead_ = &ahead;
    entry_index_ = index;
    const std::size_t sources = ahead.symbol_sources.size();
    const Path unused;  // diagnostics of reading ahead are dropped: the final pass makes them
    std::optional<std::string_view> registered;
    bool read = true;
    try {
      registered = register_name(entry, index, line_tables[table_index].table, unused);
      read_entry(table_index, entry, ahead, unused);
    } catch (wrapir::detail::Failure&) {
      if (registered) ahead.scope.names.erase(HashedName(*registered));  // never looked up: no line came in between
      unread_entry(table_index, index, ahead);
      ahead.symbol_sources.resize(sources);
      read = false;
    }
    entry_ahead_ = nullptr;
    scope_ = enclosing;
    if (read) {
      ++ahead.entries_read[table_index];
      if (statistics_) ++statistics_->entries_read_ahead;
    }
    return read;
  }

  /// Table `table_index`, whose first entries were read ahead, ends with
  /// `count` entries. Returns how many stay on the tape.
  std::size_t end_table(ReadAhead& ahead, std::size_t table_index, std::size_t count) {
    // A table begins once (`tables_begun`), so the entries read are entries
    // of this array, never more than it has.
    const std::size_t left = count - std::min(count, ahead.entries_read[table_index]);
    if (left == 0 && ahead.tables_read == table_index) {
      ahead.tables_read = table_index + 1;
      if (table_index == 0) ++programs_read_ahead_;  // every symbol made: the next program may make its own
    }
    return left;
  }

  /// The body begins, at `position` in the input that ends at `end`, in a
  /// program whose read-ahead is `ahead`. Returns the read-ahead its lines
  /// go to, or null when they stay on the tape (before the symbols, which
  /// expressions need, are read).
  static ReadAhead* begin_body(ReadAhead* ahead, const char* position, const char* end) {
    if (!ahead || ahead->tables_read == 0 || ahead->body_begun) return nullptr;
    ahead->body_begun = true;
    ahead->start = position;
    ahead->end = end;
    return ahead;
  }

  /// A line of a streamed body is complete on the tape; the input up to
  /// `position` at least was parsed. True when it was read (its nodes may
  /// go); false when it stays for the final pass, and the rest of the body
  /// too.
  bool stream_line(ReadAhead& ahead, const Node& line_node, const char* position) {
    if (ahead.body.size() == ahead.body.capacity()) reserve_body(ahead, position);
    const std::size_t index = ahead.body.size();
    const std::size_t references = ahead.graph_references.size();
    Scope* const enclosing = scope_;
    scope_ = &ahead.scope;
    line_ahead_ = &ahead;
    line_index_ = index;
    graph_ordinal_ = 0;
    bool read = true;
    try {
      line(line_node, ahead.body, Path{});
    } catch (wrapir::detail::Failure&) {
      if (ahead.body.size() > index) ahead.body.pop_back();  // what the line got to
      ahead.graph_references.resize(references);
      read = false;
    }
    line_ahead_ = nullptr;
    scope_ = enclosing;
    if (read && statistics_) ++statistics_->lines_read_ahead;
    return read;
  }

  /// A streamed body of `count` elements ends; returns how many of them stay
  /// on the tape.
  static std::size_t end_body(ReadAhead& ahead, std::size_t count) {
    const std::size_t left = count - std::min(count, ahead.body.size());
    // An estimate well above the count (the body was short next to what
    // followed it, or its lines got shorter) is given back.
    const std::size_t needed = ahead.body.size() + left;
    if (ahead.body.capacity() > needed + needed / 4 + 64) {
      std::vector<ir::Line> fitted;
      fitted.reserve(needed);
      std::move(ahead.body.begin(), ahead.body.end(), std::back_inserter(fitted));
      ahead.body = std::move(fitted);
    }
    return left;
  }

 private:
  /// Gives a streamed body that is full the capacity `body_capacity` says.
  void reserve_body(ReadAhead& ahead, const char* position) {
    const std::size_t lines = ahead.body.size();
    if (lines == body_sample / 2) ahead.half = position;
    auto bytes = [](const char* from, const char* to) {
      return from && to > from ? static_cast<std::size_t>(to - from) : std::size_t{0};
    };
    const std::size_t capacity = body_capacity(lines, bytes(ahead.start, position), bytes(ahead.half, position),
                                               bytes(position, ahead.end));
    ahead.body.reserve(capacity);
    if (statistics_) statistics_->largest_body_capacity = std::max(statistics_->largest_body_capacity, capacity);
  }

  /// Reads an entry of table `table_index` onto the end of that table in
  /// `out` (an `ir::Program` or a `ReadAhead`).
  template <class Tables>
  void read_entry(std::size_t table_index, const Node& entry, Tables& out, const Path& path) {
    switch (table_index) {
      case 0: return symbol(entry, out.symbols.emplace_back(), path);
      case 1: return buffer(entry, out.buffers.emplace_back(), path);
      case 2: return kernel(entry, out.kernels.emplace_back(), path);
      default: return pool(entry, out.pools.emplace_back(), path);
    }
  }
  /// Drops what `read_entry` left of entry `index` of table `table_index`,
  /// if anything.
  static void unread_entry(std::size_t table_index, std::size_t index, ReadAhead& ahead) {
    auto drop = [&](auto& entries) {
      if (entries.size() > index) entries.pop_back();
    };
    switch (table_index) {
      case 0: return drop(ahead.symbols);
      case 1: return drop(ahead.buffers);
      case 2: return drop(ahead.kernels);
      default: return drop(ahead.pools);
    }
  }

  // ---- programs --------------------------------------------------------------

  void program(const Node& v, ir::Program& out, const Path& path) {
    ObjectReader r(v, path);
    out.name = std::string(name_of(r.required("name"), path / "name", "program"));

    std::array<const Node*, line_tables.size()> tables{};
    for (std::size_t i = 0; i < tables.size(); ++i) tables[i] = optional_array(r, line_tables[i].key);
    const Node* inputs = optional_array(r, "inputs");
    const Node* body = optional_array(r, "body");
    const Node* outputs = optional_array(r, "outputs");
    const Node* subgraphs = optional_array(r, "subgraphs");
    r.finish();

    const auto found = read_ahead_.find(static_cast<std::size_t>(&v - tape_));
    ReadAhead* const ahead = found == read_ahead_.end() ? nullptr : found->second.get();
    Scope fresh;
    fresh.serial = ++scopes_;
    Scope& scope = ahead ? ahead->scope : fresh;
    scope.program_name = out.name;
    scope.buffers = &out.buffers;
    Scope* const enclosing = scope_;
    scope_ = &scope;

    // Every name first, so that references resolve whatever the order of
    // the tables; then the symbols, so that they exist with their
    // assumptions before any expression is parsed. The entries read ahead
    // did both already; the tape holds the others.
    std::array<std::size_t, line_tables.size()> first{};
    if (ahead) {
      first = ahead->entries_read;
      out.symbols = std::move(ahead->symbols);
      out.buffers = std::move(ahead->buffers);
      out.kernels = std::move(ahead->kernels);
      out.pools = std::move(ahead->pools);
    }
    std::size_t entries = scope.names.size() + (subgraphs ? subgraphs->size : 0);
    for (const Node* entries_left : tables) entries += entries_left ? entries_left->size : 0;
    scope.names.reserve(entries);
    for (std::size_t i = 0; i < tables.size(); ++i)
      register_names(tables[i], first[i], path / line_tables[i].key, line_tables[i].table);
    register_names(subgraphs, 0, path / "subgraphs", Table::subgraph);
    for (std::size_t i = 0; i < tables.size(); ++i) {
      const Path table_path = path / line_tables[i].key;
      switch (i) {
        case 0:
          if (ahead)
            for (const LaterName& source : ahead->symbol_sources)
              out.symbols[source.item].source->index =
                  index_of<Table::buffer>(source.name, table_path[source.item] / "source");
          table(tables[i], out.symbols, table_path,
                [&](const Node& e, ir::SymbolDecl& s, const Path& p) { symbol(e, s, p); });
          break;
        case 1:
          table(tables[i], out.buffers, table_path,
                [&](const Node& e, ir::BufferDecl& b, const Path& p) { buffer(e, b, p); });
          break;
        case 2:
          table(tables[i], out.kernels, table_path,
                [&](const Node& e, ir::KernelDecl& k, const Path& p) { kernel(e, k, p); });
          break;
        default:
          table(tables[i], out.pools, table_path,
                [&](const Node& e, ir::PoolDecl& pl, const Path& p) { pool(e, pl, p); });
      }
    }

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
      // The lines read ahead, then those left on the tape, from the first
      // that did not read then.
      std::size_t first_left = 0;
      if (ahead && ahead->body_begun) {
        out.body = std::move(ahead->body);
        first_left = out.body.size();
        resolve_graph_references(ahead->graph_references, out.body, body_path);
      }
      out.body.reserve(first_left + body->size);
      for_each_element(*body, [&](std::size_t i, const Node& e) { line(e, out.body, body_path[first_left + i]); });
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

  /// Registers the name of entry `index` of a table, at `path`; returns it.
  std::string_view register_name(const Node& e, std::size_t index, Table table, const Path& path) {
    ObjectReader entry(e, path);
    const Path name_path = path / "name";
    const std::string_view name = name_of(entry.required("name"), name_path, table_entry_name(table));
    const auto [it, inserted] =
        scope_->names.try_emplace(HashedName(name), Scope::Entry{table, static_cast<std::uint32_t>(index)});
    if (!inserted)
      fail(name_path, "duplicate name " + ir::quote_for_diagnostic(name) + ": already the name of " +
                          table_entry_name(it->second.table) + " " + std::to_string(it->second.index) +
                          " of program " + ir::quote_for_diagnostic(scope_->program_name));
    return name;
  }

  /// Registers the names of a table's entries on the tape, the first of
  /// which is entry `first` of the table.
  void register_names(const Node* entries, std::size_t first, const Path& path, Table table) {
    if (!entries) return;
    for_each_element(*entries,
                     [&](std::size_t i, const Node& e) { register_name(e, first + i, table, path[first + i]); });
  }

  /// Reads a table's entries on the tape onto the end of `out`, which holds
  /// the entries before them.
  template <class T, class F>
  void table(const Node* entries, std::vector<T>& out, const Path& path, F&& decode) {
    if (!entries) return;
    const std::size_t first = out.size();
    out.reserve(first + entries->size);
    for_each_element(*entries, [&](std::size_t i, const Node& e) { decode(e, out.emplace_back(), path[first + i]); });
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
    if (const Node* s = r.optional("source")) {
      // Buffers come after symbols as `to_json` writes them.
      if (entry_ahead_ && s->is(NodeKind::string) && !scope_->names.contains(HashedName(s->text()))) {
        out.source.emplace();
        entry_ahead_->symbol_sources.push_back(LaterName{entry_index_, 0, s->text()});
      } else {
        get(*s, out.source, path / "source");
      }
    }
    if (const Node* p = r.optional("path")) get(*p, out.path, path / "path");
    r.finish();
    // A context the caller gave gets new symbols only from the final pass,
    // once the document is known to be whole (`Decoder`).
    if (entry_ahead_ && options_.context && !ctx_.find_symbol(name)) throw wrapir::detail::Failure{};
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
    if (const Node* x = r.optional("comm")) get(*x, out.comm.emplace(), path / "comm");
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

  /// Decodes a line onto the end of `body`: made in place, as a `Line` made
  /// first would be zeroed whole.
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
      // Remembered only once parsed: a failure while reading ahead must
      // fail again in the final pass.
      if (const auto it = scope_->expressions.find(v.text()); it != scope_->expressions.end()) return it->second;
      const expr::Expr e = parse_expression(v.text(), path);
      scope_->expressions.emplace(v.text(), e);
      return e;
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
      const auto it = scope_->names.find(HashedName(name));
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
                       ir::quote_for_diagnostic(scope_->program_name) + " does not declare");
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
    const std::string_view name = as_string(v, path);
    if constexpr (std::is_same_v<Id, ir::GraphId>) {
      if (line_ahead_) {
        const std::size_t ordinal = graph_ordinal_++;
        if (!scope_->names.contains(HashedName(name))) {
          line_ahead_->graph_references.push_back(LaterName{line_index_, ordinal, name});
          return;
        }
      }
    }
    out.index = index_of<IdTable<Id>::table>(name, path);
  }

  /// The index of the entry of table `wanted` that `name` names.
  template <Table wanted>
  std::uint32_t index_of(std::string_view name, const Path& path) {
    const Scope::Entry* entry = find_name(name);
    if (!entry) fail(path, std::string("unknown ") + table_entry_name(wanted) + " " + ir::quote_for_diagnostic(name));
    if (entry->table != wanted)
      fail(path, ir::quote_for_diagnostic(name) + " is a " + table_entry_name(entry->table) + ", not a " +
                     table_entry_name(wanted));
    return entry->index;
  }

  /// Looks up the subgraphs that lines read ahead named, in the order of the
  /// lines and of their fields, and so the order the lines would have
  /// failed in.
  void resolve_graph_references(const std::vector<LaterName>& references, std::vector<ir::Line>& body,
                                const Path& body_path) {
    for (const LaterName& reference : references) {
      const Path line_path = body_path[reference.item];
      std::size_t ordinal = 0;
      auto resolve = [&](ir::GraphId& id, const Path& path) {
        if (ordinal++ == reference.ordinal) id.index = index_of<Table::subgraph>(reference.name, path);
      };
      auto each_field = [&](std::string_view name, auto& field) { each_graph_id(field, line_path / name, resolve); };
      std::visit([&](auto& ln) { ir::for_each_field(ln, each_field); }, body[reference.item]);
    }
  }
  /// Calls `f(id, path)` for each subgraph id in a field, in reading order.
  template <class F>
  static void each_graph_id(ir::GraphId& id, const Path& path, F& f) {
    f(id, path);
  }
  template <class T, class F>
  static void each_graph_id(std::optional<T>& field, const Path& path, F& f) {
    if (field) each_graph_id(*field, path, f);
  }
  template <class T, class F>
  static void each_graph_id(std::vector<T>& field, const Path& path, F& f) {
    for (std::size_t i = 0; i < field.size(); ++i) each_graph_id(field[i], path[i], f);
  }
  template <class T, class F>
  static void each_graph_id(T&, const Path&, F&) {}

  /// The entry `name` names in the current scope, if any. A large program's
  /// names table is mostly out of cache, and so is the text of its keys, so
  /// two guesses come first. Lines mostly name what the lines just before
  /// them named: the last lookups are kept by hash, with the text of that
  /// last mention, which is still in cache. And a buffer named for the first
  /// time is mostly the one after the last found (`Scope::next_buffer`).
  const Scope::Entry* find_name(std::string_view name) {
    Scope& scope = *scope_;
    const std::uint64_t h = StringHash{}(name);
    RecentName& recent = recent_names_[(h * 0x9e3779b97f4a7c15ULL) >> (64 - recent_name_bits)];
    if (recent.scope == scope.serial && StringEqual{}(std::string_view(recent.chars, recent.size), name))
      return &recent.entry;
    Scope::Entry entry{};
    if (scope.buffers && scope.next_buffer < scope.buffers->size() &&
        StringEqual{}((*scope.buffers)[scope.next_buffer].name, name)) {
      entry = Scope::Entry{Table::buffer, static_cast<std::uint32_t>(scope.next_buffer)};
    } else {
      const auto it = scope.names.find(HashedName(name, h));
      if (it == scope.names.end()) return nullptr;
      entry = it->second;
    }
    if (entry.table == Table::buffer && entry.index >= scope.next_buffer)
      scope.next_buffer = entry.index + std::size_t{1};
    recent = RecentName{name.data(), name.size(), scope.serial, entry};
    return &recent.entry;
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

  /// A reflected record: one member per field (see `JsonDefaults`).
  template <ir::Reflected T>
  void get(const Node& v, T& out, const Path& path) {
    ObjectReader r(v, path);
    get_fields(r, out, path);
    r.finish();
  }
  /// A variant of records: `"kind"`, then the alternative's fields.
  template <class V>
    requires is_record_variant<V>::value
  void get(const Node& v, V& out, const Path& path) {
    using Alternatives = boost::mp11::mp_rename<V, boost::mp11::mp_list>;
    ObjectReader r(v, path);
    const std::string_view kind = as_string(r.required("kind"), path / "kind");
    bool known = false;
    boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, Alternatives>>([&](auto alternative) {
      using T = typename decltype(alternative)::type;
      if (known || kind != json_kind<T>) return;
      known = true;
      T record{};
      get_fields(r, record, path);
      out = std::move(record);
    });
    if (!known)
      fail(path / "kind", "unknown " + std::string(json_variant_what<V>) + " " + ir::quote_for_diagnostic(kind) +
                              " (expected " + json_kind_choices(Alternatives{}) + ")");
    r.finish();
  }
  template <class T>
  void get_fields(ObjectReader& r, T& out, const Path& path) {
    static_assert(json_defaults_are_fields<T>(), "JsonDefaults names a field that the record does not have");
    boost::hana::for_each(boost::hana::accessors<T>(), [&](auto accessor) {
      using FieldName = std::remove_cvref_t<decltype(boost::hana::first(accessor))>;
      constexpr std::string_view name = boost::hana::to<const char*>(FieldName{});
      auto& field = boost::hana::second(accessor)(out);
      if constexpr (is_optional_v<std::remove_cvref_t<decltype(field)>> || json_defaulted<T>(name)) {
        if (const Node* x = r.optional(name)) get(*x, field, path / name);
      } else {
        get(r.required(name), field, path / name);
      }
    });
  }

  template <class T>
  using TextMap = boost::unordered_flat_map<std::string_view, T, StringHash, StringEqual>;

  expr::Context& ctx_;
  const JsonLoadOptions& options_;
  LoadStatistics* statistics_;
  Scope* scope_ = nullptr;
  /// While the parser is in the document: the read-ahead of the table
  /// entry being read ahead, if one is, and its index in its table; that of
  /// the line being read ahead, if one is, its index in the body and how
  /// many subgraph ids it named so far.
  ReadAhead* entry_ahead_ = nullptr;
  std::size_t entry_index_ = 0;
  ReadAhead* line_ahead_ = nullptr;
  std::size_t line_index_ = 0;
  std::size_t graph_ordinal_ = 0;
  TextMap<std::optional<std::size_t>> kinds_;
  TextMap<ir::Device> devices_;
  TextMap<ir::DType> dtypes_;
  TextMap<ir::ParamType> param_types_;
  struct RecentName {
    const char* chars = nullptr;
    std::size_t size = 0;
    std::size_t scope = 0;  // `Scope::serial`; 0 for none
    Scope::Entry entry{};
  };
  static constexpr unsigned recent_name_bits = 8;
  std::array<RecentName, std::size_t{1} << recent_name_bits> recent_names_{};
  std::size_t scopes_ = 0;  // scopes made
  const Node* tape_ = nullptr;
  /// What was read ahead, by the tape index of the program's object.
  boost::unordered_flat_map<std::size_t, std::unique_ptr<ReadAhead>> read_ahead_;
  /// How many programs, the first of the document, had all their symbols
  /// made ahead.
  std::size_t programs_read_ahead_ = 0;
};

/// The nodes of a document in document order: an array that doubles when
/// full, so that adding a node, once per JSON value, is a few instructions.
class Tape {
 public:
  explicit Tape(std::size_t capacity)
      : nodes_(std::make_unique_for_overwrite<Node[]>(capacity)), capacity_(capacity) {}

  /// A new node at the end, kind and contents zero.
  Node& push(NodeKind kind) {
    if (size_ == capacity_) [[unlikely]]
      grow();
    Node& n = nodes_[size_++];
    n.uint64 = 0;
    n.size = 0;
    n.kind = kind;
    return n;
  }
  /// Drops the nodes from `size` on.
  void truncate(std::size_t size) noexcept { size_ = size; }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] const Node* data() const noexcept { return nodes_.get(); }
  Node& operator[](std::size_t i) noexcept { return nodes_[i]; }
  Node& back() noexcept { return nodes_[size_ - 1]; }

 private:
  [[gnu::noinline]] void grow() {
    const std::size_t capacity = std::max<std::size_t>(2 * capacity_, 16);
    auto grown = std::make_unique_for_overwrite<Node[]>(capacity);
    std::copy(nodes_.get(), nodes_.get() + size_, grown.get());
    nodes_ = std::move(grown);
    capacity_ = capacity;
  }

  std::unique_ptr<Node[]> nodes_;
  std::size_t size_ = 0;
  std::size_t capacity_;
};

/// Builds the tape of a document from the events of Boost.JSON's
/// conforming parser (`boost::json::basic_parser`), which checks the syntax,
/// the UTF-8, the escapes and the nesting depth. Two checks are added:
/// duplicate keys in an object are an error, and floating-point numbers are
/// read again from their text with `std::from_chars`, which rounds
/// correctly (Boost 1.81's own conversion is off by one unit in the last
/// place for many inputs).
///
/// A tape is about 16 bytes per value, several times smaller and faster
/// to build than a `boost::json::value` tree. Most of a document is table
/// entries and lines, though, and they do not stay: in a program whose
/// tables come in their reading order, symbols first (as `to_json` writes
/// them), the decoder takes each entry and each line as soon as its object
/// is complete, while it is still in cache, and its nodes are dropped. The
/// tape then holds little more than one entry or line at a time, instead of
/// some 20 nodes for each, memory that would be fresh pages on every load.
class TapeBuilder {
 public:
  static constexpr std::size_t max_object_size = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t max_array_size = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t max_key_size = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t max_string_size = std::numeric_limits<std::uint32_t>::max();

  // About one value per 7 bytes of JSON as wrapir writes it. Reserved, not
  // touched: when entries and lines are read ahead, only the first pages are.
  TapeBuilder(std::string_view input, Decoder& decoder)
      : nodes(input.size() / 7 + 16), input_(input), decoder_(&decoder) {}

  Tape nodes;
  /// Where strings with escapes live; a deque, so they never move.
  std::deque<std::string> escaped;
  /// Set when parsing stopped at a duplicate key.
  std::optional<std::string> duplicate_key{};

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_object_begin(bj::error_code&) { return open(NodeKind::object); }
  bool on_object_end(std::size_t n, bj::error_code& ec) {
    const Open object = close(n);
    if (const auto dup = find_duplicate(nodes[object.index])) {
      duplicate_key = std::string(*dup);
      ec = bj::error::syntax;
      return false;
    }
    if (object.role == Role::entry) {
      Open& table = open_.back();
      if (decoder_->stream_entry(*table.ahead, table.table, nodes[object.index])) nodes.truncate(object.index);
      else table.active = top_active_ = false;  // this entry and the rest stay
    } else if (object.role == Role::line) {
      Open& body = open_.back();
      if (decoder_->stream_line(*body.ahead, nodes[object.index], position_)) nodes.truncate(object.index);
      else body.active = top_active_ = false;  // this line and the rest stay
    }
    return true;
  }
  bool on_array_begin(bj::error_code&) { return open(NodeKind::array); }
  bool on_array_end(std::size_t n, bj::error_code&) {
    const Open array = close(n);
    // The array keeps the elements left for the final pass.
    if (array.role == Role::table && array.ahead)
      nodes[array.index].size = static_cast<std::uint32_t>(decoder_->end_table(*array.ahead, array.table, n));
    else if (array.role == Role::body && array.ahead)
      nodes[array.index].size = static_cast<std::uint32_t>(Decoder::end_body(*array.ahead, n));
    return true;
  }
  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) { return part(s); }
  bool on_key(bj::string_view s, std::size_t, bj::error_code&) {
    text(NodeKind::key, s);
    after_key(nodes.back().text());
    return true;
  }
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
  /// What an open container is to reading ahead.
  enum class Role : std::uint8_t {
    other,
    document,   // the root object
    program,    // its "program", or an element of a program's "subgraphs"
    subgraphs,  // a program's "subgraphs"
    table,      // one of a program's `line_tables`
    entry,      // an object in a table read ahead
    body,       // a program's "body"
    line,       // an object in a body read ahead
  };
  struct Open {
    std::size_t index = 0;  // of the container's node
    Role role = Role::other;
    std::uint8_t table = 0;     // a table: its place in `line_tables`
    bool active = false;        // a table or body: its elements are read ahead
    std::size_t ordinal = 0;    // a program: its place among the programs, in document order
    ReadAhead* ahead = nullptr;  // a program: what of it is read ahead; a table or body: the same, once read ahead
  };

  Node& push(NodeKind kind) {
    if (kind != NodeKind::key) {
      next_role_ = Role::other;
      if (top_active_ && kind != NodeKind::object) not_an_object();
    }
    return nodes.push(kind);
  }
  /// A value that is not an object in a table or body read ahead: the final
  /// pass refuses it. Reading ahead stops here.
  void not_an_object() { open_.back().active = top_active_ = false; }
  bool open(NodeKind kind) {
    const Role role = role_of(kind);
    const auto table = static_cast<std::uint8_t>(next_table_);
    const std::size_t index = nodes.size();
    push(kind);
    // Made in place: a copy of a record built field by field stalls on
    // store forwarding, once per container.
    Open& container = open_.emplace_back();
    container.index = index;
    container.role = role;
    if (role == Role::program) {
      container.ordinal = programs_++;
      if (open_.size() == 2 && open_[0].role == Role::document) may_read_ahead_ = document_is_wrapir(index);
    } else if (role == Role::table) {
      Open& program = open_[open_.size() - 2];
      container.table = table;
      container.ahead =
          may_read_ahead_ ? decoder_->begin_table(program.ahead, table, program.index, program.ordinal) : nullptr;
      container.active = container.ahead != nullptr;
      if (container.ahead) program.ahead = container.ahead;
    } else if (role == Role::body) {
      container.ahead = Decoder::begin_body(open_[open_.size() - 2].ahead, position_, input_.data() + input_.size());
      container.active = container.ahead != nullptr;
    }
    top_active_ = container.active;
    return true;
  }
  /// Whether the root object's members before the program, whose object
  /// begins at `tape[program_node]`, hold the right "format" and "version".
  /// Reading ahead makes symbols, and should they be made in a context
  /// that the caller gave, the document had better be a wrapir program.
  [[nodiscard]] bool document_is_wrapir(std::size_t program_node) noexcept {
    bool format = false, version = false;
    // Key, value, key, value, ..., then the key "program".
    for (std::size_t k = 1; k + 1 < program_node;) {
      const Node& key = nodes[k];
      const Node& value = nodes[k + 1];
      if (same_text(key.text(), "format"))
        format = value.is(NodeKind::string) && same_text(value.text(), json_format_name);
      else if (same_text(key.text(), "version"))
        version = value.is(NodeKind::int64) && value.int64 == json_format_version;
      k = static_cast<std::size_t>(value.next() - nodes.data());
    }
    return format && version;
  }
  /// Completes the innermost open container.
  Open close(std::size_t count) {
    const Open container = open_.back();
    open_.pop_back();
    top_active_ = !open_.empty() && open_.back().active;
    nodes[container.index].span = nodes.size() - container.index - 1;
    nodes[container.index].size = static_cast<std::uint32_t>(count);
    return container;
  }
  /// The role of a container that opens now.
  [[nodiscard]] Role role_of(NodeKind kind) const noexcept {
    if (open_.empty()) return kind == NodeKind::object ? Role::document : Role::other;
    const Open& parent = open_.back();
    if (kind == NodeKind::object) {
      if (next_role_ == Role::program || parent.role == Role::subgraphs) return Role::program;
      if (parent.active) return parent.role == Role::table ? Role::entry : Role::line;
      return Role::other;
    }
    return next_role_ == Role::table || next_role_ == Role::body || next_role_ == Role::subgraphs ? next_role_
                                                                                                 : Role::other;
  }
  /// Notes the role of the value of member `key` of the innermost open object.
  void after_key(std::string_view key) noexcept {
    next_role_ = Role::other;
    switch (open_.back().role) {
      case Role::document:
        if (same_text(key, "program")) next_role_ = Role::program;
        return;
      case Role::program:
        if (same_text(key, "body")) {
          next_role_ = Role::body;
        } else if (same_text(key, "subgraphs")) {
          next_role_ = Role::subgraphs;
        } else {
          for (std::size_t i = 0; i < line_tables.size(); ++i)
            if (same_text(key, line_tables[i].key)) {
              next_role_ = Role::table;
              next_table_ = i;
            }
        }
        return;
      default: return;
    }
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
      // Somewhere after the last position known, and at least as long as
      // its text unescaped, with its quotes (and a key its colon).
      const std::size_t least = piece.size() + (kind == NodeKind::key ? 3 : 2);
      const auto left = static_cast<std::size_t>(input_.data() + input_.size() - position_);
      position_ += std::min(least, left);
    } else {
      position_ = piece.data() + piece.size();
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
  Decoder* decoder_;
  std::vector<Open> open_;
  bool top_active_ = false;       // `open_.back().active`
  Role next_role_ = Role::other;  // of the value after the last key
  std::size_t next_table_ = 0;    // when that is a table
  std::size_t programs_ = 0;      // program objects begun
  // Where the input was parsed to, at least: the end of the last string
  // read from it, or past that by the strings with escapes read since.
  const char* position_ = input_.data();
  bool may_read_ahead_ = false;  // the document's format and version came first, and were right
  std::string parts_;
  bool in_parts_ = false;
  std::string number_parts_;
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

/// The tape of `text`, or why it is not a JSON document. `decoder` takes
/// the lines it can as they are parsed.
inline Result<TapeBuilder> parse_tape(std::string_view text, std::size_t max_depth, Decoder& decoder) {
  bj::parse_options parse_options;
  parse_options.max_depth = max_depth;
  bj::basic_parser<TapeBuilder> parser(parse_options, text, decoder);
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

/// `program_from_json`, telling `statistics` (when not null) what reading
/// ahead did.
inline Result<ir::Program> load_program(std::string_view text, const JsonLoadOptions& options,
                                        LoadStatistics* statistics) {
  if (text.size() > options.max_bytes)
    return Diagnostic{"input is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                      std::to_string(options.max_bytes) + " (JsonLoadOptions::max_bytes)"};
  try {
    return wrapir::detail::catch_failure([&] {
      std::shared_ptr<expr::Context> context = options.context ? options.context : std::make_shared<expr::Context>();
      Decoder decoder(*context, options, statistics);
      Result<TapeBuilder> tape = parse_tape(text, options.max_depth, decoder);
      if (!tape) wrapir::detail::fail(tape.error());
      ir::Program program{"program", context};
      decoder.document(tape.value().nodes.data(), program);
      return program;
    });
  } catch (const std::bad_alloc&) {
    // A reservation sized by the document (an array's length) can exceed
    // what the machine has.
    return Diagnostic{"out of memory while loading a " + std::to_string(text.size()) + "-byte document"};
  }
}

}  // namespace detail::json

inline Result<ir::Program> program_from_json(std::string_view text, const JsonLoadOptions& options) {
  return detail::json::load_program(text, options, nullptr);
}

}  // namespace wrapir::io
