//===- FoldNanConstants.cpp - -tessel-fold-nan-constants
//-------------------===//
//
// An addition, subtraction, multiplication or division of two constants
// whose result is a NaN is folded here as the CPU computes it, before the
// canonicalizer folds it as APFloat does. The two differ in the NaN's sign:
// x86's default NaN (0/0, inf - inf, -inf / -inf) has its sign bit set,
// APFloat's has it clear. The evaluator computes on the CPU, and so does a
// kernel whose operands are not constants; a `compare` with
// `type=TOTALORDER` sees the sign (random fusion seed 281):
//
//   %a = arith.constant 0xFF80 : bf16            (-inf)
//   %x = arith.extf %a : bf16 to f32
//   %q = arith.divf %x, %x : f32      ->   %q = arith.constant 0xFFC00000 : f32
//
// Widenings of constants (`extf`) are folded too, so that a bf16 or f16
// constant reaches the f32 operation as a constant. Everything else is left
// to the canonicalizer, which folds non-NaN results to the same bits.
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <optional>

namespace tessel {
namespace {

/// The value of `value` when it is a scalar float constant.
std::optional<llvm::APFloat> constantOf(mlir::Value value) {
  mlir::FloatAttr attr;
  if (!mlir::matchPattern(value, mlir::m_Constant(&attr)))
    return std::nullopt;
  return attr.getValue();
}

/// `op` (arith.addf/subf/mulf/divf) of `a` and `b` computed by this CPU
/// (volatile, so that the C++ compiler does not fold it either); nothing
/// for any other op.
template <typename T> std::optional<T> onTheCpu(mlir::Operation *op, T a, T b) {
  volatile T x = a, y = b;
  if (llvm::isa<mlir::arith::AddFOp>(op))
    return x + y;
  if (llvm::isa<mlir::arith::SubFOp>(op))
    return x - y;
  if (llvm::isa<mlir::arith::MulFOp>(op))
    return x * y;
  if (llvm::isa<mlir::arith::DivFOp>(op))
    return x / y;
  return std::nullopt;
}

/// `op` computed by this CPU when it is an arithmetic op above of two f32
/// or f64 constants and its result is a NaN.
std::optional<llvm::APFloat> nanOnTheCpu(mlir::Operation *op) {
  if (!llvm::isa<mlir::arith::AddFOp, mlir::arith::SubFOp, mlir::arith::MulFOp,
                 mlir::arith::DivFOp>(op))
    return std::nullopt;
  std::optional<llvm::APFloat> a = constantOf(op->getOperand(0));
  std::optional<llvm::APFloat> b = constantOf(op->getOperand(1));
  if (!a || !b)
    return std::nullopt;
  mlir::Type type = op->getResult(0).getType();
  if (type.isF32()) {
    std::optional<float> r =
        onTheCpu(op, a->convertToFloat(), b->convertToFloat());
    if (r && std::isnan(*r))
      return llvm::APFloat(*r);
  } else if (type.isF64()) {
    std::optional<double> r =
        onTheCpu(op, a->convertToDouble(), b->convertToDouble());
    if (r && std::isnan(*r))
      return llvm::APFloat(*r);
  }
  return std::nullopt;
}

struct FoldNanConstantsPass
    : public mlir::PassWrapper<FoldNanConstantsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FoldNanConstantsPass)
  llvm::StringRef getArgument() const final {
    return "tessel-fold-nan-constants";
  }
  llvm::StringRef getDescription() const final {
    return "Fold float arithmetic of constants whose result is a NaN as the "
           "CPU computes it (the NaN's sign), before the canonicalizer";
  }
  void runOnOperation() override {
    // Operands come before their users within a block: one walk folds a
    // chain.
    getOperation().walk([](mlir::Operation *op) {
      mlir::OpBuilder b(op);
      if (auto ext = llvm::dyn_cast<mlir::arith::ExtFOp>(op)) {
        // A NaN is left alone: converting it, APFloat would quiet a
        // signaling one, which tessel's widening (a shift) does not.
        std::optional<llvm::APFloat> value = constantOf(ext.getIn());
        auto type = llvm::dyn_cast<mlir::FloatType>(ext.getType());
        if (!value || value->isNaN() || !type)
          return;
        bool lost = false;
        value->convert(type.getFloatSemantics(),
                       llvm::APFloat::rmNearestTiesToEven, &lost);
        auto constant = b.create<mlir::arith::ConstantOp>(
            op->getLoc(), b.getFloatAttr(type, *value));
        ext.replaceAllUsesWith(constant.getResult());
        ext.erase();
        return;
      }
      std::optional<llvm::APFloat> nan = nanOnTheCpu(op);
      if (!nan)
        return;
      mlir::Type type = op->getResult(0).getType();
      auto constant = b.create<mlir::arith::ConstantOp>(
          op->getLoc(), b.getFloatAttr(type, *nan));
      op->getResult(0).replaceAllUsesWith(constant.getResult());
      op->erase();
    });
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createFoldNanConstantsPass() {
  return std::make_unique<FoldNanConstantsPass>();
}

} // namespace tessel
