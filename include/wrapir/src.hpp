#pragma once
/// \file
/// The definitions of separately compiled mode (see <wrapir/detail/config.hpp>):
/// include this in exactly one translation unit compiled with
/// `WRAPIR_SEPARATE_COMPILATION` defined. The CMake target `wrapir::compiled`
/// does it for you.

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#error "<wrapir/src.hpp> is for separately compiled mode: define WRAPIR_SEPARATE_COMPILATION"
#endif

#include <wrapir/detail/config.hpp>

// One line per heavy header that has moved its definitions to an .ipp:
#include <wrapir/expr/impl/expr.ipp>
#include <wrapir/expr/impl/ops.ipp>
#include <wrapir/expr/impl/eval.ipp>
#include <wrapir/expr/impl/compile.ipp>
#include <wrapir/expr/impl/query.ipp>
#include <wrapir/expr/impl/simplify.ipp>
#include <wrapir/expr/impl/solve.ipp>
#include <wrapir/expr/impl/bounds.ipp>
#include <wrapir/expr/impl/print_python.ipp>
#include <wrapir/expr/impl/print_cpp.ipp>
#include <wrapir/expr/impl/parse.ipp>
#include <wrapir/ir/impl/builder.ipp>
#include <wrapir/ir/impl/line.ipp>
#include <wrapir/ir/impl/program.ipp>
#include <wrapir/ir/impl/stats.ipp>
#include <wrapir/io/impl/json.ipp>
#include <wrapir/emit/impl/python.ipp>
#include <wrapir/ir/impl/verify.ipp>
#include <wrapir/pass/impl/arena.ipp>
#include <wrapir/pass/impl/pools.ipp>
#include <wrapir/pass/impl/symbolic_placement.ipp>
