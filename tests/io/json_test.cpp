// Tests of include/wrapir/io/json.hpp: round trips (program -> JSON ->
// program is `==` in the same context, JSON -> program -> JSON is the same
// text) for every line kind, the float forms, the defaults of table
// entries, and the diagnostics for malformed, hostile and inconsistent
// documents.

#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/query.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/program.hpp>

#include <doctest/doctest.h>

#include <boost/mp11/algorithm.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace {

using namespace wrapir;
using namespace wrapir::ir;
using expr::Expr;
using io::program_from_json;
using io::to_json;

/// Loads `text` into `into`'s context and checks both round-trip
/// properties against `original`.
void check_round_trip(const Program& original) {
  const std::string text = to_json(original);
  auto same_context = program_from_json(text, {.context = original.context});
  REQUIRE_MESSAGE(same_context.ok(), same_context.error().message);
  CHECK(same_context.value() == original);
  CHECK(to_json(same_context.value()) == text);

  // A fresh context gives an equal program up to the context.
  auto fresh = program_from_json(text);
  REQUIRE_MESSAGE(fresh.ok(), fresh.error().message);
  CHECK(fresh.value().context != original.context);
  CHECK(to_json(fresh.value()) == text);

  // The pretty form holds the same program.
  const std::string pretty = to_json(original, {.pretty = true});
  CHECK(pretty != text);
  auto from_pretty = program_from_json(pretty, {.context = original.context});
  REQUIRE_MESSAGE(from_pretty.ok(), from_pretty.error().message);
  CHECK(from_pretty.value() == original);
  CHECK(to_json(from_pretty.value(), {.pretty = true}) == pretty);
}

/// The message of the diagnostic that loading `text` gives ("<loaded>" if
/// it loads).
std::string load_error(std::string_view text, io::JsonLoadOptions options = {}) {
  auto r = program_from_json(text, options);
  if (r.ok()) return "<loaded>";
  CHECK(r.error().message.find('\n') == std::string::npos);  // one line
  return r.error().message;
}

#define CHECK_LOAD_ERROR(text, expected)                                                      \
  do {                                                                                        \
    const std::string message_ = load_error(text);                                            \
    INFO("diagnostic: " << message_);                                                         \
    CHECK(message_.find(expected) != std::string::npos);                                      \
  } while (false)

/// `s` as a JSON string literal (for building test documents).
std::string json_literal(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[static_cast<unsigned char>(c) >> 4];
      out += hex[c & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string document(std::string_view program) {
  return R"({"format":"wrapir","version":1,"program":)" + std::string(program) + "}";
}

/// A small valid program, with `body` as its lines (a JSON array's
/// contents) and `extra` spliced into its object.
std::string small_program(std::string_view body, std::string_view extra = "") {
  return document(R"({"name":"p","symbols":[{"name":"s0","hint":8}],)"
                  R"("buffers":[{"name":"buf0","dtype":"float32","device":"cuda:0","sizes":["s0",4],"strides":[4,1]},)"
                  R"({"name":"buf1","dtype":"float32","device":"cuda:0","sizes":["s0"],"strides":["1"]}],)"
                  R"("kernels":[{"name":"k0","signature":[{"name":"in_ptr0","type":"*fp32"}]}],)"
                  R"("body":[)" +
                  std::string(body) + "]" + std::string(extra) + "}");
}

// ---------------------------------------------------------------------------
// A program with every line kind

/// Declares in the subgraph `sb` builds the symbols its input layouts
/// mention (Builder::subgraph gives inputs the operands' layouts but
/// declares only the symbols passed as operands), read from the input.
void declare_layout_symbols(Builder& sb) {
  Program& g = sb.program();
  for (std::size_t i = 0; i < g.buffers.size(); ++i) {
    const Layout& l = g.buffers[i].layout;
    std::vector<Expr> exprs = l.sizes;
    exprs.insert(exprs.end(), l.strides.begin(), l.strides.end());
    exprs.push_back(l.storage_offset);
    for (Expr e : exprs)
      for (Expr sym : expr::free_symbols(e))
        if (!g.find_symbol(sym))
          g.symbols.push_back(SymbolDecl{sym, SymbolOrigin::input_shape, BufferId{static_cast<std::uint32_t>(i)},
                                         {}, std::nullopt});
  }
}

Program every_line_kind_program() {
  Program p{"every_kind"};
  Builder b{p};
  expr::Context& ctx = b.ctx();
  const Expr four = ctx.integer(4);
  const Expr s0 = b.size_symbol("s0", 1024);
  const BufferId x = b.input("arg0_1", {s0, four}, f32);
  const BufferId donated = b.input("arg1_1", Layout::contiguous(ctx, {s0}, i64, cuda_device(0)), true);
  const Expr s1 = b.shape_symbol("s1", x, KeyStep{KeyStepKind::size, 1, ""}, 4);
  const Expr u0 = b.unbacked_symbol("u0");
  const Expr u1 = b.unbacked_symbol("u1", 3);
  b.comment("every line kind,\twith a tab and \"quotes\" and a \\ backslash");

  // memory
  const BufferId a = b.empty({s0, s1}, f32);
  const BufferId c = b.empty({s0, s1}, f32);
  b.append(FreeIfNotReused{c, true});
  const BufferId reused = b.declare("buf_reused", Layout::contiguous(ctx, {s0, s1}, f32, cuda_device(0)),
                                    BufferRole::intermediate);
  b.append(Reuse{c, reused, false});
  b.append(Null{});
  p.pools.push_back(PoolDecl{"pool0", cuda_device(0), ctx.integer(1 << 20)});
  const PoolId pool{0};
  b.append(PoolCreate{pool});
  const BufferId carved = b.declare("buf_carved", Layout::contiguous(ctx, {s0}, f16, cuda_device(0)),
                                    BufferRole::intermediate);
  b.append(AllocFromPool{carved, pool, expr::mul(s0, ctx.integer(64))});
  b.append(DeallocFromPool{carved, pool, true});
  const BufferId comm = b.comm_buffer({s0}, bf16, "group \"world\"\n");
  b.free({comm});
  const BufferId ws = b.workspace(expr::mul(s0, s1), WorkspaceZeroMode::zero_on_call, "ws_inner");
  b.free({ws});
  b.append(DeviceCopy{BufferArg{a, View{{s0}, {ctx.integer(1)}, ctx.integer(2)}}, BufferArg{x, std::nullopt}, true});

  // views
  const BufferId view = b.view(a, {s1, s0}, {ctx.integer(1), s1}, ctx.integer(0));

  // kernels
  KernelMetadata meta;
  meta.constants = {NamedArg{"XBLOCK", Arg(std::int64_t{1024})}, NamedArg{"flag", Arg(true)}};
  meta.num_warps = 4;
  meta.num_stages = 2;
  meta.shared_memory_bytes = 0;
  meta.grid_type = GridType::grid_2d;
  meta.block = {BlockSize{"XBLOCK", 1024}, BlockSize{"YBLOCK", 16}};
  const KernelId k = b.triton_kernel("triton_poi_fused_add_0",
                                     "@triton.jit\ndef kernel(in_ptr0, out_ptr0, xnumel):\n    s = \"\\n\"\n",
                                     "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32", meta);
  const KernelId k_cuda = b.kernel("cuda_kernel", KernelLanguage::cubin, BinaryRef{"/tmp/k.cubin", "entry_fn"},
                                   "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
  b.call(k, {x, a, expr::mul(s0, s1)});
  b.call(k_cuda, {BufferArg{x, View{{s0}, {ctx.integer(1)}, ctx.integer(0)}}, a, std::int64_t{7}},
         {.grid = ExplicitGrid{expr::ceil_div(s0, ctx.integer(128)), ctx.integer(1), ctx.integer(1)},
          .device = cuda_device(1),
          .stream = 2});
  b.call(k, {x, a, s0},
         {.grid = TypedGrid{GridType::grid_1d, {NamedExpr{"xnumel", s0}}, {BlockSize{"XBLOCK", 256}}}});
  b.computed_symbol("triton_poi_fused_add_0_xnumel", expr::mul(s0, s1));
  const KernelId multi = b.multi_kernel({k, k_cuda}, {{ArgSlice{0, 3}}, {ArgSlice{0, 2}, ArgSlice{2, 3}}},
                                        {ShapeKey{{1024, 4}, {4}}, std::nullopt});
  b.call_multi(multi, {x, a, s0}, {.stream = 1});

  // extern
  const BufferId mm = b.extern_alloc("aten.mm.default", {x, a}, Layout::contiguous(ctx, {s0, s0}, f32, cuda_device(0)),
                                     {NamedArg{"alpha", Arg(0.5)}, NamedArg{"reduce", Arg("sum")}});
  b.extern_out("extern_kernels.addmm", {a, Arg(None{}), Arg(DType::float16), Arg(cuda_device(0))}, BufferArg{mm},
               {NamedArg{"beta", Arg(std::int64_t{2})}});
  const BufferId multi_result = b.extern_alloc_multi("aten.topk.default", {x, std::int64_t{3}});
  const std::vector<BufferId> parts = b.unpack(multi_result, {Layout::contiguous(ctx, {four}, f32, cuda_device(0)),
                                                              Layout::contiguous(ctx, {four}, i64, cuda_device(0))});
  b.append(ExternKernelMultiOut{std::nullopt, "aten.sort.values_stable",
                                {x, Arg(ArgList{{Arg(std::int64_t{1}), Arg(ArgList{{Arg(false)}})}})},
                                {NamedArg{"dim", Arg(std::int64_t{-1})}},
                                {NamedBuffer{"values", BufferArg{parts[0]}}, NamedBuffer{"indices", BufferArg{parts[1]}}}});
  b.append(ExternKernelMultiOut{multi_result, "aten.max.dim", {x}, {}, {}});
  b.append(MultiOutput{view, multi_result, {KeyStep{KeyStepKind::key, 0, "values"}, KeyStep{KeyStepKind::index, 1, ""}}});
  b.append(ScatterFallback{"aten.scatter_", a, 1, BufferArg{parts[1]}, Arg(1.5), {NamedArg{"reduce", Arg("add")}}});
  b.append(IndexPutFallback{"aten.index_put_", a, {BufferArg{parts[1]}, std::nullopt}, BufferArg{x}, true});
  b.dynamic_scalar(u0, parts[1], {KeyStep{KeyStepKind::divide_by, 2, ""}});
  b.append(UnbackedSymbolDefs{multi_result, {SymbolBinding{u1, {KeyStep{KeyStepKind::index, 0, ""},
                                                                KeyStep{KeyStepKind::size, 1, ""}}}}});
  b.assert_size_stride(x);

  // control
  const std::vector<BufferId> cond_out = b.conditional(
      Arg(expr::gt(s0, ctx.integer(16))), {Arg(x), Arg(s0)},
      [&](Builder& sb, std::span<const ProgramInput> inputs) {
        declare_layout_symbols(sb);
        const BufferId in = boost::variant2::get<BufferId>(inputs[0]);
        const BufferId out = sb.empty({sb.ctx().find_symbol("s0"), sb.ctx().integer(4)}, f32);
        sb.extern_out("aten.add.out", {in, std::int64_t{1}}, BufferArg{out});
        sb.output(out);
      },
      [&](Builder& sb, std::span<const ProgramInput> inputs) {
        declare_layout_symbols(sb);
        sb.output(boost::variant2::get<BufferId>(inputs[0]));
      });
  (void)cond_out;
  b.while_loop(
      {Arg(a)}, {Arg(s1)},
      [&](Builder& sb, std::span<const ProgramInput> inputs) {
        declare_layout_symbols(sb);
        const BufferId flag = sb.empty({}, b8);
        sb.extern_out("aten.any.out", {boost::variant2::get<BufferId>(inputs[0])}, BufferArg{flag});
        sb.output(flag);
      },
      [&](Builder& sb, std::span<const ProgramInput> inputs) {
        declare_layout_symbols(sb);
        const BufferId in = boost::variant2::get<BufferId>(inputs[0]);
        sb.output(in);
        sb.output(boost::variant2::get<Expr>(inputs[1]));
        sb.output(None{});
        sb.program().outputs.resize(1);  // one carried value
      });
  b.append(EnterSubgraph{GraphId{0}});
  b.append(ExitSubgraph{});
  b.enter_device(cuda_device(1));
  b.append(EnterStreamContext{1});
  b.append(GetRawStream{cuda_device(1), 1});
  b.append(ExitStreamContext{});
  b.exit_device();
  b.free({donated});
  b.append(FreeIfNotReused{a, false});
  b.append(Free{x});
  b.output(mm);
  b.output(BufferArg{view, View{{s0}, {ctx.integer(1)}, ctx.integer(3)}});
  b.output(s1);
  b.output(None{});
  return p;
}

std::set<std::string_view> kinds_in(const Program& p) {
  std::set<std::string_view> kinds;
  for (const Line& l : p.body) kinds.insert(kind_name(l));
  for (const Program& g : p.subgraphs)
    for (std::string_view k : kinds_in(g)) kinds.insert(k);
  return kinds;
}

TEST_CASE("io/json: a program with every line kind round trips") {
  const Program p = every_line_kind_program();
  CHECK(kinds_in(p).size() == line_kind_count);
  check_round_trip(p);
}

TEST_CASE("io/json: the document names its format and version") {
  Program p{"empty_program"};
  const std::string text = to_json(p);
  CHECK(text == R"({"format":"wrapir","version":1,"program":{"name":"empty_program","symbols":[],"buffers":[],)"
                R"("kernels":[],"pools":[],"inputs":[],"body":[],"outputs":[],"subgraphs":[]}})");
  check_round_trip(p);
}

TEST_CASE("io/json: pretty output indents one value per line") {
  Program p{"pretty"};
  Builder b{p};
  const Expr s0 = b.size_symbol("s0");
  b.output(s0);
  const std::string text = to_json(p, {.pretty = true, .indent = 2});
  CHECK(text.find("{\n  \"format\": \"wrapir\",\n  \"version\": 1,\n  \"program\": {\n    \"name\": \"pretty\"") == 0);
  CHECK(text.find("\"body\": [],") != std::string::npos);  // empty containers stay on one line
  check_round_trip(p);
}

// ---------------------------------------------------------------------------
// Every kind in LineKinds, each field filled with a value that is not its
// default: a new line kind (or field type) without a JSON form fails here.

struct Fixture {
  Program program{"fixture"};
  Expr s0, u0;

  Fixture() {
    Builder b{program};
    expr::Context& ctx = b.ctx();
    s0 = b.size_symbol("s0", 64);
    u0 = b.unbacked_symbol("u0");
    b.input("buf0", {s0}, f32);
    b.input("buf1", {s0, ctx.integer(2)}, f16);
    b.declare_kernel("k0", KernelLanguage::triton, {});
    b.declare_kernel("k1", KernelLanguage::cuda, {KernelParam{"x", ParamType{true, DType::float32}}});
    program.pools.push_back(PoolDecl{"pool0", cuda_device(0), ctx.integer(256)});
    program.pools.push_back(PoolDecl{"pool1", cpu_device(), expr::mul(s0, ctx.integer(8))});
    program.subgraphs.emplace_back("sub0", program.context);
    program.subgraphs.emplace_back("sub1", program.context);
  }

  // Values unlike the defaults (id 0, false, 0, empty).
  void sample(BufferId& v) const { v = BufferId{1}; }
  void sample(KernelId& v) const { v = KernelId{1}; }
  void sample(PoolId& v) const { v = PoolId{1}; }
  void sample(GraphId& v) const { v = GraphId{1}; }
  void sample(Expr& v) const { v = expr::add(expr::mul(s0, s0.context().integer(2)), u0); }
  void sample(bool& v) const { v = true; }
  void sample(std::int64_t& v) const { v = -7; }
  void sample(std::uint32_t& v) const { v = 3; }
  void sample(std::string& v) const { v = "text with \"quotes\", a \\ and a\ttab"; }
  void sample(Name& v) const { v = "sample_name"; }
  void sample(OpName& v) const { v = "aten.sample.default"; }
  void sample(Device& v) const { v = cuda_device(3); }
  void sample(DType& v) const { v = DType::bfloat16; }
  void sample(ParamType& v) const { v = ParamType{true, DType::float16}; }
  template <class E>
    requires std::is_enum_v<E>
  void sample(E& v) const {
    v = static_cast<E>(1);
  }
  template <class T>
  void sample(std::optional<T>& v) const {
    sample(v.emplace());
  }
  template <class T>
  void sample(std::vector<T>& v) const {
    v.resize(2);
    sample(v[0]);
    sample(v[1]);
  }
  void sample(View& v) const {
    sample(v.sizes);
    sample(v.strides);
    sample(v.offset);
  }
  void sample(BufferArg& v) const {
    sample(v.buffer);
    sample(v.view);
  }
  void sample(Arg& v) const {
    expr::Context& ctx = s0.context();
    v = ArgList{{Arg(None{}), Arg(BufferArg{BufferId{1}, View{{s0}, {ctx.integer(1)}, ctx.integer(5)}}),
                 Arg(BufferId{0}), Arg(expr::mul(s0, u0)), Arg(std::int64_t{-3}), Arg(0.25), Arg(true),
                 Arg("a string"), Arg(cuda_device(2)), Arg(DType::int8), Arg(ArgList{{Arg(ArgList{})}})}};
  }
  void sample(NamedArg& v) const {
    sample(v.name);
    sample(v.value);
  }
  void sample(NamedBuffer& v) const {
    sample(v.name);
    sample(v.buffer);
  }
  void sample(NamedExpr& v) const {
    sample(v.name);
    sample(v.value);
  }
  void sample(BlockSize& v) const {
    sample(v.name);
    sample(v.value);
  }
  void sample(ArgSlice& v) const { v = ArgSlice{1, 4}; }
  void sample(KeyStep& v) const { v = KeyStep{KeyStepKind::key, 2, "values"}; }
  void sample(SymbolBinding& v) const {
    v.symbol = u0;
    sample(v.path);
  }
  void sample(LaunchGrid& v) const {
    TypedGrid g;
    sample(g.type);
    sample(g.numels);
    sample(g.block);
    v = g;
  }
  void sample(KernelSource& v) const { v = BinaryRef{"/tmp/kernel.cubin", "kernel_entry"}; }
  void sample(KernelMetadata& v) const {
    sample(v.constants);
    sample(v.num_warps);
    sample(v.num_stages);
    sample(v.shared_memory_bytes);
    sample(v.grid_type);
    sample(v.block);
  }
};

TEST_CASE("io/json: every kind of LineKinds round trips with every field set") {
  boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, LineKinds>>([](auto identity) {
    using T = typename decltype(identity)::type;
    INFO("line kind " << T::kind);
    Fixture f;
    T line{};
    for_each_field(line, [&](std::string_view, auto& field) { f.sample(field); });
    f.program.body.emplace_back(line);
    // A line with defaults too (absent optionals, empty lists), except for
    // what a valid program never holds: null expressions, empty names.
    T defaults{};
    for_each_field(defaults, [&](std::string_view, auto& field) {
      using F = std::remove_cvref_t<decltype(field)>;
      if constexpr (std::is_same_v<F, Expr>) {
        f.sample(field);
      } else if constexpr (std::is_same_v<F, Name> || std::is_same_v<F, OpName>) {
        if (field.text.empty()) f.sample(field);
      }
    });
    f.program.body.emplace_back(defaults);
    check_round_trip(f.program);
  });
}

TEST_CASE("io/json: the other launch grids and kernel sources round trip") {
  Fixture f;
  expr::Context& ctx = f.s0.context();
  f.program.body.emplace_back(KernelCall{KernelId{0}, {}, {}, LauncherGrid{}, cpu_device(), 0});
  f.program.body.emplace_back(
      KernelCall{KernelId{0}, {}, {}, ExplicitGrid{f.s0, ctx.integer(1), ctx.integer(65535)}, cuda_device(0), 0});
  f.program.body.emplace_back(KernelDefinition{KernelId{1}, SourceText{"__global__ void k() {}\n"}, KernelMetadata{}});
  check_round_trip(f.program);
}

TEST_CASE("io/json: nested subgraphs round trip") {
  Program p{"outer"};
  Builder b{p};
  const Expr s0 = b.size_symbol("s0", 4);
  const BufferId x = b.input("arg0_1", {s0}, f32);
  std::function<void(Builder&, std::span<const ProgramInput>, int)> nest;
  nest = [&](Builder& sb, std::span<const ProgramInput> in, int depth) {
    declare_layout_symbols(sb);
    const BufferId arg = boost::variant2::get<BufferId>(in[0]);
    if (depth == 0) {
      sb.output(arg);
      return;
    }
    const auto out = sb.conditional(
        Arg(true), {Arg(arg)}, [&](Builder& t, std::span<const ProgramInput> i) { nest(t, i, depth - 1); },
        [&](Builder& e, std::span<const ProgramInput> i) {
          declare_layout_symbols(e);
          e.output(boost::variant2::get<BufferId>(i[0]));
        });
    sb.output(out[0]);
  };
  const auto out = b.conditional(
      Arg(x), {Arg(x)}, [&](Builder& t, std::span<const ProgramInput> i) { nest(t, i, 5); },
      [&](Builder& e, std::span<const ProgramInput> i) {
        declare_layout_symbols(e);
        e.output(boost::variant2::get<BufferId>(i[0]));
      });
  b.output(out[0]);
  check_round_trip(p);
  CHECK(to_json(p).find("true_graph_0") != std::string::npos);
}

// ---------------------------------------------------------------------------
// Floats

TEST_CASE("io/json: floats round trip exactly, with inf, nan and -0.0") {
  const std::vector<double> values{0.1,
                                   -0.0,
                                   0.0,
                                   1.0,
                                   -2.5,
                                   1.0 / 3.0,
                                   1e300,
                                   1e22,
                                   123456789012345680.0,
                                   5e-324,
                                   2.2250738585072014e-308,
                                   1.3927926388013963e-143,  // misread by Boost.JSON 1.81's own conversion
                                   5.409760742964738e+124,
                                   std::numeric_limits<double>::max(),
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN()};
  Fixture f;
  std::vector<Arg> args;
  for (double d : values) args.emplace_back(d);
  f.program.body.emplace_back(ExternKernelOut{"aten.floats", args, {}, BufferArg{BufferId{0}}});
  const std::string text = to_json(f.program);
  CHECK(text.find(R"({"float":-0.0})") != std::string::npos);
  CHECK(text.find(R"({"float":1.0})") != std::string::npos);
  CHECK(text.find(R"({"float":"inf"})") != std::string::npos);
  CHECK(text.find(R"({"float":"-inf"})") != std::string::npos);
  CHECK(text.find(R"({"float":"nan"})") != std::string::npos);

  auto loaded = program_from_json(text, {.context = f.program.context});
  REQUIRE_MESSAGE(loaded.ok(), loaded.error().message);
  const auto& line = std::get<ExternKernelOut>(loaded.value().body.back());
  REQUIRE(line.args.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    INFO("value " << i);
    const double* d = line.args[i].get_if<double>();
    REQUIRE(d != nullptr);
    if (std::isnan(values[i])) {
      CHECK(std::isnan(*d));
    } else {
      CHECK(std::memcmp(d, &values[i], sizeof(double)) == 0);  // the sign of zero too
    }
  }
  CHECK(to_json(loaded.value()) == text);
}

TEST_CASE("io/json: floats may be written as JSON integers and exponents") {
  const std::string text =
      small_program(R"({"kind":"ExternKernelOut","kernel":"aten.x","args":[{"float":3},{"float":1E2},)"
                    R"({"float":-1.5e-3}],"kwargs":[],"out":{"buffer":"buf0"}})");
  auto loaded = program_from_json(text);
  REQUIRE_MESSAGE(loaded.ok(), loaded.error().message);
  const auto& line = std::get<ExternKernelOut>(loaded.value().body[0]);
  CHECK(*line.args[0].get_if<double>() == 3.0);
  CHECK(*line.args[1].get_if<double>() == 100.0);
  CHECK(*line.args[2].get_if<double>() == -1.5e-3);
}

// ---------------------------------------------------------------------------
// Table defaults and hand-written documents

TEST_CASE("io/json: table fields equal to their defaults are left out and may be absent") {
  Program p{"defaults"};
  Builder b{p};
  const Expr s0 = b.size_symbol("s0");
  b.empty({s0}, f32);
  const std::string text = to_json(p);
  CHECK(text.find(R"({"name":"s0"})") != std::string::npos);
  CHECK(text.find(R"({"name":"buf0","dtype":"float32","device":"cuda:0","sizes":["s0"],"strides":["1"]})") !=
        std::string::npos);

  auto loaded = program_from_json(small_program(R"({"kind":"Allocate","buffer":"buf1"})"));
  REQUIRE_MESSAGE(loaded.ok(), loaded.error().message);
  const Program& q = loaded.value();
  const BufferDecl& buf0 = q.buffers[0];
  CHECK(buf0.role == BufferRole::intermediate);
  CHECK(buf0.layout.storage_offset.is_integer(0));
  CHECK(buf0.layout.sizes[1].is_integer(4));  // a JSON integer is an expression
  CHECK(!buf0.donated);
  CHECK(!buf0.comm);
  CHECK(!buf0.multi_output);
  CHECK(buf0.stream == 0);
  CHECK(buf0.aligned);
  CHECK(q.symbols[0].origin == SymbolOrigin::input);
  CHECK(q.symbols[0].symbol.assumption() == expr::Assumption::positive);
  CHECK(!q.symbols[0].symbol.unbacked());
  CHECK(q.symbols[0].hint == 8);
  CHECK(q.kernels[0].language == KernelLanguage::triton);
  CHECK(q.inputs.empty());
  CHECK(q.outputs.empty());
  CHECK(std::get<Allocate>(q.body[0]).buffer == BufferId{1});
}

TEST_CASE("io/json: members may come in any order") {
  const std::string text = document(
      R"({"body":[{"buffer":"b","kind":"Allocate"}],"buffers":[{"strides":["1"],"sizes":["n"],"device":"cpu",)"
      R"("dtype":"int64","name":"b"}],"symbols":[{"unbacked":true,"assumption":"nonnegative","name":"n",)"
      R"("origin":"unbacked"}],"name":"reordered"})");
  auto loaded = program_from_json(text);
  REQUIRE_MESSAGE(loaded.ok(), loaded.error().message);
  CHECK(loaded.value().symbols[0].symbol.unbacked());
  CHECK(loaded.value().buffers[0].layout.sizes[0].name() == "n");
}

TEST_CASE("io/json: expressions repeat as the same node, also across subgraphs") {
  const Program p = every_line_kind_program();
  auto loaded = program_from_json(to_json(p));
  REQUIRE(loaded.ok());
  const Program& q = loaded.value();
  CHECK(q.buffers[0].layout.sizes[0] == q.symbols[0].symbol);
  CHECK(q.subgraphs[0].context == q.context);
  const SymbolDecl* sub_s0 = nullptr;
  for (const SymbolDecl& s : q.subgraphs[0].symbols)
    if (s.symbol.name() == "s0") sub_s0 = &s;
  REQUIRE(sub_s0 != nullptr);
  CHECK(sub_s0->symbol == q.symbols[0].symbol);
}

TEST_CASE("io/json: free text is escaped and comes back unchanged") {
  Fixture f;
  const std::string nasty = std::string("\"\\\n\r\t\b\f") + '\0' + "\x01\x1f\x7f end \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  f.program.body.emplace_back(KernelDefinition{KernelId{0}, SourceText{nasty}, KernelMetadata{}});
  f.program.body.emplace_back(
      ExternKernelOut{"aten.x", {Arg(nasty)}, {}, BufferArg{BufferId{0}}});
  const std::string text = to_json(f.program);
  for (char c : text) CHECK(static_cast<unsigned char>(c) >= 0x20);  // no raw control characters
  check_round_trip(f.program);
}

TEST_CASE("io/json: invalid UTF-8 in free text is written as U+FFFD") {
  Fixture f;
  f.program.body.emplace_back(KernelDefinition{KernelId{0}, SourceText{"a\xff" "b\xc3"}, KernelMetadata{}});
  const std::string text = to_json(f.program);
  CHECK(text.find(R"("a\ufffdb\ufffd")") != std::string::npos);
  auto loaded = program_from_json(text);
  REQUIRE(loaded.ok());
  CHECK(boost::variant2::get<SourceText>(std::get<KernelDefinition>(loaded.value().body[0]).source).text ==
        "a\xef\xbf\xbd" "b\xef\xbf\xbd");
}

TEST_CASE("io/json: to_json appends to a string") {
  Program p{"appended"};
  std::string out = "prefix:";
  to_json(p, out);
  CHECK(out == "prefix:" + to_json(p));
}

TEST_CASE("io/json: ill-formed programs are written so that loading refuses them") {
  Fixture f;
  f.program.body.emplace_back(Allocate{BufferId{9}});
  CHECK(to_json(f.program).find("<invalid buffer id 9>") != std::string::npos);
  CHECK(load_error(to_json(f.program)).find("unknown buffer '<invalid buffer id 9>'") != std::string::npos);

  Fixture g;
  g.program.body.emplace_back(AllocFromPool{BufferId{0}, PoolId{0}, Expr{}});
  CHECK(load_error(to_json(g.program)).find("$.program.body[0].offset_bytes: expected an expression") !=
        std::string::npos);
}

// ---------------------------------------------------------------------------
// Diagnostics

TEST_CASE("io/json: the version and format are checked first") {
  CHECK(load_error(R"({"format":"wrapir","version":7,"program":{}})") ==
        "$.version: unsupported version 7 (this wrapir reads version 1)");
  CHECK_LOAD_ERROR(R"({"format":"wrapir","program":{}})", "$: missing field 'version'");
  CHECK_LOAD_ERROR(R"({"format":"wrapir","version":"1","program":{}})",
                   "$.version: expected an integer, got a string");
  CHECK_LOAD_ERROR(R"({"format":"other","version":1,"program":{}})", "$.format: expected the string \"wrapir\"");
  CHECK_LOAD_ERROR(R"({"version":1,"program":{}})", "$: missing field 'format'");
  CHECK_LOAD_ERROR(R"([1,2])", "$: expected an object, got an array");
  CHECK_LOAD_ERROR(R"({"format":"wrapir","version":1,"program":{"name":"p"},"extra":1})",
                   "$: unknown field 'extra'");
}

TEST_CASE("io/json: missing fields, wrong types and unknown fields") {
  CHECK(load_error(small_program(R"({"kind":"Allocate"})")) == "$.program.body[0]: missing field 'buffer'");
  CHECK(load_error(small_program(R"({"kind":"Allocate","buffer":3})")) ==
        "$.program.body[0].buffer: expected a string, got a number");
  CHECK_LOAD_ERROR(small_program(R"({"buffer":"buf0"})"), "$.program.body[0]: missing field 'kind'");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"Allocate","buffer":"buf0","bufer":"buf0"})"),
                   "$.program.body[0]: unknown field 'bufer' (expected: kind, buffer)");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"FreeIfNotReused","buffer":"buf0","reused":1})"),
                   "$.program.body[0].reused: expected a boolean, got a number");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"EnterStreamContext","stream":4294967296})"),
                   "$.program.body[0].stream: integer 4294967296 is out of range");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"EnterStreamContext","stream":1.5})"),
                   "$.program.body[0].stream: expected an integer, got a number with a fraction");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"ScatterFallback","kernel":"aten.scatter_","self":"buf0",)"
                                 R"("dim":18446744073709551615,"index":{"buffer":"buf1"},"src":{"int":1},"kwargs":[]})"),
                   "$.program.body[0].dim: integer 18446744073709551615 is out of range");
  CHECK_LOAD_ERROR(small_program("", R"(,"inputs":{})"), "$.program.inputs: expected an array, got an object");
  CHECK_LOAD_ERROR(small_program("", R"(,"outputs":[{"int":3}])"),
                   "$.program.outputs[0]: a program output is a buffer, an expression or none, got int");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"WorkspaceAllocate","workspace":"buf1","zero_mode":"ZERO",)"
                                 R"("inner_name":"ws"})"),
                   "$.program.body[0].zero_mode: unknown workspace zero mode 'ZERO' (expected one of UNINITIALIZED, "
                   "ZERO_ON_CALL, ZERO_PER_GRAPH)");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"GetRawStream","device":"gpu:0","stream":0})"),
                   "$.program.body[0].device: invalid device 'gpu:0'");
  // Found by the fuzzer: a device with a line break once made a two-line diagnostic.
  CHECK(load_error(small_program(R"({"kind":"GetRawStream","device":"cuda:\n0","stream":0})")) ==
        "$.program.body[0].device: invalid device 'cuda:\\x0a0': expected such as cuda:0 or cpu");
  CHECK_LOAD_ERROR(document(R"({"name":"p","buffers":[{"name":"b","dtype":"float33","device":"cpu","sizes":[],)"
                            R"("strides":[]}]})"),
                   "$.program.buffers[0].dtype: unknown dtype 'float33'");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"KernelCall","kernel":"k0","args":[{"buffer":"buf0"}],)"
                                 R"("arg_types":["*fp33"],"grid":{"kind":"launcher"},"device":"cuda:0","stream":0})"),
                   "$.program.body[0].arg_types[0]: unknown parameter type '*fp33'");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"KernelCall","kernel":"k0","args":[],"arg_types":[],)"
                                 R"("grid":{"kind":"magic"},"device":"cuda:0","stream":0})"),
                   "$.program.body[0].grid.kind: unknown grid kind 'magic'");
}

TEST_CASE("io/json: unknown line kinds and arguments") {
  CHECK(load_error(small_program(R"({"kind":"Null"},{"kind":"Null"},{"kind":"Alocate","buffer":"buf0"})")) ==
        "$.program.body[2].kind: unknown line kind 'Alocate'");
  const std::string call_prefix = R"({"kind":"ExternKernelOut","kernel":"aten.x","kwargs":[],"out":{"buffer":"buf0"},"args":)";
  CHECK_LOAD_ERROR(small_program(call_prefix + R"([{"integer":3}]})"),
                   "$.program.body[0].args[0]: unknown argument key 'integer'");
  CHECK_LOAD_ERROR(small_program(call_prefix + R"([{"int":3,"float":2.0}]})"),
                   "$.program.body[0].args[0]: expected an argument: an object with one key");
  CHECK_LOAD_ERROR(small_program(call_prefix + R"([{}]})"), "$.program.body[0].args[0]: expected an argument");
  CHECK_LOAD_ERROR(small_program(call_prefix + R"([{"float":"infinity"}]})"),
                   "$.program.body[0].args[0].float: expected a number or one of \"inf\"");
  CHECK_LOAD_ERROR(small_program(call_prefix + R"([{"none":0}]})"), "$.program.body[0].args[0].none: expected null");
  CHECK_LOAD_ERROR(small_program(call_prefix + R"([{"list":[{"list":[{"buffer":"nope"}]}]}]})"),
                   "$.program.body[0].args[0].list[0].list[0].buffer: unknown buffer 'nope'");
  CHECK_LOAD_ERROR(small_program(call_prefix + R"([{"buffer":"buf0","view":{"sizes":[],"strides":[]}}]})"),
                   "$.program.body[0].args[0].view: missing field 'offset'");
  CHECK_LOAD_ERROR(small_program(call_prefix + R"([{"buffer":"buf0","vew":{}}]})"),
                   "$.program.body[0].args[0]: unknown field 'vew'");
}

TEST_CASE("io/json: references must name an entry of the right table") {
  CHECK(load_error(small_program(R"({"kind":"Null"},{"kind":"Null"},{"kind":"Null"},{"kind":"Allocate","buffer":"buf9"})")) ==
        "$.program.body[3].buffer: unknown buffer 'buf9'");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"Allocate","buffer":"k0"})"),
                   "$.program.body[0].buffer: 'k0' is a kernel, not a buffer");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"EnterSubgraph","graph":"buf0"})"),
                   "$.program.body[0].graph: 'buf0' is a buffer, not a subgraph");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"PoolCreate","pool":"pool7"})"), "unknown pool 'pool7'");
  CHECK_LOAD_ERROR(small_program("", R"(,"inputs":[{"buffer":"missing"}])"),
                   "$.program.inputs[0].buffer: unknown buffer 'missing'");
  // A subgraph's lines refer to the subgraph's own tables.
  CHECK_LOAD_ERROR(small_program("", R"(,"subgraphs":[{"name":"g","body":[{"kind":"Allocate","buffer":"buf0"}]}])"),
                   "$.program.subgraphs[0].body[0].buffer: unknown buffer 'buf0'");
}

TEST_CASE("io/json: duplicate names and duplicate keys") {
  CHECK_LOAD_ERROR(document(R"({"name":"p","buffers":[{"name":"buf0","dtype":"float32","device":"cpu","sizes":[],)"
                            R"("strides":[]},{"name":"buf0","dtype":"float32","device":"cpu","sizes":[],"strides":[]}]})"),
                   "$.program.buffers[1].name: duplicate name 'buf0': already the name of buffer 0 of program 'p'");
  // One namespace for all tables: generated code has one.
  CHECK_LOAD_ERROR(small_program("", R"(,"pools":[{"name":"k0","device":"cuda:0","size_bytes":64}])"),
                   "$.program.pools[0].name: duplicate name 'k0': already the name of kernel 0");
  CHECK_LOAD_ERROR(small_program("", R"(,"subgraphs":[{"name":"s0"}])"),
                   "$.program.subgraphs[0].name: duplicate name 's0': already the name of symbol 0");
  // The same name in a subgraph is fine: it has its own tables.
  CHECK(load_error(small_program("", R"(,"subgraphs":[{"name":"g","buffers":[{"name":"buf0","dtype":"float32",)"
                                     R"("device":"cpu","sizes":[],"strides":[]}]}])")) == "<loaded>");

  const std::string dup = small_program(R"({"kind":"Allocate","buffer":"buf0","buffer":"buf1"})");
  const std::string message = load_error(dup);
  CHECK(message.find("invalid JSON at line 1, column") == 0);
  CHECK(message.find("duplicate key 'buffer'") != std::string::npos);
  // Escaped keys are compared after unescaping.
  const std::string escaped_key = small_program(R"({"kind":"Allocate","buffer":"buf0","buff\u0065r":"buf1"})");
  CHECK_LOAD_ERROR(escaped_key, "duplicate key 'buffer'");
  // Large objects too.
  std::string many = R"({"format":"wrapir","version":1,"program":{"name":"p")";
  for (int i = 0; i < 40; ++i) many += ",\"k" + std::to_string(i) + "\":0";
  many += ",\"k17\":1}}";
  CHECK_LOAD_ERROR(many, "duplicate key 'k17'");
}

TEST_CASE("io/json: hostile names are refused wherever a name goes into code") {
  const std::vector<std::string> hostile{"x; import os", "__import__('os')", "a'b", "a\"b", "a\nb", "class", ""};
  for (const std::string& bad : hostile) {
    INFO("name " << json_literal(bad));
    const std::string q = json_literal(bad);
    CHECK_LOAD_ERROR(document(R"({"name":)" + q + "}"), "$.program.name: invalid program name");
    CHECK_LOAD_ERROR(
        document(R"({"name":"p","buffers":[{"name":)" + q + R"(,"dtype":"float32","device":"cpu","sizes":[],"strides":[]}]})"),
        "$.program.buffers[0].name: invalid buffer name");
    CHECK_LOAD_ERROR(document(R"({"name":"p","kernels":[{"name":)" + q + "}]}"),
                     "$.program.kernels[0].name: invalid kernel name");
    CHECK_LOAD_ERROR(document(R"({"name":"p","pools":[{"name":)" + q + R"(,"device":"cpu","size_bytes":1}]})"),
                     "$.program.pools[0].name: invalid pool name");
    CHECK_LOAD_ERROR(document(R"({"name":"p","symbols":[{"name":)" + q + "}]}"),
                     "$.program.symbols[0].name: invalid symbol name");
    CHECK_LOAD_ERROR(document(R"({"name":"p","subgraphs":[{"name":)" + q + "}]}"),
                     "$.program.subgraphs[0].name: invalid subgraph name");
    CHECK_LOAD_ERROR(document(R"({"name":"p","kernels":[{"name":"k","signature":[{"name":)" + q +
                              R"(,"type":"i32"}]}]})"),
                     "$.program.kernels[0].signature[0].name: invalid kernel parameter name");
    CHECK_LOAD_ERROR(small_program(R"({"kind":"WorkspaceAllocate","workspace":"buf1","zero_mode":"ZERO_ON_CALL",)"
                                   R"("inner_name":)" + q + "}"),
                     "$.program.body[0].inner_name: invalid name");
    CHECK_LOAD_ERROR(small_program(R"({"kind":"ExternKernelOut","kernel":"aten.x","args":[],)"
                                   R"("kwargs":[{"name":)" + q + R"(,"value":{"int":1}}],"out":{"buffer":"buf0"}})"),
                     "$.program.body[0].kwargs[0].name: invalid name");
    if (bad != "class")  // a part of an operator path may be a keyword (aten.max.default)
      CHECK_LOAD_ERROR(small_program(R"({"kind":"ExternKernelOut","kernel":)" + json_literal("aten." + bad) +
                                     R"(,"args":[],"kwargs":[],"out":{"buffer":"buf0"}})"),
                       "$.program.body[0].kernel: invalid operator name");
    CHECK_LOAD_ERROR(small_program(R"({"kind":"KernelDefinition","kernel":"k0","source":{"kind":"text","text":""},)"
                                   R"("metadata":{"block":[{"name":)" + q + R"(,"value":1}]}})"),
                     "$.program.body[0].metadata.block[0].name: invalid name");
  }
  // Operator paths may hold keywords of the other language, not code.
  CHECK(load_error(small_program(R"({"kind":"ExternKernelOut","kernel":"aten.max.default","args":[],"kwargs":[],)"
                                 R"("out":{"buffer":"buf0"}})")) == "<loaded>");
  const std::string call_in_op = small_program(
      R"J({"kind":"ExternKernelOut","kernel":"os.system('rm')","args":[],"kwargs":[],"out":{"buffer":"buf0"}})J");
  CHECK_LOAD_ERROR(call_in_op, "invalid operator name");
}

TEST_CASE("io/json: comments must be one line") {
  CHECK_LOAD_ERROR(small_program(R"({"kind":"Comment","text":"two\nlines"})"),
                   "$.program.body[0].text: comment text must be one line");
  const std::string bell = small_program(R"({"kind":"Comment","text":"bell\u0007"})");
  CHECK_LOAD_ERROR(bell, "comment text must be one line");
  CHECK(load_error(small_program(R"({"kind":"Comment","text":"tab\tis fine; import os"})")) == "<loaded>");
}

TEST_CASE("io/json: expressions may only use the program's own symbols") {
  auto ctx = std::make_shared<expr::Context>();
  const std::string undeclared =
      document(R"({"name":"p","buffers":[{"name":"b","dtype":"float32","device":"cpu","sizes":["s7*2"],"strides":[1]}]})");
  CHECK(load_error(undeclared, {.context = ctx}) ==
        "$.program.buffers[0].sizes[0]: expression 's7*2' uses the symbol 's7', which the symbol table of program "
        "'p' does not declare");
  CHECK(!ctx->find_symbol("s7"));  // refused before parsing could create it

  // A subgraph declares the symbols it uses, even those of its parent.
  CHECK_LOAD_ERROR(small_program("", R"(,"subgraphs":[{"name":"g","outputs":[{"expr":"s0 + 1"}]}])"),
                   "$.program.subgraphs[0].outputs[0].expr: expression 's0 + 1' uses the symbol 's0'");
  CHECK(load_error(small_program("", R"(,"subgraphs":[{"name":"g","symbols":[{"name":"s0"}],)"
                                     R"("outputs":[{"expr":"s0 + 1"}]}])")) == "<loaded>");
  // A name of another table is not a symbol.
  CHECK_LOAD_ERROR(small_program("", R"(,"outputs":[{"expr":"buf0 + 1"}])"), "uses the symbol 'buf0'");
  // Function names, keywords and comments are the parser's business.
  CHECK(load_error(small_program("", R"(,"outputs":[{"expr":"max(s0, 2) # comment mentions zz"}])")) == "<loaded>");
  CHECK_LOAD_ERROR(small_program("", R"(,"outputs":[{"expr":"s0 +"}])"),
                   "$.program.outputs[0].expr: invalid expression 's0 +': column 5:");
  const std::string import_call = small_program("", R"J(,"outputs":[{"expr":"__import__('os')"}])J");
  CHECK_LOAD_ERROR(import_call, "invalid expression");
  CHECK_LOAD_ERROR(small_program("", R"(,"outputs":[{"expr":true}])"),
                   "$.program.outputs[0].expr: expected an expression (a string such as \"s0*4\", or an integer), "
                   "got a boolean");
}

TEST_CASE("io/json: symbols conflicting with the context are refused") {
  auto ctx = std::make_shared<expr::Context>();
  (void)ctx->symbol("s0", expr::Assumption::integer);
  CHECK(load_error(small_program(""), {.context = ctx}).find("$.program.symbols[0]: symbol 's0' already exists") == 0);
  CHECK_LOAD_ERROR(small_program("", R"(,"subgraphs":[{"name":"g","symbols":[{"name":"s0","assumption":"integer"}]}])"),
                   "$.program.subgraphs[0].symbols[0]: symbol 's0' already exists as positive");
}

TEST_CASE("io/json: malformed JSON gives its line and column") {
  CHECK(load_error("{\"format\": \"wrapir\",\n  \"version\": 1,\n  \"program\": [1, 2,]}")
            .find("invalid JSON at line 3, column") == 0);
  CHECK_LOAD_ERROR(R"({"format":"wrapir")", "invalid JSON at line 1, column 19 (byte 18)");
  CHECK_LOAD_ERROR("", "invalid JSON at line 1, column 1");
  CHECK_LOAD_ERROR(R"({"format":"wrapir"} trailing)", "unexpected text after the document");
  CHECK_LOAD_ERROR("{\"a\":\"\xff\"}", "invalid JSON");                   // not UTF-8
  CHECK_LOAD_ERROR("{\"a\":\"x\ny\"}", "invalid JSON");                   // raw control character
  CHECK_LOAD_ERROR(R"({"a":1} // comment)", "invalid JSON");              // no extensions
  CHECK_LOAD_ERROR(R"({"a":NaN})", "invalid JSON");
}

TEST_CASE("io/json: nesting and size are bounded") {
  // Lists in lists: each level costs two JSON levels.
  std::string deep = R"({"kind":"ExternKernelOut","kernel":"aten.x","kwargs":[],"out":{"buffer":"buf0"},"args":[)";
  for (int i = 0; i < 200; ++i) deep += R"({"list":[)";
  for (int i = 0; i < 200; ++i) deep += "]}";
  deep += "]}";
  const std::string text = small_program(deep);
  CHECK_LOAD_ERROR(text, "nesting deeper than 256 levels (JsonLoadOptions::max_depth)");
  CHECK(load_error(text, {.max_depth = 1000}) == "<loaded>");

  // Brackets alone, far deeper than any stack would take.
  const std::string brackets(1'000'000, '[');
  CHECK_LOAD_ERROR(brackets, "nesting deeper than 256 levels");

  // Subgraphs in subgraphs.
  std::string nested = R"({"name":"g0")";
  for (int i = 1; i < 200; ++i) nested += R"(,"subgraphs":[{"name":"g)" + std::to_string(i) + "\"";
  for (int i = 1; i < 200; ++i) nested += "}]";
  nested += "}";
  CHECK_LOAD_ERROR(document(nested), "nesting deeper than");

  CHECK(load_error(small_program(""), {.max_bytes = 100}).find("more than the limit of 100 (JsonLoadOptions::max_bytes)") !=
        std::string::npos);

  // Deep expressions are bounded by max_expression_depth.
  std::string expression = "s0";
  for (int i = 0; i < 300; ++i) expression = "(" + expression + ")";
  const std::string deep_expr = small_program("", R"(,"outputs":[{"expr":")" + expression + "\"}]");
  CHECK_LOAD_ERROR(deep_expr, "nests deeper than 256 levels");
  CHECK(load_error(deep_expr, {.max_expression_depth = 400}) == "<loaded>");
}

TEST_CASE("io/json: a failed load returns no program") {
  // The error is found after most of the program was read.
  auto r = program_from_json(small_program(R"({"kind":"Null"},{"kind":"Allocate","buffer":"buf0"},{"kind":"Bad"})"));
  REQUIRE(!r.ok());
  CHECK(r.error().message == "$.program.body[2].kind: unknown line kind 'Bad'");
  CHECK(!r.error().column);
}

}  // namespace
