//===- NpuMap.h - NPU local tensors as indexing maps ------------*- C++ -*-===//
//
// A tensor in NPU local memory (Npu/LocalTensor.h) sends its logical index
// (n, c, h, w) to a place: an NPU and a byte offset in that NPU's memory.
// Written as an indexing map with two results:
//
//   npu    = (Q + c) mod X
//   offset = R + bytes * (n * Ns + ((Q + c) floordiv X) * Cs + h * Hs
//            + w * Ws)
//
// The seed's example, X = 4, fp32 (2,3,4,5) aligned at address 2048
// (Q = 2, R = 0; strides n 64, c 32, h 5, w 1):
//
//   (d0, d1, d2, d3) -> ((d1 + 2) mod 4,
//                        d0 * 256 + ((d1 + 2) floordiv 4) * 128 + d2 * 20
//                        + d3 * 4),
//   domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 3], d3 in [0, 4]
//
//   element (1, 2, 3, 4): npu 0, byte 460
//
// Packed storage modes (4N, 2N, 2IC) put n mod lanes in the lane of the
// packed element: n becomes n floordiv lanes and the offset gains
// (n mod lanes) * bytes. A matrix (rows, cols) stored as (N, ceil(M/W), 1, W)
// reads c = cols floordiv W and w = cols mod W. The map gives the first byte
// of each element.
//
// System memory (the continuous layout) has no NPU: getContinuousMap gives
// the byte offset alone.
//
// @post for every logical index, the map equals LocalTensor::locate
//       (checked by enumeration in NpuMapTest over generated tensors of
//       every layout and mode).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INDEXING_NPUMAP_H
#define TESSEL_INDEXING_NPUMAP_H

#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Npu/LocalTensor.h"

namespace tessel {

/// (n, c, h, w) -> (npu, byte offset), over the tensor's logical shape
/// ((rows, cols, 1, 1) for a matrix); simplified.
IndexingMap getNpuLocalMap(const LocalTensor &tensor,
                           mlir::MLIRContext *context);

/// (n, c, h, w) -> (byte offset) of a tensor in system memory with the
/// continuous strides (C*H*W, H*W, W, 1). @pre every dim >= 1.
IndexingMap getContinuousMap(const Dims4 &shape, int64_t elementBytes,
                             mlir::MLIRContext *context);

} // namespace tessel

#endif // TESSEL_INDEXING_NPUMAP_H
