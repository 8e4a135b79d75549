#pragma once
/// \file
/// The executor's intermediate-value debug printer (`ExecutorOptions::debug`,
/// docs/runtime.md "Debug printing"), after Inductor's `DebugPrinterManager`
/// (reference §6) and the Python emitter's rendering of it
/// (`python::Options::debug_level`): around each kernel and extern call
/// whose name passes the filter,
///
/// * level 1 saves every tensor argument before and after the call, as
///   `<save_directory>/<before_launch|after_launch>_<kernel>_<buffer>.safetensors`
///   (one tensor named after the buffer; the Python module saves `.pt`);
/// * level 2 prints every argument (extern calls: tensors only):
///   `inductor: before_launch - <kernel> - <argument>`, then for a number
///   `Value: <v>`, for a tensor its elements when there are at most 64,
///   `Number of elements`, `Size`, `Dtype`, `Mean`, `Min`, `Max`, `Std`
///   (what `_print_debugging_tensor_value_info` prints; Inductor's `Dtype`
///   line prints the mean, ours prints the dtype);
/// * level 3 prints the kernel names only: `[ before_launch: <kernel> ]`, as
///   Inductor's C++ wrappers do.
///
/// Device tensors are copied to the host first (waiting for the device).
/// Nothing here runs when the level is 0: the handlers test one bool.
#include <wrapir/detail/safe_file.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/io/safetensors_dtype.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/run/detail/executor_values.hpp>
#include <wrapir/run/executor.hpp>
#include <wrapir/run/executor_backend.hpp>
#include <wrapir/run/tensor.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>


namespace wrapir::run::executor_detail {

inline std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Whether `name` passes the filter (names already lowercased).
inline bool debug_wraps(const std::vector<std::string>& lowered_filter, std::string_view name) {
  if (lowered_filter.empty()) return true;
  const std::string n = lowercase(name);
  return std::find(lowered_filter.begin(), lowered_filter.end(), n) != lowered_filter.end();
}

/// `t` as a contiguous host tensor (a copy).
inline Tensor host_copy(const DeviceBackend* backend, const Tensor& t) {
  Result<Tensor> host = empty_cpu(t.sizes, t.dtype);
  if (!host) fail(host.error().message);
  copy_tensor(backend, *host, t);
  return *std::move(host);
}

/// Element `i` of contiguous host tensor `t` as a double; nothing for a
/// dtype the printer does not read.
inline std::optional<double> element(const Tensor& t, std::int64_t i) {
  const auto* p = static_cast<const std::byte*>(t.data()) + i * ir::itemsize(t.dtype);
  auto load = [&]<class T>(T) {
    T v{};
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  switch (t.dtype) {
    case ir::DType::bool_: return load(std::uint8_t{}) != 0 ? 1.0 : 0.0;
    case ir::DType::uint8: return load(std::uint8_t{});
    case ir::DType::int8: return load(std::int8_t{});
    case ir::DType::int16: return load(std::int16_t{});
    case ir::DType::int32: return load(std::int32_t{});
    case ir::DType::int64: return load(std::int64_t{});
    case ir::DType::uint16: return load(std::uint16_t{});
    case ir::DType::uint32: return load(std::uint32_t{});
    case ir::DType::uint64: return load(std::uint64_t{});
    case ir::DType::float32: return load(float{});
    case ir::DType::float64: return load(double{});
    case ir::DType::float16:
    case ir::DType::bfloat16: {
      std::uint16_t bits = 0;
      std::memcpy(&bits, p, sizeof bits);
      std::uint32_t f = 0;
      if (t.dtype == ir::DType::bfloat16) {
        f = std::uint32_t{bits} << 16;
      } else {
        const std::uint32_t sign = (bits >> 15) & 1u, exp = (bits >> 10) & 0x1fu, man = bits & 0x3ffu;
        if (exp == 0) {  // zero or subnormal
          const double v = std::ldexp(static_cast<double>(man), -24);
          return sign ? -v : v;
        }
        f = (sign << 31) | ((exp == 31 ? 255u : exp + 112u) << 23) | (man << 13);
      }
      float v = 0;
      std::memcpy(&v, &f, sizeof v);
      return static_cast<double>(v);
    }
    default: return std::nullopt;
  }
}

inline std::string number_text(double v) {
  std::ostringstream s;
  s.precision(8);
  s << v;
  return s.str();
}

/// What `_print_debugging_tensor_value_info` prints for a tensor.
inline void print_tensor_info(std::ostream& out, const DeviceBackend* backend, const Tensor& t) {
  const std::int64_t n = t.numel();
  const Tensor host = n == 0 ? t : host_copy(backend, t);
  const bool readable = n == 0 || element(host, 0).has_value();
  if (readable && n <= 64) {
    out << "[";
    for (std::int64_t i = 0; i < n; ++i) out << (i ? ", " : "") << number_text(*element(host, i));
    out << "]\n";
  }
  out << "Number of elements: " << n << "\n";
  out << "Size: [";
  for (std::size_t i = 0; i < t.sizes.size(); ++i) out << (i ? ", " : "") << t.sizes[i];
  out << "]\n";
  out << "Dtype: " << ir::name(t.dtype) << "\n";
  if (!readable) {
    out << "(no statistics for " << ir::name(t.dtype) << ")\n";
    return;
  }
  if (n == 0) return;
  double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = *element(host, i);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const double mean = sum / static_cast<double>(n);
  double square = 0;
  for (std::int64_t i = 0; i < n; ++i) square += (*element(host, i) - mean) * (*element(host, i) - mean);
  // torch.std: the unbiased estimate (nan for one element).
  const double std_dev = n > 1 ? std::sqrt(square / static_cast<double>(n - 1)) : std::nan("");
  out << "Mean: " << number_text(mean) << "\n";
  out << "Min: " << number_text(lo) << "\n";
  out << "Max: " << number_text(hi) << "\n";
  out << "Std: " << number_text(std_dev) << "\n";
}

/// A file name part from a kernel or buffer name: letters, digits, `_`,
/// `-` and `.` kept, anything else `_` (no separators, no `..` escape).
inline std::string file_part(std::string_view s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
  return out.empty() ? std::string("_") : out;
}

/// Level 1: `t` saved as a one-tensor safetensors file named `name`.
inline void save_tensor(const DeviceBackend* backend, const std::filesystem::path& path, const std::string& name,
                        const Tensor& t) {
  const std::optional<std::string_view> dtype = io::safetensors_dtype_name(t.dtype);
  if (!dtype) fail("the debug printer cannot save a " + std::string(ir::name(t.dtype)) + " tensor");
  const Tensor host = t.numel() == 0 ? t : host_copy(backend, t);
  const std::int64_t bytes = t.numel() * ir::itemsize(t.dtype);
  std::string header = "{\"" + name + "\":{\"dtype\":\"" + std::string(*dtype) + "\",\"shape\":[";
  for (std::size_t i = 0; i < t.sizes.size(); ++i) header += (i ? "," : "") + std::to_string(t.sizes[i]);
  header += "],\"data_offsets\":[0," + std::to_string(bytes) + "]}}";
  while (header.size() % 8 != 0) header += ' ';
  std::string content(8, '\0');
  for (std::size_t i = 0; i < 8; ++i)  // the header's length, little-endian
    content[i] = static_cast<char>((static_cast<std::uint64_t>(header.size()) >> (8 * i)) & 0xffu);
  content += header;
  if (bytes > 0) content.append(reinterpret_cast<const char*>(host.data()), static_cast<std::size_t>(bytes));
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  // Through a fresh temporary renamed over the target, as the tool's
  // outputs: a link planted where a file goes is refused, never followed.
  if (auto written = wrapir::detail::write_file_atomically(path, content); !written)
    fail("the debug printer cannot save " + name + ": " + written.error().message);
}

/// One argument as the printer sees it: its label (a buffer's name, or an
/// integer's text) and its value.
struct DebugArg {
  std::string label;
  Value value;
  bool pointer = true;  // a kernel's pointer parameter (level 1 saves only those)
};

/// The printer, made when the level is not 0.
class DebugPrinter {
 public:
  DebugPrinter(const DebugPrintOptions& options, const DeviceBackend* backend) : options_(options), backend_(backend) {
    for (const std::string& n : options.kernel_filter) filter_.push_back(lowercase(n));
  }
  [[nodiscard]] bool wraps(std::string_view kernel) const { return debug_wraps(filter_, kernel); }

  /// The lines for `when` ("before_launch" or "after_launch").
  void print(std::string_view when, std::string_view kernel, const std::vector<DebugArg>& args) const {
    std::ostream& out = options_.out != nullptr ? *options_.out : std::cout;
    if (options_.level == 3) {
      out << "[ " << when << ": " << kernel << " ]\n";
      return;
    }
    for (const DebugArg& a : args) {
      const Tensor* t = a.value.get_if<Tensor>();
      if (options_.level == 1) {
        if (t == nullptr || !a.pointer) continue;
        const std::string stem = std::string(when) + "_" + file_part(kernel) + "_" + file_part(a.label);
        save_tensor(backend_, std::filesystem::path(options_.save_directory) / (stem + ".safetensors"), a.label, *t);
        continue;
      }
      out << "inductor: " << when << " - " << kernel << " - " << a.label << "\n";
      if (t != nullptr) print_tensor_info(out, backend_, *t);
      else if (const std::int64_t* i = a.value.get_if<std::int64_t>()) out << "Value: " << *i << "\n";
      else if (const double* d = a.value.get_if<double>()) out << "Value: " << number_text(*d) << "\n";
      else if (const bool* b = a.value.get_if<bool>()) out << "Value: " << (*b ? "True" : "False") << "\n";
      else out << "Value: None\n";
    }
    out.flush();
  }

 private:
  const DebugPrintOptions& options_;
  const DeviceBackend* backend_;
  std::vector<std::string> filter_;
};

}  // namespace wrapir::run::executor_detail
