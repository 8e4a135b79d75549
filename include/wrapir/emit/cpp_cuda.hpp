#pragma once
/// \file
/// The launch configurations `emit::cpp` needs for a CUDA program, read from
/// the Inductor exporter's directory (`wrapir_inductor export --device
/// cuda`): DIR/kernels.json (per Triton kernel: the cubin, Triton's metadata
/// file, the constexpr block sizes, the grid type, the launch constants) and
/// each kernel's metadata file (its symbol, `num_warps`, `shared`, scratch
/// sizes). The same facts the executor's TritonKernelProvider
/// (run/cuda/triton_kernels.hpp) reads, without the CUDA driver: the emitter
/// runs where no GPU is.
///
/// ```
/// auto kernels = wrapir::cpp::cuda_kernels_from_export("export_dir");
/// if (!kernels) { report(kernels.error()); return; }
/// wrapir::cpp::CppOptions options;
/// options.cuda_kernels = *std::move(kernels);
/// auto unit = wrapir::cpp::to_cpp(program, options);
/// ```
///
/// Entries without a cubin (the exporter says `why`) are left out: a program
/// that calls one is refused by the emitter, naming it. Metadata that
/// disagrees with kernels.json (symbol, warps, shared memory) means files of
/// two exports were mixed and is a diagnostic, as is `num_ctas` other than 1.

#include <wrapir/detail/safe_file.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/detail/rename_identifier.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>

#include <boost/variant2/variant.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace wrapir::cpp {

namespace cuda_export_detail {

// An export's files and the binaries a program names are read only as
// regular files inside the directory given, never through a symbolic link
// at the file, with a size cap and without blocking on a FIFO
// (detail/safe_file.hpp): a program or kernels.json must not make the
// emitter copy other files into the unit it writes.
inline Result<std::string> read_text(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  return wrapir::detail::read_regular_file(path, {.max_bytes = max_bytes, .follow_symlinks = false, .limit_hint = {}});
}

inline Result<boost::json::object> parse_object(const std::string& text, const std::string& where) {
  boost::system::error_code ec;
  boost::json::parse_options options;
  options.max_depth = 16;
  boost::json::value doc = boost::json::parse(text, ec, {}, options);
  if (ec) return Diagnostic{where + ": not JSON: " + ec.message()};
  if (!doc.is_object()) return Diagnostic{where + ": not a JSON object"};
  return std::move(doc.get_object());
}

/// `key` of `o` as an integer in [low, high]; nothing when absent or null.
inline Result<std::optional<std::int64_t>> integer(const boost::json::object& o, const char* key, std::int64_t low,
                                                   std::int64_t high, const std::string& where) {
  const boost::json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return std::optional<std::int64_t>{};
  std::int64_t x = 0;
  if (v->is_int64()) x = v->get_int64();
  else if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(high)) x = static_cast<std::int64_t>(v->get_uint64());
  else return Diagnostic{where + ": '" + key + "' is not an integer"};
  if (x < low || x > high)
    return Diagnostic{where + ": '" + key + "' is " + std::to_string(x) + ", not in " + std::to_string(low) + ".." +
                      std::to_string(high)};
  return std::optional<std::int64_t>{x};
}


}  // namespace cuda_export_detail

/// The launch configurations of the Triton kernels exported to `directory`.
/// With `embed`, each cubin's bytes are read into `CudaKernelLaunch::image`
/// (the emitted unit then needs no files at run time).
[[nodiscard]] inline Result<std::vector<CudaKernelLaunch>> cuda_kernels_from_export(const std::filesystem::path& directory,
                                                                                   bool embed = false) {
  namespace d = cuda_export_detail;
  const std::filesystem::path list_path = directory / "kernels.json";
  auto text = d::read_text(list_path, std::uintmax_t{64} << 20);
  if (!text) return text.error();
  auto root = d::parse_object(*text, list_path.string());
  if (!root) return root.error();
  const boost::json::value* list = root->if_contains("kernels");
  if (list == nullptr || !list->is_array()) return Diagnostic{list_path.string() + ": no 'kernels' array"};
  std::vector<CudaKernelLaunch> out;
  for (std::size_t i = 0; i < list->get_array().size(); ++i) {
    const std::string where = list_path.string() + ": entry " + std::to_string(i);
    const boost::json::object* o = list->get_array()[i].if_object();
    if (o == nullptr) return Diagnostic{where + " is not an object"};
    auto string_of = [&](const char* key) -> std::string {
      const boost::json::value* v = o->if_contains(key);
      return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    const std::string language = string_of("language");
    if (!language.empty() && language != "triton") continue;
    CudaKernelLaunch k;
    k.name = string_of("name");
    if (k.name.empty()) return Diagnostic{where + " has no 'name'"};
    const std::string who = where + " ('" + k.name + "')";
    k.cubin = string_of("cubin");
    const std::string metadata = string_of("metadata");
    if (k.cubin.empty()) continue;  // the exporter found none; a call of it is refused by the emitter
    for (std::string_view file : {std::string_view(k.cubin), std::string_view(metadata)})
      if (auto inside = wrapir::detail::path_under(directory, file, "its file", "the export directory"); !inside)
        return Diagnostic{who + ": " + inside.error().message};
    const std::string grid = string_of("grid_type");
    bool known = false;
    for (std::size_t g = 0; g < ir::grid_type_count; ++g)
      if (ir::grid_type_names[g] == grid) {
        k.grid_type = static_cast<ir::GridType>(g);
        known = true;
      }
    if (!known) return Diagnostic{who + ": unknown or missing grid_type '" + grid + "'"};
    for (const char* key : {"constants", "launch_constants"}) {
      const boost::json::value* c = o->if_contains(key);
      if (c == nullptr) continue;
      if (!c->is_object()) return Diagnostic{who + ": '" + key + "' is not an object"};
      for (const auto& [name, value] : c->get_object()) {
        if (!value.is_int64()) {
          if (std::string(key) == "constants") continue;  // non-integer constexprs are not block sizes
          return Diagnostic{who + ": launch constant '" + std::string(name) + "' is not an integer"};
        }
        (std::string(key) == "constants" ? k.constants : k.launch_constants).emplace_back(std::string(name), value.get_int64());
      }
    }
    const std::filesystem::path meta_path = directory / metadata;
    auto meta_text = d::read_text(meta_path, std::uintmax_t{16} << 20);
    if (!meta_text) return meta_text.error();
    auto meta = d::parse_object(*meta_text, meta_path.string());
    if (!meta) return meta.error();
    const std::string mw = meta_path.string();
    const boost::json::value* symbol = meta->if_contains("name");
    if (symbol == nullptr || !symbol->is_string() || symbol->get_string().empty()) return Diagnostic{mw + ": no 'name'"};
    k.symbol = std::string(symbol->get_string());
    const std::string listed_symbol = string_of("symbol");
    if (!listed_symbol.empty() && listed_symbol != k.symbol)
      return Diagnostic{"metadata mismatch: kernels.json says symbol '" + listed_symbol + "', " + mw + " says '" + k.symbol + "'"};
    auto warps = d::integer(*meta, "num_warps", 1, 32, mw);
    auto shared = d::integer(*meta, "shared", 0, (std::int64_t{1} << 31) - 1, mw);
    auto ctas = d::integer(*meta, "num_ctas", 1, 1, mw);
    auto global = d::integer(*meta, "global_scratch_size", 0, std::int64_t{1} << 40, mw);
    auto profile = d::integer(*meta, "profile_scratch_size", 0, std::int64_t{1} << 40, mw);
    for (const auto* r : {&warps, &shared, &ctas, &global, &profile})
      if (!*r) return r->error();
    if (!*warps || !*shared) return Diagnostic{mw + ": 'num_warps' or 'shared' is missing"};
    k.num_warps = static_cast<int>(**warps);
    k.shared_bytes = static_cast<int>(**shared);
    k.global_scratch_bytes = global->value_or(0);
    k.profile_scratch_bytes = profile->value_or(0);
    auto listed_warps = d::integer(*o, "num_warps", 1, 32, who);
    auto listed_shared = d::integer(*o, "shared_memory_bytes", 0, (std::int64_t{1} << 31) - 1, who);
    if (!listed_warps) return listed_warps.error();
    if (!listed_shared) return listed_shared.error();
    if (*listed_warps && **listed_warps != k.num_warps)
      return Diagnostic{"metadata mismatch: kernels.json says num_warps " + std::to_string(**listed_warps) + ", " + mw +
                        " says " + std::to_string(k.num_warps)};
    if (*listed_shared && **listed_shared != k.shared_bytes)
      return Diagnostic{"metadata mismatch: kernels.json says shared memory " + std::to_string(**listed_shared) + ", " +
                        mw + " says " + std::to_string(k.shared_bytes)};
    if (embed) {
      auto image = d::read_text(directory / k.cubin, std::uintmax_t{256} << 20);
      if (!image) return image.error();
      k.image = *std::move(image);
    }
    out.push_back(std::move(k));
  }
  return out;
}

/// The bytes of every PTX and cubin kernel `program` (and its subgraphs)
/// defines, read from the files their definitions name (relative paths
/// inside `directory`: an absolute path, a `..`, a symbolic link at the
/// file or anything but a regular file is refused, so a program cannot
/// have other files copied into the unit), as `CppOptions::cuda_kernels`
/// entries that embed them in the unit (name, path, entry, image; launch
/// sizes come from the definitions' metadata).
[[nodiscard]] inline Result<std::vector<CudaKernelLaunch>> binary_kernel_images(const ir::Program& program,
                                                                                const std::filesystem::path& directory) {
  std::vector<CudaKernelLaunch> out;
  std::vector<const ir::Program*> graphs{&program};
  for (std::size_t g = 0; g < graphs.size(); ++g) {
    if (graphs.size() > 4096) return Diagnostic{"more than 4096 subgraphs"};
    for (const ir::Program& sub : graphs[g]->subgraphs) graphs.push_back(&sub);
    const ir::Program& p = *graphs[g];
    for (const ir::Line& line : p.body) {
      const auto* l = std::get_if<ir::KernelDefinition>(&line);
      if (l == nullptr || !p.contains(l->kernel)) continue;
      const ir::KernelDecl& k = p.kernels[l->kernel.index];
      const auto* binary = boost::variant2::get_if<ir::BinaryRef>(&l->source);
      if ((k.language != ir::KernelLanguage::ptx && k.language != ir::KernelLanguage::cubin) || binary == nullptr) continue;
      const CudaKernelLaunch* seen = nullptr;
      for (const CudaKernelLaunch& e : out)
        if (e.name == k.name) seen = &e;
      if (seen != nullptr) {  // one image a name, as CppOptions::cuda_kernels holds
        if (seen->cubin != binary->path)
          return Diagnostic{"kernel '" + k.name + "' is defined from two files, '" + seen->cubin + "' and '" +
                            binary->path + "': one name, one image"};
        continue;
      }
      auto inside = wrapir::detail::path_under(directory, binary->path, "its file", "the kernel directory");
      if (!inside)
        return Diagnostic{"kernel '" + k.name + "': " + inside.error().message +
                          ": only files under the kernel directory are embedded"};
      const std::filesystem::path& file = *inside;
      auto image = cuda_export_detail::read_text(file, std::uintmax_t{256} << 20);
      if (!image) return Diagnostic{"kernel '" + k.name + "': " + image.error().message};
      if (image->empty()) return Diagnostic{"kernel '" + k.name + "': " + file.string() + " is empty"};
      CudaKernelLaunch e;
      e.name = k.name;
      e.cubin = binary->path;
      e.symbol = binary->entry.empty() ? k.name : binary->entry;
      e.image = *std::move(image);
      out.push_back(std::move(e));
    }
  }
  return out;
}

/// The companion CUDA source of the unit `to_cpp(program, options)` emits:
/// every CUDA C++ kernel (`KernelLanguage::cuda`) of the program and its
/// subgraphs, each renamed to the unit's symbol for it
/// (`<prefix>_k<graph>_<name>`, in its own text only:
/// detail/rename_identifier.hpp) and otherwise verbatim. Empty
/// when there is none. Compile it with nvcc (`nvcc -c -Xcompiler -fPIC`)
/// and link it into the unit's library with the CUDA runtime.
///
/// Why nvcc and not NVRTC: Inductor's CUDA C++ kernels (its CUDA/CUTLASS
/// templates) are host functions, `extern "C" int name(args..., stream)`,
/// that launch their device code themselves with the runtime API; NVRTC
/// compiles device code only. AOTInductor likewise compiles them with nvcc
/// into objects linked with the model's library.
[[nodiscard]] inline Result<std::string> cuda_companion(const ir::Program& program, const CppOptions& options = {}) {
  if (!detail::is_c_identifier(options.entry_prefix))
    return Diagnostic{"the entry prefix " + ir::quote_for_diagnostic(options.entry_prefix) + " is not a C identifier"};
  return wrapir::detail::catch_failure([&] {
    detail::UnitTables t;
    t.prefix = options.entry_prefix;
    detail::number_graphs(t, program, 0);
    std::string out;
    for (std::size_t g = 0; g < t.graphs.size(); ++g) {
      const ir::Program& p = *t.graphs[g];
      for (std::size_t i = 0; i < p.body.size(); ++i) {
        const auto* l = std::get_if<ir::KernelDefinition>(&p.body[i]);
        if (l == nullptr) continue;
        if (!p.contains(l->kernel))
          detail::fail("line " + std::to_string(i) + " of graph '" + p.name + "': kernel #" +
                       std::to_string(l->kernel.index) + " is out of range");
        const ir::KernelDecl& k = p.kernels[l->kernel.index];
        if (k.language != ir::KernelLanguage::cuda) continue;
        const auto* text = boost::variant2::get_if<ir::SourceText>(&l->source);
        if (text == nullptr)
          detail::fail("line " + std::to_string(i) + " (KernelDefinition) of graph '" + p.name + "': kernel '" + k.name +
                       "' has no source text");
        if (!detail::is_c_identifier(k.name))
          detail::fail("line " + std::to_string(i) + " (KernelDefinition) of graph '" + p.name + "': kernel name '" +
                       k.name + "' is not a C identifier");
        if (out.empty()) {
          out += "// Generated by wrapir (emit::cpp): the CUDA C++ kernels of program ";
          detail::append_comment(out, program.name);
          out +=
              ", the companion of its C++ unit.\n"
              "// Compile with nvcc (-c -Xcompiler -fPIC) and link into the unit's library with the CUDA runtime.\n"
              "// Each kernel is a host function `extern \"C\" int NAME(args..., cudaStream_t)` returning 0 on\n"
              "// success, renamed to the unit's symbol for it.\n";
        }
        const std::string symbol = t.kernel_symbol(g, k.name);
        out += "\n// ---- kernel " + k.name + " (graph " + std::to_string(g) + ")\n";
        out += detail::rename_identifier(text->text, k.name, symbol);
        if (!text->text.empty() && text->text.back() != '\n') out += '\n';
      }
    }
    return out;
  });
}

}  // namespace wrapir::cpp
