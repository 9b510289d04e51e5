//===- Bf16Rounding.cpp - f32 -> bf16 rounding as integer code ------------===//
#include "Bf16Rounding.h"
#include "SplatConstant.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

namespace tessel {
namespace {

namespace arith = mlir::arith;

/// Whether every NaN `v` can hold has 16 zero low bits (and so is a bf16
/// NaN widened, or came from one); see the header. Looks a few ops deep.
bool nanHasZeroLowBits(mlir::Value v, int depth = 0) {
  if (depth > 8)
    return false;
  mlir::Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (auto ext = llvm::dyn_cast<arith::ExtFOp>(def))
    return mlir::getElementTypeOrSelf(ext.getIn().getType()).isBF16();
  if (auto constant = llvm::dyn_cast<arith::ConstantOp>(def)) {
    auto attr = llvm::dyn_cast<mlir::FloatAttr>(constant.getValue());
    return attr && !attr.getValue().isNaN();
  }
  return false;
}

/// Whether `v` is the result of an op whose NaN results are quiet and carry
/// the payload of an operand (or the default NaN), with such operands.
bool roundsLikeItsNaN(mlir::Value v) {
  mlir::Operation *def = v.getDefiningOp();
  if (!def ||
      !llvm::isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp>(
          def))
    return false;
  for (mlir::Value operand : def->getOperands())
    if (!nanHasZeroLowBits(operand) && !roundsLikeItsNaN(operand))
      return false;
  return true;
}

/// arith.truncf f32 -> bf16 as integer code (the CPU) or, with `native`,
/// as LLVM's fptrunc to bfloat, which NVPTX emits as cvt.rn.bf16.f32 from
/// sm_80 (round to nearest even, subnormals kept) and expands for older
/// GPUs; a NaN becomes the canonical NaN.
struct TruncFToBf16 : public mlir::OpRewritePattern<arith::TruncFOp> {
  TruncFToBf16(mlir::MLIRContext *context, bool native)
      : OpRewritePattern(context, /*benefit=*/2), native(native) {}
  bool native;

  mlir::LogicalResult
  matchAndRewrite(arith::TruncFOp op,
                  mlir::PatternRewriter &rewriter) const override {
    mlir::Type from = mlir::getElementTypeOrSelf(op.getIn().getType());
    mlir::Type to = mlir::getElementTypeOrSelf(op.getType());
    if (!from.isF32() || !to.isBF16())
      return rewriter.notifyMatchFailure(op, "not f32 -> bf16");
    mlir::Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type(), i16 = rewriter.getI16Type();
    if (auto vector = llvm::dyn_cast<mlir::VectorType>(op.getType())) {
      i32 = vector.clone(i32);
      i16 = vector.clone(i16);
    }
    if (native) {
      mlir::Value narrow =
          rewriter.create<mlir::LLVM::FPTruncOp>(loc, op.getType(), op.getIn());
      // bf16 values are their bits (i16) once lowered: the bits of the
      // result, seen as bf16 again until then.
      mlir::Value bits =
          rewriter.create<mlir::LLVM::BitcastOp>(loc, i16, narrow);
      rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), bits);
      return mlir::success();
    }
    auto constant = [&](int64_t value) -> mlir::Value {
      return splatConstant(
          rewriter, loc, i32,
          rewriter.getIntegerAttr(mlir::getElementTypeOrSelf(i32), value));
    };
    mlir::Value bits = rewriter.create<arith::BitcastOp>(loc, i32, op.getIn());
    mlir::Value high = rewriter.create<arith::ShRUIOp>(loc, bits, constant(16));
    mlir::Value lsb = rewriter.create<arith::AndIOp>(loc, high, constant(1));
    mlir::Value bias =
        rewriter.create<arith::AddIOp>(loc, lsb, constant(0x7fff));
    // A carry out of the mantissa raises the exponent: still the nearest
    // (an overflow reaches infinity, as it should).
    mlir::Value rounded = rewriter.create<arith::ShRUIOp>(
        loc, rewriter.create<arith::AddIOp>(loc, bits, bias), constant(16));
    if (!roundsLikeItsNaN(op.getIn())) {
      mlir::Value quietNaN =
          rewriter.create<arith::OrIOp>(loc, high, constant(0x40));
      mlir::Value isNaN = rewriter.create<arith::CmpFOp>(
          loc, arith::CmpFPredicate::UNO, op.getIn(), op.getIn());
      rounded = rewriter.create<arith::SelectOp>(loc, isNaN, quietNaN, rounded);
    }
    mlir::Value narrow = rewriter.create<arith::TruncIOp>(loc, i16, rounded);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), narrow);
    return mlir::success();
  }
};

} // namespace

mlir::Type bf16AsInteger(mlir::Type type) {
  auto vector = llvm::dyn_cast<mlir::VectorType>(type);
  mlir::Type element = vector ? vector.getElementType() : type;
  if (!element.isBF16())
    return nullptr;
  mlir::Type i16 = mlir::IntegerType::get(type.getContext(), 16);
  return vector ? mlir::Type(mlir::VectorType::get(vector.getShape(), i16))
                : i16;
}

void populateNativeBf16RoundingPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<TruncFToBf16>(patterns.getContext(), /*native=*/true);
}

void populateBf16RoundingPatterns(mlir::RewritePatternSet &patterns) {
  // Benefit 2: before the generic expansion of the other bf16 conversions.
  patterns.add<TruncFToBf16>(patterns.getContext(), /*native=*/false);
}

} // namespace tessel
