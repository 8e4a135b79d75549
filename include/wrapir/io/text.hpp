#pragma once
/// \file
/// The textual form of a wrapir program (parser): reads what
/// `text::to_text` (emit/text.hpp) writes. The grammar is in
/// docs/text-form.md.
///
/// `parse_program_text(to_text(p), {.context = p.context}) == p`, and
/// `to_text(parse_program_text(t))` is stable: printing what was parsed and
/// parsing and printing again gives the same bytes.
///
/// One pass, line by line: a program's parts must come in the order the
/// printer writes them (symbols, buffers, kernels, pools, subgraphs, inputs,
/// body, outputs), so every reference points backwards, except the `source`
/// of a symbol, which names a buffer declared after it and is resolved when
/// the buffer table ends. Body lines are read generically: the kind name
/// selects the line struct (`ir::line_kind_from_name`, then an mp11 index
/// dispatch over `ir::LineKinds`) and each reflected field is read by the
/// codec of its type, so a new line kind needs no code here.
///
/// Checks made while reading: every name is a valid name (`ir::check_name`,
/// operator paths `ir::check_operator_name`) and unique within its program
/// (across its tables and subgraphs); every reference names an entry of the
/// program's own tables; every symbol an expression mentions is declared in
/// the program's symbol table (symbols are created from that table, with
/// their assumption and unbacked flag, before any expression is read).
/// What the JSON loader refuses, the text form refuses too: the input must
/// be UTF-8 text (the first byte that is not is reported with its line and
/// column), every string must still be UTF-8 once its `\xHH` escapes are
/// decoded, and a Comment's text must be one line (no control characters
/// other than tab), so that every program read here can be written as JSON
/// and printed by the emitters.
/// Whether the program makes sense beyond that (buffer roles, liveness,
/// argument counts) is the verifier's business.
///
/// Robustness: bad input is a `Diagnostic` "line L, column C: what went
/// wrong", never a crash, a hang or a half-built program. Input longer than
/// `max_length` is refused up front; subgraphs and argument lists may nest
/// `max_depth` levels, expressions `max_expression_depth`. Time is linear
/// in the input (plus the canonical constructors of the expressions).
/// Parsing into an existing context may leave symbols in it when the text
/// turns out to be invalid (as `expr::parse` does).

#include <wrapir/detail/utf8.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/text.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/parse.hpp>
#include <wrapir/io/detail/expression_budget.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/reflect.hpp>
#include <wrapir/ir/small_vector.hpp>
#include <wrapir/ir/symbol.hpp>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::text {

struct TextParseOptions {
  /// The context the program's expressions are built in; a fresh one when
  /// null. Parsing printed text into the printed program's context gives a
  /// program `==` to it.
  std::shared_ptr<expr::Context> context{};
  /// How deep subgraphs and argument lists (`[[...]]`) may nest.
  std::size_t max_depth = 64;
  /// Longer input is refused before it is read.
  std::size_t max_length = std::size_t{64} << 20;
  /// The nesting limit of each expression (`expr::ParseOptions::max_depth`).
  std::size_t max_expression_depth = 256;
  /// The work all the expressions of the text may take together, in node
  /// lookups; absent: 2^21 plus one per byte of text
  /// (io/detail/expression_budget.hpp).
  std::optional<std::uint64_t> max_expression_lookups{};
};

/// The program `text` denotes, or a diagnostic "line L, column C: ...".
[[nodiscard]] Result<ir::Program> parse_program_text(std::string_view text, TextParseOptions options = {});

// ---------------------------------------------------------------------------
// Implementation

namespace detail {

/// A parse error on its way out (`wrapir::detail::Failure`), caught by
/// `parse_program_text`.
[[noreturn]] inline void fail_at(std::size_t line, std::size_t column, const std::string& message) {
  wrapir::detail::fail("line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + message);
}

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

template <class V>
using NameMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

constexpr bool is_ident_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_ident_char(char c) noexcept { return is_ident_start(c) || is_digit(c); }

/// Characters that end a name token. Anything else (`;`, quotes, dots,
/// non-ASCII bytes) is taken into the token, so that a hostile name is
/// reported whole as an invalid name rather than as a stray character.
constexpr bool ends_name(char c) noexcept {
  switch (c) {
    case ' ': case '\t': case ',': case '=': case '[': case ']': case '(': case ')':
    case '{': case '}': case '<': case '>': case ':': return true;
    default: return false;
  }
}

/// Identifiers an expression may contain besides symbols.
[[nodiscard]] inline bool is_expression_word(std::string_view word) noexcept {
  if (word == "True" || word == "False" || word == "if" || word == "else") return true;
  for (const auto& f : expr::detail::parsing::parse_functions)
    if (f.name == word) return true;
  return false;
}

/// The sections of a program, in the order they must come.
enum class Section : std::uint8_t { symbols, buffers, kernels, pools, subgraphs, inputs, body, outputs };

/// A symbol's `source=%buffer`, resolved when the buffer table is complete.
struct PendingSource {
  std::size_t symbol_index;
  std::string buffer;
  std::size_t line, column;
};

/// A program being read, with the lookup tables of its names.
struct Frame {
  explicit Frame(ir::Program p, std::size_t line = 0) : program(std::move(p)), header_line(line) {}

  ir::Program program;
  std::size_t header_line = 0;
  Section section = Section::symbols;
  bool inputs_seen = false;
  bool outputs_seen = false;
  NameMap<expr::Expr> symbols;
  NameMap<std::uint32_t> buffers, kernels, pools, subgraphs;
  /// Every name of the program and what it names: names are unique across
  /// the tables and subgraphs of one program.
  NameMap<std::string_view> names;
  std::vector<PendingSource> pending_sources;
};

/// One attribute `name=value` of a table entry.
template <class F>
inline constexpr bool is_std_optional = false;
template <class F>
inline constexpr bool is_std_optional<std::optional<F>> = true;
template <class F>
inline constexpr bool is_std_optional<ir::OptionalBox<F>> = true;

struct Attribute {
  std::string_view name;
  bool required;
  std::function<void()> read;
};

/// Reads the values of one line. The overloads of `read` mirror those of
/// `Writer::write` (emit/text.hpp); they are members so that they see each
/// other whatever their order.
class Reader {
 public:
  Reader(std::string_view line, std::size_t line_no, std::size_t pos, Frame& frame, expr::Context& ctx,
         const TextParseOptions& options, io::detail::ExpressionBudget& budget) noexcept
      : line_(line), line_no_(line_no), pos_(pos), frame_(frame), ctx_(ctx), options_(options), budget_(budget) {}

  // ---- low-level -----------------------------------------------------------

  [[noreturn]] void fail(std::size_t at, const std::string& message) const { fail_at(line_no_, at + 1, message); }

  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  void set_pos(std::size_t pos) noexcept { pos_ = pos; }
  [[nodiscard]] std::string_view line() const noexcept { return line_; }

  void skip_space() noexcept {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
  }
  [[nodiscard]] bool at_end() noexcept {
    skip_space();
    return pos_ >= line_.size();
  }
  [[nodiscard]] char peek() const noexcept { return pos_ < line_.size() ? line_[pos_] : '\0'; }

  /// What the text at the cursor is, for "found ..." messages.
  [[nodiscard]] std::string found() const {
    if (pos_ >= line_.size()) return "end of line";
    std::size_t stop = pos_ + 1;
    while (stop < line_.size() && stop - pos_ < 24 && line_[stop] != ' ') ++stop;
    return ir::quote_for_diagnostic(line_.substr(pos_, stop - pos_));
  }

  void expect(char c, std::string_view where) {
    skip_space();
    if (peek() != c) fail(pos_, "expected '" + std::string(1, c) + "' " + std::string(where) + ", found " + found());
    ++pos_;
  }

  void expect_end(std::string_view after) {
    if (!at_end()) fail(pos_, "unexpected " + found() + " after " + std::string(after));
  }

  /// An identifier `[A-Za-z_][A-Za-z0-9_]*` at the cursor, possibly empty.
  std::string_view word() {
    skip_space();
    const std::size_t start = pos_;
    if (pos_ < line_.size() && is_ident_start(line_[pos_]))
      while (pos_ < line_.size() && is_ident_char(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }

  /// Whether the word `w` stands at the cursor (not followed by more
  /// identifier characters); consumes it when it does.
  bool accept_word(std::string_view w) {
    skip_space();
    if (line_.substr(pos_, w.size()) != w) return false;
    const std::size_t after = pos_ + w.size();
    if (after < line_.size() && is_ident_char(line_[after])) return false;
    pos_ = after;
    return true;
  }

  /// A run of characters up to a delimiter (see `ends_name`), possibly empty.
  std::string_view name_token() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < line_.size() && !ends_name(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }

  /// A name that `check_name` accepts, for a `what` ("buffer", ...).
  std::string_view checked_name(std::string_view what) {
    const std::size_t at = (skip_space(), pos_);
    const std::string_view name = name_token();
    if (name.empty()) fail(at, "expected a " + std::string(what) + " name, found " + found());
    if (auto err = ir::check_name(name, what)) fail(at, *err);
    return name;
  }

  // ---- references ----------------------------------------------------------

  void read(ir::BufferId& id) { id.index = read_ref('%', frame_.buffers, "buffer"); }
  void read(ir::KernelId& id) { id.index = read_ref('@', frame_.kernels, "kernel"); }
  void read(ir::PoolId& id) { id.index = read_ref('$', frame_.pools, "pool"); }
  void read(ir::GraphId& id) { id.index = read_ref('^', frame_.subgraphs, "subgraph"); }

  // ---- scalars -------------------------------------------------------------

  /// An atomic expression (a symbol or an integer) or a parenthesised one.
  void read(expr::Expr& e) {
    skip_space();
    const std::size_t start = pos_;
    std::string_view text;
    if (peek() == '(') {
      std::size_t depth = 0, i = pos_;
      for (; i < line_.size(); ++i) {
        const char c = line_[i];
        if (c == '(') {
          ++depth;
        } else if (c == ')') {
          if (--depth == 0) break;
        } else if (c == '"' || c == '#') {
          fail(i, "unexpected '" + std::string(1, c) + "' in an expression");
        }
      }
      if (i == line_.size()) fail(start, "unbalanced '(' in an expression: missing ')'");
      text = line_.substr(start, i + 1 - start);
      pos_ = i + 1;
    } else {
      while (pos_ < line_.size() && is_ident_char(line_[pos_])) ++pos_;
      text = line_.substr(start, pos_ - start);
      if (text.empty())
        fail(start, "expected an expression (a symbol, an integer or a parenthesised expression), found " + found());
    }
    check_symbols(text, start);
    expr::ParseOptions parse_options;
    parse_options.max_depth = options_.max_expression_depth;
    parse_options.max_length = text.size();
    Result<expr::Expr> parsed = expr::Expr{};
    try {
      parsed = budget_.parse(ctx_, text, parse_options);
    } catch (const expr::Error& err) {
      fail(start, std::string("invalid expression: ") + err.what());
    }
    if (!parsed) fail(start + parsed.error().column.value_or(0), "invalid expression: " + parsed.error().message);
    e = *parsed;
  }

  void read(bool& b) {
    const std::size_t at = (skip_space(), pos_);
    if (accept_word("true")) b = true;
    else if (accept_word("false")) b = false;
    else fail(at, "expected true or false, found " + found());
  }

  void read(std::uint32_t& v) { v = read_integer<std::uint32_t>("a non-negative 32-bit integer"); }
  void read(std::int64_t& v) { v = read_integer<std::int64_t>("a 64-bit integer"); }

  void read(double& v) {
    const std::size_t at = (skip_space(), pos_);
    const std::string_view token = number_token();
    if (!parse_double(token, v))
      fail(at, "expected a float such as 1.0, 2.5e-3, inf or nan, found " + found_token(token));
  }

  void read(std::string& s) { s = read_string(); }

  void read(ir::Name& n) { n.text = std::string(checked_name("identifier")); }

  void read(ir::OpName& n) {
    const std::size_t at = (skip_space(), pos_);
    const std::string_view name = name_token();
    if (name.empty()) fail(at, "expected an operator name such as aten.mm.default, found " + found());
    if (auto err = ir::check_operator_name(name)) fail(at, *err);
    n.text = std::string(name);
  }

  void read(ir::Device& d) {
    const std::size_t at = (skip_space(), pos_);
    while (pos_ < line_.size() && (is_ident_char(line_[pos_]) || line_[pos_] == ':')) ++pos_;
    const std::string_view token = line_.substr(at, pos_ - at);
    if (token.empty()) fail(at, "expected a device such as cuda:0 or cpu, found " + found());
    Result<ir::Device> parsed = ir::parse_device(token);
    if (!parsed) fail(at + parsed.error().column.value_or(0), parsed.error().message);
    d = *parsed;
  }

  void read(ir::ParamType& t) {
    const std::size_t at = (skip_space(), pos_);
    while (pos_ < line_.size() && (is_ident_char(line_[pos_]) || line_[pos_] == '*')) ++pos_;
    const std::string_view token = line_.substr(at, pos_ - at);
    const auto parsed = ir::parse_param_type(token);
    if (!parsed)
      fail(at, "expected a parameter type such as *fp32 or i32, found " + found_token(token));
    t = *parsed;
  }

  template <NamedEnum E>
  void read(E& e) {
    const std::size_t at = (skip_space(), pos_);
    const std::string_view token = name_token();
    const auto value = enum_from_name<E>(token);
    if (!value)
      fail(at, "unknown " + std::string(EnumTraits<E>::what) + " " + found_token(token) + ", expected one of " +
                   enum_names<E>());
    e = *value;
  }

  // ---- arguments -----------------------------------------------------------

  void read(ir::Arg& a) {
    skip_space();
    const std::size_t at = pos_;
    const char c = peek();
    if (c == '%') {
      ir::BufferArg b;
      read(b);
      a = ir::Arg{std::move(b)};
    } else if (c == '#') {
      ++pos_;
      expr::Expr e;
      read(e);
      a = ir::Arg{e};
    } else if (c == '"') {
      a = ir::Arg{read_string()};
    } else if (c == '[') {
      if (++depth_ > options_.max_depth)
        fail(at, "argument lists nest deeper than " + std::to_string(options_.max_depth) + " levels");
      ir::ArgList list;
      read(list.items);
      --depth_;
      a = ir::Arg{std::move(list)};
    } else if (c == '-' || is_digit(c)) {
      const std::string_view token = number_token();
      if (token.find_first_of(".eEin") != std::string_view::npos) {
        double v = 0;
        if (!parse_double(token, v)) fail(at, "invalid float " + found_token(token));
        a = ir::Arg{v};
      } else {
        a = ir::Arg{parse_integer<std::int64_t>(token, at, "a 64-bit integer")};
      }
    } else if (accept_word("none")) {
      a = ir::Arg{ir::None{}};
    } else if (accept_word("true")) {
      a = ir::Arg{true};
    } else if (accept_word("false")) {
      a = ir::Arg{false};
    } else if (accept_word("inf")) {
      a = ir::Arg{std::numeric_limits<double>::infinity()};
    } else if (accept_word("nan")) {
      a = ir::Arg{std::numeric_limits<double>::quiet_NaN()};
    } else if (accept_word("device")) {
      expect('(', "after 'device'");
      ir::Device d;
      read(d);
      expect(')', "after the device");
      a = ir::Arg{d};
    } else if (accept_word("dtype")) {
      expect('(', "after 'dtype'");
      ir::DType d{};
      read(d);
      expect(')', "after the dtype");
      a = ir::Arg{d};
    } else {
      std::string message = "expected an argument (none, %buffer, #expression, a number, true, false, a string, "
                            "device(...), dtype(...) or a list), found " + found();
      if (is_ident_start(c)) message += "; a symbolic integer is written #" + std::string(name_token());
      fail(at, message);
    }
  }

  void read(ir::NamedArg& a) { read_pair(a.name, a.value, "keyword argument"); }
  void read(ir::NamedBuffer& b) { read_pair(b.name, b.buffer, "output"); }
  void read(ir::NamedExpr& n) { read_pair(n.name, n.value, "numel"); }
  void read(ir::BlockSize& b) { read_pair(b.name, b.value, "block size"); }

  void read(ir::BufferArg& b) {
    read(b.buffer);
    if (peek() == '<') {
      b.view.emplace();
      read_record(*b.view);
    } else {
      b.view.reset();
    }
  }

  void read(ir::ArgSlice& s) {
    read(s.start);
    expect(':', "between the start and the stop of a slice");
    read(s.stop);
  }

  void read(ir::KeyStep& step) {
    skip_space();
    if (peek() == '{') {
      read_record(step);
      return;
    }
    step = ir::KeyStep{};
    read(step.kind);
    if (key_step_takes_value(step.kind)) {
      expect('(', "after the key step");
      read(step.value);
      expect(')', "after the key step's value");
    } else if (key_step_takes_key(step.kind)) {
      expect('(', "after the key step");
      skip_space();
      step.key = read_string();
      expect(')', "after the key");
    } else if (peek() == '(') {
      fail(pos_, "key step '" + std::string(ir::key_step_kind_name(step.kind)) + "' takes no argument");
    }
  }

  void read(ir::LaunchGrid& g) {
    skip_space();
    const std::size_t at = pos_;
    if (accept_word("launcher")) {
      g = ir::LauncherGrid{};
    } else if (line_.substr(pos_, 8) == "explicit") {
      ir::ExplicitGrid explicit_grid;
      read_record(explicit_grid);
      g = explicit_grid;
    } else if (line_.substr(pos_, 5) == "typed") {
      ir::TypedGrid typed;
      read_record(typed);
      g = std::move(typed);
    } else {
      fail(at, "expected a launch grid (launcher, explicit{x=..., y=..., z=...} or typed{type=..., numels=[...], "
               "block=[...]}), found " + found());
    }
  }

  void read(ir::KernelSource& s) {
    skip_space();
    if (peek() == '"') {
      s = ir::SourceText{read_string()};
    } else if (line_.substr(pos_, 6) == "binary") {
      ir::BinaryRef binary;
      read_record(binary);
      s = std::move(binary);
    } else {
      fail(pos_, "expected a kernel source (a string or binary{path=\"...\", entry=\"...\"}), found " + found());
    }
  }

  template <Record T>
  void read(T& v) {
    read_record(v);
  }

  template <class T>
  void read(std::optional<T>& o) {
    if (accept_word("none")) {
      o.reset();
    } else {
      o.emplace();
      read(*o);
    }
  }
  template <class T>
  void read(ir::Box<T>& b) {
    read(*b);
  }
  template <class T>
  void read(ir::OptionalBox<T>& o) {
    if (accept_word("none")) {
      o.reset();
    } else {
      read(o.emplace());
    }
  }

  template <class T>
  void read(ir::VectorBox<T>& items) {
    std::vector<T> read_items;
    read(read_items);
    items = std::move(read_items);
  }
  template <class T, std::size_t N>
  void read(ir::SmallVector<T, N>& items) {
    read_list(items);
  }
  template <class T>
  void read(std::vector<T>& items) {
    read_list(items);
  }
  // `[a, b, ...]` into a vector-like `items`.
  template <class Items>
  void read_list(Items& items) {
    items.clear();
    expect('[', "to open a list");
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    while (true) {
      items.emplace_back();
      read(items.back());
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return;
      }
      fail(pos_, "expected ',' or ']' in a list, found " + found());
    }
  }

  // ---- compound ------------------------------------------------------------

  /// `Kind field=value ...`: the fields of `T`, each present once, in order.
  /// An optional field may be left out (absent), as in JSON: text written
  /// before a kind gained an optional field still reads.
  template <ir::LineKind T>
  T read_line() {
    static const std::vector<std::string_view> names = ir::field_names<T>();
    T line{};
    ir::for_each_field(line, [&](std::string_view name, auto& field) {
      if constexpr (is_std_optional<std::remove_cvref_t<decltype(field)>>) {
        if (!next_field_is(name)) return;
      }
      read_field_name(name, T::kind, names);
      read(field);
    });
    if (!at_end()) {
      const std::size_t at = pos_;
      const std::string_view w = word();
      if (!w.empty() && peek() == '=') {
        for (std::string_view f : names)
          if (f == w) fail(at, "field '" + std::string(w) + "' of " + std::string(T::kind) + " is given twice");
        fail(at, unknown_field(w, T::kind, names));
      }
      pos_ = at;
      fail(at, "unexpected " + found() + " after the last field of " + std::string(T::kind));
    }
    return line;
  }

  template <Record T>
  void read_record(T& v) {
    using R = RecordSyntax<T>;
    skip_space();
    const std::size_t at = pos_;
    if (!R::prefix.empty() && !accept_word(R::prefix))
      fail(at, "expected '" + std::string(R::prefix) + std::string(1, R::open) + "', found " + found());
    if (peek() != R::open)
      fail(pos_, "expected '" + std::string(1, R::open) + "' to open " + std::string(R::what) + ", found " + found());
    ++pos_;
    static const std::vector<std::string_view> names = ir::field_names<T>();
    bool first = true;
    for_each_record_field(v, [&](std::string_view name, auto& field, std::size_t) {
      using F = std::remove_cvref_t<decltype(field)>;
      skip_space();
      // An optional field (as in lines) or a list the syntax omits when
      // empty may be absent: the field that follows, or the end of the
      // record, comes instead.
      bool omissible = is_std_optional<F>;
      if constexpr (requires { field.clear(); }) omissible = omissible || omitted_when_empty<T>(name);
      if (omissible) {
        const std::size_t at = pos_;
        bool present = false;
        if (first || peek() == ',') {
          if (!first) ++pos_;
          present = next_field_is(name);
        }
        pos_ = at;
        if (!present) {
          field = F{};
          return;
        }
      }
      if (peek() == R::close) fail(pos_, "missing field '" + std::string(name) + "' of " + std::string(R::what));
      if (!first) {
        if (peek() != ',')
          fail(pos_, "expected ',' between fields of " + std::string(R::what) + ", found " + found());
        ++pos_;
      }
      first = false;
      read_field_name(name, R::what, names);
      read(field);
    });
    skip_space();
    if (peek() == ',') {
      const std::size_t at = pos_;
      ++pos_;
      skip_space();
      const std::size_t field_at = pos_;
      const std::string_view w = word();
      for (std::string_view f : names)
        if (f == w)
          fail(field_at, "field '" + std::string(w) + "' of " + std::string(R::what) +
                             " is out of order or given twice (fields are written in declaration order)");
      fail(at, "too many fields in " + std::string(R::what) + ": expected '" + std::string(1, R::close) + "'");
    }
    if (peek() != R::close)
      fail(pos_, "expected '" + std::string(1, R::close) + "' to close " + std::string(R::what) + ", found " + found());
    ++pos_;
  }

  /// Reads `name=value` attributes in any order, each at most once, until
  /// the end of the line.
  template <std::size_t N>
  void read_attributes(std::string_view what, const std::array<Attribute, N>& attributes) {
    std::array<bool, N> seen{};
    while (!at_end()) {
      const std::size_t at = pos_;
      const std::string_view key = word();
      std::size_t i = 0;
      while (i < N && attributes[i].name != key) ++i;
      if (key.empty() || i == N) {
        std::string known;
        for (const Attribute& a : attributes) known += (known.empty() ? "" : ", ") + std::string(a.name);
        fail(at, key.empty() ? "expected an attribute name=value of " + std::string(what) + ", found " + found()
                             : "unknown attribute '" + std::string(key) + "' of " + std::string(what) +
                                   "; expected one of " + known);
      }
      if (seen[i]) fail(at, "attribute '" + std::string(key) + "' of " + std::string(what) + " is given twice");
      seen[i] = true;
      skip_space();
      if (peek() != '=') fail(pos_, "expected '=' after '" + std::string(key) + "', found " + found());
      ++pos_;
      attributes[i].read();
    }
    for (std::size_t i = 0; i < N; ++i)
      if (attributes[i].required && !seen[i])
        fail(pos_, "missing attribute '" + std::string(attributes[i].name) + "' of " + std::string(what));
  }

  std::string read_string() {
    skip_space();
    const std::size_t start = pos_;
    if (peek() != '"') fail(pos_, "expected a string in double quotes, found " + found());
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= line_.size()) fail(start, "unterminated string: missing closing '\"'");
      const char c = line_[pos_];
      const auto u = static_cast<unsigned char>(c);
      if (c == '"') {
        ++pos_;
        // `\xHH` escapes must not smuggle in what the source may not hold:
        // JSON and Python strings are UTF-8 text.
        if (!wrapir::detail::is_valid_utf8(out))
          fail(start, "the string is not valid UTF-8 once its \\x escapes are decoded; strings hold UTF-8 text");
        return out;
      }
      if (c == '\\') {
        const char e = pos_ + 1 < line_.size() ? line_[pos_ + 1] : '\0';
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case 'x': {
            const int hi = pos_ + 2 < line_.size() ? hex_digit(line_[pos_ + 2]) : -1;
            const int lo = pos_ + 3 < line_.size() ? hex_digit(line_[pos_ + 3]) : -1;
            if (hi < 0 || lo < 0) fail(pos_, "invalid escape: \\x takes two hexadecimal digits");
            out += static_cast<char>(hi * 16 + lo);
            pos_ += 2;
            break;
          }
          default:
            fail(pos_, "invalid escape " + ir::quote_for_diagnostic(line_.substr(pos_, 2)) +
                           " in a string; use \\n \\t \\r \\\" \\\\ or \\xHH");
        }
        pos_ += 2;
        continue;
      }
      if (u < 0x20 || u == 0x7f) fail(pos_, "control character in a string; write it as \\xHH");
      out += c;
      ++pos_;
    }
  }

 private:
  template <class Map>
  std::uint32_t read_ref(char sigil, const Map& map, std::string_view what) {
    skip_space();
    const std::size_t at = pos_;
    if (peek() != sigil)
      fail(at, "expected a " + std::string(what) + " reference " + std::string(1, sigil) + "name, found " + found());
    ++pos_;
    const std::string_view name = name_token();
    if (name.empty()) fail(at, "expected a " + std::string(what) + " name after '" + std::string(1, sigil) + "'");
    if (auto err = ir::check_name(name, what)) fail(at + 1, *err);
    const auto it = map.find(name);
    if (it == map.end())
      fail(at, "unknown " + std::string(what) + " " +
                   ir::quote_for_diagnostic(std::string(1, sigil) + std::string(name)) +
                   (sigil == '^' ? " (subgraphs must be defined before the lines that use them)" : ""));
    return it->second;
  }

  template <class V>
  void read_pair(ir::Name& name, V& value, std::string_view what) {
    name.text = std::string(checked_name(what));
    skip_space();
    if (peek() != '=') fail(pos_, "expected '=' after the " + std::string(what) + " name, found " + found());
    ++pos_;
    read(value);
  }

  /// Whether the next token is `name=` (reads nothing).
  bool next_field_is(std::string_view name) {
    const std::size_t at = pos_;
    skip_space();
    bool found_it = false;
    if (!at_end() && word() == name) {
      skip_space();
      found_it = peek() == '=';
    }
    pos_ = at;
    return found_it;
  }

  void read_field_name(std::string_view expected, std::string_view owner, const std::vector<std::string_view>& all) {
    skip_space();
    const std::size_t at = pos_;
    if (at_end()) fail(at, "missing field '" + std::string(expected) + "' of " + std::string(owner));
    const std::string_view w = word();
    if (w != expected) {
      bool known = false;
      for (std::string_view f : all) known = known || f == w;
      if (w.empty())
        fail(at, "expected field '" + std::string(expected) + "' of " + std::string(owner) + ", found " + found());
      if (known)
        fail(at, "field '" + std::string(w) + "' of " + std::string(owner) + " is out of order: expected '" +
                     std::string(expected) + "' here (fields are written in declaration order)");
      fail(at, unknown_field(w, owner, all));
    }
    skip_space();
    if (peek() != '=') fail(pos_, "expected '=' after field '" + std::string(expected) + "', found " + found());
    ++pos_;
  }

  static std::string unknown_field(std::string_view w, std::string_view owner,
                                   const std::vector<std::string_view>& all) {
    std::string message = "unknown field '" + std::string(w) + "' of " + std::string(owner) + "; its fields are: ";
    for (std::size_t i = 0; i < all.size(); ++i) message += (i ? ", " : "") + std::string(all[i]);
    if (all.empty()) message += "(none)";
    return message;
  }

  void check_symbols(std::string_view text, std::size_t start) {
    for (std::size_t i = 0; i < text.size();) {
      const char c = text[i];
      if (is_digit(c)) {
        while (i < text.size() && is_ident_char(text[i])) ++i;
      } else if (is_ident_start(c)) {
        std::size_t j = i;
        while (j < text.size() && is_ident_char(text[j])) ++j;
        const std::string_view ident = text.substr(i, j - i);
        if (!is_expression_word(ident) && !frame_.symbols.contains(ident))
          fail(start + i, "undeclared symbol " + ir::quote_for_diagnostic(ident) + " in an expression of program " +
                              ir::quote_for_diagnostic(frame_.program.name) + ": declare it with a 'symbol' line");
        i = j;
      } else {
        ++i;
      }
    }
  }

  /// A number-like token: an optional '-', then letters, digits, '_', '.',
  /// and '+'/'-' right after an exponent's 'e'.
  std::string_view number_token() {
    skip_space();
    const std::size_t start = pos_;
    if (peek() == '-') ++pos_;
    while (pos_ < line_.size()) {
      const char c = line_[pos_];
      if (is_ident_char(c) || c == '.') ++pos_;
      else if ((c == '+' || c == '-') && pos_ > start && (line_[pos_ - 1] == 'e' || line_[pos_ - 1] == 'E')) ++pos_;
      else break;
    }
    return line_.substr(start, pos_ - start);
  }

  [[nodiscard]] std::string found_token(std::string_view token) const {
    return token.empty() ? found() : ir::quote_for_diagnostic(token);
  }

  static bool parse_double(std::string_view token, double& v) {
    if (token == "inf") v = std::numeric_limits<double>::infinity();
    else if (token == "-inf") v = -std::numeric_limits<double>::infinity();
    else if (token == "nan") v = std::numeric_limits<double>::quiet_NaN();
    else if (token == "-nan") v = -std::numeric_limits<double>::quiet_NaN();
    else {
      // Digits, '.', an exponent: nothing from_chars would read as a word
      // (infinity, nan(...)), and a '.' or exponent is required.
      bool marked = false;
      for (char c : token) {
        if (c == '.' || c == 'e' || c == 'E') marked = true;
        else if (!is_digit(c) && c != '-' && c != '+') return false;
      }
      if (!marked || token.empty()) return false;
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
      return ec == std::errc{} && end == token.data() + token.size();
    }
    return true;
  }

  template <class I>
  I parse_integer(std::string_view token, std::size_t at, std::string_view what) const {
    I v{};
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec == std::errc::result_out_of_range)
      fail(at, "integer " + found_token(token) + " is out of range: expected " + std::string(what));
    if (ec != std::errc{} || end != token.data() + token.size() || token.empty())
      fail(at, "expected " + std::string(what) + ", found " + found_token(token));
    return v;
  }

  template <class I>
  I read_integer(std::string_view what) {
    const std::size_t at = (skip_space(), pos_);
    return parse_integer<I>(number_token(), at, what);
  }

  static int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  std::string_view line_;
  std::size_t line_no_;
  std::size_t pos_;
  Frame& frame_;
  expr::Context& ctx_;
  const TextParseOptions& options_;
  io::detail::ExpressionBudget& budget_;  // shared by the whole document
  std::size_t depth_ = 0;
};

/// Reads a whole program, line by line, keeping the programs being read
/// (the root and the subgraphs it is inside of) on a stack: nesting costs
/// no C++ stack.
class ProgramParser {
 public:
  ProgramParser(std::string_view text, TextParseOptions options)
      : text_(text),
        options_(std::move(options)),
        ctx_(options_.context ? options_.context : std::make_shared<expr::Context>()),
        budget_(text.size(), options_.max_expression_lookups, "TextParseOptions::max_expression_lookups") {}

  Result<ir::Program> run() {
    if (text_.size() > options_.max_length)
      return Diagnostic{"line 1, column 1: the input is " + std::to_string(text_.size()) +
                        " bytes long, more than the limit of " + std::to_string(options_.max_length)};
    return wrapir::detail::catch_failure([&] {
      check_utf8();
      std::size_t line_no = 0, begin = 0;
      while (begin <= text_.size()) {
        const std::size_t newline = text_.find('\n', begin);
        const std::size_t end = newline == std::string_view::npos ? text_.size() : newline;
        ++line_no;
        read_line(text_.substr(begin, end - begin), line_no);
        if (newline == std::string_view::npos) break;
        begin = newline + 1;
      }
      if (!result_) {
        if (frames_.empty()) fail_at(line_no, 1, "empty input: expected 'program NAME {'");
        const Frame& open = frames_.back();
        fail_at(line_no, 1, "unexpected end of input: " + describe(open) + " opened on line " +
                                std::to_string(open.header_line) + " is not closed with '}'");
      }
      return std::move(*result_);
    });
  }

 private:
  /// The whole input must be UTF-8 text, as a JSON document must: the
  /// first byte that is not part of a well-formed sequence is reported.
  void check_utf8() const {
    std::size_t line_no = 1, line_start = 0;
    for (std::size_t i = 0; i < text_.size();) {
      const std::size_t n = wrapir::detail::utf8_sequence_length(text_, i);
      if (n == 0) {
        constexpr char hex[] = "0123456789abcdef";
        const auto u = static_cast<unsigned char>(text_[i]);
        fail_at(line_no, i - line_start + 1,
                std::string("the input is not valid UTF-8: byte \\x") + hex[u >> 4] + hex[u & 15] +
                    " does not start a well-formed UTF-8 sequence");
      }
      if (text_[i] == '\n') {
        ++line_no;
        line_start = i + 1;
      }
      i += n;
    }
  }

  void read_line(std::string_view line, std::size_t line_no) {
    // Trailing blanks and a CR (CRLF files) are not part of the line.
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    std::size_t pos = 0;
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    if (pos == line.size() || line.substr(pos, 2) == "//") return;
    if (result_) fail_at(line_no, pos + 1, "unexpected text after the end of the program");
    if (frames_.empty()) {
      read_header(line, line_no, pos);
      return;
    }
    Frame& frame = frames_.back();
    Reader r{line, line_no, pos, frame, *ctx_, options_, budget_};
    if (line[pos] == '}') {
      ++pos;
      Reader closing{line, line_no, pos, frame, *ctx_, options_, budget_};
      closing.expect_end("'}'");
      close(r);
      return;
    }
    keyword_at_ = pos;
    const std::string_view keyword = r.word();
    if (keyword == "symbol") read_symbol(r, frame, line_no);
    else if (keyword == "buffer") read_buffer(r, frame);
    else if (keyword == "kernel") read_kernel(r, frame);
    else if (keyword == "pool") read_pool(r, frame);
    else if (keyword == "subgraph") open_subgraph(r, frame, line_no);
    else if (keyword == "inputs") read_inputs(r, frame);
    else if (keyword == "outputs") read_outputs(r, frame);
    else if (keyword == "program")
      r.fail(pos, "a program cannot contain another; nested programs are written 'subgraph NAME {'");
    else read_body_line(r, frame, keyword, pos);
  }

  void read_header(std::string_view line, std::size_t line_no, std::size_t pos) {
    Frame scratch{ir::Program{"program", ctx_}};
    Reader r{line, line_no, pos, scratch, *ctx_, options_, budget_};
    if (!r.accept_word("program")) r.fail(pos, "expected 'program NAME {', found " + r.found());
    const std::string name{r.checked_name("program")};
    r.expect('{', "after the program name");
    r.expect_end("'{'");
    push(name, line_no);
  }

  void push(const std::string& name, std::size_t line_no) {
    frames_.emplace_back(ir::Program{name, ctx_}, line_no);
  }

  static std::string describe(const Frame& f) { return "program " + ir::quote_for_diagnostic(f.program.name); }

  /// Moves `frame` to section `s`, or fails when `s` comes earlier.
  void advance(Reader& r, Frame& frame, Section s, std::string_view what, std::size_t at) {
    if (frame.outputs_seen) r.fail(at, "unexpected " + std::string(what) + " after the 'outputs' line; expected '}'");
    if (s < frame.section)
      r.fail(at, "'" + std::string(what) + "' line out of order: a program lists its symbols, buffers, kernels, "
                 "pools, subgraphs, inputs, body lines and outputs, in that order");
    if (frame.section <= Section::buffers && s > Section::buffers) resolve_sources(frame);
    frame.section = s;
  }

  void resolve_sources(Frame& frame) {
    for (const PendingSource& p : frame.pending_sources) {
      const auto it = frame.buffers.find(p.buffer);
      if (it == frame.buffers.end())
        fail_at(p.line, p.column,
                "unknown buffer " + ir::quote_for_diagnostic("%" + p.buffer) + " (source of symbol " +
                    ir::quote_for_diagnostic(frame.program.symbols[p.symbol_index].symbol.name()) + ")");
      frame.program.symbols[p.symbol_index].source = ir::BufferId{it->second};
    }
    frame.pending_sources.clear();
  }

  /// Records `name` as naming a `what` of `frame`, or fails when it names
  /// something already.
  static void claim_name(Reader& r, Frame& frame, std::string_view name, std::string_view what, std::size_t at) {
    const auto [it, inserted] = frame.names.try_emplace(std::string(name), what);
    if (!inserted)
      r.fail(at, "duplicate name " + ir::quote_for_diagnostic(name) + ": " + std::string(what) + " and " +
                     std::string(it->second) + " of program " + ir::quote_for_diagnostic(frame.program.name) +
                     " have the same name");
  }

  static std::uint32_t next_index(Reader& r, std::size_t size, std::size_t at) {
    if (size >= std::numeric_limits<std::uint32_t>::max()) r.fail(at, "too many table entries");
    return static_cast<std::uint32_t>(size);
  }

  void read_symbol(Reader& r, Frame& frame, std::size_t line_no) {
    advance(r, frame, Section::symbols, "symbol", keyword_at_);
    r.skip_space();
    const std::size_t at = r.pos();
    const std::string_view name = r.checked_name("symbol");
    claim_name(r, frame, name, "symbol", at);
    r.expect(':', "after the symbol name");
    expr::Assumption assumption{};
    r.read(assumption);
    const bool unbacked = r.accept_word("unbacked");
    ir::SymbolDecl decl;
    std::optional<PendingSource> source;
    r.read_attributes<4>("a symbol",
                         {Attribute{"origin", true, [&] { r.read(decl.origin); }},
                          Attribute{"source", false,
                                    [&] {
                                      r.skip_space();
                                      const std::size_t src_at = r.pos();
                                      r.expect('%', "before the source buffer's name");
                                      const std::string_view buffer = r.checked_name("buffer");
                                      source = PendingSource{0, std::string(buffer), line_no, src_at + 1};
                                    }},
                          Attribute{"path", false, [&] { r.read(decl.path); }},
                          Attribute{"hint", false, [&] {
                                      std::int64_t hint = 0;
                                      r.read(hint);
                                      decl.hint = hint;
                                    }}});
    try {
      decl.symbol = ctx_->symbol(name, assumption, unbacked);
    } catch (const expr::Error& err) {
      r.fail(at, err.what());
    }
    const std::uint32_t index = next_index(r, frame.program.symbols.size(), at);
    frame.symbols.try_emplace(std::string(name), decl.symbol);
    frame.program.symbols.push_back(std::move(decl));
    if (source) {
      source->symbol_index = index;
      frame.pending_sources.push_back(std::move(*source));
    }
  }

  void read_buffer(Reader& r, Frame& frame) {
    advance(r, frame, Section::buffers, "buffer", keyword_at_);
    r.skip_space();
    const std::size_t at = r.pos();
    ir::BufferDecl decl;
    decl.name = std::string(r.checked_name("buffer"));
    claim_name(r, frame, decl.name, "buffer", at);
    r.expect(':', "after the buffer name");
    r.read(decl.role);
    r.read(decl.layout.dtype);
    r.read(decl.layout.sizes);
    r.read_attributes<8>(
        "a buffer",
        {Attribute{"strides", true, [&] { r.read(decl.layout.strides); }},
         Attribute{"offset", true, [&] { r.read(decl.layout.storage_offset); }},
         Attribute{"device", true, [&] { r.read(decl.layout.device); }},
         Attribute{"donated", false, [&] { r.read(decl.donated); }},
         Attribute{"comm", false, [&] { r.read(decl.comm.emplace()); }},
         Attribute{"multi_output", false, [&] { r.read(decl.multi_output); }},
         Attribute{"stream", false, [&] { r.read(decl.stream); }},
         Attribute{"aligned", false, [&] { r.read(decl.aligned); }}});
    const std::uint32_t index = next_index(r, frame.program.buffers.size(), at);
    frame.buffers.try_emplace(decl.name, index);
    frame.program.buffers.push_back(std::move(decl));
  }

  void read_kernel(Reader& r, Frame& frame) {
    advance(r, frame, Section::kernels, "kernel", keyword_at_);
    r.skip_space();
    const std::size_t at = r.pos();
    ir::KernelDecl decl;
    decl.name = std::string(r.checked_name("kernel"));
    claim_name(r, frame, decl.name, "kernel", at);
    r.expect(':', "after the kernel name");
    r.read(decl.language);
    r.expect('(', "to open the kernel's signature");
    const std::size_t sig_start = r.pos();
    std::size_t sig_end = sig_start;
    const std::string_view line = r.line();
    while (sig_end < line.size() && line[sig_end] != ')') ++sig_end;
    if (sig_end == line.size()) r.fail(sig_start - 1, "unterminated signature: missing ')'");
    Result<std::vector<ir::KernelParam>> signature = ir::parse_signature(line.substr(sig_start, sig_end - sig_start));
    if (!signature) r.fail(sig_start + signature.error().column.value_or(0), signature.error().message);
    decl.signature = std::move(signature).value();
    r.set_pos(sig_end + 1);
    r.expect_end("the kernel's signature");
    const std::uint32_t index = next_index(r, frame.program.kernels.size(), at);
    frame.kernels.try_emplace(decl.name, index);
    frame.program.kernels.push_back(std::move(decl));
  }

  void read_pool(Reader& r, Frame& frame) {
    advance(r, frame, Section::pools, "pool", keyword_at_);
    r.skip_space();
    const std::size_t at = r.pos();
    ir::PoolDecl decl;
    decl.name = std::string(r.checked_name("pool"));
    claim_name(r, frame, decl.name, "pool", at);
    r.expect(':', "after the pool name");
    r.read_attributes<3>("a pool", {Attribute{"device", true, [&] { r.read(decl.device); }},
                                    Attribute{"size_bytes", true, [&] { r.read(decl.size_bytes); }},
                                    Attribute{"tensor", false, [&] { r.read(decl.tensor.emplace()); }}});
    const std::uint32_t index = next_index(r, frame.program.pools.size(), at);
    frame.pools.try_emplace(decl.name, index);
    frame.program.pools.push_back(std::move(decl));
  }

  void open_subgraph(Reader& r, Frame& frame, std::size_t line_no) {
    advance(r, frame, Section::subgraphs, "subgraph", keyword_at_);
    r.skip_space();
    const std::size_t at = r.pos();
    const std::string name{r.checked_name("subgraph")};
    claim_name(r, frame, name, "subgraph", at);
    r.expect('{', "after the subgraph name");
    r.expect_end("'{'");
    if (frames_.size() >= options_.max_depth)
      r.fail(at, "subgraphs nest deeper than " + std::to_string(options_.max_depth) + " levels");
    push(name, line_no);  // invalidates `frame`
  }

  void read_inputs(Reader& r, Frame& frame) {
    if (frame.inputs_seen) r.fail(keyword_at_, "duplicate 'inputs' line");
    advance(r, frame, Section::inputs, "inputs", keyword_at_);
    frame.inputs_seen = true;
    while (!r.at_end()) {
      if (!frame.program.inputs.empty()) r.expect(',', "between inputs");
      r.skip_space();
      if (r.peek() == '%') {
        ir::BufferId id;
        r.read(id);
        frame.program.inputs.emplace_back(id);
      } else {
        expr::Expr e;
        r.read(e);
        frame.program.inputs.emplace_back(e);
      }
    }
  }

  void read_outputs(Reader& r, Frame& frame) {
    if (frame.outputs_seen) r.fail(keyword_at_, "duplicate 'outputs' line");
    if (!frame.inputs_seen) r.fail(keyword_at_, "the 'outputs' line must follow the 'inputs' line");
    advance(r, frame, Section::outputs, "outputs", keyword_at_);
    frame.outputs_seen = true;
    while (!r.at_end()) {
      if (!frame.program.outputs.empty()) r.expect(',', "between outputs");
      r.skip_space();
      if (r.peek() == '%') {
        ir::BufferArg b;
        r.read(b);
        frame.program.outputs.emplace_back(std::move(b));
      } else if (r.accept_word("none")) {
        frame.program.outputs.emplace_back(ir::None{});
      } else {
        expr::Expr e;
        r.read(e);
        frame.program.outputs.emplace_back(e);
      }
    }
  }

  void read_body_line(Reader& r, Frame& frame, std::string_view kind, std::size_t at) {
    const auto index = ir::line_kind_from_name(kind);
    if (!index) {
      if (kind.empty()) r.fail(at, "expected a line kind or a table keyword, found " + r.found());
      r.fail(at, "unknown line kind " + ir::quote_for_diagnostic(kind));
    }
    if (!frame.inputs_seen) r.fail(at, "a body line must follow the 'inputs' line");
    advance(r, frame, Section::body, kind, at);
    boost::mp11::mp_with_index<ir::line_kind_count>(*index, [&](auto I) {
      using T = boost::mp11::mp_at_c<ir::LineKinds, I>;
      T line = r.template read_line<T>();
      check_line(r, line, at);
      frame.program.body.emplace_back(std::in_place_type<T>, std::move(line));
    });
  }

  /// What a line kind needs beyond its field types (as the JSON loader
  /// checks it).
  template <class T>
  static void check_line(const Reader&, const T&, std::size_t) {}
  static void check_line(const Reader& r, const ir::Comment& c, std::size_t at) {
    if (!ir::is_single_line_text(c.text))
      r.fail(at, "comment text must be one line: no line breaks or control characters other than tab");
  }

  void close(Reader& r) {
    Frame& frame = frames_.back();
    if (!frame.inputs_seen) r.fail(keyword_at_, describe(frame) + " has no 'inputs' line");
    if (!frame.outputs_seen) r.fail(keyword_at_, describe(frame) + " has no 'outputs' line");
    ir::Program done = std::move(frame.program);
    frames_.pop_back();
    if (frames_.empty()) {
      result_.emplace(std::move(done));
      return;
    }
    Frame& parent = frames_.back();
    const auto index = static_cast<std::uint32_t>(parent.program.subgraphs.size());
    parent.subgraphs.try_emplace(done.name, index);
    parent.program.subgraphs.push_back(std::move(done));
  }

  std::string_view text_;
  TextParseOptions options_;
  std::shared_ptr<expr::Context> ctx_;
  io::detail::ExpressionBudget budget_;
  std::vector<Frame> frames_;
  std::optional<ir::Program> result_;
  std::size_t keyword_at_ = 0;  // where the current line's first word starts
};

}  // namespace detail

inline Result<ir::Program> parse_program_text(std::string_view text, TextParseOptions options) {
  return detail::ProgramParser{text, std::move(options)}.run();
}

}  // namespace wrapir::text
