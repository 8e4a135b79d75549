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

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <limits>
#include <memory>
#include <optional>
#include <random>
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
    std::vector<Expr> exprs = l.sizes.to_vector();
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
  p.pools.push_back(PoolDecl{"pool0", cuda_device(0), ctx.integer(1 << 20),
                             PoolTensor{DType::float32, {ctx.integer(512), ctx.integer(512)}, {ctx.integer(512), ctx.integer(1)}}});
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
  b.append(AssertSizeStride{x, {s0}, {ctx.integer(1)}, "aten.mm.default"});
  b.append(AssertAlignment{x, 16, "aten._scaled_dot_product_flash_attention_for_cpu.default"});
  b.append(AssertScalar{expr::le(u0, s0), "u0 <= s0"});

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
  void sample(OptionalBox<T>& v) const {
    sample(v.emplace());
  }
  template <class T>
  void sample(Box<T>& v) const {
    sample(*v);
  }
  template <class T>
  void sample(std::vector<T>& v) const {
    v.resize(2);
    sample(v[0]);
    sample(v[1]);
  }
  template <class T>
  void sample(VectorBox<T>& v) const {
    std::vector<T> items;
    sample(items);
    v = std::move(items);
  }
  template <class T, std::size_t N>
  void sample(wrapir::ir::SmallVector<T, N>& v) const {
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
    sample(v.triton_meta);
    sample(v.inductor_meta);
    sample(v.const_params);
  }
  void sample(AutotuneHint& v) const { v = AutotuneHint::one_element_per_thread; }
  // Records sampled field by field.
  template <class R>
    requires(std::is_same_v<R, TritonMeta> || std::is_same_v<R, InductorMeta> || std::is_same_v<R, ParamAttribute> ||
             std::is_same_v<R, Provenance>)
  void sample(R& r) const {
    for_each_field(r, [&](std::string_view, auto& field) { sample(field); });
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

TEST_CASE("io/json: kernel metadata and provenance as Inductor records them") {
  // What the exporter writes for a Triton kernel of Inductor 2.11 and its call.
  const std::string definition =
      R"({"kind":"KernelDefinition","kernel":"k0","source":{"kind":"text","text":"src"},)"
      R"("metadata":{"grid_type":"Grid1D","triton_meta":{"device":"cuda:0","compute_capability":90,"warp_size":32,)"
      R"("constexprs":["XBLOCK"],"attributes":[{"param":"in_ptr0","name":"tt.divisibility","value":16}],)"
      R"("launch_pdl":false},"inductor_meta":{"kernel_name":"k0","mutated_arg_names":["in_ptr0"],)"
      R"("autotune_hints":["ONE_ELEMENT_PER_THREAD"],"num_load":2,"num_store":1,"num_reduction":0,)"
      R"("backend_hash":"91D1D116"}},"provenance":{"source_nodes":["add","relu"],"aten":["aten.add","aten.relu"]}})";
  const std::string call = R"({"kind":"KernelCall","kernel":"k0","args":[{"buffer":"buf1"}],"arg_types":["*fp32"],)"
                           R"("grid":{"kind":"launcher"},"device":"cuda:0","stream":0,)"
                           R"("provenance":{"source_nodes":["relu"],"context":"relu"}})";
  auto loaded = program_from_json(small_program(definition + "," + call));
  REQUIRE_MESSAGE(loaded.ok(), loaded.error().message);
  const Program& p = loaded.value();
  const auto& def = std::get<KernelDefinition>(p.body[0]);
  REQUIRE(def.metadata->triton_meta);
  REQUIRE(def.metadata->inductor_meta);
  const TritonMeta& t = *def.metadata->triton_meta;
  CHECK(t.device == cuda_device(0));
  CHECK(t.compute_capability == 90);
  CHECK(t.warp_size == 32);
  CHECK(t.constexprs == std::vector<Name>{"XBLOCK"});
  CHECK(t.attributes == std::vector<ParamAttribute>{{"in_ptr0", "tt.divisibility", 16}});
  CHECK(t.launch_pdl == false);
  const InductorMeta& n = *def.metadata->inductor_meta;
  CHECK(n.kernel_name == Name{"k0"});
  CHECK(n.mutated_arg_names == std::vector<Name>{"in_ptr0"});
  CHECK(n.autotune_hints == std::vector<AutotuneHint>{AutotuneHint::one_element_per_thread});
  CHECK(n.num_load == 2);
  CHECK(n.num_store == 1);
  CHECK(n.num_reduction == 0);
  CHECK(n.backend_hash == "91D1D116");
  CHECK(def.provenance == Provenance{{"add", "relu"}, {"aten.add", "aten.relu"}, std::nullopt});
  CHECK(std::get<KernelCall>(p.body[1]).provenance == Provenance{{"relu"}, {}, "relu"});
  check_round_trip(p);
  // Written as read: defaulted lists and absent optionals stay out.
  const std::string text = to_json(p);
  CHECK(text.find(R"("provenance":{"source_nodes":["relu"],"context":"relu"})") != std::string::npos);
  CHECK(text.find("const_params") == std::string::npos);
}

TEST_CASE("io/json: files written before kernel metadata and provenance still load") {
  auto loaded = program_from_json(small_program(
      R"({"kind":"KernelDefinition","kernel":"k0","source":{"kind":"text","text":"src"},"metadata":{"num_warps":4}},)"
      R"({"kind":"ExternKernelOut","kernel":"extern_kernels.mm","args":[],"kwargs":[],"out":{"buffer":"buf1"}})"));
  REQUIRE_MESSAGE(loaded.ok(), loaded.error().message);
  const auto& def = std::get<KernelDefinition>(loaded.value().body[0]);
  CHECK(!def.metadata->triton_meta);
  CHECK(!def.metadata->inductor_meta);
  CHECK(def.metadata->const_params.empty());
  CHECK(!def.provenance);
  CHECK(!std::get<ExternKernelOut>(loaded.value().body[1]).provenance);
}

TEST_CASE("io/json: bad kernel metadata and provenance are refused where they are") {
  const auto definition = [](std::string_view metadata) {
    return small_program(R"({"kind":"KernelDefinition","kernel":"k0","source":{"kind":"text","text":"s"},"metadata":)" +
                         std::string(metadata) + "}");
  };
  CHECK_LOAD_ERROR(definition(R"({"inductor_meta":{"autotune_hints":["MANY_ELEMENTS"]}})"),
                   "$.program.body[0].metadata.inductor_meta.autotune_hints[0]: unknown autotune hint "
                   "'MANY_ELEMENTS' (expected one of ONE_ELEMENT_PER_THREAD)");
  CHECK_LOAD_ERROR(definition(R"({"triton_meta":{"attributes":[{"param":"in_ptr0","value":16}]}})"),
                   "$.program.body[0].metadata.triton_meta.attributes[0]: missing field 'name'");
  CHECK_LOAD_ERROR(definition(R"({"triton_meta":{"warp_size":"32"}})"),
                   "$.program.body[0].metadata.triton_meta.warp_size: expected an integer, got a string");
  CHECK_LOAD_ERROR(definition(R"({"inductor_meta":{"mutated_arg_names":["in ptr"]}})"),
                   "$.program.body[0].metadata.inductor_meta.mutated_arg_names[0]: invalid name 'in ptr'");
  CHECK_LOAD_ERROR(definition(R"({"const_params":"in_ptr0"})"),
                   "$.program.body[0].metadata.const_params: expected an array, got a string");
  CHECK_LOAD_ERROR(small_program(R"({"kind":"KernelCall","kernel":"k0","args":[],"arg_types":[],)"
                                 R"("grid":{"kind":"launcher"},"device":"cuda:0","stream":0,)"
                                 R"("provenance":{"source_nodes":[1]}})"),
                   "$.program.body[0].provenance.source_nodes[0]: expected a string, got a number");
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

// ---------------------------------------------------------------------------
// Reading while parsing. When a document's format and version and a
// program's tables come first, as to_json writes them, table entries and
// lines are decoded as soon as their objects close; in any other member
// order, from the first line that names something not read yet, they wait
// for the end of the document. Either way the result and the first
// diagnostic must be the same.

/// A program like an Inductor wrapper's, of `ops` blocks: allocate, maybe a
/// view, launch, free the previous buffer.
Program long_program(int ops) {
  Program p{"long_program"};
  Builder b{p};
  expr::Context& ctx = b.ctx();
  const Expr s0 = b.size_symbol("s0", 64);
  const Expr four = ctx.integer(4);
  BufferId prev = b.input("arg0_1", {s0, four}, f32);
  const KernelId k =
      b.triton_kernel("triton_poi_fused_0", "@triton.jit\ndef kernel(in_ptr0, out_ptr0, xnumel):\n    pass\n",
                      "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
  for (int i = 0; i < ops; ++i) {
    const BufferId out = b.empty({s0, four}, f32);
    const BufferId in = i % 3 == 2 ? b.view(prev, {s0}, {four}, ctx.integer(1)) : prev;
    b.call(k, {in, out, expr::mul(s0, four)});
    if (i > 0) b.free({prev});
    prev = out;
  }
  b.output(prev);
  return p;
}

/// A context in which the symbol s0 of the test programs already exists
/// with other assumptions.
std::shared_ptr<expr::Context> conflicting_context() {
  auto ctx = std::make_shared<expr::Context>();
  (void)ctx->symbol("s0", expr::Assumption::integer);
  return ctx;
}

/// What loading `text` into `context` (a fresh one when null) gives: the
/// program as to_json writes it, or the diagnostic.
std::string outcome(std::string_view text, std::shared_ptr<expr::Context> context = nullptr) {
  auto r = program_from_json(text, {.context = std::move(context)});
  return r.ok() ? "loaded " + to_json(r.value()) : "refused: " + r.error().message;
}

/// What reading ahead did while loading `text`.
io::detail::json::LoadStatistics statistics(std::string_view text, std::shared_ptr<expr::Context> context = nullptr) {
  io::detail::json::LoadStatistics s;
  auto r = io::detail::json::load_program(text, {.context = std::move(context)}, &s);
  INFO(text.substr(0, 300));
  CHECK_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return s;
}

enum class MemberOrder { reversed, shuffled };

/// A program object with its members in another order, its subgraphs' too.
boost::json::object reorder_program(const boost::json::object& program, MemberOrder order, std::mt19937& rng) {
  std::vector<std::string> keys;
  for (const auto& member : program) keys.emplace_back(member.key());
  if (order == MemberOrder::reversed) std::reverse(keys.begin(), keys.end());
  else std::shuffle(keys.begin(), keys.end(), rng);
  boost::json::object out;
  for (const std::string& key : keys) {
    boost::json::value v = program.at(key);
    if (key == "subgraphs" && v.is_array())
      for (boost::json::value& g : v.as_array())
        if (g.is_object()) g = reorder_program(g.as_object(), order, rng);
    out[key] = std::move(v);
  }
  return out;
}

std::string reordered(const boost::json::value& doc, MemberOrder order, unsigned seed) {
  boost::json::value copy = doc;
  std::mt19937 rng(seed);
  if (boost::json::value* program = copy.as_object().if_contains("program"); program && program->is_object())
    *program = reorder_program(program->as_object(), order, rng);
  return boost::json::serialize(copy);
}

/// Breaks one thing in `program` (or in one of its subgraphs), or moves
/// something that may break nothing.
void mutate(boost::json::object& root, std::mt19937& rng) {
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  boost::json::object* program = &root;
  if (pick(3) == 0 && !root["subgraphs"].as_array().empty()) {
    boost::json::array& subgraphs = root["subgraphs"].as_array();
    program = &subgraphs[pick(subgraphs.size())].as_object();
  }
  auto table = [&](const char* key) -> boost::json::array& {
    if (!program->contains(key)) (*program)[key] = boost::json::array{};
    return (*program)[key].as_array();
  };
  boost::json::array& body = table("body");
  boost::json::array& buffers = table("buffers");
  boost::json::array& symbols = table("symbols");
  auto some_line = [&]() -> boost::json::object* {
    if (body.empty()) return nullptr;
    boost::json::value& line = body[pick(body.size())];
    return line.is_object() ? &line.as_object() : nullptr;
  };
  auto some_name = [&]() -> boost::json::value {
    const boost::json::array& t = table(pick(2) ? "buffers" : "kernels");
    if (t.empty() || !t[0].is_object()) return "nope";
    const boost::json::value& entry = t[pick(t.size())];
    return entry.is_object() && entry.as_object().contains("name") ? entry.at("name") : boost::json::value("nope");
  };
  switch (pick(21)) {
    case 0:
      if (auto* line = some_line()) (*line)["buffer"] = "nope";
      break;
    case 1:
      if (auto* line = some_line()) (*line)["kind"] = "Bad";
      break;
    case 2:
      if (auto* line = some_line(); line && !line->empty())
        line->erase(std::next(line->begin(), static_cast<std::ptrdiff_t>(pick(line->size()))));
      break;
    case 3:
      if (auto* line = some_line()) (*line)["extra"] = 1;
      break;
    case 4:
      if (!body.empty()) body[pick(body.size())] = 7;
      break;
    case 5:
      if (!buffers.empty() && buffers[0].is_object()) buffers[pick(buffers.size())].as_object()["dtype"] = "float33";
      break;
    case 6:
      if (!buffers.empty() && buffers[0].is_object()) buffers[pick(buffers.size())].as_object()["name"] = some_name();
      break;
    case 7:
      if (!buffers.empty()) buffers[pick(buffers.size())] = boost::json::array{};
      break;
    case 8: {
      boost::json::array& kernels = table("kernels");
      if (!kernels.empty() && kernels[0].is_object()) kernels[pick(kernels.size())].as_object()["name"] = some_name();
      break;
    }
    case 9:
      if (!symbols.empty() && symbols[0].is_object())
        symbols[pick(symbols.size())].as_object()["assumption"] = pick(2) ? "integer" : "bogus";
      break;
    case 10: table("outputs").push_back(boost::json::object{{"int", 3}}); break;
    case 11: (*program)["name"] = "a b"; break;
    case 12: (*program)["extra"] = 1; break;
    case 13:
      body.insert(std::next(body.begin(), static_cast<std::ptrdiff_t>(pick(body.size() + 1))),
                  boost::json::object{{"kind", "EnterSubgraph"}, {"graph", pick(2) ? "nope" : "true_graph_0"}});
      break;
    case 14:
      if (!buffers.empty() && buffers[0].is_object())
        buffers[pick(buffers.size())].as_object()["sizes"] = boost::json::array{pick(2) ? "s9" : "s0 +"};
      break;
    case 15:
      table("pools").push_back(boost::json::object{{"name", some_name()}, {"device", "cpu"}, {"size_bytes", 8}});
      break;
    case 16:
      if (body.size() >= 2) std::swap(body[pick(body.size())], body[pick(body.size())]);
      break;
    case 17:
      // A subgraph named by a line read ahead, renamed or made another
      // kind of name.
      if (root.contains("subgraphs") && !root["subgraphs"].as_array().empty()) {
        boost::json::value& g = root["subgraphs"].as_array()[0];
        if (g.is_object()) g.as_object()["name"] = pick(2) ? "renamed_graph" : "arg0_1";
      }
      break;
    case 18:
      // A line that names a subgraph and also has an error further on.
      if (auto* line = some_line(); line && line->contains("outputs")) (*line)["outputs"] = boost::json::array{"nope"};
      break;
    case 19:
      // A symbol read from a buffer, which comes after it.
      if (!symbols.empty() && symbols[0].is_object())
        symbols[pick(symbols.size())].as_object()["source"] = pick(2) ? boost::json::value("nope") : some_name();
      break;
    default:
      if (auto* line = some_line())
        for (auto& member : *line)
          if (member.value().is_array())
            for (boost::json::value& arg : member.value().as_array())
              if (arg.is_object() && arg.as_object().contains("expr"))
                arg.as_object()["expr"] = pick(2) ? "zz*2" : "s0 +";
      break;
  }
}

TEST_CASE("io/json: lines and entries read while parsing keep their diagnostics") {
  const Program p = long_program(500);  // past the first estimate of the body's length
  REQUIRE(p.body.size() > 1200);
  const boost::json::value doc = boost::json::parse(to_json(p));
  auto with = [&](auto change) {
    boost::json::value copy = doc;
    change(copy.as_object()["program"].as_object());
    return load_error(boost::json::serialize(copy));
  };
  std::size_t allocate = 1100, call = 1100;
  while (!std::holds_alternative<Allocate>(p.body[allocate])) ++allocate;
  while (!std::holds_alternative<KernelCall>(p.body[call])) ++call;
  CHECK(with([&](boost::json::object& q) { q["body"].as_array()[allocate].as_object()["buffer"] = "nope"; }) ==
        "$.program.body[" + std::to_string(allocate) + "].buffer: unknown buffer 'nope'");
  CHECK(with([&](boost::json::object& q) { q["body"].as_array()[call].as_object()["buffer"] = "nope"; }) ==
        "$.program.body[" + std::to_string(call) +
            "]: unknown field 'buffer' (expected: kind, kernel, args, arg_types, grid, device, stream, provenance)");
  CHECK(with([](boost::json::object& q) { q["body"].as_array()[1202] = 7; }) ==
        "$.program.body[1202]: expected an object, got a number");
  CHECK(with([](boost::json::object& q) { q["buffers"].as_array()[300].as_object()["dtype"] = "float33"; })
            .find("$.program.buffers[300].dtype: unknown dtype 'float33'") == 0);
  CHECK(with([](boost::json::object& q) { q["buffers"].as_array()[301] = boost::json::array{}; }) ==
        "$.program.buffers[301]: expected an object, got an array");
  // The first of several problems in the body: reading ahead stops at the
  // first, and the final pass reads the rest in order.
  CHECK(with([](boost::json::object& q) {
          boost::json::array& b = q["body"].as_array();
          b[40] = 7;
          b[900].as_object()["kind"] = "Bad";
          b[1300].as_object()["kind"] = "Worse";
        }) == "$.program.body[40]: expected an object, got a number");
  CHECK(with([](boost::json::object& q) {
          boost::json::array& b = q["body"].as_array();
          b[900].as_object()["kind"] = "Bad";
          b[1300].as_object()["kind"] = "Worse";
        }) == "$.program.body[900].kind: unknown line kind 'Bad'");
}

TEST_CASE("io/json: problems are reported in one order whatever the order of the members") {
  // Registering names comes before reading entries, entries before lines,
  // lines before outputs, the program before the document's own members.
  const std::string bad_line = R"({"kind":"Allocate","buffer":"nope"})";
  CHECK(load_error(small_program(bad_line, R"(,"pools":[{"name":"buf0","device":"cpu","size_bytes":8}])")) ==
        "$.program.pools[0].name: duplicate name 'buf0': already the name of buffer 0 of program 'p'");
  CHECK(load_error(small_program(bad_line, R"(,"outputs":[{"int":3}])")) ==
        "$.program.body[0].buffer: unknown buffer 'nope'");
  CHECK(load_error(small_program(bad_line, R"(,"name":"q")")).find("invalid JSON") == 0);  // a duplicate key
  CHECK(load_error(small_program(bad_line) + " x").find("invalid JSON") == 0);
  CHECK(load_error(document(R"({"name":"p","symbols":[{"name":"s0"}],"body":[{"kind":"Allocate","buffer":"nope"}],)"
                            R"("kernels":[{"name":"k0"}],"name2":1})")) ==
        "$.program: unknown field 'name2' (expected: name, symbols, buffers, kernels, pools, inputs, body, outputs, "
        "subgraphs)");
  CHECK(load_error(document(R"({"symbols":[],"body":[{"kind":"Allocate","buffer":"nope"}],"name":"a b"})")) ==
        "$.program.name: invalid program name 'a b': expected an identifier [A-Za-z_][A-Za-z0-9_]* that is not a "
        "keyword or a reserved name");
  // A bad buffer, then a kernel named like a buffer: the duplicate first.
  CHECK(load_error(document(R"({"name":"p","symbols":[],"buffers":[{"name":"b0","dtype":"float33","device":"cpu",)"
                            R"("sizes":[],"strides":[]},{"name":"b1","dtype":"float32","device":"cpu","sizes":[],)"
                            R"("strides":[]}],"kernels":[{"name":"b1"}]})")) ==
        "$.program.kernels[0].name: duplicate name 'b1': already the name of buffer 1 of program 'p'");
  // A bad buffer, then a bad line: the buffer first.
  CHECK(load_error(document(R"({"name":"p","symbols":[],"buffers":[{"name":"b0","dtype":"float33","device":"cpu",)"
                            R"("sizes":[],"strides":[]}],"body":[{"kind":"Bad"}]})")) ==
        "$.program.buffers[0].dtype: unknown dtype 'float33' (expected a name such as float32)");
  // The document's own members after the program's problems.
  CHECK(load_error(R"({"program":{"name":"p","symbols":[],"body":[{"kind":"Bad"}]},"format":"wrapir","version":1,)"
                   R"("extra":1})") == "$.program.body[0].kind: unknown line kind 'Bad'");
  CHECK(load_error(R"({"program":{"name":"p","symbols":[],"body":[{"kind":"Bad"}]},"format":"wrapir","version":2})") ==
        "$.version: unsupported version 2 (this wrapir reads version 1)");
  // A table whose key repeats after an entry that did not read ahead: the
  // duplicate key, not a count gone wrong.
  CHECK(load_error(document(R"({"name":"p","symbols":[],"buffers":[{"name":"a","dtype":"float32","device":"cpu",)"
                            R"("sizes":[],"strides":[]},{"name":"b","dtype":"float33","device":"cpu","sizes":[],)"
                            R"("strides":[]}],"buffers":[]})")) ==
        "invalid JSON at line 1, column 231 (byte 230): duplicate key 'buffers' in the object ending here");
}

TEST_CASE("io/json: lines may name what comes after them") {
  // Tables after the body, and subgraphs after the body as to_json writes them.
  const std::string text = document(
      R"({"name":"p","symbols":[{"name":"s0"}],"body":[{"kind":"Allocate","buffer":"b"},{"kind":"EnterSubgraph",)"
      R"("graph":"g"},{"kind":"ExitSubgraph"},{"kind":"PoolCreate","pool":"pool0"}],"buffers":[{"name":"b",)"
      R"("dtype":"float32","device":"cpu","sizes":["s0"],"strides":[1]}],"kernels":[],"pools":[{"name":"pool0",)"
      R"("device":"cpu","size_bytes":"s0*4"}],"subgraphs":[{"name":"g"}]})");
  auto loaded = program_from_json(text);
  REQUIRE_MESSAGE(loaded.ok(), loaded.error().message);
  const Program& q = loaded.value();
  REQUIRE(q.body.size() == 4);
  CHECK(std::get<Allocate>(q.body[0]).buffer == BufferId{0});
  CHECK(std::get<EnterSubgraph>(q.body[1]).graph == GraphId{0});
  CHECK(std::get<PoolCreate>(q.body[3]).pool == PoolId{0});
  CHECK(outcome(text) == outcome(reordered(boost::json::parse(text), MemberOrder::reversed, 0)));
  CHECK(load_error(document(R"({"name":"p","symbols":[],"body":[{"kind":"Allocate","buffer":"b"}],"buffers":[{"name":)"
                            R"("c","dtype":"float32","device":"cpu","sizes":[],"strides":[]}]})")) ==
        "$.program.body[0].buffer: unknown buffer 'b'");
}

TEST_CASE("io/json: lines that name subgraphs are read while parsing, as to_json orders them") {
  const Program p = every_line_kind_program();
  REQUIRE(!p.subgraphs.empty());
  const std::string text = to_json(p);
  const io::detail::json::LoadStatistics s = statistics(text);
  CHECK(s.lines_read_ahead == total_lines(p));  // the subgraphs' lines too
  CHECK(s.entries_read_ahead > 0);
  check_round_trip(p);

  // Subgraph names that turn out wrong, once the subgraphs are read.
  const std::string tables =
      R"({"name":"p","symbols":[{"name":"s0"}],"buffers":[{"name":"b","dtype":"bool","device":"cpu","sizes":[],)"
      R"("strides":[]}],"body":[)";
  auto with_lines = [&](std::string_view lines, std::string_view graphs = R"({"name":"g"},{"name":"h"})") {
    return document(tables + std::string(lines) + R"(],"subgraphs":[)" + std::string(graphs) + "]}");
  };
  const std::string comment = R"({"kind":"Comment","text":"x"},)";
  CHECK(outcome(with_lines(comment + R"({"kind":"EnterSubgraph","graph":"h"},{"kind":"ExitSubgraph"})"))
            .rfind("loaded", 0) == 0);
  CHECK(load_error(with_lines(comment + R"({"kind":"EnterSubgraph","graph":"nope"},{"kind":"ExitSubgraph"})")) ==
        "$.program.body[1].graph: unknown subgraph 'nope'");
  CHECK(load_error(with_lines(R"({"kind":"EnterSubgraph","graph":"b"})")) ==
        "$.program.body[0].graph: 'b' is a buffer, not a subgraph");
  CHECK(load_error(with_lines(R"({"kind":"EnterSubgraph","graph":"g"})", R"({"name":"s0"})")) ==
        "$.program.subgraphs[0].name: duplicate name 's0': already the name of symbol 0 of program 'p'");
  const std::string loop = R"({"kind":"WhileLoop","cond_graph":"g","body_graph":"h","carried":[],"additional":[],)";
  CHECK(load_error(with_lines(comment + loop + R"("outputs":[]},)" + R"({"kind":"Conditional","predicate":)"
                                                                     R"({"bool":true},"true_graph":"h","false_graph":)"
                                                                     R"("x","operands":[],"outputs":[]})")) ==
        "$.program.body[2].false_graph: unknown subgraph 'x'");
  // A line read ahead with an unknown subgraph and another problem further
  // on: the subgraph is the first problem.
  CHECK(load_error(with_lines(R"({"kind":"WhileLoop","cond_graph":"x","body_graph":"h","carried":[],)"
                              R"("additional":[],"outputs":["nope"]})")) ==
        "$.program.body[0].cond_graph: unknown subgraph 'x'");
  CHECK(load_error(with_lines(loop + R"("outputs":["nope"]})")) ==
        "$.program.body[0].outputs[0]: unknown buffer 'nope'");
  // The lines after one naming a subgraph are still read while parsing.
  std::string lines = R"({"kind":"EnterSubgraph","graph":"g"},{"kind":"ExitSubgraph"})";
  for (int i = 0; i < 2000; ++i) lines += "," + comment.substr(0, comment.size() - 1);
  CHECK(statistics(with_lines(lines)).lines_read_ahead == 2002);
}

TEST_CASE("io/json: symbols read from buffers are read while parsing, as to_json orders them") {
  const Program p = every_line_kind_program();
  const boost::json::value doc = boost::json::parse(to_json(p));
  const boost::json::array& symbols = doc.at("program").at("symbols").as_array();
  std::size_t shape = 0;
  while (shape < symbols.size() && !symbols[shape].as_object().contains("source")) ++shape;
  REQUIRE(shape < symbols.size());
  REQUIRE(shape + 1 < symbols.size());
  // The outcome in writer order, and in reversed order, where nothing is
  // read ahead.
  auto both = [&](auto change) {
    boost::json::value copy = doc;
    change(copy.at("program").at("symbols").as_array());
    const std::string text = boost::json::serialize(copy);
    const std::string writer_order = outcome(text);
    CHECK(outcome(reordered(copy, MemberOrder::reversed, 0)) == writer_order);
    return writer_order;
  };
  const std::string at = "refused: $.program.symbols[" + std::to_string(shape) + "]";
  CHECK(both([&](boost::json::array& t) { t[shape].as_object()["source"] = "nope"; }) ==
        at + ".source: unknown buffer 'nope'");
  CHECK(both([&](boost::json::array& t) { t[shape].as_object()["source"] = "s0"; }) ==
        at + ".source: 's0' is a symbol, not a buffer");
  // An unknown buffer, then a bad field: the buffer first.
  CHECK(both([&](boost::json::array& t) {
          t[shape].as_object()["source"] = "nope";
          t[shape].as_object()["path"] = 7;
        }) == at + ".source: unknown buffer 'nope'");
  const std::string bad_path = both([&](boost::json::array& t) { t[shape].as_object()["path"] = 7; });
  CHECK(bad_path.rfind(at + ".path: expected an array", 0) == 0);
  // An unknown buffer, then a later symbol that does not read: the buffer.
  CHECK(both([&](boost::json::array& t) {
          t[shape].as_object()["source"] = "nope";
          t[shape + 1].as_object()["assumption"] = "bogus";
        }) == at + ".source: unknown buffer 'nope'");
  CHECK(statistics(to_json(p)).entries_read_ahead >= p.symbols.size() + p.buffers.size());
}

TEST_CASE("io/json: a body longer than the sample estimate reads the same in every member order") {
  const Program p = long_program(700);
  REQUIRE(p.body.size() > 2 * io::detail::json::body_sample);
  const std::string text = to_json(p);
  const boost::json::value doc = boost::json::parse(text);
  const std::string expected = outcome(text);
  REQUIRE(expected.rfind("loaded", 0) == 0);
  const io::detail::json::LoadStatistics writer_order = statistics(text);
  CHECK(writer_order.lines_read_ahead == p.body.size());
  // The estimate of the body's length leaves little room unused, before
  // any is given back.
  CHECK(writer_order.largest_body_capacity >= p.body.size());
  CHECK(writer_order.largest_body_capacity <= p.body.size() + p.body.size() / 4 + 64);

  const std::string reversed = reordered(doc, MemberOrder::reversed, 0);
  CHECK(outcome(reversed) == expected);
  CHECK(statistics(reversed).lines_read_ahead == 0);  // the body before the symbols
  for (unsigned seed = 1; seed <= 4; ++seed) CHECK(outcome(reordered(doc, MemberOrder::shuffled, seed)) == expected);

  // The tables after the body: it stops being read ahead at its first line
  // that names a buffer, and the final pass reads the rest.
  boost::json::object program = doc.at("program").as_object();
  boost::json::object tables_last;
  for (const char* key : {"name", "symbols", "body", "buffers", "kernels", "pools", "inputs", "outputs", "subgraphs"})
    tables_last[key] = program.at(key);
  boost::json::value moved = doc;
  moved.as_object()["program"] = tables_last;
  const std::string tables_after_body = boost::json::serialize(moved);
  CHECK(outcome(tables_after_body) == expected);
  CHECK(statistics(tables_after_body).lines_read_ahead < p.body.size());
}

TEST_CASE("io/json: tables read while parsing keep no capacity unused, and read the same in every member order") {
  const Program p = long_program(1500);
  REQUIRE(p.buffers.size() > 1200);  // read ahead into chunks of 16, 32, ..., 1024 entries
  const std::string text = to_json(p);
  const std::string expected = outcome(text);
  REQUIRE(expected.rfind("loaded", 0) == 0);
  CHECK(statistics(text).entries_read_ahead >= p.symbols.size() + p.buffers.size());
  auto loaded = program_from_json(text);
  REQUIRE(loaded.ok());
  // Grown by doubling, the buffer table would have 2,048 entries of capacity.
  CHECK(loaded.value().buffers.capacity() == p.buffers.size());
  CHECK(to_json(loaded.value()) == text);
  CHECK(outcome(reordered(boost::json::parse(text), MemberOrder::reversed, 0)) == expected);

  // A table that stops being read ahead at an entry far into it: the entries
  // before it were read ahead (some of them dropped from the chunk they were
  // made in), the final pass reads the rest and reports the first problem.
  boost::json::value doc = boost::json::parse(text);
  boost::json::array& buffers = doc.at("program").at("buffers").as_array();
  buffers[1100].as_object()["stream"] = "x";
  buffers[1200].as_object()["aligned"] = 3;
  const std::string bad = boost::json::serialize(doc);
  CHECK(load_error(bad).rfind("$.program.buffers[1100].stream: ", 0) == 0);
  CHECK(outcome(reordered(doc, MemberOrder::reversed, 0)) == outcome(bad));
}

TEST_CASE("io/json: escaped keys and strings in a long body load, and the body's estimate stays small") {
  // Every string of every line has escapes, so that the parser's position
  // is never seen in a string of the input.
  std::string escaped_lines, plain_lines;
  for (int i = 0; i < 1500; ++i) {
    escaped_lines += std::string(i ? "," : "") + R"({"\u006bind":"\u0043omment","\u0074ext":"\u0061"})";
    plain_lines += std::string(i ? "," : "") + R"({"kind":"Comment","text":"a"})";
  }
  const std::string text = document(R"({"name":"p","symbols":[],"body":[)" + escaped_lines + "]}");
  const std::string expected = outcome(document(R"({"name":"p","symbols":[],"body":[)" + plain_lines + "]}"));
  REQUIRE(expected.rfind("loaded", 0) == 0);
  CHECK(outcome(text) == expected);
  const io::detail::json::LoadStatistics s = statistics(text);
  CHECK(s.lines_read_ahead == 1500);
  // No more lines than the input could hold.
  CHECK(s.largest_body_capacity <= 1500 + text.size() / io::detail::json::min_line_bytes);
  CHECK(s.largest_body_capacity <= 4 * 1500);

  // The same with a megabyte of whitespace after the document.
  const std::string padded = text + std::string(std::size_t{1} << 20, ' ');
  CHECK(outcome(padded) == expected);
  CHECK(statistics(padded).largest_body_capacity <= 1500 + padded.size() / io::detail::json::min_line_bytes);
  auto loaded = program_from_json(padded);
  REQUIRE(loaded.ok());
  CHECK(loaded.value().body.capacity() <= 1500 + 1500 / 4 + 64);  // the rest given back
}

TEST_CASE("io/json: the estimate of a body's length is bounded by the input left") {
  using io::detail::json::body_capacity;
  using io::detail::json::min_line_bytes;
  // Doubling while small.
  CHECK(body_capacity(0, 0, 0, 1000) == 16);
  CHECK(body_capacity(64, 3000, 0, 100000) == 128);
  CHECK(body_capacity(64, 3000, 0, 260) == 64 + 1 + 20);  // only 20 more lines fit
  // From the bytes per line.
  CHECK(body_capacity(1024, 51200, 25600, 51200 * 9) == static_cast<std::size_t>((1024 + 1024 * 9) * 1.125 + 64));
  // Positions that lag behind the parser (no string seen in the input)
  // give no bytes per line: still no more lines than the input left holds.
  for (std::size_t read : {std::size_t{0}, std::size_t{1}, std::size_t{1024}}) {
    CHECK(body_capacity(1024, read, 0, 64 * 1024) <= 1024 + 1 + 64 * 1024 / min_line_bytes);
    CHECK(body_capacity(1024, read, read / 2, std::size_t{1} << 30) <= 1025 + (std::size_t{1} << 30) / min_line_bytes);
  }
  // Nothing left: room for the line in hand only.
  CHECK(body_capacity(5000, 200000, 150000, 0) == 5001);
  CHECK(body_capacity(5000, 200000, 150000, 12) == 5001);
}

TEST_CASE("io/json: a failed load makes no symbol in a context it was given") {
  const std::string head = R"({"format":"wrapir","version":1,"program":{"name":"p","symbols":[{"name":"zz",)"
                           R"("assumption":"integer"}],"body":[{"kind":"Comment","text":"x"})";
  for (const std::string& text :
       {head, head + "]}} x", head + R"(],"extra":1,"extra":2}})",
        std::string(R"({"program":{"name":"p","symbols":[{"name":"zz"}]},"format":"nope","version":1})")}) {
    auto ctx = std::make_shared<expr::Context>();
    INFO(text);
    CHECK(load_error(text, {.context = ctx}) != "<loaded>");
    CHECK(!ctx->find_symbol("zz"));
  }
  // A document that is not a wrapir program adds nothing at all, even to a
  // context that has its symbols.
  {
    auto ctx = std::make_shared<expr::Context>();
    (void)ctx->symbol("zz", expr::Assumption::integer);
    const std::size_t size = ctx->size();
    const std::string wrong_format =
        R"({"format":"wrapir!","version":1,"program":{"name":"p","symbols":[{"name":"zz","assumption":"integer"}],)"
        R"("buffers":[{"name":"b","dtype":"float32","device":"cpu","sizes":["zz*7 + 3"],"strides":[1]}]}})";
    CHECK(load_error(wrong_format, {.context = ctx}).find("$.format: expected the string") == 0);
    CHECK(ctx->size() == size);
  }
  // A whole document makes them, read ahead or not.
  auto ctx = std::make_shared<expr::Context>();
  CHECK(load_error(head + "]}}", {.context = ctx}) == "<loaded>");
  CHECK(ctx->find_symbol("zz").assumption() == expr::Assumption::integer);

  // A context that has the symbols already reads ahead, one without them
  // does not; both load the same program.
  const Program p = long_program(50);
  const std::string text = to_json(p);
  CHECK(statistics(text, p.context).lines_read_ahead == p.body.size());
  CHECK(statistics(text, std::make_shared<expr::Context>()).lines_read_ahead == 0);
  CHECK(outcome(text, std::make_shared<expr::Context>()) == outcome(text));
  CHECK(outcome(text, p.context) == outcome(text));
  // So does a document whose format comes after its program.
  boost::json::object late;
  late["program"] = boost::json::parse(text).at("program");
  late["format"] = "wrapir";
  late["version"] = 1;
  const std::string format_last = boost::json::serialize(late);
  CHECK(statistics(format_last).lines_read_ahead == 0);
  CHECK(outcome(format_last) == outcome(text));
}

TEST_CASE("io/json: names hash apart") {
  using io::detail::json::StringHash;
  const StringHash hash;
  CHECK(hash("buf0") == hash(std::string("buf0")));
  // Strings that differ in a byte or two anywhere, of every length up to
  // 40 (one word, two overlapping words, and the sixteen-byte steps), and
  // names as programs have them.
  std::set<std::string> strings;
  for (std::size_t n = 0; n <= 40; ++n) {
    const std::string s(n, 'a');
    strings.insert(s);
    for (std::size_t i = 0; i < n; ++i)
      for (char c : {'b', 'c', '`'}) {
        std::string t = s;
        t[i] = c;
        strings.insert(t);
        if (i + 1 < n) {
          t[i + 1] = 'b';
          strings.insert(t);
        }
      }
  }
  for (int i = 0; i < 20000; ++i) {
    strings.insert("buf" + std::to_string(i));
    strings.insert("triton_poi_fused_" + std::to_string(i));
  }
  std::set<std::size_t> hashes;
  for (const std::string& s : strings) hashes.insert(hash(s));
  CHECK(hashes.size() == strings.size());
}

TEST_CASE("io/json: property: member order changes neither the result nor the diagnostic") {
  const std::vector<Program> programs = [] {
    std::vector<Program> v;
    v.push_back(every_line_kind_program());
    v.push_back(long_program(30));
    return v;
  }();
  std::mt19937 rng(20261122);
  int refused = 0, trials = 0;
  for (const Program& p : programs) {
    const boost::json::value original = boost::json::parse(to_json(p));
    for (int trial = 0; trial < 150; ++trial) {
      boost::json::value doc = original;
      const int changes = 1 + static_cast<int>(rng() % 3);
      for (int c = 0; c < changes; ++c) mutate(doc.as_object()["program"].as_object(), rng);
      // A fresh context, the program's own (reading ahead with its symbols)
      // or one whose s0 conflicts with the document's.
      const unsigned which = rng() % 8;
      auto context = [&]() -> std::shared_ptr<expr::Context> {
        if (which == 0) return conflicting_context();
        if (which == 1) return p.context;
        return nullptr;
      };
      const std::string writer_order = boost::json::serialize(doc);
      const std::string expected = outcome(writer_order, context());
      INFO("document: " << writer_order);
      CHECK(outcome(reordered(doc, MemberOrder::reversed, 0), context()) == expected);
      const auto seed = static_cast<unsigned>(rng());
      CHECK(outcome(reordered(doc, MemberOrder::shuffled, seed), context()) == expected);
      refused += expected.rfind("refused", 0) == 0;
      ++trials;
    }
  }
  // Most mutations break something, and some leave a loadable program.
  CHECK(refused > trials / 2);
  CHECK(refused < trials);
}

}  // namespace
