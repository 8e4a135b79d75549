#pragma once
/// \file
/// Launching kernels: untyped `launch` and typed `Kernel<Params...>`.
///
/// ```
/// auto add = cuda::Kernel<cuda::DevicePtr<float>, cuda::DevicePtr<const float>, std::int32_t>::bind(
///                module.function("add").value()).value();
/// auto s = add({.grid = {(n + 127) / 128}, .block = {128}, .stream = stream}, out.as<float>(), in.as<float>(), n);
/// ```
///
/// Both pack the arguments' addresses into an array on the stack and call
/// `cuLaunchKernel` once: no heap allocation, no lookup, no lock. The
/// driver copies argument values at the call, so temporaries are fine.
///
/// `Kernel<Params...>` declares the kernel's signature as a type. Each
/// argument must convert to its parameter implicitly and without narrowing:
/// a `DevicePtr<float>` passes where `DevicePtr<const float>` is declared,
/// but not the other way; an `int64_t` does not pass as an `int32_t`; a raw
/// integer is not a pointer. A mismatch is a compile error whose
/// instantiation names the argument's position:
/// `kernel_argument<2, int, long>` ("argument 2 (0-based) ..."). `bind`
/// also checks, where the driver can say (12.4 and newer), that the cubin's
/// parameters have the declared count and sizes — a kernel rebuilt with
/// another signature fails at load time, not with garbage results.
///
/// A launch whose grid is empty (a zero-sized tensor) returns success without
/// calling the driver. Launch errors name the kernel, the grid and the block.

#include <wrapir/cuda/driver.hpp>
#include <wrapir/detail/phase_clock.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/run/dim3.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace wrapir::cuda {

using run::Dim3;

/// Where and how a launch runs. `shared_bytes` is dynamic shared memory;
/// above 48 KB the kernel must have opted in (Function::set_max_dynamic_shared).
struct LaunchConfig {
  Dim3 grid{};
  Dim3 block{};
  std::uint32_t shared_bytes = 0;
  CUstream stream = nullptr;
};

namespace detail {

[[nodiscard]] inline Diagnostic launch_error(const Function& f, const LaunchConfig& c, CUresult r) {
  return driver_error("cuLaunchKernel(kernel '" + f.name() + "', grid " + run::to_string(c.grid) + ", block " +
                          run::to_string(c.block) + ", " + std::to_string(c.shared_bytes) + " bytes of shared memory)",
                      r);
}

/// The one call both launch paths end in.
[[nodiscard]] inline Status launch_packed(const Function& f, const LaunchConfig& c, void** params) {
  if (c.grid.empty()) return {};
  WRAPIR_PHASE_MARK(launcher);
  const CUresult r = loaded_driver().cuLaunchKernel(f.get(), c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y,
                                                    c.block.z, c.shared_bytes, c.stream, params, nullptr);
  WRAPIR_PHASE_MARK(driver_launch);
  if (r == CUDA_SUCCESS) [[likely]]
    return {};
  return launch_error(f, c, r);
}

template <class T>
inline constexpr bool is_owning_memory = std::is_same_v<T, DeviceBuffer> || std::is_same_v<T, PinnedBuffer>;

template <class T>
constexpr void check_untyped_argument() {
  static_assert(!is_owning_memory<T>,
                "wrapir::cuda::launch: pass a buffer's address (buffer.address() or buffer.as<T>()), not the buffer");
  static_assert(std::is_trivially_copyable_v<T>,
                "wrapir::cuda::launch: kernel arguments are copied byte for byte; this one is not trivially copyable");
}

/// The driver's parameter array for `args`: their addresses, in order
/// (checked to be passable as raw bytes). Valid while `args` live.
template <class... Args>
[[nodiscard]] std::array<void*, sizeof...(Args)> argument_addresses(const Args&... args) noexcept {
  (check_untyped_argument<Args>(), ...);
  return {const_cast<void*>(static_cast<const void*>(&args))...};
}

/// The conversion rule of typed kernels: implicit and not narrowing.
template <class Param, class Arg>
concept passes_as = std::is_convertible_v<Arg, Param> && requires(Arg&& a) { Param{std::forward<Arg>(a)}; };

/// Instantiated once per argument, so that a compiler's error names the
/// position, the declared parameter and the argument's type.
template <std::size_t Position, class Param, class Arg>
struct kernel_argument {
  static_assert(passes_as<Param, Arg>,
                "wrapir::cuda::Kernel: argument at this Position (0-based) does not convert to the declared parameter "
                "implicitly and without narrowing; see kernel_argument<Position, Param, Arg> below");
  static constexpr bool ok = true;
};

}  // namespace detail

/// Launches `f` with `args` as its parameters, in order. Each argument must
/// be trivially copyable and have exactly the type (and so the size) the
/// kernel declares: `launch` cannot check that; `Kernel` can.
template <class... Args>
[[nodiscard]] Status launch(const Function& f, const LaunchConfig& config, const Args&... args) {
  auto params = detail::argument_addresses(args...);
  return detail::launch_packed(f, config, params.data());
}

/// A kernel with its signature as a type. Copyable (it holds a `Function`,
/// a non-owning handle): valid while its module is loaded.
template <class... Params>
class Kernel {
  static_assert((std::is_trivially_copyable_v<Params> && ...),
                "wrapir::cuda::Kernel: every parameter type must be trivially copyable");
  static_assert((!std::is_reference_v<Params> && ...), "wrapir::cuda::Kernel: parameters are values, not references");

 public:
  static constexpr std::size_t arity = sizeof...(Params);

  /// Wraps `f`, checking its compiled parameters against `Params` when the
  /// driver can report them (CUDA 12.4+); on older drivers nothing is checked.
  [[nodiscard]] static Result<Kernel> bind(Function f) {
    if (loaded_driver().cuFuncGetParamInfo) {
      auto sizes = f.parameter_sizes();
      if (!sizes) return sizes.error();
      constexpr std::array<std::size_t, arity> declared{sizeof(Params)...};
      if (sizes->size() != arity)
        return Diagnostic{"kernel '" + f.name() + "' has " + std::to_string(sizes->size()) +
                          " parameter(s) but its Kernel type declares " + std::to_string(arity)};
      for (std::size_t i = 0; i < arity; ++i)
        if ((*sizes)[i] != declared[i])
          return Diagnostic{"kernel '" + f.name() + "': parameter " + std::to_string(i) + " is " +
                            std::to_string((*sizes)[i]) + " bytes but is declared as " +
                            std::to_string(declared[i]) + " bytes"};
    }
    return Kernel(std::move(f));
  }

  /// Launches with `args` converted to `Params` (checked at compile time).
  template <class... Args>
  [[nodiscard]] Status operator()(const LaunchConfig& config, Args&&... args) const {
    if constexpr (sizeof...(Args) != arity) {
      static_assert(sizeof...(Args) == arity, "wrapir::cuda::Kernel: wrong number of arguments for this kernel");
      return {};
    } else {
      return call(config, std::index_sequence_for<Params...>{}, std::forward<Args>(args)...);
    }
  }

  [[nodiscard]] const Function& function() const noexcept { return function_; }

 private:
  explicit Kernel(Function f) : function_(std::move(f)) {}

  template <std::size_t... I, class... Args>
  Status call(const LaunchConfig& config, std::index_sequence<I...>, Args&&... args) const {
    static_assert((detail::kernel_argument<I, Params, std::remove_cvref_t<Args>>::ok && ...));
    std::tuple<Params...> values{static_cast<Params>(std::forward<Args>(args))...};
    if constexpr (arity == 0) {
      return detail::launch_packed(function_, config, nullptr);
    } else {
      std::array<void*, arity> params{static_cast<void*>(&std::get<I>(values))...};
      return detail::launch_packed(function_, config, params.data());
    }
  }

  Function function_;
};

}  // namespace wrapir::cuda
