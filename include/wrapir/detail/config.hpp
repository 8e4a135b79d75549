#pragma once
/// \file
/// Build modes.
///
/// Header-only is the default: every function is defined in the header that
/// declares it (as `inline`), and a program just includes what it uses.
///
/// Separate compilation is opt-in, as in {fmt} and Boost.Beast: a program
/// that defines `WRAPIR_SEPARATE_COMPILATION` in every translation unit gets
/// only declarations from the heavy headers (the verifier, the loaders, the
/// planners' bodies, the emitters), and links their definitions, compiled
/// once from `<wrapir/src.hpp>` (the CMake target `wrapir::compiled` does
/// both). Templates stay in the headers in both modes.
///
/// Convention for a heavy header `<dir>/name.hpp`: it declares its
/// non-template functions with `WRAPIR_DECL` and, at its end,
///
///     #if !defined(WRAPIR_SEPARATE_COMPILATION)
///     #include <wrapir/<dir>/impl/name.ipp>
///     #endif
///
/// where `impl/name.ipp` defines them (again with `WRAPIR_DECL`); src.hpp
/// includes every `.ipp`.

#if defined(WRAPIR_SEPARATE_COMPILATION)
#define WRAPIR_DECL
#else
#define WRAPIR_DECL inline
#endif
