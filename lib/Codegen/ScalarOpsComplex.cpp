//===- ScalarOpsComplex.cpp - c64 and c128 elementwise ops ----------------===//
//
// A c64 (c128) element is a `complex<f32>` (`complex<f64>`) value: tensors
// hold interleaved (re, im) pairs, and the ops here take the parts apart
// with complex.re / complex.im, compute on them with arith, and put the
// result together with complex.create (-tessel-lower-to-llvm turns the three
// into LLVM struct operations). The formulas are the evaluator's
// (EvaluatorComplex.cpp), in the same precision:
//
//   add, subtract, negate    per part                        bit-exact
//   multiply                 (ac - bd) + (ad + bc)i          bit-exact
//   divide                   Smith's algorithm, same branch  bit-exact
//   compare EQ / NE          both parts equal (ordered)      exact
//   real, imag, complex      the parts                       exact
//   convert                  a real becomes the real part    bit-exact
//   bitcast-convert          the pair's bits (re low)        bit-exact
//   abs                      hypotf / hypot                  bit-exact (CPU)
//   sign                     z / hypot(z) in double          bit-exact (CPU)
//   exp, ..., power          the evaluator's own functions   bit-exact (CPU)
//
// abs and sign call the C library's hypot (libdevice's on the GPU, within 2
// ulp of it in f64, 3 in f32: CUDA's documented bounds). The transcendental
// ops (exp, exponential-minus-one, log, log-plus-one, sqrt, rsqrt, tanh,
// sine, cosine, tan, logistic) and power call the evaluator's functions
// through ComplexRuntime.h, in double, rounded to the part type: on the
// CPU they agree with the evaluator bit for bit; the GPU has no such
// library and refuses them (-tessel-lower-to-llvm names the op).
//
//===----------------------------------------------------------------------===//
#include "ComplexRuntime.h"
#include "ElementalEmitter.h"
#include "ScalarOps.h"
#include "tessel/Dialect/ErrorDiagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessel {

using mlir::Value;
namespace arith = mlir::arith;

namespace {

/// The part type of a complex storage type (f32 or f64).
mlir::Type partType(Value z) {
  return llvm::cast<mlir::ComplexType>(z.getType()).getElementType();
}

} // namespace

Value ScalarOpEmitter::realPart(Value z) {
  return b.create<mlir::complex::ReOp>(loc, z);
}

Value ScalarOpEmitter::imagPart(Value z) {
  return b.create<mlir::complex::ImOp>(loc, z);
}

Value ScalarOpEmitter::makeComplex(Value re, Value im) {
  return b.create<mlir::complex::CreateOp>(
      loc, mlir::ComplexType::get(re.getType()), re, im);
}

mlir::func::CallOp ScalarOpEmitter::callExternal(llvm::StringRef name,
                                                 mlir::ValueRange args,
                                                 mlir::TypeRange results,
                                                 llvm::StringRef what,
                                                 mlir::Location at) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<mlir::ModuleOp>();
  if (!module.lookupSymbol(name)) {
    mlir::OpBuilder top(module.getBodyRegion());
    auto func = top.create<mlir::func::FuncOp>(
        loc, name,
        mlir::FunctionType::get(b.getContext(), args.getTypes(), results));
    func.setPrivate();
  }
  auto call = b.create<mlir::func::CallOp>(at, name, results, args);
  // -tessel-lower-to-llvm names the op when the GPU cannot call it.
  call->setAttr(kComplexOpAttr, b.getStringAttr(what));
  return call;
}

mlir::FailureOr<Value> ScalarOpEmitter::complexOp(
    const HloInstruction &instruction, mlir::ValueRange args,
    llvm::ArrayRef<PrimitiveType> argTypes, PrimitiveType resultType) {
  HloOpcode op = instruction.opcode();
  // At the instruction's line: the GPU's refusal of a call names it.
  mlir::Location at = locationOf(instruction, loc);
  std::string what = std::string(hloOpcodeName(op)) + " of " +
                     std::string(primitiveTypeName(
                         isComplex(resultType) ? resultType : argTypes[0]));
  switch (op) {
  case HloOpcode::Complex:
    return makeComplex(args[0], args[1]);
  case HloOpcode::Real:
    return realPart(args[0]);
  case HloOpcode::Imag:
    return imagPart(args[0]);
  case HloOpcode::Convert:
    return convert(args[0], argTypes[0], resultType);
  case HloOpcode::BitcastConvert: {
    // The same bits: through an integer of the whole width.
    mlir::Type toType = getStorageType(resultType, b.getContext());
    if (bitWidth(argTypes[0]) != bitWidth(resultType))
      return fail("bitcast-convert between types of different widths is not "
                  "supported by the compiler yet");
    Value bits =
        isComplex(argTypes[0])
            ? complexToBits(args[0])
            : Value(b.create<arith::BitcastOp>(
                  loc, b.getIntegerType(bitWidth(argTypes[0])), args[0]));
    if (isComplex(resultType))
      return complexFromBits(bits, toType);
    if (bits.getType() == toType)
      return bits;
    return Value(b.create<arith::BitcastOp>(loc, toType, bits));
  }
  case HloOpcode::Select:
    return Value(b.create<arith::SelectOp>(loc, args[0], args[1], args[2]));
  case HloOpcode::Compare: {
    ComparisonDirection d = instruction.attributes().comparisonDirection;
    if (d != ComparisonDirection::Eq && d != ComparisonDirection::Ne)
      return fail("compare of " + std::string(primitiveTypeName(argTypes[0])) +
                  " has only directions EQ and NE");
    // EQ: both parts equal (ordered); NE is its negation (unordered).
    bool eq = d == ComparisonDirection::Eq;
    auto p = eq ? arith::CmpFPredicate::OEQ : arith::CmpFPredicate::UNE;
    Value re =
        b.create<arith::CmpFOp>(loc, p, realPart(args[0]), realPart(args[1]));
    Value im =
        b.create<arith::CmpFOp>(loc, p, imagPart(args[0]), imagPart(args[1]));
    return eq ? Value(b.create<arith::AndIOp>(loc, re, im))
              : Value(b.create<arith::OrIOp>(loc, re, im));
  }
  default:
    break;
  }

  if (isElementwiseBinary(op)) {
    Value a = realPart(args[0]), bi = imagPart(args[0]);
    Value c = realPart(args[1]), d = imagPart(args[1]);
    switch (op) {
    case HloOpcode::Add:
      return makeComplex(b.create<arith::AddFOp>(loc, a, c),
                         b.create<arith::AddFOp>(loc, bi, d));
    case HloOpcode::Subtract:
      return makeComplex(b.create<arith::SubFOp>(loc, a, c),
                         b.create<arith::SubFOp>(loc, bi, d));
    case HloOpcode::Multiply:
      return makeComplex(
          b.create<arith::SubFOp>(loc, b.create<arith::MulFOp>(loc, a, c),
                                  b.create<arith::MulFOp>(loc, bi, d)),
          b.create<arith::AddFOp>(loc, b.create<arith::MulFOp>(loc, a, d),
                                  b.create<arith::MulFOp>(loc, bi, c)));
    case HloOpcode::Divide: {
      // Smith's algorithm: |c| >= |d| (false for a NaN) divides by c, else
      // by d. Both branches are computed and one selected: floating-point
      // division does not trap.
      Value cBig = b.create<arith::CmpFOp>(
          loc, arith::CmpFPredicate::OGE, b.create<mlir::math::AbsFOp>(loc, c),
          b.create<mlir::math::AbsFOp>(loc, d));
      auto mul = [&](Value x, Value y) {
        return b.create<arith::MulFOp>(loc, x, y);
      };
      auto add = [&](Value x, Value y) {
        return b.create<arith::AddFOp>(loc, x, y);
      };
      auto sub = [&](Value x, Value y) {
        return b.create<arith::SubFOp>(loc, x, y);
      };
      auto div = [&](Value x, Value y) {
        return b.create<arith::DivFOp>(loc, x, y);
      };
      Value r1 = div(d, c), den1 = add(c, mul(d, r1));
      Value re1 = div(add(a, mul(bi, r1)), den1);
      Value im1 = div(sub(bi, mul(a, r1)), den1);
      Value r2 = div(c, d), den2 = add(mul(c, r2), d);
      Value re2 = div(add(mul(a, r2), bi), den2);
      Value im2 = div(sub(mul(bi, r2), a), den2);
      return makeComplex(b.create<arith::SelectOp>(loc, cBig, re1, re2),
                         b.create<arith::SelectOp>(loc, cBig, im1, im2));
    }
    case HloOpcode::Power: {
      mlir::Type f64 = b.getF64Type();
      llvm::SmallVector<Value> wide;
      for (Value v : {a, bi, c, d})
        wide.push_back(v.getType() == f64
                           ? v
                           : Value(b.create<arith::ExtFOp>(loc, f64, v)));
      auto call =
          callExternal(kComplexPowerFunction, wide, {f64, f64}, what, at);
      return fromDoubleParts(call.getResult(0), call.getResult(1),
                             partType(args[0]));
    }
    default:
      return fail(what + " is not supported (the evaluator defines add, "
                         "subtract, multiply, divide and power)");
    }
  }

  if (isElementwiseUnary(op)) {
    Value z = args[0];
    Value re = realPart(z), im = imagPart(z);
    mlir::Type part = partType(z);
    mlir::Type f64 = b.getF64Type();
    switch (op) {
    case HloOpcode::Negate:
      return makeComplex(b.create<arith::NegFOp>(loc, re),
                         b.create<arith::NegFOp>(loc, im));
    case HloOpcode::Abs:
      return callExternal(part.isF32() ? "hypotf" : "hypot", {re, im}, {part},
                          what, at)
          .getResult(0);
    case HloOpcode::Sign: {
      // z / |z| in double (z itself when |z| = 0), rounded to the parts.
      Value wr =
          part == f64 ? re : Value(b.create<arith::ExtFOp>(loc, f64, re));
      Value wi =
          part == f64 ? im : Value(b.create<arith::ExtFOp>(loc, f64, im));
      Value m = callExternal("hypot", {wr, wi}, {f64}, what, at).getResult(0);
      Value isZero = b.create<arith::CmpFOp>(
          loc, arith::CmpFPredicate::OEQ, m,
          b.create<arith::ConstantOp>(loc, b.getFloatAttr(f64, 0.0)));
      Value sr = b.create<arith::SelectOp>(loc, isZero, wr,
                                           b.create<arith::DivFOp>(loc, wr, m));
      Value si = b.create<arith::SelectOp>(loc, isZero, wi,
                                           b.create<arith::DivFOp>(loc, wi, m));
      return fromDoubleParts(sr, si, part);
    }
    default:
      break;
    }
    if (!complexRuntimeSupports(op))
      return fail(what + " is not supported (the evaluator defines negate, "
                         "abs, sign, exponential, exponential-minus-one, log, "
                         "log-plus-one, sqrt, rsqrt, tanh, sine, cosine, tan "
                         "and logistic)");
    Value wr = part == f64 ? re : Value(b.create<arith::ExtFOp>(loc, f64, re));
    Value wi = part == f64 ? im : Value(b.create<arith::ExtFOp>(loc, f64, im));
    Value code = b.create<arith::ConstantOp>(
        loc, b.getI32IntegerAttr(static_cast<int32_t>(op)));
    auto call = callExternal(kComplexUnaryFunction, {code, wr, wi}, {f64, f64},
                             what, at);
    return fromDoubleParts(call.getResult(0), call.getResult(1), part);
  }
  return fail(what + " is not supported by the compiler");
}

Value ScalarOpEmitter::complexToBits(Value z) {
  mlir::Type part = partType(z);
  unsigned bits = part.getIntOrFloatBitWidth();
  mlir::Type half = b.getIntegerType(bits), whole = b.getIntegerType(2 * bits);
  auto widened = [&](Value v) -> Value {
    return b.create<arith::ExtUIOp>(loc, whole,
                                    b.create<arith::BitcastOp>(loc, half, v));
  };
  Value high = b.create<arith::ShLIOp>(
      loc, widened(imagPart(z)),
      b.create<arith::ConstantOp>(loc, b.getIntegerAttr(whole, bits)));
  return b.create<arith::OrIOp>(loc, widened(realPart(z)), high);
}

Value ScalarOpEmitter::complexFromBits(Value x, mlir::Type complexType) {
  mlir::Type part = llvm::cast<mlir::ComplexType>(complexType).getElementType();
  unsigned bits = part.getIntOrFloatBitWidth();
  mlir::Type half = b.getIntegerType(bits);
  auto partOf = [&](Value v) -> Value {
    return b.create<arith::BitcastOp>(loc, part,
                                      b.create<arith::TruncIOp>(loc, half, v));
  };
  Value high = b.create<arith::ShRUIOp>(
      loc, x,
      b.create<arith::ConstantOp>(loc, b.getIntegerAttr(x.getType(), bits)));
  return makeComplex(partOf(x), partOf(high));
}

Value ScalarOpEmitter::fromDoubleParts(Value re, Value im, mlir::Type part) {
  if (part.isF64())
    return makeComplex(re, im);
  return makeComplex(b.create<arith::TruncFOp>(loc, part, re),
                     b.create<arith::TruncFOp>(loc, part, im));
}

mlir::FailureOr<Value>
ScalarOpEmitter::convertComplex(Value x, PrimitiveType from, PrimitiveType to) {
  if (!isComplex(to))
    return fail("convert from " + std::string(primitiveTypeName(from)) +
                " to " + std::string(primitiveTypeName(to)) +
                " is not supported (the evaluator does not define it: use "
                "real, imag or abs)");
  mlir::Type part = to == PrimitiveType::C64 ? mlir::Type(b.getF32Type())
                                             : mlir::Type(b.getF64Type());
  auto resize = [&](Value v) -> Value {
    if (v.getType() == part)
      return v;
    if (v.getType().getIntOrFloatBitWidth() < part.getIntOrFloatBitWidth())
      return b.create<arith::ExtFOp>(loc, part, v);
    return b.create<arith::TruncFOp>(loc, part, v);
  };
  if (isComplex(from)) // c64 <-> c128: each part rounded
    return makeComplex(resize(realPart(x)), resize(imagPart(x)));
  // A real value becomes the real part, through double as the evaluator
  // (a float is exact there; an integer rounds to double, then to f32).
  Value re;
  mlir::Type f64 = b.getF64Type();
  if (isFloat(from)) {
    mlir::FailureOr<Value> d = convert(x, from, PrimitiveType::F64);
    if (mlir::failed(d))
      return mlir::failure();
    re = *d;
  } else if (isSignedInteger(from)) {
    re = b.create<arith::SIToFPOp>(loc, f64, x);
  } else {
    re = b.create<arith::UIToFPOp>(loc, f64, x);
  }
  re = resize(re);
  Value zero = b.create<arith::ConstantOp>(loc, b.getFloatAttr(part, 0.0));
  return makeComplex(re, zero);
}

} // namespace tessel
