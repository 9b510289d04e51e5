//===- AffineCoefficients.h - Linear terms of affine expressions -*- C++
//-*-===//
//
// Private to lib/Codegen: what the passes that vectorize accesses ask of an
// indexing map's result.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_TRANSFORMS_AFFINECOEFFICIENTS_H
#define TESSEL_LIB_CODEGEN_TRANSFORMS_AFFINECOEFFICIENTS_H

#include "mlir/IR/AffineExpr.h"

#include <cstdint>
#include <optional>

namespace tessel {

/// The coefficient of `variable` (a dim or symbol) in `expr` when `expr` is
/// linear in it (`variable` does not appear under floordiv, mod or in a
/// product of variables), or nullopt. 0 when it does not appear.
std::optional<int64_t> coefficientOf(mlir::AffineExpr expr,
                                     mlir::AffineExpr variable);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_TRANSFORMS_AFFINECOEFFICIENTS_H
