//===- AffineCoefficients.h - Linear terms of index maps --------*- C++ -*-===//
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

class IndexingMap;

/// The coefficient of `variable` (a dim or symbol) in `expr` when `expr` is
/// linear in it (`variable` does not appear under floordiv, mod or in a
/// product of variables), or nullopt. 0 when it does not appear.
std::optional<int64_t> coefficientOf(mlir::AffineExpr expr,
                                     mlir::AffineExpr variable);

/// The dim or symbol of `map` that its operand number `position` (dims
/// first, then symbols, as apply_indexing takes them) binds.
mlir::AffineExpr operandVariable(const IndexingMap &map, int64_t position);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_TRANSFORMS_AFFINECOEFFICIENTS_H
