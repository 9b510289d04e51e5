//===- ScalarOps.h - HLO's elementwise ops on scalars -----------*- C++ -*-===//
//
// Private to lib/Codegen. The arith/math code of one elementwise HLO op on
// scalar values of the storage types (getStorageType), with the evaluator's
// semantics: bf16/f16 widen to f32, compute, and round back once; integers
// wrap and follow XLA for division by zero, overflow and wide shifts.
// c64 and c128 are complex<f32> and complex<f64> values, computed on their
// parts (ScalarOpsComplex.cpp lists the ops and their precision).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_SCALAROPS_H
#define TESSEL_LIB_CODEGEN_SCALAROPS_H

#include "tessel/Hlo/HloInstruction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <string>

namespace tessel {

class ScalarOpEmitter {
public:
  ScalarOpEmitter(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  /// The elementwise op `instruction` on `args` (of the element types
  /// `argTypes`), giving an element of `resultType`.
  mlir::FailureOr<mlir::Value> emit(const HloInstruction &instruction,
                                    mlir::ValueRange args,
                                    llvm::ArrayRef<PrimitiveType> argTypes,
                                    PrimitiveType resultType);
  mlir::FailureOr<mlir::Value> unary(HloOpcode op, mlir::Value x,
                                     PrimitiveType type);
  mlir::FailureOr<mlir::Value> binary(HloOpcode op, mlir::Value x,
                                      mlir::Value y, PrimitiveType type);
  mlir::FailureOr<mlir::Value> compare(const HloAttributes &attributes,
                                       mlir::Value x, mlir::Value y,
                                       PrimitiveType type);
  /// XLA's reduce-precision (exponent_bits, mantissa_bits) of a float, bit
  /// for bit as the evaluator.
  mlir::FailureOr<mlir::Value>
  reducePrecision(const HloInstruction &instruction, mlir::Value x,
                  PrimitiveType type);
  /// convert's semantics: float -> int saturates, NaN -> 0; x -> pred is
  /// x != 0.
  mlir::FailureOr<mlir::Value> convert(mlir::Value x, PrimitiveType from,
                                       PrimitiveType to);

  /// A c64/c128 value as its bits (i64/i128: the real part's in the low
  /// half, as the interleaved pair in memory), and back.
  mlir::Value complexToBits(mlir::Value z);
  mlir::Value complexFromBits(mlir::Value bits, mlir::Type complexType);

  const std::string &error() const { return errorMessage; }

private:
  /// c64/c128 ops (ScalarOpsComplex.cpp): an op with a complex operand or
  /// result.
  mlir::FailureOr<mlir::Value> complexOp(const HloInstruction &instruction,
                                         mlir::ValueRange args,
                                         llvm::ArrayRef<PrimitiveType> argTypes,
                                         PrimitiveType resultType);
  /// convert to a complex type (a real value becomes the real part).
  mlir::FailureOr<mlir::Value> convertComplex(mlir::Value x, PrimitiveType from,
                                              PrimitiveType to);
  mlir::Value realPart(mlir::Value z);
  mlir::Value imagPart(mlir::Value z);
  mlir::Value makeComplex(mlir::Value re, mlir::Value im);
  /// The complex value of f64 parts rounded to `part` (f32 or f64).
  mlir::Value fromDoubleParts(mlir::Value re, mlir::Value im, mlir::Type part);
  /// A call of the external function `name` (declared in the module on
  /// first use), marked with `what` (e.g. "exponential of c64"), at the
  /// location `at` (the instruction's line).
  mlir::func::CallOp callExternal(llvm::StringRef name, mlir::ValueRange args,
                                  mlir::TypeRange results, llvm::StringRef what,
                                  mlir::Location at);
  /// bf16/f16 widen to f32, the f8 types (stored as i8) are decoded to
  /// f32 (exactly); others unchanged.
  mlir::Value widen(mlir::Value x, PrimitiveType type);
  /// The f8 bits (i8) of the f32 or f64 value `x`, rounded to nearest even
  /// as FloatTypes.h's encodeFloat: overflow to infinity or NaN, NaN to the
  /// type's NaN.
  mlir::Value encodeF8(mlir::Value x, PrimitiveType type);
  /// The exact f32 value of the f8 bits `x` (decodeFloat).
  mlir::Value decodeF8(mlir::Value x, PrimitiveType type);
  /// Back from widen()'s type to the storage type. The rounding after an
  /// op is marked kExcessPrecisionAttr (--excess-precision may skip it);
  /// a convert's is not: the HLO asks for it.
  mlir::Value narrow(mlir::Value x, PrimitiveType type,
                     bool excessPrecisionAllowed = true);
  mlir::Value floatUnary(HloOpcode op, mlir::Value x);
  /// `widened`: x and y are bf16/f16 values widened to f32.
  mlir::Value floatBinary(HloOpcode op, mlir::Value x, mlir::Value y,
                          bool widened = false);
  mlir::FailureOr<mlir::Value> integerUnary(HloOpcode op, mlir::Value x,
                                            PrimitiveType type);
  mlir::FailureOr<mlir::Value> integerBinary(HloOpcode op, mlir::Value x,
                                             mlir::Value y, PrimitiveType type);
  mlir::Value integerPower(mlir::Value base, mlir::Value exponent);
  /// compare with type=TOTALORDER of two floats in their storage type.
  mlir::Value totalOrderCompare(ComparisonDirection direction, mlir::Value x,
                                mlir::Value y);
  mlir::Value intConst(mlir::Type type, int64_t value);
  mlir::Value floatConst(mlir::Type type, double value);
  mlir::LogicalResult fail(const std::string &message);

  mlir::OpBuilder &b;
  mlir::Location loc;
  std::string errorMessage;
};

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_SCALAROPS_H
