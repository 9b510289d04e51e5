//===- SplatConstant.h - A constant of a scalar or vector type --*- C++ -*-===//
//
// Private to lib/Codegen: the patterns that expand an op into scalar or
// vector code (bf16 rounding, f32 exp, NaN tests on bits, extremes on
// bits) need their constants in the op's own shape.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_TRANSFORMS_SPLATCONSTANT_H
#define TESSEL_LIB_CODEGEN_TRANSFORMS_SPLATCONSTANT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace tessel {

/// `element` (an attribute of `type`'s element type) as a constant of
/// `type`: itself for a scalar type, in every lane for a vector type.
inline mlir::Value splatConstant(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Type type, mlir::TypedAttr element) {
  if (auto vector = llvm::dyn_cast<mlir::VectorType>(type))
    element = mlir::DenseElementsAttr::get(vector, element);
  return b.create<mlir::arith::ConstantOp>(loc, element);
}

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_TRANSFORMS_SPLATCONSTANT_H
