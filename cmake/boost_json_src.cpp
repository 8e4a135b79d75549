// Boost.JSON compiled into this build, for machines with Boost's headers and
// no Boost.JSON library (see CMakeLists.txt, wrapir::json).
#include <boost/json/src.hpp>
