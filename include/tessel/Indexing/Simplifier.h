//===- Simplifier.h - Range evaluation and simplification -------*- C++ -*-===//
//
// Indexing maps grow under composition: the reshape of a transpose of a
// broadcast nests floordiv and mod until the map is unreadable and slow to
// evaluate. The simplifier rewrites them using what the domain says about
// each variable. Example, with d0 in [0, 15] and d1 in [0, 3]:
//
//   (d0 * 4 + d1) floordiv 8      ->  d0 floordiv 2        (d1 < 4 divides out)
//   (d0 * 4 + d1) mod 8           ->  (d0 mod 2) * 4 + d1
//   (d0 floordiv 4) * 4 + d0 mod 4 -> d0
//   d1 mod 4                      ->  d1                   (d1 is in [0, 3])
//   (d0 floordiv 4) floordiv 2    ->  d0 floordiv 8
//
// Every rule is exact on the domain, not an approximation: at every point of
// the domain the new expression has the value of the old one. The tests check
// each rule with the brute-force checker of BruteForce.h on thousands of
// random expressions and count how often each rule fired (SimplifyStats), so
// that a rule nobody exercises is noticed.
//
// RangeEvaluator is the interval arithmetic underneath: the range of an
// expression given the ranges of the variables (and any constraint on that
// very expression). It is sound (every value the expression takes on the
// domain lies in the range) but not always tight: (d0 - d0 mod 4) is
// evaluated term by term.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INDEXING_SIMPLIFIER_H
#define TESSEL_INDEXING_SIMPLIFIER_H

#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Indexing/Interval.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <string>

namespace tessel {

/// The rewrites of the simplifier, each with an example (d0 in [0, 15],
/// d1 in [0, 3]).
enum class SimplifyRule : unsigned {
  /// An expression whose range is a single value becomes that value:
  /// d0 floordiv 16 -> 0.
  ConstantRange,
  /// Like terms of a sum add up: d0 * 2 + d0 -> d0 * 3.
  SumCombine,
  /// (x floordiv c) * c + x mod c -> x.
  SumDivMod,
  /// ((x floordiv c) mod k) * c + x mod c -> x mod (c * k).
  SumNestedMod,
  /// (x floordiv a) floordiv b -> x floordiv (a * b).
  DivNested,
  /// (x * c + y) floordiv c -> x + y floordiv c; constants too.
  DivMultiples,
  /// (x * 4 + y) floordiv 8 -> x floordiv 2 when y is in [0, 3]; also a
  /// common factor: (x * 4) floordiv 6 -> (x * 2) floordiv 3.
  DivGcd,
  /// x mod c -> x - q * c when x is in [q * c, q * c + c - 1].
  ModOnePeriod,
  /// (x * c + y) mod c -> y mod c; a constant k with |k| >= c becomes
  /// k mod c; ((x floordiv 3) * 7 + x mod 3) mod 4 -> x mod 4 (a
  /// coefficient changes by a multiple of the modulus to pair up).
  ModMultiples,
  /// (x mod a + y) mod b -> (x + y) mod b when b divides a.
  ModInnerMod,
  /// (x * 4 + y) mod 8 -> (x mod 2) * 4 + y when y is in [0, 3].
  ModGcd,
  /// (x * c + y) ceildiv c -> x + y ceildiv c.
  CeilDivMultiples,
  /// A constraint that always holds on the variables' ranges is dropped.
  ConstraintRedundant,
  /// A constraint's range shrinks to the range of its expression.
  ConstraintTightened,
  /// A constant term moves into the range: d0 + d1 - 1 in [0, 5] ->
  /// d0 + d1 in [1, 6].
  ConstraintOffset,
  /// A common factor (or a sign) divides out: d0 * 2 + d1 * 4 in [1, 9] ->
  /// d0 + d1 * 2 in [1, 4].
  ConstraintScaled,
  /// A constraint on one variable becomes its range: d0 in [2, 5].
  ConstraintToBound,
  /// x floordiv c in [a, b] -> x in [a * c, b * c + c - 1].
  ConstraintDivToRange,
  /// A variable's range narrows from a linear constraint on variables:
  /// d0 + d1 in [0, 2] gives d0 in [0, 2].
  BoundPropagated,
  /// A range or constraint that cannot hold makes the map known empty.
  KnownEmpty,
  /// A symbol that nothing uses is removed.
  UnusedSymbol,
  Count
};

/// How often each rule fired.
struct SimplifyStats {
  std::array<int64_t, static_cast<unsigned>(SimplifyRule::Count)> counts{};

  void count(SimplifyRule rule) { ++counts[static_cast<unsigned>(rule)]; }
  int64_t operator[](SimplifyRule rule) const {
    return counts[static_cast<unsigned>(rule)];
  }
  static const char *name(SimplifyRule rule);
  /// One line per rule: `ModGcd: 12`.
  std::string toString() const;
};

/// Interval arithmetic over a domain.
class RangeEvaluator {
public:
  /// The ranges of the dims and symbols, and constraints whose ranges also
  /// bound their expressions.
  RangeEvaluator(llvm::ArrayRef<Interval> dimBounds,
                 llvm::ArrayRef<Interval> symbolBounds,
                 llvm::ArrayRef<IndexingConstraint> constraints = {});
  /// The domain of a map, its constraints included.
  explicit RangeEvaluator(const IndexingMap &map);

  /// An interval that holds the value of `expr` at every point of the
  /// domain.
  Interval computeRange(mlir::AffineExpr expr) const;

  llvm::ArrayRef<Interval> getDimBounds() const { return dimBounds; }
  llvm::ArrayRef<Interval> getSymbolBounds() const { return symbolBounds; }

private:
  llvm::SmallVector<Interval> dimBounds;
  llvm::SmallVector<Interval> symbolBounds;
  llvm::DenseMap<mlir::AffineExpr, Interval> constraintBounds;
};

/// Rewrites expressions into simpler ones with the same value at every
/// point of a domain.
class AffineExprSimplifier {
public:
  explicit AffineExprSimplifier(const RangeEvaluator &ranges,
                                SimplifyStats *stats = nullptr)
      : ranges(ranges), stats(stats) {}

  /// @post the result equals `expr` at every point of the domain.
  mlir::AffineExpr simplify(mlir::AffineExpr expr);

private:
  mlir::AffineExpr simplifyOnce(mlir::AffineExpr expr);
  mlir::AffineExpr simplifySum(mlir::AffineExpr expr);
  mlir::AffineExpr simplifyFloorDiv(mlir::AffineExpr lhs, int64_t divisor);
  mlir::AffineExpr simplifyCeilDiv(mlir::AffineExpr lhs, int64_t divisor);
  mlir::AffineExpr simplifyMod(mlir::AffineExpr lhs, int64_t modulus);
  void count(SimplifyRule rule) {
    if (stats)
      stats->count(rule);
  }

  const RangeEvaluator &ranges;
  SimplifyStats *stats;
  llvm::DenseMap<mlir::AffineExpr, mlir::AffineExpr> cache;
  /// Recursion depth; past a limit an expression is returned as it is.
  unsigned depth = 0;
};

} // namespace tessel

#endif // TESSEL_INDEXING_SIMPLIFIER_H
