//===- TpuLayout.h - The tiling a TPU compiler picks ------------*- C++ -*-===//
//
// TPU vector registers hold 8 x 128 32-bit lanes, so XLA's TPU backend tiles
// the two most minor physical dims to match, and packs narrower types into
// 32-bit words along the second-minor dim:
//
//   chooseTpuLayout(f32[3,300])   -> f32[3,300]{1,0:T(4,128)}
//   chooseTpuLayout(bf16[64,300]) -> bf16[64,300]{1,0:T(8,128)(2,1)}
//   chooseTpuLayout(s8[64,300])   -> s8[64,300]{1,0:T(8,128)(4,1)}
//
// Rules, with s the physical second-minor dim (rank >= 2):
//   32- and 64-bit, complex  s <= 2: T(2,128)  s <= 4: T(4,128)  else T(8,128)
//   16-bit                   the same, followed by (2,1)
//   8-bit, f8, pred          s <= 4: T(4,128)(4,1)  else T(8,128)(4,1)
//                            (T(2,128)(4,1) would pad 2 rows to 4 anyway)
//   pred, bit-packed         T(32,128)(32,1)E(1)
//   4-bit                    T(8,128)(8,1)E(4): eight rows per 32-bit word
//   2-bit                    T(16,128)(16,1)E(2)
// tessel's choices where the TPU document is silent:
//   rank 0      no tiles: a scalar lives in scalar memory
//   rank 1      n <= 128: T(128), a single row (nothing to pack);
//               else T(1024) (one 8x128 register of 32-bit values), with
//               (128) and the packing tile added for narrower types, e.g.
//               bf16[4096]{0:T(1024)(128)(2,1)}
//   64-bit      tiled like 32-bit (TPUs emulate them with 32-bit halves)
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LAYOUT_TPULAYOUT_H
#define TESSEL_LAYOUT_TPULAYOUT_H

#include "tessel/Layout/Shape.h"
#include "tessel/Support/Expected.h"

#include <string>

namespace tessel {

struct TpuOptions {
  /// Store pred bit-packed (E(1)) instead of one byte per value.
  bool packedPred = false;
};

struct TpuLayoutChoice {
  /// The shape with the chosen layout.
  Shape shape;
  /// Why this tiling, in one or two sentences.
  std::string reason;
};

/// The layout a TPU compiler picks for an array shape. A layout already on
/// the shape keeps its minor_to_major (its tiles are replaced); without one
/// the order is row major.
Expected<TpuLayoutChoice> chooseTpuLayout(const Shape &shape,
                                          const TpuOptions &options = {});

} // namespace tessel

#endif // TESSEL_LAYOUT_TPULAYOUT_H
