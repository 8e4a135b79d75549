#pragma once
/// \file
/// The C++ emitter's assembly of a whole translation unit (emit/cpp.hpp):
/// the embedded C interface, the prefix header, the runtime, the kernels,
/// one function per graph and the C entry points.

#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/detail/cpp_abi_text.hpp>
#include <wrapir/emit/detail/cpp_cuda_runtime.hpp>
#include <wrapir/emit/detail/cpp_graph.hpp>
#include <wrapir/emit/detail/cpp_runtime.hpp>
#include <wrapir/emit/detail/cpp_values.hpp>
#include <wrapir/emit/detail/rename_identifier.hpp>
#include <wrapir/emit/emit.hpp>

#include <boost/variant2/variant.hpp>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace wrapir::cpp {

namespace detail {

static_assert(emit_detail::handles_all<GraphWriter>(ir::LineKinds{}),
              "emit::cpp's GraphWriter must handle every line kind (emit/detail/cpp_graph.hpp)");

inline bool is_c_identifier(std::string_view s) {
  if (s.empty() || s.size() > 200 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (const char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return s.find("__") == std::string_view::npos && !(s[0] == '_' && s.size() > 1 && s[1] >= 'A' && s[1] <= 'Z');
}

/// Numbers the program (0) and every subgraph, depth first.
inline void number_graphs(UnitTables& t, const ir::Program& p, std::size_t depth) {
  if (depth > 64) fail("subgraphs are nested more than 64 deep");
  if (!t.graph_ids.emplace(&p, t.graphs.size()).second) return;
  t.graphs.push_back(&p);
  for (const ir::Program& g : p.subgraphs) number_graphs(t, g, depth + 1);
}

/// A PTX or cubin kernel: a slot in the unit's kernel table, loaded on its
/// first launch from the file its definition names (relative to the
/// directory `<prefix>_init` gives, or absolute), or from the bytes
/// CppOptions::cuda_kernels gives under its name (embedded); launched with
/// 32 x num_warps threads a block and the metadata's shared memory.
inline void write_binary_kernel(UnitTables& t, std::size_t graph, const ir::KernelDecl& k, const ir::KernelDefinition& l) {
  const char* language = k.language == ir::KernelLanguage::ptx ? "PTX" : "cubin";
  const ir::BinaryRef* binary = boost::variant2::get_if<ir::BinaryRef>(&l.source);
  if (binary == nullptr) fail("kernel '" + k.name + "' is a " + language + " kernel without a binary (path and entry)");
  CudaKernelLaunch launch;
  launch.name = k.name;
  launch.cubin = binary->path;
  launch.symbol = binary->entry.empty() ? k.name : binary->entry;
  const ir::KernelMetadata& m = *l.metadata;
  if (!m.num_warps)
    fail("kernel '" + k.name + "' (" + language +
         ") has no num_warps in its metadata: a launch's block is 32 x num_warps threads");
  if (*m.num_warps < 1 || *m.num_warps > 32)
    fail("kernel '" + k.name + "': num_warps " + std::to_string(*m.num_warps) + " is outside 1..32");
  const std::int64_t shared = m.shared_memory_bytes.value_or(0);
  if (shared < 0 || shared > (std::int64_t{1} << 31) - 1)
    fail("kernel '" + k.name + "': shared memory " + std::to_string(shared) + " is outside 0..2^31-1");
  launch.num_warps = static_cast<int>(*m.num_warps);
  launch.shared_bytes = static_cast<int>(shared);
  if (const auto it = t.cuda_launches.find(k.name); it != t.cuda_launches.end()) {
    // Embedded bytes are of one file: never another definition's.
    if (!it->second->cubin.empty() && it->second->cubin != binary->path)
      fail("kernel '" + k.name + "': CppOptions::cuda_kernels embeds the bytes of '" + it->second->cubin +
           "', its definition names '" + binary->path + "'");
    launch.image = it->second->image;
  }
  if (launch.cubin.empty() && launch.image.empty())
    fail("kernel '" + k.name + "' (" + language + ") has no path and no embedded image");
  t.cuda_slots.emplace(std::pair{graph, l.kernel.index}, t.cuda_table.size());
  t.binary_launches.push_back(std::move(launch));
  t.cuda_table.push_back(&t.binary_launches.back());
}

/// The kernel's own source with its entry `kernel` renamed to the unit's
/// symbol for it (in its text only, not in what it includes:
/// detail/rename_identifier.hpp), with the warnings Inductor's generated
/// code trips turned off for it alone.
inline void write_kernel(std::string& out, UnitTables& t, std::size_t graph, const ir::Program& p,
                         const ir::KernelDefinition& l) {
  if (!p.contains(l.kernel)) fail("kernel #" + std::to_string(l.kernel.index) + " is out of range");
  const ir::KernelDecl& k = p.kernels[l.kernel.index];
  if (k.language == ir::KernelLanguage::triton) {
    // Loaded from its cubin at run time: a slot in the unit's kernel table.
    const auto it = t.cuda_launches.find(k.name);
    if (it == t.cuda_launches.end())
      fail("Triton kernel '" + k.name +
           "' has no launch configuration (CppOptions::cuda_kernels; `wrapir emit-cpp --kernels DIR` reads the "
           "export's kernels.json)");
    t.cuda_slots.emplace(std::pair{graph, l.kernel.index}, t.cuda_table.size());
    t.cuda_table.push_back(it->second);
    return;
  }
  if (k.language == ir::KernelLanguage::ptx || k.language == ir::KernelLanguage::cubin) {
    write_binary_kernel(t, graph, k, l);
    return;
  }
  if (k.language == ir::KernelLanguage::cuda) {
    // Compiled by nvcc from the companion .cu (cpp::cuda_companion): here,
    // the declaration of its host function.
    if (boost::variant2::get_if<ir::SourceText>(&l.source) == nullptr) fail("kernel '" + k.name + "' has no source text");
    if (!is_c_identifier(k.name)) fail("kernel name '" + k.name + "' is not a C identifier");
    t.cuda_sources.emplace(graph, l.kernel.index);
    out += "// ---- kernel " + k.name + " (graph " + std::to_string(graph) +
           "): CUDA C++, defined in the companion .cu\nextern \"C\" int " + t.kernel_symbol(graph, k.name) + "(";
    for (const ir::KernelParam& param : k.signature) {
      const char* type = param.type.pointer ? "void*" : launch_scalar_type(param.type.dtype);
      if (type == nullptr)
        fail("kernel '" + k.name + "': a scalar parameter of type " + ir::to_string(param.type) + " is not supported");
      out += type;
      out += ", ";
    }
    out += "CUstream);\n\n";
    return;
  }
  if (k.language != ir::KernelLanguage::cpp)
    fail("kernel '" + k.name + "' is written in " + std::string(ir::kernel_language_name(k.language)) +
         "; emit::cpp renders C++, Triton, CUDA C++, PTX and cubin kernels");
  const ir::SourceText* text = boost::variant2::get_if<ir::SourceText>(&l.source);
  if (text == nullptr) fail("kernel '" + k.name + "' has no source text");
  const std::string symbol = t.kernel_symbol(graph, k.name);
  out += "// ---- kernel " + k.name + " (graph " + std::to_string(graph) + ")\n";
  out +=
      "#pragma GCC diagnostic push\n"
      "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
      "#pragma GCC diagnostic ignored \"-Wunused-but-set-variable\"\n"
      "#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n"
      "#pragma GCC diagnostic ignored \"-Wsign-compare\"\n"
      "#pragma GCC diagnostic ignored \"-Wunknown-pragmas\"\n"
      // GCC 12 misreads the AVX-512 intrinsics' `_mm512_undefined_ps` once
      // they are inlined into a kernel.
      "#pragma GCC diagnostic ignored \"-Wmaybe-uninitialized\"\n"
      "#pragma GCC diagnostic ignored \"-Wuninitialized\"\n";
  out += rename_identifier(text->text, "kernel", symbol);
  if (!text->text.empty() && text->text.back() != '\n') out += '\n';
  out += "#pragma GCC diagnostic pop\n\n";
}

/// The unit's Triton kernels: one `rt::CudaKernel` per (graph, kernel)
/// defined, the embedded cubins, and the set that loads them.
inline void write_cuda_kernel_table(std::string& out, const UnitTables& t) {
  for (std::size_t i = 0; i < t.cuda_table.size(); ++i) {
    const CudaKernelLaunch& k = *t.cuda_table[i];
    if (k.image.empty()) continue;
    out += "const unsigned char wrapir_cubin_" + std::to_string(i) + "[] = {";
    static constexpr char digits[] = "0123456789";
    for (std::size_t b = 0; b < k.image.size(); ++b) {
      if (b % 24 == 0) out += "\n   ";
      const auto u = static_cast<unsigned char>(k.image[b]);
      out += ' ';
      if (u >= 100) out += digits[u / 100];
      if (u >= 10) out += digits[u / 10 % 10];
      out += digits[u % 10];
      out += ',';
    }
    out += "\n    0};\n";
  }
  out += "rt::CudaKernelSet wrapir_cuda_set;\n";
  out += "rt::CudaKernel wrapir_cuda_kernels[] = {\n";
  for (std::size_t i = 0; i < t.cuda_table.size(); ++i) {
    const CudaKernelLaunch& k = *t.cuda_table[i];
    out += "    {" + string_literal(k.name) + ", " + string_literal(k.cubin) + ", " + string_literal(k.symbol) + ", " +
           std::to_string(k.num_warps) + "u, " + std::to_string(k.shared_bytes) + "u, " +
           std::to_string(k.global_scratch_bytes) + ", " + std::to_string(k.profile_scratch_bytes) + ", " +
           (k.image.empty() ? std::string("nullptr") : "wrapir_cubin_" + std::to_string(i)) +
           ", nullptr, nullptr, nullptr},\n";
  }
  if (t.cuda_table.empty()) out += "    {\"\", \"\", \"\", 1u, 0u, 0, 0, nullptr, nullptr, nullptr, nullptr},  // none\n";
  out += "};\n\n";
}

inline void write_unit(std::string& out, const ir::Program& program, const CppOptions& options) {
  const ExprTextsScope expr_texts;
  if (!is_c_identifier(options.entry_prefix))
    fail("the entry prefix " + ir::quote_for_diagnostic(options.entry_prefix) + " is not a C identifier");
  // The entry points must not take the name of a type of the C interface.
  for (const char* taken : {"wrapir_tensor", "wrapir_value", "wrapir_kwarg", "wrapir_extern_table", "wrapir_program_info",
                            "wrapir_dtype", "wrapir_value_kind", "wrapir_device_type"})
    if (options.entry_prefix + "_run" == taken || options.entry_prefix + "_info" == taken)
      fail("the entry prefix " + ir::quote_for_diagnostic(options.entry_prefix) + " makes an entry point called " +
           taken + ", a type of the C interface");
  if (options.entry_prefix.rfind("wrapir_rt", 0) == 0)
    fail("the entry prefix " + ir::quote_for_diagnostic(options.entry_prefix) + " starts with wrapir_rt, the runtime's namespace");
  UnitTables t;
  t.prefix = options.entry_prefix;
  t.max_loop_iterations = options.max_loop_iterations;
  t.input_asserts = options.input_asserts;
  if (options.debug_level < 0 || options.debug_level > 3)
    fail("debug_level " + std::to_string(options.debug_level) + " is outside 0-3");
  t.debug_level = options.debug_level;
  for (const std::string& k : options.debug_kernel_filter) {
    std::string lower = k;
    for (char& c : lower)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    t.debug_filter.push_back(std::move(lower));
  }
  if (options.debug_level == 1 &&
      (options.debug_save_directory.empty() || options.debug_save_directory.find('\0') != std::string::npos))
    fail("debug_save_directory " + ir::quote_for_diagnostic(options.debug_save_directory) +
         " is empty or holds a NUL byte");
  t.debug_save_directory = options.debug_save_directory;
  number_graphs(t, program, 0);
  for (const CudaKernelLaunch& k : options.cuda_kernels) {
    if (!t.cuda_launches.emplace(k.name, &k).second)
      fail("CppOptions::cuda_kernels names kernel " + ir::quote_for_diagnostic(k.name) + " twice");
    if (k.symbol.empty() || (k.cubin.empty() && k.image.empty()))
      fail("the launch configuration of kernel " + ir::quote_for_diagnostic(k.name) + " has no symbol or no cubin");
    if (k.num_warps < 1 || k.num_warps > 32 || k.shared_bytes < 0 || k.global_scratch_bytes < 0 ||
        k.profile_scratch_bytes < 0)
      fail("the launch configuration of kernel " + ir::quote_for_diagnostic(k.name) +
           " has num_warps outside 1..32 or a negative size");
  }
  // A CUDA program: any buffer or pool in device memory, or a Triton kernel.
  bool cuda = false;
  for (const ir::Program* g : t.graphs) {
    for (const ir::BufferDecl& b : g->buffers) cuda = cuda || b.layout.device.type == ir::DeviceType::cuda;
    for (const ir::PoolDecl& pool : g->pools) cuda = cuda || pool.device.type == ir::DeviceType::cuda;
    for (const ir::KernelDecl& k : g->kernels)
      cuda = cuda || in_cuda_table(k.language) || k.language == ir::KernelLanguage::cuda;
  }
  // About 200 bytes a line, plus the prelude: one allocation, not a dozen.
  out.reserve(out.size() + (std::size_t{1} << 16) + 224 * ir::total_lines(program));

  out += "// Generated by wrapir (emit::cpp) from program ";
  append_comment(out, program.name);
  out +=
      ".\n// A standalone C++17 translation unit: no Python, no libtorch. Entry points:\n"
      "// " + t.prefix + "_run and " + t.prefix + "_info (the C interface below, wrapir/run/c_abi.h)" +
      (cuda ? ", and " + t.prefix + "_init.\n// A CUDA program: compile with the CUDA Toolkit's include directory, link -lcuda.\n"
            : std::string(".\n"));
  for (const ir::Program* g : t.graphs) {
    bool host_kernels = false, cuda_cpp = false;
    for (const ir::KernelDecl& k : g->kernels) {
      host_kernels = host_kernels || k.language == ir::KernelLanguage::cpp;
      cuda_cpp = cuda_cpp || k.language == ir::KernelLanguage::cuda;
    }
    if (cuda && host_kernels && !t.notes_host_kernels) {
      out += "// It runs C++ kernels on the host too: also compile with their flags (`wrapir emit-cpp --print-flags`).\n";
      t.notes_host_kernels = true;
    }
    if (cuda_cpp && !t.notes_cuda_cpp) {
      out += "// Its CUDA C++ kernels are in the companion .cu (`wrapir emit-cpp --companion OUT.cu`): compile that with\n"
             "// nvcc and link both into one library (with the CUDA runtime, -lcudart).\n";
      t.notes_cuda_cpp = true;
    }
  }
  out += "\n";
  out += c_abi_text;

  // Kernels: every KernelDefinition of every graph, hoisted.
  // Inductor's kernels include their prefix header (`kernel` may be a name
  // in it): it is included once, before any kernel is renamed.
  // They are found first and written in place after the runtime: a
  // separate string of them, freed at the end, made malloc consolidate the
  // heap of a long program (6 % of the time).
  bool any_kernel = false;
  struct Definition {
    std::size_t graph, line;
    const ir::KernelDefinition* l;
  };
  std::vector<Definition> definitions;
  for (std::size_t g = 0; g < t.graphs.size(); ++g) {
    const ir::Program& p = *t.graphs[g];
    for (std::size_t i = 0; i < p.body.size(); ++i)
      if (const auto* l = std::get_if<ir::KernelDefinition>(&p.body[i])) {
        definitions.push_back(Definition{g, i, l});
        if (const auto* text = boost::variant2::get_if<ir::SourceText>(&l->source);
            text != nullptr && text->text.find("torch/csrc/inductor/cpp_prefix.h") != std::string::npos)
          any_kernel = true;
      }
  }
  out += "\n";
  if (any_kernel)
    out +=
        "// The prefix header of Inductor's C++ kernels, included once before them.\n"
        "// GCC 12 reports its AVX-512 intrinsics (`_mm512_undefined_ps`) inlined into a\n"
        "// kernel as maybe-uninitialized (GCC bug 105593), located in the intrinsics'\n"
        "// header where no pragma around the kernel reaches: off for this unit.\n"
        "#pragma GCC diagnostic ignored \"-Wmaybe-uninitialized\"\n"
        "#include <torch/csrc/inductor/cpp_prefix.h>\n";
  out += runtime_text;
  if (cuda) out += cuda_runtime_text;
  if (t.debug_level != 0) out += debug_runtime_text;
  out += "\n";
  std::vector<std::vector<std::uint32_t>> defined(t.graphs.size());
  for (const Definition& d : definitions) {
    const ir::Program& p = *t.graphs[d.graph];
    for (const std::uint32_t k : defined[d.graph])
      if (k == d.l->kernel.index)
        fail("line " + std::to_string(d.line) + " (KernelDefinition) of graph '" + p.name + "': kernel #" +
             std::to_string(k) + " is defined twice");
    try {
      write_kernel(out, t, d.graph, p, *d.l);
    } catch (wrapir::detail::Failure& f) {
      fail("line " + std::to_string(d.line) + " (KernelDefinition) of graph '" + p.name + "': " + f.diagnostic.message);
    }
    defined[d.graph].push_back(d.l->kernel.index);
  }

  out += "namespace {\nnamespace rt = wrapir_rt_v2;\nnamespace wrapir = wrapir_rt_v2::wrapir;\n\n";
  if (cuda) write_cuda_kernel_table(out, t);
  if (t.debug_level != 0)
    out +=
        "// The debug printer's sink (debug level " + std::to_string(t.debug_level) + "): set by " + t.prefix +
        "_debug_sink.\nnamespace wrapir_debug = wrapir_rt_debug_v1;\nwrapir_debug::Sink wrapir_debug_sink;\n\n";
  // Every graph function is declared first, so that any may call any.
  for (std::size_t g = t.graphs.size(); g-- > 0;)
    out += "std::vector<rt::Value> wrapir_graph_" + std::to_string(g) +
           "(rt::Context& wrapir_ctx, const std::vector<rt::Value>& wrapir_inputs);\n";
  out += "\n";
  for (std::size_t g = 0; g < t.graphs.size(); ++g) {
    GraphWriter writer(t, *t.graphs[g], g, out);
    for (const std::uint32_t k : defined[g]) writer.mark_defined(k);
    writer.write();
  }
  out += "}  // namespace\n\n";

  const ir::Program& p = program;
  const std::string n_in = std::to_string(p.inputs.size());
  const std::string n_out = std::to_string(p.outputs.size());
  out += "extern \"C\" const wrapir_program_info* " + t.prefix + "_info(void) {\n";
  out += "  static const wrapir_program_info info = {WRAPIR_C_ABI_VERSION, " + string_literal(p.name) + ", " + n_in +
         "u, " + n_out + "u, " + (cuda ? "WRAPIR_DEVICE_CUDA" : "WRAPIR_DEVICE_CPU") + "};\n  return &info;\n}\n\n";
  if (t.debug_level != 0)
    out += "/* Where the debug printer's lines go: `write(host, line)` for each line (no newline), or stderr when\n"
           "   `write` is null. */\n"
           "extern \"C\" void " + t.prefix +
           "_debug_sink(void (*write)(void* host, const char* line), void* host) {\n"
           "  std::lock_guard<std::mutex> lock(wrapir_debug_sink.mutex);\n"
           "  wrapir_debug_sink.write = write;\n"
           "  wrapir_debug_sink.host = host;\n}\n\n";
  if (cuda)
    out += "extern \"C\" int " + t.prefix +
           "_init(const char* kernel_directory, char* message, size_t message_size) {\n"
           "  (void)wrapir_rt_v2::report(\"\", message, message_size);\n"
           "  try {\n"
           "    std::lock_guard<std::mutex> lock(wrapir_cuda_set.mutex);\n"
           "    wrapir_cuda_set.directory = kernel_directory != nullptr ? kernel_directory : \"\";\n"
           "    wrapir_cuda_set.initialised = true;\n"
           "    (void)wrapir_cuda_kernels;\n"
           "    return WRAPIR_OK;\n"
           "  } catch (...) {\n"
           "    (void)wrapir_rt_v2::report(\"out of memory\", message, message_size);\n"
           "    return WRAPIR_ERROR_OUT_OF_MEMORY;\n"
           "  }\n}\n\n";
  out += "extern \"C\" int " + t.prefix +
         "_run(const wrapir_extern_table* externs, const wrapir_value* inputs, size_t input_count,\n"
         "    wrapir_value* outputs, size_t output_count, void* stream, char* message, size_t message_size) {\n"
         "  (void)wrapir_rt_v2::report(\"\", message, message_size);\n"
         "  try {\n";
  out += "    if (input_count != " + n_in + "u || output_count != " + n_out +
         "u) wrapir_rt_v2::fail(\"the program takes " + n_in + " inputs and " + n_out +
         " outputs, got \" + std::to_string(input_count) + \" and \" + std::to_string(output_count), "
         "WRAPIR_ERROR_INVALID_ARGUMENT);\n"
         "    if ((inputs == nullptr && input_count != 0) || (outputs == nullptr && output_count != 0))\n"
         "      wrapir_rt_v2::fail(\"null inputs or outputs\", WRAPIR_ERROR_INVALID_ARGUMENT);\n"
         + std::string(cuda ? "    const wrapir_rt_v2::CudaRun cuda_run(stream);\n"
                            : "    if (stream != nullptr) wrapir_rt_v2::fail(\"the stream is for CUDA programs; a CPU program "
                              "takes null\", WRAPIR_ERROR_INVALID_ARGUMENT);\n") +
         "    wrapir_rt_v2::Context ctx;\n"
         "    wrapir_rt_v2::resolve_externs(ctx, externs, {";
  for (std::size_t i = 0; i < t.extern_names.size(); ++i) out += (i ? ", " : "") + string_literal(t.extern_names[i]);
  out +=
      "});\n"
      "    const std::vector<wrapir_rt_v2::Value> in = wrapir_rt_v2::import_inputs(inputs, input_count);\n"
      "    wrapir_rt_v2::export_outputs(wrapir_graph_0(ctx, in), outputs);\n"
      "    return WRAPIR_OK;\n"
      "  } catch (const wrapir_rt_v2::Error& e) {\n"
      "    (void)wrapir_rt_v2::report(e.message.c_str(), message, message_size);\n"
      "    return e.code;\n"
      "  } catch (const std::bad_alloc&) {\n"
      "    (void)wrapir_rt_v2::report(\"out of memory\", message, message_size);\n"
      "    return WRAPIR_ERROR_OUT_OF_MEMORY;\n"
      "  } catch (const std::exception& e) {\n"
      "    (void)wrapir_rt_v2::report(e.what(), message, message_size);\n"
      "    return WRAPIR_ERROR_RUNTIME;\n"
      "  } catch (...) {\n"
      "    (void)wrapir_rt_v2::report(\"an unknown exception\", message, message_size);\n"
      "    return WRAPIR_ERROR_RUNTIME;\n"
      "  }\n}\n";
}

}  // namespace detail

inline Result<void> to_cpp(const ir::Program& program, std::string& out, const CppOptions& options) {
  // Written in place; cut back to its old size on failure.
  const std::size_t old_size = out.size();
  std::optional<Diagnostic> error;
  try {
    auto r = wrapir::detail::catch_failure([&] { detail::write_unit(out, program, options); });
    if (!r) error = Diagnostic{"program " + ir::quote_for_diagnostic(program.name) + ": " + r.error().message};
  } catch (const std::out_of_range&) {
    error = Diagnostic{"program " + ir::quote_for_diagnostic(program.name) + ": an id is out of range of its tables"};
  } catch (const expr::Error& e) {
    error = Diagnostic{"program " + ir::quote_for_diagnostic(program.name) + ": " + e.what()};
  } catch (...) {  // out of memory: `out` as it was, then rethrown
    out.resize(old_size);
    throw;
  }
  if (error) {
    out.resize(old_size);
    return *std::move(error);
  }
  return {};
}

inline Result<std::string> to_cpp(const ir::Program& program, const CppOptions& options) {
  std::string out;
  if (auto r = to_cpp(program, out, options); !r) return std::move(r).error();
  return out;
}

}  // namespace wrapir::cpp
