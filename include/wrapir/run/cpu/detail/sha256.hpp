#pragma once
/// \file
/// SHA-256 for kernel identities, from OpenSSL's libcrypto loaded at run
/// time (as wrapir loads the CUDA driver): a well-kept implementation with
/// no link-time dependency, so that a binary including the kernel cache
/// links and starts on a machine without OpenSSL's development files.
///
/// Why not the project's own hashes: `detail::hash_mix` is per-process and
/// `run/detail/stable_hash.hpp` is 64-bit FNV-1a, for which collisions are
/// easy to construct. A kernel identity decides which shared object is
/// loaded and *run*; a collision would silently run another kernel, so it
/// needs a cryptographic hash.
///
/// Thread safety: the library is loaded once (a function-local static);
/// `sha256` may be called from any thread.

#include <wrapir/diagnostic.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <dlfcn.h>

namespace wrapir::run::cpu::detail {

using Sha256Digest = std::array<std::uint8_t, 32>;

struct Libcrypto {
  using EvpSha256 = const void* (*)();
  using EvpDigest = int (*)(const void*, std::size_t, unsigned char*, unsigned int*, const void*, void*);
  EvpSha256 evp_sha256 = nullptr;
  EvpDigest evp_digest = nullptr;
  std::string error{};
};

[[nodiscard]] inline const Libcrypto& libcrypto() {
  static const Libcrypto lib = [] {
    Libcrypto l;
    void* handle = nullptr;
    for (const char* name : {"libcrypto.so.3", "libcrypto.so"}) {
      handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) break;
    }
    if (handle == nullptr) {
      l.error = "cannot load OpenSSL's libcrypto (libcrypto.so.3), which computes kernel identities (SHA-256)";
      return l;
    }
    l.evp_sha256 = reinterpret_cast<Libcrypto::EvpSha256>(::dlsym(handle, "EVP_sha256"));
    l.evp_digest = reinterpret_cast<Libcrypto::EvpDigest>(::dlsym(handle, "EVP_Digest"));
    if (l.evp_sha256 == nullptr || l.evp_digest == nullptr) l.error = "libcrypto lacks EVP_sha256 or EVP_Digest";
    return l;  // never unloaded: the digests are needed for the process's life
  }();
  return lib;
}

/// SHA-256 of `bytes`.
[[nodiscard]] inline Result<Sha256Digest> sha256(std::string_view bytes) {
  const Libcrypto& lib = libcrypto();
  if (!lib.error.empty()) return Diagnostic{lib.error};
  Sha256Digest out{};
  unsigned int size = 0;
  if (lib.evp_digest(bytes.data(), bytes.size(), out.data(), &size, lib.evp_sha256(), nullptr) != 1 ||
      size != out.size())
    return Diagnostic{"libcrypto's EVP_Digest failed to compute a SHA-256"};
  return out;
}

/// Lowercase hexadecimal of a digest (64 digits).
[[nodiscard]] inline std::string hex(const Sha256Digest& digest) {
  static constexpr std::string_view digits = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (const std::uint8_t b : digest) {
    out += digits[b >> 4];
    out += digits[b & 0xf];
  }
  return out;
}

/// Builds the text that is hashed: fields are length-prefixed, so that
/// ("ab", "c") and ("a", "bc") differ.
class HashInput {
 public:
  HashInput& add(std::string_view field) {
    text_ += std::to_string(field.size());
    text_ += ':';
    text_ += field;
    text_ += '\n';
    return *this;
  }
  [[nodiscard]] const std::string& text() const noexcept { return text_; }

 private:
  std::string text_{};
};

}  // namespace wrapir::run::cpu::detail
