#pragma once
/// \file
/// Definitions of <wrapir/ir/line.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/ir/line.hpp>

#include <string_view>
#include <variant>

namespace wrapir::ir {

// A program's body is a vector of lines, each as large as the largest kind:
// at a million lines every byte here is a megabyte, and every pass that
// walks the body reads it all. Rare and large members are boxed
// (ir/box.hpp) so that no kind exceeds 96 bytes; a kind that grows past it
// should box what most of its lines leave empty rather than raise this
// bound. (Here, not in ir/line.hpp: `sizeof` instantiates the variant over
// every kind, which a separately compiled translation unit that only names
// `Line` is spared.)
static_assert(sizeof(void*) != 8 || sizeof(Line) <= 104,
              "a line kind grew past 96 bytes, and with it every line of every program: box its rare members "
              "(ir/box.hpp) rather than raise this bound");

// Out of line in separate mode: `index()` needs the variant over every kind
// instantiated, which a translation unit that only names `Line` is spared.
WRAPIR_DECL std::string_view kind_name(const Line& l) noexcept { return line_kind_names[l.index()]; }

}  // namespace wrapir::ir
