//===- LiteralComparison.h - Arrays compared element by element -*- C++ -*-===//
//
// How far a computed array is from a reference one, in the terms a numerics
// engineer uses: how many elements differ, the largest distance in units in
// the last place (ulp) and in absolute value, and where the worst one is.
//
//   Literal got = ..., want = ...;                  // bf16[4]
//   ComparisonBound bound{/*ulps=*/1, /*relativeToMax=*/1.0 / 128};
//   LiteralComparison c = compareLiterals(got, want, bound);
//   c.differing  -> 2      elements whose bits differ (NaNs are all equal)
//   c.failing    -> 0      of them outside the bound
//   c.maxUlp     -> 1      e.g. 0.5 vs 0.50390625 in bf16
//
// An element passes when its bits are equal, both are NaN, or (floats) it is
// within `ulps` of the reference, or within `relativeToMax` times the largest
// finite magnitude of the reference (at least 1): the bound for cancellation
// after an approximated function, where one ulp of a large intermediate is
// many ulps of a small result. Integers and predicates pass only when equal.
// A c64 or c128 element compares part by part (each an f32 or f64): it
// differs when either part does, and its distance is the larger one.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_LITERALCOMPARISON_H
#define TESSEL_HLO_LITERALCOMPARISON_H

#include "tessel/Hlo/Literal.h"

#include <cstdint>
#include <string>

namespace tessel {

/// How far an element may be from the reference. The default is exact.
struct ComparisonBound {
  uint64_t ulps = 0;
  double relativeToMax = 0;
};

struct LiteralComparison {
  /// Elements whose bits differ (two NaNs do not differ).
  int64_t differing = 0;
  /// Elements outside the bound.
  int64_t failing = 0;
  /// Largest ulp distance among the differing elements (floats).
  uint64_t maxUlp = 0;
  /// Largest absolute difference (floats).
  double maxAbs = 0;
  /// Linear index of the worst element (largest ulp distance; the first
  /// differing one for integers), or -1 when none differ.
  int64_t worst = -1;
  bool exact() const { return differing == 0; }
};

/// Distance in ulps between two floats of `bits` bits given as raw bits:
/// the difference of their positions on a line where every float has its
/// place (-0 and +0 share one). 1 between neighbours.
uint64_t ulpDistance(uint64_t a, uint64_t b, int bits);

/// Compares `got` with the reference `want`.
/// @pre both are arrays of the same element type and dims.
LiteralComparison compareLiterals(const Literal &got, const Literal &want,
                                  const ComparisonBound &bound = {});

/// "[i,j,k]": the multi-index of a linear (row-major) index of `literal`.
std::string multiIndexString(const Literal &literal, int64_t linear);

/// A one-line summary for people: "bit-exact", or "3 of 96 elements
/// differ, at most 1 ulp (0.00391 absolute), worst at [1,2]: 0.5 vs
/// 0.5039".
std::string describeComparison(const LiteralComparison &comparison,
                               const Literal &got, const Literal &want);

/// Reproducible random arguments for checking kernels: floats in [-3, 3],
/// signed integers in [-8, 8], unsigned in [0, 15], predicates at random.
/// With `specials`, about one float in 16 is a special value instead (NaN,
/// +-inf, +-0, the smallest subnormal, the largest finite value). c64 and
/// c128 parts are drawn as f32 and f64 floats.
Literal randomLiteral(const Shape &shape, uint64_t seed, bool specials = false);

} // namespace tessel

#endif // TESSEL_HLO_LITERALCOMPARISON_H
