//===- LowerIndexing.cpp - -tessel-lower-indexing -------------------------===//
//
// tessel.apply_indexing becomes arith on index values. floordiv and mod
// round toward negative infinity; where the domain shows the dividend is
// never negative (the usual case: indices), they become plain unsigned
// division and remainder by a constant, which LLVM turns into multiplies
// and shifts:
//
//   (th_x, bl_x) -> (bl_x floordiv 512, bl_x mod 512, th_x)
//   %0 = arith.divui %bl, %c512
//   %1 = arith.remui %bl, %c512
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"
#include "tessel/Indexing/Simplifier.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace tessel {
namespace {

namespace arith = mlir::arith;

class ExprEmitter {
public:
  ExprEmitter(mlir::OpBuilder &b, mlir::Location loc, const IndexingMap &map,
              mlir::ValueRange dims, mlir::ValueRange symbols)
      : b(b), loc(loc), ranges(map), dims(dims), symbols(symbols) {}

  mlir::Value emit(mlir::AffineExpr expr) {
    switch (expr.getKind()) {
    case mlir::AffineExprKind::Constant:
      return constant(llvm::cast<mlir::AffineConstantExpr>(expr).getValue());
    case mlir::AffineExprKind::DimId:
      return dims[llvm::cast<mlir::AffineDimExpr>(expr).getPosition()];
    case mlir::AffineExprKind::SymbolId:
      return symbols[llvm::cast<mlir::AffineSymbolExpr>(expr).getPosition()];
    default:
      break;
    }
    auto binary = llvm::cast<mlir::AffineBinaryOpExpr>(expr);
    mlir::Value lhs = emit(binary.getLHS());
    mlir::Value rhs = emit(binary.getRHS());
    bool nonNegative = ranges.computeRange(binary.getLHS()).lower >= 0;
    switch (expr.getKind()) {
    case mlir::AffineExprKind::Add:
      return b.create<arith::AddIOp>(loc, lhs, rhs);
    case mlir::AffineExprKind::Mul:
      return b.create<arith::MulIOp>(loc, lhs, rhs);
    case mlir::AffineExprKind::FloorDiv:
      if (nonNegative)
        return b.create<arith::DivUIOp>(loc, lhs, rhs);
      return b.create<arith::FloorDivSIOp>(loc, lhs, rhs);
    case mlir::AffineExprKind::CeilDiv:
      if (nonNegative)
        return b.create<arith::CeilDivUIOp>(loc, lhs, rhs);
      return b.create<arith::CeilDivSIOp>(loc, lhs, rhs);
    case mlir::AffineExprKind::Mod: {
      if (nonNegative)
        return b.create<arith::RemUIOp>(loc, lhs, rhs);
      // remsi rounds toward zero; move a negative remainder up by rhs.
      mlir::Value r = b.create<arith::RemSIOp>(loc, lhs, rhs);
      mlir::Value negative = b.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::slt, r, constant(0));
      return b.create<arith::SelectOp>(loc, negative,
                                       b.create<arith::AddIOp>(loc, r, rhs), r);
    }
    default:
      llvm_unreachable("not an affine expression kind");
    }
  }

private:
  mlir::Value constant(int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v);
  }
  mlir::OpBuilder &b;
  mlir::Location loc;
  RangeEvaluator ranges;
  mlir::ValueRange dims, symbols;
};

struct LowerIndexingPass
    : public mlir::PassWrapper<LowerIndexingPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerIndexingPass)
  llvm::StringRef getArgument() const final { return "tessel-lower-indexing"; }
  llvm::StringRef getDescription() const final {
    return "Lower tessel.apply_indexing to arith";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect>();
  }
  void runOnOperation() override {
    llvm::SmallVector<ApplyIndexingOp> ops;
    getOperation().walk([&](ApplyIndexingOp op) { ops.push_back(op); });
    for (ApplyIndexingOp op : ops) {
      mlir::OpBuilder b(op);
      const IndexingMap &map = op.getIndexingMap();
      ExprEmitter emitter(b, op.getLoc(), map, op.getDims(), op.getSymbols());
      llvm::SmallVector<mlir::Value> results;
      for (mlir::AffineExpr expr : map.getAffineMap().getResults())
        results.push_back(emitter.emit(expr));
      op.replaceAllUsesWith(results);
      op.erase();
    }
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createLowerIndexingPass() {
  return std::make_unique<LowerIndexingPass>();
}

} // namespace tessel
