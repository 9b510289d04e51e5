//===- AffineCoefficients.cpp - Linear terms of index maps ----------------===//
#include "AffineCoefficients.h"
#include "tessel/Indexing/IndexingMap.h"

namespace tessel {

std::optional<int64_t> coefficientOf(mlir::AffineExpr expr,
                                     mlir::AffineExpr variable) {
  if (expr == variable)
    return 1;
  switch (expr.getKind()) {
  case mlir::AffineExprKind::Constant:
  case mlir::AffineExprKind::DimId:
  case mlir::AffineExprKind::SymbolId:
    return 0;
  case mlir::AffineExprKind::Add: {
    auto add = llvm::cast<mlir::AffineBinaryOpExpr>(expr);
    auto l = coefficientOf(add.getLHS(), variable);
    auto r = coefficientOf(add.getRHS(), variable);
    if (!l || !r)
      return std::nullopt;
    return *l + *r;
  }
  case mlir::AffineExprKind::Mul: {
    auto mul = llvm::cast<mlir::AffineBinaryOpExpr>(expr);
    auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(mul.getRHS());
    if (!c)
      return std::nullopt;
    auto l = coefficientOf(mul.getLHS(), variable);
    if (!l)
      return std::nullopt;
    return *l * c.getValue();
  }
  default: {
    // floordiv, ceildiv, mod: fine when the variable does not occur.
    bool occurs = false;
    expr.walk([&](mlir::AffineExpr e) { occurs |= e == variable; });
    if (occurs)
      return std::nullopt;
    return 0;
  }
  }
}

mlir::AffineExpr operandVariable(const IndexingMap &map, int64_t position) {
  mlir::MLIRContext *context = map.getAffineMap().getContext();
  int64_t dims = map.getNumDims();
  return position < dims ? mlir::getAffineDimExpr(position, context)
                         : mlir::getAffineSymbolExpr(position - dims, context);
}

} // namespace tessel
