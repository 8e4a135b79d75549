#pragma once
/// \file
/// Reading an extern's arguments: each reference extern states the
/// arguments it takes, in its schema's order, and gets them all or the
/// first diagnostic (which names the extern and the argument):
///
/// ```
/// const Args args(call);
/// auto read = args.read(tensor_arg(0, "self"), tensor_arg(1, "mat2"), number_arg(3, "beta", 1.0));
/// if (!read) return std::move(read).error();
/// const auto& [self, mat2, beta] = *read;   // const Tensor*, const Tensor*, double
/// ```
///
/// An argument is found at its position when the call passed that many
/// positional arguments, else by its name among the keyword arguments (the
/// two spellings Inductor uses). A fallback makes it optional; None then
/// stands for the fallback too.

#include <wrapir/diagnostic.hpp>
#include <wrapir/run/detail/text.hpp>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace wrapir::run::cpu::detail {

/// Argument readers: each names the extern and the argument in its diagnostic.
class Args {
 public:
  explicit Args(const ExternCall& call) : call_(call), op_(call.op) {}

  [[nodiscard]] std::string where(std::string_view name) const {
    return std::string(op_) + ": argument " + run::detail::quoted(name);
  }
  [[nodiscard]] Diagnostic error(std::string_view message) const { return Diagnostic{std::string(op_) + ": " + std::string(message)}; }

  [[nodiscard]] const Value* get(std::size_t i, std::string_view name) const { return call_.arg(i, name); }
  [[nodiscard]] const ExternCall& call() const noexcept { return call_; }

  /// Every argument `specs` describe, in order, or the first failure.
  template <class... Spec>
  [[nodiscard]] Result<std::tuple<typename Spec::value_type...>> read(const Spec&... specs) const {
    std::optional<Diagnostic> failure;
    auto one = [&]<class S>(const S& spec) -> typename S::value_type {
      if (failure) return {};
      auto value = spec.read(*this);
      if (!value) {
        failure = std::move(value).error();
        return {};
      }
      return *std::move(value);
    };
    // A braced list evaluates left to right: the first failure is reported.
    std::tuple<typename Spec::value_type...> values{one(specs)...};
    if (failure) return *std::move(failure);
    return values;
  }

  /// A CPU tensor with storage (an empty tensor may have none).
  [[nodiscard]] Result<const Tensor*> tensor(std::size_t i, std::string_view name) const {
    const Value* v = get(i, name);
    if (v == nullptr) return Diagnostic{where(name) + " is missing"};
    const Tensor* t = v->get_if<Tensor>();
    if (t == nullptr) return Diagnostic{where(name) + " is not a tensor"};
    if (t->strides.size() != t->sizes.size()) return Diagnostic{where(name) + " has a bad layout"};
    if (t->numel() != 0 && t->data() == nullptr) return Diagnostic{where(name) + " has no storage"};
    if (t->storage && t->device().type != ir::DeviceType::cpu) return Diagnostic{where(name) + " is not on the CPU"};
    return t;
  }
  /// A tensor or None.
  [[nodiscard]] Result<const Tensor*> optional_tensor(std::size_t i, std::string_view name) const {
    const Value* v = get(i, name);
    if (v == nullptr || v->holds<ir::None>()) return static_cast<const Tensor*>(nullptr);
    return tensor(i, name);
  }
  [[nodiscard]] Result<std::int64_t> integer(std::size_t i, std::string_view name,
                                             std::optional<std::int64_t> fallback = std::nullopt) const {
    const Value* v = get(i, name);
    if (v == nullptr || (fallback && v->holds<ir::None>())) {
      if (fallback) return *fallback;
      return Diagnostic{where(name) + " is missing"};
    }
    if (const auto* n = v->get_if<std::int64_t>()) return *n;
    if (const auto* b = v->get_if<bool>()) return std::int64_t{*b ? 1 : 0};
    return Diagnostic{where(name) + " is not an integer"};
  }
  [[nodiscard]] Result<double> number(std::size_t i, std::string_view name, std::optional<double> fallback) const {
    const Value* v = get(i, name);
    if (v == nullptr || (fallback && v->holds<ir::None>())) {
      if (fallback) return *fallback;
      return Diagnostic{where(name) + " is missing"};
    }
    if (const auto* d = v->get_if<double>()) return *d;
    if (const auto* n = v->get_if<std::int64_t>()) return static_cast<double>(*n);
    if (const auto* b = v->get_if<bool>()) return *b ? 1.0 : 0.0;
    return Diagnostic{where(name) + " is not a number"};
  }
  /// A number, or nullopt when absent or None (`scale=None`: the op's own default).
  [[nodiscard]] Result<std::optional<double>> optional_number(std::size_t i, std::string_view name) const {
    const Value* v = get(i, name);
    if (v == nullptr || v->holds<ir::None>()) return std::optional<double>{};
    auto n = number(i, name, std::nullopt);
    if (!n) return std::move(n).error();
    return std::optional<double>{*n};
  }
  [[nodiscard]] Result<bool> boolean(std::size_t i, std::string_view name, bool fallback) const {
    const Value* v = get(i, name);
    if (v == nullptr || v->holds<ir::None>()) return fallback;
    if (const auto* b = v->get_if<bool>()) return *b;
    if (const auto* n = v->get_if<std::int64_t>(); n != nullptr && (*n == 0 || *n == 1)) return *n == 1;
    return Diagnostic{where(name) + " is not a bool"};
  }
  [[nodiscard]] Result<std::optional<std::string>> string(std::size_t i, std::string_view name) const {
    const Value* v = get(i, name);
    if (v == nullptr || v->holds<ir::None>()) return std::optional<std::string>{};
    if (const auto* s = v->get_if<std::string>()) return std::optional<std::string>{*s};
    return Diagnostic{where(name) + " is not a string"};
  }
  /// A list of integers (a single integer stands for a list of `length` copies).
  [[nodiscard]] Result<std::vector<std::int64_t>> integers(std::size_t i, std::string_view name, std::size_t length,
                                                           std::optional<std::int64_t> fallback) const {
    const Value* v = get(i, name);
    if (v == nullptr || v->holds<ir::None>()) {
      if (fallback) return std::vector<std::int64_t>(length, *fallback);
      return Diagnostic{where(name) + " is missing"};
    }
    if (const auto* n = v->get_if<std::int64_t>()) return std::vector<std::int64_t>(length, *n);
    const auto* list = v->get_if<ValueList>();
    if (list == nullptr) return Diagnostic{where(name) + " is not a list of integers"};
    std::vector<std::int64_t> out;
    for (const Value& item : list->items) {
      const auto* n = item.get_if<std::int64_t>();
      if (n == nullptr) return Diagnostic{where(name) + " is not a list of integers"};
      out.push_back(*n);
    }
    if (out.size() == 1 && length > 1) out.assign(length, out[0]);
    if (out.size() != length)
      return Diagnostic{where(name) + " has " + std::to_string(out.size()) + " entries, expected " +
                        std::to_string(length)};
    return out;
  }
  /// The `out=` tensor of an ExternKernelOut call.
  [[nodiscard]] Result<const Tensor*> out() const {
    const Value* v = call_.kwarg("out");
    if (v == nullptr || v->holds<ir::None>()) return static_cast<const Tensor*>(nullptr);
    const Tensor* t = v->get_if<Tensor>();
    if (t == nullptr) return Diagnostic{where("out") + " is not a tensor"};
    if (t->numel() != 0 && t->data() == nullptr) return Diagnostic{where("out") + " has no storage"};
    if (t->storage && t->device().type != ir::DeviceType::cpu) return Diagnostic{where("out") + " is not on the CPU"};
    return t;
  }

 private:
  const ExternCall& call_;
  std::string_view op_;
};

// What `Args::read` takes: one description per argument, made by the
// functions below; `value_type` is what the argument reads as.

/// A tensor (`const Tensor*`, never null).
struct TensorArg {
  using value_type = const Tensor*;
  std::size_t index;
  std::string_view name;
  [[nodiscard]] Result<value_type> read(const Args& a) const { return a.tensor(index, name); }
};
/// A tensor or None (`const Tensor*`, null for None or absent).
struct OptionalTensorArg {
  using value_type = const Tensor*;
  std::size_t index;
  std::string_view name;
  [[nodiscard]] Result<value_type> read(const Args& a) const { return a.optional_tensor(index, name); }
};
struct IntegerArg {
  using value_type = std::int64_t;
  std::size_t index;
  std::string_view name;
  std::optional<std::int64_t> fallback;
  [[nodiscard]] Result<value_type> read(const Args& a) const { return a.integer(index, name, fallback); }
};
struct NumberArg {
  using value_type = double;
  std::size_t index;
  std::string_view name;
  std::optional<double> fallback;
  [[nodiscard]] Result<value_type> read(const Args& a) const { return a.number(index, name, fallback); }
};
struct OptionalNumberArg {
  using value_type = std::optional<double>;
  std::size_t index;
  std::string_view name;
  [[nodiscard]] Result<value_type> read(const Args& a) const { return a.optional_number(index, name); }
};
struct BoolArg {
  using value_type = bool;
  std::size_t index;
  std::string_view name;
  bool fallback;
  [[nodiscard]] Result<value_type> read(const Args& a) const { return a.boolean(index, name, fallback); }
};
struct StringArg {
  using value_type = std::optional<std::string>;
  std::size_t index;
  std::string_view name;
  [[nodiscard]] Result<value_type> read(const Args& a) const { return a.string(index, name); }
};
struct IntegersArg {
  using value_type = std::vector<std::int64_t>;
  std::size_t index;
  std::string_view name;
  std::size_t length;
  std::optional<std::int64_t> fallback;
  [[nodiscard]] Result<value_type> read(const Args& a) const { return a.integers(index, name, length, fallback); }
};

[[nodiscard]] inline TensorArg tensor_arg(std::size_t i, std::string_view name) { return {i, name}; }
[[nodiscard]] inline OptionalTensorArg optional_tensor_arg(std::size_t i, std::string_view name) { return {i, name}; }
[[nodiscard]] inline IntegerArg integer_arg(std::size_t i, std::string_view name,
                                            std::optional<std::int64_t> fallback = std::nullopt) {
  return {i, name, fallback};
}
[[nodiscard]] inline NumberArg number_arg(std::size_t i, std::string_view name, std::optional<double> fallback = std::nullopt) {
  return {i, name, fallback};
}
[[nodiscard]] inline OptionalNumberArg optional_number_arg(std::size_t i, std::string_view name) { return {i, name}; }
[[nodiscard]] inline BoolArg bool_arg(std::size_t i, std::string_view name, bool fallback) { return {i, name, fallback}; }
[[nodiscard]] inline StringArg string_arg(std::size_t i, std::string_view name) { return {i, name}; }
[[nodiscard]] inline IntegersArg integers_arg(std::size_t i, std::string_view name, std::size_t length,
                                              std::optional<std::int64_t> fallback) {
  return {i, name, length, fallback};
}

}  // namespace wrapir::run::cpu::detail
