#pragma once
/// \file
/// Extern and fallback kernels at run time: the values they receive and
/// return, and the registry the executor looks them up in by the name a
/// program spells (`extern_kernels.mm`, `aten.topk.default`,
/// `aten.scatter_`, `torch.ops.mylib.op.default`).
///
/// Calling conventions, after Inductor's:
///
/// * `ExternKernelOut` (`extern_kernels.mm(a, b, out=buf2)`): the result
///   tensor is the keyword argument `out`, already allocated with the
///   program's layout; the function writes it and returns `None`.
/// * `ExternKernelAlloc` and `ExternKernelMultiOut` (`buf3 =
///   torch.ops.aten.topk.default(buf1, 4)`): the function allocates what it
///   returns, a `Tensor` or a list of values (a tuple); `MultiOutput` lines
///   then index into it by key path.
/// * In-place fallbacks (`ScatterFallback`, `IndexPutFallback`): the
///   executor passes `self` first and the function updates it, returning
///   `None`.
///
/// Every failure is a `Diagnostic` saying what was wrong with which argument;
/// the executor adds the line. Nothing here throws across the registry.
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/run/tensor.hpp>

#include <boost/variant2/variant.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::run {

struct Value;

/// A list or tuple of values (`aten.cat`'s tensors, topk's results).
struct ValueList {
  std::vector<Value> items;
};

/// An evaluated call argument or result: what an `ir::Arg` becomes once its
/// buffers are tensors and its symbolic integers are integers.
struct Value {
  using Variant = boost::variant2::variant<ir::None, Tensor, std::int64_t, double, bool, std::string, ir::Device,
                                           ir::DType, ValueList>;
  Variant value{};

  template <class T>
  [[nodiscard]] const T* get_if() const noexcept {
    return boost::variant2::get_if<T>(&value);
  }
  template <class T>
  [[nodiscard]] bool holds() const noexcept {
    return boost::variant2::holds_alternative<T>(value);
  }
};

/// A keyword argument (`out=`, `alpha=`, `reduce=`).
struct KeywordArg {
  std::string name;
  Value value;
};

/// One call of an extern: its name as the program spells it and its
/// evaluated arguments.
struct ExternCall {
  std::string_view op{};
  std::span<const Value> args{};
  std::span<const KeywordArg> kwargs{};

  /// The keyword argument `name`, or null.
  [[nodiscard]] const Value* kwarg(std::string_view name) const noexcept {
    for (const KeywordArg& k : kwargs)
      if (k.name == name) return &k.value;
    return nullptr;
  }
  /// Positional argument `i` if given, else keyword `name`, else null.
  [[nodiscard]] const Value* arg(std::size_t i, std::string_view name) const noexcept {
    return i < args.size() ? &args[i] : kwarg(name);
  }
};

/// An extern's implementation. Returns `None` (out= and in-place forms),
/// a `Tensor`, or a `ValueList` (tuples).
using ExternFn = std::function<Result<Value>(const ExternCall&)>;

/// Externs by name. Users add their own; `add` refuses an empty name and a
/// second registration of one name (replace with `replace`).
class ExternRegistry {
 public:
  Result<void> add(std::string op, ExternFn fn) {
    if (op.empty()) return Diagnostic{"an extern needs a name"};
    if (!fn) return Diagnostic{"extern " + ir::quote_for_diagnostic(op) + " has no function"};
    if (!fns_.emplace(op, std::move(fn)).second)
      return Diagnostic{"extern " + ir::quote_for_diagnostic(op) + " is already registered"};
    return {};
  }
  void replace(std::string op, ExternFn fn) { fns_[std::move(op)] = std::move(fn); }
  [[nodiscard]] const ExternFn* find(std::string_view op) const {
    const auto it = fns_.find(op);
    return it == fns_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(fns_.size());
    for (const auto& [name, fn] : fns_) out.push_back(name);
    return out;
  }

 private:
  std::map<std::string, ExternFn, std::less<>> fns_{};
};

/// A CPU kernel, compiled from a program's C++ source or registered as a
/// plain C++ callable. It is called with one pointer per argument, each
/// pointing at the argument's value, as `cuLaunchKernel`'s `kernelParams`
/// are: for a pointer parameter a `void*` holding the data address, for a
/// scalar parameter the scalar in the parameter's dtype (`int64_t`,
/// `double`, ...). The span's length equals the kernel's signature.
using CpuKernelFn = std::function<Result<void>(std::span<void* const> args)>;

}  // namespace wrapir::run
