//===- MapQueries.h - simplify, compose, eval with their checks -*- C++ -*-===//
//
// What `tessel indexing simplify|compose|eval` answer, with the checks and
// messages the command line and the Python binding share:
//
//   simplifyIndexingMapChecked(map)       the map simplified, unless it
//                                         overflows int64 on its domain
//   checkSameMapByEnumeration(a, b)       --check: points compared, or how
//                                         they differ
//   composeIndexingMapsForUser(f, s)      FIRST's results feed SECOND's dims
//   evaluateIndexingMapAt(map, d, s)      the results, nullopt outside the
//                                         domain
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INDEXING_MAPQUERIES_H
#define TESSEL_INDEXING_MAPQUERIES_H

#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Support/Expected.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tessel {

/// The map simplified (`stats`, if given, counts the rules that fired).
/// Refuses a map that overflows int64 on its domain: the simplifier works
/// in int64 and would give it a value where it has none.
Expected<IndexingMap>
simplifyIndexingMapChecked(const IndexingMap &map,
                           SimplifyStats *stats = nullptr);

/// Compares two maps at every point of the domain, bounded by work (points
/// times expression nodes); the number of points checked, or "cannot check:
/// ..." or "the maps differ ...".
Expected<int64_t> checkSameMapByEnumeration(const IndexingMap &before,
                                            const IndexingMap &after);

/// `first`'s results feed `second`'s dims; simplified unless `simplify` is
/// false. Errors: the counts differ, or "cannot compose: ...".
Expected<IndexingMap> composeIndexingMapsForUser(const IndexingMap &first,
                                                 const IndexingMap &second,
                                                 bool simplify = true);

/// The results of `map` at (dims, symbols), nullopt outside the domain.
/// Errors: wrong counts, or a result that overflows int64 there.
Expected<std::optional<std::vector<int64_t>>>
evaluateIndexingMapAt(const IndexingMap &map, const std::vector<int64_t> &dims,
                      const std::vector<int64_t> &symbols);

} // namespace tessel

#endif // TESSEL_INDEXING_MAPQUERIES_H
