#pragma once
/// \file
/// Where the CPU executor (`run/executor.hpp`) gets its kernels: providers
/// that turn a program's kernel definition into a `CpuKernelFn`.
///
/// * `CpuKernelProvider` is the interface: given a kernel's name, language,
///   source text and signature, return a `ProvidedKernel` (its function
///   and, when the provider knows it, the identity of what it built), a
///   diagnostic (the kernel is the provider's but cannot be made: a compile
///   error, a signature mismatch), or "not mine" (an empty `ProvidedKernel`),
///   so that the next provider of a chain is asked.
/// * `KernelRegistry` is a provider of plain C++ callables registered by
///   name. `cpu_kernel(callable)` wraps a callable whose parameters are
///   element pointers (`const float*`, `float*`) and scalars (`int64_t`,
///   `int32_t`, `double`, `float`, `bool`): the wrapper unpacks the `void*`
///   arguments by those types, and the parameter types are checked against
///   the program's signature when the executor is prepared, so a kernel
///   registered for `*fp32, *fp32, i64` is never called with an `i32`.
/// * `ProviderChain` asks its providers in order; the first that does not
///   say "not mine" decides.
///
/// Providers are called only while an executor is prepared, from one
/// thread; the functions they return are called by every run of the
/// executor and must be safe to call from several threads at once when the
/// executor is shared between threads (plain functions of their arguments
/// are).
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/run/extern.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace wrapir::run {

/// What a provider is asked for: one kernel of the kernel table, with the
/// source of its definition (empty for a kernel defined by a binary).
struct KernelRequest {
  std::string_view name{};
  ir::KernelLanguage language = ir::KernelLanguage::cpp;
  std::string_view source{};
  std::span<const ir::KernelParam> signature{};
  /// The definition's metadata (constants, block sizes), or null.
  const ir::KernelMetadata* metadata = nullptr;
  /// The file and entry of a kernel defined by a binary (PTX, cubin), or
  /// null.
  const ir::BinaryRef* binary = nullptr;
};

/// Whether the calls of a `language` kernel give its grid (PTX and cubin
/// kernels: an `ExplicitGrid` or `TypedGrid` at the call, as emit::cpp
/// launches them) rather than leave it to the kernel's launcher (Triton) or
/// to the kernel itself (CUDA C++ host functions, CPU kernels). The executor
/// refuses such a call without a grid and passes the grid to the kernel's
/// function as three more arguments after the signature's: `int64_t` x, y
/// and z, in slots like the others (`call_grid_arguments`).
[[nodiscard]] constexpr bool launches_over_call_grid(ir::KernelLanguage language) noexcept {
  return language == ir::KernelLanguage::ptx || language == ir::KernelLanguage::cubin;
}
/// How many arguments the call's grid adds (see `launches_over_call_grid`).
inline constexpr std::size_t call_grid_arguments = 3;

/// What a provider hands back for one kernel.
struct ProvidedKernel {
  /// The kernel's function; empty: the kernel is not this provider's.
  CpuKernelFn fn{};
  /// What the function *is*, as only the provider can tell: the kernel
  /// cache's identity of a compiled kernel (source, every header it
  /// includes, compiler, flags), a hash of a loaded binary's bytes. It
  /// names the kernel in the multi-kernel choice cache
  /// (`Candidate::identity`), so a kernel built differently under the same
  /// name is benchmarked again rather than handed a choice measured with
  /// another build. Empty: the executor names the kernel by a hash of its
  /// definition (`run/kernel_identity.hpp`), which misses what the
  /// definition does not say (a changed header, compiler or file).
  std::string identity{};

  /// Whether the provider gave a kernel (false: "not mine").
  explicit operator bool() const noexcept { return static_cast<bool>(fn); }
};

/// Makes CPU kernels. `provide` returns the kernel (its function and, when
/// known, its identity), an empty `ProvidedKernel` when the kernel is not
/// this provider's (the next one is asked), or a diagnostic when it is but
/// cannot be made.
class CpuKernelProvider {
 public:
  virtual ~CpuKernelProvider() = default;
  [[nodiscard]] virtual Result<ProvidedKernel> provide(const KernelRequest& request) const = 0;
  /// For diagnostics: `kernel registry`, `C++ compiler`.
  [[nodiscard]] virtual std::string describe() const = 0;
};

using CpuKernelProviderPtr = std::shared_ptr<const CpuKernelProvider>;

/// The same interface serves every device: a kernel is a function of its
/// packed arguments (`cuLaunchKernel`'s convention), so a GPU provider
/// returns a function that launches (run/cuda/triton_kernels.hpp). These
/// names say so where the device does not matter.
using KernelFn = CpuKernelFn;
using KernelProvider = CpuKernelProvider;
using KernelProviderPtr = CpuKernelProviderPtr;

namespace detail {

template <class T>
struct element_dtype;  // the DType of a C++ element type, for typed kernels
template <> struct element_dtype<bool> { static constexpr ir::DType value = ir::DType::bool_; };
template <> struct element_dtype<std::uint8_t> { static constexpr ir::DType value = ir::DType::uint8; };
template <> struct element_dtype<std::int8_t> { static constexpr ir::DType value = ir::DType::int8; };
template <> struct element_dtype<std::int16_t> { static constexpr ir::DType value = ir::DType::int16; };
template <> struct element_dtype<std::int32_t> { static constexpr ir::DType value = ir::DType::int32; };
template <> struct element_dtype<std::int64_t> { static constexpr ir::DType value = ir::DType::int64; };
template <> struct element_dtype<std::uint16_t> { static constexpr ir::DType value = ir::DType::uint16; };
template <> struct element_dtype<std::uint32_t> { static constexpr ir::DType value = ir::DType::uint32; };
template <> struct element_dtype<std::uint64_t> { static constexpr ir::DType value = ir::DType::uint64; };
template <> struct element_dtype<float> { static constexpr ir::DType value = ir::DType::float32; };
template <> struct element_dtype<double> { static constexpr ir::DType value = ir::DType::float64; };

template <class T>
concept known_element = requires { element_dtype<std::remove_cv_t<T>>::value; };

/// The parameter type of one C++ parameter of a typed kernel.
template <class P>
constexpr ir::ParamType param_type_of() {
  if constexpr (std::is_pointer_v<P>) {
    using E = std::remove_cv_t<std::remove_pointer_t<P>>;
    static_assert(known_element<E>, "a typed CPU kernel's pointer parameter must point at bool, a fixed-width integer, "
                                    "float or double");
    return ir::ParamType{true, element_dtype<E>::value};
  } else {
    using S = std::remove_cvref_t<P>;
    static_assert(known_element<S>, "a typed CPU kernel's scalar parameter must be bool, a fixed-width integer, float "
                                    "or double");
    return ir::ParamType{false, element_dtype<S>::value};
  }
}

template <class P>
P unpack_param(void* slot) {
  if constexpr (std::is_pointer_v<P>) {
    void* address = nullptr;
    std::memcpy(&address, slot, sizeof address);
    return static_cast<P>(address);
  } else {
    std::remove_cvref_t<P> value{};
    std::memcpy(&value, slot, sizeof value);
    return value;
  }
}

template <class F>
struct callable_signature : callable_signature<decltype(&F::operator())> {};
template <class R, class... A>
struct callable_signature<R (*)(A...)> {
  using result = R;
  using params = std::tuple<A...>;
};
template <class R, class... A>
struct callable_signature<R(A...)> : callable_signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_signature<R (C::*)(A...) const> : callable_signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_signature<R (C::*)(A...)> : callable_signature<R (*)(A...)> {};

template <class F, class... A, std::size_t... I>
Result<void> call_unpacked(const F& f, std::span<void* const> args, std::index_sequence<I...>) {
  using R = std::invoke_result_t<const F&, A...>;
  if constexpr (std::is_void_v<R>) {
    f(unpack_param<A>(args[I])...);
    return {};
  } else {
    return f(unpack_param<A>(args[I])...);
  }
}

}  // namespace detail

/// A kernel with its function and, when known, the parameter types it was
/// written for (checked against the program's signature at prepare time).
struct TypedCpuKernel {
  CpuKernelFn fn{};
  std::optional<std::vector<ir::ParamType>> params{};
  /// What the callable is, for the multi-kernel choice cache: a version to
  /// change when the callable's code changes (`"2"`); a `KernelRegistry`
  /// gives `<name>@<version>` as the `ProvidedKernel::identity`. Empty: the
  /// program's definition names the kernel.
  std::string identity{};
};

/// Wraps a callable whose parameters are element pointers and scalars (see
/// the file comment) as a kernel. The callable returns `void` or
/// `Result<void>`.
template <class F>
[[nodiscard]] TypedCpuKernel cpu_kernel(F f) {
  using Sig = detail::callable_signature<std::remove_cvref_t<F>>;
  return [&]<class... A>(std::type_identity<std::tuple<A...>>) {
    std::vector<ir::ParamType> params{detail::param_type_of<A>()...};
    CpuKernelFn fn = [f = std::move(f)](std::span<void* const> args) -> Result<void> {
      if (args.size() != sizeof...(A))
        return Diagnostic{"the kernel takes " + std::to_string(sizeof...(A)) + " arguments, got " +
                          std::to_string(args.size())};
      return detail::call_unpacked<F, A...>(f, args, std::index_sequence_for<A...>{});
    };
    return TypedCpuKernel{std::move(fn), std::move(params), {}};
  }(std::type_identity<typename Sig::params>{});
}

/// Whether a kernel written for `params` can be called with `signature`:
/// same count, and each parameter the same pointer-ness and dtype.
[[nodiscard]] inline Result<void> check_kernel_params(std::span<const ir::ParamType> params,
                                                      std::span<const ir::KernelParam> signature) {
  if (params.size() != signature.size())
    return Diagnostic{"the registered kernel takes " + std::to_string(params.size()) +
                      " parameters but the program's signature has " + std::to_string(signature.size())};
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i] != signature[i].type)
      return Diagnostic{"parameter " + std::to_string(i) + " (" + ir::quote_for_diagnostic(signature[i].name) +
                        ") is " + ir::to_string(signature[i].type) + " in the program but " +
                        ir::to_string(params[i]) + " in the registered kernel"};
  return {};
}

/// Plain C++ kernels by name (any language: the program's source is
/// ignored; the registered function is the kernel). A kernel registered
/// with a `TypedCpuKernel::identity` (a version) is identified as
/// `<name>@<version>`; without one the executor names it by the program's
/// definition, which does not change when the callable does.
class KernelRegistry final : public CpuKernelProvider {
 public:
  /// Registers `kernel` under `name`; a second registration of one name is
  /// refused.
  Result<void> add(std::string name, TypedCpuKernel kernel) {
    if (name.empty()) return Diagnostic{"a kernel needs a name"};
    if (!kernel.fn) return Diagnostic{"kernel " + ir::quote_for_diagnostic(name) + " has no function"};
    if (!kernels_.emplace(name, std::move(kernel)).second)
      return Diagnostic{"kernel " + ir::quote_for_diagnostic(name) + " is already registered"};
    return {};
  }
  /// Registers an untyped function (its arguments are not checked).
  Result<void> add(std::string name, CpuKernelFn fn) { return add(std::move(name), TypedCpuKernel{std::move(fn), {}, {}}); }

  [[nodiscard]] Result<ProvidedKernel> provide(const KernelRequest& request) const override {
    const auto it = kernels_.find(request.name);
    if (it == kernels_.end()) return ProvidedKernel{};
    if (it->second.params)
      if (Result<void> ok = check_kernel_params(*it->second.params, request.signature); !ok) return ok.error();
    const std::string& version = it->second.identity;
    return ProvidedKernel{it->second.fn, version.empty() ? std::string{} : it->first + "@" + version};
  }
  [[nodiscard]] std::string describe() const override { return "kernel registry"; }
  [[nodiscard]] std::size_t size() const noexcept { return kernels_.size(); }

 private:
  std::map<std::string, TypedCpuKernel, std::less<>> kernels_{};
};

/// Asks providers in order (see the file comment).
class ProviderChain final : public CpuKernelProvider {
 public:
  ProviderChain() = default;
  explicit ProviderChain(std::vector<CpuKernelProviderPtr> providers) : providers_(std::move(providers)) {}
  void add(CpuKernelProviderPtr p) {
    if (p) providers_.push_back(std::move(p));
  }
  [[nodiscard]] Result<ProvidedKernel> provide(const KernelRequest& request) const override {
    for (const CpuKernelProviderPtr& p : providers_) {
      Result<ProvidedKernel> r = p->provide(request);
      if (!r) return Diagnostic{p->describe() + ": " + r.error().message};
      if (*r) return r;
    }
    return ProvidedKernel{};
  }
  [[nodiscard]] std::string describe() const override {
    std::string s = "providers [";
    for (std::size_t i = 0; i < providers_.size(); ++i) s += (i ? ", " : "") + providers_[i]->describe();
    return s + "]";
  }
  [[nodiscard]] bool empty() const noexcept { return providers_.empty(); }

 private:
  std::vector<CpuKernelProviderPtr> providers_{};
};

}  // namespace wrapir::run
