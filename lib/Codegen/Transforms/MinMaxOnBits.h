//===- MinMaxOnBits.h - Float maxima and minima on the bits -----*- C++ -*-===//
//
// Private to lib/Codegen. HLO's maximum and minimum of floats order -0
// below +0 and let a NaN win. Over a row of numbers without NaNs both are
// functions of three integer reductions of the bit patterns, each one
// instruction per vector (vpmaxsw/vpminsw/vpmaxuw, vpmaxsd/...):
//
//   smax, smin   the largest and smallest pattern read as a signed integer
//   umax         the largest pattern read as an unsigned integer
//
// Non-negative floats (sign bit clear) order as their patterns, negative
// ones the other way round, and every negative pattern is below every
// non-negative one as a signed integer and above it as an unsigned one:
//
//   maximum = smax          where smax >= 0 (a non-negative element)
//           = smin          otherwise (all negative: the smallest magnitude)
//   minimum = umax          where umax has the sign bit (a negative element:
//                           the largest magnitude)
//           = smin          otherwise (all non-negative)
//
// -0 (the sign bit alone) and +0 (0) fall into place. The same three tell
// whether a NaN was among them: a positive NaN is above +inf's pattern as a
// signed integer, a negative one above -inf's as an unsigned one. Where
// there was one, the caller runs its exact loop instead, which picks the
// NaN as the emitter's ops do (the same bits as without this).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_TRANSFORMS_MINMAXONBITS_H
#define TESSEL_LIB_CODEGEN_TRANSFORMS_MINMAXONBITS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>

namespace tessel {

/// Where a float format's sign and infinity are in its bits.
struct FloatBits {
  unsigned width = 0;
  /// +inf's pattern: every exponent bit.
  uint64_t infinity = 0;
  /// The mantissa bit that makes a NaN quiet.
  uint64_t quiet = 0;

  uint64_t sign() const { return uint64_t{1} << (width - 1); }
  /// bf16, f16 and f32; nullopt for other types.
  static std::optional<FloatBits> of(mlir::Type floatType);
};

/// The three reductions of a row's patterns (above).
struct BitExtremes {
  mlir::Value smax, smin, umax;
};

/// `value` (an integer or a vector of integers) of `type` everywhere.
mlir::Value bitsConstant(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Type type, uint64_t value);

/// `acc` after the patterns `bits` (scalar or vector, as `acc`'s).
BitExtremes stepExtremes(mlir::OpBuilder &b, mlir::Location loc,
                         const BitExtremes &acc, mlir::Value bits);

/// Whether the patterns `bits` (scalar or vector) are NaNs: their
/// magnitude above +inf's.
mlir::Value isNaNBits(mlir::OpBuilder &b, mlir::Location loc, mlir::Value bits,
                      const FloatBits &format);

/// Whether a NaN was among the patterns (i1, or a vector of i1 per lane).
mlir::Value sawNaN(mlir::OpBuilder &b, mlir::Location loc, const BitExtremes &e,
                   const FloatBits &format);

/// The maximum (`isMax`) or minimum of the patterns, which held no NaN.
mlir::Value extremeOf(mlir::OpBuilder &b, mlir::Location loc,
                      const BitExtremes &e, const FloatBits &format,
                      bool isMax);

/// The step of a row loop that carries one f32 accumulator: arith.maximumf
/// or arith.minimumf of it and an element, in either order, without
/// fast-math flags, its result read only by the yield.
struct F32MinMaxStep {
  mlir::Operation *reducer = nullptr;
  mlir::Value element;
  bool isMax = false;
};

/// `loop`'s step as an F32MinMaxStep, or nothing.
std::optional<F32MinMaxStep> matchF32MinMaxStep(mlir::scf::ForOp loop);

/// Replaces `loop`, a row loop that carries one float (`format`), by its
/// maximum (`isMax`) or minimum from `e`, the three reductions of its
/// elements and initial value, where they saw no NaN, and by `loop` itself
/// where they did: an scf.if at `b`'s insertion point.
void replaceByExtremeOrLoop(mlir::OpBuilder &b, mlir::scf::ForOp loop,
                            const BitExtremes &e, const FloatBits &format,
                            bool isMax);

/// `x` where it is beyond `extreme` (greater for a maximum, less for a
/// minimum), else `extreme`: x86's vmaxps (vminps), which keeps `extreme`
/// where either is a NaN and where the two are equal zeros; never poison.
mlir::Value selectBeyond(mlir::OpBuilder &b, mlir::Location loc, bool isMax,
                         mlir::Value x, mlir::Value extreme);

/// `value` as the arith.extf of a bf16 or f16 value to f32, or null.
mlir::arith::ExtFOp widenedHalf(mlir::Value value);

/// The operands of the emitter's maximum or minimum of two widened values.
struct WidenedMinMax {
  mlir::Value x, y;
  /// ogt with the AND of the bits (maximum: +0 above -0) or olt with the
  /// OR (minimum); false for the other two pairings.
  bool isMax = false, isMin = false;
};

/// `v` as the emitter's maximum or minimum of two bf16 (or f16) values
/// widened to f32 (ScalarOpEmitter::floatBinary, `widened`), one of them
/// `acc`, or nothing:
///
///   select(uno(x), x, select(uno(y), y, select(oeq(x, y),
///          bitcast(andi|ori(bitcast x, bitcast y)),
///          select(ogt|olt(x, y), x, y))))
///
/// Its value is always x, y or (when they are equal) x's or y's bits
/// merged: a bf16 (f16) value widened, or a NaN of one of them.
std::optional<WidenedMinMax> matchWidenedMinMax(mlir::Value v, mlir::Value acc);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_TRANSFORMS_MINMAXONBITS_H
