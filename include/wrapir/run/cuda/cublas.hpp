#pragma once
/// \file
/// Inductor's extern GEMMs on CUDA — `extern_kernels.mm`, `.addmm`, `.bmm`
/// (the `out=` forms) — through cuBLAS, loaded at run time like the driver:
/// a binary with this header links no CUDA library and starts without a
/// GPU or without cuBLAS. `cublas_externs(backend)` answers with an extern
/// registry whatever happens; when cuBLAS cannot be loaded, each GEMM
/// fails when called with the reason (`cuBLAS is not available: tried
/// $WRAPIR_CUBLAS, libcublas.so.13: cannot open shared object file, ...`),
/// so programs without GEMMs still run.
///
/// Where cuBLAS is found: `$WRAPIR_CUBLAS` (a path), else `libcublas.so.13`,
/// `.12`, `.11` and `libcublas.so` through the loader's search (a PyTorch
/// install has it under `nvidia/cu13/lib` or `nvidia/cublas/lib`: put
/// that in `LD_LIBRARY_PATH` or name the file).
///
/// Semantics, as eager PyTorch with its defaults: float32 in float32 (no
/// TF32), float16 and bfloat16 accumulated in float32, float64 in float64
/// (`cublasGemmStridedBatchedEx`). Row-major operands are passed as the
/// transposes cuBLAS sees; an operand with unit stride in either matrix
/// dimension (a `.t()` view included) is passed as it is, any other layout
/// is refused with a diagnostic naming the argument (no hidden copies).
/// `out` must have a unit column stride. addmm's bias is broadcast into
/// `out` first (a copy for a full bias; for a row or column bias, a rank-1
/// GEMM with a vector of ones), then `out = beta*out + alpha*a@b`.
/// Launches go to the calling thread's current stream of the backend
/// (stream 0, or a side stream inside a stream context): the handle is
/// moved to it with `cublasSetStream` when it changes, under the handle's
/// lock.
///
/// Workspace: the handle gets a workspace of its own (32 MiB, what PyTorch
/// gives a Hopper handle) from the backend, set after the stream
/// (`cublasSetStream` resets it). cuBLAS then never allocates a workspace
/// inside a call, so its GEMMs can be captured into a CUDA graph (graph
/// mode), as PyTorch sets one for the same reason. Each stream the handle
/// runs on gets its own workspace (made when the handle first moves there),
/// as in PyTorch: GEMMs on two streams at once must not share one.
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/extern.hpp>

#include <cublas_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if !defined(_WIN32)
#include <dlfcn.h>
#endif

namespace wrapir::run::cuda {

/// The cuBLAS entry points used, from the library found at run time.
struct CublasLibrary {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  // Spelled out: C++ sees an overload set under this name.
  using GemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, long long, const void*, cudaDataType, int,
                                    long long, const void*, void*, cudaDataType, int, long long, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
  GemmFn gemm = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;  // may be absent
  decltype(&::cublasSetWorkspace_v2) set_workspace = nullptr;  // may be absent
  std::string path;
};

namespace cublas_detail {

/// Where cuBLAS is looked for, in order.
inline std::vector<std::string> library_candidates() {
  std::vector<std::string> names;
  if (const char* env = std::getenv("WRAPIR_CUBLAS"); env != nullptr && *env != '\0') names.emplace_back(env);
  for (const char* n : {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}) names.emplace_back(n);
  return names;
}

/// The first of `names` that loads and has the entry points; a new
/// library object each time (the caller keeps it).
inline Result<const CublasLibrary*> load_from(const std::vector<std::string>& names) {
#if defined(_WIN32)
  (void)names;
  return Diagnostic{"cuBLAS is not available: loading it is implemented for Linux only"};
#else
  std::string tried;
  for (const std::string& name : names) {
    void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* why = ::dlerror();
      tried += (tried.empty() ? "" : "; ") + (why != nullptr ? std::string(why) : name);
      continue;
    }
    auto lib = std::make_unique<CublasLibrary>();
    lib->path = name;
    auto sym = [&](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, symbol));
      return fn != nullptr;
    };
    if (!sym(lib->create, "cublasCreate_v2") || !sym(lib->destroy, "cublasDestroy_v2") ||
        !sym(lib->set_stream, "cublasSetStream_v2") || !sym(lib->gemm, "cublasGemmStridedBatchedEx")) {
      tried += (tried.empty() ? "" : "; ") + name + " lacks a cuBLAS v2 entry point";
      continue;  // the handle stays open: harmless, and closing could unload what others use
    }
    (void)sym(lib->status_string, "cublasGetStatusString");
    (void)sym(lib->set_workspace, "cublasSetWorkspace_v2");
    return lib.release();  // kept for the life of the process, as the library
  }
  return Diagnostic{"cuBLAS is not available: tried " + tried +
                    " (set WRAPIR_CUBLAS to the library's path, or add its folder to LD_LIBRARY_PATH)"};
#endif
}

}  // namespace cublas_detail

/// cuBLAS, loaded on first use and kept; the reason when it cannot be.
[[nodiscard]] inline Result<const CublasLibrary*> cublas_library() {
  static const Result<const CublasLibrary*> loaded =
      cublas_detail::load_from(cublas_detail::library_candidates());
  return loaded;
}

namespace cublas_detail {

inline std::string status_text(const CublasLibrary& lib, cublasStatus_t s) {
  std::string text = "cuBLAS status " + std::to_string(static_cast<int>(s));
  if (lib.status_string != nullptr)
    if (const char* t = lib.status_string(s)) text += " (" + std::string(t) + ")";
  return text;
}

/// A matrix operand as cuBLAS sees it, after the row-major-to-column-major
/// swap: `op` and leading dimension.
struct Operand {
  cublasOperation_t op = CUBLAS_OP_N;
  std::int64_t ld = 1;
};

/// A row-major [rows, cols] matrix with strides (s0, s1), as the column-
/// major transposed operand cuBLAS takes; nothing when no leading
/// dimension describes it.
inline std::optional<Operand> operand_of(std::int64_t rows, std::int64_t cols, std::int64_t s0, std::int64_t s1) {
  const std::int64_t rows1 = std::max<std::int64_t>(rows, 1), cols1 = std::max<std::int64_t>(cols, 1);
  // Row-major (unit column stride): cuBLAS sees its transpose untransposed.
  if ((cols <= 1 || s1 == 1) && (rows <= 1 || s0 >= cols1)) return Operand{CUBLAS_OP_N, rows <= 1 ? cols1 : s0};
  // Column-major (a .t() view): transposed.
  if ((rows <= 1 || s0 == 1) && (cols <= 1 || s1 >= rows1)) return Operand{CUBLAS_OP_T, cols <= 1 ? rows1 : s1};
  return std::nullopt;
}

struct GemmType {
  cudaDataType data{};
  cublasComputeType_t compute{};
  bool double_scalars = false;
};

inline std::optional<GemmType> gemm_type(ir::DType d) {
  switch (d) {
    case ir::DType::float32: return GemmType{CUDA_R_32F, CUBLAS_COMPUTE_32F, false};
    case ir::DType::float64: return GemmType{CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    case ir::DType::float16: return GemmType{CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    case ir::DType::bfloat16: return GemmType{CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
    default: return std::nullopt;
  }
}

/// The bits of 1 in a GEMM dtype (for the vector of ones).
inline std::uint64_t one_bits(ir::DType d) {
  switch (d) {
    case ir::DType::float32: return 0x3f800000u;
    case ir::DType::float64: return 0x3ff0000000000000u;
    case ir::DType::float16: return 0x3c00u;
    default: return 0x3f80u;  // bfloat16
  }
}

/// One cuBLAS handle on the backend's stream, and the vectors of ones.
/// (Any device backend: the tests drive it with host memory and a GEMM of
/// their own in place of cuBLAS's.)
class Gemm {
 public:
  Gemm(const CublasLibrary& lib, std::shared_ptr<const DeviceBackend> backend, ir::Device device, cublasHandle_t handle)
      : lib_(lib), backend_(std::move(backend)), device_(device), handle_(handle) {}
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  ~Gemm() { (void)lib_.destroy(handle_); }

  /// Puts the handle on `source`'s stream 0 with a workspace of
  /// `workspace_bytes` of the backend's memory (see the file comment), and
  /// moves it to the calling thread's current stream before each GEMM (the
  /// CUDA backend's streams), each stream with a workspace of its own.
  /// Without it the handle stays where it is, with no workspace.
  Result<void> follow(StreamSource source, std::int64_t workspace_bytes) {
    std::lock_guard lock(mutex_);
    follow_ = source;
    following_ = true;
    workspace_bytes_ = workspace_bytes;
    return move_to(source.base);
  }

  /// C[b] = alpha * A[b] @ B[b] + beta * C[b] for row-major views:
  /// a [m, k], b [k, n], c [m, n], each with a batch stride.
  Result<void> run(const Tensor& a, const Tensor& b, const Tensor& c, std::int64_t batch, std::int64_t m,
                   std::int64_t n, std::int64_t k, double alpha, double beta, const char* what) {
    const std::size_t r = a.dim();  // 2 (mm) or 3 (bmm)
    auto at = [&](const Tensor& t, std::size_t i) { return t.strides[t.dim() - r + i]; };
    const std::size_t o = r - 2;  // index of the first matrix dimension
    const auto gt = gemm_type(c.dtype);
    if (!gt) return Diagnostic{std::string(what) + ": dtype " + std::string(ir::name(c.dtype)) + " is not a GEMM type"};
    if (m == 0 || n == 0) return {};
    const auto opa = operand_of(m, k, at(a, o), at(a, o + 1));
    const auto opb = operand_of(k, n, at(b, o), at(b, o + 1));
    if (!opa || !opb)
      return Diagnostic{std::string(what) + ": argument '" + (opa ? "mat2" : "self") +
                        "' has a layout cuBLAS cannot take (no unit stride in its matrix dimensions)"};
    if (!(n <= 1 || at(c, o + 1) == 1) || !(m <= 1 || at(c, o) >= std::max<std::int64_t>(n, 1)))
      return Diagnostic{std::string(what) + ": out must be row-major with a unit column stride"};
    const std::int64_t ldc = m <= 1 ? std::max<std::int64_t>(n, 1) : at(c, o);
    constexpr std::int64_t int_max = std::numeric_limits<int>::max();
    for (std::int64_t v : {m, n, k, batch, opa->ld, opb->ld, ldc})
      if (v > int_max) return Diagnostic{std::string(what) + ": a dimension above 2^31-1, which this GEMM call cannot take"};
    const std::int64_t sa = r == 3 && batch > 1 ? a.strides[0] : 0, sb = r == 3 && batch > 1 ? b.strides[0] : 0,
                       sc = r == 3 && batch > 1 ? c.strides[0] : 0;
    double alpha_d = alpha, beta_d = beta;
    float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
    const void* pa = gt->double_scalars ? static_cast<const void*>(&alpha_d) : &alpha_f;
    const void* pb = gt->double_scalars ? static_cast<const void*>(&beta_d) : &beta_f;
    std::lock_guard lock(mutex_);
    if (following_) [[likely]]
      if (const CUstream now = follow_.current(); now != set_stream_)
        if (auto moved = move_to(now); !moved) return Diagnostic{std::string(what) + ": " + moved.error().message};
    // Row-major C = A @ B is column-major C^T = B^T @ A^T.
    const cublasStatus_t s =
        lib_.gemm(handle_, opb->op, opa->op, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), pa,
                  b.data(), gt->data, static_cast<int>(opb->ld), sb, a.data(), gt->data, static_cast<int>(opa->ld), sa,
                  pb, c.data(), gt->data, static_cast<int>(ldc), sc, static_cast<int>(batch), gt->compute,
                  CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
      return Diagnostic{std::string(what) + ": cublasGemmStridedBatchedEx(m=" + std::to_string(m) +
                        ", n=" + std::to_string(n) + ", k=" + std::to_string(k) + "): " + status_text(lib_, s)};
    return {};
  }

  /// A device vector of at least `count` ones of `dtype` (kept, grown).
  Result<Tensor> ones(ir::DType dtype, std::int64_t count) {
    std::lock_guard lock(mutex_);
    Tensor& t = ones_[dtype];
    if (t.storage && t.numel() >= count) return t;
    const std::int64_t n = std::max<std::int64_t>(count, 1024);
    const std::int64_t item = ir::itemsize(dtype);
    auto storage = backend_->allocate(device_, n * item);
    if (!storage) return storage.error();
    std::vector<std::byte> host(static_cast<std::size_t>(n * item));
    const std::uint64_t bits = one_bits(dtype);
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(host.data() + i * item, &bits, static_cast<std::size_t>(item));
    if (auto s = backend_->copy((*storage)->data, (*storage)->device, host.data(), ir::Device{}, n * item); !s)
      return s.error();
    // The host vector goes at the end of this scope: wait for the copy.
    if (auto s = backend_->synchronize(); !s) return s.error();
    t = Tensor{*std::move(storage), dtype, {n}, {1}, 0};
    return t;
  }

  [[nodiscard]] const DeviceBackend& backend() const noexcept { return *backend_; }

 private:
  /// The handle onto `stream`, with that stream's workspace (made on the
  /// first move there; `cublasSetStream` resets the handle's, so it is set
  /// after), under the lock. No workspace when cuBLAS has no
  /// cublasSetWorkspace.
  Result<void> move_to(CUstream stream) {
    if (const cublasStatus_t s = lib_.set_stream(handle_, stream); s != CUBLAS_STATUS_SUCCESS)
      return Diagnostic{"cublasSetStream: " + status_text(lib_, s)};
    set_stream_ = stream;
    if (lib_.set_workspace == nullptr || workspace_bytes_ <= 0) return {};
    std::shared_ptr<Storage>& w = workspaces_[stream];
    if (!w) {
      auto storage = backend_->allocate(device_, workspace_bytes_);
      if (!storage) return storage.error();
      w = *std::move(storage);
    }
    if (const cublasStatus_t s = lib_.set_workspace(handle_, w->data, static_cast<std::size_t>(workspace_bytes_));
        s != CUBLAS_STATUS_SUCCESS)
      return Diagnostic{"cublasSetWorkspace: " + status_text(lib_, s)};
    return {};
  }

  const CublasLibrary& lib_;
  std::shared_ptr<const DeviceBackend> backend_;
  ir::Device device_;
  cublasHandle_t handle_;
  std::mutex mutex_;
  std::map<ir::DType, Tensor> ones_;
  StreamSource follow_;
  bool following_ = false;
  CUstream set_stream_ = nullptr;
  std::int64_t workspace_bytes_ = 0;
  std::map<CUstream, std::shared_ptr<Storage>> workspaces_;  // by stream
};

inline Result<const Tensor*> tensor_arg(const ExternCall& call, std::size_t i, const char* name, const char* what) {
  const Value* v = call.arg(i, name);
  const Tensor* t = v != nullptr ? v->get_if<Tensor>() : nullptr;
  if (t == nullptr) return Diagnostic{std::string(what) + ": argument '" + name + "' must be a tensor"};
  if (t->device().type == ir::DeviceType::cpu)
    return Diagnostic{std::string(what) + ": argument '" + name + "' is on the CPU, not on the GPU"};
  return t;
}

inline Result<double> number_kwarg(const ExternCall& call, const char* name, double fallback, const char* what) {
  const Value* v = call.kwarg(name);
  if (v == nullptr || v->holds<ir::None>()) return fallback;
  if (const std::int64_t* i = v->get_if<std::int64_t>()) return static_cast<double>(*i);
  if (const double* d = v->get_if<double>()) return *d;
  if (const bool* b = v->get_if<bool>()) return *b ? 1.0 : 0.0;
  return Diagnostic{std::string(what) + ": '" + name + "' must be a number"};
}

/// The GEMM of mm/addmm/bmm after their arguments are checked.
inline Result<Value> gemm_call(Gemm& g, const ExternCall& call, bool batched, bool bias) {
  const char* what = batched ? "extern_kernels.bmm" : bias ? "extern_kernels.addmm" : "extern_kernels.mm";
  const std::size_t first = bias ? 1 : 0;
  auto a = tensor_arg(call, first, "self", what);
  if (!a) return a.error();
  auto b = tensor_arg(call, first + 1, "mat2", what);
  if (!b) return b.error();
  const Value* outv = call.kwarg("out");
  const Tensor* out = outv != nullptr ? outv->get_if<Tensor>() : nullptr;
  if (out == nullptr) return Diagnostic{std::string(what) + ": needs the tensor 'out='"};
  if (out->device().type == ir::DeviceType::cpu) return Diagnostic{std::string(what) + ": out is on the CPU, not on the GPU"};
  const std::size_t rank = batched ? 3 : 2;
  const Tensor& A = **a;
  const Tensor& B = **b;
  if (A.dim() != rank || B.dim() != rank || out->dim() != rank)
    return Diagnostic{std::string(what) + ": expects " + std::to_string(rank) + "-D self, mat2 and out"};
  if (A.dtype != B.dtype || A.dtype != out->dtype)
    return Diagnostic{std::string(what) + ": self, mat2 and out must have one dtype (" + std::string(ir::name(A.dtype)) +
                      ", " + std::string(ir::name(B.dtype)) + ", " + std::string(ir::name(out->dtype)) + ")"};
  const std::size_t o = rank - 2;
  const std::int64_t batch = batched ? A.sizes[0] : 1;
  const std::int64_t m = A.sizes[o], k = A.sizes[o + 1], n = B.sizes[o + 1];
  if (B.sizes[o] != k || out->sizes[o] != m || out->sizes[o + 1] != n ||
      (batched && (B.sizes[0] != batch || out->sizes[0] != batch)))
    return Diagnostic{std::string(what) + ": shapes do not multiply"};
  auto alpha = number_kwarg(call, "alpha", 1.0, what);
  if (!alpha) return alpha.error();
  auto beta = number_kwarg(call, "beta", 1.0, what);
  if (!beta) return beta.error();
  double gemm_beta = 0.0;
  if (bias && *beta != 0.0) {
    auto c = tensor_arg(call, 0, "input", what);
    if (!c) return c.error();
    const Tensor& bias_t = **c;
    if (bias_t.dtype != out->dtype) return Diagnostic{std::string(what) + ": the bias has another dtype than out"};
    // The bias as a broadcast [rows, cols] matrix.
    std::int64_t rows = 1, cols = 1, s0 = 0, s1 = 0;
    if (bias_t.dim() == 1) {
      cols = bias_t.sizes[0];
      s1 = bias_t.strides[0];
    } else if (bias_t.dim() == 2) {
      rows = bias_t.sizes[0];
      cols = bias_t.sizes[1];
      s0 = bias_t.strides[0];
      s1 = bias_t.strides[1];
    } else {
      return Diagnostic{std::string(what) + ": the bias must be 1-D or 2-D"};
    }
    if ((rows != 1 && rows != m) || (cols != 1 && cols != n))
      return Diagnostic{std::string(what) + ": the bias does not broadcast to [" + std::to_string(m) + ", " +
                        std::to_string(n) + "]"};
    if (rows == m && cols == n && m > 1 && n > 1) {
      // A full bias: out = bias @ I would cost a GEMM; a copy is the same.
      if (!(bias_t.is_contiguous() && out->is_contiguous()))
        return Diagnostic{std::string(what) + ": a full bias and out must both be contiguous"};
      if (auto s = g.backend().copy(static_cast<std::byte*>(out->data()), out->device(),
                                    static_cast<const std::byte*>(bias_t.data()), bias_t.device(),
                                    m * n * ir::itemsize(out->dtype));
          !s)
        return s.error();
    } else {
      // out = column @ row with a vector of ones on the broadcast side.
      auto ones = g.ones(out->dtype, std::max(m, n));
      if (!ones) return ones.error();
      Tensor col = *ones, row = *ones;
      col.sizes = {m, 1};
      col.strides = {1, 1};
      row.sizes = {1, n};
      row.strides = {n, 1};
      if (rows == m && m > 1) col = Tensor{bias_t.storage, bias_t.dtype, {m, 1}, {s0, 1}, bias_t.offset};
      if (cols == n && n > 1) row = Tensor{bias_t.storage, bias_t.dtype, {1, n}, {n, s1}, bias_t.offset};
      if (rows == 1 && cols == 1) row = Tensor{bias_t.storage, bias_t.dtype, {1, 1}, {1, 1}, bias_t.offset};
      if (auto s = g.run(col, row, *out, 1, m, n, 1, 1.0, 0.0, what); !s) return s.error();
    }
    gemm_beta = *beta;
  }
  if (auto s = g.run(A, B, *out, batch, m, n, k, *alpha, gemm_beta, what); !s) return s.error();
  return Value{};
}

}  // namespace cublas_detail

/// The registry of GEMM externs on `backend`'s stream (see the file
/// comment); never fails: without cuBLAS each extern reports why when
/// called.
[[nodiscard]] inline std::shared_ptr<ExternRegistry> cublas_externs(std::shared_ptr<const CudaBackend> backend) {
  auto registry = std::make_shared<ExternRegistry>();
  std::shared_ptr<cublas_detail::Gemm> gemm;
  std::string unavailable;
  if (auto lib = cublas_library(); !lib) {
    unavailable = lib.error().message;
  } else if (auto s = backend->make_current(); !s) {
    unavailable = s.error().message;
  } else {
    cublasHandle_t handle = nullptr;
    if (const cublasStatus_t st = (*lib)->create(&handle); st != CUBLAS_STATUS_SUCCESS) {
      unavailable = "cublasCreate: " + cublas_detail::status_text(**lib, st);
    } else {
      gemm = std::make_shared<cublas_detail::Gemm>(**lib, backend, ir::Device{ir::DeviceType::cuda, backend->ordinal()},
                                                   handle);
      if (auto followed = gemm->follow(backend->stream_source(), std::int64_t{32} << 20); !followed)
        unavailable = followed.error().message;
    }
  }
  auto add = [&](const char* name, bool batched, bool bias) {
    if (!unavailable.empty()) {
      (void)registry->add(name, [why = unavailable](const ExternCall&) -> Result<Value> { return Diagnostic{why}; });
      return;
    }
    (void)registry->add(name, [gemm, batched, bias](const ExternCall& call) {
      return cublas_detail::gemm_call(*gemm, call, batched, bias);
    });
  };
  add("extern_kernels.mm", false, false);
  add("extern_kernels.addmm", false, true);
  add("extern_kernels.bmm", true, false);
  return registry;
}

}  // namespace wrapir::run::cuda
