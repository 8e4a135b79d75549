#pragma once
/// \file
/// Host externs on a device's tensors, through copies: the reference
/// implementation of an extern a device backend has no kernel for.
///
/// `host_staged(host_fn, backend)` wraps an extern written for CPU tensors
/// (`run/cpu/externs.hpp`: convolution, `topk`, `index_put_`, attention)
/// so that it accepts tensors on `backend`'s device, as PyTorch's CPU
/// fallback for MPS (`PYTORCH_ENABLE_MPS_FALLBACK`) does:
///
/// 1. every storage that a tensor argument (positional, keyword or inside
///    a list) has on the device is copied to the host once — the bytes its
///    tensors reach, not the whole storage, so an argument in a planned
///    arena does not copy the arena; tensors that share a storage share its
///    host copy, so aliasing is what the extern sees on the device;
/// 2. the host extern runs on the host copies (a call with no device tensor
///    is passed through unchanged: CPU inputs, CPU op);
/// 3. the bytes the extern changed (in-place fallbacks, `out=`) are copied
///    back, only the changed span of each storage; what it returns is moved
///    to the device of its inputs — a returned view of an argument becomes
///    the same view of the device storage, a new tensor a new device
///    allocation;
/// 4. the backend is synchronised before the call returns, so no copy
///    outlives the host buffers.
///
/// Correct but not fast: each call waits for the device and crosses the
/// bus twice. `HostStagingOptions::on_first_use` tells the user, once per
/// extern, that it runs this way. A staged extern synchronises the device,
/// so it cannot be captured in a CUDA graph.
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/run/executor_backend.hpp>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/tensor.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::run {

struct HostStagingOptions {
  /// Called the first time each extern runs staged (a notice for the user:
  /// `extern 'aten.topk.default' runs on the host`). May be empty.
  std::function<void(std::string_view op)> on_first_use{};
};

namespace detail {

/// One device storage's bytes on the host: `[first, first + host->nbytes)`
/// of the device storage, and what they were before the extern ran.
struct StagedStorage {
  std::shared_ptr<Storage> device;
  std::int64_t first = 0;  // byte offset in the device storage, a multiple of 16
  std::int64_t end = 0;    // one past the last byte any argument reaches
  std::shared_ptr<Storage> host{};
  std::vector<std::byte> before{};
};

class HostStaging {
 public:
  explicit HostStaging(const DeviceBackend& backend) : backend_(backend) {}

  /// Notes the bytes `t` reaches if it is on the backend's device.
  Result<void> note(const Tensor& t) {
    if (t.storage && t.storage->device.type == ir::DeviceType::cpu) host_inputs_.insert(t.storage.get());
    if (!on_device(t)) return {};
    auto reach = bytes_spanned(t.sizes, t.strides, t.offset, t.dtype);
    if (!reach) return std::move(reach).error();
    if (*reach == 0) return {};  // an empty tensor reaches no byte
    const std::int64_t begin = t.offset * ir::itemsize(t.dtype) / 16 * 16;
    if (*reach > t.storage->nbytes)
      return Diagnostic{"an argument reaches " + std::to_string(*reach) + " bytes of a " +
                        std::to_string(t.storage->nbytes) + "-byte device storage"};
    auto [it, fresh] = staged_.try_emplace(t.storage.get(), StagedStorage{t.storage, begin, *reach});
    if (!fresh) {
      it->second.first = std::min(it->second.first, begin);
      it->second.end = std::max(it->second.end, *reach);
    }
    return {};
  }
  Result<void> note(const Value& v) {
    if (const Tensor* t = v.get_if<Tensor>()) return note(*t);
    if (const ValueList* list = v.get_if<ValueList>())
      for (const Value& item : list->items)
        if (auto s = note(item); !s) return s;
    return {};
  }
  [[nodiscard]] bool empty() const noexcept { return staged_.empty(); }

  /// Copies every noted range to the host (the copies have finished when
  /// this returns: the backend's contract for copies to the host).
  Result<void> copy_in() {
    for (auto& [key, s] : staged_) {
      if (s.device->device.type != device_type()) continue;
      auto host = empty_strided_cpu({s.end - s.first}, {1}, ir::DType::uint8);
      if (!host) return std::move(host).error();
      s.host = host->storage;
      if (auto c = backend_.copy(s.host->data, host_device(), s.device->data + s.first, s.device->device,
                                 s.end - s.first);
          !c)
        return Diagnostic{"copying an argument to the host: " + c.error().message};
      s.before.assign(s.host->data, s.host->data + s.host->nbytes);
    }
    return {};
  }

  /// `v` with its device tensors replaced by views of their host copies.
  [[nodiscard]] Value to_host(const Value& v) const {
    if (const Tensor* t = v.get_if<Tensor>()) {
      const auto it = t->storage ? staged_.find(t->storage.get()) : staged_.end();
      if (it == staged_.end() || !it->second.host) return v;  // on the host, empty, or another device's
      const std::int64_t size = ir::itemsize(t->dtype);
      return Value{Tensor{it->second.host, t->dtype, t->sizes, t->strides, t->offset - it->second.first / size}};
    }
    if (const ValueList* list = v.get_if<ValueList>()) {
      ValueList out;
      out.items.reserve(list->items.size());
      for (const Value& item : list->items) out.items.push_back(to_host(item));
      return Value{std::move(out)};
    }
    return v;
  }

  /// Copies back the bytes the extern changed: from the first to the last
  /// changed byte of each staged storage.
  Result<void> copy_back() {
    for (auto& [key, s] : staged_) {
      if (!s.host) continue;
      const std::byte* now = s.host->data;
      const auto n = static_cast<std::size_t>(s.host->nbytes);
      std::size_t lo = 0;
      while (lo < n && now[lo] == s.before[lo]) ++lo;
      if (lo == n) continue;
      std::size_t hi = n;
      while (hi > lo && now[hi - 1] == s.before[hi - 1]) --hi;
      if (auto c = backend_.copy(s.device->data + s.first + static_cast<std::int64_t>(lo), s.device->device, now + lo,
                                 host_device(), static_cast<std::int64_t>(hi - lo));
          !c)
        return Diagnostic{"copying an updated argument back to the device: " + c.error().message};
      wrote_ = true;
    }
    return {};
  }

  /// `v` (the extern's result) on `device`: views of staged host copies
  /// become views of their device storages, other host tensors are copied
  /// to new device storages (tensors sharing a host storage share the new
  /// one).
  Result<Value> to_device(const Value& v, const ir::Device& device) {
    if (const Tensor* t = v.get_if<Tensor>()) {
      // Not on the host, or an argument that was on the host already: as it is.
      if (!t->storage || t->storage->device.type != ir::DeviceType::cpu || host_inputs_.contains(t->storage.get()))
        return v;
      const std::int64_t size = ir::itemsize(t->dtype);
      for (const auto& [key, s] : staged_)
        if (s.host == t->storage)
          return Value{Tensor{s.device, t->dtype, t->sizes, t->strides, t->offset + s.first / size}};
      auto& moved = results_[t->storage.get()];
      if (!moved) {
        auto allocated = backend_.allocate(device, t->storage->nbytes);
        if (!allocated) return Diagnostic{"allocating a result on the device: " + allocated.error().message};
        moved = *std::move(allocated);
        if (t->storage->nbytes > 0) {
          if (auto c = backend_.copy(moved->data, device, t->storage->data, host_device(), t->storage->nbytes); !c)
            return Diagnostic{"copying a result to the device: " + c.error().message};
          wrote_ = true;
        }
        keep_.push_back(t->storage);
      }
      return Value{Tensor{moved, t->dtype, t->sizes, t->strides, t->offset}};
    }
    if (const ValueList* list = v.get_if<ValueList>()) {
      ValueList out;
      out.items.reserve(list->items.size());
      for (const Value& item : list->items) {
        auto moved = to_device(item, device);
        if (!moved) return moved;
        out.items.push_back(*std::move(moved));
      }
      return Value{std::move(out)};
    }
    return v;
  }

  /// The device of the first staged storage: where results go.
  [[nodiscard]] ir::Device device() const { return staged_.begin()->second.device->device; }

  /// Waits for the copies to the device, which read host buffers this
  /// object owns.
  Result<void> finish() const {
    if (!wrote_) return {};
    if (auto s = backend_.synchronize(); !s) return Diagnostic{"waiting for the copies to the device: " + s.error().message};
    return {};
  }

 private:
  [[nodiscard]] ir::DeviceType device_type() const noexcept { return backend_.device_type(); }
  [[nodiscard]] bool on_device(const Tensor& t) const noexcept {
    return t.storage && t.storage->data != nullptr && t.storage->device.type == device_type() &&
           device_type() != ir::DeviceType::cpu;
  }
  static ir::Device host_device() noexcept { return ir::Device{ir::DeviceType::cpu, std::nullopt}; }

  const DeviceBackend& backend_;
  // Ordered by the device storage's address: deterministic copies.
  std::map<const Storage*, StagedStorage> staged_{};
  std::set<const Storage*> host_inputs_{};
  std::map<const Storage*, std::shared_ptr<Storage>> results_{};
  std::vector<std::shared_ptr<Storage>> keep_{};
  bool wrote_ = false;
};

}  // namespace detail

/// `host_fn`, an extern over CPU tensors, made to accept tensors on
/// `backend`'s device (see the file comment). `op` names it in notices.
[[nodiscard]] inline ExternFn host_staged(std::string op, ExternFn host_fn, DeviceBackendPtr backend,
                                          HostStagingOptions options = {}) {
  struct Shared {
    std::string op;
    ExternFn fn;
    DeviceBackendPtr backend;
    HostStagingOptions options;
    std::once_flag noticed;
  };
  auto shared = std::make_shared<Shared>();  // in place: a once_flag does not move
  shared->op = std::move(op);
  shared->fn = std::move(host_fn);
  shared->backend = std::move(backend);
  shared->options = std::move(options);
  return [shared](const ExternCall& call) -> Result<Value> {
    detail::HostStaging staging(*shared->backend);
    for (const Value& v : call.args)
      if (auto s = staging.note(v); !s) return std::move(s).error();
    for (const KeywordArg& k : call.kwargs)
      if (auto s = staging.note(k.value); !s) return Diagnostic{"keyword '" + k.name + "': " + s.error().message};
    if (staging.empty()) return shared->fn(call);  // nothing on the device: the host op as it is
    if (shared->options.on_first_use) std::call_once(shared->noticed, shared->options.on_first_use, shared->op);

    if (auto s = staging.copy_in(); !s) return std::move(s).error();
    std::vector<Value> args;
    args.reserve(call.args.size());
    for (const Value& v : call.args) args.push_back(staging.to_host(v));
    std::vector<KeywordArg> kwargs;
    kwargs.reserve(call.kwargs.size());
    for (const KeywordArg& k : call.kwargs) kwargs.push_back(KeywordArg{k.name, staging.to_host(k.value)});

    auto result = shared->fn(ExternCall{call.op, args, kwargs});
    if (!result) return result;
    if (auto s = staging.copy_back(); !s) return std::move(s).error();
    auto moved = staging.to_device(*result, staging.device());
    if (!moved) return moved;
    if (auto s = staging.finish(); !s) return std::move(s).error();
    return moved;
  };
}

/// Adds to `device_externs`, staged through `backend`, every extern of
/// `host_externs` it does not have yet (a device implementation, such as
/// cuBLAS's `extern_kernels.mm`, is kept). Returns the names added.
inline std::vector<std::string> add_host_staged_externs(ExternRegistry& device_externs,
                                                        const ExternRegistry& host_externs, DeviceBackendPtr backend,
                                                        const HostStagingOptions& options = {}) {
  std::vector<std::string> added;
  for (const std::string& name : host_externs.names()) {
    if (device_externs.find(name) != nullptr) continue;
    device_externs.replace(name, host_staged(name, *host_externs.find(name), backend, options));
    added.push_back(name);
  }
  return added;
}

}  // namespace wrapir::run
