#pragma once
/// \file
/// Definitions of <wrapir/expr/compile.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/compile.hpp>
#include <wrapir/expr/impl/eval.ipp>
#include <wrapir/expr/query.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::expr {

namespace detail {

class Compiler {
 public:
  using Op = CompiledExpr::Op;
  using Instr = CompiledExpr::Instr;

  std::vector<Instr> code;
  std::vector<Expr> symbols;
  std::size_t depth = 0, max_depth = 0;

  void emit(Op op, Expr node, std::uint32_t arg = 0, std::int64_t imm = 0) { code.push_back(Instr{op, arg, imm, node}); }
  void push() { max_depth = std::max(max_depth, ++depth); }
  void pop(std::size_t n) { depth -= n; }

  std::uint32_t slot_of(Expr s) const {
    for (std::size_t i = 0; i < symbols.size(); ++i)
      if (symbols[i] == s) return static_cast<std::uint32_t>(i);
    return 0;  // unreachable: every symbol was collected first
  }

  int level = 0;
  bool too_deep = false;

  void gen(Expr e) {
    // Same limit as eval: recursion depth is the tree's height.
    if (too_deep || level >= detail::max_eval_depth) {
      too_deep = true;
      return;
    }
    ++level;
    gen_node(e);
    --level;
  }

  void gen_node(Expr e) {
    const auto ops = e.operands();
    switch (e.kind()) {
      case Kind::integer: emit(Op::push_const, e, 0, e.value()); push(); return;
      case Kind::symbol: {
        // Loading a symbol checks its assumption, as eval does on lookup.
        const Op load = e.assumption() == Assumption::positive      ? Op::push_positive
                        : e.assumption() == Assumption::nonnegative ? Op::push_nonnegative
                                                                    : Op::push_symbol;
        emit(load, e, slot_of(e));
        push();
        return;
      }
      case Kind::identity: gen(ops[0]); return;
      case Kind::add:
      case Kind::mul: {
        // A lone term with a constant becomes one immediate instruction
        // (`s0 + 1023`: push, add_const). With several terms the constant
        // joins the n-ary step, whose node value is checked as a whole.
        const bool is_add = e.is(Kind::add);
        if (ops.size() == 2 && ops[0].is_integer() != ops[1].is_integer()) {
          const Expr constant = ops[0].is_integer() ? ops[0] : ops[1];
          gen(ops[0].is_integer() ? ops[1] : ops[0]);
          emit(is_add ? Op::add_const : Op::mul_const, e, 0, constant.value());
          return;
        }
        for (Expr t : ops) gen(t);
        // Two operands: one checked operation is exact for the node.
        const Op op = ops.size() == 2 ? (is_add ? Op::add2 : Op::mul2) : (is_add ? Op::add_n : Op::mul_n);
        emit(op, e, static_cast<std::uint32_t>(ops.size()));
        pop(ops.size());
        push();
        return;
      }
      case Kind::floor_div:
        if (ops[1].is_integer() && ops[1].value() > 0) {
          gen(ops[0]);
          const std::int64_t d = ops[1].value();
          // An arithmetic shift floors like Python's // for every sign.
          if ((d & (d - 1)) == 0) emit(Op::shift_right, e, 0, std::countr_zero(static_cast<std::uint64_t>(d)));
          else emit(Op::floor_div_const_pos, e, 0, d);
          return;
        }
        binary(e, Op::floor_div);
        return;
      case Kind::clean_div: binary(e, Op::clean_div); return;
      case Kind::pow: binary(e, Op::pow); return;
      case Kind::python_mod: binary(e, Op::python_mod); return;
      case Kind::mod: binary(e, Op::mod); return;
      case Kind::modular_indexing:
        for (Expr o : ops) gen(o);
        emit(Op::modular_indexing, e);
        pop(3); push();
        return;
      case Kind::min:
      case Kind::max:
        for (Expr o : ops) gen(o);
        emit(e.is(Kind::min) ? Op::min_n : Op::max_n, e, static_cast<std::uint32_t>(ops.size()));
        pop(ops.size()); push();
        return;
      case Kind::eq:
      case Kind::ne:
      case Kind::lt:
      case Kind::le:
      case Kind::gt:
      case Kind::ge:
        // One instruction for all six: eval's comparison, keyed by kind.
        binary(e, Op::compare);
        code.back().imm = static_cast<std::int64_t>(e.kind());
        return;
      case Kind::where: {
        // Only the chosen branch runs, as in `eval`.
        gen(ops[0]);
        const std::size_t jz = code.size();
        emit(Op::jump_if_zero, e);
        pop(1);
        gen(ops[1]);
        const std::size_t jmp = code.size();
        emit(Op::jump, e);
        pop(1);
        code[jz].arg = static_cast<std::uint32_t>(code.size());
        gen(ops[2]);
        code[jmp].arg = static_cast<std::uint32_t>(code.size());
        return;
      }
      case Kind::align: gen(ops[0]); emit(Op::align, e, 0, e.value()); return;
    }
  }

  void binary(Expr e, Op op) {
    gen(e.operand(0));
    gen(e.operand(1));
    emit(op, e);
    pop(2);
    push();
  }
};

}  // namespace detail

WRAPIR_DECL Result<CompiledExpr> compile(Expr e) {
  if (!e) return Diagnostic{"cannot compile a null expression"};
  if (e.tree_size() > (1u << 24)) return Diagnostic{"expression is too large to compile"};
  detail::Compiler c;
  c.symbols = free_symbols(e);
  c.gen(e);
  if (c.too_deep)
    return Diagnostic{"expression is nested deeper than " + std::to_string(detail::max_eval_depth) + " levels"};
  if (c.max_depth > CompiledExpr::max_stack)
    return Diagnostic{"expression needs a value stack of " + std::to_string(c.max_depth) + " (more than " +
                      std::to_string(CompiledExpr::max_stack) + "); evaluate it with wrapir::expr::eval"};
  CompiledExpr out;
  out.code_ = std::move(c.code);
  out.symbols_ = std::move(c.symbols);
  out.source_ = e;
  return out;
}

WRAPIR_DECL CompiledExpr::Status CompiledExpr::run(std::span<const std::int64_t> values, std::int64_t& out,
                                              std::size_t& failed_at) const noexcept {
  if (values.size() != symbols_.size()) return Status::arity;
  __extension__ typedef __int128 wide;
  std::array<std::int64_t, max_stack> stack;
  std::size_t sp = 0;  // next free slot
  const std::size_t n = code_.size();
  std::size_t pc = 0;
  // Errors are rare: record where only when one happens.
  auto fail = [&](Status s) {
    failed_at = pc;
    return s;
  };
  for (; pc < n; ++pc) {
    const Instr& in = code_[pc];
    switch (in.op) {
      case Op::push_const: stack[sp++] = in.imm; break;
      case Op::push_symbol: stack[sp++] = values[in.arg]; break;
      case Op::push_positive:
        if (values[in.arg] <= 0) return fail(Status::assumption);
        stack[sp++] = values[in.arg];
        break;
      case Op::push_nonnegative:
        if (values[in.arg] < 0) return fail(Status::assumption);
        stack[sp++] = values[in.arg];
        break;
      case Op::add2:
        --sp;
        if (!checked::add(stack[sp - 1], stack[sp], stack[sp - 1])) return fail(Status::overflow);
        break;
      case Op::add_n: {
        wide sum = 0;
        for (std::uint32_t i = 0; i < in.arg; ++i) sum += stack[--sp];
        if (sum > INT64_MAX || sum < INT64_MIN) return fail(Status::overflow);
        stack[sp++] = static_cast<std::int64_t>(sum);
        break;
      }
      case Op::add_const: {
        // The node's value is the sum of all terms: exact in 128 bits.
        const wide sum = static_cast<wide>(stack[sp - 1]) + in.imm;
        if (sum > INT64_MAX || sum < INT64_MIN) return fail(Status::overflow);
        stack[sp - 1] = static_cast<std::int64_t>(sum);
        break;
      }
      case Op::mul2:
        --sp;
        if (!checked::mul(stack[sp - 1], stack[sp], stack[sp - 1])) return fail(Status::overflow);
        break;
      case Op::mul_n: {
        bool zero = false;
        for (std::uint32_t i = 0; i < in.arg; ++i) zero |= stack[sp - 1 - i] == 0;
        wide product = 1;
        const wide limit = static_cast<wide>(1) << 63;
        bool over = false;
        for (std::uint32_t i = 0; i < in.arg; ++i) {
          product *= stack[--sp];
          if (product > limit || product < -limit) {
            over = true;
            product = 1;
          }
        }
        if (zero) {
          stack[sp++] = 0;
          break;
        }
        if (over || product > INT64_MAX || product < INT64_MIN) return fail(Status::overflow);
        stack[sp++] = static_cast<std::int64_t>(product);
        break;
      }
      case Op::mul_const:
        if (!checked::mul(stack[sp - 1], in.imm, stack[sp - 1])) return fail(Status::overflow);
        break;
      case Op::pow: {
        const std::int64_t e = stack[--sp];
        if (e < 0) return fail(Status::neg_exponent);
        if (!checked::pow(stack[sp - 1], e, stack[sp - 1])) return fail(Status::overflow);
        break;
      }
      case Op::floor_div_const_pos: stack[sp - 1] = ::wrapir::floor_div(stack[sp - 1], in.imm); break;
      case Op::shift_right: stack[sp - 1] >>= in.imm; break;
      case Op::floor_div:
      case Op::clean_div: {
        const std::int64_t b = stack[--sp];
        const std::int64_t a = stack[sp - 1];
        if (b == 0) return fail(Status::div_zero);
        if (!checked::floor_div(a, b, stack[sp - 1])) return fail(Status::overflow);
        if (in.op == Op::clean_div && ::wrapir::python_mod(a, b) != 0) return fail(Status::inexact);
        break;
      }
      case Op::modular_indexing: {
        const std::int64_t m = stack[--sp];
        const std::int64_t d = stack[--sp];
        if (d == 0) return fail(Status::div_zero);
        if (m == 0) return fail(Status::mod_zero);
        std::int64_t q = 0;
        if (!checked::floor_div(stack[sp - 1], d, q)) return fail(Status::overflow);
        stack[sp - 1] = ::wrapir::python_mod(q, m);
        break;
      }
      case Op::python_mod:
      case Op::mod: {
        const std::int64_t q = stack[--sp];
        const std::int64_t p = stack[sp - 1];
        if (q == 0) return fail(Status::mod_zero);
        if (in.op == Op::mod && (p < 0 || q < 0)) return fail(Status::mod_domain);
        stack[sp - 1] = ::wrapir::python_mod(p, q);
        break;
      }
      case Op::min_n:
      case Op::max_n: {
        std::int64_t r = stack[--sp];
        for (std::uint32_t i = 1; i < in.arg; ++i) {
          const std::int64_t v = stack[--sp];
          r = in.op == Op::min_n ? (v < r ? v : r) : (v > r ? v : r);
        }
        stack[sp++] = r;
        break;
      }
      case Op::compare: {
        const std::int64_t b = stack[--sp];
        stack[sp - 1] = detail::Evaluator::compare_values(static_cast<Kind>(in.imm), stack[sp - 1], b) ? 1 : 0;
        break;
      }
      case Op::jump_if_zero:
        if (stack[--sp] == 0) pc = in.arg - 1;
        break;
      case Op::jump: pc = in.arg - 1; break;
      case Op::align:
        if (!checked::align_up(stack[sp - 1], in.imm, stack[sp - 1])) return fail(Status::overflow);
        break;
    }
  }
  out = stack[0];
  return Status::ok;
}

WRAPIR_DECL Result<std::int64_t> CompiledExpr::eval(std::span<const std::int64_t> values) const {
  std::int64_t out = 0;
  std::size_t at = 0;
  const Status s = run(values, out, at);
  if (s == Status::ok) return out;
  if (s == Status::arity)
    return Diagnostic{"compiled expression reads " + std::to_string(symbols_.size()) + " symbol values, got " +
                      std::to_string(values.size())};
  // Re-run the tree evaluator for its message: both share one semantics.
  Bindings b;
  for (std::size_t i = 0; i < symbols_.size(); ++i) b.set(symbols_[i], values[i]);
  auto r = ::wrapir::expr::eval(source_, b);
  if (!r) return r.error();
  return Diagnostic{"compiled evaluation failed at " + detail::quote(code_[at].node) + " but tree evaluation gives " +
                    std::to_string(*r) + " (a wrapir bug; please report)"};
}

}  // namespace wrapir::expr