// wrapir_cpu_extern_driver: runs one reference extern on tensors read from
// .npy files, for tools/inductor/tests/test_cpu_externs.py to compare with
// torch.
//
//   wrapir_cpu_extern_driver OUT_DIR OP ARG...
//
// Each ARG is `[name=]kind:value`; with `name=` it is a keyword argument.
//   t:FILE.npy     a tensor (float16/32/64, int32/64, uint8, bool)
//   t:FILE.npy@2,4,16,16@3072,16,192,1@64
//                  a strided view (sizes, strides, offset) of the file's elements
//   bf16:FILE.npy  a bfloat16 tensor stored as uint16 bits ('<u2')
//   i:N  f:X  b:true|false  s:TEXT  n:   (None)
//   li:1,2,3       a list of integers
//   lt:A.npy,none,B.npy   a list of tensors and Nones (index_put's indices)
// After the call it writes OUT_DIR/result<i>.npy for each tensor the extern
// returned (and its strides, comma-separated, in OUT_DIR/result<i>.strides) and OUT_DIR/arg<i>.npy / OUT_DIR/kw_<name>.npy for every tensor
// argument (in-place and out= results). Exit 0 on success; 1 with the
// diagnostic on stderr.
#include <wrapir/detail/safe_file.hpp>
#include <wrapir/run/cpu/externs.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

using wrapir::ir::DType;
using wrapir::run::Tensor;
using wrapir::run::Value;
using wrapir::run::ValueList;

struct NpyType {
  const char* descr;
  DType dtype;
};
constexpr NpyType npy_types[] = {{"<f4", DType::float32}, {"<f8", DType::float64}, {"<f2", DType::float16},
                                 {"<i8", DType::int64},   {"<i4", DType::int32},   {"|u1", DType::uint8},
                                 {"|b1", DType::bool_},   {"<u2", DType::bfloat16}};

wrapir::Result<Tensor> read_npy(const std::string& path, bool bf16) {
  auto bytes = wrapir::detail::read_regular_file(path);
  if (!bytes) return std::move(bytes).error();
  const std::string& b = *bytes;
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0) return wrapir::Diagnostic{path + ": not a .npy file"};
  const std::size_t header_len = static_cast<unsigned char>(b[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(b[9])) << 8);
  if (b[6] != 1 || 10 + header_len > b.size()) return wrapir::Diagnostic{path + ": unsupported .npy version"};
  const std::string header = b.substr(10, header_len);
  if (header.find("'fortran_order': False") == std::string::npos)
    return wrapir::Diagnostic{path + ": only C-ordered arrays"};
  const auto d = header.find("'descr': '");
  if (d == std::string::npos) return wrapir::Diagnostic{path + ": no descr"};
  const std::string descr = header.substr(d + 10, 3);
  std::optional<DType> dtype;
  for (const NpyType& t : npy_types)
    if (descr == t.descr) dtype = t.dtype;
  if (!dtype || (descr == "<u2") != bf16) return wrapir::Diagnostic{path + ": unsupported dtype " + descr};
  const auto s = header.find("'shape': (");
  if (s == std::string::npos) return wrapir::Diagnostic{path + ": no shape"};
  std::vector<std::int64_t> shape;
  for (std::size_t i = s + 10; i < header.size() && header[i] != ')';) {
    if (header[i] >= '0' && header[i] <= '9') {
      std::size_t used = 0;
      shape.push_back(std::stoll(header.substr(i), &used));
      i += used;
    } else {
      ++i;
    }
  }
  auto t = wrapir::run::empty_cpu(shape, *dtype);
  if (!t) return t;
  const auto nbytes = static_cast<std::size_t>(t->numel()) * wrapir::ir::itemsize(*dtype);
  if (10 + header_len + nbytes != b.size()) return wrapir::Diagnostic{path + ": data size does not match the shape"};
  if (nbytes != 0) std::memcpy(t->data(), b.data() + 10 + header_len, nbytes);
  return t;
}

wrapir::Result<void> write_npy(const std::filesystem::path& path, const Tensor& t) {
  const char* descr = nullptr;
  for (const NpyType& n : npy_types)
    if (n.dtype == t.dtype) descr = n.descr;
  if (descr == nullptr) return wrapir::Diagnostic{"cannot write dtype " + std::string(wrapir::ir::name(t.dtype))};
  std::string shape = "(";
  for (const std::int64_t s : t.sizes) shape += std::to_string(s) + ",";
  shape += ")";
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  // Contiguous copy of the elements, whatever the layout.
  const auto item = wrapir::ir::itemsize(t.dtype);
  wrapir::run::cpu::detail::for_each_index(t.sizes, [&](std::span<const std::int64_t> idx) {
    out.append(reinterpret_cast<const char*>(wrapir::run::cpu::detail::element(t, idx)), item);
  });
  return wrapir::detail::write_file_atomically(path, out);
}

wrapir::Result<Value> parse_value(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return wrapir::Diagnostic{"argument " + text + " has no kind"};
  const std::string kind = text.substr(0, colon), value = text.substr(colon + 1);
  auto split = [](const std::string& s) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= s.size()) {
      const auto comma = s.find(',', start);
      parts.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return parts;
  };
  if (kind == "t" || kind == "bf16") {
    // FILE.npy, or FILE.npy@SIZES@STRIDES@OFFSET: a strided view of the file's elements.
    const auto at = value.find('@');
    auto t = read_npy(value.substr(0, at), kind == "bf16");
    if (!t) return std::move(t).error();
    if (at == std::string::npos) return Value{*t};
    std::vector<std::string> parts;
    std::string rest = value.substr(at + 1);
    for (std::size_t next; (next = rest.find('@')) != std::string::npos; rest = rest.substr(next + 1))
      parts.push_back(rest.substr(0, next));
    parts.push_back(rest);
    if (parts.size() != 3) return wrapir::Diagnostic{"a strided tensor is FILE@SIZES@STRIDES@OFFSET"};
    auto numbers = [&](const std::string& text) {
      std::vector<std::int64_t> out;
      if (!text.empty())
        for (const auto& p : split(text)) out.push_back(std::stoll(p));
      return out;
    };
    auto view = wrapir::run::as_strided(*t, numbers(parts[0]), numbers(parts[1]), std::stoll(parts[2]));
    if (!view) return std::move(view).error();
    return Value{*view};
  }
  if (kind == "i") return Value{static_cast<std::int64_t>(std::stoll(value))};
  if (kind == "f") return Value{std::stod(value)};
  if (kind == "b") return Value{value == "true" || value == "1"};
  if (kind == "s") return Value{value};
  if (kind == "n") return Value{wrapir::ir::None{}};
  if (kind == "li") {
    ValueList l;
    if (!value.empty())
      for (const auto& p : split(value)) l.items.push_back(Value{static_cast<std::int64_t>(std::stoll(p))});
    return Value{l};
  }
  if (kind == "lt") {
    ValueList l;
    for (const auto& p : split(value)) {
      if (p == "none") {
        l.items.push_back(Value{wrapir::ir::None{}});
        continue;
      }
      auto t = read_npy(p, false);
      if (!t) return std::move(t).error();
      l.items.push_back(Value{*t});
    }
    return Value{l};
  }
  return wrapir::Diagnostic{"unknown argument kind " + kind};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR OP [name=]kind:value...\n", argv[0]);
    return 2;
  }
  const std::filesystem::path out_dir = argv[1];
  const std::string op = argv[2];
  std::vector<Value> args;
  std::vector<wrapir::run::KeywordArg> kwargs;
  try {
    for (int i = 3; i < argc; ++i) {
      std::string text = argv[i];
      std::string name;
      const auto eq = text.find('=');
      const auto colon = text.find(':');
      if (eq != std::string::npos && eq < colon) {
        name = text.substr(0, eq);
        text = text.substr(eq + 1);
      }
      auto v = parse_value(text);
      if (!v) {
        std::fprintf(stderr, "%s\n", v.error().message.c_str());
        return 1;
      }
      if (name.empty()) {
        args.push_back(*v);
      } else {
        kwargs.push_back({name, *v});
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bad argument: %s\n", e.what());
    return 1;
  }
  wrapir::run::ExternRegistry registry;
  if (auto r = wrapir::run::cpu::register_reference_externs(registry); !r) {
    std::fprintf(stderr, "%s\n", r.error().message.c_str());
    return 1;
  }
  const auto* fn = registry.find(op);
  if (fn == nullptr) {
    std::fprintf(stderr, "no extern named %s\n", op.c_str());
    return 1;
  }
  auto result = (*fn)(wrapir::run::ExternCall{op, args, kwargs});
  if (!result) {
    std::fprintf(stderr, "%s\n", result.error().message.c_str());
    return 1;
  }
  std::vector<Tensor> results;
  if (const Tensor* t = result->get_if<Tensor>()) results.push_back(*t);
  if (const ValueList* l = result->get_if<ValueList>())
    for (const Value& v : l->items)
      if (const Tensor* t = v.get_if<Tensor>()) results.push_back(*t);
  auto write = [&](const std::filesystem::path& p, const Tensor& t) {
    if (auto w = write_npy(p, t); !w) {
      std::fprintf(stderr, "%s\n", w.error().message.c_str());
      return false;
    }
    return true;
  };
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!write(out_dir / ("result" + std::to_string(i) + ".npy"), results[i])) return 1;
    // The layout the extern chose (the .npy holds the elements row-major).
    std::string strides;
    for (const std::int64_t s : results[i].strides) strides += (strides.empty() ? "" : ",") + std::to_string(s);
    if (auto w = wrapir::detail::write_file_atomically(out_dir / ("result" + std::to_string(i) + ".strides"), strides); !w) {
      std::fprintf(stderr, "%s\n", w.error().message.c_str());
      return 1;
    }
  }
  for (std::size_t i = 0; i < args.size(); ++i)
    if (const Tensor* t = args[i].get_if<Tensor>())
      if (!write(out_dir / ("arg" + std::to_string(i) + ".npy"), *t)) return 1;
  for (const auto& k : kwargs)
    if (const Tensor* t = k.value.get_if<Tensor>())
      if (!write(out_dir / ("kw_" + k.name + ".npy"), *t)) return 1;
  return 0;
}
