#pragma once
/// \file
/// Definitions of <wrapir/ir/program.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/ir/program.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace wrapir::ir {

WRAPIR_DECL Program::Program(std::string program_name)
    : name(std::move(program_name)), context(std::make_shared<expr::Context>()) {}

WRAPIR_DECL Program::Program(std::string program_name, std::shared_ptr<expr::Context> shared)
    : name(std::move(program_name)), context(std::move(shared)) {
  if (!context) throw std::invalid_argument("wrapir::ir::Program: null expression context");
}

#if defined(WRAPIR_SEPARATE_COMPILATION)
Program::Program(const Program&) = default;
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(const Program&) = default;
Program& Program::operator=(Program&&) noexcept = default;
Program::~Program() = default;
// Written out rather than `= default`: clang 14 crashes on a defaulted
// comparison defined out of class for a type that holds a vector of itself.
bool operator==(const Program& a, const Program& b) {
  return a.name == b.name && a.context == b.context && a.buffers == b.buffers && a.symbols == b.symbols &&
         a.kernels == b.kernels && a.pools == b.pools && a.inputs == b.inputs && a.body == b.body &&
         a.outputs == b.outputs && a.subgraphs == b.subgraphs;
}
#endif

WRAPIR_DECL std::size_t total_lines(const Program& p) noexcept {
  std::size_t n = p.body.size();
  for (const Program& g : p.subgraphs) n += total_lines(g);
  return n;
}

}  // namespace wrapir::ir
