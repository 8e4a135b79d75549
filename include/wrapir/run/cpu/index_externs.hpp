#pragma once
/// \file
/// Indexing externs and fallbacks of Inductor CPU programs, as eager
/// PyTorch defines them:
///
/// * `topk(self, k, dim=-1, largest=True, sorted=True)` → (values, int64
///   indices), allocated contiguous; NaN counts as larger than any number
///   (as torch orders it) and ties keep the lower index first.
/// * The scatter family, in place on `self` (what `ScatterFallback` calls):
///   `scatter_(self, dim, index, src | value, reduce=None|"add"|"multiply")`,
///   `scatter_add_(self, dim, index, src)` and
///   `scatter_reduce_.two(self, dim, index, src, reduce, include_self=True)`
///   with reduce "sum", "prod", "mean", "amax", "amin". Duplicate indices
///   combine in index order; a plain scatter keeps the last write. Integer
///   "mean" divides with floor, as torch does.
/// * `index_put_(self, indices, values, accumulate=False)` in place (what
///   `IndexPutFallback` calls): `indices` is a list of int64 index tensors,
///   bool masks and None (a full slice), broadcast together; negative
///   indices wrap; with `accumulate` duplicates add up.
/// * `bucketize(input, boundaries, out_int32=False, right=False)` →
///   int64 (or int32) bucket indices (values are compared as double, exact
///   for every float dtype and integers below 2^53).
///
/// Every index is bounds-checked; a bad one is a diagnostic naming it.

#include <wrapir/run/cpu/detail/elements.hpp>
#include <wrapir/run/cpu/detail/extern_args.hpp>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace wrapir::run::cpu {

namespace detail {

/// Row-major flat position of `index` in `sizes`.
[[nodiscard]] inline std::int64_t flat(std::span<const std::int64_t> sizes, std::span<const std::int64_t> index) {
  std::int64_t f = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) f = f * sizes[i] + index[i];
  return f;
}

/// A 0-d tensor seen as 1-d of one element (torch treats dim 0/-1 of a scalar so).
[[nodiscard]] inline Tensor as_at_least_1d(const Tensor& t) {
  if (t.dim() != 0) return t;
  Tensor v = t;
  v.sizes = {1};
  v.strides = {1};
  return v;
}

enum class ScatterMode : std::uint8_t { assign, sum, prod, mean, amax, amin };

[[nodiscard]] inline std::optional<ScatterMode> scatter_mode(std::string_view reduce) {
  if (reduce == "sum" || reduce == "add") return ScatterMode::sum;
  if (reduce == "prod" || reduce == "multiply") return ScatterMode::prod;
  if (reduce == "mean") return ScatterMode::mean;
  if (reduce == "amax") return ScatterMode::amax;
  if (reduce == "amin") return ScatterMode::amin;
  return std::nullopt;
}

/// Scatters `src` (or the scalar `value`) into `self` along `dim`.
[[nodiscard]] inline Result<void> scatter_into(const Args& args, const Tensor& self_in, std::int64_t dim_arg,
                                               const Tensor& index_in, const Tensor* src_in,
                                               std::optional<double> value, ScatterMode mode, bool include_self) {
  const Tensor self = as_at_least_1d(self_in);
  const Tensor index = as_at_least_1d(index_in);
  const auto dim = wrap_dim(dim_arg, self_in.dim());
  if (!dim) return args.error("dim " + std::to_string(dim_arg) + " is out of range for " + std::to_string(self_in.dim()) + " dimensions");
  if (index.dtype != ir::DType::int64) return args.error("index must be int64, not " + std::string(ir::name(index.dtype)));
  if (index.dim() != self.dim())
    return args.error("index " + shape_text(index_in.sizes) + " and self " + shape_text(self_in.sizes) +
                      " have different ranks");
  std::optional<Tensor> src;
  if (src_in != nullptr) {
    src = as_at_least_1d(*src_in);
    if (src->dtype != self.dtype) return args.error("src and self have different dtypes");
    if (src->dim() != index.dim()) return args.error("src and index have different ranks");
  }
  for (std::size_t d = 0; d < index.dim(); ++d) {
    if ((src && index.sizes[d] > src->sizes[d]) || (d != *dim && index.sizes[d] > self.sizes[d]))
      return args.error("index " + shape_text(index.sizes) + " is larger than src or self in dimension " +
                        std::to_string(d));
  }
  const std::int64_t extent = self.sizes[*dim];
  return dispatch(self.dtype, args.where("self"), [&]<class T>() -> Result<void> {
    using A = Acc<T>;
    const auto numel = static_cast<std::size_t>(self.numel());
    std::vector<A> acc;
    std::vector<std::int64_t> count;
    if (mode != ScatterMode::assign) {
      acc.assign(numel, A{});
      count.assign(numel, 0);
    }
    auto combine = [&](A a, A b) -> A {
      switch (mode) {
        case ScatterMode::prod: return a * b;
        case ScatterMode::amax: return (a != a || a > b) ? a : b;  // NaN propagates
        case ScatterMode::amin: return (a != a || a < b) ? a : b;
        default: return static_cast<A>(a + b);
      }
    };
    std::optional<Diagnostic> bad;
    std::vector<std::int64_t> target(self.dim());
    for_each_index(index.sizes, [&](std::span<const std::int64_t> p) {
      if (bad) return;
      const std::int64_t i = load<std::int64_t>(element(index, p));
      if (i < 0 || i >= extent) {
        bad = args.error("index " + std::to_string(i) + " is out of bounds for dimension " + std::to_string(*dim) +
                         " with size " + std::to_string(extent));
        return;
      }
      std::copy(p.begin(), p.end(), target.begin());
      target[*dim] = i;
      const A v = src ? load<T>(element(*src, p)) : static_cast<A>(*value);
      if (mode == ScatterMode::assign) {
        store<T>(element(self, target), v);
        return;
      }
      const auto f = static_cast<std::size_t>(flat(self.sizes, target));
      if (count[f] == 0) {
        acc[f] = include_self ? combine(load<T>(element(self, target)), v) : v;
      } else {
        acc[f] = combine(acc[f], v);
      }
      ++count[f];
    });
    if (bad) return *bad;
    if (mode == ScatterMode::assign) return {};
    std::size_t f = 0;
    for_each_index(self.sizes, [&](std::span<const std::int64_t> p) {
      if (count[f] > 0) {
        A r = acc[f];
        if (mode == ScatterMode::mean) {
          const auto n = static_cast<A>(count[f] + (include_self ? 1 : 0));
          if constexpr (std::is_integral_v<A>) {
            r = static_cast<A>(std::floor(static_cast<double>(r) / static_cast<double>(n)));
          } else {
            r = r / n;
          }
        }
        store<T>(element(self, p), r);
      }
      ++f;
    });
    return {};
  });
}

/// A copy of `t` in a new contiguous tensor (the functional forms).
[[nodiscard]] inline Result<Tensor> clone(const Tensor& t) {
  auto out = empty_cpu(t.sizes, t.dtype);
  if (!out) return out;
  auto status = dispatch(t.dtype, "clone", [&]<class T>() -> Result<void> {
    for_each_index(t.sizes, [&](std::span<const std::int64_t> p) { store<T>(element(*out, p), load<T>(element(t, p))); });
    return {};
  });
  if (!status) return status.error();
  return out;
}

/// Shared by the scatter entry points: `self` then updated in place, or a
/// clone of it updated and returned (`functional`).
[[nodiscard]] inline Result<Value> scatter_call(const ExternCall& call, bool functional, std::optional<ScatterMode> fixed,
                                                bool reduce_two) {
  const Args args(call);
  auto read = args.read(tensor_arg(0, "self"), integer_arg(1, "dim"), tensor_arg(2, "index"));
  if (!read) return std::move(read).error();
  const auto& [self, dim, index] = *read;
  const Value* source = args.get(3, "src");
  if (source == nullptr) source = call.kwarg("value");
  if (source == nullptr) return Diagnostic{args.where("src") + " is missing"};
  const Tensor* src = source->get_if<Tensor>();
  std::optional<double> value;
  if (src == nullptr) {
    auto v = args.number(3, source == call.kwarg("value") ? "value" : "src", std::nullopt);
    if (!v) {
      if (const Value* kv = call.kwarg("value"); kv != nullptr) {
        if (const auto* d = kv->get_if<double>()) value = *d;
        if (const auto* n = kv->get_if<std::int64_t>()) value = static_cast<double>(*n);
      }
      if (!value) return Diagnostic{args.where("src") + " is neither a tensor nor a number"};
    } else {
      value = *v;
    }
  } else if (src->numel() != 0 && src->data() == nullptr) {
    return Diagnostic{args.where("src") + " has no storage"};
  }
  ScatterMode mode = fixed.value_or(ScatterMode::assign);
  bool include_self = true;
  if (!fixed) {
    auto reduce = args.string(4, "reduce");
    if (!reduce) return std::move(reduce).error();
    if (*reduce) {
      const auto m = scatter_mode(**reduce);
      const bool allowed = m && (reduce_two ? **reduce != "add" && **reduce != "multiply"
                                            : (**reduce == "add" || **reduce == "multiply"));
      if (!allowed) return Diagnostic{args.where("reduce") + " is " + run::detail::quoted(**reduce) + ", not a reduction this op knows"};
      mode = *m;
    } else if (reduce_two) {
      return Diagnostic{args.where("reduce") + " is missing"};
    }
    if (reduce_two) {
      auto inc = args.boolean(5, "include_self", true);
      if (!inc) return std::move(inc).error();
      include_self = *inc;
    }
  }
  Tensor target = *self;
  if (functional) {
    auto c = clone(*self);
    if (!c) return std::move(c).error();
    target = *c;
  }
  if (auto s = scatter_into(args, target, dim, *index, src, value, mode, include_self); !s) return s.error();
  if (functional) return Value{target};
  return Value{ir::None{}};
}

}  // namespace detail

/// `aten.scatter_` (src or value, optional reduce "add"/"multiply"), in place.
[[nodiscard]] inline Result<Value> scatter_extern(const ExternCall& call) { return detail::scatter_call(call, false, std::nullopt, false); }
/// `aten.scatter` (functional): a scattered copy of `self`.
[[nodiscard]] inline Result<Value> scatter_functional_extern(const ExternCall& call) { return detail::scatter_call(call, true, std::nullopt, false); }
/// `aten.scatter_add_`, in place.
[[nodiscard]] inline Result<Value> scatter_add_extern(const ExternCall& call) { return detail::scatter_call(call, false, detail::ScatterMode::sum, false); }
/// `aten.scatter_add` (functional).
[[nodiscard]] inline Result<Value> scatter_add_functional_extern(const ExternCall& call) { return detail::scatter_call(call, true, detail::ScatterMode::sum, false); }
/// `aten.scatter_reduce_.two`, in place.
[[nodiscard]] inline Result<Value> scatter_reduce_extern(const ExternCall& call) { return detail::scatter_call(call, false, std::nullopt, true); }
/// `aten.scatter_reduce.two` (functional).
[[nodiscard]] inline Result<Value> scatter_reduce_functional_extern(const ExternCall& call) { return detail::scatter_call(call, true, std::nullopt, true); }

/// `topk(self, k, dim=-1, largest=True, sorted=True)` → (values, indices).
[[nodiscard]] inline Result<Value> topk_extern(const ExternCall& call) {
  const detail::Args args(call);
  auto read = args.read(detail::tensor_arg(0, "self"), detail::integer_arg(1, "k"), detail::integer_arg(2, "dim", -1),
                        detail::bool_arg(3, "largest", true), detail::bool_arg(4, "sorted", true));
  if (!read) return std::move(read).error();
  const auto& [self_arg, k, dim_arg, largest, sorted] = *read;
  (void)sorted;  // the k values are always returned sorted, which is a valid answer either way
  const Tensor& self_in = *self_arg;
  const auto dim = detail::wrap_dim(dim_arg, self_in.dim());
  if (!dim) return args.error("dim " + std::to_string(dim_arg) + " is out of range");
  const Tensor self = detail::as_at_least_1d(self_in);
  const std::int64_t extent = self.sizes[*dim];
  if (k < 0 || k > extent)
    return args.error("k=" + std::to_string(k) + " is out of range for dimension " + std::to_string(*dim) +
                      " of size " + std::to_string(extent));
  std::vector<std::int64_t> out_sizes = self_in.sizes;
  if (!out_sizes.empty()) out_sizes[*dim] = k;
  auto values = empty_cpu(out_sizes, self.dtype);
  if (!values) return std::move(values).error();
  auto indices = empty_cpu(out_sizes, ir::DType::int64);
  if (!indices) return std::move(indices).error();
  const Tensor vals = detail::as_at_least_1d(*values);
  const Tensor idxs = detail::as_at_least_1d(*indices);
  std::vector<std::int64_t> outer = self.sizes;
  outer[*dim] = 1;
  // (clang 14 captures no structured binding: k and largest are copied in.)
  auto status = detail::dispatch(self.dtype, args.where("self"), [&, k = k, largest = largest]<class T>() -> Result<void> {
    using A = detail::Acc<T>;
    std::vector<std::pair<A, std::int64_t>> line(static_cast<std::size_t>(extent));
    // NaN is larger than every number; ties keep the lower index first.
    auto before = [&](const std::pair<A, std::int64_t>& x, const std::pair<A, std::int64_t>& y) {
      const bool xn = x.first != x.first, yn = y.first != y.first;
      if (xn || yn) {
        if (xn && yn) return x.second < y.second;
        return largest ? xn : yn;
      }
      if (x.first != y.first) return largest ? x.first > y.first : x.first < y.first;
      return x.second < y.second;
    };
    detail::for_each_index(outer, [&](std::span<const std::int64_t> p) {
      std::vector<std::int64_t> at(p.begin(), p.end());
      for (std::int64_t i = 0; i < extent; ++i) {
        at[*dim] = i;
        line[static_cast<std::size_t>(i)] = {detail::load<T>(detail::element(self, at)), i};
      }
      std::partial_sort(line.begin(), line.begin() + k, line.end(), before);
      for (std::int64_t j = 0; j < k; ++j) {
        at[*dim] = j;
        detail::store<T>(detail::element(vals, at), line[static_cast<std::size_t>(j)].first);
        detail::store<std::int64_t>(detail::element(idxs, at), line[static_cast<std::size_t>(j)].second);
      }
    });
    return {};
  });
  if (!status) return status.error();
  return Value{ValueList{{Value{*std::move(values)}, Value{*std::move(indices)}}}};
}

/// `bucketize(input, boundaries, out_int32=False, right=False)`.
[[nodiscard]] inline Result<Value> bucketize_extern(const ExternCall& call) {
  const detail::Args args(call);
  auto read = args.read(detail::tensor_arg(0, "self"), detail::tensor_arg(1, "boundaries"),
                        detail::bool_arg(2, "out_int32", false), detail::bool_arg(3, "right", false));
  if (!read) return std::move(read).error();
  // Plain names, not bindings: the lambdas below capture them (clang 14 captures no structured binding).
  const Tensor& input = *std::get<0>(*read);
  const Tensor& boundaries = *std::get<1>(*read);
  const bool out_int32 = std::get<2>(*read), right = std::get<3>(*read);
  if (boundaries.dim() != 1)
    return args.error("boundaries must be 1-D, not " + detail::shape_text(boundaries.sizes));
  std::vector<double> bounds;
  auto copied = detail::dispatch(boundaries.dtype, args.where("boundaries"), [&]<class T>() -> Result<void> {
    detail::for_each_index(boundaries.sizes, [&](std::span<const std::int64_t> p) {
      bounds.push_back(static_cast<double>(detail::load<T>(detail::element(boundaries, p))));
    });
    return {};
  });
  if (!copied) return copied.error();
  const ir::DType out_dtype = out_int32 ? ir::DType::int32 : ir::DType::int64;
  auto out = empty_cpu(input.sizes, out_dtype);
  if (!out) return std::move(out).error();
  auto status = detail::dispatch(input.dtype, args.where("self"), [&]<class T>() -> Result<void> {
    detail::for_each_index(input.sizes, [&](std::span<const std::int64_t> p) {
      const auto x = static_cast<double>(detail::load<T>(detail::element(input, p)));
      // right=False: the first boundary >= x; right=True: the first > x. NaN goes past every boundary.
      const auto it = x != x ? bounds.end()
                             : (right ? std::upper_bound(bounds.begin(), bounds.end(), x)
                                       : std::lower_bound(bounds.begin(), bounds.end(), x));
      const auto bucket = static_cast<std::int64_t>(it - bounds.begin());
      if (out_int32) {
        detail::store<std::int32_t>(detail::element(*out, p), bucket);
      } else {
        detail::store<std::int64_t>(detail::element(*out, p), bucket);
      }
    });
    return {};
  });
  if (!status) return status.error();
  return Value{*std::move(out)};
}

namespace detail {

/// index_put on `self` (in place).
[[nodiscard]] inline Result<void> index_put_into(const Args& args, const Tensor& self, const ValueList& index_list,
                                                 const Tensor& values, bool accumulate) {
  // One entry per indexed dimension: an int64 tensor, or none (a full slice).
  std::vector<std::optional<Tensor>> per_dim;
  std::vector<std::vector<std::int64_t>> mask_storage;  // keeps expanded masks alive
  std::vector<std::shared_ptr<Storage>> keep;
  for (std::size_t i = 0; i < index_list.items.size(); ++i) {
    const Value& item = index_list.items[i];
    if (item.holds<ir::None>()) {
      per_dim.emplace_back();
      continue;
    }
    const Tensor* t = item.get_if<Tensor>();
    if (t == nullptr) return args.error("indices[" + std::to_string(i) + "] is neither a tensor nor None");
    if (t->numel() != 0 && t->data() == nullptr) return args.error("indices[" + std::to_string(i) + "] has no storage");
    if (t->dtype == ir::DType::bool_ || t->dtype == ir::DType::uint8) {
      // A mask over the next t->dim() dimensions: its nonzero positions.
      const std::size_t first = per_dim.size();
      if (first + t->dim() > self.dim()) return args.error("too many indices for self " + shape_text(self.sizes));
      for (std::size_t d = 0; d < t->dim(); ++d)
        if (t->sizes[d] != self.sizes[first + d])
          return args.error("mask indices[" + std::to_string(i) + "] " + shape_text(t->sizes) + " does not match self " +
                            shape_text(self.sizes));
      std::vector<std::vector<std::int64_t>> coords(t->dim());
      detail::for_each_index(t->sizes, [&](std::span<const std::int64_t> p) {
        if (std::to_integer<std::uint8_t>(*element(*t, p)) != 0)
          for (std::size_t d = 0; d < p.size(); ++d) coords[d].push_back(p[d]);
      });
      for (auto& c : coords) {
        auto storage = std::make_shared<Storage>();
        mask_storage.push_back(std::move(c));
        auto& v = mask_storage.back();
        storage->data = reinterpret_cast<std::byte*>(v.data());
        storage->nbytes = static_cast<std::int64_t>(v.size() * sizeof(std::int64_t));
        storage->device = ir::Device{ir::DeviceType::cpu, std::nullopt};
        keep.push_back(storage);
        per_dim.emplace_back(Tensor{storage, ir::DType::int64, {static_cast<std::int64_t>(v.size())}, {1}, 0});
      }
      continue;
    }
    if (t->dtype != ir::DType::int64 && t->dtype != ir::DType::int32)
      return args.error("indices[" + std::to_string(i) + "] has dtype " + std::string(ir::name(t->dtype)) +
                        "; index tensors must be int64, int32 or bool");
    per_dim.emplace_back(*t);
  }
  if (per_dim.size() > self.dim()) return args.error("too many indices for self " + shape_text(self.sizes));
  while (per_dim.size() < self.dim()) per_dim.emplace_back();

  // Broadcast the index tensors together.
  std::vector<std::int64_t> b_shape;
  std::vector<std::size_t> indexed;
  for (std::size_t d = 0; d < per_dim.size(); ++d) {
    if (!per_dim[d]) continue;
    indexed.push_back(d);
    const auto& s = per_dim[d]->sizes;
    if (s.size() > b_shape.size()) b_shape.insert(b_shape.begin(), s.size() - b_shape.size(), 1);
    for (std::size_t j = 0; j < s.size(); ++j) {
      std::int64_t& have = b_shape[b_shape.size() - s.size() + j];
      if (s[j] == have || s[j] == 1) continue;
      if (have != 1) return args.error("index tensors of shapes that do not broadcast together");
      have = s[j];
    }
  }
  if (indexed.empty()) return args.error("needs at least one index tensor");
  const bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  // The shape `values` broadcasts to, and where each part comes from.
  std::vector<std::int64_t> target_shape;
  const std::size_t b_at = adjacent ? indexed.front() : 0;
  std::vector<std::size_t> slice_dims;
  for (std::size_t d = 0; d < self.dim(); ++d)
    if (!per_dim[d]) slice_dims.push_back(d);
  for (std::size_t d = 0; d < b_at; ++d) target_shape.push_back(self.sizes[slice_dims[d]]);
  target_shape.insert(target_shape.end(), b_shape.begin(), b_shape.end());
  for (std::size_t j = b_at; j < slice_dims.size(); ++j) target_shape.push_back(self.sizes[slice_dims[j]]);
  if (values.dim() > target_shape.size())
    return args.error("values " + shape_text(values.sizes) + " do not broadcast to " + shape_text(target_shape));
  for (std::size_t j = 0; j < values.dim(); ++j) {
    const std::int64_t v = values.sizes[values.dim() - 1 - j];
    if (v != 1 && v != target_shape[target_shape.size() - 1 - j])
      return args.error("values " + shape_text(values.sizes) + " do not broadcast to " + shape_text(target_shape));
  }
  if (values.dtype != self.dtype) return args.error("values and self have different dtypes");

  return dispatch(self.dtype, args.where("self"), [&]<class T>() -> Result<void> {
    std::optional<Diagnostic> bad;
    std::vector<std::int64_t> at(self.dim()), b_index(b_shape.size()), v_index(values.dim()), idx_at;
    for_each_index(target_shape, [&](std::span<const std::int64_t> q) {
      if (bad) return;
      for (std::size_t j = 0; j < b_shape.size(); ++j) b_index[j] = q[b_at + j];
      for (std::size_t j = 0; j < b_at; ++j) at[slice_dims[j]] = q[j];
      for (std::size_t j = b_at; j < slice_dims.size(); ++j) at[slice_dims[j]] = q[b_shape.size() + j];
      for (const std::size_t d : indexed) {
        const Tensor& it = *per_dim[d];
        idx_at.assign(it.dim(), 0);
        for (std::size_t j = 0; j < it.dim(); ++j) {
          const std::size_t bj = b_shape.size() - it.dim() + j;
          idx_at[j] = it.sizes[j] == 1 ? 0 : b_index[bj];
        }
        std::int64_t i = it.dtype == ir::DType::int32 ? load<std::int32_t>(element(it, idx_at))
                                                      : load<std::int64_t>(element(it, idx_at));
        if (i < -self.sizes[d] || i >= self.sizes[d]) {
          bad = args.error("index " + std::to_string(i) + " is out of bounds for dimension " + std::to_string(d) +
                           " with size " + std::to_string(self.sizes[d]));
          return;
        }
        at[d] = i < 0 ? i + self.sizes[d] : i;
      }
      for (std::size_t j = 0; j < values.dim(); ++j) {
        const std::size_t tj = target_shape.size() - values.dim() + j;
        v_index[j] = values.sizes[j] == 1 ? 0 : q[tj];
      }
      const Acc<T> v = load<T>(element(values, v_index));
      std::byte* dst = element(self, at);
      store<T>(dst, accumulate ? static_cast<Acc<T>>(load<T>(dst) + v) : v);
    });
    if (bad) return *bad;
    return {};
  });
}

[[nodiscard]] inline Result<Value> index_put_call(const ExternCall& call, bool functional) {
  const Args args(call);
  auto read = args.read(tensor_arg(0, "self"), tensor_arg(2, "values"), bool_arg(3, "accumulate", false));
  if (!read) return std::move(read).error();
  const auto& [self, values, accumulate] = *read;
  const Value* list = args.get(1, "indices");
  if (list == nullptr || !list->holds<ValueList>()) return Diagnostic{args.where("indices") + " is not a list"};
  Tensor target = *self;
  if (functional) {
    auto c = clone(*self);
    if (!c) return std::move(c).error();
    target = *c;
  }
  if (auto s = index_put_into(args, target, *list->get_if<ValueList>(), *values, accumulate); !s) return s.error();
  if (functional) return Value{target};
  return Value{ir::None{}};
}

}  // namespace detail

/// `aten.index_put_` (in place).
[[nodiscard]] inline Result<Value> index_put_extern(const ExternCall& call) { return detail::index_put_call(call, false); }
/// `aten.index_put` (functional).
[[nodiscard]] inline Result<Value> index_put_functional_extern(const ExternCall& call) { return detail::index_put_call(call, true); }

}  // namespace wrapir::run::cpu
