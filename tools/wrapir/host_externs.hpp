// The CPU reference externs on a device's tensors, through host copies
// (run/host_staged_externs.hpp), for `wrapir run` and `wrapir run-cpp` on
// CUDA: each extern the device registry lacks (convolution, topk,
// index_put_, attention) is added, and the first call of each says so on
// stderr, once.
#pragma once

#include <wrapir/ir/names.hpp>
#include <wrapir/run/executor_backend.hpp>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/host_staged_externs.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace wrapir::cli {

inline void add_host_reference_externs(run::ExternRegistry& device_externs, const run::ExternRegistry& reference,
                                       std::shared_ptr<const run::DeviceBackend> backend, const char* command) {
  run::add_host_staged_externs(device_externs, reference, std::move(backend), {[command](std::string_view op) {
    std::fprintf(stderr, "wrapir %s: note: extern %s has no CUDA implementation; it runs on the host, through copies\n",
                 command, ir::quote_for_diagnostic(op).c_str());
  }});
}

}  // namespace wrapir::cli
