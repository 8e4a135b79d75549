#pragma once
/// \file
/// Umbrella for wrapir's core: everything a compiler needs to build, check,
/// plan and print wrapper programs, with no CUDA and no JSON headers (include
/// `wrapir/cuda/...` and `wrapir/io/...` for those): the symbolic expression
/// library, the IR (value types, line kinds, programs, the builder) and the
/// emitter driver.

#include <wrapir/diagnostic.hpp>
#include <wrapir/expr.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/stats.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/emit/emit.hpp>

namespace wrapir {
// The most used expression types, re-exported.
using expr::Context;
using expr::Expr;
}  // namespace wrapir
