//===- LaneOps.h - Ops that run the same on lanes as on scalars -*- C++ -*-===//
//
// Private to lib/Codegen: the elementwise ops that -tessel-vectorize-partials
// (a row's partial results as lanes) and -tessel-jam-reduction-loops (rows
// as lanes) may run on vectors in place of scalars without changing a bit.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_TRANSFORMS_LANEOPS_H
#define TESSEL_LIB_CODEGEN_TRANSFORMS_LANEOPS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/TypeUtilities.h"

namespace tessel {

/// Whether `op` computes in each lane of vectors what it computes on
/// scalars, exactly, and is lowered alike for both: sums, differences,
/// products, negations, absolute values, widenings, compares, selects,
/// bitcasts, AND and OR, maximum and minimum (llvm.maximum/minimum either
/// way), and of the roundings only those to bf16 (integer code) and f16
/// (LLVM's fptrunc); no math approximations, no fast-math flags.
inline bool isLaneWise(mlir::Operation *op) {
  if (auto trunc = llvm::dyn_cast<mlir::arith::TruncFOp>(op)) {
    mlir::Type to = mlir::getElementTypeOrSelf(trunc.getType());
    if (!(to.isBF16() || to.isF16()) || trunc.getRoundingmodeAttr())
      return false;
  } else if (!llvm::isa<mlir::arith::AddFOp, mlir::arith::SubFOp,
                        mlir::arith::MulFOp, mlir::arith::NegFOp,
                        mlir::arith::ExtFOp, mlir::math::AbsFOp,
                        mlir::arith::CmpFOp, mlir::arith::SelectOp,
                        mlir::arith::BitcastOp, mlir::arith::AndIOp,
                        mlir::arith::OrIOp, mlir::arith::MaximumFOp,
                        mlir::arith::MinimumFOp>(op)) {
    return false;
  }
  auto fmf = llvm::dyn_cast<mlir::arith::ArithFastMathInterface>(op);
  mlir::arith::FastMathFlagsAttr flags =
      fmf ? fmf.getFastMathFlagsAttr() : nullptr;
  return !flags || flags.getValue() == mlir::arith::FastMathFlags::none;
}

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_TRANSFORMS_LANEOPS_H
