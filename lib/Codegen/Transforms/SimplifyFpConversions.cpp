//===- SimplifyFpConversions.cpp - -tessel-simplify-fp-conversions --------===//
//
// XLA's default numerics (xla_allow_excess_precision): a bf16 or f16 value
// computed in f32 and widened again for the next op keeps its f32 value,
//
//   %r = arith.truncf %x {tessel.excess_precision} : f32 to bf16
//   %y = arith.extf %r : bf16 to f32      ->   %y is %x
//
// so a chain of narrow ops rounds once, where it is stored. Only the
// roundings the emitter marks as such (after an op) go; a convert's
// rounding stays, since the HLO asks for it (XLA:CPU keeps it too). Off by
// default: the evaluator rounds after every op, and without this pass the
// compiled code is bit-exact to it (`tessel run --excess-precision` turns it
// on).
//
// A round trip stays where the f32 value is one of narrow values already:
// the emitter's maximum or minimum (compares and selects of widened values,
// the AND or OR of their bits for signed zeros). Its rounding changes
// nothing but a NaN's quiet bit, which the last rounding sets anyway, and
// with it the chain keeps the shape -tessel-vectorize-partials folds on the
// bits (Zen 5, one thread: the bf16 row max of bf16[8192,4096] with
// --excess-precision 2.5-2.65 -> 2.4 ms, as without it).
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/APFloat.h"

namespace tessel {
namespace {

/// Whether `v` (f32) is by construction a value of `narrow` widened: a
/// widening from it, a constant it holds exactly, a select of such values,
/// or the bits of such values combined by AND or OR (whose low bits stay
/// zero). `depth` bounds the walk.
bool isNarrowValue(mlir::Value v, mlir::Type narrow, int depth = 8) {
  if (depth == 0)
    return false;
  mlir::Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (auto ext = llvm::dyn_cast<mlir::arith::ExtFOp>(def))
    return ext.getIn().getType() == narrow;
  if (auto select = llvm::dyn_cast<mlir::arith::SelectOp>(def))
    return isNarrowValue(select.getTrueValue(), narrow, depth - 1) &&
           isNarrowValue(select.getFalseValue(), narrow, depth - 1);
  if (auto constant = llvm::dyn_cast<mlir::arith::ConstantFloatOp>(def)) {
    llvm::APFloat value = constant.value();
    bool lost = false;
    value.convert(llvm::cast<mlir::FloatType>(narrow).getFloatSemantics(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
    return !lost && !value.isNaN();
  }
  if (auto cast = llvm::dyn_cast<mlir::arith::BitcastOp>(def)) {
    mlir::Operation *bits = cast.getIn().getDefiningOp();
    if (!bits || !llvm::isa<mlir::arith::AndIOp, mlir::arith::OrIOp>(bits))
      return false;
    return llvm::all_of(bits->getOperands(), [&](mlir::Value operand) {
      auto from = operand.getDefiningOp<mlir::arith::BitcastOp>();
      return from && from.getIn().getType() == v.getType() &&
             isNarrowValue(from.getIn(), narrow, depth - 1);
    });
  }
  return false;
}

struct SimplifyFpConversionsPass
    : public mlir::PassWrapper<SimplifyFpConversionsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SimplifyFpConversionsPass)
  llvm::StringRef getArgument() const final {
    return "tessel-simplify-fp-conversions";
  }
  llvm::StringRef getDescription() const final {
    return "Keep f32 values across truncf/extf round trips (excess "
           "precision, XLA's default)";
  }
  void runOnOperation() override {
    llvm::SmallVector<mlir::arith::ExtFOp> widenings;
    getOperation().walk(
        [&](mlir::arith::ExtFOp op) { widenings.push_back(op); });
    for (mlir::arith::ExtFOp ext : widenings) {
      auto trunc = ext.getIn().getDefiningOp<mlir::arith::TruncFOp>();
      if (!trunc || trunc.getIn().getType() != ext.getType() ||
          !trunc->hasAttr(kExcessPrecisionAttr) ||
          isNarrowValue(trunc.getIn(), trunc.getType()))
        continue;
      ext.replaceAllUsesWith(trunc.getIn());
      ext.erase();
      if (trunc->use_empty())
        trunc.erase();
    }
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createSimplifyFpConversionsPass() {
  return std::make_unique<SimplifyFpConversionsPass>();
}

} // namespace tessel
