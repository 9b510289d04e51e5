//===- TiledTranspose.cpp - Between tilings of the two dim orders ---------===//
//
// f32[R,C]{1,0:T(8,128)} to {0,1:T(8,128)}: both sides tiled, the dim order
// swapped. The generic kernel moves such a pair element by element through
// its tables (about 2 GB/s). Here the array is cut into blocks of
// lcm(a, b') x lcm(b, a') elements (128 x 128 for T(8,128) both ways) that
// hold whole tiles of both layouts. A block inside the array goes straight
// from tile to tile where the destination's tile rows are whole 64-byte
// lines of bands (b' a multiple of 64 / element size): bands of 64 / s
// source rows, one source tile's width at a time, through the level's
// transposeRows, which writes one whole line of each destination tile row
// from the registers (moveBlockDirect). The other blocks (at the array's
// ragged edges, or every block when the tile rows do not allow bands) are
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

/// (a, b) of a layout tiled by one 2-D tile, with byte-sized elements.
std::optional<std::array<int64_t, 2>> minorTile(const TiledLayout &layout) {
  const Layout &l = layout.layout();
  if (layout.rank() < 2 || layout.elementBits() % 8 != 0 ||
      l.tiles.size() != 1 || l.tiles[0].dims.size() != 2)
    return std::nullopt;
  int64_t a = l.tiles[0].dims[0], b = l.tiles[0].dims[1];
  if (a < 1 || b < 1)
    return std::nullopt;
  return std::array<int64_t, 2>{a, b};
}

} // namespace

/// Both sides tiled, the two most minor dims of the physical order swapped
/// and the others the same, in the same order: a batch of rank-2 tiled
/// transposes, one per index of the leading dims (f32[64,512,512]
/// {2,1,0:T(8,128)} to {1,2,0:T(8,128)}: 64 of them).
std::optional<TiledTransposePlan> planTiledTranspose(const TiledLayout &from,
                                                     const TiledLayout &to) {
  std::optional<std::array<int64_t, 2>> in = minorTile(from),
                                        out = minorTile(to);
  if (!in || !out || from.elementBits() != to.elementBits())
    return std::nullopt;
  const std::vector<int64_t> &order = from.physicalOrder(),
                             &other = to.physicalOrder();
  int64_t rank = from.rank();
  if (order[rank - 2] != other[rank - 1] || order[rank - 1] != other[rank - 2])
    return std::nullopt;
  TiledTransposePlan plan;
  const std::vector<int64_t> &dims = from.logicalDims();
  for (int64_t i = 0; i + 2 < rank; ++i) {
    if (order[i] != other[i])
      return std::nullopt;
    plan.batch *= dims[order[i]];
  }
  plan.elementBytes = from.elementBits() / 8;
  plan.rows = dims[order[rank - 2]];
  plan.cols = dims[order[rank - 1]];
  plan.a = (*in)[0];
  plan.b = (*in)[1];
  plan.a2 = (*out)[0];
  plan.b2 = (*out)[1];
  auto roundUp = [](int64_t n, int64_t m) { return ceilDivide(n, m) * m; };
  plan.srcMatrixBytes = roundUp(plan.rows, plan.a) *
                        roundUp(plan.cols, plan.b) * plan.elementBytes;
  plan.dstMatrixBytes = roundUp(plan.cols, plan.a2) *
                        roundUp(plan.rows, plan.b2) * plan.elementBytes;
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

/// log2 of an element size that has band kernels, else -1.
int bandLog2(int64_t s) {
  return s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : s == 8 ? 3 : -1;
}

/// Transposes rows x cols elements of `s` bytes (rows `inRow` bytes apart)
/// into cols x rows (rows `outRow` bytes apart), through the level's band
/// kernel where it has one, in 16 x 16 blocks otherwise.
void transposeStage(const KernelSet &kernels, const uint8_t *in, int64_t inRow,
                    uint8_t *out, int64_t outRow, int64_t rows, int64_t cols,
                    int64_t s) {
  int log2 = bandLog2(s);
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

/// Per-thread pointers of moveBlockDirect.
struct DirectScratch {
  std::vector<const uint8_t *> rowBase; ///< P source rows at the block's col
  std::vector<uint8_t *> lineBase;      ///< Q destination lines at its row
  std::vector<uint8_t *> lines;         ///< one source tile's width of them
};

/// Source row `row` from column `col` (the start of a source tile).
inline const uint8_t *sourceRow(const TiledTransposePlan &p, const uint8_t *src,
                                int64_t row, int64_t col) {
  int64_t tileCols = ceilDivide(p.cols, p.b);
  return src +
         ((row / p.a * tileCols + col / p.b) * p.a * p.b + row % p.a * p.b) *
             p.elementBytes;
}

/// The pointers of a block inside the array: source row p0 + i at column
/// q0, destination line q0 + j at row p0 (the block starts on tile
/// boundaries of both layouts).
void blockPointers(const TiledTransposePlan &p, const uint8_t *src,
                   uint8_t *dst, int64_t p0, int64_t q0, DirectScratch &x) {
  int64_t dstTileCols = ceilDivide(p.rows, p.b2);
  for (int64_t i = 0; i < p.blockRows; ++i)
    x.rowBase[i] = sourceRow(p, src, p0 + i, q0);
  for (int64_t j = 0; j < p.blockCols; ++j) {
    int64_t col = q0 + j;
    x.lineBase[j] =
        dst + ((col / p.a2 * dstTileCols + p0 / p.b2) * p.a2 * p.b2 +
               col % p.a2 * p.b2) *
                  p.elementBytes;
  }
}

/// The byte offset in the destination tile of band r's lines (band r: tile
/// r / b2 of the block's, offset r % b2).
inline int64_t bandLineOffset(const TiledTransposePlan &p, int64_t r) {
  return (r / p.b2 * p.a2 * p.b2 + r % p.b2) * p.elementBytes;
}

/// Where the step after rows r0..r0 + span of a block at (p0, q0), tile
/// column c (of the block), reads: the same rows one source tile further,
/// else the next `span` rows from the block's first column, else the next
/// block (nextP0, nextQ0) from its first row. `first`: that step's first
/// row within its block; row < 0: no step after.
struct NextStep {
  int64_t row, col, first;
};
NextStep nextStep(const TiledTransposePlan &p, int64_t p0, int64_t q0,
                  int64_t r0, int64_t c, int64_t span, int64_t nextP0,
                  int64_t nextQ0) {
  if (c + p.b < p.blockCols)
    return {p0 + r0, q0 + c + p.b, r0};
  if (r0 + span < p.blockRows)
    return {p0 + r0 + span, q0, r0 + span};
  return {nextP0, nextQ0, 0};
}

/// The columns [done, count) that a band kernel left, element by element:
/// element i of line j is element j of row i.
void finishColumns(const uint8_t *const *rows, uint8_t *const *lines,
                   int64_t done, int64_t count, int64_t R, int64_t s) {
  for (int64_t j = done; j < count; ++j)
    for (int64_t i = 0; i < R; ++i)
      std::memcpy(lines[j] + i * s, rows[i] + j * s, s);
}

/// A block whose elements all lie inside the array, with no stage: bands
/// of R = 64 / s source rows, one source tile's width (b columns) at a
/// time, go through the level's transposeRows, which reads the band's
/// rows (whole tile rows, from R / a tiles) and writes one whole 64-byte
/// line of each of b destination tile rows from the registers. R divides
/// b2 (checked by the caller), so a band's lines lie in one destination
/// tile each. (nextP0, nextQ0) is the block moved next (nextP0 < 0: none).
/// Before each call, the rows of the next band (after the block's last,
/// the next block's first) are prefetched into L2: the hardware
/// prefetchers do not follow a band's reads, which take one line of each
/// of its R rows at a time. On the EPYC VM (f32 [4096,4096], thread CPU
/// time) this took the direct blocks from 41-44% to 51-63% of copy;
/// prefetching into L1 instead, or two or more bands ahead, was slower
/// than not prefetching at all. (1- and 2-byte elements, and source tiles
/// whose width is not a multiple of 16; moveBlockPairs for the others.)
void moveBlockBands(const TiledTransposePlan &p, const uint8_t *src,
                    uint8_t *dst, int64_t p0, int64_t q0, int64_t nextP0,
                    int64_t nextQ0, DirectScratch &x, bool streaming) {
  int64_t s = p.elementBytes, R = 64 / s, P = p.blockRows, Q = p.blockCols;
  auto kernel = p.kernels->transposeRows[bandLog2(s)];
  blockPointers(p, src, dst, p0, q0, x);
  const uint8_t *rows[64];
  for (int64_t r = 0; r < P; r += R) {
    int64_t lineOffset = bandLineOffset(p, r);
    for (int64_t c = 0; c < Q; c += p.b) {
      int64_t rowOffset = c / p.b * p.a * p.b * s;
      for (int64_t i = 0; i < R; ++i)
        rows[i] = x.rowBase[r + i] + rowOffset;
      for (int64_t j = 0; j < p.b; ++j)
        x.lines[j] = x.lineBase[c + j] + lineOffset;
      NextStep next = nextStep(p, p0, q0, r, c, R, nextP0, nextQ0);
      for (int64_t i = 0; next.row >= 0 && i < R; ++i) {
        const uint8_t *row = sourceRow(p, src, next.row + i, next.col);
        for (int64_t k = 0; k < p.b * s; k += 64)
          __builtin_prefetch(row + k, 0, 2);
      }
      int64_t done = kernel(rows, x.lines.data(), p.b, streaming);
      finishColumns(rows, x.lines.data(), done, p.b, R, s);
    }
  }
}

/// moveBlockBands for 4- and 8-byte elements whose source tiles are a
/// multiple of 16 columns wide: bands go two at a time, 16 columns a call,
/// the two bands' calls for the same columns one after the other, so that
/// each destination tile row receives two lines back to back; the rows
/// the next step reads (the same bands one tile width further, the next
/// two bands, or the next block's first) are prefetched into L2 a few
/// lines before each call instead of all before the first. Zen 5, one
/// thread, thread CPU time, 64 MiB, alternated three times: f32 T(8,128)
/// both ways 21-24 -> 24-33 GB/s (50-55% -> 56-72% of copy), f64 20-21
/// -> 29-33 (47-56% -> 72-89%), the same at sse2 and f32 at avx2 20.3-25.4
/// against 21.6-21.9 (BENCHMARKS.md, "Zen 5: prefetches shared among the
/// squares"); the prefetches alone shared among calls gained
/// 5-10%, four bands at once less than two. For 1- and 2-byte elements,
/// whose bands gather 16-byte pieces of each row, the same was 10-20%
/// slower.
void moveBlockPairs(const TiledTransposePlan &p, const uint8_t *src,
                    uint8_t *dst, int64_t p0, int64_t q0, int64_t nextP0,
                    int64_t nextQ0, DirectScratch &x, bool streaming) {
  constexpr int64_t G = 2, K = 16;
  int64_t s = p.elementBytes, R = 64 / s, P = p.blockRows, Q = p.blockCols;
  auto kernel = p.kernels->transposeRows[bandLog2(s)];
  blockPointers(p, src, dst, p0, q0, x);
  int64_t lineCount = p.b * s / 64;
  const uint8_t *rows[64], *nextRows[G * 64];
  uint8_t **lines = x.lines.data();
  for (int64_t r0 = 0; r0 < P; r0 += G * R) {
    int64_t bands = std::min(G, (P - r0) / R);
    for (int64_t c = 0; c < Q; c += p.b) {
      NextStep next = nextStep(p, p0, q0, r0, c, G * R, nextP0, nextQ0);
      int64_t nextCount =
          next.row >= 0 ? std::min(G, (P - next.first) / R) * R : 0;
      for (int64_t i = 0; i < nextCount; ++i)
        nextRows[i] = sourceRow(p, src, next.row + i, next.col);
      int64_t rowOffset = c / p.b * p.a * p.b * s;
      // The next rows' lines in order, (row, line) counted without
      // divisions.
      int64_t total = nextCount * lineCount, steps = p.b / K * bands;
      int64_t step = 0, issued = 0, row = 0, line = 0;
      for (int64_t k = 0; k < p.b; k += K)
        for (int64_t g = 0; g < bands; ++g, ++step) {
          for (int64_t until = total * (step + 1) / steps; issued < until;
               ++issued) {
            __builtin_prefetch(nextRows[row] + line * 64, 0, 2);
            if (++line == lineCount) {
              line = 0;
              ++row;
            }
          }
          int64_t r = r0 + g * R, lineOffset = bandLineOffset(p, r);
          for (int64_t i = 0; i < R; ++i)
            rows[i] = x.rowBase[r + i] + rowOffset + k * s;
          for (int64_t j = 0; j < K; ++j)
            lines[j] = x.lineBase[c + k + j] + lineOffset;
          int64_t done = kernel(rows, lines, K, streaming);
          finishColumns(rows, lines, done, K, R, s);
        }
    }
  }
}

/// Whether moveBlockPairs takes the plan's direct blocks.
bool pairBlocks(const TiledTransposePlan &p) {
  return p.elementBytes >= 4 && p.b % 16 == 0;
}

/// A block inside the array, straight from tile to tile.
void moveBlockDirect(const TiledTransposePlan &p, const uint8_t *src,
                     uint8_t *dst, int64_t p0, int64_t q0, int64_t nextP0,
                     int64_t nextQ0, DirectScratch &x, bool streaming) {
  if (pairBlocks(p))
    moveBlockPairs(p, src, dst, p0, q0, nextP0, nextQ0, x, streaming);
  else
    moveBlockBands(p, src, dst, p0, q0, nextP0, nextQ0, x, streaming);
}

/// Whether the plan's interior blocks can skip the stages.
bool hasDirectBlocks(const TiledTransposePlan &p) {
  int log2 = bandLog2(p.elementBytes);
  return log2 >= 0 && p.kernels->transposeRows[log2] &&
         p.b2 % (64 / p.elementBytes) == 0;
}

} // namespace

void runTiledTranspose(const TiledTransposePlan &plan, const uint8_t *src,
                       uint8_t *dst, int threads, bool streaming) {
  int64_t blockRows = ceilDivide(plan.rows, plan.blockRows);
  int64_t blockCols = ceilDivide(plan.cols, plan.blockCols);
  int64_t blocks = blockRows * blockCols;
  int64_t blockBytes = plan.blockRows * plan.blockCols * plan.elementBytes;
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 18) / blockBytes);
  // Blocks (p, q) in that order: consecutive blocks read consecutive
  // source tiles (a tile row's worth of streams). Reading down a column of
  // source tiles instead, so that consecutive blocks wrote consecutive
  // destination tiles, was 10-15 points slower with the direct blocks
  // (f32 [4096,4096] and [8192,8192], thread CPU time, EPYC VM).
  bool direct = hasDirectBlocks(plan);
  parallelFor(
      threads, plan.batch * blocks, grain, [&](int64_t begin, int64_t end) {
        std::vector<uint8_t> stages;
        DirectScratch scratch;
        if (direct) {
          scratch.rowBase.resize(plan.blockRows);
          scratch.lineBase.resize(plan.blockCols);
          scratch.lines.resize(plan.b);
        }
        auto origin = [&](int64_t item) {
          int64_t p = item % blocks / blockCols, q = item % blockCols;
          return std::pair<int64_t, int64_t>(p * plan.blockRows,
                                             q * plan.blockCols);
        };
        auto inside = [&](std::pair<int64_t, int64_t> o) {
          return o.first + plan.blockRows <= plan.rows &&
                 o.second + plan.blockCols <= plan.cols;
        };
        for (int64_t item = begin; item < end; ++item) {
          auto [p0, q0] = origin(item);
          // The batch's matrix: its tiles in either buffer.
          const uint8_t *from = src + item / blocks * plan.srcMatrixBytes;
          uint8_t *to = dst + item / blocks * plan.dstMatrixBytes;
          if (direct && inside({p0, q0})) {
            std::pair<int64_t, int64_t> next(-1, -1);
            if (item + 1 < end && (item + 1) % blocks != 0 &&
                inside(origin(item + 1)))
              next = origin(item + 1);
            moveBlockDirect(plan, from, to, p0, q0, next.first, next.second,
                            scratch, streaming);
            continue;
          }
          if (stages.empty())
            stages.resize(2 * blockBytes + 64);
          uint8_t *stageA =
              stages.data() +
              (64 - reinterpret_cast<uintptr_t>(stages.data()) % 64) % 64;
          moveBlock(plan, from, to, p0, q0, stageA, stageA + blockBytes,
                    streaming);
        }
        if (streaming)
          storeFence();
      });
  if (plan.dstBytes > plan.tailStart)
    std::memset(dst + plan.tailStart, 0, plan.dstBytes - plan.tailStart);
}

std::string describeTiledTranspose(const TiledTransposePlan &plan) {
  std::string text =
      std::string("tiled transpose") +
      (plan.batch > 1 ? " of " + std::to_string(plan.batch) + " matrices"
                      : "") +
      ": (" + std::to_string(plan.a) + "," + std::to_string(plan.b) +
      ") tiles to (" + std::to_string(plan.a2) + "," + std::to_string(plan.b2) +
      ") tiles of the other dim order";
  std::string block =
      std::to_string(plan.blockRows) + "x" + std::to_string(plan.blockCols);
  if (hasDirectBlocks(plan)) {
    int64_t R = 64 / plan.elementBytes;
    std::string group = pairBlocks(plan) ? ", two at a time" : "";
    text += ", " + block + " blocks straight from tiles to tiles in bands of " +
            std::to_string(R) + " rows" + group +
            " (stages where a block crosses the array's edge)";
  } else
    text += " through " + block + " stages";
  return text + ", " + std::to_string(plan.elementBytes) + "-byte elements";
}

} // namespace tessel::relayout
