#pragma once
/// \file
/// Loading compiled kernels: modules (cubin, PTX, fatbin) and their functions.
///
/// `Module::load(image, label)` takes the bytes of a cubin, a fatbin or PTX
/// text; `Module::load_file(path)` reads them from a file first. PTX is
/// JIT-compiled by the driver, and when that fails the diagnostic carries
/// the JIT's own error log. The label (a file name, a kernel name) is only
/// for messages: "cuModuleLoadDataEx(module 'triton_poi_0.cubin'): ...".
///
/// `module.function(name)` looks a kernel up and reads its attributes once
/// (register count, static shared memory, the dynamic shared memory it may
/// use); `set_max_dynamic_shared(bytes)` raises that limit — kernels that
/// want more than 48 KB of dynamic shared memory must opt in before launch.
/// A `Function` is a non-owning handle: it is valid while its `Module` is.

#include <wrapir/cuda/detail/unique_handle.hpp>
#include <wrapir/cuda/driver.hpp>
#include <wrapir/detail/safe_file.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::cuda {

/// What the driver knows of a kernel (cuFuncGetAttribute).
struct FunctionAttributes {
  int max_threads_per_block = 0;
  int static_shared_bytes = 0;
  /// The dynamic shared memory a launch may ask for now (48 KB unless raised).
  int max_dynamic_shared_bytes = 0;
  int registers = 0;
  int local_bytes = 0;
  int const_bytes = 0;
  /// Virtual (PTX) and binary (SASS) architecture, e.g. 90.
  int ptx_version = 0;
  int binary_version = 0;
};

/// A kernel in a loaded module.
class Function {
 public:
  Function() = default;

  [[nodiscard]] CUfunction get() const noexcept { return function_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const FunctionAttributes& attributes() const noexcept { return attributes_; }

  /// Allows launches with up to `bytes` of dynamic shared memory (needed
  /// above 48 KB); checks the device's opt-in limit through the driver.
  [[nodiscard]] Status set_max_dynamic_shared(int bytes) {
    if (bytes < 0) return Diagnostic{"kernel '" + name_ + "': negative dynamic shared memory " + std::to_string(bytes)};
    if (auto s = check(loaded_driver().cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                          bytes),
                       "cuFuncSetAttribute(kernel '" + name_ + "', max dynamic shared memory " +
                           std::to_string(bytes) + " bytes)");
        !s)
      return s;
    attributes_.max_dynamic_shared_bytes = bytes;
    return {};
  }

  /// The byte size of each kernel parameter as compiled, in order; an
  /// error on drivers before 12.4, which cannot say.
  [[nodiscard]] Result<std::vector<std::size_t>> parameter_sizes() const;

 private:
  friend class Module;
  CUfunction function_{};
  std::string name_{};
  FunctionAttributes attributes_{};
};

namespace detail {

/// The byte size of each of `f`'s parameters, asking the driver index by
/// index until it says there is no such parameter; `what` names the kernel
/// in messages. Needs cuFuncGetParamInfo (12.4+).
[[nodiscard]] inline Result<std::vector<std::size_t>> parameter_sizes_of(CUfunction f, const std::string& what) {
  const Driver& d = loaded_driver();
  if (!d.cuFuncGetParamInfo)
    return Diagnostic{what + ": the driver (CUDA " + std::to_string(d.version) +
                      ") cannot report parameter sizes; that needs 12.4"};
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0;; ++i) {
    std::size_t offset = 0, size = 0;
    const CUresult r = d.cuFuncGetParamInfo(f, i, &offset, &size);
    if (r == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
    if (r != CUDA_SUCCESS) return driver_error("cuFuncGetParamInfo(" + what + ")", r);
    sizes.push_back(size);
  }
  return sizes;
}

struct UnloadModule {
  void operator()(CUmodule m) const noexcept { (void)loaded_driver().cuModuleUnload(m); }
};

enum class ImageKind { cubin, fatbin, ptx };

inline ImageKind image_kind(std::span<const std::byte> image) {
  auto starts_with = [&](std::span<const unsigned char> magic) {
    return image.size() >= magic.size() && std::memcmp(image.data(), magic.data(), magic.size()) == 0;
  };
  constexpr std::array<unsigned char, 4> elf{0x7f, 'E', 'L', 'F'};
  constexpr std::array<unsigned char, 4> fatbin{0x50, 0xed, 0x55, 0xba};  // 0xba55ed50, little-endian
  if (starts_with(elf)) return ImageKind::cubin;
  if (starts_with(fatbin)) return ImageKind::fatbin;
  return ImageKind::ptx;
}

/// The first lines of a JIT log, for a one-line diagnostic.
inline std::string log_excerpt(const char* log, std::size_t max_chars = 600) {
  std::string s(log, ::strnlen(log, max_chars));
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}
}  // namespace detail

/// A loaded module of the current context. Move-only; unloads on destruction.
class Module {
 public:
  Module() = default;

  /// Loads a cubin, fatbin or PTX image (PTX need not be NUL-terminated).
  [[nodiscard]] static Result<Module> load(std::span<const std::byte> image, std::string_view label) {
    auto d = driver();
    if (!d) return d.error();
    const std::string what = "cuModuleLoadDataEx(module '" + std::string(label) + "')";
    if (image.empty()) return Diagnostic{what + ": the image is empty"};
    const detail::ImageKind kind = detail::image_kind(image);
    // The driver reads PTX up to a NUL; give it one, whatever the caller had.
    std::string ptx;
    const void* data = image.data();
    if (kind == detail::ImageKind::ptx) {
      ptx.assign(reinterpret_cast<const char*>(image.data()), image.size());
      if (ptx.find('\0') != std::string::npos)
        return Diagnostic{what + ": the image is neither a cubin (ELF), a fatbin, nor PTX text (it holds a NUL byte)"};
      data = ptx.c_str();
    }
    std::array<char, 8192> error_log{};
    std::array<CUjit_option, 2> options{CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    std::array<void*, 2> values{error_log.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(error_log.size()))};
    CUmodule m{};
    if (const CUresult r = (*d)->cuModuleLoadDataEx(&m, data, static_cast<unsigned>(options.size()), options.data(),
                                                    values.data());
        r != CUDA_SUCCESS) {
      Diagnostic diag = driver_error(what, r);
      error_log.back() = '\0';
      if (error_log[0] != '\0') diag.message += "; JIT log: " + detail::log_excerpt(error_log.data());
      return diag;
    }
    Module out;
    out.module_ = detail::UniqueHandle<CUmodule, detail::UnloadModule>(m);
    out.label_ = std::string(label);
    return out;
  }

  /// A module file larger than this is refused before it is read.
  static constexpr std::uint64_t max_file_bytes = std::uint64_t{256} << 20;

  /// Reads `path` and loads it; the label is the path. Anything but a
  /// regular file (a FIFO, `/dev/zero`) and a file over `max_file_bytes`
  /// are refused unread (detail/safe_file.hpp).
  [[nodiscard]] static Result<Module> load_file(const std::filesystem::path& path) {
    auto bytes = wrapir::detail::read_regular_file(path, {.max_bytes = max_file_bytes, .follow_symlinks = true,
                                                          .limit_hint = {}});
    if (!bytes) return std::move(bytes).error();
    return load(std::as_bytes(std::span<const char>(bytes->data(), bytes->size())), path.string());
  }

  [[nodiscard]] CUmodule get() const noexcept { return module_.get(); }
  [[nodiscard]] const std::string& label() const noexcept { return label_; }

  /// The kernel `name` (its mangled name for CUDA C++ kernels without
  /// `extern "C"`), with its attributes.
  [[nodiscard]] Result<Function> function(std::string_view name) const {
    const Driver& d = loaded_driver();
    Function f;
    f.name_ = std::string(name);
    const std::string what = "cuModuleGetFunction(kernel '" + f.name_ + "' in module '" + label_ + "')";
    if (!module_) return Diagnostic{what + ": the module is empty (moved from, or never loaded)"};
    if (const CUresult r = d.cuModuleGetFunction(&f.function_, module_.get(), f.name_.c_str()); r != CUDA_SUCCESS)
      return driver_error(what, r);
    struct Query {
      CUfunction_attribute attribute;
      int* out;
    };
    FunctionAttributes& a = f.attributes_;
    const std::array<Query, 8> queries{{
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &a.max_threads_per_block},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &a.static_shared_bytes},
        {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &a.max_dynamic_shared_bytes},
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &a.registers},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &a.local_bytes},
        {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &a.const_bytes},
        {CU_FUNC_ATTRIBUTE_PTX_VERSION, &a.ptx_version},
        {CU_FUNC_ATTRIBUTE_BINARY_VERSION, &a.binary_version},
    }};
    for (const Query& q : queries)
      if (const CUresult r = d.cuFuncGetAttribute(q.out, q.attribute, f.function_); r != CUDA_SUCCESS)
        return driver_error("cuFuncGetAttribute(kernel '" + f.name_ + "', attribute " +
                                std::to_string(static_cast<int>(q.attribute)) + ")",
                            r);
    return f;
  }

 private:
  detail::UniqueHandle<CUmodule, detail::UnloadModule> module_{};
  std::string label_{};
};

inline Result<std::vector<std::size_t>> Function::parameter_sizes() const {
  return detail::parameter_sizes_of(function_, "kernel '" + name_ + "'");
}

}  // namespace wrapir::cuda
