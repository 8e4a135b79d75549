#pragma once
/// \file
/// `Decoder`: a program from a tape, checking everything.
///
/// Part of the JSON codec (io/json.hpp says what it does and how);
/// include <wrapir/io/json.hpp>, not this.

#include <wrapir/io/json.hpp>
#include <wrapir/io/detail/json_reader.hpp>

namespace wrapir::io::detail::json {

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
  /// For a document of `document_bytes` bytes (what the expressions' shared
  /// work budget is measured by).
  /// `input` is the whole document when it is parsed whole, so that
  /// strings viewing it are remembered as they are; empty when it comes in
  /// chunks, whose strings live only as long as their nodes.
  Decoder(expr::Context& ctx, const JsonLoadOptions& options, std::size_t document_bytes,
          LoadStatistics* statistics = nullptr, std::string_view input = {})
      : input_(input),
        ctx_(ctx),
        options_(options),
        statistics_(statistics),
        budget_(document_bytes, options.max_expression_lookups, "JsonLoadOptions::max_expression_lookups") {}

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
      made->scope.buffers = &made->buffers.table();
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
    switch (table_index) {
      case 0: ahead.symbols.finish(); break;
      case 1: ahead.buffers.finish(); break;
      case 2: ahead.kernels.finish(); break;
      default: ahead.pools.finish();
    }
    if (left == 0 && ahead.tables_read == table_index) {
      ahead.tables_read = table_index + 1;
      if (table_index == 0) ++programs_read_ahead_;  // every symbol made: the next program may make its own
    }
    return left;
  }

  /// The body begins, at byte `position` of the input that ends at `end`, in a
  /// program whose read-ahead is `ahead`. Returns the read-ahead its lines
  /// go to, or null when they stay on the tape (before the symbols, which
  /// expressions need, are read).
  static ReadAhead* begin_body(ReadAhead* ahead, std::size_t position, std::size_t end) {
    if (!ahead || ahead->tables_read == 0 || ahead->body_begun) return nullptr;
    ahead->body_begun = true;
    ahead->start = position;
    ahead->end = end;
    return ahead;
  }

  /// A line of a streamed body is complete on the tape; the input up to
  /// byte `position` at least was parsed. True when it was read (its nodes may
  /// go); false when it stays for the final pass, and the rest of the body
  /// too.
  bool stream_line(ReadAhead& ahead, const Node& line_node, std::size_t position) {
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
  void reserve_body(ReadAhead& ahead, std::size_t position) {
    const std::size_t lines = ahead.body.size();
    if (lines == body_sample / 2) ahead.half = position;
    auto bytes = [](std::size_t from, std::size_t to) {
      return from != ReadAhead::unknown_offset && to > from ? to - from : std::size_t{0};
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
      out.symbols = ahead->symbols.take();
      out.buffers = ahead->buffers.take();
      out.kernels = ahead->kernels.take();
      out.pools = ahead->pools.take();
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
    const std::string_view name = keep(name_of(entry.required("name"), name_path, table_entry_name(table)));
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
        entry_ahead_->symbol_sources.push_back(LaterName{entry_index_, 0, keep(s->text())});
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
    if (const Node* t = r.optional("tensor")) get(*t, out.tensor, path / "tensor");
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
    if (const auto it = kinds_.find(name); it != kinds_.end()) return it->second;
    return kinds_.emplace(keep(name), ir::line_kind_from_name(name)).first->second;
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
      scope_->expressions.emplace(keep(v.text()), e);
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
    auto parsed = budget_.parse(ctx_, text, options);
    if (!parsed) fail(path, "invalid expression " + ir::quote_for_diagnostic(text) + ": " + parsed.error().to_string());
    return *parsed;
  }

  /// Fails unless every identifier of `text` that could name a symbol is a
  /// symbol of the program being loaded. Reserved words and function names
  /// are left to the expression parser, which refuses misused ones.
  void check_symbols_declared(std::string_view text, const Path& path) {
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
        auto parsed = budget_.parse(scratch, text, options);
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
    if (auto err = ir::check_operator_name(s)) fail(path, *std::move(err));
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
    out = devices_[keep(s)] = *d;
  }
  void get(const Node& v, ir::DType& out, const Path& path) {
    const std::string_view s = as_string(v, path);
    if (const auto it = dtypes_.find(s); it != dtypes_.end()) {
      out = it->second;
      return;
    }
    const auto d = ir::dtype_from_name(s);
    if (!d) fail(path, "unknown dtype " + ir::quote_for_diagnostic(s) + " (expected a name such as float32)");
    out = dtypes_[keep(s)] = *d;
  }
  void get(const Node& v, ir::ParamType& out, const Path& path) {
    const std::string_view s = as_string(v, path);
    if (const auto it = param_types_.find(s); it != param_types_.end()) {
      out = it->second;
      return;
    }
    const auto t = ir::parse_param_type(s);
    if (!t) fail(path, "unknown parameter type " + ir::quote_for_diagnostic(s) + " (expected such as *fp32 or i32)");
    out = param_types_[keep(s)] = *t;
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
          line_ahead_->graph_references.push_back(LaterName{line_index_, ordinal, keep(name)});
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
  static void each_graph_id(ir::Box<T>& field, const Path& path, F& f) {
    each_graph_id(*field, path, f);
  }
  template <class T, class F>
  static void each_graph_id(ir::OptionalBox<T>& field, const Path& path, F& f) {
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
  /// them named: the last lookups are kept by hash, with a copy of the name
  /// (the text of its mention may be gone with its node). And a buffer named
  /// for the first time is mostly the one after the last found
  /// (`Scope::next_buffer`).
  const Scope::Entry* find_name(std::string_view name) {
    Scope& scope = *scope_;
    const std::uint64_t h = StringHash{}(name);
    RecentName& recent = recent_names_[(h * 0x9e3779b97f4a7c15ULL) >> (64 - recent_name_bits)];
    if (recent.scope == scope.serial && StringEqual{}(recent.text(), name)) return &recent.entry;
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
    if (name.size() > RecentName::max_size) {
      found_ = entry;
      return &found_;
    }
    std::memcpy(recent.chars.data(), name.data(), name.size());
    recent.size = static_cast<std::uint8_t>(name.size());
    recent.scope = scope.serial;
    recent.entry = entry;
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
  void get(const Node& v, ir::Box<T>& out, const Path& path) {
    get(v, *out, path);
  }
  template <class T>
  void get(const Node& v, ir::OptionalBox<T>& out, const Path& path) {
    if (v.is(NodeKind::null)) {
      out.reset();
      return;
    }
    get(v, out.emplace(), path);
  }
  template <class T>
  void get(const Node& v, ir::VectorBox<T>& out, const Path& path) {
    std::vector<T> items;
    get(v, items, path);
    out = std::move(items);
  }
  template <class T, std::size_t N>
  void get(const Node& v, ir::SmallVector<T, N>& out, const Path& path) {
    const Node& a = as_array(v, path);
    out.clear();
    out.reserve(a.size);
    for_each_element(a, [&](std::size_t i, const Node& e) { get(e, out.emplace_back(), path[i]); });
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
      using T = ir::unboxed_t<typename decltype(alternative)::type>;
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

  /// `s`, or a copy of it, that lives as long as the load: strings of the
  /// tape's nodes go with them while the document is parsed, unless they
  /// view a document given whole.
  std::string_view keep(std::string_view s) {
    if (tape_ != nullptr) return s;  // the final pass: the tape stays until the end
    const auto lo = reinterpret_cast<std::uintptr_t>(input_.data());
    const auto p = reinterpret_cast<std::uintptr_t>(s.data());
    if (!input_.empty() && p >= lo && p + s.size() <= lo + input_.size()) return s;
    return kept_.keep(s);
  }

  std::string_view input_;
  StringArena kept_;

  expr::Context& ctx_;
  const JsonLoadOptions& options_;
  LoadStatistics* statistics_;
  io::detail::ExpressionBudget budget_;
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
    static constexpr std::size_t max_size = 38;  // the record is 56 bytes
    std::array<char, max_size> chars;
    std::uint8_t size = 0;
    Scope::Entry entry{};
    std::size_t scope = 0;  // `Scope::serial`; 0 for none
    [[nodiscard]] std::string_view text() const noexcept { return {chars.data(), size}; }
  };
  Scope::Entry found_{};  // what `find_name` found, when too long to keep in `recent_names_`
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

}  // namespace wrapir::io::detail::json
