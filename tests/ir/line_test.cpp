// Tests of include/wrapir/ir/line.hpp, reflect.hpp and line_hash.hpp: the kind list, the
// names derived from it, and the generic equality, hashing and field
// iteration written once over the reflected line structs.

#include <wrapir/ir/detail/field_count.hpp>
#include <wrapir/ir/detail/reflect_hana.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/line_hash.hpp>
#include <wrapir/ir/reflect.hpp>

#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/second.hpp>

#include <boost/mp11/algorithm.hpp>
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <variant>
#include <vector>

using namespace wrapir::ir;
namespace mp = boost::mp11;

// Exhaustive checks over every kind and record, compiled once here rather
// than in every translation unit that includes the IR.
namespace {

template <class... Ts>
constexpr bool all_fields_reflected(mp::mp_list<Ts...>) {
  return ((field_count<Ts> == detail::aggregate_field_count<Ts>()) && ...);
}

constexpr bool kind_names_unique() {
  for (std::size_t i = 0; i < line_kind_names.size(); ++i)
    for (std::size_t j = i + 1; j < line_kind_names.size(); ++j)
      if (line_kind_names[i] == line_kind_names[j]) return false;
  return true;
}

}  // namespace

// A field left out of WRAPIR_REFLECT is invisible to equality, hashing,
// JSON and the text form.
static_assert(all_fields_reflected(LineKinds{}), "a line struct has a field that its WRAPIR_REFLECT does not list");
static_assert(all_fields_reflected(ReflectedRecords{}), "a record has a field that its WRAPIR_REFLECT does not list");
static_assert(kind_names_unique(), "two line kinds have the same name");

// The check itself can fail: a struct with a field its reflection leaves out.
namespace reflect_probe {
struct TwoFields {
  int a = 0;
  int b = 0;
};
}  // namespace reflect_probe
WRAPIR_REFLECT(reflect_probe::TwoFields, a);
static_assert(field_count<reflect_probe::TwoFields> == 1);
static_assert(detail::aggregate_field_count<reflect_probe::TwoFields>() == 2);
static_assert(!all_fields_reflected(mp::mp_list<reflect_probe::TwoFields>{}));
static_assert(!Reflected<int>);
static_assert(Reflected<Null> && field_count<Null> == 0);

TEST_CASE("ir/line: the variant, the kind list and the kind names agree") {
  static_assert(std::variant_size_v<wrapir::Line> == line_kind_count);
  static_assert(line_kind_count == 40);
  mp::mp_for_each<mp::mp_iota_c<line_kind_count>>([](auto i) {
    using FromList = mp::mp_at_c<LineKinds, i>;
    using FromVariant = std::variant_alternative_t<i, wrapir::Line>;
    static_assert(std::is_same_v<FromList, FromVariant>);
    CHECK(line_kind_names[i] == FromList::kind);
    CHECK(line_kind_index<FromList> == i);
    CHECK(line_kind_from_name(FromList::kind) == std::size_t{i});
    // Every line kind is a plain aggregate value.
    static_assert(std::is_aggregate_v<FromList>);
    static_assert(std::is_copy_constructible_v<FromList> && std::is_nothrow_move_constructible_v<FromList>);
  });
  CHECK_FALSE(line_kind_from_name("Alocate"));
  CHECK(kind_name(wrapir::Line{KernelCall{}}) == "KernelCall");
}

TEST_CASE("ir/line: kind names are single capitalised words") {
  // The kind string is what JSON and the text form use; it must read like
  // the type a user writes.
  mp::mp_for_each<LineKinds>([](auto line) {
    using T = decltype(line);
    const std::string_view kind = T::kind;
    CHECK(!kind.empty());
    CHECK(kind.find(' ') == std::string_view::npos);
    CHECK((kind.front() >= 'A' && kind.front() <= 'Z'));
  });
}

TEST_CASE("ir/reflect: for_each_field visits the fields in declaration order") {
  wrapir::expr::Context ctx;
  KernelCall call{KernelId{2}, {BufferId{1}, std::int64_t{3}}, {ParamType{true, wrapir::DType::float32}},
                  ExplicitGrid{ctx.integer(1), ctx.integer(2), ctx.integer(3)}, wrapir::cuda_device(1), 4};
  std::vector<std::string_view> names;
  for_each_field(call, [&](std::string_view name, const auto&) { names.push_back(name); });
  CHECK(names == std::vector<std::string_view>{"kernel", "args", "arg_types", "grid", "device", "stream", "provenance"});
  CHECK(field_names<KernelCall>() == names);
  CHECK(field_names<Null>().empty());

  // Fields are references: mutation through for_each_field changes the line.
  for_each_field(call, [](std::string_view name, auto& field) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(field)>, std::uint32_t>) {
      CHECK(name == "stream");
      field = 7;
    }
  });
  CHECK(call.stream == 7);
}

TEST_CASE("ir/reflect: reflected structs are Boost.Hana Structs (ir/detail/reflect_hana.hpp)") {
  KernelCall call{};
  call.stream = 5;
  std::vector<std::string_view> names;
  boost::hana::for_each(boost::hana::accessors<KernelCall>(), [&](auto accessor) {
    using FieldName = std::remove_cvref_t<decltype(boost::hana::first(accessor))>;
    constexpr std::string_view name = boost::hana::to<const char*>(FieldName{});
    names.push_back(name);
    auto& field = boost::hana::second(accessor)(call);
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(field)>, std::uint32_t>) field = 9;
  });
  CHECK(names == field_names<KernelCall>());
  CHECK(call.stream == 9);
  static_assert(decltype(boost::hana::length(boost::hana::accessors<Null>()))::value == 0);
}

TEST_CASE("ir/reflect: equality and hashing look at every field") {
  wrapir::expr::Context ctx;
  const auto s0 = ctx.symbol("s0");
  const wrapir::Line a = KernelCall{KernelId{0}, {BufferId{1}, s0, 2.5, true, "x", None{}}, {}, LauncherGrid{}, {}, 0};
  wrapir::Line b = a;
  CHECK(a == b);
  CHECK(hash_value(a) == hash_value(b));
  std::get<KernelCall>(b).stream = 1;
  CHECK(a != b);
  b = a;
  std::get<KernelCall>(b).args[1] = ctx.symbol("s1");
  CHECK(a != b);
  b = a;
  std::get<KernelCall>(b).args.push_back(Arg{ArgList{{std::int64_t{1}}}});
  CHECK(a != b);
  // Same fields, different kinds: never equal, hashed apart.
  CHECK(wrapir::Line{Allocate{BufferId{3}}} != wrapir::Line{Free{BufferId{3}}});
  CHECK(hash_value(wrapir::Line{Allocate{BufferId{3}}}) != hash_value(wrapir::Line{Free{BufferId{3}}}));
  CHECK(wrapir::Line{ExitSubgraph{}} == wrapir::Line{ExitSubgraph{}});

  std::unordered_set<wrapir::Line> set{a, b, wrapir::Line{Null{}}, wrapir::Line{Null{}}};
  CHECK(set.size() == 3);  // a, b (one more argument) and one Null
}

TEST_CASE("ir/line: Arg keeps the alternative its constructor names") {
  CHECK(Arg{3}.holds<std::int64_t>());
  CHECK(Arg{std::int64_t{-1}}.holds<std::int64_t>());
  CHECK(Arg{true}.holds<bool>());
  CHECK(Arg{2.0f}.holds<double>());
  CHECK(Arg{"text"}.holds<std::string>());
  CHECK(Arg{BufferId{0}}.holds<BufferArg>());
  CHECK(Arg{None{}}.holds<None>());
  CHECK(Arg{}.holds<None>());
  CHECK(Arg{wrapir::DType::int8}.holds<wrapir::DType>());
  CHECK(Arg{wrapir::cpu_device()}.holds<wrapir::Device>());
  CHECK(std::string(arg_kind_name(Arg{ArgList{}})) == "list");
  CHECK(std::string(arg_kind_name(Arg{wrapir::expr::Expr{}})) == "symbolic integer");
}

TEST_CASE("ir/line: an Arg's string and list live on the heap and read as themselves") {
  Arg s{"reduce"};
  REQUIRE(s.get_if<std::string>() != nullptr);
  CHECK(*s.get_if<std::string>() == "reduce");
  CHECK(s.get_if<ArgList>() == nullptr);
  CHECK(Arg{1}.get_if<std::string>() == nullptr);
  // visit passes the string itself, not its box.
  CHECK(s.visit([](const auto& v) { return std::is_same_v<std::decay_t<decltype(v)>, std::string>; }));

  Arg copy = s;  // a deep copy: changing it leaves `s`
  *boost::variant2::get_if<Box<std::string>>(&copy.value) = std::string("sum");
  CHECK(*s.get_if<std::string>() == "reduce");
  CHECK(copy != s);

  Arg list{ArgList{{Arg{1}, Arg{"x"}, Arg{ArgList{}}}}};
  const ArgList* l = list.get_if<ArgList>();
  REQUIRE(l != nullptr);
  CHECK(l->items.size() == 3);
  CHECK(*l->items[1].get_if<std::string>() == "x");
  CHECK(l->items[2].get_if<ArgList>()->items.empty());
  CHECK(list == Arg{ArgList{{Arg{1}, Arg{"x"}, Arg{ArgList{}}}}});
  CHECK(list != Arg{ArgList{{Arg{1}, Arg{"y"}, Arg{ArgList{}}}}});
  CHECK(hash_value(wrapir::Line{KernelCall{KernelId{0}, {list}}}) ==
        hash_value(wrapir::Line{KernelCall{KernelId{0}, {Arg{ArgList{{Arg{1}, Arg{"x"}, Arg{ArgList{}}}}}}}}));
}
