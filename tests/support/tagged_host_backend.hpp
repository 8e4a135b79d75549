// A device backend for tests without a GPU: its "device" memory is host
// memory tagged cuda:0, and it counts what it is asked (allocations, fills,
// copies and the bytes they move, synchronisations), so tests can check that
// every device allocation, copy and scalar read goes through the backend.
#pragma once

#include <wrapir/ir/device.hpp>
#include <wrapir/run/executor_backend.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace wrapir_test {

class TaggedHostBackend final : public wrapir::run::DeviceBackend {
 public:
  mutable std::atomic<int> allocations{0}, zeros{0}, copies{0}, syncs{0};
  mutable std::atomic<int> to_host{0};
  mutable std::atomic<std::int64_t> bytes_to_host{0}, bytes_to_device{0};
  bool fail_allocation = false;
  bool fail_copy = false;

  [[nodiscard]] wrapir::ir::DeviceType device_type() const noexcept override { return wrapir::ir::DeviceType::cuda; }
  [[nodiscard]] std::string describe() const override { return "tagged host memory"; }
  [[nodiscard]] wrapir::Result<std::shared_ptr<wrapir::run::Storage>> allocate(const wrapir::ir::Device& device,
                                                                               std::int64_t bytes) const override {
    if (fail_allocation) return wrapir::Diagnostic{"cuMemAlloc(" + std::to_string(bytes) + " bytes): out of memory"};
    ++allocations;
    auto s = std::make_shared<wrapir::run::Storage>();
    void* p = bytes == 0 ? nullptr : std::malloc(static_cast<std::size_t>(bytes));
    s->data = static_cast<std::byte*>(p);
    s->nbytes = bytes;
    s->device = device;
    s->owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    return s;
  }
  [[nodiscard]] wrapir::Result<void> zero(std::byte* data, std::int64_t bytes) const override {
    ++zeros;
    std::memset(data, 0, static_cast<std::size_t>(bytes));
    return {};
  }
  [[nodiscard]] wrapir::Result<void> copy(std::byte* dst, const wrapir::ir::Device& dd, const std::byte* src,
                                          const wrapir::ir::Device& sd, std::int64_t bytes) const override {
    if (fail_copy) return wrapir::Diagnostic{"cuMemcpy: an illegal memory access was encountered"};
    ++copies;
    if (dd.type == wrapir::ir::DeviceType::cpu) {
      ++to_host;
      bytes_to_host += bytes;
    } else if (sd.type == wrapir::ir::DeviceType::cpu) {
      bytes_to_device += bytes;
    }
    std::memmove(dst, src, static_cast<std::size_t>(bytes));
    return {};
  }
  [[nodiscard]] wrapir::Result<void> synchronize() const override {
    ++syncs;
    return {};
  }
};

}  // namespace wrapir_test
