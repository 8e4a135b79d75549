// expect-error: line_kind_without_effects<LineWithoutEffects>
// A line kind that does not declare its effects must not compile, and the
// error must name the kind (ir/line.hpp checks every kind of LineKinds the
// same way).
#include <wrapir/ir/line.hpp>

#include <boost/mp11/list.hpp>

struct LineWithoutEffects {
  static constexpr std::string_view kind = "LineWithoutEffects";
  wrapir::ir::BufferId buffer{};
};

static_assert(wrapir::ir::detail::all_declare_effects(
    boost::mp11::mp_list<wrapir::ir::Allocate, LineWithoutEffects>{}));

int main() {}
