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

#include <wrapir/emit/detail/fx_graph.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/names.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <unordered_map>
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

[[nodiscard]] inline Target operator_target(std::string_view name) {
  return Target{"operator." + std::string(name), "operator." + std::string(name), std::string(name)};
}
[[nodiscard]] inline Target torch_target(std::string_view name) {
  return Target{"torch." + std::string(name), "torch." + std::string(name), std::string(name)};
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
      const Value quotient = binary(operator_target("floordiv"), numerator, Value{false, b, 0});
      result = binary(operator_target("mul"), Value{false, -1, 0}, quotient);
    }
    grid_cache_[key] = result;
    return result;
  }

  Value binary(const Target& t, Value a, Value b) {
    ArgWriter w;
    w.both("(");
    write_value(w, a);
    w.both(", ");
    write_value(w, b);
    w.both(")");
    ArgWriter none;
    none.both("{}");
    return Value{true, 0, graph_.call_function(t, w.take(), none.take())};
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
    for (std::size_t i = 1; i < vs.size(); ++i) acc = binary(operator_target("mul"), acc, vs[i]);
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
        ArgWriter w;
        w.both("([");
        bool first = true;
        for (expr::Expr t : ordered(ops)) {
          if (!first) w.both(", ");
          first = false;
          write_value(w, value(t));
        }
        w.both("],)");
        ArgWriter none;
        none.both("{}");
        return Value{true, 0, graph_.call_function(torch_target("sym_sum"), w.take(), none.take())};
      }
      case Kind::mul: return fold(operator_target("mul"), ops);
      case Kind::pow: return binary(operator_target("pow"), value(ops[0]), value(ops[1]));
      case Kind::floor_div:
      case Kind::clean_div: return binary(operator_target("floordiv"), value(ops[0]), value(ops[1]));
      case Kind::python_mod:
      case Kind::mod: return binary(operator_target("mod"), value(ops[0]), value(ops[1]));
      case Kind::modular_indexing: {
        // (x // d) % m: no FX handler exists for the fused form.
        const Value q = binary(operator_target("floordiv"), value(ops[0]), value(ops[1]));
        return binary(operator_target("mod"), q, value(ops[2]));
      }
      case Kind::min: return fold(torch_target("sym_min"), ops);
      case Kind::max: return fold(torch_target("sym_max"), ops);
      case Kind::eq: return binary(operator_target("eq"), value(ops[0]), value(ops[1]));
      case Kind::ne: return binary(operator_target("ne"), value(ops[0]), value(ops[1]));
      case Kind::lt: return binary(operator_target("lt"), value(ops[0]), value(ops[1]));
      case Kind::le: return binary(operator_target("le"), value(ops[0]), value(ops[1]));
      case Kind::gt: return binary(operator_target("gt"), value(ops[0]), value(ops[1]));
      case Kind::ge: return binary(operator_target("ge"), value(ops[0]), value(ops[1]));
      case Kind::where: {
        ArgWriter w;
        w.both("(");
        write_value(w, value(ops[0]));
        w.both(", ");
        write_value(w, value(ops[1]));
        w.both(", ");
        write_value(w, value(ops[2]));
        w.both(")");
        ArgWriter none;
        none.both("{}");
        return Value{true, 0, graph_.call_function(torch_target("sym_ite"), w.take(), none.take())};
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
      return std::hash<const void*>{}(p.first) ^ (std::hash<std::int64_t>{}(p.second) * 0x9e3779b97f4a7c15ULL);
    }
  };

  Graph& graph_;
  std::function<void(std::string)> fail_;
  std::unordered_map<const expr::Node*, Value> cache_;
  std::unordered_map<std::pair<const expr::Node*, std::int64_t>, Value, PairHash> grid_cache_;
};

}  // namespace wrapir::fx::detail
