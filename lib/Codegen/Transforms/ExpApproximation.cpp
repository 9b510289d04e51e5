//===- ExpApproximation.cpp - f32 exp for the CPU -------------------------===//
//
// See ExpApproximation.h.
//
//===----------------------------------------------------------------------===//
#include "ExpApproximation.h"
#include "SplatConstant.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

namespace tessel {
namespace {

using mlir::Value;

/// q(r) = (e^r - 1 - r) / r^2 on [0, ln 2], lowest degree first: fitted in
/// double precision by reweighted least squares on Chebyshev nodes,
/// weighted so that the error of 1 + r + r^2 q(r) is relative to e^r, then
/// rounded to f32. With the reduction below, 1 ulp at most against the
/// correctly rounded exp over every f32 with a normal result that was tried
/// (8 million spread over [-87.34, 88.72], and every bf16 value widened).
constexpr float kQuotient[] = {0x1.fffffap-2f,  0x1.555634p-3f,
                               0x1.553b72p-5f,  0x1.128752p-7f,
                               0x1.562a2cp-10f, 0x1.209868p-12f};
/// ln 2 = kLn2High + kLn2Low, kLn2High with 16 significant bits, so that
/// k * kLn2High is exact for every k the clamp allows.
constexpr float kLn2High = 0x1.62e4p-1f;
constexpr float kLn2Low = 0x1.7f7d1cp-20f;
constexpr float kLog2E = 0x1.715476p+0f;
/// floor(-88 log2 e) = -127: 2^k is then 0 (exponent field 0), which makes
/// the results that would be subnormal 0. floor(88.8 log2 e) = 128: 2^k is
/// +inf, and so is the result.
constexpr float kLowest = -88.0f, kHighest = 88.8f;
/// 1.5 * 2^23: adding an integer k of magnitude below 2^22 leaves k in the
/// low mantissa bits (two's complement).
constexpr float kShifter = 0x1.8p23f;

bool isF32(mlir::Type type) { return mlir::getElementTypeOrSelf(type).isF32(); }

/// select(cmpf uno (a, a), a, exp) where exp's argument is a or -a: the
/// elemental emitter's NaN test around exp (ScalarOps.cpp), which the
/// approximation below passes a NaN through without.
bool isNaNTestAround(mlir::arith::SelectOp select, mlir::math::ExpOp exp) {
  if (select.getFalseValue() != exp.getResult())
    return false;
  auto test = select.getCondition().getDefiningOp<mlir::arith::CmpFOp>();
  if (!test || test.getPredicate() != mlir::arith::CmpFPredicate::UNO ||
      test.getLhs() != test.getRhs() || select.getTrueValue() != test.getLhs())
    return false;
  Value a = test.getLhs(), argument = exp.getOperand();
  if (argument == a)
    return true;
  auto negation = argument.getDefiningOp<mlir::arith::NegFOp>();
  return negation && negation.getOperand() == a;
}

struct ExpF32 : mlir::OpRewritePattern<mlir::math::ExpOp> {
  // Ahead of MLIR's ExpApproximation (benefit 1).
  ExpF32(mlir::MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  mlir::LogicalResult
  matchAndRewrite(mlir::math::ExpOp op,
                  mlir::PatternRewriter &rewriter) const override {
    mlir::Type type = op.getType();
    if (!isF32(type))
      return rewriter.notifyMatchFailure(op, "not f32");
    mlir::Location loc = op.getLoc();
    auto vector = llvm::dyn_cast<mlir::VectorType>(type);
    mlir::Type i32 = rewriter.getI32Type();
    mlir::Type bitsType = vector ? mlir::Type(vector.clone(i32)) : i32;
    auto f = [&](float value) {
      return splatConstant(rewriter, loc, type,
                           rewriter.getF32FloatAttr(value));
    };
    auto i = [&](int32_t value) {
      return splatConstant(rewriter, loc, bitsType,
                           rewriter.getIntegerAttr(i32, value));
    };
    using P = mlir::arith::CmpFPredicate;
    // select(x < c, c, x) and select(x > c, c, x): a NaN compares false and
    // is kept (x86's maxps/minps with c first, which LLVM makes of them).
    auto clamp = [&](Value x, P predicate, float bound) -> Value {
      Value c = f(bound);
      Value out = rewriter.create<mlir::arith::CmpFOp>(loc, predicate, x, c);
      return rewriter.create<mlir::arith::SelectOp>(loc, out, c, x);
    };
    Value x = clamp(op.getOperand(), P::OLT, kLowest);
    x = clamp(x, P::OGT, kHighest);
    Value k = rewriter.create<mlir::math::FloorOp>(
        loc, rewriter.create<mlir::arith::MulFOp>(loc, x, f(kLog2E)));
    Value r = rewriter.create<mlir::math::FmaOp>(loc, k, f(-kLn2High), x);
    r = rewriter.create<mlir::math::FmaOp>(loc, k, f(-kLn2Low), r);
    Value q = f(kQuotient[std::size(kQuotient) - 1]);
    for (size_t j = std::size(kQuotient) - 1; j-- > 0;)
      q = rewriter.create<mlir::math::FmaOp>(loc, q, r, f(kQuotient[j]));
    Value p = rewriter.create<mlir::math::FmaOp>(loc, q, r, f(1.0f));
    p = rewriter.create<mlir::math::FmaOp>(loc, p, r, f(1.0f));
    // 2^k: k's low 9 bits from the shifted sum into the exponent field,
    // plus the bias (k + 127 in [0, 255] for the clamped range).
    Value shifted = rewriter.create<mlir::arith::AddFOp>(loc, k, f(kShifter));
    Value bits =
        rewriter.create<mlir::arith::BitcastOp>(loc, bitsType, shifted);
    Value exponent = rewriter.create<mlir::arith::AddIOp>(
        loc, rewriter.create<mlir::arith::ShLIOp>(loc, bits, i(23)),
        i(127 << 23));
    Value scale = rewriter.create<mlir::arith::BitcastOp>(loc, type, exponent);
    Value result = rewriter.create<mlir::arith::MulFOp>(loc, p, scale);
    // A NaN argument is a NaN result already.
    for (mlir::Operation *user : llvm::to_vector(op->getUsers()))
      if (auto select = llvm::dyn_cast<mlir::arith::SelectOp>(user);
          select && isNaNTestAround(select, op))
        rewriter.replaceOp(select, result);
    rewriter.replaceOp(op, result);
    return mlir::success();
  }
};

} // namespace

void populateExpApproximationPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<ExpF32>(patterns.getContext());
}

} // namespace tessel
