//===- LowerToLlvm.cpp - -tessel-lower-to-llvm ----------------------------===//
//
// The last pass: everything to the llvm dialect, in four steps.
//
//   1. f32 transcendentals (tanh, exp, log, erf, ...) become MLIR's
//      polynomial approximations: branch-free, so LLVM vectorizes them
//      (bf16/f16 compute in f32 already); bf16 <-> f32 conversions expand
//      to integer code (Bf16Rounding.h: the evaluator's rounding bit for
//      bit), which every x86 CPU runs and LLVM vectorizes; floor/ceil
//      division by constants
//      expands to arith.
//   2. What is left that LLVM has no intrinsic for (f64 tanh, erf, tan,
//      cbrt, atan2, log1p, expm1) becomes calls to the C library.
//   3. scf becomes cf.
//   4. arith, math, func and cf become llvm; index is i64.
//
//===----------------------------------------------------------------------===//
#include "Bf16Rounding.h"
#include "tessel/Codegen/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessel {
namespace {

struct LowerToLlvmPass
    : public mlir::PassWrapper<LowerToLlvmPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerToLlvmPass)
  llvm::StringRef getArgument() const final { return "tessel-lower-to-llvm"; }
  llvm::StringRef getDescription() const final {
    return "Lower arith, math, scf and func to the llvm dialect";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::LLVM::LLVMDialect, mlir::cf::ControlFlowDialect,
                    mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *context = &getContext();

    mlir::RewritePatternSet expand(context);
    mlir::populateMathPolynomialApproximationPatterns(expand);
    populateBf16RoundingPatterns(expand);
    mlir::arith::populateExpandBFloat16Patterns(expand);
    mlir::arith::populateCeilFloorDivExpandOpsPatterns(expand);
    if (mlir::failed(
            mlir::applyPatternsAndFoldGreedily(module, std::move(expand))))
      return signalPassFailure();

    mlir::ConversionTarget libmTarget(*context);
    libmTarget.markUnknownOpDynamicallyLegal(
        [](mlir::Operation *) { return true; });
    libmTarget.addIllegalOp<mlir::math::TanhOp, mlir::math::ErfOp,
                            mlir::math::TanOp, mlir::math::CbrtOp,
                            mlir::math::AtanOp, mlir::math::Atan2Op,
                            mlir::math::Log1pOp, mlir::math::ExpM1Op>();
    mlir::RewritePatternSet libm(context);
    mlir::populateMathToLibmConversionPatterns(libm);
    if (mlir::failed(
            mlir::applyPartialConversion(module, libmTarget, std::move(libm))))
      return signalPassFailure();

    mlir::ConversionTarget cfTarget(*context);
    cfTarget.addIllegalDialect<mlir::scf::SCFDialect>();
    cfTarget.markUnknownOpDynamicallyLegal(
        [](mlir::Operation *) { return true; });
    mlir::RewritePatternSet cf(context);
    mlir::populateSCFToControlFlowConversionPatterns(cf);
    if (mlir::failed(
            mlir::applyPartialConversion(module, cfTarget, std::move(cf))))
      return signalPassFailure();

    mlir::LLVMConversionTarget target(*context);
    target.addLegalOp<mlir::ModuleOp>();
    mlir::LLVMTypeConverter converter(context);
    mlir::RewritePatternSet patterns(context);
    mlir::arith::populateArithToLLVMConversionPatterns(converter, patterns);
    mlir::populateMathToLLVMConversionPatterns(converter, patterns);
    mlir::populateFuncToLLVMConversionPatterns(converter, patterns);
    mlir::cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    mlir::populateVectorToLLVMConversionPatterns(converter, patterns);
    if (mlir::failed(
            mlir::applyFullConversion(module, target, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createLowerToLlvmPass() {
  return std::make_unique<LowerToLlvmPass>();
}

} // namespace tessel
