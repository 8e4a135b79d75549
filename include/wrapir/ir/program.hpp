#pragma once
/// \file
/// `wrapir::Program`: a wrapper program as plain data.
///
/// A program has a name, tables (buffers, symbols, kernels, pools), ordered
/// inputs, a body of lines, outputs and named subgraphs, which are programs
/// themselves (the branches of a Conditional, the condition and body of a
/// WhileLoop). Lines refer to table entries by typed ids; ids in a subgraph's
/// lines refer to the subgraph's own tables.
///
/// All expressions of a program and of its subgraphs belong to one
/// `expr::Context`, which the program shares (`std::shared_ptr`): copying a
/// program copies its tables and lines and shares the context, which is
/// safe because expressions are immutable.

#include <wrapir/detail/config.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/symbol.hpp>

#include <boost/variant2/variant.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::ir {

/// One input of a program, in call order: a tensor (a buffer of role
/// `input`) or a symbolic integer (a symbol of origin `input`).
using ProgramInput = boost::variant2::variant<BufferId, expr::Expr>;

/// One output of a program: a buffer (whole or a view of it), a symbolic
/// integer, or None.
using ProgramOutput = boost::variant2::variant<None, BufferArg, expr::Expr>;

struct Program {
  /// The name of the generated function or module; a valid name.
  std::string name;
  std::shared_ptr<expr::Context> context;

  std::vector<BufferDecl> buffers;
  std::vector<SymbolDecl> symbols;
  std::vector<KernelDecl> kernels;
  std::vector<PoolDecl> pools;

  std::vector<ProgramInput> inputs;
  std::vector<Line> body;
  std::vector<ProgramOutput> outputs;
  std::vector<Program> subgraphs;

  /// An empty program with a fresh expression context.
  explicit Program(std::string program_name = "program");

  /// An empty program whose expressions live in `shared` (a subgraph, or a
  /// program loaded into an existing context).
  Program(std::string program_name, std::shared_ptr<expr::Context> shared);

#if defined(WRAPIR_SEPARATE_COMPILATION)
  // Copying, moving, destroying and comparing programs instantiate
  // std::variant's visitation over every line kind (about a second of
  // compile time): separately compiled mode does it once, in the library
  // (impl/program.ipp). Header-only, they are the implicit ones, defined
  // only in the translation units that use them.
  Program(const Program&);
  Program(Program&&) noexcept;
  Program& operator=(const Program&);
  Program& operator=(Program&&) noexcept;
  ~Program();
  friend bool operator==(const Program& a, const Program& b);
#else
  /// Same name, tables, inputs, body, outputs and subgraphs, and the same
  /// expression context (expressions compare by identity).
  friend bool operator==(const Program& a, const Program& b) = default;
#endif

  [[nodiscard]] expr::Context& ctx() const noexcept { return *context; }

  // Checked table access: an id from another program throws
  // std::out_of_range rather than reading past a table.
  [[nodiscard]] const BufferDecl& buffer(BufferId id) const { return buffers.at(id.index); }
  [[nodiscard]] BufferDecl& buffer(BufferId id) { return buffers.at(id.index); }
  [[nodiscard]] const KernelDecl& kernel(KernelId id) const { return kernels.at(id.index); }
  [[nodiscard]] KernelDecl& kernel(KernelId id) { return kernels.at(id.index); }
  [[nodiscard]] const PoolDecl& pool(PoolId id) const { return pools.at(id.index); }
  [[nodiscard]] const Program& subgraph(GraphId id) const { return subgraphs.at(id.index); }
  [[nodiscard]] Program& subgraph(GraphId id) { return subgraphs.at(id.index); }

  [[nodiscard]] bool contains(BufferId id) const noexcept { return id.index < buffers.size(); }
  [[nodiscard]] bool contains(KernelId id) const noexcept { return id.index < kernels.size(); }
  [[nodiscard]] bool contains(PoolId id) const noexcept { return id.index < pools.size(); }
  [[nodiscard]] bool contains(GraphId id) const noexcept { return id.index < subgraphs.size(); }

  // Lookups by name (linear; passes use ids).
  [[nodiscard]] std::optional<BufferId> find_buffer(std::string_view n) const noexcept {
    for (std::size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].name == n) return BufferId{static_cast<std::uint32_t>(i)};
    return std::nullopt;
  }
  [[nodiscard]] std::optional<KernelId> find_kernel(std::string_view n) const noexcept {
    for (std::size_t i = 0; i < kernels.size(); ++i)
      if (kernels[i].name == n) return KernelId{static_cast<std::uint32_t>(i)};
    return std::nullopt;
  }
  [[nodiscard]] std::optional<GraphId> find_subgraph(std::string_view n) const noexcept {
    for (std::size_t i = 0; i < subgraphs.size(); ++i)
      if (subgraphs[i].name == n) return GraphId{static_cast<std::uint32_t>(i)};
    return std::nullopt;
  }
  /// The declaration of `symbol`, if the table has one.
  [[nodiscard]] const SymbolDecl* find_symbol(expr::Expr symbol) const noexcept {
    for (const SymbolDecl& s : symbols)
      if (s.symbol == symbol) return &s;
    return nullptr;
  }

};

/// The number of lines of `p` and of all its subgraphs.
[[nodiscard]] WRAPIR_DECL std::size_t total_lines(const Program& p) noexcept;

}  // namespace wrapir::ir

namespace wrapir {
using ir::Program;
}  // namespace wrapir

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/ir/impl/program.ipp>
#endif
