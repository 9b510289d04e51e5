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
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessel {
namespace {

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
          !trunc->hasAttr(kExcessPrecisionAttr))
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
