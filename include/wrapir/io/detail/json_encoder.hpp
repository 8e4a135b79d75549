#pragma once
/// \file
/// `Encoder`: a program as JSON text.
///
/// Part of the JSON codec (io/json.hpp says what it does and how);
/// include <wrapir/io/json.hpp>, not this.

#include <wrapir/io/json.hpp>
#include <wrapir/io/detail/json_schema.hpp>

#include <boost/variant2/variant.hpp>

namespace wrapir::io::detail::json {

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
    if (p.tensor) {
      w_.key("tensor");
      put(*p.tensor);
    }
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
  void put(const ir::Box<T>& b) {
    put(*b);
  }
  template <class T>
  void put(const ir::OptionalBox<T>& o) {
    if (o) put(*o);
    else w_.null();
  }
  template <class T, std::size_t N>
  void put(const ir::SmallVector<T, N>& v) {
    w_.begin_array();
    for (const T& x : v) put(x);
    w_.end_array();
  }
  template <class T>
  void put(const std::vector<T>& v) {
    w_.begin_array();
    for (const T& x : v) put(x);
    w_.end_array();
  }
  template <class T>
  void put(const ir::VectorBox<T>& v) {
    put(v.vector());
  }

  void put(const ir::Arg& a) {
    if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) return put(*b);
    w_.begin_object();
    a.visit(
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
        });
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
        [&](const auto& alternative) {
          const auto& record = ir::unbox(alternative);
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

}  // namespace wrapir::io::detail::json
