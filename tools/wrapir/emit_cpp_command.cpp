// wrapir emit-cpp and run-cpp: the C++ emitter (include/wrapir/emit/cpp.hpp)
// and a small host for what it emits.
//
//   wrapir emit-cpp [--prefix P] [--no-input-asserts] [--no-verify]
//                   [--kernels DIR] [--embed-cubins] [--companion OUT.cu] FILE [-o OUT.cpp]
//       the program as a standalone C++ translation unit (stdout or OUT).
//       A CUDA program's Triton kernels are launched as DIR/kernels.json
//       says (DIR defaults to FILE's folder when that has a kernels.json);
//       --embed-cubins puts the cubins' bytes in the unit (and those of
//       PTX and cubin kernels, read from the files their definitions name,
//       relative to DIR). A program with CUDA C++ kernels needs
//       --companion: their source, for nvcc (cpp::cuda_companion).
//   wrapir emit-cpp --print-flags
//       two lines: the flags that compile an emitted CPU unit (Inductor's
//       kernel flags, torch's headers as -isystem, from WRAPIR_TORCH_INCLUDE
//       or the bridge's venv), then the flags that link it (libtorch_cpu's
//       Sleef math, as the CPU backend links kernels).
//   wrapir run-cpp FILE --library LIB.so --inputs IN.safetensors [--prefix P]
//                  [--device cpu|cuda] [--kernels DIR] [--repeat N] [--no-verify] [-o OUT.safetensors]
//       loads LIB.so (an emitted unit compiled as a shared object), serves
//       it the reference externs (run/cpu/externs.hpp) through the C table
//       (run/c_abi_adapter.hpp), calls `P_run` with the inputs of IN (in the
//       format of `wrapir run`: tensors named as the program's inputs,
//       scalars in the metadata) and writes the outputs as `wrapir run`
//       does. FILE, the program, names the inputs. With --device cuda
//       (a CUDA program): GPU 0 through the executor's CUDA backend, the
//       externs from its cuBLAS registry (run/cuda/cublas.hpp) and, for
//       the others, the CPU reference externs on host copies (where the
//       tool has the CPU backend: tools/wrapir/device_backends.hpp), the inputs
//       copied to the device, `P_init(DIR)` (the cubins' directory, as
//       emit-cpp) before the first run, the backend's stream passed to
//       `P_run`, and the outputs copied back to the host.

#include "cli.hpp"
#include "device_backends.hpp"
#include "file_io.hpp"
#include "tensor_inputs.hpp"

#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/cpp_cuda.hpp>
#include <wrapir/io/safetensors.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/run/c_abi.h>
#include <wrapir/run/c_abi_adapter.hpp>
#include <wrapir/run/executor_backend.hpp>
#include <wrapir/run/extern.hpp>
#ifdef WRAPIR_TOOL_CPU_BACKEND
#include <wrapir/run/cpu/externs.hpp>
#include <wrapir/run/cpu/kernel_cache.hpp>
#endif
#ifdef WRAPIR_TOOL_CUDA_BACKEND
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/cublas.hpp>
#include <wrapir/run/executor.hpp>
#endif

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <dlfcn.h>

namespace wrapir::cli {

namespace {

/// Takes `--name VALUE` out of `args` (at most once).
std::optional<std::string_view> take_option(std::vector<std::string_view>& args, std::string_view name,
                                            std::string_view command) {
  std::optional<std::string_view> value;
  for (std::size_t i = 0; i < args.size();) {
    if (args[i] != name) {
      ++i;
      continue;
    }
    if (value) throw Failure{std::string(command) + ": " + std::string(name) + " is given twice"};
    if (i + 1 == args.size()) throw Failure{std::string(command) + ": " + std::string(name) + " needs a value"};
    value = args[i + 1];
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
  }
  return value;
}

bool take_flag(std::vector<std::string_view>& args, std::string_view name) {
  const auto it = std::find(args.begin(), args.end(), name);
  if (it == args.end()) return false;
  args.erase(it);
  return true;
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) {
    if (!s.empty()) s += ' ';
    s += w;
  }
  return s;
}

int cmd_print_flags() {
#ifdef WRAPIR_TOOL_CPU_BACKEND
  const auto include = run::cpu::find_torch_include();
  if (!include)
    throw Failure{"emit-cpp --print-flags: torch's headers were not found; set WRAPIR_TORCH_INCLUDE to "
                  ".../site-packages/torch/include"};
  run::cpu::CompileOptions o = run::cpu::inductor_compile_options(*include);
  // Torch's headers are the system's to the unit: their warnings are not the
  // emitted code's.
  for (std::string& f : o.flags)
    if (f.rfind("-I", 0) == 0) f = "-isystem" + f.substr(2);
  std::printf("%s\n%s\n", join(o.flags).c_str(), join(o.link_flags).c_str());
  return 0;
#else
  throw Failure{"emit-cpp --print-flags: this wrapir was built without the CPU backend"};
#endif
}

/// Whether `p` or a subgraph declares a kernel in `language`.
bool has_language(const ir::Program& p, ir::KernelLanguage language) {
  for (const ir::KernelDecl& k : p.kernels)
    if (k.language == language) return true;
  for (const ir::Program& g : p.subgraphs)
    if (has_language(g, language)) return true;
  return false;
}

int cmd_emit_cpp(std::vector<std::string_view> args) {
  if (args.size() == 1 && args[0] == "--print-flags") return cmd_print_flags();
  cpp::CppOptions options;
  if (auto prefix = take_option(args, "--prefix", "emit-cpp")) options.entry_prefix = std::string(*prefix);
  options.input_asserts = !take_flag(args, "--no-input-asserts");
  const auto kernels = take_option(args, "--kernels", "emit-cpp");
  const bool embed = take_flag(args, "--embed-cubins");
  const auto companion = take_option(args, "--companion", "emit-cpp");
  const Arguments a("emit-cpp", args);
  a.allow_only({"-o", "--no-verify", "--max-input-bytes"});
  const ir::Program program = load_verified_program(a);
  // The launch configurations of a CUDA program's Triton kernels.
  std::filesystem::path dir = kernels ? std::filesystem::path(std::string(*kernels))
                                      : std::filesystem::path(std::string(a.file())).parent_path();
  if (dir.empty()) dir = ".";
  if (kernels || std::filesystem::exists(dir / "kernels.json")) {
    auto launches = cpp::cuda_kernels_from_export(dir, embed);
    if (!launches) throw Failure{"emit-cpp: " + one_line(launches.error().message, 600)};
    options.cuda_kernels = *std::move(launches);
  } else if (embed && !has_language(program, ir::KernelLanguage::ptx) && !has_language(program, ir::KernelLanguage::cubin)) {
    throw Failure{"emit-cpp: --embed-cubins needs the export's kernels.json (--kernels DIR)"};
  }
  if (embed) {  // PTX and cubin kernels: the files their definitions name, relative to DIR
    auto images = cpp::binary_kernel_images(program, dir);
    if (!images) throw Failure{"emit-cpp: " + one_line(images.error().message, 600)};
    for (cpp::CudaKernelLaunch& k : *images) options.cuda_kernels.push_back(std::move(k));
  }
  auto unit = cpp::to_cpp(program, options);
  if (!unit) throw Failure{"emit-cpp: " + one_line(unit.error().message, 600)};
  // CUDA C++ kernels live in a companion .cu that nvcc compiles.
  auto cu = cpp::cuda_companion(program, options);
  if (!cu) throw Failure{"emit-cpp: " + one_line(cu.error().message, 600)};
  if (!cu->empty() && !companion)
    throw Failure{"emit-cpp: the program has CUDA C++ kernels: name their companion source with --companion OUT.cu"};
  if (companion) write_output_file(*companion, *cu);
  if (auto path = a.value("-o")) write_output_file(*path, *unit);
  else std::fputs(unit->c_str(), stdout);
  return 0;
}

using RunFn = int (*)(const wrapir_extern_table*, const wrapir_value*, size_t, wrapir_value*, size_t, void*, char*, size_t);
using InfoFn = const wrapir_program_info* (*)();
using InitFn = int (*)(const char*, char*, size_t);

int cmd_run_cpp(std::vector<std::string_view> args) {
  const auto library = take_option(args, "--library", "run-cpp");
  const std::string prefix(take_option(args, "--prefix", "run-cpp").value_or("wrapir_model"));
  const std::string device(take_option(args, "--device", "run-cpp").value_or("cpu"));
  const auto kernels = take_option(args, "--kernels", "run-cpp");
  if (device != "cpu" && device != "cuda") throw Failure{"run-cpp: --device must be cpu or cuda"};
  if (kernels && device != "cuda") throw Failure{"run-cpp: --kernels DIR is for --device cuda"};
#ifndef WRAPIR_TOOL_CUDA_BACKEND
  if (device == "cuda") throw Failure{"run-cpp: this wrapir was built without the CUDA backend; use --device cpu"};
#endif
  const Arguments a("run-cpp", args);
  a.allow_only({"--inputs", "--repeat", "-o", "--no-verify", "--max-input-bytes"});
  if (!library) throw Failure{"run-cpp: --library LIB.so is required (the emitted unit, compiled)"};
  const auto inputs_path = a.value("--inputs");
  if (!inputs_path) throw Failure{"run-cpp: --inputs FILE is required"};
  std::size_t repeat = 0;
  if (auto r = a.value("--repeat")) {
    const auto [end, ec] = std::from_chars(r->data(), r->data() + r->size(), repeat);
    if (ec != std::errc{} || end != r->data() + r->size() || repeat > 1'000'000)
      throw Failure{"run-cpp: --repeat takes a count from 0 to 1000000"};
  }
  const ir::Program program = load_verified_program(a);
  auto file = io::read_safetensors(std::string(*inputs_path), {.max_bytes = max_input_bytes(a)});
  if (!file) throw Failure{one_line(file.error().message, 400)};

  // A path without a slash would be searched for: make it explicit.
  std::string lib(*library);
  if (lib.find('/') == std::string::npos) lib = "./" + lib;
  void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw Failure{"run-cpp: cannot load " + one_line(lib, 200) + ": " + one_line(dlerror(), 400)};
  auto run = reinterpret_cast<RunFn>(dlsym(handle, (prefix + "_run").c_str()));
  auto info = reinterpret_cast<InfoFn>(dlsym(handle, (prefix + "_info").c_str()));
  if (run == nullptr || info == nullptr) throw Failure{"run-cpp: " + one_line(lib, 200) + " has no " + prefix + "_run/_info"};
  const wrapir_program_info* pi = info();
  if (pi == nullptr || pi->abi_version != WRAPIR_C_ABI_VERSION || pi->input_count != program.inputs.size() ||
      pi->output_count != program.outputs.size())
    throw Failure{"run-cpp: the library's program does not match " + one_line(a.file(), 200)};
  const bool cuda = device == "cuda";
  if ((pi->device_type == WRAPIR_DEVICE_CUDA) != cuda)
    throw Failure{std::string("run-cpp: the library's program is a ") +
                  (pi->device_type == WRAPIR_DEVICE_CUDA ? "CUDA program: use --device cuda" : "CPU program: use --device cpu")};

  std::shared_ptr<run::ExternRegistry> registry = std::make_shared<run::ExternRegistry>();
  // Where tensors live: the host, or the CUDA backend's device and stream.
  std::shared_ptr<const run::DeviceBackend> backend;
  void* stream = nullptr;
  if (!cuda) {
#ifdef WRAPIR_TOOL_CPU_BACKEND
    if (auto r = run::cpu::register_reference_externs(*registry); !r) throw Failure{"run-cpp: " + r.error().message};
#endif
  } else {
#ifdef WRAPIR_TOOL_CUDA_BACKEND
    auto created = run::cuda::CudaBackend::create(0);
    if (!created) throw Failure{"run-cpp: --device cuda: " + one_line(created.error().message, 400)};
    registry = run::cuda::cublas_externs(*created);
#ifdef WRAPIR_TOOL_CPU_BACKEND
    // Externs with no CUDA implementation: the CPU reference on host copies.
    run::ExternRegistry reference;
    if (auto r = run::cpu::register_reference_externs(reference); !r) throw Failure{"run-cpp: " + r.error().message};
    add_host_reference_externs(*registry, reference, *created, "run-cpp");
#endif
    stream = (*created)->stream();
    backend = *created;
    auto init = reinterpret_cast<InitFn>(dlsym(handle, (prefix + "_init").c_str()));
    if (init == nullptr) throw Failure{"run-cpp: " + one_line(lib, 200) + " has no " + prefix + "_init"};
    std::filesystem::path dir = kernels ? std::filesystem::path(std::string(*kernels))
                                        : std::filesystem::path(std::string(a.file())).parent_path();
    if (dir.empty()) dir = ".";
    char message[1024] = {0};
    if (init(dir.c_str(), message, sizeof message) != WRAPIR_OK)
      throw Failure{"run-cpp: " + prefix + "_init: " + one_line(message, 600)};
#endif
  }
  run::c_abi::CExternTable externs(registry);
  const wrapir_extern_table table = externs.table();

  // Inputs are copied per run, as `wrapir run` does, laid out as declared.
  const ProgramInputs given = program_inputs(program, *file, *inputs_path, max_input_bytes(a));
  const std::vector<std::int64_t>& values = given.scalars;
  // An output may be a view of an input (the program borrows them): each
  // run's inputs live as long as the command.
  std::vector<std::vector<run::Value>> kept_inputs;
  auto call = [&](std::vector<run::Value>& outputs) {
    std::vector<run::Value>& in = kept_inputs.emplace_back();
    std::size_t ti = 0, si = 0;
    for (const ir::ProgramInput& x : program.inputs) {
      if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&x)) {
        const run::Tensor& t = given.tensors[ti++];
        const ir::Device want = program.buffer(*b).layout.device;
        if (backend && want.type == ir::DeviceType::cuda) {
          auto storage = backend->allocate(want, t.storage ? t.storage->nbytes : 0);
          if (!storage) throw Failure{"run-cpp: " + one_line(storage.error().message, 400)};
          run::Tensor c{*storage, t.dtype, t.sizes, t.strides, t.offset};
          if (t.storage && t.storage->nbytes > 0)
            if (auto r = backend->copy((*storage)->data, (*storage)->device, t.storage->data, t.device(), t.storage->nbytes); !r)
              throw Failure{"run-cpp: copying an input to the device: " + one_line(r.error().message, 400)};
          in.push_back(run::Value{std::move(c)});
          continue;
        }
        in.push_back(run::Value{storage_copy(t)});
      } else {
        in.push_back(run::Value{values[si++]});
      }
    }
    auto borrowed = run::c_abi::borrow(in);
    if (!borrowed) throw Failure{"run-cpp: " + borrowed.error().message};
    std::vector<wrapir_value> out(program.outputs.size());
    char message[2048] = {0};
    if (backend)  // the copies above are on the backend's stream; the program's work follows them there
      if (auto r = backend->synchronize(); !r) throw Failure{"run-cpp: " + one_line(r.error().message, 400)};
    const int rc = run(&table, borrowed->data(), borrowed->size(), out.data(), out.size(), stream, message, sizeof message);
    if (rc != WRAPIR_OK) throw Failure{"run-cpp: error " + std::to_string(rc) + ": " + one_line(message, 1200)};
    outputs.clear();
    for (wrapir_value& v : out) {
      auto adopted = run::c_abi::adopt(v);
      if (!adopted) throw Failure{"run-cpp: " + adopted.error().message};
      outputs.push_back(*std::move(adopted));
    }
    if (backend)  // an asynchronous failure shows here, not in a later call
      if (auto r = backend->synchronize(); !r) throw Failure{"run-cpp: " + one_line(r.error().message, 400)};
  };
  std::vector<run::Value> outputs;
  call(outputs);
  if (repeat > 0) {
    std::vector<double> samples;
    std::vector<run::Value> scratch;
    for (std::size_t i = 0; i < repeat; ++i) {
      const auto start = std::chrono::steady_clock::now();
      call(scratch);
      samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    double sum = 0;
    for (double s : samples) sum += s;
    std::printf("repeat=%zu mean_us=%.2f best_us=%.2f\n", repeat, sum / static_cast<double>(repeat),
                *std::min_element(samples.begin(), samples.end()));
  }

  io::TensorFile out;
  std::string scalar_json;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string name = "out" + std::to_string(i);
    if (const run::Tensor* t = outputs[i].get_if<run::Tensor>()) {
      if (t->device().type != ir::DeviceType::cpu) {
#ifdef WRAPIR_TOOL_CUDA_BACKEND
        run::Tensor h = run::empty_cpu(t->sizes, t->dtype).value();
        auto copied = wrapir::detail::catch_failure([&] {
          run::executor_detail::copy_tensor(backend.get(), h, *t);
          return 0;
        });
        if (!copied) throw Failure{"run-cpp: copying an output to the host: " + one_line(copied.error().message, 400)};
        if (auto r = backend->synchronize(); !r) throw Failure{"run-cpp: " + one_line(r.error().message, 400)};
        out.tensors.emplace_back(name, std::move(h));
#endif
      } else {
        out.tensors.emplace_back(name, *t);
      }
      if (!a.value("-o")) std::printf("%s: %s tensor\n", name.c_str(), std::string(ir::name(t->dtype)).c_str());
    } else if (const std::int64_t* n = outputs[i].get_if<std::int64_t>()) {
      scalar_json += (scalar_json.empty() ? "\"" : ", \"") + name + "\": " + std::to_string(*n);
      if (!a.value("-o")) std::printf("%s: %lld\n", name.c_str(), static_cast<long long>(*n));
    }
  }
  if (auto path = a.value("-o")) {
    if (!scalar_json.empty()) out.metadata["scalars"] = "{" + scalar_json + "}";
    auto bytes = io::to_safetensors(out);
    if (!bytes) throw Failure{"run-cpp: " + one_line(bytes.error().message, 400)};
    write_output_file(*path, *bytes);
  }
  // The library stays loaded: outputs released above may still run its code
  // (their release functions) until they are gone, which they are now.
  outputs.clear();
  return 0;
}

}  // namespace

int run_emit_cpp_command(std::string_view command, const std::vector<std::string_view>& args) {
  return command == "emit-cpp" ? cmd_emit_cpp(args) : cmd_run_cpp(args);
}

}  // namespace wrapir::cli
