//===- ScalarOps.cpp - HLO's elementwise ops on scalars -------------------===//
#include "ScalarOps.h"

#include "ElementalEmitter.h"
#include "tessel/Codegen/Passes.h"
#include "tessel/Hlo/FloatTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

namespace tessel {

using mlir::Value;
namespace arith = mlir::arith;
namespace math = mlir::math;

/// The f8 types: stored as i8, computed in f32 through FloatTypes.h's
/// formats.
static bool isF8(PrimitiveType type) {
  return floatFormat(type).has_value() && type != PrimitiveType::BF16 &&
         type != PrimitiveType::F16;
}

/// Floats that compute in f32 and round back after every op.
static bool isNarrowFloat(PrimitiveType type) {
  return type == PrimitiveType::BF16 || type == PrimitiveType::F16 ||
         isF8(type);
}

mlir::LogicalResult ScalarOpEmitter::fail(const std::string &message) {
  errorMessage = message;
  return mlir::failure();
}

Value ScalarOpEmitter::intConst(mlir::Type type, int64_t value) {
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(type, value));
}

Value ScalarOpEmitter::floatConst(mlir::Type type, double value) {
  return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
}

Value ScalarOpEmitter::widen(Value x, PrimitiveType type) {
  if (isF8(type))
    return decodeF8(x, type);
  if (isNarrowFloat(type))
    return b.create<arith::ExtFOp>(loc, b.getF32Type(), x);
  return x;
}

Value ScalarOpEmitter::narrow(Value x, PrimitiveType type,
                              bool excessPrecisionAllowed) {
  if (isF8(type))
    return encodeF8(x, type);
  if (!isNarrowFloat(type))
    return x;
  auto trunc =
      b.create<arith::TruncFOp>(loc, getStorageType(type, b.getContext()), x);
  if (excessPrecisionAllowed)
    trunc->setAttr(kExcessPrecisionAttr, b.getUnitAttr());
  return trunc;
}

Value ScalarOpEmitter::decodeF8(Value x, PrimitiveType type) {
  FloatFormat f = *floatFormat(type);
  int m = f.mantissaBits, e = f.exponentBits;
  mlir::Type i32 = b.getI32Type(), f32 = b.getF32Type();
  using P = arith::CmpIPredicate;
  Value bits = b.create<arith::ExtUIOp>(loc, i32, x);
  Value sign = b.create<arith::ShRUIOp>(loc, bits, intConst(i32, e + m));
  int64_t expMax = (int64_t(1) << e) - 1, mantMask = (int64_t(1) << m) - 1;
  Value exponent = b.create<arith::AndIOp>(
      loc, b.create<arith::ShRUIOp>(loc, bits, intConst(i32, m)),
      intConst(i32, expMax));
  Value mantissa = b.create<arith::AndIOp>(loc, bits, intConst(i32, mantMask));
  Value negative = b.create<arith::CmpIOp>(loc, P::ne, sign, intConst(i32, 0));
  // Normal: the same value in f32's fields.
  Value normal = b.create<arith::OrIOp>(
      loc, b.create<arith::ShLIOp>(loc, sign, intConst(i32, 31)),
      b.create<arith::OrIOp>(
          loc,
          b.create<arith::ShLIOp>(
              loc,
              b.create<arith::AddIOp>(loc, exponent,
                                      intConst(i32, 127 - f.bias)),
              intConst(i32, 23)),
          b.create<arith::ShLIOp>(loc, mantissa, intConst(i32, 23 - m))));
  Value value = b.create<arith::BitcastOp>(loc, f32, normal);
  // Subnormal: mantissa * 2^(1 - bias - m), exact in f32.
  Value magnitude = b.create<arith::MulFOp>(
      loc, b.create<arith::UIToFPOp>(loc, f32, mantissa),
      floatConst(f32, std::ldexp(1.0, 1 - f.bias - m)));
  Value subnormal = b.create<arith::SelectOp>(
      loc, negative, b.create<arith::NegFOp>(loc, magnitude), magnitude);
  value = b.create<arith::SelectOp>(
      loc, b.create<arith::CmpIOp>(loc, P::eq, exponent, intConst(i32, 0)),
      subnormal, value);
  Value nan =
      b.create<arith::SelectOp>(loc, negative, floatConst(f32, -std::nan("")),
                                floatConst(f32, std::nan("")));
  Value top =
      b.create<arith::CmpIOp>(loc, P::eq, exponent, intConst(i32, expMax));
  switch (f.nanStyle) {
  case FloatFormat::NanStyle::Ieee: {
    Value infinity = b.create<arith::SelectOp>(
        loc, negative, floatConst(f32, -INFINITY), floatConst(f32, INFINITY));
    Value isNaN =
        b.create<arith::CmpIOp>(loc, P::ne, mantissa, intConst(i32, 0));
    Value special = b.create<arith::SelectOp>(loc, isNaN, nan, infinity);
    return b.create<arith::SelectOp>(loc, top, special, value);
  }
  case FloatFormat::NanStyle::AllOnes: {
    Value isNaN = b.create<arith::AndIOp>(
        loc, top,
        b.create<arith::CmpIOp>(loc, P::eq, mantissa, intConst(i32, mantMask)));
    return b.create<arith::SelectOp>(loc, isNaN, nan, value);
  }
  case FloatFormat::NanStyle::NegativeZero:
  default: {
    Value isNaN = b.create<arith::CmpIOp>(loc, P::eq, bits,
                                          intConst(i32, int64_t(1) << (e + m)));
    return b.create<arith::SelectOp>(loc, isNaN, floatConst(f32, std::nan("")),
                                     value);
  }
  }
}

Value ScalarOpEmitter::encodeF8(Value x, PrimitiveType type) {
  FloatFormat f = *floatFormat(type);
  int m = f.mantissaBits, e = f.exponentBits;
  bool isF64 = x.getType().isF64();
  int srcMantissa = isF64 ? 52 : 23, srcBias = isF64 ? 1023 : 127;
  int srcBits = isF64 ? 64 : 32;
  mlir::Type intType = b.getIntegerType(srcBits);
  auto c = [&](int64_t v) { return intConst(intType, v); };
  using P = arith::CmpIPredicate;
  int64_t signBit = int64_t(1) << (e + m);
  int64_t expMax = (int64_t(1) << e) - 1, mantMask = (int64_t(1) << m) - 1;
  Value bits = b.create<arith::BitcastOp>(loc, intType, x);
  Value sign = b.create<arith::ShLIOp>(
      loc, b.create<arith::ShRUIOp>(loc, bits, c(srcBits - 1)), c(e + m));
  Value magnitudeBits = b.create<arith::AndIOp>(
      loc, bits, c(isF64 ? INT64_MAX : int64_t(0x7fffffff)));
  // The NaN pattern and the largest finite magnitude (encodeFloat's).
  Value nanBits;
  int64_t maxFinite;
  switch (f.nanStyle) {
  case FloatFormat::NanStyle::Ieee:
    nanBits = b.create<arith::OrIOp>(
        loc, sign, c((expMax << m) | (int64_t(1) << (m - 1))));
    maxFinite = ((expMax - 1) << m) | mantMask;
    break;
  case FloatFormat::NanStyle::AllOnes:
    nanBits = b.create<arith::OrIOp>(loc, sign, c((expMax << m) | mantMask));
    maxFinite = (expMax << m) | (mantMask - 1);
    break;
  case FloatFormat::NanStyle::NegativeZero:
  default:
    nanBits = c(signBit);
    maxFinite = (expMax << m) | mantMask;
    break;
  }
  Value overflow =
      f.hasInfinity() ? Value(b.create<arith::OrIOp>(loc, sign, c(expMax << m)))
                      : nanBits;
  // Normal results: round the source's fields to m mantissa bits (to
  // nearest, ties to even: add half a unit less one plus the last kept
  // bit), then rebias the exponent.
  int shift = srcMantissa - m;
  Value last = b.create<arith::AndIOp>(
      loc, b.create<arith::ShRUIOp>(loc, magnitudeBits, c(shift)), c(1));
  Value rounded = b.create<arith::ShRUIOp>(
      loc,
      b.create<arith::AddIOp>(
          loc, magnitudeBits,
          b.create<arith::AddIOp>(loc, c((int64_t(1) << (shift - 1)) - 1),
                                  last)),
      c(shift));
  Value normal =
      b.create<arith::SubIOp>(loc, rounded, c(int64_t(srcBias - f.bias) << m));
  // Below the smallest normal: units of the subnormal quantum, rounded to
  // nearest even (2^m carries into the smallest normal's pattern).
  int minNormal = 1 - f.bias;
  Value scaled = b.create<arith::MulFOp>(
      loc, b.create<math::AbsFOp>(loc, x),
      floatConst(x.getType(), std::ldexp(1.0, m - minNormal)));
  Value units = b.create<arith::FPToUIOp>(
      loc, intType, b.create<math::RoundEvenOp>(loc, scaled));
  Value isSubnormal =
      b.create<arith::CmpIOp>(loc, P::ult, magnitudeBits,
                              c(int64_t(minNormal + srcBias) << srcMantissa));
  Value encoded = b.create<arith::SelectOp>(loc, isSubnormal, units, normal);
  Value result = b.create<arith::OrIOp>(loc, sign, encoded);
  if (!f.hasNegativeZero())
    result = b.create<arith::SelectOp>(
        loc, b.create<arith::CmpIOp>(loc, P::eq, encoded, c(0)), c(0), result);
  result = b.create<arith::SelectOp>(
      loc, b.create<arith::CmpIOp>(loc, P::ugt, encoded, c(maxFinite)),
      overflow, result);
  Value isNaN = b.create<arith::CmpIOp>(
      loc, P::ugt, magnitudeBits,
      c(isF64 ? int64_t(0x7ff0000000000000) : int64_t(0x7f800000)));
  result = b.create<arith::SelectOp>(loc, isNaN, nanBits, result);
  return b.create<arith::TruncIOp>(loc, b.getI8Type(), result);
}

Value ScalarOpEmitter::floatUnary(HloOpcode op, Value x) {
  mlir::Type t = x.getType();
  // f32 exp, log, tanh and erf become MLIR's polynomial approximations,
  // which convert to integers on the way (2^k): for a NaN that LLVM knows
  // at compile time (inf * 0 folded from constants) the conversion is
  // poison and the folded result anything (exp came out 0). A NaN argument
  // is passed through by a select that folds before that.
  auto keepNaN = [&](Value result) -> Value {
    if (!t.isF32())
      return result;
    Value isNaN = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
    return b.create<arith::SelectOp>(loc, isNaN, x, result);
  };
  switch (op) {
  case HloOpcode::Abs:
    return b.create<math::AbsFOp>(loc, x);
  case HloOpcode::Negate:
    return b.create<arith::NegFOp>(loc, x);
  case HloOpcode::Exp:
    return keepNaN(b.create<math::ExpOp>(loc, x));
  case HloOpcode::ExponentialMinusOne:
    return b.create<math::ExpM1Op>(loc, x);
  case HloOpcode::Log: {
    if (!t.isF32())
      return b.create<math::LogOp>(loc, x);
    // The polynomial approximation reads the exponent field, so it takes a
    // subnormal for the smallest normal: scale subnormals (and zeros and
    // negatives, which keep their result) by 2^24 and subtract 24 ln 2.
    Value tiny = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x,
                                         floatConst(t, 0x1p-126));
    Value scaled = b.create<arith::SelectOp>(
        loc, tiny, b.create<arith::MulFOp>(loc, x, floatConst(t, 0x1p24)), x);
    Value log = b.create<math::LogOp>(loc, scaled);
    Value corrected = b.create<arith::SubFOp>(
        loc, log, floatConst(t, 24 * 0.693147180559945309417));
    return keepNaN(b.create<arith::SelectOp>(loc, tiny, corrected, log));
  }
  case HloOpcode::LogPlusOne:
    return b.create<math::Log1pOp>(loc, x);
  case HloOpcode::Tanh:
    return keepNaN(b.create<math::TanhOp>(loc, x));
  case HloOpcode::Logistic: {
    Value one = floatConst(t, 1.0);
    Value e =
        keepNaN(b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x)));
    return b.create<arith::DivFOp>(loc, one,
                                   b.create<arith::AddFOp>(loc, one, e));
  }
  case HloOpcode::Sqrt:
    return b.create<math::SqrtOp>(loc, x);
  case HloOpcode::Rsqrt:
    return b.create<arith::DivFOp>(loc, floatConst(t, 1.0),
                                   b.create<math::SqrtOp>(loc, x));
  case HloOpcode::Cbrt:
    return b.create<math::CbrtOp>(loc, x);
  case HloOpcode::Sine:
    return b.create<math::SinOp>(loc, x);
  case HloOpcode::Cosine:
    return b.create<math::CosOp>(loc, x);
  case HloOpcode::Tan:
    return b.create<math::TanOp>(loc, x);
  case HloOpcode::Floor:
    return b.create<math::FloorOp>(loc, x);
  case HloOpcode::Ceil:
    return b.create<math::CeilOp>(loc, x);
  case HloOpcode::RoundNearestAfz:
    return b.create<math::RoundOp>(loc, x);
  case HloOpcode::RoundNearestEven:
    return b.create<math::RoundEvenOp>(loc, x);
  case HloOpcode::Erf:
    return keepNaN(b.create<math::ErfOp>(loc, x));
  case HloOpcode::Sign: {
    // NaN and +-0 map to themselves, anything else to +-1.
    Value zero = floatConst(t, 0.0);
    Value keep =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UEQ, x, zero);
    Value one = b.create<math::CopySignOp>(loc, floatConst(t, 1.0), x);
    return b.create<arith::SelectOp>(loc, keep, x, one);
  }
  default:
    return nullptr;
  }
}

Value ScalarOpEmitter::floatBinary(HloOpcode op, Value x, Value y,
                                   bool widened) {
  mlir::Type t = x.getType();
  switch (op) {
  case HloOpcode::Add:
    return b.create<arith::AddFOp>(loc, x, y);
  case HloOpcode::Subtract:
    return b.create<arith::SubFOp>(loc, x, y);
  case HloOpcode::Multiply:
    return b.create<arith::MulFOp>(loc, x, y);
  case HloOpcode::Divide:
    return b.create<arith::DivFOp>(loc, x, y);
  case HloOpcode::Remainder: {
    // The remainder of an infinity, or by zero, is an invalid operation:
    // the C library's fmod (the evaluator's) gives the CPU's default NaN,
    // sign bit set. LLVM folds a frem by 1 into x - trunc(x) with x's sign
    // copied onto it, so +inf gave the NaN with the sign clear (random
    // fusion seed 100950, a TOTALORDER compare). A NaN made from ordered
    // operands is the default NaN here; a NaN operand still passes through.
    Value r = b.create<arith::RemFOp>(loc, x, y);
    Value madeNan = b.create<arith::AndIOp>(
        loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, r, r),
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ORD, x, y));
    return b.create<arith::SelectOp>(loc, madeNan, floatConst(t, -std::nan("")),
                                     r);
  }
  case HloOpcode::Power:
    return b.create<math::PowFOp>(loc, x, y);
  case HloOpcode::Atan2:
    return b.create<math::Atan2Op>(loc, x, y);
  case HloOpcode::Maximum:
  case HloOpcode::Minimum: {
    // The evaluator's rule: a NaN operand wins (the first one), +0 is above
    // -0: arith.maximumf/minimumf (llvm.maximum/minimum) for f32 and f64.
    // For a bf16/f16 value widened to f32 it is spelled out: LLVM narrows
    // llvm.maximum back to f16, and its x86 lowering of llvm.maximum/minimum
    // on f16 vectors drops NaNs.
    if (!widened)
      return op == HloOpcode::Maximum
                 ? Value(b.create<arith::MaximumFOp>(loc, x, y))
                 : Value(b.create<arith::MinimumFOp>(loc, x, y));
    bool max = op == HloOpcode::Maximum;
    using P = arith::CmpFPredicate;
    Value larger = b.create<arith::CmpFOp>(loc, max ? P::OGT : P::OLT, x, y);
    Value picked = b.create<arith::SelectOp>(loc, larger, x, y);
    // Equal values: the same bits, except for +0 and -0, where AND of the
    // bits gives +0 (maximum) and OR gives -0 (minimum).
    unsigned width = t.getIntOrFloatBitWidth();
    mlir::Type bits = b.getIntegerType(width);
    Value xb = b.create<arith::BitcastOp>(loc, bits, x);
    Value yb = b.create<arith::BitcastOp>(loc, bits, y);
    Value merged = max ? Value(b.create<arith::AndIOp>(loc, xb, yb))
                       : Value(b.create<arith::OrIOp>(loc, xb, yb));
    Value equal = b.create<arith::CmpFOp>(loc, P::OEQ, x, y);
    picked = b.create<arith::SelectOp>(
        loc, equal, b.create<arith::BitcastOp>(loc, t, merged), picked);
    Value yNaN = b.create<arith::CmpFOp>(loc, P::UNO, y, y);
    picked = b.create<arith::SelectOp>(loc, yNaN, y, picked);
    Value xNaN = b.create<arith::CmpFOp>(loc, P::UNO, x, x);
    return b.create<arith::SelectOp>(loc, xNaN, x, picked);
  }
  default:
    return nullptr;
  }
}

mlir::FailureOr<Value> ScalarOpEmitter::unary(HloOpcode op, Value x,
                                              PrimitiveType type) {
  if (isFloat(type)) {
    if (op == HloOpcode::IsFinite) {
      Value w = widen(x, type);
      Value inf = floatConst(w.getType(), INFINITY);
      return Value(b.create<arith::CmpFOp>(
          loc, arith::CmpFPredicate::OLT, b.create<math::AbsFOp>(loc, w), inf));
    }
    Value r = floatUnary(op, widen(x, type));
    if (!r)
      return fail(std::string(hloOpcodeName(op)) + " is not defined on " +
                  std::string(primitiveTypeName(type)));
    return narrow(r, type);
  }
  return integerUnary(op, x, type);
}

mlir::FailureOr<Value> ScalarOpEmitter::integerUnary(HloOpcode op, Value x,
                                                     PrimitiveType type) {
  mlir::Type t = x.getType();
  bool isPred = type == PrimitiveType::Pred;
  switch (op) {
  case HloOpcode::Not:
    return Value(b.create<arith::XOrIOp>(loc, x, intConst(t, -1)));
  case HloOpcode::PopulationCount:
    return Value(b.create<math::CtPopOp>(loc, x));
  case HloOpcode::CountLeadingZeros:
    return Value(b.create<math::CountLeadingZerosOp>(loc, x));
  default:
    break;
  }
  if (isPred)
    return fail(std::string(hloOpcodeName(op)) + " is not defined on pred");
  Value zero = intConst(t, 0);
  bool isSigned = isSignedInteger(type);
  switch (op) {
  case HloOpcode::Negate:
    return Value(b.create<arith::SubIOp>(loc, zero, x));
  case HloOpcode::Abs: {
    if (!isSigned)
      return x;
    Value negative =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, zero);
    return Value(b.create<arith::SelectOp>(
        loc, negative, b.create<arith::SubIOp>(loc, zero, x), x));
  }
  case HloOpcode::Sign: {
    Value one = intConst(t, 1);
    Value positive = b.create<arith::CmpIOp>(
        loc, isSigned ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::ugt,
        x, zero);
    Value r = b.create<arith::SelectOp>(loc, positive, one, zero);
    if (!isSigned)
      return r;
    Value negative =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, zero);
    return Value(b.create<arith::SelectOp>(loc, negative, intConst(t, -1), r));
  }
  default:
    return fail(std::string(hloOpcodeName(op)) + " is not defined on " +
                std::string(primitiveTypeName(type)));
  }
}

Value ScalarOpEmitter::integerPower(Value base, Value exponent) {
  // Square and multiply over the exponent's bits; a negative exponent (top
  // bit set, whatever the type's signedness) gives 1 for a base of 1 and 0
  // otherwise (the evaluator's rule).
  mlir::Type t = base.getType();
  unsigned width = t.getIntOrFloatBitWidth();
  Value lo = b.create<arith::ConstantIndexOp>(loc, 0);
  Value hi = b.create<arith::ConstantIndexOp>(loc, width);
  Value step = b.create<arith::ConstantIndexOp>(loc, 1);
  Value one = intConst(t, 1);
  auto loop = b.create<mlir::scf::ForOp>(
      loc, lo, hi, step, mlir::ValueRange{one, base},
      [&](mlir::OpBuilder &nb, mlir::Location l, Value iv,
          mlir::ValueRange acc) {
        Value shift = nb.create<arith::IndexCastOp>(l, t, iv);
        Value bit = nb.create<arith::AndIOp>(
            l, nb.create<arith::ShRUIOp>(l, exponent, shift),
            nb.create<arith::ConstantOp>(l, nb.getIntegerAttr(t, 1)));
        Value isSet = nb.create<arith::CmpIOp>(
            l, arith::CmpIPredicate::ne, bit,
            nb.create<arith::ConstantOp>(l, nb.getIntegerAttr(t, 0)));
        Value product = nb.create<arith::MulIOp>(l, acc[0], acc[1]);
        Value result = nb.create<arith::SelectOp>(l, isSet, product, acc[0]);
        Value square = nb.create<arith::MulIOp>(l, acc[1], acc[1]);
        nb.create<mlir::scf::YieldOp>(l, mlir::ValueRange{result, square});
      });
  Value result = loop.getResult(0);
  // The exponent's sign is its top bit for unsigned types too, as for the
  // evaluator (and XLA, which compares it with 0 as a signed number).
  Value zero = intConst(t, 0);
  Value negative =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, exponent, zero);
  Value baseIsOne =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, base, one);
  Value negativeResult = b.create<arith::SelectOp>(loc, baseIsOne, one, zero);
  return b.create<arith::SelectOp>(loc, negative, negativeResult, result);
}

mlir::FailureOr<Value> ScalarOpEmitter::integerBinary(HloOpcode op, Value x,
                                                      Value y,
                                                      PrimitiveType type) {
  mlir::Type t = x.getType();
  bool isSigned = isSignedInteger(type);
  bool isPred = type == PrimitiveType::Pred;
  unsigned width = t.getIntOrFloatBitWidth();
  using P = arith::CmpIPredicate;
  switch (op) {
  case HloOpcode::And:
    return Value(b.create<arith::AndIOp>(loc, x, y));
  case HloOpcode::Or:
    return Value(b.create<arith::OrIOp>(loc, x, y));
  case HloOpcode::Xor:
    return Value(b.create<arith::XOrIOp>(loc, x, y));
  case HloOpcode::Maximum:
    return isSigned ? Value(b.create<arith::MaxSIOp>(loc, x, y))
                    : Value(b.create<arith::MaxUIOp>(loc, x, y));
  case HloOpcode::Minimum:
    return isSigned ? Value(b.create<arith::MinSIOp>(loc, x, y))
                    : Value(b.create<arith::MinUIOp>(loc, x, y));
  default:
    break;
  }
  if (isPred)
    return fail(std::string(hloOpcodeName(op)) + " is not defined on pred");
  Value zero = intConst(t, 0);
  Value allOnes = intConst(t, -1);
  switch (op) {
  case HloOpcode::Add:
    return Value(b.create<arith::AddIOp>(loc, x, y));
  case HloOpcode::Subtract:
    return Value(b.create<arith::SubIOp>(loc, x, y));
  case HloOpcode::Multiply:
    return Value(b.create<arith::MulIOp>(loc, x, y));
  case HloOpcode::Divide:
  case HloOpcode::Remainder: {
    bool isDivide = op == HloOpcode::Divide;
    Value byZero = b.create<arith::CmpIOp>(loc, P::eq, y, zero);
    // Divide by 1 instead of 0 (and of -1 for INT_MIN / -1) so that the
    // division itself never traps, then select XLA's answer.
    Value safe = y;
    Value overflow;
    if (isSigned) {
      Value minValue =
          intConst(t, static_cast<int64_t>(uint64_t(1) << (width - 1)));
      overflow = b.create<arith::AndIOp>(
          loc, b.create<arith::CmpIOp>(loc, P::eq, x, minValue),
          b.create<arith::CmpIOp>(loc, P::eq, y, allOnes));
      safe = b.create<arith::SelectOp>(
          loc, b.create<arith::OrIOp>(loc, byZero, overflow), intConst(t, 1),
          y);
    } else {
      safe = b.create<arith::SelectOp>(loc, byZero, intConst(t, 1), y);
    }
    Value r;
    if (isDivide)
      r = isSigned ? Value(b.create<arith::DivSIOp>(loc, x, safe))
                   : Value(b.create<arith::DivUIOp>(loc, x, safe));
    else
      r = isSigned ? Value(b.create<arith::RemSIOp>(loc, x, safe))
                   : Value(b.create<arith::RemUIOp>(loc, x, safe));
    if (isSigned)
      // INT_MIN / -1 = INT_MIN (x / 1 gave x), INT_MIN % -1 = 0.
      r = b.create<arith::SelectOp>(loc, overflow, isDivide ? x : zero, r);
    return Value(
        b.create<arith::SelectOp>(loc, byZero, isDivide ? allOnes : x, r));
  }
  case HloOpcode::ShiftLeft:
  case HloOpcode::ShiftRightLogical:
  case HloOpcode::ShiftRightArithmetic: {
    Value widthValue = intConst(t, width);
    Value tooFar = b.create<arith::CmpIOp>(loc, P::uge, y, widthValue);
    Value safe = b.create<arith::SelectOp>(loc, tooFar, intConst(t, 0), y);
    if (op == HloOpcode::ShiftLeft)
      return Value(b.create<arith::SelectOp>(
          loc, tooFar, zero, b.create<arith::ShLIOp>(loc, x, safe)));
    if (op == HloOpcode::ShiftRightLogical)
      return Value(b.create<arith::SelectOp>(
          loc, tooFar, zero, b.create<arith::ShRUIOp>(loc, x, safe)));
    Value sign = b.create<arith::ShRSIOp>(loc, x, intConst(t, width - 1));
    return Value(b.create<arith::SelectOp>(
        loc, tooFar, sign, b.create<arith::ShRSIOp>(loc, x, safe)));
  }
  case HloOpcode::Power:
    return integerPower(x, y);
  default:
    return fail(std::string(hloOpcodeName(op)) + " is not defined on " +
                std::string(primitiveTypeName(type)));
  }
}

mlir::FailureOr<Value> ScalarOpEmitter::binary(HloOpcode op, Value x, Value y,
                                               PrimitiveType type) {
  if (isFloat(type)) {
    Value r =
        floatBinary(op, widen(x, type), widen(y, type), isNarrowFloat(type));
    if (!r)
      return fail(std::string(hloOpcodeName(op)) + " is not defined on " +
                  std::string(primitiveTypeName(type)));
    return narrow(r, type);
  }
  return integerBinary(op, x, y, type);
}

Value ScalarOpEmitter::totalOrderCompare(ComparisonDirection dir, Value x,
                                         Value y) {
  // On the storage bits, as XLA does: negative floats count down, so their
  // bits other than the sign are flipped; then a signed comparison orders
  // -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
  unsigned width = x.getType().getIntOrFloatBitWidth();
  mlir::Type intType = b.getIntegerType(width);
  auto key = [&](Value v) -> Value {
    Value bits = v.getType() == intType
                     ? v
                     : Value(b.create<arith::BitcastOp>(loc, intType, v));
    Value sign =
        b.create<arith::ShRSIOp>(loc, bits, intConst(intType, width - 1));
    Value flip = b.create<arith::ShRUIOp>(loc, sign, intConst(intType, 1));
    return b.create<arith::XOrIOp>(loc, bits, flip);
  };
  using P = arith::CmpIPredicate;
  P pred = dir == ComparisonDirection::Eq   ? P::eq
           : dir == ComparisonDirection::Ne ? P::ne
           : dir == ComparisonDirection::Lt ? P::slt
           : dir == ComparisonDirection::Le ? P::sle
           : dir == ComparisonDirection::Gt ? P::sgt
                                            : P::sge;
  return b.create<arith::CmpIOp>(loc, pred, key(x), key(y));
}

mlir::FailureOr<Value> ScalarOpEmitter::compare(const HloAttributes &attrs,
                                                Value x, Value y,
                                                PrimitiveType type) {
  ComparisonDirection dir = attrs.comparisonDirection;
  if (isFloat(type)) {
    if (attrs.comparisonType == ComparisonType::TotalOrder)
      return totalOrderCompare(dir, x, y);
    using P = arith::CmpFPredicate;
    P pred = dir == ComparisonDirection::Eq   ? P::OEQ
             : dir == ComparisonDirection::Ne ? P::UNE
             : dir == ComparisonDirection::Lt ? P::OLT
             : dir == ComparisonDirection::Le ? P::OLE
             : dir == ComparisonDirection::Gt ? P::OGT
                                              : P::OGE;
    return Value(
        b.create<arith::CmpFOp>(loc, pred, widen(x, type), widen(y, type)));
  }
  bool isSigned = attrs.comparisonType == ComparisonType::Signed ||
                  (attrs.comparisonType == ComparisonType::Default &&
                   isSignedInteger(type));
  using P = arith::CmpIPredicate;
  P pred = dir == ComparisonDirection::Eq   ? P::eq
           : dir == ComparisonDirection::Ne ? P::ne
           : dir == ComparisonDirection::Lt ? (isSigned ? P::slt : P::ult)
           : dir == ComparisonDirection::Le ? (isSigned ? P::sle : P::ule)
           : dir == ComparisonDirection::Gt ? (isSigned ? P::sgt : P::ugt)
                                            : (isSigned ? P::sge : P::uge);
  return Value(b.create<arith::CmpIOp>(loc, pred, x, y));
}

mlir::FailureOr<Value> ScalarOpEmitter::convert(Value x, PrimitiveType from,
                                                PrimitiveType to) {
  mlir::Type toType = getStorageType(to, b.getContext());
  if (from == to)
    return x;
  if (isComplex(from) || isComplex(to))
    return convertComplex(x, from, to);
  if (to == PrimitiveType::Pred) {
    if (isFloat(from)) {
      Value w = widen(x, from);
      return Value(b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, w,
                                           floatConst(w.getType(), 0.0)));
    }
    return Value(b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x,
                                         intConst(x.getType(), 0)));
  }
  if (isFloat(from) && isFloat(to)) {
    // Through f32 for bf16/f16 sources; one rounding to the target.
    Value w = widen(x, from);
    if (isF8(to)) // from f32 or f64 bits at once, NaN to the type's NaN
      return encodeF8(w, to);
    mlir::Type wideTo = isNarrowFloat(to) ? b.getF32Type() : toType;
    unsigned fromBits = w.getType().getIntOrFloatBitWidth();
    unsigned toBits = wideTo.getIntOrFloatBitWidth();
    if (fromBits < toBits)
      w = b.create<arith::ExtFOp>(loc, wideTo, w);
    else if (fromBits > toBits)
      w = b.create<arith::TruncFOp>(loc, wideTo, w);
    if (isNarrowFloat(to)) {
      // convert to bf16/f16 gives the canonical quiet NaN with the sign
      // (the evaluator encodes the value anew); arithmetic keeps payloads.
      Value isNan =
          b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, w, w);
      Value canonical = b.create<math::CopySignOp>(
          loc, floatConst(w.getType(), std::nan("")), w);
      w = b.create<arith::SelectOp>(loc, isNan, canonical, w);
    }
    return narrow(w, to, /*excessPrecisionAllowed=*/false);
  }
  if (!isFloat(from) && isFloat(to)) {
    mlir::Type wideTo = isNarrowFloat(to) ? b.getF32Type() : toType;
    Value r = isSignedInteger(from)
                  ? Value(b.create<arith::SIToFPOp>(loc, wideTo, x))
                  : Value(b.create<arith::UIToFPOp>(loc, wideTo, x));
    return narrow(r, to, /*excessPrecisionAllowed=*/false);
  }
  if (isFloat(from) && !isFloat(to)) {
    // Saturate, NaN -> 0.
    Value w = widen(x, from);
    mlir::Type ft = w.getType();
    unsigned bits = toType.getIntOrFloatBitWidth();
    bool isSigned = isSignedInteger(to);
    double lo = isSigned ? -std::ldexp(1.0, bits - 1) : 0.0;
    double hi = isSigned ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);
    int64_t minInt =
        isSigned ? static_cast<int64_t>(uint64_t(1) << (bits - 1)) : 0;
    int64_t maxInt = isSigned
                         ? static_cast<int64_t>((uint64_t(1) << (bits - 1)) - 1)
                         : -1; // all ones
    using P = arith::CmpFPredicate;
    Value tooLow = b.create<arith::CmpFOp>(loc, P::OLE, w, floatConst(ft, lo));
    Value tooHigh = b.create<arith::CmpFOp>(loc, P::OGE, w, floatConst(ft, hi));
    Value isNan = b.create<arith::CmpFOp>(loc, P::UNO, w, w);
    // Keep the conversion itself in range.
    Value safe = b.create<arith::SelectOp>(
        loc,
        b.create<arith::OrIOp>(
            loc, b.create<arith::OrIOp>(loc, tooLow, tooHigh), isNan),
        floatConst(ft, 0.0), w);
    Value r = isSigned ? Value(b.create<arith::FPToSIOp>(loc, toType, safe))
                       : Value(b.create<arith::FPToUIOp>(loc, toType, safe));
    r = b.create<arith::SelectOp>(loc, tooLow, intConst(toType, minInt), r);
    r = b.create<arith::SelectOp>(loc, tooHigh, intConst(toType, maxInt), r);
    return r;
  }
  // Integer to integer: wrap, extending by the source's signedness.
  unsigned fromBits = x.getType().getIntOrFloatBitWidth();
  unsigned toBits = toType.getIntOrFloatBitWidth();
  if (fromBits == toBits)
    return x;
  if (fromBits > toBits)
    return Value(b.create<arith::TruncIOp>(loc, toType, x));
  if (isSignedInteger(from))
    return Value(b.create<arith::ExtSIOp>(loc, toType, x));
  return Value(b.create<arith::ExtUIOp>(loc, toType, x));
}

mlir::FailureOr<Value>
ScalarOpEmitter::reducePrecision(const HloInstruction &instruction, Value x,
                                 PrimitiveType type) {
  auto attribute = [&](const char *key) -> std::optional<int64_t> {
    const std::string *text = instruction.rawAttribute(key);
    if (!text || text->empty() || text->size() > 3 ||
        text->find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    int64_t value = 0;
    for (char digit : *text)
      value = value * 10 + (digit - '0');
    return value;
  };
  std::optional<int64_t> exponentBits = attribute("exponent_bits"),
                         mantissaBits = attribute("mantissa_bits");
  if (!exponentBits || !mantissaBits || *exponentBits < 1)
    return fail("expected exponent_bits >= 1 and mantissa_bits >= 0");
  if (!isFloat(type))
    return fail("reduce-precision of " + std::string(primitiveTypeName(type)) +
                " is not supported by the compiler");
  // The evaluator's algorithm (reducePrecisionBits, EvaluatorComplex.cpp) on
  // the bits: f64 as 11 + 52 bits, every other float widened to f32 (exact),
  // reduced as 8 + 23 bits, then rounded back to its type.
  Value w = widen(x, type);
  bool isF64 = w.getType().isF64();
  int exponentWidth = isF64 ? 11 : 8, mantissaWidth = isF64 ? 52 : 23;
  mlir::Type intType = isF64 ? b.getI64Type() : b.getI32Type();
  auto c = [&](uint64_t v) {
    return intConst(intType, static_cast<int64_t>(v));
  };
  using P = arith::CmpIPredicate;
  uint64_t signMask = uint64_t(1) << (exponentWidth + mantissaWidth);
  uint64_t exponentMask = ((uint64_t(1) << exponentWidth) - 1) << mantissaWidth;
  Value original = b.create<arith::BitcastOp>(loc, intType, w);
  Value bits = original;
  if (*mantissaBits < mantissaWidth) {
    // Round to nearest even: add half an ulp of the narrow mantissa less
    // one, plus its last bit, then clear the bits below it.
    int shift = mantissaWidth - static_cast<int>(*mantissaBits);
    uint64_t lastBit = uint64_t(1) << shift;
    Value last = b.create<arith::ShRUIOp>(
        loc, b.create<arith::AndIOp>(loc, bits, c(lastBit)), c(shift));
    Value bias = b.create<arith::AddIOp>(loc, c((lastBit >> 1) - 1), last);
    bits = b.create<arith::AndIOp>(
        loc, b.create<arith::AddIOp>(loc, bits, bias), c(~(lastBit - 1)));
  }
  if (*exponentBits < exponentWidth) {
    uint64_t exponentBias = (uint64_t(1) << (exponentWidth - 1)) - 1;
    uint64_t reducedBias = (uint64_t(1) << (*exponentBits - 1)) - 1;
    Value exponent = b.create<arith::ShRUIOp>(
        loc, b.create<arith::AndIOp>(loc, bits, c(exponentMask)),
        c(mantissaWidth));
    Value sign = b.create<arith::AndIOp>(loc, bits, c(signMask));
    Value overflow = b.create<arith::CmpIOp>(loc, P::ugt, exponent,
                                             c(exponentBias + reducedBias));
    Value underflow = b.create<arith::CmpIOp>(loc, P::ule, exponent,
                                              c(exponentBias - reducedBias));
    Value infinity = b.create<arith::OrIOp>(loc, sign, c(exponentMask));
    bits = b.create<arith::SelectOp>(loc, overflow, infinity, bits);
    bits = b.create<arith::SelectOp>(loc, underflow, sign, bits);
  }
  // NaN stays NaN: itself, or (no mantissa bits left) the sign with all
  // exponent bits, an infinity.
  Value isNaN = b.create<arith::CmpIOp>(
      loc, P::ugt, b.create<arith::AndIOp>(loc, original, c(~signMask)),
      c(exponentMask));
  Value nanBits =
      *mantissaBits > 0
          ? original
          : Value(b.create<arith::OrIOp>(
                loc, b.create<arith::AndIOp>(loc, original, c(signMask)),
                c(exponentMask)));
  bits = b.create<arith::SelectOp>(loc, isNaN, nanBits, bits);
  Value r = b.create<arith::BitcastOp>(loc, w.getType(), bits);
  return narrow(r, type, /*excessPrecisionAllowed=*/false);
}

mlir::FailureOr<Value>
ScalarOpEmitter::emit(const HloInstruction &instruction, mlir::ValueRange args,
                      llvm::ArrayRef<PrimitiveType> argTypes,
                      PrimitiveType resultType) {
  HloOpcode op = instruction.opcode();
  if (isComplex(resultType) ||
      llvm::any_of(argTypes, [](PrimitiveType t) { return isComplex(t); }))
    return complexOp(instruction, args, argTypes, resultType);
  switch (op) {
  case HloOpcode::Real:
  case HloOpcode::Imag: {
    // Of a real float: itself, or zero (the evaluator's zero bits).
    if (!isFloat(argTypes[0]))
      return fail(std::string(hloOpcodeName(op)) + " of " +
                  std::string(primitiveTypeName(argTypes[0])) +
                  " is not supported (only of floats and complex)");
    if (op == HloOpcode::Real)
      return args[0];
    mlir::Type t = args[0].getType();
    return llvm::isa<mlir::FloatType>(t) ? floatConst(t, 0.0) : intConst(t, 0);
  }
  case HloOpcode::Convert:
    return convert(args[0], argTypes[0], resultType);
  case HloOpcode::BitcastConvert: {
    mlir::Type toType = getStorageType(resultType, b.getContext());
    if (args[0].getType().getIntOrFloatBitWidth() !=
        toType.getIntOrFloatBitWidth())
      return fail("bitcast-convert between types of different widths is not "
                  "supported by the compiler yet");
    if (args[0].getType() == toType) // f8 and s8/u8 are all i8
      return args[0];
    return Value(b.create<arith::BitcastOp>(loc, toType, args[0]));
  }
  case HloOpcode::ReducePrecision:
    return reducePrecision(instruction, args[0], argTypes[0]);
  case HloOpcode::Compare:
    return compare(instruction.attributes(), args[0], args[1], argTypes[0]);
  case HloOpcode::Select:
    return Value(b.create<arith::SelectOp>(loc, args[0], args[1], args[2]));
  case HloOpcode::Clamp: {
    // minimum(hi, maximum(lo, x)), as the evaluator.
    auto lowered = binary(HloOpcode::Maximum, args[0], args[1], resultType);
    if (mlir::failed(lowered))
      return mlir::failure();
    return binary(HloOpcode::Minimum, args[2], *lowered, resultType);
  }
  default:
    break;
  }
  if (isElementwiseUnary(op))
    return unary(op, args[0], argTypes[0]);
  if (isElementwiseBinary(op))
    return binary(op, args[0], args[1], argTypes[0]);
  return fail("not an elementwise op the compiler knows");
}

} // namespace tessel
