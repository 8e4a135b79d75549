// The wrapir tool's reading of an exporter's tensor file (`wrapir run`,
// `wrapir run-cpp`, `wrapir autotune --inputs`): the tensor inputs, named as
// the program names their buffers and stored dense (as torch's safetensors
// writes them), laid out as the program declares them; and the scalar inputs
// the exporter writes into the metadata as `{"scalars": "{\"arg2_1\": 8}"}`.
//
// Scalars bind by name when any entry names a scalar input: a scalar input
// answers to its symbol's name (`s0`) and to the name Inductor gives graph
// input i, `arg<i>_1` (i: its position among all the program's inputs; the
// IR keeps no name for a scalar input, and the exporter writes these). Then
// every entry must name exactly one scalar input, no input may be named twice,
// and every scalar input must be named. Only when no entry names any scalar
// input are the entries taken by position, and then their count must be the
// number of scalar inputs. Anything else is a diagnostic: a mix of names and
// positions cannot say which value was meant.
#pragma once

#include "cli.hpp"

#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/query.hpp>
#include <wrapir/expr/solve.hpp>
#include <wrapir/io/safetensors.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/run/detail/executor_values.hpp>
#include <wrapir/run/tensor.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::cli {

/// The metadata's scalars in file order (the exporter names them by graph
/// input, `arg0_1`, which need not be the symbol's name). An entry named
/// twice, one that is not an integer or one out of int64's range is refused.
inline std::vector<std::pair<std::string, std::int64_t>> scalars_of(const io::TensorFile& file, std::string_view path) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  const auto it = file.metadata.find("scalars");
  if (it == file.metadata.end()) return out;
  const std::string where = one_line(path, 200) + ": metadata 'scalars'";
  if (const std::optional<std::string> twice = io::safetensors_detail::duplicate_key(it->second, 4))
    throw Failure{where + " gives '" + one_line(*twice, 60) + "' twice"};
  boost::system::error_code ec;
  boost::json::parse_options options;
  options.max_depth = 4;
  const boost::json::value v = boost::json::parse(it->second, ec, {}, options);
  const boost::json::object* o = ec ? nullptr : v.if_object();
  if (o == nullptr) throw Failure{where + " is not a JSON object"};
  for (const auto& [k, x] : *o) {
    const std::string who = "scalar '" + one_line(std::string_view(k), 60) + "'";
    if (const std::int64_t* i = x.if_int64()) {
      out.emplace_back(std::string(k), *i);
      continue;
    }
    // Boost.JSON reads an integer literal past int64 as uint64 or, past
    // that, as a double: an integer all the same, but one out of range.
    const double* d = x.if_double();
    if (x.is_uint64() || (d != nullptr && std::isfinite(*d) && std::trunc(*d) == *d && std::fabs(*d) >= 0x1p63))
      throw Failure{one_line(path, 200) + ": " + who + " is out of range (a 64-bit signed integer)"};
    throw Failure{one_line(path, 200) + ": " + who + " is not an integer"};
  }
  return out;
}

/// The name Inductor gives graph input `position` (`arg0_1`, ...), which is
/// what the exporter names the scalars in the metadata by.
inline std::string graph_input_name(std::size_t position) { return "arg" + std::to_string(position) + "_1"; }

/// The values of the program's scalar inputs, in program order, from the
/// metadata's `entries` by the rule at the top of this file.
inline std::vector<std::int64_t> bind_scalars(const ir::Program& program,
                                              const std::vector<std::pair<std::string, std::int64_t>>& entries,
                                              std::string_view path) {
  struct ScalarInput {
    std::string symbol, graph_name;
  };
  std::vector<ScalarInput> wanted;
  for (std::size_t i = 0; i < program.inputs.size(); ++i)
    if (const expr::Expr* e = boost::variant2::get_if<expr::Expr>(&program.inputs[i]))
      wanted.push_back({e->is_symbol() ? std::string(e->name()) : std::string(), graph_input_name(i)});
  auto describe = [&](std::size_t k) {
    const ScalarInput& s = wanted[k];
    return "scalar input " + std::to_string(k) + " (" + (s.symbol.empty() ? "" : "symbol '" + s.symbol + "', ") +
           "graph input '" + s.graph_name + "')";
  };
  auto names = [&](const std::string& entry, std::size_t k) {
    return entry == wanted[k].graph_name || (!wanted[k].symbol.empty() && entry == wanted[k].symbol);
  };
  const std::string where = one_line(path, 200) + ": metadata 'scalars'";
  bool any_named = false;
  for (const auto& [name, value] : entries)
    for (std::size_t k = 0; k < wanted.size() && !any_named; ++k) any_named = names(name, k);

  std::vector<std::int64_t> values(wanted.size());
  if (!any_named) {
    if (entries.size() != wanted.size())
      throw Failure{where + " has " + std::to_string(entries.size()) + " entries, none named after a scalar input, " +
                    "and the program takes " + std::to_string(wanted.size()) + " scalar inputs" +
                    (wanted.empty() ? "" : " (name them: " + describe(0) + ", ...)")};
    for (std::size_t k = 0; k < entries.size(); ++k) values[k] = entries[k].second;
    return values;
  }
  std::vector<const std::string*> given_by(wanted.size(), nullptr);
  for (const auto& [name, value] : entries) {
    std::optional<std::size_t> match;
    for (std::size_t k = 0; k < wanted.size(); ++k) {
      if (!names(name, k)) continue;
      if (match)
        throw Failure{where + ": '" + one_line(name, 60) + "' names both " + describe(*match) + " and " + describe(k)};
      match = k;
    }
    if (!match)
      throw Failure{where + ": '" + one_line(name, 60) +
                    "' names no scalar input (entries are named after a symbol or a graph input, `arg<i>_1`, "
                    "when any is)"};
    if (given_by[*match] != nullptr)
      throw Failure{where + ": '" + one_line(*given_by[*match], 60) + "' and '" + one_line(name, 60) +
                    "' both give " + describe(*match)};
    given_by[*match] = &name;
    values[*match] = value;
  }
  for (std::size_t k = 0; k < wanted.size(); ++k)
    if (given_by[k] == nullptr) throw Failure{where + " has no entry for " + describe(k)};
  return values;
}

/// The symbols the inputs bind, as far as a dense file tells them: scalar
/// inputs, sizes read from input shapes (solved where a size is an
/// expression of its symbol, as the executor does), and strides and storage
/// offsets read from the dense layout the file holds (a program that takes
/// a stride as a symbol accepts any stride, the dense one as well as
/// another). Symbols it cannot tell are left unbound.
inline expr::Bindings bind_symbols(const ir::Program& program, const std::vector<const run::Tensor*>& by_buffer,
                                   const std::vector<std::int64_t>& scalars) {
  expr::Bindings at;
  std::size_t next_scalar = 0;
  for (const ir::ProgramInput& in : program.inputs)
    if (const expr::Expr* e = boost::variant2::get_if<expr::Expr>(&in); e && e->is_symbol())
      at.set(*e, scalars[next_scalar++]);
    else if (e)
      ++next_scalar;
  struct Pending {
    const ir::SymbolDecl* decl;
    expr::Expr dimension;
    std::int64_t observed;
  };
  std::vector<Pending> solve_later;
  for (const ir::SymbolDecl& s : program.symbols) {
    if (s.origin != ir::SymbolOrigin::input_shape || !s.source || s.path.size() != 1) continue;
    const run::Tensor* t = s.source->index < by_buffer.size() ? by_buffer[s.source->index] : nullptr;
    if (t == nullptr) continue;
    const ir::Layout& layout = program.buffer(*s.source).layout;
    const ir::KeyStep& step = s.path[0];
    const auto d = static_cast<std::size_t>(step.value);
    if (step.kind == ir::KeyStepKind::storage_offset) {
      if (layout.storage_offset == s.symbol) at.set(s.symbol, 0);
      continue;
    }
    if (step.kind != ir::KeyStepKind::size && step.kind != ir::KeyStepKind::stride) continue;
    const auto& dims = step.kind == ir::KeyStepKind::size ? layout.sizes : layout.strides;
    if (step.value < 0 || d >= dims.size() || d >= t->sizes.size() || !dims[d]) continue;
    const std::int64_t observed = step.kind == ir::KeyStepKind::size ? t->sizes[d] : t->strides[d];
    if (dims[d] == s.symbol) at.set(s.symbol, observed);
    else if (expr::depends_on(dims[d], s.symbol)) solve_later.push_back({&s, dims[d], observed});
  }
  for (const Pending& p : solve_later) {
    std::vector<expr::Expr> knowns;
    for (const auto& [symbol, value] : at.entries()) knowns.push_back(symbol);
    Result<expr::Solution> solution =
        expr::solve(p.dimension, program.ctx().integer(p.observed), p.decl->symbol, knowns);
    if (!solution) continue;
    Result<std::int64_t> holds = expr::eval(solution->condition, at);
    Result<std::int64_t> value = expr::eval(solution->value, at);
    if (holds && *holds != 0 && value) at.set(p.decl->symbol, *value);
  }
  return at;
}

/// `file` (dense, as the file holds it) laid out as input `decl` declares at
/// `at`: a fresh tensor with the declared strides and storage offset, its
/// storage sized for that layout, the values copied element by element.
/// `file` itself when the layout is dense already, or when it cannot be
/// evaluated or its sizes are not the file's: the executor then says what
/// is wrong. `budget` is what laid-out inputs may still allocate.
inline run::Tensor lay_out(const run::Tensor& file, const ir::BufferDecl& decl, const expr::Bindings& at,
                           std::int64_t& budget, std::string_view path) {
  const ir::Layout& layout = decl.layout;
  if (file.dtype != layout.dtype || file.sizes.size() != layout.sizes.size() ||
      layout.strides.size() != layout.sizes.size() || file.numel() == 0)
    return file;
  std::vector<std::int64_t> strides;
  for (std::size_t d = 0; d < layout.sizes.size(); ++d) {
    if (!layout.sizes[d] || !layout.strides[d]) return file;
    Result<std::int64_t> size = expr::eval(layout.sizes[d], at);
    Result<std::int64_t> stride = expr::eval(layout.strides[d], at);
    if (!size || !stride || *size != file.sizes[d]) return file;
    strides.push_back(*stride);
  }
  std::int64_t offset = 0;
  if (layout.storage_offset) {
    Result<std::int64_t> o = expr::eval(layout.storage_offset, at);
    if (!o) return file;
    offset = *o;
  }
  bool dense = offset == 0;
  for (std::size_t d = 0; d < strides.size() && dense; ++d) dense = file.sizes[d] <= 1 || strides[d] == file.strides[d];
  if (dense) return file;
  const std::string who = one_line(path, 200) + ": tensor '" + one_line(decl.name, 60) + "' laid out as the program declares it";
  Result<std::int64_t> bytes = run::bytes_spanned(file.sizes, strides, offset, file.dtype);
  if (!bytes) throw Failure{who + ": " + bytes.error().message};
  if (*bytes > budget)
    throw Failure{who + " needs " + std::to_string(*bytes) + " bytes, more than the " + std::to_string(budget) +
                  " left of the input limit (--max-input-bytes or $WRAPIR_MAX_INPUT_BYTES raises it)"};
  budget -= *bytes;
  auto laid = wrapir::detail::catch_failure([&] {
    run::Tensor t = run::executor_detail::allocate_cpu(file.sizes, strides, offset, file.dtype);
    run::executor_detail::copy_elements(t, file);
    return t;
  });
  if (!laid) throw Failure{who + ": " + one_line(laid.error().message, 400)};
  return *std::move(laid);
}

/// A fresh host copy of `t`'s whole storage with `t`'s layout, so that the
/// declared strides and storage offset stay (a call may write its inputs:
/// each call gets its own).
inline run::Tensor storage_copy(const run::Tensor& t) {
  const std::int64_t nbytes = t.storage ? t.storage->nbytes : 0;
  const std::int64_t item = std::max<std::int64_t>(ir::itemsize(t.dtype), 1);
  run::Tensor c = run::empty_cpu({(nbytes + item - 1) / item}, t.dtype).value();
  if (nbytes > 0) std::memcpy(c.storage->data, t.storage->data, static_cast<std::size_t>(nbytes));
  return run::Tensor{c.storage, t.dtype, t.sizes, t.strides, t.offset};
}

/// The program's inputs from a tensor file: tensor inputs in program order,
/// on the host, laid out as declared; scalar inputs in program order.
struct ProgramInputs {
  std::vector<run::Tensor> tensors;
  std::vector<const ir::BufferDecl*> tensor_decls;
  std::vector<std::int64_t> scalars;
};

inline ProgramInputs program_inputs(const ir::Program& program, const io::TensorFile& file, std::string_view path,
                                    std::uint64_t max_bytes) {
  ProgramInputs out;
  out.scalars = bind_scalars(program, scalars_of(file, path), path);
  std::vector<const run::Tensor*> by_buffer(program.buffers.size(), nullptr);
  for (const ir::ProgramInput& in : program.inputs)
    if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&in)) {
      const std::string& name = program.buffer(*b).name;
      const run::Tensor* t = file.find(name);
      if (t == nullptr)
        throw Failure{one_line(path, 200) + " has no tensor '" + one_line(name, 60) + "' for input " + name};
      by_buffer[b->index] = t;
    }
  const expr::Bindings at = bind_symbols(program, by_buffer, out.scalars);
  std::int64_t budget = static_cast<std::int64_t>(std::min<std::uint64_t>(max_bytes, INT64_MAX));
  for (const ir::ProgramInput& in : program.inputs)
    if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&in)) {
      out.tensors.push_back(lay_out(*by_buffer[b->index], program.buffer(*b), at, budget, path));
      out.tensor_decls.push_back(&program.buffer(*b));
    }
  return out;
}

}  // namespace wrapir::cli
