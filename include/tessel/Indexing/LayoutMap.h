//===- LayoutMap.h - Tiled layouts as indexing maps -------------*- C++ -*-===//
//
// A tiled layout sends a logical index to an offset in the buffer; written
// as an indexing map, that is an expression of floordiv and mod by the tile
// sizes (the steps of TiledLayout.h, done symbolically). For figure 1 of the
// tiled-layout doc, f32[3,5]{1,0:T(2,2)}:
//
//   logical -> physical
//   (d0, d1) -> ((d0 floordiv 2) * 12 + (d1 floordiv 2) * 4 + (d0 mod 2) * 2
//                + d1 mod 2), domain: d0 in [0, 2], d1 in [0, 4]
//
//   physical -> logical (the offset's padding slots are outside the domain)
//   (d0) -> ((d0 floordiv 12) * 2 + (d0 floordiv 2) mod 2,
//            ((d0 floordiv 4) mod 3) * 2 + d0 mod 2),
//   domain: d0 in [0, 23], ((d0 floordiv 4) mod 3) * 2 + d0 mod 2 in [0, 4],
//           (d0 floordiv 12) * 2 + (d0 floordiv 2) mod 2 in [0, 2]
//
// Offsets are in elements (E(n) packing is the caller's business). Both maps
// come simplified.
//
// @post for every logical index i: logical->physical gives offset(i); for
//       every offset o below physicalElements(): physical->logical gives
//       logicalIndex(o), and o is outside the domain exactly when it is
//       padding (property-tested against TiledLayout on thousands of
//       generated layouts in LayoutMapTest).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INDEXING_LAYOUTMAP_H
#define TESSEL_INDEXING_LAYOUTMAP_H

#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Layout/TiledLayout.h"

namespace tessel {

/// (logical index) -> (offset), over the logical shape.
IndexingMap getLogicalToPhysicalMap(const TiledLayout &layout,
                                    mlir::MLIRContext *context);

/// (offset) -> (logical index), over [0, physicalElements() - 1] with
/// constraints that leave the padding slots out of the domain.
IndexingMap getPhysicalToLogicalMap(const TiledLayout &layout,
                                    mlir::MLIRContext *context);

} // namespace tessel

#endif // TESSEL_INDEXING_LAYOUTMAP_H
