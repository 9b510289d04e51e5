//===- LayoutPicture.h - Pictures of tiled layouts --------------*- C++ -*-===//
//
// Draws the offset of every element as a grid, like the figures of XLA's
// tiled-layout document. Rows are the second-last logical dim, columns the
// last; an array of rank > 2 is drawn as one grid per index of its leading
// dims. Lines are the borders of the first tile, '.' marks padding slots:
//
//   renderLayoutText(f32[3,5]{1,0:T(2,2)}):
//
//         0  1  2  3  4  5
//       +-----+-----+-----+
//     0 | 0  1| 4  5| 8  .|
//     1 | 2  3| 6  7|10  .|
//       +-----+-----+-----+
//     2 |12 13|16 17|20  .|
//     3 | .  .| .  .| .  .|
//       +-----+-----+-----+
//
// Large grids are elided: the first rows and columns, the last ones, and the
// ones around the edge of the data stay; gaps show as '...'. The SVG picture
// colours each first-level tile, hatches padding, and outlines the tiles of
// the second level in red (the (2,1) pairs of a bf16 TPU layout).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RENDER_LAYOUTPICTURE_H
#define TESSEL_RENDER_LAYOUTPICTURE_H

#include "tessel/Layout/TiledLayout.h"

#include "tessel/Support/Expected.h"

#include <optional>
#include <string>

namespace tessel {

struct PictureOptions {
  /// Rows and columns drawn before eliding, per grid.
  int64_t maxRows = 24;
  int64_t maxColumns = 16;
  /// Grids drawn for arrays of rank > 2 before eliding.
  int64_t maxSlices = 4;
};

/// The most cells a picture draws (a 500x500 grid, about 50 MB of SVG).
constexpr int64_t kMaxDrawnCells = 250000;

/// Refuses a picture nobody can open: one that would draw more than
/// kMaxDrawnCells cells (about 200 bytes of SVG each) with these options.
Status checkPictureSize(const TiledLayout &layout,
                        const PictureOptions &options);

/// The terminal picture (ASCII).
std::string renderLayoutText(const TiledLayout &layout,
                             const PictureOptions &options = {});

/// A standalone SVG document of the same picture.
std::string renderLayoutSvg(const TiledLayout &layout,
                            const PictureOptions &options = {});

} // namespace tessel

#endif // TESSEL_RENDER_LAYOUTPICTURE_H
