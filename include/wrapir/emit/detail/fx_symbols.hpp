#pragma once
/// \file
/// The FX emitter's symbolic integers (emit/fx.hpp): expressions as FX
/// arithmetic nodes, as Inductor's FX converter makes them from sympy
/// (`_sympy_interp` with the optimized Python reference handlers):
/// `FloorDiv` → `operator.floordiv`, `Mul` → a left fold of `operator.mul`,
/// integer `Add` → `torch.sym_sum([...])`, `Max` → `torch.sym_max`, ...,
/// hash-consed per graph (one node per distinct expression), and the launch
/// grid's ceiling division in the form sympy gives it:
/// `-(FloorDiv(-c*x, B))`, with the coefficient and the block reduced by
/// their gcd as sympy's rational arithmetic does.
///
/// Operand order follows sympy's canonical order closely enough for
/// Inductor's programs: integers first, then symbols by name, then compound
/// terms in wrapir's order (docs/emitters.md lists where this may differ).

#include <wrapir/detail/hash.hpp>
#include <wrapir/emit/detail/fx_graph.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/names.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::fx::detail {

/// A value an FX argument takes: an int literal or a node.
struct Value {
  bool is_node = false;
  std::int64_t literal = 0;
  std::uint32_t node = 0;
};

inline void write_value(ArgWriter& w, Value v) {
  if (v.is_node) w.node(v.node);
  else w.integer(v.literal);
}

/// The callables the converter itself calls (extern operators are the
/// program's, interned per graph).
enum class Builtin : std::uint8_t {
  mul, floordiv, mod, pow, eq, ne, lt, le, gt, ge, getitem,
  sym_sum, sym_max, sym_min, sym_ite, empty_strided, zeros, as_strided,
  sym_size, sym_stride, sym_storage_offset, item, where, copy, alloc_from_pool,
  assert_tensor_metadata, assert_scalar, triton, cpp, cond, while_loop,
};

[[nodiscard]] inline const Target& builtin(Builtin b) {
  static const Target table[] = {
      {"operator.mul", "operator.mul", "mul"},
      {"operator.floordiv", "operator.floordiv", "floordiv"},
      {"operator.mod", "operator.mod", "mod"},
      {"operator.pow", "operator.pow", "pow"},
      {"operator.eq", "operator.eq", "eq"},
      {"operator.ne", "operator.ne", "ne"},
      {"operator.lt", "operator.lt", "lt"},
      {"operator.le", "operator.le", "le"},
      {"operator.gt", "operator.gt", "gt"},
      {"operator.ge", "operator.ge", "ge"},
      {"operator.getitem", "operator.getitem", "getitem"},
      {"torch.sym_sum", "torch.sym_sum", "sym_sum"},
      {"torch.sym_max", "torch.sym_max", "sym_max"},
      {"torch.sym_min", "torch.sym_min", "sym_min"},
      {"torch.sym_ite", "torch.sym_ite", "sym_ite"},
      {"torch.empty_strided", "torch.empty_strided", "empty_strided"},
      {"torch.zeros", "torch.zeros", "zeros"},
      {"torch.as_strided", "torch.as_strided", "as_strided"},
      {"torch.ops.aten.sym_size.int", "torch.ops.aten.sym_size.int", "sym_size.int"},
      {"torch.ops.aten.sym_stride.int", "torch.ops.aten.sym_stride.int", "sym_stride.int"},
      {"torch.ops.aten.sym_storage_offset.default", "torch.ops.aten.sym_storage_offset.default",
       "sym_storage_offset.default"},
      {"torch.ops.aten.item.default", "torch.ops.aten.item.default", "item.default"},
      {"torch.ops.aten.where.Scalar", "torch.ops.aten.where.Scalar", "where.Scalar"},
      {"torch.ops.aten.copy_.default", "torch.ops.aten.copy_.default", "copy_.default"},
      {"torch.ops.inductor._alloc_from_pool.default", "torch.ops.inductor._alloc_from_pool.default",
       "_alloc_from_pool.default"},
      {"torch.ops.aten._assert_tensor_metadata.default", "torch.ops.aten._assert_tensor_metadata.default",
       "_assert_tensor_metadata.default"},
      {"torch.ops.aten._assert_scalar.default", "torch.ops.aten._assert_scalar.default", "_assert_scalar.default"},
      {"torch.ops.higher_order.triton_kernel_wrapper_mutation", "torch.ops.higher_order.triton_kernel_wrapper_mutation",
       "triton_kernel_wrapper_mutation"},
      // C++ kernels: a callable the fx-python module defines (docs/emitters.md).
      {"wrapir.fx.cpp_kernel_mutation", "cpp_kernel_mutation", "cpp_kernel_mutation"},
      {"torch.ops.higher_order.cond", "torch.ops.higher_order.cond", "cond"},
      {"torch.ops.higher_order.while_loop", "torch.ops.higher_order.while_loop", "while_loop"},
  };
  static_assert(std::size(table) == static_cast<std::size_t>(Builtin::while_loop) + 1);
  return table[static_cast<std::size_t>(b)];
}

/// Expressions of one graph as FX nodes.
class SymbolNodes {
 public:
  /// `fail(message)` reports an expression the graph cannot compute.
  SymbolNodes(Graph& graph, std::function<void(std::string)> fail) : graph_(graph), fail_(std::move(fail)) {}

  /// Binds `symbol` to `v` (a placeholder, a size read, a computed value).
  void define(expr::Expr symbol, Value v) { cache_[symbol.node()] = v; }
  [[nodiscard]] bool defined(expr::Expr symbol) const { return cache_.contains(symbol.node()); }

  /// The value of `e`, making the nodes that compute it.
  Value value(expr::Expr e) {
    if (!e) fail_("a null expression");
    if (e.is_integer()) return Value{false, e.value(), 0};
    if (const auto it = cache_.find(e.node()); it != cache_.end()) return it->second;
    if (e.is_symbol()) fail_("symbol '" + std::string(e.name()) + "' is not defined where the graph uses it");
    const Value v = compute(e);
    cache_[e.node()] = v;
    return v;
  }

  /// Inductor's grid quotient `-((numel) // -(block))` after sympy and
  /// `replace_floor_div`.
  Value ceil_div(expr::Expr numel, std::int64_t block) {
    if (block <= 1) return value(numel);
    if (numel.is_integer()) {
      const std::int64_t n = numel.value();
      // Ceiling division; C++ truncates towards zero, which is the ceiling
      // for a negative quotient already.
      const std::int64_t q = n / block + ((n % block) > 0 ? 1 : 0);
      return Value{false, q, 0};
    }
    const auto key = std::make_pair(numel.node(), block);
    if (const auto it = grid_cache_.find(key); it != grid_cache_.end()) return it->second;
    std::int64_t coefficient = 1;
    std::vector<expr::Expr> factors;
    if (numel.is(expr::Kind::mul)) {
      for (expr::Expr f : numel.operands()) {
        if (f.is_integer()) coefficient *= f.value();
        else factors.push_back(f);
      }
    } else {
      factors.push_back(numel);
    }
    const std::int64_t g = std::gcd(coefficient < 0 ? -coefficient : coefficient, block);
    const std::int64_t c = coefficient / g;
    const std::int64_t b = block / g;
    Value result;
    if (b == 1) {
      result = g == 1 ? value(numel) : product(c, factors);
    } else {
      Value numerator;
      if (numel.is(expr::Kind::add)) {
        numerator = value(expr::neg(numel));
      } else {
        numerator = product(-c, factors);
      }
      const Value quotient = binary(builtin(Builtin::floordiv), numerator, Value{false, b, 0});
      result = binary(builtin(Builtin::mul), Value{false, -1, 0}, quotient);
    }
    grid_cache_[key] = result;
    return result;
  }

  Value binary(const Target& t, Value a, Value b) {
    ArgWriter w(graph_);
    w.both("(");
    write_value(w, a);
    w.both(", ");
    write_value(w, b);
    w.both(")");
    return Value{true, 0, graph_.call_function(t, w)};
  }

 private:
  /// sympy's canonical order, approximately: integers, symbols by name, the rest.
  static std::vector<expr::Expr> ordered(std::span<const expr::Expr> operands) {
    std::vector<expr::Expr> v(operands.begin(), operands.end());
    auto rank = [](expr::Expr e) { return e.is_integer() ? 0 : e.is_symbol() ? 1 : 2; };
    std::stable_sort(v.begin(), v.end(), [&](expr::Expr a, expr::Expr b) {
      const int ra = rank(a), rb = rank(b);
      if (ra != rb) return ra < rb;
      if (ra == 1) return a.name() < b.name();
      return false;
    });
    return v;
  }

  /// `c * f1 * f2 ...` as a left fold (c first unless it is 1).
  Value product(std::int64_t c, const std::vector<expr::Expr>& factors) {
    std::vector<Value> vs;
    if (c != 1 || factors.empty()) vs.push_back(Value{false, c, 0});
    for (expr::Expr f : ordered(factors)) vs.push_back(value(f));
    Value acc = vs[0];
    for (std::size_t i = 1; i < vs.size(); ++i) acc = binary(builtin(Builtin::mul), acc, vs[i]);
    return acc;
  }

  Value fold(const Target& t, std::span<const expr::Expr> operands) {
    std::vector<Value> vs;
    for (expr::Expr f : ordered(operands)) vs.push_back(value(f));
    if (vs.empty()) fail_("an operation without operands");
    Value acc = vs[0];
    for (std::size_t i = 1; i < vs.size(); ++i) acc = binary(t, acc, vs[i]);
    return acc;
  }

  Value compute(expr::Expr e) {
    using expr::Kind;
    const auto ops = e.operands();
    switch (e.kind()) {
      case Kind::add: {
        ArgWriter w(graph_);
        w.both("([");
        bool first = true;
        for (expr::Expr t : ordered(ops)) {
          if (!first) w.both(", ");
          first = false;
          write_value(w, value(t));
        }
        w.both("],)");
        return Value{true, 0, graph_.call_function(builtin(Builtin::sym_sum), w)};
      }
      case Kind::mul: return fold(builtin(Builtin::mul), ops);
      case Kind::pow: return binary(builtin(Builtin::pow), value(ops[0]), value(ops[1]));
      case Kind::floor_div:
      case Kind::clean_div: return binary(builtin(Builtin::floordiv), value(ops[0]), value(ops[1]));
      case Kind::python_mod:
      case Kind::mod: return binary(builtin(Builtin::mod), value(ops[0]), value(ops[1]));
      case Kind::modular_indexing: {
        // (x // d) % m: no FX handler exists for the fused form.
        const Value q = binary(builtin(Builtin::floordiv), value(ops[0]), value(ops[1]));
        return binary(builtin(Builtin::mod), q, value(ops[2]));
      }
      case Kind::min: return fold(builtin(Builtin::sym_min), ops);
      case Kind::max: return fold(builtin(Builtin::sym_max), ops);
      case Kind::eq: return binary(builtin(Builtin::eq), value(ops[0]), value(ops[1]));
      case Kind::ne: return binary(builtin(Builtin::ne), value(ops[0]), value(ops[1]));
      case Kind::lt: return binary(builtin(Builtin::lt), value(ops[0]), value(ops[1]));
      case Kind::le: return binary(builtin(Builtin::le), value(ops[0]), value(ops[1]));
      case Kind::gt: return binary(builtin(Builtin::gt), value(ops[0]), value(ops[1]));
      case Kind::ge: return binary(builtin(Builtin::ge), value(ops[0]), value(ops[1]));
      case Kind::where: {
        std::array<Value, 3> v{value(ops[0]), value(ops[1]), value(ops[2])};
        ArgWriter w(graph_);
        w.both("(");
        write_value(w, v[0]);
        w.both(", ");
        write_value(w, v[1]);
        w.both(", ");
        write_value(w, v[2]);
        w.both(")");
        return Value{true, 0, graph_.call_function(builtin(Builtin::sym_ite), w)};
      }
      case Kind::identity: return value(ops[0]);
      default:
        fail_("the expression kind " + std::string(expr::kind_name(e.kind())) +
              " has no FX arithmetic (Inductor's FX converter has no handler for it either)");
    }
    return Value{};
  }

  struct PairHash {
    std::size_t operator()(const std::pair<const expr::Node*, std::int64_t>& p) const noexcept {
      return wrapir::detail::hash_mix(std::hash<const void*>{}(p.first), std::hash<std::int64_t>{}(p.second));
    }
  };

  Graph& graph_;
  std::function<void(std::string)> fail_;
  boost::unordered_flat_map<const expr::Node*, Value> cache_;
  boost::unordered_flat_map<std::pair<const expr::Node*, std::int64_t>, Value, PairHash> grid_cache_;
};

}  // namespace wrapir::fx::detail
