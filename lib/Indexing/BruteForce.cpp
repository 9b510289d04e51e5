//===- BruteForce.cpp - Checking indexing maps by enumeration -------------===//
#include "tessel/Indexing/BruteForce.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

namespace tessel {

std::optional<int64_t> countBoxPoints(llvm::ArrayRef<Interval> bounds) {
  int64_t points = 1;
  for (const Interval &interval : bounds) {
    if (interval.isEmpty())
      return 0;
    std::optional<int64_t> size = interval.size();
    if (!size)
      return std::nullopt;
    std::optional<int64_t> product = checkedMul(points, *size);
    if (!product)
      return std::nullopt;
    points = *product;
  }
  return points;
}

bool forEachBoxPoint(llvm::ArrayRef<Interval> bounds, int64_t maxPoints,
                     llvm::function_ref<void(llvm::ArrayRef<int64_t>)> visit) {
  std::optional<int64_t> points = countBoxPoints(bounds);
  if (!points || *points > maxPoints)
    return false;
  if (*points == 0)
    return true;
  llvm::SmallVector<int64_t> point;
  for (const Interval &interval : bounds)
    point.push_back(interval.lower);
  for (int64_t n = 0; n < *points; ++n) {
    visit(point);
    for (size_t i = bounds.size(); i-- > 0;) {
      if (point[i] < bounds[i].upper) {
        ++point[i];
        break;
      }
      point[i] = bounds[i].lower;
    }
  }
  return true;
}

namespace {

std::string tooLarge(const IndexingMap &map, int64_t maxPoints) {
  return "the domain box of " + map.toString() + " has more than " +
         std::to_string(maxPoints) + " points";
}

std::string describePoint(const IndexingMap &map, llvm::ArrayRef<int64_t> dims,
                          llvm::ArrayRef<int64_t> symbols) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < dims.size(); ++i)
    parts.push_back(map.getDimName(i) + " = " + std::to_string(dims[i]));
  for (size_t i = 0; i < symbols.size(); ++i)
    parts.push_back(map.getSymbolName(i) + " = " + std::to_string(symbols[i]));
  return llvm::join(parts, ", ");
}

std::string
describeResults(const std::optional<llvm::SmallVector<int64_t>> &results) {
  if (!results)
    return "is outside its domain";
  std::vector<std::string> values;
  for (int64_t value : *results)
    values.push_back(std::to_string(value));
  return "gives (" + llvm::join(values, ", ") + ")";
}

/// Per variable, the hull of both maps' ranges.
llvm::SmallVector<Interval> hullBounds(llvm::ArrayRef<Interval> a,
                                       llvm::ArrayRef<Interval> b) {
  llvm::SmallVector<Interval> bounds;
  for (size_t i = 0; i < a.size(); ++i)
    bounds.push_back(a[i].hull(b[i]));
  return bounds;
}

/// Empty ranges (of a known-empty map) enumerate nothing; make them one
/// point so that the other map is still checked.
llvm::SmallVector<Interval> nonEmpty(llvm::SmallVector<Interval> bounds) {
  for (Interval &interval : bounds)
    if (interval.isEmpty())
      interval = Interval::point(0);
  return bounds;
}

} // namespace

Expected<std::vector<DomainPoint>> enumerateDomain(const IndexingMap &map,
                                                   int64_t maxPoints) {
  std::vector<DomainPoint> points;
  if (map.isKnownEmpty())
    return points;
  llvm::SmallVector<Interval> bounds = map.getDimBounds();
  llvm::append_range(bounds, map.getSymbolBounds());
  unsigned numDims = map.getNumDims();
  bool ok = forEachBoxPoint(bounds, maxPoints, [&](llvm::ArrayRef<int64_t> p) {
    llvm::ArrayRef<int64_t> dims = p.take_front(numDims);
    llvm::ArrayRef<int64_t> symbols = p.drop_front(numDims);
    if (std::optional<llvm::SmallVector<int64_t>> results =
            map.evaluate(dims, symbols))
      points.push_back({llvm::SmallVector<int64_t>(dims),
                        llvm::SmallVector<int64_t>(symbols), *results});
  });
  if (!ok)
    return Error(tooLarge(map, maxPoints));
  return points;
}

Expected<BruteForceComparison> compareByEnumeration(const IndexingMap &first,
                                                    const IndexingMap &second,
                                                    int64_t maxPoints) {
  if (first.getNumDims() != second.getNumDims())
    return Error("the maps have " + std::to_string(first.getNumDims()) +
                 " and " + std::to_string(second.getNumDims()) + " dims");
  if (first.getNumResults() != second.getNumResults())
    return Error("the maps have " + std::to_string(first.getNumResults()) +
                 " and " + std::to_string(second.getNumResults()) + " results");
  BruteForceComparison comparison;
  unsigned numDims = first.getNumDims();
  llvm::SmallVector<Interval> dimBounds =
      nonEmpty(hullBounds(first.getDimBounds(), second.getDimBounds()));

  if (first.getNumRangeVars() == second.getNumRangeVars() &&
      first.getNumRTVars() == second.getNumRTVars()) {
    llvm::SmallVector<Interval> bounds = dimBounds;
    llvm::append_range(bounds, nonEmpty(hullBounds(first.getSymbolBounds(),
                                                   second.getSymbolBounds())));
    bool ok =
        forEachBoxPoint(bounds, maxPoints, [&](llvm::ArrayRef<int64_t> p) {
          if (!comparison.equal)
            return;
          ++comparison.pointsChecked;
          llvm::ArrayRef<int64_t> dims = p.take_front(numDims);
          llvm::ArrayRef<int64_t> symbols = p.drop_front(numDims);
          std::optional<llvm::SmallVector<int64_t>> a =
              first.evaluate(dims, symbols);
          std::optional<llvm::SmallVector<int64_t>> b =
              second.evaluate(dims, symbols);
          if (a == b)
            return;
          comparison.equal = false;
          comparison.mismatch = "at " + describePoint(first, dims, symbols) +
                                ": first " + describeResults(a) + ", second " +
                                describeResults(b);
        });
    if (!ok)
      return Error(tooLarge(first, maxPoints));
    return comparison;
  }

  // Different symbols: compare, per dim point, the sets of results.
  llvm::SmallVector<Interval> firstSymbols = nonEmpty(first.getSymbolBounds());
  llvm::SmallVector<Interval> secondSymbols =
      nonEmpty(second.getSymbolBounds());
  std::optional<int64_t> dimPoints = countBoxPoints(dimBounds);
  std::optional<int64_t> firstPoints = countBoxPoints(firstSymbols);
  std::optional<int64_t> secondPoints = countBoxPoints(secondSymbols);
  if (!dimPoints || !firstPoints || !secondPoints ||
      !checkedAdd(*firstPoints, *secondPoints) ||
      !checkedMul(*dimPoints, *firstPoints + *secondPoints) ||
      *dimPoints * (*firstPoints + *secondPoints) > maxPoints)
    return Error(tooLarge(first, maxPoints));
  auto reach = [&](const IndexingMap &map, llvm::ArrayRef<Interval> symbols,
                   llvm::ArrayRef<int64_t> dims) {
    std::set<llvm::SmallVector<int64_t>> results;
    forEachBoxPoint(symbols, maxPoints, [&](llvm::ArrayRef<int64_t> s) {
      ++comparison.pointsChecked;
      if (std::optional<llvm::SmallVector<int64_t>> r = map.evaluate(dims, s))
        results.insert(*r);
    });
    return results;
  };
  forEachBoxPoint(dimBounds, maxPoints, [&](llvm::ArrayRef<int64_t> dims) {
    if (!comparison.equal)
      return;
    std::set<llvm::SmallVector<int64_t>> a = reach(first, firstSymbols, dims);
    std::set<llvm::SmallVector<int64_t>> b = reach(second, secondSymbols, dims);
    if (a == b)
      return;
    comparison.equal = false;
    bool inFirst = false;
    std::optional<llvm::SmallVector<int64_t>> witness;
    for (const llvm::SmallVector<int64_t> &r : a)
      if (!b.count(r)) {
        witness = r;
        inFirst = true;
        break;
      }
    if (!witness)
      for (const llvm::SmallVector<int64_t> &r : b)
        if (!a.count(r)) {
          witness = r;
          break;
        }
    comparison.mismatch = "at " + describePoint(first, dims, {}) + ": " +
                          (inFirst ? "first" : "second") + " " +
                          describeResults(witness) + " for some symbols, " +
                          (inFirst ? "second" : "first") + " never does";
  });
  return comparison;
}

} // namespace tessel
