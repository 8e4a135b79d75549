#pragma once
/// \file
/// The textual form of a wrapir program (printer): one IR line per text
/// line, in the spirit of MLIR's textual IR. `wrapir dump`, tests and bug
/// reports use it; `io/text.hpp` reads it back. The grammar is in
/// docs/text-form.md.
///
/// ```
/// program add_relu {
///   symbol s0 : positive origin=input hint=1024
///   buffer arg0_1 : input float32[s0] strides=[1] offset=0 device=cuda:0
///   kernel triton_poi_add_0 : triton(in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32)
///   inputs %arg0_1, s0
///   KernelCall kernel=@triton_poi_add_0 args=[%arg0_1, %buf0, #s0] ...
///   outputs %buf0
/// }
/// ```
///
/// A program's parts come in a fixed order: the header, the tables (symbols,
/// buffers, kernels, pools), the subgraphs (so that a line's `^subgraph`
/// reference always points backwards and one pass reads the text), the
/// inputs, the body and the outputs. Table entries are written by hand;
/// body lines are written generically, through the reflection of the line
/// structs: `Kind field=value ...` with every field, in declaration order,
/// and one codec per field type below. A new line kind therefore needs no
/// code here, and a new field type fails to compile until it has a codec.
///
/// References carry sigils: `%buffer`, `@kernel`, `$pool`, `^subgraph`.
/// Expressions are bare when atomic (a symbol or a non-negative integer) and
/// parenthesised otherwise (`(s0*s1 + 1)`), as `expr::print_python` writes
/// them. In an argument (`Arg`) a symbolic integer is marked with `#`
/// (`#s0`, `#(2*s0)`, `#4`) so that it is never confused with the int `4`.
/// Strings are double-quoted and escaped (`\n \t \r \" \\ \xHH`; every byte
/// outside printable ASCII is escaped), so kernel sources stay on one line
/// and the text is plain ASCII. Floats print in the shortest form that reads
/// back exactly and always with a `.` or an exponent (`1.0`, `-0.0`,
/// `1e+300`, `inf`, `-inf`, `nan`).
///
/// Printing a program that is not valid (an id out of range, a null
/// expression) never crashes: the bad part prints as `<...>`, which the
/// parser rejects.

#include <wrapir/detail/escape.hpp>
#include <wrapir/emit/detail/shortest_double.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/enum_names.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/reflect.hpp>
#include <wrapir/ir/small_vector.hpp>
#include <wrapir/ir/symbol.hpp>

#include <boost/variant2/variant.hpp>

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::text {

/// `program` in the text form, ending with a newline.
[[nodiscard]] std::string to_text(const ir::Program& program);

/// Appends `program` in the text form to `out`.
void to_text(const ir::Program& program, std::string& out);

/// One line as the text form prints it (`KernelCall kernel=@triton_add_0
/// args=[%arg0_1, %buf0, #s0] ...`), ids named from the tables of `program`,
/// the program (or subgraph) that holds the line. For emitters of one's own
/// that print what they visit.
[[nodiscard]] std::string to_string(const ir::Line& line, const ir::Program& program);

/// One value as the text form prints it, ids named from `program`: a line
/// kind (`Allocate buffer=%buf0`), an argument (`%buf0`, `#s0`, `1.5`,
/// `"text"`), a launch grid (`typed{type=Grid1D, numels=[xnumel=s0],
/// block=[XBLOCK=1024]}`), an expression, a view, a buffer id, a list of
/// them, ... (anything a line's field holds).
template <class T>
[[nodiscard]] std::string to_string(const T& value, const ir::Program& program);

// ---------------------------------------------------------------------------
// Implementation. `detail` is shared with the parser (io/text.hpp): both
// sides read the same enum, record and keyword tables, so they cannot drift.

namespace detail {

/// The words of the text form that can stand where an expression could: a
/// symbol with one of these names is printed in parentheses (`(none)`), so
/// that `outputs none` always means None.
inline constexpr std::array<std::string_view, 1> reserved_words{"none"};

[[nodiscard]] inline bool is_reserved_word(std::string_view s) noexcept {
  for (std::string_view w : reserved_words)
    if (w == s) return true;
  return false;
}

// ---- enums by name ---------------------------------------------------------

// One table of enumerator names for every codec (ir/enum_names.hpp).
template <class E>
using EnumTraits = ir::EnumNames<E>;
using ir::enum_from_name;
using ir::NamedEnum;

/// "a, b, c": the names of `E`, for "expected one of" diagnostics.
template <NamedEnum E>
[[nodiscard]] std::string enum_names() {
  return ir::enum_choices<E>();
}

// ---- records ---------------------------------------------------------------

/// The syntax of the records that print as `prefix{field=value, ...}` (a
/// View as `<sizes=[...], strides=[...], offset=...>`): what a diagnostic
/// calls one, its prefix word and its brackets. The fields themselves come
/// from the records' reflection (`ir::for_each_field`): every field, in
/// declaration order, named as the member is.
template <class T>
struct RecordSyntax;

template <>
struct RecordSyntax<ir::View> {
  static constexpr std::string_view what = "a view";
  static constexpr std::string_view prefix = "";
  static constexpr char open = '<', close = '>';
};
template <>
struct RecordSyntax<ir::KernelMetadata> {
  static constexpr std::string_view what = "kernel metadata";
  static constexpr std::string_view prefix = "";
  static constexpr char open = '{', close = '}';
  static constexpr std::array<std::string_view, 1> omitted_when_empty{"const_params"};
};
template <>
struct RecordSyntax<ir::ExplicitGrid> {
  static constexpr std::string_view what = "an explicit grid";
  static constexpr std::string_view prefix = "explicit";
  static constexpr char open = '{', close = '}';
};
template <>
struct RecordSyntax<ir::TypedGrid> {
  static constexpr std::string_view what = "a typed grid";
  static constexpr std::string_view prefix = "typed";
  static constexpr char open = '{', close = '}';
};
template <>
struct RecordSyntax<ir::BinaryRef> {
  static constexpr std::string_view what = "a binary kernel source";
  static constexpr std::string_view prefix = "binary";
  static constexpr char open = '{', close = '}';
};
template <>
struct RecordSyntax<ir::SymbolBinding> {
  static constexpr std::string_view what = "a symbol binding";
  static constexpr std::string_view prefix = "";
  static constexpr char open = '{', close = '}';
};
/// A key step prints compactly (`index(0)`, `key("out")`, `storage_offset`);
/// as a record only when a field its kind does not use is set.
template <>
struct RecordSyntax<ir::KeyStep> {
  static constexpr std::string_view what = "a key step";
  static constexpr std::string_view prefix = "";
  static constexpr char open = '{', close = '}';
};
template <>
struct RecordSyntax<ir::CommBufferInfo> {
  static constexpr std::string_view what = "comm buffer info";
  static constexpr std::string_view prefix = "";
  static constexpr char open = '{', close = '}';
};

template <>
struct RecordSyntax<ir::PoolTensor> {
  static constexpr std::string_view what = "a pool tensor";
  static constexpr std::string_view prefix = "";
  static constexpr char open = '{', close = '}';
};
template <>
struct RecordSyntax<ir::TritonMeta> {
  static constexpr std::string_view what = "triton_meta";
  static constexpr std::string_view prefix = "";
  static constexpr char open = '{', close = '}';
  static constexpr std::array<std::string_view, 2> omitted_when_empty{"constexprs", "attributes"};
};
template <>
struct RecordSyntax<ir::InductorMeta> {
  static constexpr std::string_view what = "inductor_meta";
  static constexpr std::string_view prefix = "";
  static constexpr char open = '{', close = '}';
  static constexpr std::array<std::string_view, 2> omitted_when_empty{"mutated_arg_names", "autotune_hints"};
};
template <>
struct RecordSyntax<ir::ParamAttribute> {
  static constexpr std::string_view what = "a parameter attribute";
  static constexpr std::string_view prefix = "";
  static constexpr char open = '{', close = '}';
};
template <>
struct RecordSyntax<ir::Provenance> {
  static constexpr std::string_view what = "a provenance";
  static constexpr std::string_view prefix = "";
  static constexpr char open = '{', close = '}';
  static constexpr std::array<std::string_view, 2> omitted_when_empty{"source_nodes", "aten"};
};

template <class T>
concept Record = ir::Reflected<T> && requires { RecordSyntax<T>::open; };

/// Whether the field `name` of record `T` is a list that the writer leaves
/// out when empty and the reader takes as empty when absent
/// (`RecordSyntax<T>::omitted_when_empty`: the lists a record gained after
/// text was first written with it, so that that text still reads).
template <class T>
[[nodiscard]] constexpr bool omitted_when_empty(std::string_view name) noexcept {
  if constexpr (requires { RecordSyntax<T>::omitted_when_empty; }) {
    for (std::string_view f : RecordSyntax<T>::omitted_when_empty)
      if (f == name) return true;
  }
  return false;
}

/// Boxed optional fields (annotations most values lack: kernel metadata's
/// `triton_meta`, a line's `provenance`) are left out when empty, in lines
/// and records alike, and read as empty when absent.
template <class F>
inline constexpr bool is_optional_box = ir::is_optional_box_v<F>;

/// Calls `f(name, field, index)` for each field of the record `v`, in
/// declaration order.
template <class T, class F>
  requires Record<std::remove_const_t<T>>
constexpr void for_each_record_field(T& v, F&& f) {
  std::size_t index = 0;
  ir::for_each_field(v, [&](std::string_view name, auto& field) { f(name, field, index++); });
}

/// Which key steps take an integer and which a string argument in the
/// compact form.
[[nodiscard]] constexpr bool key_step_takes_value(ir::KeyStepKind k) noexcept {
  return k == ir::KeyStepKind::index || k == ir::KeyStepKind::size || k == ir::KeyStepKind::stride ||
         k == ir::KeyStepKind::divide_by;
}
[[nodiscard]] constexpr bool key_step_takes_key(ir::KeyStepKind k) noexcept { return k == ir::KeyStepKind::key; }

/// Whether `step` prints compactly (fields its kind does not use are unset).
[[nodiscard]] inline bool key_step_is_compact(const ir::KeyStep& step) noexcept {
  if (static_cast<std::size_t>(step.kind) >= ir::key_step_kind_count) return false;
  return (key_step_takes_value(step.kind) || step.value == 0) && (key_step_takes_key(step.kind) || step.key.empty());
}

// ---- scalars ---------------------------------------------------------------

/// Appends `s` double-quoted; every byte outside printable ASCII is escaped,
/// so the result is one line of ASCII whatever `s` holds.
inline void append_quoted(std::string& out, std::string_view s) {
  wrapir::detail::append_escaped(out, s, wrapir::detail::text_form_style);
}

/// `v` as the shortest text that reads back exactly (see
/// emit/detail/shortest_double.hpp).
inline void append_double(std::string& out, double v) { wrapir::detail::append_shortest_double(out, v); }

template <class I>
void append_integer(std::string& out, I v) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, ec == std::errc{} ? end : buffer);
}

// ---- the field writer ----------------------------------------------------

/// Writes values of every field type of the line structs, for one program
/// (whose tables give the names of ids). Overloads are members so that they
/// see each other whatever their order (lists of args of lists ...).
class Writer {
 public:
  Writer(std::string& out, const ir::Program& program) noexcept : out_(out), program_(program) {}

  // References.
  void write(ir::BufferId id) { write_ref('%', program_.buffers, id.index); }
  void write(ir::KernelId id) { write_ref('@', program_.kernels, id.index); }
  void write(ir::PoolId id) { write_ref('$', program_.pools, id.index); }
  void write(ir::GraphId id) { write_ref('^', program_.subgraphs, id.index); }

  /// Bare when atomic, parenthesised otherwise.
  void write(expr::Expr e) {
    if (!e) {
      out_ += "<null expression>";
      return;
    }
    if ((e.is_integer() && e.value() >= 0) || (e.is_symbol() && !is_reserved_word(e.name()))) {
      if (e.is_integer()) append_integer(out_, e.value());
      else out_ += e.name();
      return;
    }
    const std::size_t open = out_.size();
    out_ += '(';
    try {
      expr::print_python(e, out_);
    } catch (const expr::Error&) {
      out_.resize(open + 1);
      out_ += "<unprintable expression>";  // a DAG too large to print as a tree
    }
    // What prints atomic is written bare whatever its node (`Identity(s0)`
    // prints as `s0`), so that the text reads back to text printed the same.
    const std::string_view inner = std::string_view(out_).substr(open + 1);
    bool atomic = !inner.empty() && !is_reserved_word(inner);
    for (char c : inner)
      atomic = atomic && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
    if (atomic) out_.erase(open, 1);
    else out_ += ')';
  }

  void write(bool b) { out_ += b ? "true" : "false"; }
  void write(std::uint32_t v) { append_integer(out_, v); }
  void write(std::int64_t v) { append_integer(out_, v); }
  void write(double v) { append_double(out_, v); }
  void write(const std::string& s) { append_quoted(out_, s); }
  void write(const ir::Name& n) { out_ += n.text; }
  void write(const ir::OpName& n) { out_ += n.text; }
  void write(const ir::Device& d) { out_ += ir::to_string(d); }
  void write(ir::ParamType t) { out_ += ir::to_string(t); }

  template <NamedEnum E>
  void write(E e) {
    out_ += EnumTraits<E>::name(e);
  }

  /// `none`, `%buf`, `#expr`, `3`, `1.5`, `true`, `"text"`, `device(cuda:0)`,
  /// `dtype(float32)`, `[...]`.
  void write(const ir::Arg& a) {
    a.visit([&](const auto& v) { write_arg(v); });
  }
  void write(const ir::NamedArg& a) { write_pair(a.name, a.value); }
  void write(const ir::NamedBuffer& b) { write_pair(b.name, b.buffer); }
  void write(const ir::NamedExpr& n) { write_pair(n.name, n.value); }
  void write(const ir::BlockSize& b) { write_pair(b.name, b.value); }

  void write(const ir::BufferArg& b) {
    write(b.buffer);
    if (b.view) write(*b.view);
  }

  void write(ir::ArgSlice s) {
    write(s.start);
    out_ += ':';
    write(s.stop);
  }

  void write(const ir::KeyStep& step) {
    if (!key_step_is_compact(step)) {
      write_record(step);
      return;
    }
    out_ += ir::key_step_kind_name(step.kind);
    if (key_step_takes_value(step.kind)) {
      out_ += '(';
      write(step.value);
      out_ += ')';
    } else if (key_step_takes_key(step.kind)) {
      out_ += '(';
      write(step.key);
      out_ += ')';
    }
  }

  void write(const ir::LaunchGrid& g) {
    boost::variant2::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, ir::LauncherGrid>) out_ += "launcher";
          else write_record(*v);
        },
        g);
  }

  void write(const ir::KernelSource& s) {
    boost::variant2::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, ir::SourceText>) write(v.text);
          else write_record(v);
        },
        s);
  }

  template <Record T>
  void write(const T& v) {
    write_record(v);
  }

  template <class T>
  void write(const std::optional<T>& o) {
    if (o) write(*o);
    else out_ += "none";
  }
  template <class T>
  void write(const ir::OptionalBox<T>& o) {
    if (o) write(*o);
    else out_ += "none";
  }
  template <class T>
  void write(const ir::Box<T>& b) {
    write(*b);
  }

  template <class T>
  void write(const ir::VectorBox<T>& items) {
    write(items.vector());
  }
  template <class T, std::size_t N>
  void write(const ir::SmallVector<T, N>& items) {
    write_list(std::span<const T>(items));
  }
  template <class T>
  void write(const std::vector<T>& items) {
    write_list(std::span<const T>(items));
  }
  template <class T>
  void write_list(std::span<const T> items) {
    out_ += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) out_ += ", ";
      write(items[i]);
    }
    out_ += ']';
  }

  /// `Kind field=value ...`, every reflected field in order.
  template <ir::LineKind T>
  void write_line(const T& line) {
    out_ += T::kind;
    ir::for_each_field(line, [&](std::string_view name, const auto& field) {
      if constexpr (is_optional_box<std::remove_cvref_t<decltype(field)>>) {
        if (!field) return;
      }
      out_ += ' ';
      out_ += name;
      out_ += '=';
      write(field);
    });
  }

  template <Record T>
  void write_record(const T& v) {
    out_ += RecordSyntax<T>::prefix;
    out_ += RecordSyntax<T>::open;
    bool first = true;
    for_each_record_field(v, [&](std::string_view name, const auto& field, std::size_t) {
      using F = std::remove_cvref_t<decltype(field)>;
      if constexpr (is_optional_box<F>) {
        if (!field) return;
      } else if constexpr (requires { field.empty(); }) {
        if (omitted_when_empty<T>(name) && field.empty()) return;
      }
      if (!first) out_ += ", ";
      first = false;
      out_ += name;
      out_ += '=';
      write(field);
    });
    out_ += RecordSyntax<T>::close;
  }

 private:
  template <class Table>
  void write_ref(char sigil, const Table& table, std::uint32_t index) {
    out_ += sigil;
    if (index < table.size()) {
      out_ += table[index].name;
    } else {
      out_ += "<invalid id ";
      append_integer(out_, index);
      out_ += '>';
    }
  }

  template <class V>
  void write_pair(const ir::Name& name, const V& value) {
    out_ += name.text;
    out_ += '=';
    write(value);
  }

  void write_arg(ir::None) { out_ += "none"; }
  void write_arg(const ir::BufferArg& b) { write(b); }
  void write_arg(expr::Expr e) {
    out_ += '#';
    write(e);
  }
  void write_arg(std::int64_t v) { write(v); }
  void write_arg(double v) { write(v); }
  void write_arg(bool b) { write(b); }
  void write_arg(const std::string& s) { write(s); }
  void write_arg(const ir::Device& d) {
    out_ += "device(";
    write(d);
    out_ += ')';
  }
  void write_arg(ir::DType d) {
    out_ += "dtype(";
    write(d);
    out_ += ')';
  }
  void write_arg(const ir::ArgList& l) { write(l.items); }

  std::string& out_;
  const ir::Program& program_;
};

inline void indent(std::string& out, std::size_t depth) { out.append(2 * depth, ' '); }

inline void write_symbol_decl(std::string& out, Writer& w, const ir::SymbolDecl& s) {
  out += "symbol ";
  if (s.symbol && s.symbol.is_symbol()) {
    out += s.symbol.name();
    out += " : ";
    w.write(s.symbol.assumption());
    if (s.symbol.unbacked()) out += " unbacked";
  } else {
    out += "<not a symbol: ";
    w.write(s.symbol);
    out += "> :";
  }
  out += " origin=";
  w.write(s.origin);
  if (s.source) {
    out += " source=";
    w.write(*s.source);
  }
  if (!s.path.empty()) {
    out += " path=";
    w.write(s.path);
  }
  if (s.hint) {
    out += " hint=";
    w.write(*s.hint);
  }
}

inline void write_buffer_decl(std::string& out, Writer& w, const ir::BufferDecl& b) {
  out += "buffer ";
  out += b.name;
  out += " : ";
  w.write(b.role);
  out += ' ';
  w.write(b.layout.dtype);
  w.write(b.layout.sizes);
  out += " strides=";
  w.write(b.layout.strides);
  out += " offset=";
  w.write(b.layout.storage_offset);
  out += " device=";
  w.write(b.layout.device);
  // Attributes with their default value are left out.
  if (b.donated) out += " donated=true";
  if (b.comm) {
    out += " comm=";
    w.write(*b.comm);
  }
  if (b.multi_output) out += " multi_output=true";
  if (b.stream != 0) {
    out += " stream=";
    w.write(b.stream);
  }
  if (!b.aligned) out += " aligned=false";
}

inline void write_kernel_decl(std::string& out, Writer& w, const ir::KernelDecl& k) {
  out += "kernel ";
  out += k.name;
  out += " : ";
  w.write(k.language);
  out += '(';
  for (std::size_t i = 0; i < k.signature.size(); ++i) {
    if (i) out += ", ";
    out += k.signature[i].name;
    out += ": ";
    w.write(k.signature[i].type);
  }
  out += ')';
}

inline void write_pool_decl(std::string& out, Writer& w, const ir::PoolDecl& p) {
  out += "pool ";
  out += p.name;
  out += " : device=";
  w.write(p.device);
  out += " size_bytes=";
  w.write(p.size_bytes);
  if (p.tensor) {
    out += " tensor=";
    w.write(*p.tensor);
  }
}

inline void write_program(std::string& out, const ir::Program& p, std::size_t depth) {
  Writer w{out, p};
  indent(out, depth);
  out += depth == 0 ? "program " : "subgraph ";
  out += p.name;
  out += " {\n";
  auto item = [&](auto&& write_one) {
    indent(out, depth + 1);
    write_one();
    out += '\n';
  };
  for (const ir::SymbolDecl& s : p.symbols) item([&] { write_symbol_decl(out, w, s); });
  for (const ir::BufferDecl& b : p.buffers) item([&] { write_buffer_decl(out, w, b); });
  for (const ir::KernelDecl& k : p.kernels) item([&] { write_kernel_decl(out, w, k); });
  for (const ir::PoolDecl& pl : p.pools) item([&] { write_pool_decl(out, w, pl); });
  for (const ir::Program& g : p.subgraphs) write_program(out, g, depth + 1);
  item([&] {
    out += "inputs";
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      out += i ? ", " : " ";
      boost::variant2::visit([&](const auto& v) { w.write(v); }, p.inputs[i]);
    }
  });
  for (const ir::Line& line : p.body)
    item([&] { std::visit([&](const auto& l) { w.write_line(l); }, line); });
  item([&] {
    out += "outputs";
    for (std::size_t i = 0; i < p.outputs.size(); ++i) {
      out += i ? ", " : " ";
      boost::variant2::visit(
          [&](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, ir::None>) out += "none";
            else w.write(v);
          },
          p.outputs[i]);
    }
  });
  indent(out, depth);
  out += "}\n";
}

}  // namespace detail

inline void to_text(const ir::Program& program, std::string& out) { detail::write_program(out, program, 0); }

inline std::string to_text(const ir::Program& program) {
  std::string out;
  to_text(program, out);
  return out;
}

inline std::string to_string(const ir::Line& line, const ir::Program& program) {
  std::string out;
  detail::Writer w{out, program};
  std::visit([&](const auto& l) { w.write_line(l); }, line);
  return out;
}

template <class T>
std::string to_string(const T& value, const ir::Program& program) {
  std::string out;
  detail::Writer w{out, program};
  if constexpr (ir::LineKind<T>) {
    w.write_line(value);
  } else {
    static_assert(requires { w.write(value); }, "wrapir::text::to_string: the text form has no syntax for this type");
    w.write(value);
  }
  return out;
}

}  // namespace wrapir::text
