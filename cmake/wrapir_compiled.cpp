// The one translation unit of wrapir::compiled (separately compiled mode,
// see <wrapir/detail/config.hpp>): the definitions of every heavy header,
// compiled once. WRAPIR_SEPARATE_COMPILATION comes from the target's PUBLIC
// compile definitions, so every user of wrapir::compiled sees declarations only.
#include <wrapir/src.hpp>
