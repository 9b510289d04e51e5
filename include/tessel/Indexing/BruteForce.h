//===- BruteForce.h - Checking indexing maps by enumeration -----*- C++ -*-===//
//
// A map with a small domain can be checked exhaustively: visit every point
// of the box its variable ranges span, keep those that satisfy the
// constraints, evaluate. That is the reference the simplifier, composition
// and the layout maps are tested against:
//
//   IndexingMap before = *parseIndexingMap(
//       "(d0, d1) -> ((d0 * 4 + d1) floordiv 8), "
//       "domain: d0 in [0, 15], d1 in [0, 3]", &context);
//   IndexingMap after = before.simplified();   // (d0 floordiv 2)
//   compareByEnumeration(before, after)->equal  -> true (64 points)
//
// Two maps with the same variables are compared point by point: a point is
// in both domains or in neither, and where it is in both, the results are
// equal. When the symbols differ (simplify() removed an unused one), each
// dim point is compared by the set of results its valid symbol values give:
// that is what a map means to its user.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INDEXING_BRUTEFORCE_H
#define TESSEL_INDEXING_BRUTEFORCE_H

#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Support/Expected.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

/// The number of points in the box of these ranges (1 for no ranges, 0 when
/// one is empty), or nullopt when it overflows int64_t.
std::optional<int64_t> countBoxPoints(llvm::ArrayRef<Interval> bounds);

/// Calls visit(point) for every point of the box, the last coordinate
/// varying fastest. Returns false, visiting nothing, when the box has more
/// than maxPoints points.
bool forEachBoxPoint(llvm::ArrayRef<Interval> bounds, int64_t maxPoints,
                     llvm::function_ref<void(llvm::ArrayRef<int64_t>)> visit);

/// A point of a map's domain and the map's results there.
struct DomainPoint {
  llvm::SmallVector<int64_t> dims;
  llvm::SmallVector<int64_t> symbols;
  llvm::SmallVector<int64_t> results;
};

/// Every point of the domain in box order, or an error when the box has more
/// than maxPoints points.
Expected<std::vector<DomainPoint>> enumerateDomain(const IndexingMap &map,
                                                   int64_t maxPoints);

struct BruteForceComparison {
  bool equal = true;
  /// Points of the box that were evaluated.
  int64_t pointsChecked = 0;
  /// Where the maps differ, e.g. "at d0 = 1, d1 = 2: first gives (3),
  /// second is outside its domain". Empty when equal.
  std::string mismatch;
};

/// Compares two maps by enumeration (see the top of this file). Fails when
/// the maps have different numbers of dims or results, or when the boxes to
/// enumerate hold more than maxPoints points.
Expected<BruteForceComparison>
compareByEnumeration(const IndexingMap &first, const IndexingMap &second,
                     int64_t maxPoints = int64_t(1) << 22);

} // namespace tessel

#endif // TESSEL_INDEXING_BRUTEFORCE_H
