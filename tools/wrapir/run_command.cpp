// wrapir run PROGRAM --inputs FILE [--device cpu] [--repeat N] [-o FILE]:
// runs a program on the CPU executor (include/wrapir/run/executor.hpp).
//
// The inputs are a safetensors file in the Inductor exporter's format: one
// tensor per tensor input, named as the program names the input buffer, and
// the scalar inputs in the metadata entry `scalars` (a JSON object of
// names to integers: a scalar input takes the entry named as its symbol,
// else the entry at its position among the scalar inputs — the exporter
// names them after the graph's inputs, `arg0_1`). The outputs are written (with -o) as a
// safetensors file whose tensors are `out0`, `out1`, ... in output order,
// as the exporter writes eager's outputs; scalar outputs go to the metadata
// entry `scalars` under the same names. Without -o one line per output is
// printed. `--repeat N` runs the program N more times after the first run
// and prints the per-call time (mean and best) on stdout.
//
// Where the CPU backend is built in (wrapir::cpu, OpenBLAS), C++ kernels are
// compiled and cached (run/cpu/backend.hpp; torch's headers from
// WRAPIR_TORCH_INCLUDE or the bridge's venv) and externs are the reference
// ones; otherwise kernels come from `run::default_cpu_providers()` and
// externs from `run::default_cpu_externs()`. A program whose kernels no
// provider has fails to prepare with a diagnostic naming the kernel and its
// line.

#include "cli.hpp"
#include "file_io.hpp"

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
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::cli {

namespace {

/// The metadata's scalars in file order (the exporter names them by graph
/// input, `arg0_1`, which need not be the symbol's name).
std::vector<std::pair<std::string, std::int64_t>> scalars_of(const io::TensorFile& file, std::string_view path) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  const auto it = file.metadata.find("scalars");
  if (it == file.metadata.end()) return out;
  boost::system::error_code ec;
  boost::json::parse_options options;
  options.max_depth = 4;
  const boost::json::value v = boost::json::parse(it->second, ec, {}, options);
  const boost::json::object* o = ec ? nullptr : v.if_object();
  if (o == nullptr) throw Failure{one_line(path, 200) + ": metadata 'scalars' is not a JSON object"};
  for (const auto& [k, x] : *o) {
    const std::int64_t* i = x.if_int64();
    if (i == nullptr)
      throw Failure{one_line(path, 200) + ": scalar '" + one_line(std::string_view(k), 60) + "' is not an integer"};
    out.emplace_back(std::string(k), *i);
  }
  return out;
}

std::string describe(const run::Tensor& t) {
  std::string s(ir::name(t.dtype));
  s += '[';
  for (std::size_t i = 0; i < t.sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(t.sizes[i]);
  return s + ']';
}

int cmd_run(const Arguments& a) {
  a.allow_only({"--inputs", "--device", "--repeat", "-o", "--no-verify", "--max-input-bytes"});
  const std::string_view device = a.value("--device").value_or("cpu");
  if (device == "cuda") throw Failure{"run: the CUDA executor is not available in this build; use --device cpu"};
  if (device != "cpu") throw Failure{"run: --device must be cpu or cuda, got '" + one_line(device, 40) + "'"};
  std::size_t repeat = 0;
  if (auto r = a.value("--repeat")) {
    const auto [end, ec] = std::from_chars(r->data(), r->data() + r->size(), repeat);
    if (ec != std::errc{} || end != r->data() + r->size() || repeat > 1'000'000)
      throw Failure{"run: --repeat takes a count from 0 to 1000000, got '" + one_line(*r, 40) + "'"};
  }
  const auto inputs_path = a.value("--inputs");
  if (!inputs_path) throw Failure{"run: --inputs FILE is required (a safetensors file of the program's inputs)"};

  const ir::Program program = load_verified_program(a);
  auto file = io::read_safetensors(std::string(*inputs_path), {.max_bytes = max_input_bytes(a)});
  if (!file) throw Failure{one_line(file.error().message, 400)};
  const auto scalars = scalars_of(*file, *inputs_path);

  std::vector<run::Tensor> tensors;
  std::vector<std::int64_t> values;
  for (const ir::ProgramInput& in : program.inputs) {
    if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&in)) {
      const std::string& name = program.buffer(*b).name;
      const run::Tensor* t = file->find(name);
      if (t == nullptr)
        throw Failure{one_line(*inputs_path, 200) + " has no tensor '" + one_line(name, 60) + "' for input " + name};
      tensors.push_back(*t);
    } else {
      const std::string_view name = boost::variant2::get<expr::Expr>(in).name();
      // By the symbol's name, else by position among the scalars.
      const auto it = std::find_if(scalars.begin(), scalars.end(), [&](const auto& e) { return e.first == name; });
      if (it != scalars.end()) values.push_back(it->second);
      else if (values.size() < scalars.size()) values.push_back(scalars[values.size()].second);
      else
        throw Failure{one_line(*inputs_path, 200) + " has no scalar '" + one_line(name, 60) +
                      "' (nor a scalar at its position) in its metadata 'scalars'"};
    }
  }

#ifdef WRAPIR_TOOL_CPU_BACKEND
  // Inductor's C++ kernels compiled and cached, the reference externs.
  auto backend = run::cpu::backend_options();
  if (!backend) throw Failure{"run: " + one_line(backend.error().message, 600)};
  run::ExecutorOptions options = *std::move(backend);
#else
  run::ExecutorOptions options;
#endif
  options.verify = !a.flag("--no-verify");
  auto executor = run::Executor::prepare(program, std::move(options));
  if (!executor) throw Failure{"run: " + one_line(executor.error().message, 600)};
  // Inputs are copied per run: a program that updates an input in place
  // must see the file's values on every call.
  auto fresh_inputs = [&] {
    std::vector<run::Tensor> copies;
    for (const run::Tensor& t : tensors) {
      run::Tensor c = run::empty_cpu(t.sizes, t.dtype).value();
      if (c.storage && c.storage->nbytes > 0) std::memcpy(c.data(), t.data(), static_cast<std::size_t>(c.storage->nbytes));
      copies.push_back(std::move(c));
    }
    return copies;
  };
  std::vector<run::Tensor> first_inputs = fresh_inputs();
  auto outputs = executor->run(first_inputs, values);
  if (!outputs) throw Failure{"run: " + one_line(outputs.error().message, 600)};

  if (repeat > 0) {
    std::vector<double> samples;
    samples.reserve(repeat);
    for (std::size_t i = 0; i < repeat; ++i) {
      std::vector<run::Tensor> in = fresh_inputs();
      const auto start = std::chrono::steady_clock::now();
      auto r = executor->run(in, values);
      const auto stop = std::chrono::steady_clock::now();
      if (!r) throw Failure{"run (repeat " + std::to_string(i) + "): " + one_line(r.error().message, 600)};
      samples.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
    }
    double sum = 0;
    for (double s : samples) sum += s;
    std::printf("repeat=%zu mean_us=%.2f best_us=%.2f\n", repeat, sum / static_cast<double>(repeat),
                *std::min_element(samples.begin(), samples.end()));
  }

  io::TensorFile out;
  std::string scalar_json;
  for (std::size_t i = 0; i < outputs->size(); ++i) {
    const std::string name = "out" + std::to_string(i);
    const run::Value& v = (*outputs)[i];
    if (const run::Tensor* t = v.get_if<run::Tensor>()) {
      out.tensors.emplace_back(name, *t);
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
