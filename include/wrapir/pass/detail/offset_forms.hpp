#pragma once
/// \file
/// Symbolic offsets as sets of forms (pass/symbolic_placement.hpp): a
/// constant plus sums of symbolic sizes, pruned and interned.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>
#include <wrapir/detail/hash.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>
#include <wrapir/expr/ops.hpp>

namespace wrapir::pass::detail {

/// The symbolic sizes that offsets are sums of, numbered in first-seen
/// order. Forms then hold lists of small integers, so the set operations of
/// pruning compare integers rather than expression trees; expressions are
/// hash-consed, so one size is one node and one number.
///
/// Each size is also read as a member of a family: `align(k*m, A)` (or
/// `k*m` unaligned) is the family `(m, A)` at scale `k`, for a positive
/// integer `k` and the rest of the product `m`. Within a family a size is
/// non-decreasing in its scale (sizes are non-negative, so `m` is, and
/// `align` is monotone), which is what lets forms be compared and joined
/// family by family (`OffsetForm`): `3*s0` and `5*s0` compare, where two
/// opaque terms would not.
class OffsetTerms {
 public:
  [[nodiscard]] std::uint32_t id(expr::Expr size, std::int64_t hint) {
    const auto [it, inserted] = ids_.try_emplace(size.node(), static_cast<std::uint32_t>(sizes_.size()));
    if (inserted) {
      sizes_.push_back(size);
      hints_.push_back(hint);
      const auto [family, scale] = family_of(size);
      families_.push_back(family);
      scales_.push_back(scale);
    }
    return it->second;
  }
  /// The id of `symbol`, a name given to a set of forms whose Max is
  /// `hint` at the hints.
  [[nodiscard]] std::uint32_t name(expr::Expr symbol, std::int64_t hint) {
    const std::uint32_t t = id(symbol, hint);
    if (named_.size() <= t) named_.resize(t + 1, false);
    named_[t] = true;
    return t;
  }
  /// Whether term `id` is such a name.
  [[nodiscard]] bool named(std::uint32_t id) const { return id < named_.size() && named_[id]; }
  [[nodiscard]] expr::Expr size(std::uint32_t id) const { return sizes_[id]; }
  [[nodiscard]] std::int64_t hint(std::uint32_t id) const { return hints_[id]; }
  [[nodiscard]] std::uint32_t family(std::uint32_t id) const { return families_[id]; }
  [[nodiscard]] std::int64_t scale(std::uint32_t id) const { return scales_[id]; }
  /// The order of terms in a form: by family, then by scale, largest first.
  [[nodiscard]] bool before(std::uint32_t a, std::uint32_t b) const {
    return families_[a] != families_[b] ? families_[a] < families_[b] : scales_[a] > scales_[b];
  }

 private:
  std::pair<std::uint32_t, std::int64_t> family_of(expr::Expr size) {
    std::int64_t alignment = 0;
    expr::Expr inner = size;
    if (size.is(expr::Kind::align)) {
      alignment = size.value();
      inner = size.operand(0);
    }
    const expr::Term term = expr::split_term(inner);
    // A size that is not a positive multiple of something gets a family of
    // its own (scale 1): it compares only with itself.
    const bool scaled = term.monomial && term.coefficient > 0;
    const FamilyKey key{scaled ? term.monomial.node() : size.node(), scaled ? alignment : -1};
    const auto [it, inserted] = family_ids_.try_emplace(key, static_cast<std::uint32_t>(family_ids_.size()));
    return {it->second, scaled ? term.coefficient : 1};
  }
  struct FamilyKey {
    const expr::Node* monomial;
    std::int64_t alignment;  // 0 unaligned, -1 a family of one size
    bool operator==(const FamilyKey&) const = default;
  };
  struct FamilyHash {
    std::size_t operator()(const FamilyKey& k) const noexcept {
      return wrapir::detail::hash_mix(std::hash<const expr::Node*>{}(k.monomial), static_cast<std::size_t>(k.alignment));
    }
  };
  std::unordered_map<const expr::Node*, std::uint32_t> ids_;
  std::unordered_map<FamilyKey, std::uint32_t, FamilyHash> family_ids_;
  std::vector<expr::Expr> sizes_;
  std::vector<std::int64_t> hints_;  // each size's value at the hints
  std::vector<std::uint32_t> families_;
  std::vector<std::int64_t> scales_;
  std::vector<bool> named_;
};

[[noreturn]] inline void throw_offset_overflow() {
  throw std::invalid_argument("symbolic_placement: an offset exceeds 2^63 bytes at the hints");
}

/// A lower bound on a symbolic offset that is a sum: a constant plus
/// symbolic terms (aligned sizes along one chain of blocks stacked below a
/// block). A block's offset is the Max of its forms; keeping offsets as flat
/// sets of forms, rather than nesting `Max(offset + align(size))`, keeps
/// every expression small (nested Max would share subterms in memory but
/// print and evaluate as trees exponential in the depth of the stacking).
///
/// Terms are kept in `OffsetTerms::before` order: family by family, each
/// family's scales largest first. Form A is then at least form B for every
/// binding when, family by family, A has at least as many terms and its
/// i-th largest is at least B's i-th largest (each size is monotone in its
/// scale and non-negative); and the position-wise largest of two forms'
/// terms is a form at least both, no larger than their union.
struct OffsetForm {
  std::int64_t constant = 0;
  std::vector<std::uint32_t> terms;  // `OffsetTerms` ids in `before` order, with repeats
  std::int64_t at_hints = 0;

  [[nodiscard]] OffsetForm plus(expr::Expr size, std::int64_t hint, OffsetTerms& known) const {
    OffsetForm f = *this;
    if (f.at_hints > std::numeric_limits<std::int64_t>::max() - hint) throw_offset_overflow();
    f.at_hints += hint;
    if (size.is_integer()) {
      f.constant += size.value();
    } else {
      const std::uint32_t t = known.id(size, hint);
      f.terms.insert(std::upper_bound(f.terms.begin(), f.terms.end(), t,
                                      [&](std::uint32_t a, std::uint32_t b) { return known.before(a, b); }),
                     t);
    }
    return f;
  }
  /// Not smaller than `o` for any binding.
  [[nodiscard]] bool dominates(const OffsetForm& o, const OffsetTerms& known) const {
    if (constant < o.constant || terms.size() < o.terms.size()) return false;
    auto a = terms.begin(), b = o.terms.begin();
    while (b != o.terms.end()) {
      const std::uint32_t family = known.family(*b);
      while (a != terms.end() && known.family(*a) < family) ++a;  // families `o` lacks
      for (; b != o.terms.end() && known.family(*b) == family; ++a, ++b)
        if (a == terms.end() || known.family(*a) != family || known.scale(*a) < known.scale(*b)) return false;
    }
    return true;
  }
  /// Calls `take(id)` for each term of the join of `terms` and `o.terms`:
  /// family by family, the larger of the two i-th largest terms, then the
  /// longer family's remaining terms.
  template <class Take>
  void for_each_joined_term(const OffsetForm& o, const OffsetTerms& known, Take&& take) const {
    auto a = terms.begin(), b = o.terms.begin();
    while (a != terms.end() || b != o.terms.end()) {
      if (b == o.terms.end() || (a != terms.end() && known.family(*a) < known.family(*b))) {
        take(*a++);
      } else if (a == terms.end() || known.family(*b) < known.family(*a)) {
        take(*b++);
      } else {
        take(known.scale(*a) >= known.scale(*b) ? *a : *b);
        ++a;
        ++b;
      }
    }
  }
  /// `join(o).at_hints`, without building the join: pruning asks this of
  /// every pair. Saturates, so an overflowing join is never the cheapest.
  [[nodiscard]] std::int64_t join_at_hints(const OffsetForm& o, const OffsetTerms& known) const {
    std::int64_t sum = std::max(constant, o.constant);
    for_each_joined_term(o, known, [&](std::uint32_t t) {
      if (!checked::add(sum, known.hint(t), sum)) sum = std::numeric_limits<std::int64_t>::max();
    });
    return sum;
  }
  /// A form not smaller than either.
  [[nodiscard]] OffsetForm join(const OffsetForm& o, const OffsetTerms& known) const {
    OffsetForm f{std::max(constant, o.constant), {}, 0};
    f.terms.reserve(std::max(terms.size(), o.terms.size()));
    for_each_joined_term(o, known, [&](std::uint32_t t) { f.terms.push_back(t); });
    f.at_hints = f.constant;
    for (const std::uint32_t t : f.terms)
      if (!checked::add(f.at_hints, known.hint(t), f.at_hints)) throw_offset_overflow();
    return f;
  }
  [[nodiscard]] expr::Expr to_expr(expr::Context& ctx, const OffsetTerms& known) const {
    std::vector<expr::Expr> parts;
    parts.reserve(terms.size() + 1);
    for (const std::uint32_t t : terms) parts.push_back(known.size(t));
    parts.push_back(ctx.integer(constant));
    return expr::add(parts);
  }
};

/// At most this many forms per offset; beyond, `symbolic_placement` names
/// the set (its exact Max) where a name can stand, and elsewhere (a small
/// block's offset) the two whose join is smallest at the hints are joined
/// (safe for every binding, but no longer at most the hint placement at
/// the hints; a join of forms of unrelated sizes is their sum).
inline constexpr std::size_t max_offset_forms = 32;

/// A set of forms one of which has more terms than this is given a name
/// (`symbolic_placement`): deeper in a stack, offsets then refer to the
/// name rather than repeating its terms.
inline constexpr std::size_t max_form_terms = 64;

/// Past this many forms, `prune_offset_forms` compares forms only with
/// those of the same terms, and joins neighbours before it joins the
/// cheapest pairs: a block above thousands of blocks of unrelated sizes
/// (each a form of its own, none dominating another) made the pairwise
/// comparisons quadratic and the join costs' matrix quadratic in memory
/// (4,000 such blocks took 29 s, 100k would need 80 GB).
inline constexpr std::size_t max_pairwise_forms = 1024;

/// Drops dominated forms, then, when `may_join`, joins the cheapest pair
/// (the first in (a, b) order among equals) until `max_offset_forms` remain. The join
/// costs live in a matrix over the forms' slots, with each row's cheapest
/// entry cached: a join recomputes one row and column and the rows whose
/// cheapest entry it touched, so k forms cost O(k^2) joins, not O(k^3).
/// Slots keep their order and a join lands in its first slot, which keeps
/// the choice the same as joining in a list. Past `max_pairwise_forms`
/// forms, only a form with the same terms and a larger constant dominates
/// (O(k log k); the Max of the forms kept is the same, only longer), and
/// joins pair each form with the next in order of value at the hints until
/// `max_pairwise_forms` remain.
inline void prune_offset_forms(std::vector<OffsetForm>& forms, const OffsetTerms& known, bool may_join = true) {
  if (forms.size() > max_pairwise_forms) {
    // Same terms, largest constant first; keep the first of each terms.
    std::stable_sort(forms.begin(), forms.end(), [](const OffsetForm& a, const OffsetForm& b) {
      return a.terms != b.terms ? a.terms < b.terms : a.constant > b.constant;
    });
    forms.erase(std::unique(forms.begin(), forms.end(),
                            [](const OffsetForm& a, const OffsetForm& b) { return a.terms == b.terms; }),
                forms.end());
    if (forms.size() > max_pairwise_forms && !may_join) return;
    while (forms.size() > max_pairwise_forms) {
      std::stable_sort(forms.begin(), forms.end(),
                       [](const OffsetForm& a, const OffsetForm& b) { return a.at_hints < b.at_hints; });
      std::vector<OffsetForm> joined;
      joined.reserve(forms.size() / 2 + 1);
      for (std::size_t a = 0; a < forms.size(); a += 2)
        joined.push_back(a + 1 < forms.size() ? forms[a].join(forms[a + 1], known) : std::move(forms[a]));
      forms = std::move(joined);
    }
  }
  std::vector<OffsetForm> kept;
  for (OffsetForm& f : forms) {
    bool dominated = false;
    for (const OffsetForm& k : kept)
      if (k.dominates(f, known)) {
        dominated = true;
        break;
      }
    if (dominated) continue;
    std::erase_if(kept, [&](const OffsetForm& k) { return f.dominates(k, known); });
    kept.push_back(std::move(f));
  }
  const std::size_t n = kept.size();
  if (may_join && n > max_offset_forms) {
    constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    std::vector<std::int64_t> cost(n * n);
    std::vector<bool> alive(n, true);
    std::vector<std::size_t> row_best(n, none);  // per row a: the first b > a of least cost
    auto refresh_row = [&](std::size_t a) {
      row_best[a] = none;
      for (std::size_t b = a + 1; b < n; ++b)
        if (alive[b] && (row_best[a] == none || cost[a * n + b] < cost[a * n + row_best[a]])) row_best[a] = b;
    };
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = a + 1; b < n; ++b) cost[a * n + b] = kept[a].join_at_hints(kept[b], known);
    for (std::size_t a = 0; a < n; ++a) refresh_row(a);
    for (std::size_t remaining = n; remaining > max_offset_forms; --remaining) {
      std::size_t best_a = none;
      for (std::size_t a = 0; a < n; ++a)
        if (alive[a] && row_best[a] != none &&
            (best_a == none || cost[a * n + row_best[a]] < cost[best_a * n + row_best[best_a]]))
          best_a = a;
      const std::size_t best_b = row_best[best_a];
      kept[best_a] = kept[best_a].join(kept[best_b], known);
      alive[best_b] = false;
      for (std::size_t c = 0; c < n; ++c) {
        if (!alive[c] || c == best_a) continue;
        const std::size_t lo = std::min(c, best_a), hi = std::max(c, best_a);
        cost[lo * n + hi] = kept[lo].join_at_hints(kept[hi], known);
      }
      // Rows above best_a: their entry at best_a changed, and best_b is gone.
      for (std::size_t c = 0; c < best_a; ++c) {
        if (!alive[c]) continue;
        const std::size_t r = row_best[c];
        if (r == best_a || r == best_b) {
          refresh_row(c);
        } else if (r == none || (cost[c * n + best_a] < cost[c * n + r] ||
                                 (cost[c * n + best_a] == cost[c * n + r] && best_a < r))) {
          row_best[c] = best_a;
        }
      }
      refresh_row(best_a);
      for (std::size_t c = best_a + 1; c < best_b; ++c)
        if (alive[c] && row_best[c] == best_b) refresh_row(c);
    }
    std::vector<OffsetForm> survivors;
    survivors.reserve(max_offset_forms);
    for (std::size_t a = 0; a < n; ++a)
      if (alive[a]) survivors.push_back(std::move(kept[a]));
    kept = std::move(survivors);
  }
  forms = std::move(kept);
}

/// Whether a form of `forms` has a named term: such forms are never joined
/// (a join of two names would count the blocks both stand on twice).
[[nodiscard]] inline bool refers_to_names(const std::vector<OffsetForm>& forms, const OffsetTerms& known) {
  for (const OffsetForm& f : forms)
    for (const std::uint32_t t : f.terms)
      if (known.named(t)) return true;
  return false;
}

/// The Max of `forms` as an expression.
[[nodiscard]] inline expr::Expr max_of_forms(expr::Context& ctx, const std::vector<OffsetForm>& forms,
                                             const OffsetTerms& known) {
  std::vector<expr::Expr> parts;
  parts.reserve(forms.size());
  for (const OffsetForm& f : forms) parts.push_back(f.to_expr(ctx, known));
  return expr::max(parts);
}

/// Sets of offset forms, interned by content (forms in order), with what
/// `symbolic_placement` derives from them memoized: a program's blocks
/// mostly stack the same few sizes (a chain alternates two offsets), and
/// building, pruning and printing the same sets once per block (a vector
/// per form, a Max to intern) was most of a 333k-block placement. A
/// derivation's result depends only on its key (the sets and sizes it
/// reads), so a memoized one is the set computing it again would give.
class FormSets {
 public:
  using Key = std::vector<std::uint64_t>;

  /// The id of `forms`' content.
  [[nodiscard]] std::uint32_t intern(std::vector<OffsetForm>&& forms) {
    content_.clear();
    for (const OffsetForm& f : forms) {
      content_.push_back(static_cast<std::uint64_t>(f.constant));
      for (const std::uint32_t t : f.terms) content_.push_back(t);
      content_.push_back(end_of_form);
    }
    const auto [it, fresh] = ids_.try_emplace(content_, static_cast<std::uint32_t>(sets_.size()));
    if (fresh) {
      sets_.push_back(std::move(forms));
      exprs_.emplace_back();
    }
    return it->second;
  }
  [[nodiscard]] const std::vector<OffsetForm>& operator[](std::uint32_t id) const { return sets_[id]; }

  /// The Max of set `id` as an expression.
  [[nodiscard]] expr::Expr max_of(std::uint32_t id, expr::Context& ctx, const OffsetTerms& known) {
    if (!exprs_[id]) exprs_[id] = max_of_forms(ctx, sets_[id], known);
    return exprs_[id];
  }

  /// The memoized result of the derivation `key`, or null.
  [[nodiscard]] const std::uint32_t* derived(const Key& key) const {
    const auto it = derived_.find(key);
    return it == derived_.end() ? nullptr : &it->second;
  }
  void derive(const Key& key, std::uint32_t id) { derived_.emplace(key, id); }

 private:
  // Constants and term ids are below 2^63: this value ends a form.
  static constexpr std::uint64_t end_of_form = ~std::uint64_t{0};
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      std::size_t h = k.size();
      for (const std::uint64_t v : k) h = wrapir::detail::hash_mix(h, static_cast<std::size_t>(v));
      return h;
    }
  };
  std::vector<std::vector<OffsetForm>> sets_;
  std::vector<expr::Expr> exprs_;
  Key content_;
  std::unordered_map<Key, std::uint32_t, KeyHash> ids_;
  std::unordered_map<Key, std::uint32_t, KeyHash> derived_;
};

}  // namespace wrapir::pass::detail
