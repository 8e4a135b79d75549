// The wrapir tool's reading of an exporter's tensor file (`wrapir run`,
// `wrapir run-cpp`): the scalar inputs the exporter writes into the
// safetensors metadata as `{"scalars": "{\"arg2_1\": 8}"}`.
#pragma once

#include "cli.hpp"

#include <wrapir/io/safetensors.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::cli {

/// The metadata's scalars in file order (the exporter names them by graph
/// input, `arg0_1`, which need not be the symbol's name).
inline std::vector<std::pair<std::string, std::int64_t>> scalars_of(const io::TensorFile& file, std::string_view path) {
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

}  // namespace wrapir::cli
