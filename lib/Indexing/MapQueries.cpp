//===- MapQueries.cpp - simplify, compose, eval with their checks ---------===//
#include "tessel/Indexing/MapQueries.h"

#include "tessel/Indexing/BruteForce.h"
#include "tessel/Indexing/Simplifier.h"

#include <algorithm>
#include <string>

namespace tessel {
namespace {

/// Largest box the check enumerates.
constexpr int64_t kMaxCheckedPoints = int64_t(1) << 24;

/// The most expression nodes the check evaluates (points times the nodes
/// of both maps): a few seconds of work.
constexpr int64_t kMaxCheckedNodes = int64_t(1) << 27;

/// The nodes of a map's results and constraints.
int64_t countNodes(const IndexingMap &map) {
  int64_t nodes = 0;
  auto count = [&](mlir::AffineExpr expr) {
    expr.walk([&](mlir::AffineExpr) { ++nodes; });
  };
  for (mlir::AffineExpr result : map.getAffineMap().getResults())
    count(result);
  for (const IndexingConstraint &constraint : map.getConstraints())
    count(constraint.expr);
  return nodes;
}

} // namespace

Expected<IndexingMap> simplifyIndexingMapChecked(const IndexingMap &map,
                                                 SimplifyStats *stats) {
  if (std::optional<std::string> problem = findOverflow(map))
    return Error("the map overflows int64 on its domain, " + *problem +
                 "; narrow the domain");
  return map.simplified(stats);
}

Expected<int64_t> checkSameMapByEnumeration(const IndexingMap &before,
                                            const IndexingMap &after) {
  // Bounded by work, not only by points: a deep map on many points takes
  // minutes.
  int64_t nodes = std::max<int64_t>(1, countNodes(before) + countNodes(after));
  int64_t maxPoints = std::min(kMaxCheckedPoints, kMaxCheckedNodes / nodes);
  Expected<BruteForceComparison> same =
      compareByEnumeration(before, after, maxPoints);
  if (!same)
    return Error("cannot check: " + same.error().message +
                 (maxPoints < kMaxCheckedPoints
                      ? " (the maps have " + std::to_string(nodes) +
                            " expression nodes; --check evaluates at most " +
                            std::to_string(kMaxCheckedNodes) + " nodes in all)"
                      : std::string()));
  if (!same->equal)
    return Error("the maps differ " + same->mismatch);
  return same->pointsChecked;
}

Expected<IndexingMap> composeIndexingMapsForUser(const IndexingMap &first,
                                                 const IndexingMap &second,
                                                 bool simplify) {
  if (first.getNumResults() != second.getNumDims())
    return Error("FIRST has " + std::to_string(first.getNumResults()) +
                 " results but SECOND has " +
                 std::to_string(second.getNumDims()) +
                 " dims, expected equal counts");
  Expected<IndexingMap> composed = composeIndexingMapsChecked(first, second);
  if (!composed)
    return Error("cannot compose: " + composed.error().message);
  if (simplify)
    composed->simplify();
  return composed;
}

Expected<std::optional<std::vector<int64_t>>>
evaluateIndexingMapAt(const IndexingMap &map, const std::vector<int64_t> &dims,
                      const std::vector<int64_t> &symbols) {
  if (dims.size() != map.getNumDims())
    return Error("got " + std::to_string(dims.size()) +
                 " dim values, expected " + std::to_string(map.getNumDims()));
  if (symbols.size() != map.getNumSymbols())
    return Error("got " + std::to_string(symbols.size()) +
                 " symbol values, expected " +
                 std::to_string(map.getNumSymbols()));
  if (!map.contains(dims, symbols))
    return std::optional<std::vector<int64_t>>();
  llvm::ArrayRef<mlir::AffineExpr> exprs = map.getAffineMap().getResults();
  std::vector<int64_t> results;
  for (size_t i = 0; i < exprs.size(); ++i) {
    std::optional<int64_t> value = evaluateAffineExpr(exprs[i], dims, symbols);
    if (!value)
      return Error("result " + std::to_string(i) + " (" +
                   affineExprToString(exprs[i], map.getDimNames(),
                                      map.getSymbolNames()) +
                   ") overflows int64 at this point of the domain: the map "
                   "has no value there");
    results.push_back(*value);
  }
  return std::optional<std::vector<int64_t>>(std::move(results));
}

} // namespace tessel
