#pragma once
/// \file
/// Tensor files in the safetensors format: what the Inductor exporter writes
/// (`inputs.safetensors`, `outputs.safetensors`) and `wrapir run` reads and
/// writes, without torch.
///
/// Format: an 8-byte little-endian header length N, N bytes of JSON (an
/// object: each tensor's name maps to `{"dtype": "F32", "shape": [..],
/// "data_offsets": [begin, end]}`, offsets relative to the byte after the
/// header; the optional `"__metadata__"` maps strings to strings), then the
/// data, each tensor dense and row-major, little-endian.
///
/// Reading is hardened: every file is untrusted. The header length must fit
/// the file and a cap (100 MB, as the reference implementation); the JSON
/// is parsed with a depth limit; every dtype must be known, every dimension
/// non-negative, the element count and byte size free of overflow, every
/// offset pair ordered, inside the data and exactly the tensor's size;
/// the tensors cover the data exactly (no overlap, no byte that belongs to
/// no tensor, nothing after the last); no object of the header gives a key
/// twice (tensor names, metadata keys, fields). A refusal is one diagnostic saying what and where,
/// never a crash or an allocation the file's size does not justify.
///
/// Tensors are read into fresh 64-byte-aligned CPU storage (one per tensor,
/// so a result never aliases the file's bytes); writing copies any strided
/// tensor densely. Boost.JSON: link `wrapir::json`.
#include <wrapir/detail/safe_file.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/io/safetensors_dtype.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/run/tensor.hpp>

#include <boost/json/basic_parser_impl.hpp>  // the parser template, for DuplicateKeyFinder
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::io {

/// The tensors of a file in file order, and its metadata.
struct TensorFile {
  std::vector<std::pair<std::string, run::Tensor>> tensors;
  std::map<std::string, std::string, std::less<>> metadata;

  /// The tensor called `name`, or null.
  [[nodiscard]] const run::Tensor* find(std::string_view name) const noexcept {
    for (const auto& [n, t] : tensors)
      if (n == name) return &t;
    return nullptr;
  }
};

[[nodiscard]] constexpr std::optional<ir::DType> dtype_from_safetensors_name(std::string_view s) noexcept {
  for (std::size_t i = 0; i < ir::dtype_count; ++i) {
    const auto d = static_cast<ir::DType>(i);
    if (const auto n = safetensors_dtype_name(d); n && *n == s) return d;
  }
  return std::nullopt;
}

/// The largest header accepted (the reference implementation's limit).
inline constexpr std::uint64_t safetensors_max_header_bytes = 100'000'000;

namespace safetensors_detail {

inline std::string quoted(std::string_view s) { return ir::quote_for_diagnostic(s); }

inline Result<std::int64_t> nonnegative_integer(const boost::json::value& v, const std::string& what) {
  if (const std::int64_t* i = v.if_int64(); i && *i >= 0) return *i;
  if (const std::uint64_t* u = v.if_uint64(); u && *u <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(*u);
  return Diagnostic{what + " is not a non-negative 64-bit integer"};
}

/// Finds an object key given twice in one object (at any depth) of the JSON
/// `text`, which Boost.JSON's value parser would resolve silently (the last
/// wins). Invalid JSON is not its business: it answers nullopt and leaves the
/// diagnostic to the parse that follows.
struct DuplicateKeyFinder {
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  using error_code = boost::system::error_code;
  using string_view = boost::json::string_view;

  std::vector<std::vector<std::string>> keys;  // per open container; arrays hold none
  std::string key;
  std::optional<std::string> duplicate;

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_array_begin(error_code&) { return keys.emplace_back(), true; }
  bool on_array_end(std::size_t, error_code&) { return keys.pop_back(), true; }
  bool on_object_begin(error_code&) { return keys.emplace_back(), true; }
  bool on_object_end(std::size_t, error_code&) {
    std::vector<std::string>& k = keys.back();
    std::sort(k.begin(), k.end());
    if (const auto twice = std::adjacent_find(k.begin(), k.end()); twice != k.end()) {
      duplicate = *twice;
      return false;  // stops the parser: one is enough
    }
    keys.pop_back();
    return true;
  }
  bool on_key_part(string_view s, std::size_t, error_code&) { return key.append(s.data(), s.size()), true; }
  bool on_key(string_view s, std::size_t, error_code&) {
    key.append(s.data(), s.size());
    keys.back().push_back(std::move(key));
    key.clear();
    return true;
  }
  bool on_string_part(string_view, std::size_t, error_code&) { return true; }
  bool on_string(string_view, std::size_t, error_code&) { return true; }
  bool on_number_part(string_view, error_code&) { return true; }
  bool on_int64(std::int64_t, string_view, error_code&) { return true; }
  bool on_uint64(std::uint64_t, string_view, error_code&) { return true; }
  bool on_double(double, string_view, error_code&) { return true; }
  bool on_bool(bool, error_code&) { return true; }
  bool on_null(error_code&) { return true; }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }
};

/// A key that `text` gives twice in one object, or nullopt (see
/// `DuplicateKeyFinder`). `max_depth` as the parse that follows.
[[nodiscard]] inline std::optional<std::string> duplicate_key(std::string_view text, std::size_t max_depth) {
  boost::json::parse_options options;
  options.max_depth = max_depth;
  boost::json::basic_parser<DuplicateKeyFinder> parser(options);
  boost::system::error_code ec;
  parser.write_some(false, text.data(), text.size(), ec);
  return parser.handler().duplicate;
}

}  // namespace safetensors_detail

/// Parses a whole safetensors file held in memory.
[[nodiscard]] inline Result<TensorFile> parse_safetensors(std::span<const std::byte> bytes) {
  namespace sd = safetensors_detail;
  if (bytes.size() < 8) return Diagnostic{"a safetensors file is at least 8 bytes, this one has " + std::to_string(bytes.size())};
  std::uint64_t header_size = 0;
  for (std::size_t i = 0; i < 8; ++i) header_size |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  if (header_size > safetensors_max_header_bytes)
    return Diagnostic{"the header claims " + std::to_string(header_size) + " bytes, more than the limit of " +
                      std::to_string(safetensors_max_header_bytes)};
  if (header_size > bytes.size() - 8)
    return Diagnostic{"the header claims " + std::to_string(header_size) + " bytes but the file has only " +
                      std::to_string(bytes.size() - 8) + " after the length"};
  const std::string_view header(reinterpret_cast<const char*>(bytes.data()) + 8, static_cast<std::size_t>(header_size));
  const std::span<const std::byte> data = bytes.subspan(8 + static_cast<std::size_t>(header_size));

  boost::json::parse_options options;
  options.max_depth = 8;
  // The reference implementation refuses a name given twice (which one
  // would be meant?); Boost.JSON's value would keep the last silently.
  if (const std::optional<std::string> twice = sd::duplicate_key(header, options.max_depth))
    return Diagnostic{"the header gives " + sd::quoted(*twice) + " twice"};
  boost::system::error_code ec;
  const boost::json::value root = boost::json::parse(header, ec, {}, options);
  if (ec) return Diagnostic{"the header is not valid JSON: " + ec.message()};
  const boost::json::object* top = root.if_object();
  if (top == nullptr) return Diagnostic{"the header is not a JSON object"};

  TensorFile file;
  struct Placed {
    std::int64_t begin, end;
    std::string name;
  };
  std::vector<Placed> placed;
  for (const auto& [key, value] : *top) {
    const std::string name(key);
    if (name == "__metadata__") {
      const boost::json::object* meta = value.if_object();
      if (meta == nullptr) return Diagnostic{"__metadata__ is not an object"};
      for (const auto& [mk, mv] : *meta) {
        const boost::json::string* s = mv.if_string();
        if (s == nullptr) return Diagnostic{"metadata entry " + sd::quoted(mk) + " is not a string"};
        file.metadata[std::string(mk)] = std::string(*s);
      }
      continue;
    }
    // The writer refuses an empty name too: a file it could not write back is not accepted.
    if (name.empty()) return Diagnostic{"a tensor has an empty name"};
    const std::string who = "tensor " + sd::quoted(name);
    const boost::json::object* entry = value.if_object();
    if (entry == nullptr) return Diagnostic{who + " is not an object"};
    const boost::json::value* dtype_v = entry->if_contains("dtype");
    const boost::json::value* shape_v = entry->if_contains("shape");
    const boost::json::value* offsets_v = entry->if_contains("data_offsets");
    if (!dtype_v || !shape_v || !offsets_v) return Diagnostic{who + " needs dtype, shape and data_offsets"};
    if (entry->size() != 3) return Diagnostic{who + " has fields other than dtype, shape and data_offsets"};
    const boost::json::string* dtype_s = dtype_v->if_string();
    if (dtype_s == nullptr) return Diagnostic{who + ": dtype is not a string"};
    const std::optional<ir::DType> dtype = dtype_from_safetensors_name(std::string_view(*dtype_s));
    if (!dtype) return Diagnostic{who + ": unknown dtype " + sd::quoted(std::string_view(*dtype_s))};
    const boost::json::array* shape_a = shape_v->if_array();
    if (shape_a == nullptr) return Diagnostic{who + ": shape is not an array"};
    if (shape_a->size() > 64) return Diagnostic{who + ": shape has " + std::to_string(shape_a->size()) + " dimensions, more than 64"};
    std::vector<std::int64_t> sizes;
    std::int64_t numel = 1;
    for (std::size_t i = 0; i < shape_a->size(); ++i) {
      Result<std::int64_t> d = sd::nonnegative_integer((*shape_a)[i], who + ": dimension " + std::to_string(i));
      if (!d) return d.error();
      sizes.push_back(*d);
      if (__builtin_mul_overflow(numel, *d, &numel)) return Diagnostic{who + ": the element count overflows"};
    }
    std::int64_t nbytes = 0;
    if (__builtin_mul_overflow(numel, ir::itemsize(*dtype), &nbytes)) return Diagnostic{who + ": the byte size overflows"};
    const boost::json::array* off_a = offsets_v->if_array();
    if (off_a == nullptr || off_a->size() != 2) return Diagnostic{who + ": data_offsets is not a pair"};
    Result<std::int64_t> begin = sd::nonnegative_integer((*off_a)[0], who + ": the begin offset");
    if (!begin) return begin.error();
    Result<std::int64_t> end = sd::nonnegative_integer((*off_a)[1], who + ": the end offset");
    if (!end) return end.error();
    if (*begin > *end) return Diagnostic{who + ": data_offsets [" + std::to_string(*begin) + ", " + std::to_string(*end) + "] are reversed"};
    if (static_cast<std::uint64_t>(*end) > data.size())
      return Diagnostic{who + ": data_offsets end at " + std::to_string(*end) + " but the data has " +
                        std::to_string(data.size()) + " bytes"};
    if (*end - *begin != nbytes)
      return Diagnostic{who + ": data_offsets span " + std::to_string(*end - *begin) + " bytes but " +
                        std::string(*safetensors_dtype_name(*dtype)) + " of this shape needs " + std::to_string(nbytes)};
    Result<run::Tensor> t = run::empty_cpu(sizes, *dtype);
    if (!t) return Diagnostic{who + ": " + t.error().message};
    if (nbytes > 0) std::memcpy(t->data(), data.data() + *begin, static_cast<std::size_t>(nbytes));
    placed.push_back(Placed{*begin, *end, name});
    file.tensors.emplace_back(name, *std::move(t));
  }
  // The format forbids overlapping tensors (each owns its bytes) and bytes
  // no tensor owns: the data is exactly the tensors, back to back, as the
  // reference implementation checks. Empty tensors own no bytes.
  std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) { return a.begin < b.begin; });
  std::int64_t covered = 0;
  const Placed* previous = nullptr;
  for (const Placed& p : placed) {
    if (p.begin == p.end) continue;
    if (p.begin < covered)
      return Diagnostic{"tensors " + sd::quoted(previous->name) + " and " + sd::quoted(p.name) + " overlap in the data"};
    if (p.begin > covered)
      return Diagnostic{"bytes " + std::to_string(covered) + " to " + std::to_string(p.begin) +
                        " of the data belong to no tensor (before " + sd::quoted(p.name) + ")"};
    covered = p.end;
    previous = &p;
  }
  if (static_cast<std::uint64_t>(covered) != data.size())
    return Diagnostic{std::to_string(data.size() - static_cast<std::uint64_t>(covered)) +
                      " bytes after the last tensor's data belong to no tensor"};
  return file;
}

/// Reads the safetensors file at `path` (a regular file under the read
/// options' cap; see detail/safe_file.hpp).
[[nodiscard]] inline Result<TensorFile> read_safetensors(const std::filesystem::path& path,
                                                         const wrapir::detail::ReadOptions& options = {}) {
  Result<std::string> content = wrapir::detail::read_regular_file(path, options);
  if (!content) return content.error();
  Result<TensorFile> file = parse_safetensors(std::as_bytes(std::span<const char>(content->data(), content->size())));
  if (!file) return Diagnostic{"cannot read " + wrapir::detail::quoted_path(path) + ": " + file.error().message};
  return file;
}

/// The bytes of a safetensors file holding `file` (tensors densely, in
/// order), or why not: a dtype the format cannot name, a tensor without
/// storage, a duplicate or empty name.
[[nodiscard]] inline Result<std::string> to_safetensors(const TensorFile& file) {
  boost::json::object header;
  if (!file.metadata.empty()) {
    boost::json::object meta;
    for (const auto& [k, v] : file.metadata) meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  std::string data;
  for (const auto& [name, t] : file.tensors) {
    const std::string who = "tensor " + safetensors_detail::quoted(name);
    if (name.empty() || name == "__metadata__") return Diagnostic{who + " has a reserved name"};
    if (header.contains(name)) return Diagnostic{who + " appears twice"};
    const auto dtype = safetensors_dtype_name(t.dtype);
    if (!dtype) return Diagnostic{who + ": safetensors has no name for dtype " + std::string(ir::name(t.dtype))};
    // A dense copy, whatever the strides.
    Result<run::Tensor> dense = run::empty_cpu(t.sizes, t.dtype);
    if (!dense) return Diagnostic{who + ": " + dense.error().message};
    const std::int64_t nbytes = dense->numel() * ir::itemsize(t.dtype);
    if (nbytes > 0) {
      if (t.data() == nullptr) return Diagnostic{who + " has no storage"};
      Result<std::int64_t> reach = run::bytes_spanned(t.sizes, t.strides, t.offset, t.dtype);
      if (!reach || *reach > (t.storage ? t.storage->nbytes : 0)) return Diagnostic{who + " reaches past its storage"};
      const std::size_t rank = t.sizes.size();
      const auto item = static_cast<std::size_t>(ir::itemsize(t.dtype));
      std::vector<std::int64_t> index(rank, 0);
      auto* out = static_cast<std::byte*>(dense->data());
      const auto* in = static_cast<const std::byte*>(t.data());
      for (std::int64_t e = 0; e < dense->numel(); ++e) {
        std::int64_t off = 0;
        for (std::size_t k = 0; k < rank; ++k) off += index[k] * t.strides[k];
        std::memcpy(out + static_cast<std::size_t>(e) * item, in + off * static_cast<std::int64_t>(item), item);
        for (std::size_t k = rank; k-- > 0;) {
          if (++index[k] < t.sizes[k]) break;
          index[k] = 0;
        }
      }
    }
    boost::json::object entry;
    entry["dtype"] = *dtype;
    boost::json::array shape;
    for (std::int64_t s : t.sizes) shape.push_back(s);
    entry["shape"] = std::move(shape);
    const auto begin = static_cast<std::int64_t>(data.size());
    entry["data_offsets"] = boost::json::array{begin, begin + nbytes};
    header[name] = std::move(entry);
    if (nbytes > 0) data.append(static_cast<const char*>(dense->data()), static_cast<std::size_t>(nbytes));
  }
  std::string text = boost::json::serialize(header);
  // Pad with spaces so the data starts 8-byte aligned, as the reference writer does.
  while ((text.size() % 8) != 0) text += ' ';
  std::string out(8, '\0');
  const auto n = static_cast<std::uint64_t>(text.size());
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += text;
  out += data;
  return out;
}

/// Writes `file` to `path` atomically (detail/safe_file.hpp).
[[nodiscard]] inline Result<void> write_safetensors(const std::filesystem::path& path, const TensorFile& file) {
  Result<std::string> bytes = to_safetensors(file);
  if (!bytes) return bytes.error();
  return wrapir::detail::write_file_atomically(path, *bytes);
}

}  // namespace wrapir::io
