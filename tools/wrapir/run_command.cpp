// wrapir run PROGRAM --inputs FILE [--device cpu|cuda] [--kernels DIR] [--graph] [--repeat N] [-o FILE]
//            [--debug-level 0-3] [--debug-kernels NAME,...]:
// runs a program on the executor (include/wrapir/run/executor.hpp), on the
// CPU or, with --device cuda, on GPU 0 through the CUDA backend
// (run/cuda/: the exporter's Triton cubins from DIR/kernels.json — DIR
// defaults to the program's folder — cuBLAS for the extern GEMMs, and,
// where the CPU backend is built in, the CPU reference externs on host
// copies for the externs CUDA has no implementation of). On
// CUDA the inputs are copied to the device (those the program has on the
// GPU) and the outputs back to the host; --repeat times each call from
// its start to its return (host time: launches are asynchronous) and to
// the end of its GPU work.
//
// The inputs are a safetensors file in the Inductor exporter's format: one
// tensor per tensor input, named as the program names the input buffer,
// stored dense and copied into the layout the program declares for the
// input (its strides and storage offset at the symbols the inputs bind),
// and the scalar inputs in the metadata entry `scalars` (a JSON object of
// names to integers, bound by name — the symbol's, or the graph input's
// `arg<i>_1` the exporter writes — or, when no entry is named so, by
// position: tensor_inputs.hpp says the rule). The outputs are written (with -o) as a
// safetensors file whose tensors are `out0`, `out1`, ... in output order,
// as the exporter writes eager's outputs; scalar outputs go to the metadata
// entry `scalars` under the same names. Without -o one line per output is
// printed. `--repeat N` runs the program N more times after the first run
// and prints the per-call time (mean and best) on stdout.
//
// `--debug-level N` (1-3) turns on the executor's intermediate-value debug
// printer (`ExecutorOptions::debug`, docs/runtime.md "Debug printing"):
// 1 saves every tensor argument of each kernel and extern call before and
// after it under tmp/jit_inductor/, 2 prints every argument's values,
// 3 prints the kernel names; `--debug-kernels A,B` wraps only those kernels
// (case-insensitive). Not with --graph.
//
// `--graph` (with --device cuda) runs in CUDA Graph mode
// (`ExecutorOptions::graph`, docs/runtime.md): the first call runs and
// captures the program, the repeats replay the graph (their inputs are the
// first call's device tensors refilled from the file before each call, so
// that the addresses stay and the graph replays); the outputs written
// are then the last repeat's (the replayed graph's), and a line
// `graph: captured=... replayed=... updated=...` says what happened. A
// program graph mode cannot capture is refused naming the line.
//
// Where the CPU backend is built in (wrapir::cpu, OpenBLAS), C++ kernels are
// compiled and cached (run/cpu/backend.hpp; torch's headers from
// WRAPIR_TORCH_INCLUDE or the bridge's venv) and externs are the reference
// ones; otherwise kernels come from `run::default_cpu_providers()` and
// externs from `run::default_cpu_externs()`. A program whose kernels no
// provider has fails to prepare with a diagnostic naming the kernel and its
// line.

#include "cli.hpp"
#include "device_backends.hpp"
#include "file_io.hpp"
#include "tensor_inputs.hpp"

#include <wrapir/io/safetensors.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/run/executor.hpp>
#ifdef WRAPIR_TOOL_CPU_BACKEND
#include <wrapir/run/cpu/backend.hpp>
#endif

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::cli {

namespace {


std::string describe(const run::Tensor& t) {
  std::string s(ir::name(t.dtype));
  s += '[';
  for (std::size_t i = 0; i < t.sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(t.sizes[i]);
  return s + ']';
}

/// Where tensors live and how they move: the host, or a device backend.
struct Placement {
  std::shared_ptr<const run::DeviceBackend> device;  // null: the CPU

  /// A fresh copy of `t` (a host tensor laid out as the program declares
  /// input `b`: tensor_inputs.hpp) where the program wants it: its whole
  /// storage, so that strides and storage offset stay.
  run::Tensor place(const run::Tensor& t, const ir::BufferDecl& b) const {
    if (!device || b.layout.device.type == ir::DeviceType::cpu) return storage_copy(t);
    auto storage = device->allocate(b.layout.device, t.storage ? t.storage->nbytes : 0);
    if (!storage) throw Failure{"run: " + one_line(storage.error().message, 400)};
    run::Tensor c{*storage, t.dtype, t.sizes, t.strides, t.offset};
    if (t.storage && t.storage->nbytes > 0)
      if (auto r = device->copy((*storage)->data, (*storage)->device, t.storage->data, t.device(), t.storage->nbytes);
          !r)
        throw Failure{"run: copying an input to the device: " + one_line(r.error().message, 400)};
    return c;
  }

  /// Copies `t`'s values again into `placed`, a result of `place(t, b)`
  /// (graph mode: the same addresses every call, so that calls replay).
  void refill(const run::Tensor& placed, const run::Tensor& t) const {
    if (!placed.storage || placed.storage->nbytes == 0 || !t.storage) return;
    if (placed.device().type == ir::DeviceType::cpu) {
      std::memcpy(placed.storage->data, t.storage->data, static_cast<std::size_t>(placed.storage->nbytes));
      return;
    }
    if (auto r = device->copy(placed.storage->data, placed.storage->device, t.storage->data, t.device(),
                              t.storage->nbytes);
        !r)
      throw Failure{"run: copying an input to the device: " + one_line(r.error().message, 400)};
  }

  /// `t` on the host, dense.
  run::Tensor to_host(const run::Tensor& t) const {
    if (t.device().type == ir::DeviceType::cpu) return t;
    run::Tensor h = run::empty_cpu(t.sizes, t.dtype).value();
    auto copied = wrapir::detail::catch_failure([&] {
      run::executor_detail::copy_tensor(device.get(), h, t);
      return 0;
    });
    if (!copied) throw Failure{"run: copying an output to the host: " + one_line(copied.error().message, 400)};
    return h;
  }

  void synchronize() const {
    if (device)
      if (auto r = device->synchronize(); !r) throw Failure{"run: " + one_line(r.error().message, 400)};
  }
};

int cmd_run(const Arguments& a) {
  a.allow_only({"--inputs", "--device", "--kernels", "--repeat", "-o", "--no-verify", "--max-input-bytes", "--graph",
                "--debug-level", "--debug-kernels"});
  const std::string_view device = a.value("--device").value_or("cpu");
  if (device != "cpu" && device != "cuda")
    throw Failure{"run: --device must be cpu or cuda, got '" + one_line(device, 40) + "'"};
  if (a.value("--kernels") && device != "cuda") throw Failure{"run: --kernels DIR is for --device cuda"};
  const bool graph = a.flag("--graph");
  if (graph && device != "cuda") throw Failure{"run: --graph (CUDA Graph mode) is for --device cuda"};
#ifndef WRAPIR_TOOL_CUDA_BACKEND
  if (device == "cuda")
    throw Failure{"run: this wrapir was built without the CUDA backend (no CUDA Toolkit headers at build time); "
                  "use --device cpu"};
#endif
  std::size_t repeat = 0;
  if (auto r = a.value("--repeat")) {
    const auto [end, ec] = std::from_chars(r->data(), r->data() + r->size(), repeat);
    if (ec != std::errc{} || end != r->data() + r->size() || repeat > 1'000'000)
      throw Failure{"run: --repeat takes a count from 0 to 1000000, got '" + one_line(*r, 40) + "'"};
  }
  run::DebugPrintOptions debug;
  if (auto level = a.value("--debug-level")) {
    const auto r = std::from_chars(level->data(), level->data() + level->size(), debug.level);
    if (r.ec != std::errc{} || r.ptr != level->data() + level->size() || debug.level < 0 || debug.level > 3)
      throw Failure{"run: --debug-level takes 0, 1, 2 or 3, not '" + one_line(*level, 40) + "'"};
  }
  if (auto names = a.value("--debug-kernels")) {
    std::string_view rest = *names;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      if (comma == 0 || comma + 1 == rest.size())
        throw Failure{"run: --debug-kernels has an empty name in '" + one_line(*names, 80) + "'"};
      debug.kernel_filter.emplace_back(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }
  if (debug.level != 0 && graph) throw Failure{"run: --debug-level and --graph cannot be used together"};
  const auto inputs_path = a.value("--inputs");
  if (!inputs_path) throw Failure{"run: --inputs FILE is required (a safetensors file of the program's inputs)"};

  const ir::Program program = load_verified_program(a);
  auto file = io::read_safetensors(std::string(*inputs_path), {.max_bytes = max_input_bytes(a)});
  if (!file) throw Failure{one_line(file.error().message, 400)};
  const ProgramInputs given = program_inputs(program, *file, *inputs_path, max_input_bytes(a));
  const std::vector<run::Tensor>& tensors = given.tensors;
  const std::vector<const ir::BufferDecl*>& tensor_decls = given.tensor_decls;
  const std::vector<std::int64_t>& values = given.scalars;

  run::ExecutorOptions options;
  Placement placement;
  if (device == "cpu") {
#ifdef WRAPIR_TOOL_CPU_BACKEND
    // Inductor's C++ kernels compiled and cached, the reference externs.
    auto backend = run::cpu::backend_options();
    if (!backend) throw Failure{"run: " + one_line(backend.error().message, 600)};
    options = *std::move(backend);
#endif
  } else {
#ifdef WRAPIR_TOOL_CUDA_BACKEND
    CudaExecutor cuda = cuda_executor(a, "run");
    options = std::move(cuda.options);
    placement.device = std::move(cuda.backend);
#endif
  }
  options.verify = !a.flag("--no-verify");
  options.graph.enabled = graph;
  options.debug = std::move(debug);  // printed to stdout; level 1 saves under tmp/jit_inductor
  auto executor = run::Executor::prepare(program, std::move(options));
  if (!executor) throw Failure{"run: " + one_line(executor.error().message, 600)};
  // Inputs are copied per run: a program that updates an input in place
  // must see the file's values on every call.
  auto fresh_inputs = [&] {
    std::vector<run::Tensor> copies;
    for (std::size_t i = 0; i < tensors.size(); ++i) copies.push_back(placement.place(tensors[i], *tensor_decls[i]));
    return copies;
  };
  std::vector<run::Tensor> first_inputs = fresh_inputs();
  auto outputs = executor->run(first_inputs, values);
  if (!outputs) throw Failure{"run: " + one_line(outputs.error().message, 600)};

  placement.synchronize();  // an asynchronous failure shows here, not in a later call

  if (repeat > 0) {
    std::vector<double> samples, done;
    samples.reserve(repeat);
    done.reserve(repeat);
    for (std::size_t i = 0; i < repeat; ++i) {
      std::vector<run::Tensor> in;
      if (!graph) {
        in = fresh_inputs();
      } else {
        // The first call's input tensors, refilled: the addresses the graph
        // was captured with, so that it replays (new ones would update it).
        for (std::size_t k = 0; k < first_inputs.size(); ++k) placement.refill(first_inputs[k], tensors[k]);
        in = first_inputs;
      }
      placement.synchronize();  // each call starts with the device idle
      const auto start = std::chrono::steady_clock::now();
      auto r = executor->run(in, values);
      const auto stop = std::chrono::steady_clock::now();
      if (!r) throw Failure{"run (repeat " + std::to_string(i) + "): " + one_line(r.error().message, 600)};
      placement.synchronize();
      // In graph mode the repeats replay the graph: write what they gave.
      if (graph && i + 1 == repeat) outputs = std::move(r);
      const auto finished = std::chrono::steady_clock::now();
      samples.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
      done.push_back(std::chrono::duration<double, std::micro>(finished - start).count());
    }
    auto mean = [&](const std::vector<double>& v) {
      double sum = 0;
      for (double x : v) sum += x;
      return sum / static_cast<double>(v.size());
    };
    std::printf("repeat=%zu mean_us=%.2f best_us=%.2f", repeat, mean(samples),
                *std::min_element(samples.begin(), samples.end()));
    if (placement.device)
      std::printf(" done_mean_us=%.2f done_best_us=%.2f", mean(done), *std::min_element(done.begin(), done.end()));
    std::printf("\n");
  }
  if (graph) {
    const run::GraphModeStats g = executor->graph_stats();
    std::printf("graph: captured=%llu replayed=%llu updated=%llu evicted=%llu\n",
                static_cast<unsigned long long>(g.captured), static_cast<unsigned long long>(g.replayed),
                static_cast<unsigned long long>(g.updated), static_cast<unsigned long long>(g.evicted));
  }

  io::TensorFile out;
  std::string scalar_json;
  for (std::size_t i = 0; i < outputs->size(); ++i) {
    const std::string name = "out" + std::to_string(i);
    const run::Value& v = (*outputs)[i];
    if (const run::Tensor* t = v.get_if<run::Tensor>()) {
      out.tensors.emplace_back(name, placement.to_host(*t));
      if (!a.value("-o")) std::printf("%s: %s\n", name.c_str(), describe(*t).c_str());
    } else if (const std::int64_t* n = v.get_if<std::int64_t>()) {
      scalar_json += (scalar_json.empty() ? "\"" : ", \"") + name + "\": " + std::to_string(*n);
      if (!a.value("-o")) std::printf("%s: %lld\n", name.c_str(), static_cast<long long>(*n));
    } else if (!a.value("-o")) {
      std::printf("%s: None\n", name.c_str());
    }
  }
  if (auto path = a.value("-o")) {
    if (!scalar_json.empty()) out.metadata["scalars"] = "{" + scalar_json + "}";
    auto bytes = io::to_safetensors(out);
    if (!bytes) throw Failure{"run: " + one_line(bytes.error().message, 400)};
    write_output_file(*path, *bytes);
  }
  return 0;
}

}  // namespace

int run_run_command(const std::vector<std::string_view>& args) {
  const Arguments a("run", args);
  return cmd_run(a);
}

}  // namespace wrapir::cli
