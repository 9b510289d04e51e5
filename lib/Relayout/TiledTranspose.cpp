//===- TiledTranspose.cpp - Between tilings of the two dim orders ---------===//
//
// f32[R,C]{1,0:T(8,128)} to {0,1:T(8,128)}: both sides tiled, the dim order
// swapped. The generic kernel moves such a pair element by element through
// its tables (about 2 GB/s). Here the array is cut into blocks of
// lcm(a, b') x lcm(b, a') elements (128 x 128 for T(8,128) both ways) that
// hold whole tiles of both layouts; each block is
//
//   1. untiled from the source tiles (whole tile rows) into stage A,
//   2. transposed in cache into stage B (the level's band kernel),
//   3. tiled from stage B into the destination tiles (whole tile rows,
//      streamed when the output is large),
//
// so that memory sees whole tiles in and out. Cells past the array's edge
// are zero in the stages, which writes the destination's padding.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

#include <numeric>

namespace tessel::relayout {

namespace {

/// (a, b, transposed) of a rank-2 layout {1,0:T(a,b)} or {0,1:T(a,b)}
/// with byte-sized elements.
std::optional<std::array<int64_t, 3>> twoDimTile(const TiledLayout &layout) {
  const Layout &l = layout.layout();
  if (layout.rank() != 2 || layout.elementBits() % 8 != 0 ||
      l.tiles.size() != 1 || l.tiles[0].dims.size() != 2)
    return std::nullopt;
  int64_t a = l.tiles[0].dims[0], b = l.tiles[0].dims[1];
  if (a < 1 || b < 1)
    return std::nullopt;
  return std::array<int64_t, 3>{a, b, l.minorToMajor[0] == 0 ? 1 : 0};
}

} // namespace

std::optional<TiledTransposePlan> planTiledTranspose(const TiledLayout &from,
                                                     const TiledLayout &to) {
  std::optional<std::array<int64_t, 3>> in = twoDimTile(from),
                                        out = twoDimTile(to);
  if (!in || !out || (*in)[2] == (*out)[2] ||
      from.elementBits() != to.elementBits())
    return std::nullopt;
  TiledTransposePlan plan;
  plan.elementBytes = from.elementBits() / 8;
  const std::vector<int64_t> &dims = from.logicalDims();
  bool transposed = (*in)[2] != 0;
  plan.rows = transposed ? dims[1] : dims[0];
  plan.cols = transposed ? dims[0] : dims[1];
  plan.a = (*in)[0];
  plan.b = (*in)[1];
  plan.a2 = (*out)[0];
  plan.b2 = (*out)[1];
  plan.blockRows = std::lcm(plan.a, plan.b2);
  plan.blockCols = std::lcm(plan.b, plan.a2);
  // Two stages per thread; beyond 1 MiB each, the generic kernel.
  if (plan.blockRows * plan.blockCols * plan.elementBytes > (int64_t(1) << 20))
    return std::nullopt;
  plan.tailStart = to.tiledElements() * plan.elementBytes;
  plan.dstBytes = to.physicalBytes();
  return plan;
}

namespace {

/// Transposes rows x cols elements of `s` bytes (rows `inRow` bytes apart)
/// into cols x rows (rows `outRow` bytes apart), through the level's band
/// kernel where it has one, in 16 x 16 blocks otherwise.
void transposeStage(const KernelSet &kernels, const uint8_t *in, int64_t inRow,
                    uint8_t *out, int64_t outRow, int64_t rows, int64_t cols,
                    int64_t s) {
  int log2 = s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : s == 8 ? 3 : -1;
  int64_t r = 0;
  if (log2 >= 0 && kernels.transposeBand[log2]) {
    int64_t band = 64 / s;
    for (; r + band <= rows; r += band) {
      int64_t done = kernels.transposeBand[log2](
          in + r * inRow, inRow, out + r * s, outRow, cols, false);
      for (int64_t c = done; c < cols; ++c)
        for (int64_t i = r; i < r + band; ++i)
          std::memcpy(out + c * outRow + i * s, in + i * inRow + c * s, s);
    }
  }
  for (int64_t r0 = r; r0 < rows; r0 += 16)
    for (int64_t c0 = 0; c0 < cols; c0 += 16)
      for (int64_t i = r0; i < std::min(rows, r0 + 16); ++i)
        for (int64_t c = c0; c < std::min(cols, c0 + 16); ++c)
          std::memcpy(out + c * outRow + i * s, in + i * inRow + c * s, s);
}

void moveBlock(const TiledTransposePlan &p, const uint8_t *src, uint8_t *dst,
               int64_t p0, int64_t q0, uint8_t *stageA, uint8_t *stageB,
               bool streaming) {
  int64_t s = p.elementBytes, P = p.blockRows, Q = p.blockCols;
  int64_t rowsHere = std::min(P, p.rows - p0),
          colsHere = std::min(Q, p.cols - q0);
  if (rowsHere < P || colsHere < Q)
    std::memset(stageA, 0, P * Q * s);
  // 1. Source tiles (a x b over rows x cols) into stage A, P x Q.
  int64_t srcTileCols = ceilDivide(p.cols, p.b);
  for (int64_t r = 0; r < rowsHere; ++r) {
    int64_t row = p0 + r;
    for (int64_t c = 0; c < colsHere; c += p.b) {
      int64_t col = q0 + c;
      int64_t tile = row / p.a * srcTileCols + col / p.b;
      const uint8_t *from = src + (tile * p.a * p.b + row % p.a * p.b) * s;
      std::memcpy(stageA + (r * Q + c) * s, from,
                  std::min(p.b, colsHere - c) * s);
    }
  }
  // 2. Transposed: stage B is Q x P.
  transposeStage(*p.kernels, stageA, Q * s, stageB, P * s, P, Q, s);
  // 3. Destination tiles (a2 x b2 over cols x rows) from stage B, whole
  // tile rows (the padding past the array is zero in the stage).
  int64_t dstTileRows = ceilDivide(p.cols, p.a2);
  int64_t dstTileCols = ceilDivide(p.rows, p.b2);
  for (int64_t c = 0; c < Q; ++c) {
    int64_t col = q0 + c;
    if (col / p.a2 >= dstTileRows)
      break;
    for (int64_t r = 0; r < P; r += p.b2) {
      int64_t row = p0 + r;
      if (row / p.b2 >= dstTileCols)
        break;
      int64_t tile = col / p.a2 * dstTileCols + row / p.b2;
      p.kernels->copy(dst + (tile * p.a2 * p.b2 + col % p.a2 * p.b2) * s,
                      stageB + (c * P + r) * s, p.b2 * s, streaming);
    }
  }
}

} // namespace

void runTiledTranspose(const TiledTransposePlan &plan, const uint8_t *src,
                       uint8_t *dst, int threads, bool streaming) {
  int64_t blockRows = ceilDivide(plan.rows, plan.blockRows);
  int64_t blockCols = ceilDivide(plan.cols, plan.blockCols);
  int64_t blockBytes = plan.blockRows * plan.blockCols * plan.elementBytes;
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 18) / blockBytes);
  // Block (q, p) in that order: consecutive blocks fill consecutive
  // destination tiles.
  parallelFor(threads, blockRows * blockCols, grain,
              [&](int64_t begin, int64_t end) {
                std::vector<uint8_t> stages(2 * blockBytes + 64);
                uint8_t *stageA =
                    stages.data() +
                    (64 - reinterpret_cast<uintptr_t>(stages.data()) % 64) % 64;
                uint8_t *stageB = stageA + blockBytes;
                for (int64_t item = begin; item < end; ++item) {
                  int64_t q = item / blockRows, p = item % blockRows;
                  moveBlock(plan, src, dst, p * plan.blockRows,
                            q * plan.blockCols, stageA, stageB, streaming);
                }
                if (streaming)
                  storeFence();
              });
  if (plan.dstBytes > plan.tailStart)
    std::memset(dst + plan.tailStart, 0, plan.dstBytes - plan.tailStart);
}

std::string describeTiledTranspose(const TiledTransposePlan &plan) {
  return "tiled transpose: (" + std::to_string(plan.a) + "," +
         std::to_string(plan.b) + ") tiles to (" + std::to_string(plan.a2) +
         "," + std::to_string(plan.b2) + ") tiles of the other dim order " +
         "through " + std::to_string(plan.blockRows) + "x" +
         std::to_string(plan.blockCols) + " stages, " +
         std::to_string(plan.elementBytes) + "-byte elements";
}

} // namespace tessel::relayout
