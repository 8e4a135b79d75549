#pragma once
/// \file
/// Definitions of <wrapir/pass/symbolic_placement.hpp> (see
/// <wrapir/detail/config.hpp>).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/pass/detail/offset_forms.hpp>
#include <wrapir/pass/detail/radix_sort.hpp>
#include <wrapir/pass/detail/skyline.hpp>
#include <wrapir/pass/symbolic_placement.hpp>

namespace wrapir::pass {

namespace detail {

WRAPIR_DECL SymbolicPlacement symbolic_placement_of(std::span<const ArenaBlock> blocks, Placement hint_placement,
                                                   std::span<const expr::Expr> symbolic_bytes, std::int64_t alignment,
                                                   const std::function<std::string()>& fresh_name,
                                                   const BlockNamer& block_name) {
  if (symbolic_bytes.size() != blocks.size())
    throw std::invalid_argument("symbolic_placement: " + std::to_string(symbolic_bytes.size()) +
                                " symbolic sizes for " + std::to_string(blocks.size()) + " blocks");
  SymbolicPlacement out;
  for (const ArenaExtent& a : hint_placement.arenas) out.arena_device.push_back(a.device);
  if (blocks.empty()) {
    for (std::size_t k = 0; k < hint_placement.arenas.size(); ++k) out.arena_bytes.push_back(expr::Expr{});
    return out;
  }
  expr::Context& ctx = symbolic_bytes.front().context();
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (!symbolic_bytes[i])
      throw std::invalid_argument("symbolic_placement: block " + block_name(i) + " has a null size");
    if (&symbolic_bytes[i].context() != &ctx)
      throw std::invalid_argument("symbolic_placement: the sizes belong to different expression contexts");
    if (blocks[i].bytes == 0 && !symbolic_bytes[i].is_integer(0))
      throw std::invalid_argument("symbolic_placement: block " + block_name(i) +
                                  " has 0 bytes at the hints but the size " + expr::to_string(symbolic_bytes[i]));
  }
  // Blocks by hint offset: every block below another comes first.
  // Offsets are not negative (the placement is valid), and the sort is
  // stable, so equal offsets keep the blocks in trace order.
  std::vector<detail::KeyedIndex> offset_order(blocks.size()), scratch;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    offset_order[i] = {static_cast<std::uint64_t>(hint_placement.blocks[i].offset), static_cast<std::uint32_t>(i)};
  detail::radix_sort(offset_order, scratch);
  std::vector<std::uint32_t> by_offset(blocks.size());
  for (std::size_t k = 0; k < blocks.size(); ++k) by_offset[k] = offset_order[k].index;
  std::vector<detail::KeyedIndex>().swap(offset_order);
  std::vector<detail::KeyedIndex>().swap(scratch);
  // What is read of the placement's blocks below is their arenas: kept in
  // the answer, and the placement's own table freed before the skylines
  // and forms grow.
  out.arena_of.resize(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) out.arena_of[i] = hint_placement.blocks[i].arena;
  std::vector<BlockPlacement>().swap(hint_placement.blocks);
  out.offsets.assign(blocks.size(), ctx.integer(0));
  detail::OffsetTerms known;
  FormSets sets;
  // Gives a long set a name (see the header's file comment).
  const auto name_if_long = [&](std::vector<detail::OffsetForm>& forms, std::size_t arena) {
    if (!fresh_name || forms.empty()) return;
    std::size_t longest = 0;
    std::int64_t at_hints = 0;
    for (const detail::OffsetForm& f : forms) {
      longest = std::max(longest, f.terms.size());
      at_hints = std::max(at_hints, f.at_hints);
    }
    if (longest <= detail::max_form_terms && forms.size() <= detail::max_offset_forms) return;
    const expr::Expr symbol = ctx.symbol(fresh_name(), expr::Assumption::nonnegative);
    out.named.push_back({symbol, detail::max_of_forms(ctx, forms, known), at_hints, arena});
    forms.assign(1, detail::OffsetForm{0, {known.name(symbol, at_hints)}, at_hints});
  };
  // Past `detail::max_offset_forms` forms, a set that may be named is
  // named (the Max itself, exact) rather than joined: a join of forms of
  // unrelated sizes (`s3` and `s7`, two families) is their sum, so an
  // arena holding many such blocks at one offset, or a block on many of
  // them, was sized as if they were stacked (6,500 buffers never live
  // together, an arena 65 times its bound). Joins remain where no name
  // can stand: a small block's offset (see `own_alignment` below) and a
  // placement made without names.
  const auto may_join = [&](const std::vector<detail::OffsetForm>& forms, bool may_name) {
    return !(may_name && fresh_name) && !detail::refers_to_names(forms, known);
  };
  // Per block its forms, per arena the forms of its size, as sets.
  const std::uint32_t lone_zero = sets.intern({detail::OffsetForm{}});
  constexpr std::uint32_t no_tops = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> form_set(blocks.size(), lone_zero);
  std::vector<std::uint32_t> arena_tops(hint_placement.arenas.size(), no_tops);
  std::vector<expr::Expr> aligned(blocks.size());
  // `align(size)` per distinct size: interning it once per block cost as
  // much as the rest of the block.
  std::unordered_map<const expr::Node*, expr::Expr> aligned_size;
  // Per arena, the block placed last at each time step. The placed blocks
  // under block i that overlap it in time and that no block placed after
  // them (and under i) overlaps in time are exactly those on top somewhere
  // in i's lifetime that no later one of those overlaps (by Helly's
  // property of intervals, a later block overlapping one of them and i
  // overlaps both at one step, where some block at least as late is on top),
  // so reading the skyline finds them without looking at other blocks.
  std::vector<detail::Skyline> skylines(hint_placement.arenas.size());
  std::vector<std::uint32_t> rank(blocks.size());
  for (std::size_t k = 0; k < by_offset.size(); ++k) rank[by_offset[k]] = static_cast<std::uint32_t>(k);
  std::vector<std::uint32_t> under, uncovered;
  std::map<std::size_t, std::size_t> later_lifetimes;  // merged [begin, end) of the later blocks seen
  const auto overlaps_later = [&](const ArenaBlock& b) {
    auto it = later_lifetimes.upper_bound(b.begin);
    if (it != later_lifetimes.begin() && std::prev(it)->second > b.begin) return true;
    return it != later_lifetimes.end() && it->first < b.end;
  };
  const auto add_later = [&](const ArenaBlock& b) {
    std::size_t lo = b.begin, hi = b.end;
    auto it = later_lifetimes.upper_bound(lo);
    if (it != later_lifetimes.begin() && std::prev(it)->second >= lo) --it;
    while (it != later_lifetimes.end() && it->first <= hi) {
      lo = std::min(lo, it->first);
      hi = std::max(hi, it->second);
      it = later_lifetimes.erase(it);
    }
    later_lifetimes.emplace_hint(it, lo, hi);
  };
  const auto node_key = [](const expr::Expr& e) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(e.node())); };
  // A block's alignment: a smaller one only when its size is an integer
  // here too, so every symbolic term of a form is a multiple of
  // `alignment`, and rounding a form's constant up to a block's alignment
  // aligns the whole form for every binding.
  const auto own_alignment = [&](std::size_t i) {
    return symbolic_bytes[i].is_integer() ? block_alignment(blocks[i], alignment) : alignment;
  };
  FormSets::Key key;
  for (const std::uint32_t i : by_offset) {
    const ArenaBlock& a = blocks[i];
    const std::size_t arena = out.arena_of[i];
    std::uint32_t mine = lone_zero;
    if (a.bytes > 0) {
      const std::int64_t own = own_alignment(i);
      under.clear();
      skylines[arena].paint(a.begin, a.end, i, under);
      std::sort(under.begin(), under.end(), [&](std::uint32_t x, std::uint32_t y) { return rank[x] < rank[y]; });
      under.erase(std::unique(under.begin(), under.end()), under.end());
      // A block below another one of these that it overlaps in time is
      // already counted in that one's forms, which dominate its own plus
      // its size: its forms would only be pruned again.
      uncovered.clear();
      later_lifetimes.clear();
      for (std::size_t x = under.size(); x-- > 0;) {
        const ArenaBlock& b = blocks[under[x]];
        if (!overlaps_later(b)) uncovered.push_back(under[x]);
        add_later(b);
      }
      if (!uncovered.empty()) {
        key.assign({0, static_cast<std::uint64_t>(own)});  // a block's forms, at its alignment
        for (std::size_t x = uncovered.size(); x-- > 0;) {
          const std::size_t j = uncovered[x];
          key.push_back(form_set[j]);
          key.push_back(node_key(aligned[j]));
          key.push_back(static_cast<std::uint64_t>(detail::align_up_checked(blocks[j].bytes, own_alignment(j), block_name, j)));
        }
        if (const std::uint32_t* known_set = sets.derived(key)) {
          mine = *known_set;
        } else {
          std::vector<detail::OffsetForm> forms;
          for (std::size_t x = uncovered.size(); x-- > 0;) {
            const std::size_t j = uncovered[x];
            const std::int64_t hint = detail::align_up_checked(blocks[j].bytes, own_alignment(j), block_name, j);
            for (const detail::OffsetForm& f : sets[form_set[j]]) forms.push_back(f.plus(aligned[j], hint, known));
          }
          // Rounds each form's constant up to `to`; then prunes again.
          const auto round_up = [&](std::vector<detail::OffsetForm>& rounding, std::int64_t to, bool join) {
            bool rounded = false;
            for (detail::OffsetForm& f : rounding) {
              std::int64_t up = 0;
              if (!checked::align_up(f.constant, to, up) || !checked::add(f.at_hints, up - f.constant, f.at_hints))
                detail::throw_offset_overflow();
              rounded = rounded || up != f.constant;
              f.constant = up;
            }
            if (rounded) detail::prune_offset_forms(rounding, known, join);
          };
          const auto longest_at_hints = [](const std::vector<detail::OffsetForm>& of) {
            std::int64_t m = 0;
            for (const detail::OffsetForm& f : of) m = std::max(m, f.at_hints);
            return m;
          };
          const bool may_name = own == alignment;
          // Below a smaller block the constant may be off this block's
          // alignment; at the hints the rounded form is still at most the
          // planned offset, which is aligned and above the unrounded form.
          if (may_name || !fresh_name) {
            detail::prune_offset_forms(forms, known, may_join(forms, may_name));
            round_up(forms, own, may_join(forms, may_name));
          } else {
            // A small block: a name must be a multiple of `alignment` (see
            // `own_alignment`), so a set too long to keep is named with its
            // constants rounded up to it (at most alignment - own bytes
            // more at the hints), or joined as before where that is
            // smaller at the hints. Blocks of unrelated sizes joined were
            // sized as if stacked: a 16-byte block live beside 6,500
            // buffers never live together got an arena 209 times the bound.
            detail::prune_offset_forms(forms, known, false);
            std::size_t longest = 0;
            for (const detail::OffsetForm& f : forms) longest = std::max(longest, f.terms.size());
            if (forms.size() <= detail::max_offset_forms && longest <= detail::max_form_terms) {
              round_up(forms, own, false);
            } else {
              std::vector<detail::OffsetForm> named = forms;
              round_up(named, alignment, false);
              // A join is at least each form it joins, so the join need not
              // be built (quadratic in the forms) when the name is no larger
              // than the largest form.
              std::int64_t joined_at_hints = std::numeric_limits<std::int64_t>::max();
              if (longest_at_hints(named) > longest_at_hints(forms) && !detail::refers_to_names(forms, known)) {
                detail::prune_offset_forms(forms, known, true);
                round_up(forms, own, true);
                joined_at_hints = longest_at_hints(forms);
              }
              if (longest_at_hints(named) <= joined_at_hints) {
                forms = std::move(named);
                name_if_long(forms, arena);
              }
            }
          }
          if (forms.empty()) forms.push_back(detail::OffsetForm{});
          // A name stands for a multiple of the planner's alignment, as
          // every term must (see `own_alignment`): blocks aligned so name
          // their offsets as they are.
          if (may_name) name_if_long(forms, arena);
          mine = sets.intern(std::move(forms));
          sets.derive(key, mine);
        }
      }
      if (own == alignment) {
        auto [at, fresh] = aligned_size.try_emplace(symbolic_bytes[i].node());
        if (fresh) at->second = expr::align(symbolic_bytes[i], alignment);
        aligned[i] = at->second;
      } else {  // a small block of fixed size
        aligned[i] = ctx.integer(detail::align_up_checked(a.bytes, own, block_name, i));
      }
    }
    form_set[i] = mine;
    out.offsets[i] = sets.max_of(mine, ctx, known);
    // The arena's tops: its forms so far and this block's plus its size.
    key.assign({1, arena_tops[arena], mine, node_key(symbolic_bytes[i]), static_cast<std::uint64_t>(a.bytes)});
    if (const std::uint32_t* known_set = sets.derived(key)) {
      arena_tops[arena] = *known_set;
    } else {
      std::vector<detail::OffsetForm> tops;
      if (arena_tops[arena] != no_tops) tops = sets[arena_tops[arena]];
      for (const detail::OffsetForm& f : sets[mine]) tops.push_back(f.plus(symbolic_bytes[i], a.bytes, known));
      detail::prune_offset_forms(tops, known, may_join(tops, true));
      name_if_long(tops, arena);
      const std::uint32_t made = sets.intern(std::move(tops));
      sets.derive(key, made);
      arena_tops[arena] = made;
    }
  }
  for (const std::uint32_t tops : arena_tops)
    out.arena_bytes.push_back(tops == no_tops ? ctx.integer(0) : sets.max_of(tops, ctx, known));
  return out;
}

}  // namespace detail

WRAPIR_DECL SymbolicPlacement symbolic_placement(const AllocationTrace& trace, const Placement& hint_placement,
                                            std::span<const expr::Expr> symbolic_bytes, std::int64_t alignment,
                                            std::string_view name_prefix) {
  if (symbolic_bytes.size() != trace.allocations.size())
    throw std::invalid_argument("symbolic_placement: " + std::to_string(symbolic_bytes.size()) +
                                " symbolic sizes for " + std::to_string(trace.allocations.size()) + " blocks");
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
    throw std::invalid_argument("symbolic_placement: the alignment " + std::to_string(alignment) +
                                " is not a positive power of two");
  if (auto bad = check_placement(trace, hint_placement, alignment))
    throw std::invalid_argument("symbolic_placement: the placement at the hints is invalid: " + *bad);
  if (!expr::is_valid_symbol_name(std::string(name_prefix) + "0"))
    throw std::invalid_argument("symbolic_placement: the name prefix '" + std::string(name_prefix.substr(0, 64)) +
                                "' does not begin a symbol name");
  std::size_t counter = 0;
  const auto fresh_name = [&] { return detail::fresh_symbol_name(name_prefix, counter, symbolic_bytes.front().context()); };
  const std::vector<detail::ArenaBlock> blocks = detail::arena_blocks_of(trace, "symbolic_placement");
  return detail::symbolic_placement_of(blocks, hint_placement, symbolic_bytes, alignment,
                                       symbolic_bytes.empty() ? std::function<std::string()>{} : fresh_name,
                                       detail::names_of(trace));
}

WRAPIR_DECL Result<Placement> evaluate(const SymbolicPlacement& placement, const expr::Bindings& given) {
  expr::Bindings named_too;
  if (!placement.named.empty()) named_too = given;
  const expr::Bindings& bindings = placement.named.empty() ? given : named_too;
  for (const NamedOffset& n : placement.named) {
    auto v = expr::eval(n.value, named_too);
    if (!v) return Diagnostic{"the value of " + std::string(n.symbol.name()) + ": " + v.error().message};
    named_too.set(n.symbol, v.value());
  }
  Placement out;
  for (std::size_t k = 0; k < placement.arena_device.size(); ++k) {
    std::int64_t bytes = 0;
    if (placement.arena_bytes[k]) {
      auto v = expr::eval(placement.arena_bytes[k], bindings);
      if (!v) return Diagnostic{"the size of arena " + std::to_string(k) + ": " + v.error().message};
      bytes = v.value();
    }
    out.arenas.push_back({placement.arena_device[k], bytes});
  }
  for (std::size_t i = 0; i < placement.offsets.size(); ++i) {
    auto v = expr::eval(placement.offsets[i], bindings);
    if (!v) return Diagnostic{"the offset of block " + std::to_string(i) + ": " + v.error().message};
    out.blocks.push_back({placement.arena_of[i], v.value()});
  }
  return out;
}

WRAPIR_DECL Result<bool> needs_replan(const AllocationTrace& trace, std::span<const expr::Expr> symbolic_bytes,
                                      const expr::Bindings& bindings) {
  if (symbolic_bytes.size() != trace.allocations.size())
    return Diagnostic{std::to_string(symbolic_bytes.size()) + " symbolic sizes for " +
                      std::to_string(trace.allocations.size()) + " blocks"};
  for (std::size_t i = 0; i < symbolic_bytes.size(); ++i) {
    auto v = expr::eval(symbolic_bytes[i], bindings);
    if (!v) return Diagnostic{"the size of block " + trace.allocations[i].name + ": " + v.error().message};
    if (v.value() > trace.allocations[i].bytes) return true;
  }
  return false;
}

}  // namespace wrapir::pass
