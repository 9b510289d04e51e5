//===- ExpApproximation.h - f32 exp for the CPU -----------------*- C++ -*-===//
//
// Private to lib/Codegen. On the CPU, math.exp of f32 (scalar or vector)
// becomes tessel's own branch-free approximation instead of MLIR's:
//
//   x  clamped to [-88, 88.8] by compares and selects that pass a NaN
//      through (x86: one vmaxps and one vminps)
//   k  = floor(x log2 e), r = x - k ln 2 in two steps (ln 2 split in a
//      part with few bits and the rest), so that r is in [0, ln 2)
//   p  = 1 + r (1 + r q(r)), q a polynomial of degree 5 fitted to
//      (e^r - 1 - r) / r^2 on [0, ln 2] (relative error, near minimax)
//   2^k from k's bits: k + 1.5 * 2^23 holds k in its low mantissa bits, so
//      shifting them into the exponent field and adding the bias gives 2^k
//      without a float-to-integer conversion (poison for a NaN in LLVM)
//
// Results are within 1 ulp of the correctly rounded exp where it is a
// normal number, e^x for x > 88.7228 is +inf, and results below the
// smallest normal (x < -87.34) are 0 (MLIR's approximation kept those down
// to x = -87.68, then made them 0 too).
// 17 operations a vector against MLIR's 24 (its clamps of k, a conversion,
// and the NaN test the elemental emitter adds around it, which this one
// does not need: a select of the argument where the argument is a NaN,
// around exp of the argument or of its negation, is dropped).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_TRANSFORMS_EXPAPPROXIMATION_H
#define TESSEL_LIB_CODEGEN_TRANSFORMS_EXPAPPROXIMATION_H

#include "mlir/IR/PatternMatch.h"

namespace tessel {

/// For CPU kernels: the f32 exp above, ahead of MLIR's approximations.
void populateExpApproximationPatterns(mlir::RewritePatternSet &patterns);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_TRANSFORMS_EXPAPPROXIMATION_H
