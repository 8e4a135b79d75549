#pragma once
/// \file
/// The rewrite half of `run::autotune` (run/autotune.hpp): in one graph,
/// every call of a decided multi-kernel becomes an autotune `Comment` and a
/// `KernelCall` of the chosen candidate with the arguments its `arg_index`
/// slices select; the `MultiKernelDefinition`, the definitions of the
/// candidates nothing calls any more and their kernel-table entries go, and
/// the kernel ids of the remaining lines are renumbered.
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::run::autotune_detail {

/// What to do with one multi-kernel: call candidate `index` of its
/// definition, with `comment` before each call.
struct Decision {
  std::size_t index = 0;
  std::string comment;
  std::size_t* calls = nullptr;  // counts the calls rewritten, when set
};

/// The arguments candidate `index` of `def` receives from the combined list
/// `combined` (its slices; all of it when the definition has none).
template <class T>
std::vector<T> select(const ir::MultiKernelDefinition& def, std::size_t index, const std::vector<T>& combined,
                      const std::string& who) {
  if (index >= def.arg_index.size() || def.arg_index.empty()) return combined;
  std::vector<T> out;
  for (const ir::ArgSlice& s : def.arg_index[index]) {
    if (s.start < 0 || s.start > s.stop || static_cast<std::uint64_t>(s.stop) > combined.size())
      wrapir::detail::fail(who + ": argument slice [" + std::to_string(s.start) + ", " + std::to_string(s.stop) +
                           ") does not fit the call's " + std::to_string(combined.size()) + " arguments");
    out.insert(out.end(), combined.begin() + s.start, combined.begin() + s.stop);
  }
  return out;
}

/// Applies `decisions` (by the multi-kernel's kernel id) to `g`'s body and
/// kernel table; returns how many calls were rewritten. Throws
/// `detail::Failure` for a call whose slices do not fit it.
inline std::size_t rewrite_graph(ir::Program& g, const std::unordered_map<std::uint32_t, Decision>& decisions) {
  if (decisions.empty()) return 0;
  std::unordered_map<std::uint32_t, const ir::MultiKernelDefinition*> defs;
  for (const ir::Line& line : g.body)
    if (const auto* d = std::get_if<ir::MultiKernelDefinition>(&line); d && decisions.contains(d->kernel.index))
      defs.emplace(d->kernel.index, d);

  std::size_t rewritten = 0;
  std::vector<ir::Line> body;
  body.reserve(g.body.size());
  for (ir::Line& line : g.body) {
    if (const auto* d = std::get_if<ir::MultiKernelDefinition>(&line); d && decisions.contains(d->kernel.index))
      continue;
    const auto* call = std::get_if<ir::MultiKernelCall>(&line);
    if (call == nullptr || !decisions.contains(call->kernel.index)) {
      body.push_back(std::move(line));
      continue;
    }
    const Decision& decision = decisions.at(call->kernel.index);
    const auto def = defs.find(call->kernel.index);
    const std::string who = "multi-kernel " + ir::quote_for_diagnostic(g.kernels.at(call->kernel.index).name);
    if (def == defs.end() || decision.index >= def->second->candidates.size())
      wrapir::detail::fail(who + " is called but its definition is not in the same graph");
    ir::KernelCall direct;
    direct.kernel = def->second->candidates[decision.index];
    direct.args = select(*def->second, decision.index, call->args, who);
    if (call->arg_types.size() == call->args.size())
      direct.arg_types = select(*def->second, decision.index, call->arg_types.to_vector(), who);
    direct.grid = ir::LauncherGrid{};  // each candidate launches with its own launcher grid
    direct.device = call->device;
    direct.stream = call->stream;
    direct.provenance = call->provenance;
    body.emplace_back(ir::Comment{decision.comment});
    body.emplace_back(std::move(direct));
    ++rewritten;
    if (decision.calls != nullptr) ++*decision.calls;
  }

  // What still refers to each kernel, now that the calls are direct.
  std::vector<bool> referenced(g.kernels.size(), false);
  auto mark = [&](ir::KernelId k) {
    if (k.index < referenced.size()) referenced[k.index] = true;
  };
  for (const ir::Line& line : body) {
    if (const auto* c = std::get_if<ir::KernelCall>(&line)) mark(c->kernel);
    else if (const auto* m = std::get_if<ir::MultiKernelCall>(&line)) mark(m->kernel);
    else if (const auto* d = std::get_if<ir::MultiKernelDefinition>(&line)) {
      mark(d->kernel);
      for (const ir::KernelId k : d->candidates) mark(k);
    }
  }
  // Dropped: the decided multi-kernels, and their candidates nothing refers
  // to any more (kernels the program never used before are not ours to drop).
  std::vector<bool> dropped(g.kernels.size(), false);
  for (const auto& [index, def] : defs) {
    dropped.at(index) = true;
    for (const ir::KernelId k : def->candidates)
      if (k.index < dropped.size() && !referenced[k.index]) dropped[k.index] = true;
  }
  std::vector<ir::Line> kept;
  kept.reserve(body.size());
  for (ir::Line& line : body) {
    if (const auto* d = std::get_if<ir::KernelDefinition>(&line); d && d->kernel.index < dropped.size() &&
                                                                  dropped[d->kernel.index])
      continue;
    kept.push_back(std::move(line));
  }

  // Compact the kernel table and renumber what refers to it.
  constexpr auto gone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> renumbered(g.kernels.size(), gone);
  std::vector<ir::KernelDecl> table;
  for (std::size_t i = 0; i < g.kernels.size(); ++i) {
    if (dropped[i]) continue;
    renumbered[i] = static_cast<std::uint32_t>(table.size());
    table.push_back(std::move(g.kernels[i]));
  }
  auto renumber = [&](ir::KernelId& k) {
    if (k.index < renumbered.size()) {
      if (renumbered[k.index] == gone) wrapir::detail::fail("a dropped kernel is still referred to (internal error)");
      k.index = renumbered[k.index];
    }
  };
  for (ir::Line& line : kept) {
    if (auto* d = std::get_if<ir::KernelDefinition>(&line)) renumber(d->kernel);
    else if (auto* c = std::get_if<ir::KernelCall>(&line)) renumber(c->kernel);
    else if (auto* m = std::get_if<ir::MultiKernelCall>(&line)) renumber(m->kernel);
    else if (auto* md = std::get_if<ir::MultiKernelDefinition>(&line)) {
      renumber(md->kernel);
      for (ir::KernelId& k : md->candidates) renumber(k);
    }
  }
  g.kernels = std::move(table);
  g.body = std::move(kept);
  return rewritten;
}

}  // namespace wrapir::run::autotune_detail
