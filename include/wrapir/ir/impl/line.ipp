#pragma once
/// \file
/// Definitions of <wrapir/ir/line.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/ir/line.hpp>

#include <string_view>
#include <variant>

namespace wrapir::ir {

// Out of line in separate mode: `index()` needs the variant over every kind
// instantiated, which a translation unit that only names `Line` is spared.
WRAPIR_DECL std::string_view kind_name(const Line& l) noexcept { return line_kind_names[l.index()]; }

}  // namespace wrapir::ir
