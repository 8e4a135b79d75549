#pragma once
/// \file
/// Reading Triton's kernel metadata JSON (the `<kernel>.json` beside the
/// cubin in Triton's cache, or `json.dumps(compiled.metadata._asdict())`).
///
/// Separate from cuda/triton.hpp so that only programs that read JSON link
/// Boost.JSON (target wrapir::json). Unknown keys are ignored — Triton adds
/// keys between versions; the keys read must have the right types and
/// ranges, and an error names the key.

#include <wrapir/cuda/triton.hpp>
#include <wrapir/diagnostic.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>

namespace wrapir::cuda {

/// Metadata from Triton's JSON text. Required: `name`, `num_warps`,
/// `shared`; optional: `num_ctas`, `global_scratch_size`,
/// `global_scratch_align`, `profile_scratch_size`, `profile_scratch_align`.
[[nodiscard]] inline Result<TritonMetadata> triton_metadata_from_json(std::string_view text) {
  boost::system::error_code ec;
  const boost::json::value doc = boost::json::parse(text, ec);
  if (ec) return Diagnostic{"Triton metadata: not JSON: " + ec.message()};
  const boost::json::object* object = doc.if_object();
  if (!object) return Diagnostic{"Triton metadata: the document is not a JSON object"};

  TritonMetadata m;
  auto integer = [&](const char* key, bool required, std::int64_t low, std::int64_t high,
                     std::int64_t& out) -> Status {
    const boost::json::value* v = object->if_contains(key);
    if (!v || v->is_null()) {
      if (required) return Diagnostic{std::string("Triton metadata: '") + key + "' is missing"};
      return {};
    }
    std::int64_t value = 0;
    if (v->is_int64()) {
      value = v->get_int64();
    } else if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(high)) {
      value = static_cast<std::int64_t>(v->get_uint64());
    } else {
      return Diagnostic{std::string("Triton metadata: '") + key + "' is not an integer in " + std::to_string(low) +
                        ".." + std::to_string(high)};
    }
    if (value < low || value > high)
      return Diagnostic{std::string("Triton metadata: '") + key + "' is " + std::to_string(value) + ", not in " +
                        std::to_string(low) + ".." + std::to_string(high)};
    out = value;
    return {};
  };

  const boost::json::value* name = object->if_contains("name");
  if (!name) return Diagnostic{"Triton metadata: 'name' is missing"};
  if (!name->is_string()) return Diagnostic{"Triton metadata: 'name' is not a string"};
  m.name = std::string(name->get_string());

  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  constexpr std::int64_t size_max = std::numeric_limits<std::int64_t>::max();
  std::int64_t num_warps = m.num_warps, num_ctas = m.num_ctas, shared = m.shared_bytes;
  if (auto s = integer("num_warps", true, 1, 32, num_warps); !s) return s.error();
  if (auto s = integer("num_ctas", false, 1, int_max, num_ctas); !s) return s.error();
  if (auto s = integer("shared", true, 0, int_max, shared); !s) return s.error();
  if (auto s = integer("global_scratch_size", false, 0, size_max, m.global_scratch_bytes); !s) return s.error();
  if (auto s = integer("global_scratch_align", false, 1, size_max, m.global_scratch_align); !s) return s.error();
  if (auto s = integer("profile_scratch_size", false, 0, size_max, m.profile_scratch_bytes); !s) return s.error();
  if (auto s = integer("profile_scratch_align", false, 1, size_max, m.profile_scratch_align); !s) return s.error();
  m.num_warps = static_cast<int>(num_warps);
  m.num_ctas = static_cast<int>(num_ctas);
  m.shared_bytes = static_cast<int>(shared);
  if (auto s = validate(m); !s) return s.error();
  return m;
}

}  // namespace wrapir::cuda
