// bridge.cpu_kernels: every C++ kernel of the real Inductor corpus compiles
// with the torch venv's prefix header, loads through the trampoline and (for
// add_relu, whose call is one kernel) computes what eager PyTorch computed.
//
// Exit 0: all passed; 1: a failure (printed); 77: skipped (no corpus or no
// torch headers), which ctest reports as skipped.
//   WRAPIR_BRIDGE_DIR   the exported corpus (default /tmp/bridge/c1)
//   WRAPIR_TORCH_INCLUDE  torch's include directory (default: the venv)
#include <wrapir/run/cpu/kernel_cache.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
namespace cpu = wrapir::run::cpu;
namespace json = boost::json;

namespace {

struct Definition {
  std::string name, source;
};

void collect_definitions(const json::value& body, std::vector<Definition>& out) {
  if (body.is_array()) {
    for (const json::value& v : body.as_array()) collect_definitions(v, out);
    return;
  }
  if (!body.is_object()) return;
  const json::object& o = body.as_object();
  if (const auto* kind = o.if_contains("kind"); kind != nullptr && kind->is_string() && kind->as_string() == "KernelDefinition") {
    const auto* src = o.if_contains("source");
    if (src != nullptr && src->is_object() && src->as_object().contains("text"))
      out.push_back({std::string(o.at("kernel").as_string()), std::string(src->as_object().at("text").as_string())});
  }
  for (const auto& [key, value] : o)
    if (value.is_array() || value.is_object()) collect_definitions(value, out);
}

/// The float32 tensor `name` of a safetensors file (8-byte header length,
/// JSON header, data).
std::vector<float> read_f32(const fs::path& file, const std::string& name) {
  auto bytes = wrapir::detail::read_regular_file(file);
  if (!bytes || bytes->size() < 8) return {};
  std::uint64_t n = 0;
  std::memcpy(&n, bytes->data(), 8);
  if (n > bytes->size() - 8) return {};
  const json::value header = json::parse(std::string_view(bytes->data() + 8, n));
  const json::object& entry = header.at(name).as_object();
  const auto& offsets = entry.at("data_offsets").as_array();
  const auto begin = static_cast<std::size_t>(offsets[0].to_number<std::int64_t>());
  const auto end = static_cast<std::size_t>(offsets[1].to_number<std::int64_t>());
  if (entry.at("dtype").as_string() != "F32" || end < begin || 8 + n + end > bytes->size()) return {};
  std::vector<float> out((end - begin) / 4);
  std::memcpy(out.data(), bytes->data() + 8 + n + begin, out.size() * 4);
  return out;
}

}  // namespace

int main() {
  const char* env = std::getenv("WRAPIR_BRIDGE_DIR");
  const fs::path corpus = env != nullptr && *env != '\0' ? env : "/tmp/bridge/c1";
  const auto torch_include = cpu::find_torch_include();
  std::error_code ec;
  if (!fs::is_directory(corpus, ec) || !torch_include) {
    std::printf("skipped: %s\n", !torch_include ? "no torch include directory (set WRAPIR_TORCH_INCLUDE or create the venv)"
                                                : "no exported corpus (set WRAPIR_BRIDGE_DIR)");
    return 77;
  }
  std::string scratch_template = (fs::temp_directory_path() / "wrapir-cpu-bridge.XXXXXX").string();
  if (::mkdtemp(scratch_template.data()) == nullptr) return 1;
  const fs::path scratch = scratch_template;
  cpu::KernelCache cache{scratch / "cache", cpu::inductor_compile_options(*torch_include)};
  int failures = 0, compiled = 0;
  std::vector<fs::path> programs;
  for (const auto& e : fs::directory_iterator(corpus))
    if (fs::is_regular_file(e.path() / "program.json")) programs.push_back(e.path());
  std::sort(programs.begin(), programs.end());
  for (const fs::path& model : programs) {
    auto text = wrapir::detail::read_regular_file(model / "program.json");
    if (!text) continue;
    const json::value doc = json::parse(*text);
    const json::object& program = doc.at("program").as_object();
    std::vector<Definition> definitions;
    collect_definitions(program.at("body"), definitions);
    for (const Definition& d : definitions) {
      std::vector<wrapir::ir::KernelParam> signature;
      for (const json::value& k : program.at("kernels").as_array()) {
        if (k.at("name").as_string() != d.name) continue;
        for (const json::value& p : k.at("signature").as_array()) {
          const auto type = wrapir::ir::parse_param_type(std::string(p.at("type").as_string()));
          if (!type) {
            std::printf("FAIL %s/%s: bad parameter type\n", model.filename().c_str(), d.name.c_str());
            ++failures;
          }
          signature.push_back({std::string(p.at("name").as_string()), type.value_or(wrapir::ir::ParamType{})});
        }
      }
      auto k = cache.load(d.name, d.source, signature);
      if (!k) {
        std::printf("FAIL %s/%s: %s\n", model.filename().c_str(), d.name.c_str(), k.error().message.c_str());
        ++failures;
        continue;
      }
      ++compiled;
      std::printf("ok   %s/%s (%zu parameters) identity %s\n", model.filename().c_str(), d.name.c_str(),
                  signature.size(), k->identity.hex().substr(0, 16).c_str());
      if (model.filename() == "add_relu" && d.name == "cpp_fused_add_relu_0") {
        std::vector<float> a = read_f32(model / "inputs.safetensors", "arg0_1");
        std::vector<float> b = read_f32(model / "inputs.safetensors", "arg1_1");
        const std::vector<float> expected = read_f32(model / "outputs.safetensors", "out0");
        std::vector<float> out(expected.size(), -1.0F);
        if (a.size() != expected.size() || b.size() != expected.size() || expected.empty()) {
          std::printf("FAIL add_relu: cannot read its tensors\n");
          ++failures;
          continue;
        }
        void* pa = a.data();
        void* pb = b.data();
        void* po = out.data();
        std::vector<void*> args{&pa, &pb, &po};
        if (auto r = k->fn(args); !r) {
          std::printf("FAIL add_relu: %s\n", r.error().message.c_str());
          ++failures;
          continue;
        }
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < out.size(); ++i)
          if (out[i] != expected[i]) ++wrong;
        std::printf("%s add_relu ran: %zu of %zu elements differ from eager\n", wrong == 0 ? "ok  " : "FAIL", wrong,
                    out.size());
        if (wrong != 0) ++failures;
      }
    }
  }
  const auto runs = cache.compiler_runs();
  std::printf("%d kernels compiled and loaded, %d failures, %llu compiler runs\n", compiled, failures,
              static_cast<unsigned long long>(runs));
  fs::remove_all(scratch, ec);
  return failures == 0 && compiled > 0 ? 0 : 1;
}
