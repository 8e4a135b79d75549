#pragma once
/// \file
/// Triton kernels for `run::Executor` on CUDA: a kernel provider that loads
/// the cubins the Inductor exporter wrote (`--device cuda`: DIR/kernels.json
/// and DIR/kernels/NAME.{cubin,json}) and returns, for each Triton kernel
/// of a program, a function that launches it on the backend's stream.
///
/// Per kernel, when the executor is prepared: the kernels.json entry (the
/// cubin and Triton's metadata file, read as run/cuda/kernel_files.hpp
/// reads a kernel directory's files, the launch configuration the autotuner
/// chose — constexpr block sizes such as `XBLOCK`, `num_warps`, the grid
/// type), the metadata read with `cuda::triton_metadata_from_json` and
/// checked against the entry (symbol, warps, shared memory), the module
/// loaded, the function looked up and, where the driver reports it (12.4+),
/// its parameter count checked against the program's signature plus
/// Triton's scratch pointers. Every refusal names the kernel and says why.
/// The kernel's identity (run/kernel_identity.hpp: its name in the
/// multi-kernel choice cache) hashes the cubin's and the metadata's bytes
/// and the entry's launch configuration, not their paths.
///
/// Per launch: the numel arguments (`xnumel`, `ynumel`, `r0_numel`, ... by
/// the signature's names) are read from the packed arguments, the grid is
/// `run::compute_grid_dims` of the entry's grid type and block sizes (no
/// allocation), and `TritonKernel::launch_packed` calls `cuLaunchKernel`
/// once.
#include <wrapir/cuda/module.hpp>
#include <wrapir/cuda/triton.hpp>
#include <wrapir/cuda/triton_json.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/kernel_files.hpp>
#include <wrapir/run/executor_kernels.hpp>
#include <wrapir/run/grid.hpp>
#include <wrapir/run/kernel_identity.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::run::cuda {

/// One entry of the exporter's kernels.json.
struct TritonKernelEntry {
  std::string name;
  /// Paths relative to the export directory; empty cubin: none was found
  /// (`why` says why).
  std::string cubin, metadata, why;
  std::string symbol;
  std::vector<std::pair<std::string, std::int64_t>> constants;
  /// Launch arguments Triton specialised to a constant (`xnumel` when it is
  /// 1): every launch passes them, the compiled kernel takes none of them.
  std::vector<std::pair<std::string, std::int64_t>> launch_constants;
  std::optional<std::int64_t> num_warps, shared_memory_bytes;
  std::optional<ir::GridType> grid_type;
};

namespace triton_detail {

inline std::optional<ir::GridType> grid_type_named(std::string_view name) {
  for (std::size_t i = 0; i < ir::grid_type_count; ++i)
    if (ir::grid_type_names[i] == name) return static_cast<ir::GridType>(i);
  return std::nullopt;
}

/// The identity of a Triton kernel (run/kernel_identity.hpp): its
/// definition, the bytes of its cubin and metadata, and the launch
/// configuration kernels.json gives, so a re-export with another cubin or
/// block size is benchmarked again.
inline std::string loaded_identity(const KernelRequest& request, const TritonKernelEntry& e, std::string_view metadata,
                                   std::string_view cubin) {
  std::string config = e.symbol + "\ngrid " +
                       (e.grid_type ? std::string(ir::grid_type_names[static_cast<std::size_t>(*e.grid_type)]) : "-");
  for (const auto& [name, value] : e.constants) config += "\nconstant " + name + " " + std::to_string(value);
  for (const auto& [name, value] : e.launch_constants) config += "\nlaunch " + name + " " + std::to_string(value);
  const std::array<std::string_view, 3> contents{cubin, metadata, config};
  return loaded_kernel_identity(request, contents);
}

}  // namespace triton_detail

/// Reads kernels.json's text: `{"kernels": [{name, language, cubin, ...}]}`.
/// Entries of other languages are skipped. A malformed entry is a
/// diagnostic naming it and its key.
[[nodiscard]] inline Result<std::vector<TritonKernelEntry>> triton_entries_from_json(std::string_view text) {
  boost::system::error_code ec;
  boost::json::parse_options options;
  options.max_depth = 16;
  const boost::json::value doc = boost::json::parse(text, ec, {}, options);
  if (ec) return Diagnostic{"kernels.json: not JSON: " + ec.message()};
  const boost::json::object* root = doc.if_object();
  const boost::json::value* list = root ? root->if_contains("kernels") : nullptr;
  if (list == nullptr || !list->is_array()) return Diagnostic{"kernels.json: no 'kernels' array"};
  std::vector<TritonKernelEntry> out;
  for (std::size_t i = 0; i < list->get_array().size(); ++i) {
    const boost::json::object* o = list->get_array()[i].if_object();
    const std::string where = "kernels.json: entry " + std::to_string(i);
    if (o == nullptr) return Diagnostic{where + " is not an object"};
    auto string_of = [&](const char* key) -> std::optional<std::string> {
      const boost::json::value* v = o->if_contains(key);
      if (v == nullptr || !v->is_string()) return std::nullopt;
      return std::string(v->get_string());
    };
    auto integer_of = [&](const char* key, std::optional<std::int64_t>& to) -> Result<void> {
      const boost::json::value* v = o->if_contains(key);
      if (v == nullptr || v->is_null()) return {};
      if (!v->is_int64()) return Diagnostic{where + ": '" + key + "' is not an integer"};
      to = v->get_int64();
      return {};
    };
    if (string_of("language").value_or("triton") != "triton") continue;
    TritonKernelEntry e;
    const auto name = string_of("name");
    if (!name || name->empty()) return Diagnostic{where + " has no 'name'"};
    e.name = *name;
    const std::string who = where + " (" + ir::quote_for_diagnostic(e.name) + ")";
    e.cubin = string_of("cubin").value_or("");
    e.metadata = string_of("metadata").value_or("");
    e.why = string_of("why").value_or("");
    e.symbol = string_of("symbol").value_or(e.name);
    if (auto r = integer_of("num_warps", e.num_warps); !r) return r.error();
    if (auto r = integer_of("shared_memory_bytes", e.shared_memory_bytes); !r) return r.error();
    if (const auto grid = string_of("grid_type")) {
      e.grid_type = triton_detail::grid_type_named(*grid);
      if (!e.grid_type) return Diagnostic{who + ": unknown grid type '" + *grid + "'"};
    }
    if (const boost::json::value* c = o->if_contains("constants"); c != nullptr && c->is_object())
      for (const auto& [key, value] : c->get_object())
        if (value.is_int64()) e.constants.emplace_back(std::string(key), value.get_int64());
    if (const boost::json::value* c = o->if_contains("launch_constants"); c != nullptr) {
      if (!c->is_object()) return Diagnostic{who + ": 'launch_constants' is not an object"};
      for (const auto& [key, value] : c->get_object()) {
        if (!value.is_int64())
          return Diagnostic{who + ": launch constant " + ir::quote_for_diagnostic(std::string(key)) + " is not an integer"};
        e.launch_constants.emplace_back(std::string(key), value.get_int64());
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

/// The kernel provider (see the file comment). Kernels of other languages
/// are "not mine".
class TritonKernelProvider final : public KernelProvider {
 public:
  /// Reads `directory`/kernels.json; the cubins are loaded when a program
  /// asks for their kernels.
  [[nodiscard]] static Result<std::shared_ptr<TritonKernelProvider>> load(std::filesystem::path directory,
                                                                          std::shared_ptr<const CudaBackend> backend) {
    auto text = read_kernel_file(directory / "kernels.json", std::uint64_t{64} << 20);
    if (!text) return text.error();
    auto entries = triton_entries_from_json(*text);
    if (!entries) return Diagnostic{(directory / "kernels.json").string() + ": " + entries.error().message};
    return std::make_shared<TritonKernelProvider>(std::move(directory), *std::move(entries), std::move(backend));
  }

  TritonKernelProvider(std::filesystem::path directory, std::vector<TritonKernelEntry> entries,
                       std::shared_ptr<const CudaBackend> backend)
      : directory_(std::move(directory)), backend_(std::move(backend)) {
    for (TritonKernelEntry& e : entries) entries_.emplace(e.name, std::move(e));
  }

  [[nodiscard]] Result<ProvidedKernel> provide(const KernelRequest& request) const override {
    if (request.language != ir::KernelLanguage::triton) return ProvidedKernel{};
    const auto it = entries_.find(request.name);
    if (it == entries_.end())
      return Diagnostic{"kernels.json in " + directory_.string() + " has no entry for it"};
    const TritonKernelEntry& e = it->second;
    if (e.cubin.empty())
      return Diagnostic{"the export has no cubin for it" + (e.why.empty() ? std::string{} : " (" + e.why + ")")};
    if (!e.grid_type) return Diagnostic{"kernels.json gives it no grid_type"};
    std::lock_guard lock(mutex_);
    auto launcher = std::make_shared<Launcher>();
    if (auto r = launcher->load(*this, e, request); !r) return r.error();
    return ProvidedKernel{KernelFn{[launcher](std::span<void* const> args) { return (*launcher)(args); }},
                          std::move(launcher->identity)};
  }

  [[nodiscard]] std::string describe() const override { return "Triton cubins of " + directory_.string(); }

 private:
  /// Everything one launch needs; members in destruction order (the
  /// backend's context outlives the module, the module the kernel).
  struct Launcher {
    std::shared_ptr<const CudaBackend> backend;
    std::optional<drv::Module> module;
    std::optional<drv::TritonKernel> kernel;
    ir::GridType grid = ir::GridType::grid_1d;
    /// What names the kernel in the multi-kernel choice cache (`load`
    /// sets it, `provide` hands it on).
    std::string identity;
    std::vector<std::string> names;  // owns the NamedInt names below
    std::vector<NamedInt> block;
    struct Numel {
      std::size_t position = 0;
      std::string_view name;
      bool wide = false;  // i64, else i32
    };
    std::vector<Numel> numels;
    std::vector<std::size_t> dropped;  // signature positions of launch constants, ascending
    StreamSource stream;  // the thread's current stream of the backend, read per launch
    /// Names this launcher in the grid memo: unique for the process's life
    /// (an address could be reused by a later launcher of another config).
    std::uint64_t id = next_id();

    static std::uint64_t next_id() noexcept {
      static std::atomic<std::uint64_t> last{0};
      return last.fetch_add(1, std::memory_order_relaxed) + 1;
    }

    /// The grid is a pure function of the numel values (the grid type,
    /// block configuration and limits are the launcher's): the last one
    /// this thread computed for a launcher is kept, per thread so that
    /// threads launching at once share nothing, in a small table indexed
    /// by the launcher's id (a collision only recomputes).
    static constexpr std::size_t memo_numels = 4;
    struct GridMemo {
      std::uint64_t launcher = 0;  // 0: empty
      std::size_t count = 0;
      std::array<std::int64_t, memo_numels> numels{};
      Dim3 dims{};
    };
    static GridMemo& memo_of(std::uint64_t launcher) noexcept {
      thread_local std::array<GridMemo, 64> memos{};
      return memos[launcher % memos.size()];
    }
    /// Whether this thread's memo holds the grid of `given` (into `dims`).
    bool recall(std::span<const NamedInt> given, Dim3& dims) const noexcept {
      if (given.size() > memo_numels) return false;
      const GridMemo& m = memo_of(id);
      if (m.launcher != id || m.count != given.size()) return false;
      for (std::size_t i = 0; i < given.size(); ++i)
        if (m.numels[i] != given[i].value) return false;
      dims = m.dims;
      return true;
    }
    void remember(std::span<const NamedInt> given, Dim3 dims) const noexcept {
      if (given.size() > memo_numels) return;
      GridMemo& m = memo_of(id);
      m.launcher = id;
      m.count = given.size();
      for (std::size_t i = 0; i < given.size(); ++i) m.numels[i] = given[i].value;
      m.dims = dims;
    }

    Result<void> load(const TritonKernelProvider& p, const TritonKernelEntry& e, const KernelRequest& request) {
      const std::span<const ir::KernelParam> signature = request.signature;
      auto meta_path = kernel_file_path(p.directory_, e.metadata);
      if (!meta_path) return Diagnostic{"its metadata: " + meta_path.error().message};
      auto meta_text = read_kernel_file(*meta_path, std::uint64_t{16} << 20);
      if (!meta_text) return meta_text.error();
      auto meta = drv::triton_metadata_from_json(*meta_text);
      if (!meta) return Diagnostic{meta_path->string() + ": " + meta.error().message};
      // kernels.json and Triton's metadata come from one compile: a
      // difference means files of two exports were mixed.
      auto mismatch = [&](const std::string& what, const std::string& entry, const std::string& file) {
        return Diagnostic{"metadata mismatch: kernels.json says " + what + " " + entry + ", " + meta_path->string() +
                          " says " + file};
      };
      if (meta->name != e.symbol) return mismatch("symbol", "'" + e.symbol + "'", "'" + meta->name + "'");
      if (e.num_warps && *e.num_warps != meta->num_warps)
        return mismatch("num_warps", std::to_string(*e.num_warps), std::to_string(meta->num_warps));
      if (e.shared_memory_bytes && *e.shared_memory_bytes != meta->shared_bytes)
        return mismatch("shared memory", std::to_string(*e.shared_memory_bytes), std::to_string(meta->shared_bytes));
      auto cubin_path = kernel_file_path(p.directory_, e.cubin);
      if (!cubin_path) return Diagnostic{"its cubin: " + cubin_path.error().message};
      auto cubin = read_kernel_file(*cubin_path, max_kernel_binary_bytes);
      if (!cubin) return cubin.error();
      identity = triton_detail::loaded_identity(request, e, *meta_text, *cubin);
      backend = p.backend_;
      if (!backend) return Diagnostic{"no CUDA backend to load its cubin on"};
      stream = backend->stream_source();
      if (auto s = backend->make_current(); !s) return s.error();
      auto m = drv::Module::load(std::as_bytes(std::span<const char>(cubin->data(), cubin->size())),
                                 cubin_path->string());
      if (!m) return m.error();
      module.emplace(*std::move(m));
      auto k = drv::TritonKernel::load(*module, *std::move(meta));
      if (!k) return k.error();
      kernel.emplace(*std::move(k));
      // Arguments Triton specialised away are passed by the launch but not
      // to the cubin; a launch constant the signature lacks means the files
      // do not belong to this program.
      for (const auto& [name, value] : e.launch_constants) {
        std::size_t i = 0;
        while (i < signature.size() && signature[i].name != name) ++i;
        if (i == signature.size())
          return Diagnostic{"kernels.json's launch constant " + ir::quote_for_diagnostic(name) +
                            " is no parameter of the program's signature"};
        dropped.push_back(i);
      }
      std::sort(dropped.begin(), dropped.end());
      const std::size_t passed = signature.size() - dropped.size();
      if (passed > drv::TritonKernel::max_packed_arguments)
        return Diagnostic{std::to_string(passed) + " launch arguments, more than " +
                          std::to_string(drv::TritonKernel::max_packed_arguments)};
      if (const auto count = kernel->parameter_count(); count && (*count < passed || *count - passed > 2))
        return Diagnostic{"the cubin's kernel has " + std::to_string(*count) + " parameters but the program's signature " +
                          "has " + std::to_string(passed) + " it passes (and Triton adds at most 2 scratch pointers)"};
      grid = *e.grid_type;
      names.reserve(e.constants.size() + signature.size());
      for (const auto& [name, value] : e.constants) names.push_back(name);
      for (std::size_t i = 0; i < e.constants.size(); ++i) block.push_back(NamedInt{names[i], e.constants[i].second});
      for (std::size_t i = 0; i < signature.size(); ++i) {
        const ir::KernelParam& param = signature[i];
        if (param.name.find("numel") == std::string::npos) continue;
        if (param.type.pointer || (param.type.dtype != ir::DType::int32 && param.type.dtype != ir::DType::int64))
          return Diagnostic{"the numel parameter " + ir::quote_for_diagnostic(param.name) + " is " +
                            ir::to_string(param.type) + ", not i32 or i64"};
        names.push_back(param.name);  // reserved above: earlier views stay valid
        numels.push_back(Numel{i, names.back(), param.type.dtype == ir::DType::int64});
      }
      if (numels.size() > max_numels)
        return Diagnostic{std::to_string(numels.size()) + " numel parameters, more than " + std::to_string(max_numels)};
      return {};
    }

    static constexpr std::size_t max_numels = 16;

    Result<void> operator()(std::span<void* const> args) {
      // Most kernels have one to three numels: a small array to fill per
      // launch rather than the largest.
      constexpr std::size_t few = 4;
      if (numels.size() <= few) [[likely]]
        return launch<few>(args);
      return launch<max_numels>(args);
    }

    template <std::size_t Capacity>
    Result<void> launch(std::span<void* const> args) {
      std::array<NamedInt, Capacity> values;
      for (std::size_t i = 0; i < numels.size(); ++i) {
        const Numel& n = numels[i];
        if (n.position >= args.size()) return Diagnostic{"the launch passes too few arguments"};
        std::int64_t v = 0;
        if (n.wide) {
          std::memcpy(&v, args[n.position], sizeof v);
        } else {
          std::int32_t narrow = 0;
          std::memcpy(&narrow, args[n.position], sizeof narrow);
          v = narrow;
        }
        values[i] = NamedInt{n.name, v};
      }
      Dim3 dims{};
      const std::span<const NamedInt> given(values.data(), numels.size());
      if (!recall(given, dims)) {
        const GridOutcome g = compute_grid_dims(grid, given, block);
        if (!g.ok()) [[unlikely]]
          return Diagnostic{run::describe(grid, g.error)};
        dims = g.dims;
        remember(given, dims);
      }
      if (dropped.empty()) return kernel->launch_packed(dims, stream.current(), args);
      std::array<void*, drv::TritonKernel::max_packed_arguments> kept;
      std::size_t n = 0, next = 0;
      for (std::size_t i = 0; i < args.size(); ++i) {
        if (next < dropped.size() && dropped[next] == i) {
          ++next;
          continue;
        }
        if (n == kept.size()) return Diagnostic{"the launch passes too many arguments"};
        kept[n++] = args[i];
      }
      return kernel->launch_packed(dims, stream.current(), std::span<void* const>(kept.data(), n));
    }
  };

  std::filesystem::path directory_;
  std::shared_ptr<const CudaBackend> backend_;
  std::map<std::string, TritonKernelEntry, std::less<>> entries_;
  mutable std::mutex mutex_;
};

}  // namespace wrapir::run::cuda
