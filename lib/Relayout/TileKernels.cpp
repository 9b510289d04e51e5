//===- TileKernels.cpp - Row-major <-> T(a,b) and T(a,b)(k,1) tiles -------===//
//
// The TPU formats tile the two most minor dims of a row-major array; the
// more major dims are left as they are. Element (l, r, c) (l the linear
// index of the leading dims) of a rows x cols matrix lands in tile row
// r / a, tile column c / b, and inside the tile at
//
//   k == 1:  (r % a) * b + c % b                  T(a,b)
//   k  > 1:  ((r % a) / k * b + c % b) * k + r % k   T(a,b)(k,1): k rows are
//            interleaved, element by element (bf16 pairs, s8 quads).
//
// One work item is a row of tiles: a source rows of the matrix and
// ceil(cols/b) consecutive destination tiles (or the reverse to untile).
//
//===----------------------------------------------------------------------===//
#include "Isa.h"
#include "Kernels.h"
#include "Simd.h"

#include <numeric>

namespace tessel::relayout {

namespace {

/// Whole bytes, or (with `subByte`) 1, 2 or 4 bits an element.
bool bitsAllowed(const TiledLayout &layout, bool subByte) {
  int64_t bits = layout.elementBits();
  return bits % 8 == 0 || (subByte && bits < 8 && 8 % bits == 0);
}

/// Untiled, in any dim order.
bool isPlain(const TiledLayout &layout, bool subByte) {
  return layout.layout().tiles.empty() && bitsAllowed(layout, subByte);
}

/// a, b, k of a row-major layout tiled by T(a,b) or T(a,b)(k,1) (with
/// `anyOrder`, of a layout in any dim order so tiled: the tiles then cover
/// the two most minor dims of the physical order).
std::optional<std::array<int64_t, 3>> tpuTile(const TiledLayout &layout,
                                              bool subByte = false,
                                              bool anyOrder = false) {
  const Layout &l = layout.layout();
  if (layout.rank() < 1 || !bitsAllowed(layout, subByte) ||
      (!anyOrder &&
       l.minorToMajor != Layout::rowMajor(layout.rank()).minorToMajor) ||
      l.tiles.empty() || l.tiles.size() > 2 || l.tiles[0].dims.size() != 2)
    return std::nullopt;
  int64_t a = l.tiles[0].dims[0], b = l.tiles[0].dims[1], k = 1;
  if (a < 1 || b < 1)
    return std::nullopt;
  if (l.tiles.size() == 2) {
    const std::vector<int64_t> &second = l.tiles[1].dims;
    if (second.size() != 2 || second[1] != 1 || second[0] < 1 ||
        a % second[0] != 0)
      return std::nullopt;
    k = second[0];
  }
  return std::array<int64_t, 3>{a, b, k};
}

} // namespace

std::optional<TilePlan> planTile(const TiledLayout &from,
                                 const TiledLayout &to) {
  if (from.elementBits() != to.elementBits())
    return std::nullopt;
  // Both sides in one dim order, row-major or not: the tiles cover the
  // two most minor dims of the physical order, and the plan works on the
  // dims in that order (f32[64,256,1024]{1,2,0} to {1,2,0:T(8,128)} tiles
  // a [64,1024,256] row-major array).
  if (from.layout().minorToMajor != to.layout().minorToMajor)
    return std::nullopt;
  TilePlan plan;
  const TiledLayout *tiled;
  if (isPlain(from, true) && from.layout().tailPaddingAlignment == 1) {
    plan.toTiled = true;
    tiled = &to;
  } else if (isPlain(to, true) && to.layout().tailPaddingAlignment == 1) {
    plan.toTiled = false;
    tiled = &from;
  } else {
    return std::nullopt;
  }
  std::optional<std::array<int64_t, 3>> tile = tpuTile(*tiled, true, true);
  if (!tile)
    return std::nullopt;
  std::vector<int64_t> dims;
  for (int64_t d : from.physicalOrder())
    dims.push_back(from.logicalDims()[d]);
  int64_t rank = from.rank();
  int64_t bits = from.elementBits();
  plan.elementBytes = bits / 8;
  plan.rows = rank >= 2 ? dims[rank - 2] : 1;
  plan.cols = dims[rank - 1];
  plan.lead = 1;
  for (int64_t i = 0; i + 2 < rank; ++i)
    plan.lead *= dims[i];
  plan.a = (*tile)[0];
  plan.b = (*tile)[1];
  plan.k = (*tile)[2];
  if (bits < 8) {
    // Packed elements (s4 E(4)): when every matrix row and every tile row
    // is whole bytes, the bits move as bytes: a rows x cols matrix of
    // n-bit elements is a rows x (cols * n / 8) matrix of bytes, tiled by
    // T(a, b * n / 8), padding included.
    if (plan.k != 1 || plan.cols * bits % 8 || plan.b * bits % 8)
      return std::nullopt;
    plan.subByteBits = bits;
    plan.elementBytes = 1;
    plan.cols = plan.cols * bits / 8;
    plan.b = plan.b * bits / 8;
  }
  plan.tailStart = to.tiledElements() * bits / 8;
  plan.dstBytes = to.physicalBytes();
  return plan;
}

namespace {

/// Writes k rows of cw elements interleaved into `out`, then zeroes the
/// slots of columns cw..b.
void interleave(const KernelSet &kernels, uint8_t *out,
                const uint8_t *const *rows, int64_t cw, int64_t b, int64_t s,
                int64_t k, bool streaming) {
  int64_t j = kernels.interleave(out, rows, cw, s, k, streaming);
  for (; j < cw; ++j)
    for (int64_t q = 0; q < k; ++q)
      std::memcpy(out + (j * k + q) * s, rows[q] + j * s, s);
  if (cw < b)
    kernels.zero(out + cw * k * s, (b - cw) * k * s, streaming);
}

/// The inverse of interleave for the rows whose pointer is not null.
void deinterleave(const KernelSet &kernels, const uint8_t *in,
                  uint8_t *const *rows, int64_t cw, int64_t s, int64_t k,
                  bool streaming) {
  bool all = true;
  for (int64_t q = 0; q < k; ++q)
    all = all && rows[q];
  int64_t j = all ? kernels.deinterleave(in, rows, cw, s, k, streaming) : 0;
  for (; j < cw; ++j)
    for (int64_t q = 0; q < k; ++q)
      if (rows[q])
        std::memcpy(rows[q] + j * s, in + (j * k + q) * s, s);
}

} // namespace

namespace {

/// The vector loop of sse2Interleave: streams every iteration when
/// `stream` (out then on a line boundary).
int64_t sse2InterleaveLoop(uint8_t *out, const uint8_t *const *rows, int64_t cw,
                           int64_t s, int64_t k, bool stream) {
  int64_t j = 0;
#if defined(__SSE2__)
  // Row pointers in locals: stores through uint8_t* may alias `rows`, and
  // reloading them after every store halves the speed of these loops.
  if (s == 2 && k == 2) {
    const uint8_t *r0 = rows[0], *r1 = rows[1];
    for (; j + 8 <= cw; j += 8) {
      __m128i v[2] = {simd::load(r0 + j * 2), simd::load(r1 + j * 2)};
      simd::round<2, 2>(v);
      simd::storeTo(out + j * 4, v[0], stream);
      simd::storeTo(out + j * 4 + 16, v[1], stream);
    }
  } else if (s == 1 && k == 4) {
    const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
    for (; j + 16 <= cw; j += 16) {
      __m128i v[4] = {simd::load(r0 + j), simd::load(r1 + j),
                      simd::load(r2 + j), simd::load(r3 + j)};
      simd::rounds<1, 4, 2>(v);
      for (int m = 0; m < 4; ++m)
        simd::storeTo(out + j * 4 + 16 * m, v[m], stream);
    }
  }
#else
  (void)out, (void)rows, (void)cw, (void)s, (void)k, (void)stream;
#endif
  return j;
}

} // namespace

int64_t sse2Interleave(uint8_t *out, const uint8_t *const *rows, int64_t cw,
                       int64_t s, int64_t k, bool streaming) {
  if (!vectorInterleaved(s, k))
    return 0;
  auto body = [&](uint8_t *o, const uint8_t *const *r, int64_t c, bool stream) {
    return sse2InterleaveLoop(o, r, c, s, k, stream);
  };
  return interleaveInLines(body, out, rows, cw, s, k, streaming);
}

int64_t sse2Deinterleave(const uint8_t *in, uint8_t *const *rows, int64_t cw,
                         int64_t s, int64_t k, bool streaming) {
  int64_t j = 0;
#if defined(__SSE2__)
  // Four vectors per row per step, so that each row receives whole 64-byte
  // lines in a row (streaming stores combine them).
  StreamRange range;
  if (streaming)
    range = rowsStreamRange(rows, k, cw, s);
  if (s == 2 && k == 2) {
    uint8_t *o0 = rows[0], *o1 = rows[1];
    for (; j + 32 <= cw; j += 32) {
      bool stream = j + 32 <= range.end;
      __m128i row[2][4];
      for (int m = 0; m < 4; ++m) {
        __m128i v[2] = {simd::load(in + (j + 8 * m) * 4),
                        simd::load(in + (j + 8 * m) * 4 + 16)};
        simd::rounds<2, 2, 3>(v);
        row[0][m] = v[0];
        row[1][m] = v[1];
      }
      for (int m = 0; m < 4; ++m)
        simd::storeTo(o0 + (j + 8 * m) * 2, row[0][m], stream);
      for (int m = 0; m < 4; ++m)
        simd::storeTo(o1 + (j + 8 * m) * 2, row[1][m], stream);
    }
  } else if (s == 1 && k == 4) {
    uint8_t *o[4] = {rows[0], rows[1], rows[2], rows[3]};
    for (; j + 64 <= cw; j += 64) {
      bool stream = j + 64 <= range.end;
      __m128i row[4][4];
      for (int m = 0; m < 4; ++m) {
        __m128i v[4];
        for (int n = 0; n < 4; ++n)
          v[n] = simd::load(in + (j + 16 * m) * 4 + 16 * n);
        simd::rounds<1, 4, 4>(v);
        for (int q = 0; q < 4; ++q)
          row[q][m] = v[q];
      }
      for (int q = 0; q < 4; ++q)
        for (int m = 0; m < 4; ++m)
          simd::storeTo(o[q] + j + 16 * m, row[q][m], stream);
    }
  }
#else
  (void)in, (void)rows, (void)cw, (void)s, (void)k, (void)streaming;
#endif
  return j;
}

namespace {

/// Tiles one tile: rowsHere rows of cw elements, `rowStride` bytes apart
/// from `in` (the source matrix or a tile), into `tile`, the slots past
/// them zeroed. `rows` is scratch for k row pointers.
void tileTile(const TilePlan &p, const uint8_t *in, int64_t rowStride,
              uint8_t *tile, int64_t cw, int64_t rowsHere, const uint8_t *zeros,
              bool streaming, const uint8_t **rows) {
  int64_t s = p.elementBytes, b = p.b, k = p.k;
  for (int64_t g = 0; g < p.a / k; ++g) {
    uint8_t *group = tile + g * k * b * s;
    if (k == 1) {
      if (g < rowsHere) {
        p.kernels->copy(group, in + g * rowStride, cw * s, streaming);
        if (cw < b)
          p.kernels->zero(group + cw * s, (b - cw) * s, streaming);
      } else {
        p.kernels->zero(group, b * s, streaming);
      }
      continue;
    }
    for (int64_t q = 0; q < k; ++q) {
      int64_t r = g * k + q;
      rows[q] = r < rowsHere ? in + r * rowStride : zeros;
    }
    interleave(*p.kernels, group, rows, cw, b, s, k, streaming);
  }
}

void tileRows(const TilePlan &p, const uint8_t *src, uint8_t *dst,
              const uint8_t *zeros, int64_t begin, int64_t end,
              bool streaming) {
  int64_t s = p.elementBytes, a = p.a, b = p.b, k = p.k;
  int64_t rowBlocks = ceilDivide(p.rows, a), colBlocks = ceilDivide(p.cols, b);
  int64_t tileBytes = a * b * s, tileRowBytes = a * p.cols * s;
  // A tile row's source is a rows read a tile's width at a time, several
  // streams of a few hundred bytes, which the hardware prefetchers do not
  // keep ahead of (on Zen 5, f32 T(8,128) ran at 72% of a streaming copy
  // with no software prefetch). Two ways around it:
  //  - Uninterleaved tiles whose rows are two lines or more read their
  //    source in order instead, one row after another from start to end:
  //    one stream, and each row's pieces go to every tile at once (whole
  //    lines, which streaming stores write as well as a sequential run).
  //    Zen 5, one thread, thread CPU time, alternated, 64 / 256 MiB: f32
  //    T(8,128) 73-81% / 78-83% -> 104-106% / 100-107% of copy; s8
  //    T(32,128) 65-67% -> 104-108%, f64 84-86% -> 106-109%. One-line rows
  //    (s4 T(8,128) moved as bytes) measured worse in this order.
  //  - The others, which must read k rows together, prefetch the next tile
  //    row while they write this one: as many bytes as a tile at each tile,
  //    so that the next row arrives in one sequential run, into L1 (into L2
  //    only was slower). s8 (4,1) 63-75% -> 85-115%, s4 T(8,128) 52-63% ->
  //    70-94%, bf16 (2,1) 74-95% -> 74-110%. Where a tile row is more than
  //    a quarter of the L2 it would not stay there until it is read: such
  //    rows prefetch each row's part of the next tile instead (512 bytes
  //    ahead for one-line tile rows), the way every tiling did before.
  bool rowAhead = tileRowBytes <= hostCaches().l2 / 4;
  std::vector<const uint8_t *> rows(k);
  for (int64_t item = begin; item < end; ++item) {
    int64_t l = item / rowBlocks, r0 = item % rowBlocks * a;
    int64_t rowsHere = std::min(a, p.rows - r0);
    const uint8_t *in = src + (l * p.rows + r0) * p.cols * s;
    uint8_t *out = dst + item * colBlocks * tileBytes;
    int64_t cb = 0;
    if (k == 1 && rowsHere == a && b * s >= 2 * kLineBytes) {
      cb = p.cols / b;
      for (int64_t r = 0; r < a; ++r)
        p.kernels->copyRows(out + r * b * s, tileBytes, in + r * p.cols * s,
                            b * s, b * s, cb, streaming);
    }
    for (; cb < colBlocks; ++cb) {
      int64_t c0 = cb * b, cw = std::min(b, p.cols - c0);
      uint8_t *tile = out + cb * tileBytes;
      if (rowAhead) {
        if (item + 1 < end)
          for (int64_t o = 0; o < tileBytes; o += kLineBytes)
            __builtin_prefetch(in + tileRowBytes + cb * tileBytes + o, 0, 3);
      } else if (cb + 1 < colBlocks) {
        int64_t ahead = b * s <= kLineBytes ? 512 / (b * s) : 1;
        for (int64_t r = 0; r < rowsHere; ++r)
          for (int64_t o = 0; o < b * s; o += kLineBytes)
            __builtin_prefetch(in + (r * p.cols + c0 + ahead * b) * s + o, 0,
                               3);
      }
      if (k == 1 && cw == b && rowsHere == a) {
        p.kernels->copyRows(tile, b * s, in + c0 * s, p.cols * s, b * s, a,
                            streaming);
        continue;
      }
      tileTile(p, in + c0 * s, p.cols * s, tile, cw, rowsHere, zeros, streaming,
               rows.data());
    }
  }
}

/// Untiles one row of tiles into `out`, a rows of the destination matrix.
void untileRow(const TilePlan &p, const uint8_t *in, uint8_t *out,
               int64_t rowsHere, bool streaming, uint8_t **rows);
/// The same with streaming stores, for tiles whose rows are interleaved:
/// one destination row at a time, or through a one-tile stage.
void untileRowByRows(const TilePlan &p, const uint8_t *in, uint8_t *out,
                     int64_t rowsHere);
void untileRowStaged(const TilePlan &p, const uint8_t *in, uint8_t *out,
                     int64_t rowsHere, uint8_t *stage, uint8_t **rows);

/// Untiles one tile: its first rowsHere rows, cw elements each, into rows
/// `rowStride` bytes apart from `out` (the destination matrix or a stage).
/// `rows` is scratch for k row pointers.
void untileTile(const TilePlan &p, const uint8_t *tile, uint8_t *out,
                int64_t rowStride, int64_t cw, int64_t rowsHere, bool streaming,
                uint8_t **rows) {
  int64_t s = p.elementBytes, b = p.b, k = p.k;
  if (k == 1) {
    p.kernels->copyRows(out, rowStride, tile, b * s, cw * s, rowsHere,
                        streaming);
    return;
  }
  for (int64_t g = 0; g * k < rowsHere; ++g) {
    const uint8_t *group = tile + g * k * b * s;
    if (k == 1) {
      p.kernels->copy(out + g * rowStride, group, cw * s, streaming);
      continue;
    }
    for (int64_t q = 0; q < k; ++q) {
      int64_t r = g * k + q;
      rows[q] = r < rowsHere ? out + r * rowStride : nullptr;
    }
    deinterleave(*p.kernels, group, rows, cw, s, k, streaming);
  }
}

void untileRows(const TilePlan &p, const uint8_t *src, uint8_t *dst,
                int64_t begin, int64_t end, bool streaming) {
  int64_t s = p.elementBytes, a = p.a, b = p.b;
  int64_t rowBlocks = ceilDivide(p.rows, a), colBlocks = ceilDivide(p.cols, b);
  // Plain tiles go straight out: each tile row is a contiguous run of b
  // elements (512 bytes for f32 T(8,128)), written line by line, which runs
  // at streaming-copy speed. Interleaved tiles go straight out too when the
  // level's vectors are 32 bytes or more (AVX2, AVX-512): each row then
  // receives half or all of a cache line per store, and the lines complete
  // in order (bf16 and s8 untiling measured 1.5-2x faster than through the
  // stage on the Zen 4 VM). bf16 (2,1) and s8 (4,1) tiles at AVX2 go one
  // destination row at a time instead (untileRowByRows, measured on Zen 3).
  // With 16-byte vectors they go through a one-tile stage (see
  // untileRowStaged).
  bool byRows = streaming && p.kernels->pickLane && vectorInterleaved(s, p.k);
  bool staged = !byRows && streaming && p.k > 1 && p.kernels->vectorBytes < 32;
  std::vector<uint8_t> stage(staged ? a * b * s : 0);
  std::vector<uint8_t *> rows(p.k);
  for (int64_t item = begin; item < end; ++item) {
    int64_t l = item / rowBlocks, r0 = item % rowBlocks * a;
    int64_t rowsHere = std::min(a, p.rows - r0);
    const uint8_t *in = src + item * colBlocks * a * b * s;
    uint8_t *out = dst + (l * p.rows + r0) * p.cols * s;
    if (byRows)
      untileRowByRows(p, in, out, rowsHere);
    else if (staged)
      untileRowStaged(p, in, out, rowsHere, stage.data(), rows.data());
    else
      untileRow(p, in, out, rowsHere, streaming, rows.data());
  }
}

/// Streaming stores that alternate between the rows of a group line by line
/// (deinterleave) ran at 50-60% of a streaming copy for bf16 (2,1) tiles on
/// Zen 3 (AVX2, 64 MiB, one thread), through sse2's one-tile stage no
/// faster. Taking one destination row of a tile at a time, its lane picked
/// out of the group's interleaved rows (read again from L1 for the other
/// lane), with the next tile prefetched into L1 first, reached 77-87%
/// (91-102% with two threads).
/// Longer runs of a row (two or four tiles side by side) were slower (the
/// group's reads then jump between tiles). s8 (4,1) tiles, whose lane is
/// picked with byte shuffles, went from 55-57% to 60-62% with one thread
/// and from 69-75% to 79-88% with two.
void untileRowByRows(const TilePlan &p, const uint8_t *in, uint8_t *out,
                     int64_t rowsHere) {
  int64_t s = p.elementBytes, a = p.a, b = p.b, k = p.k;
  int64_t colBlocks = ceilDivide(p.cols, b), tileBytes = a * b * s;
  for (int64_t cb = 0; cb < colBlocks; ++cb) {
    const uint8_t *tile = in + cb * tileBytes;
    if (cb + 1 < colBlocks)
      for (int64_t l = 0; l < tileBytes; l += kLineBytes)
        __builtin_prefetch(tile + tileBytes + l, 0, 3);
    int64_t c0 = cb * b, cw = std::min(b, p.cols - c0);
    for (int64_t r = 0; r < rowsHere; ++r) {
      const uint8_t *group = tile + r / k * k * b * s;
      uint8_t *row = out + (r * p.cols + c0) * s;
      int64_t q = r % k;
      int64_t j = p.kernels->pickLane(group, row, cw, s, k, q, true);
      for (; j < cw; ++j)
        std::memcpy(row + j * s, group + (j * k + q) * s, s);
    }
  }
}

/// Deinterleaving k rows straight to memory keeps k partial lines in flight
/// per store group and runs at about 45% of a streaming copy (bf16 (2,1),
/// 64 MiB); staging a whole band of rows first serializes the reads and the
/// writes (about 55%). One tile at a time, deinterleaved into a stage that
/// stays in L1 and then written row by row, reaches about 78%.
void untileRowStaged(const TilePlan &p, const uint8_t *in, uint8_t *out,
                     int64_t rowsHere, uint8_t *stage, uint8_t **rows) {
  int64_t s = p.elementBytes, a = p.a, b = p.b;
  for (int64_t cb = 0; cb < ceilDivide(p.cols, b); ++cb) {
    int64_t c0 = cb * b, cw = std::min(b, p.cols - c0);
    untileTile(p, in + cb * a * b * s, stage, b * s, cw, rowsHere, false, rows);
    for (int64_t r = 0; r < rowsHere; ++r)
      p.kernels->copy(out + (r * p.cols + c0) * s, stage + r * b * s, cw * s,
                      true);
  }
}

void untileRow(const TilePlan &p, const uint8_t *in, uint8_t *out,
               int64_t rowsHere, bool streaming, uint8_t **rows) {
  int64_t s = p.elementBytes, a = p.a, b = p.b;
  for (int64_t cb = 0; cb < ceilDivide(p.cols, b); ++cb) {
    int64_t c0 = cb * b, cw = std::min(b, p.cols - c0);
    untileTile(p, in + cb * a * b * s, out + c0 * s, p.cols * s, cw, rowsHere,
               streaming, rows);
  }
}

} // namespace

void runTile(const TilePlan &plan, const uint8_t *src, uint8_t *dst,
             int threads, bool streaming) {
  int64_t rowBlocks = ceilDivide(plan.rows, plan.a);
  int64_t items = plan.lead * rowBlocks;
  int64_t itemBytes =
      ceilDivide(plan.cols, plan.b) * plan.a * plan.b * plan.elementBytes;
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / itemBytes);
  std::vector<uint8_t> zeros(plan.toTiled ? plan.b * plan.elementBytes : 0);
  parallelFor(threads, items, grain, [&](int64_t begin, int64_t end) {
    if (plan.toTiled)
      tileRows(plan, src, dst, zeros.data(), begin, end, streaming);
    else
      untileRows(plan, src, dst, begin, end, streaming);
    if (streaming)
      storeFence();
  });
  if (plan.dstBytes > plan.tailStart)
    std::memset(dst + plan.tailStart, 0, plan.dstBytes - plan.tailStart);
}

std::optional<RetilePlan> planRetile(const TiledLayout &from,
                                     const TiledLayout &to) {
  std::optional<std::array<int64_t, 3>> in = tpuTile(from), out = tpuTile(to);
  if (!in || !out || from.elementBits() != to.elementBits())
    return std::nullopt;
  RetilePlan plan;
  const std::vector<int64_t> &dims = from.logicalDims();
  int64_t rank = from.rank();
  TilePlan common;
  common.elementBytes = from.elementBits() / 8;
  common.rows = rank >= 2 ? dims[rank - 2] : 1;
  common.cols = dims[rank - 1];
  for (int64_t i = 0; i + 2 < rank; ++i)
    common.lead *= dims[i];
  plan.source = plan.destination = common;
  plan.source.toTiled = false;
  plan.source.a = (*in)[0];
  plan.source.b = (*in)[1];
  plan.source.k = (*in)[2];
  plan.destination.a = (*out)[0];
  plan.destination.b = (*out)[1];
  plan.destination.k = (*out)[2];
  plan.band = std::lcm(plan.source.a, plan.destination.a);
  // The stage holds one band of rows; beyond 64 MiB the generic kernel is
  // as good.
  if (plan.band * common.cols * common.elementBytes > (int64_t(64) << 20))
    return std::nullopt;
  const TilePlan &source = plan.source, &target = plan.destination;
  bool whole = common.cols % source.b == 0 && common.rows % plan.band == 0;
  if (whole && source.k == 1 && target.k == 1 && source.b == target.b)
    plan.directRows = std::gcd(source.a, target.a);
  plan.tileByTile = whole && source.a == target.a && source.b == target.b &&
                    source.k != target.k && (source.k == 1 || target.k == 1);
  plan.tailStart = to.tiledElements() * common.elementBytes;
  plan.dstBytes = to.physicalBytes();
  return plan;
}

void runRetile(const RetilePlan &plan, const uint8_t *src, uint8_t *dst,
               int threads, bool streaming) {
  const TilePlan &in = plan.source, &out = plan.destination;
  int64_t s = in.elementBytes;
  int64_t bands = ceilDivide(in.rows, plan.band);
  auto rowBytes = [&](const TilePlan &p) {
    return ceilDivide(p.cols, p.b) * p.a * p.b * s;
  };
  int64_t inRowBlocks = ceilDivide(in.rows, in.a);
  int64_t outRowBlocks = ceilDivide(out.rows, out.a);
  int64_t bandBytes = plan.band * in.cols * s;
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / bandBytes);
  std::vector<uint8_t> zeros(out.b * s);
  parallelFor(threads, in.lead * bands, grain, [&](int64_t begin, int64_t end) {
    std::vector<uint8_t> stage(plan.directRows || plan.tileByTile ? 0
                                                                  : bandBytes);
    for (int64_t item = begin; item < end; ++item) {
      int64_t l = item / bands, r0 = item % bands * plan.band;
      TilePlan untile = in, tile = out;
      untile.lead = tile.lead = 1;
      untile.rows = tile.rows = std::min(plan.band, in.rows - r0);
      const uint8_t *from = src + (l * inRowBlocks + r0 / in.a) * rowBytes(in);
      uint8_t *to = dst + (l * outRowBlocks + r0 / out.a) * rowBytes(out);
      if (plan.tileByTile) {
        // One tile row (band == a): each source tile straight into its
        // destination tile, read and written in order.
        int64_t colBlocks = in.cols / in.b, tileBytes = in.a * in.b * s;
        std::vector<const uint8_t *> rows(out.k);
        std::vector<uint8_t *> outRows(in.k);
        for (int64_t cb = 0; cb < colBlocks; ++cb) {
          const uint8_t *tile = from + cb * tileBytes;
          uint8_t *target = to + cb * tileBytes;
          if (out.k == 1)
            untileTile(in, tile, target, in.b * s, in.b, in.a, streaming,
                       outRows.data());
          else
            tileTile(out, tile, in.b * s, target, in.b, in.a, zeros.data(),
                     streaming, rows.data());
        }
        continue;
      }
      if (plan.directRows) {
        // Tiles of the same width, no (k,1): every g = directRows rows of
        // a tile column are one run of g * b elements in both buffers, so
        // the band moves as such runs, with no stage. The source's padding
        // is never read: bands and tile columns are whole. Zen 5, one
        // thread, f32 [4096,4096]: T(8,128) to T(4,128) 50-53% of a copy
        // through the stage, 82-86% so (81% taking the runs in the
        // destination's order); T(8,128) to T(2,128) 97-100%, T(4,128) to
        // T(8,128) 91-108%.
        int64_t g = plan.directRows, run = g * in.b * s;
        int64_t colBlocks = in.cols / in.b;
        int64_t inTile = in.a * in.b * s, outTile = out.a * out.b * s;
        if (out.a == g) {
          // Each source tile in turn, its runs to one destination tile row
          // each.
          for (int64_t i = 0; i < plan.band / in.a; ++i)
            for (int64_t cb = 0; cb < colBlocks; ++cb)
              in.kernels->copyRows(
                  to + i * in.a / g * rowBytes(out) + cb * outTile,
                  rowBytes(out), from + i * rowBytes(in) + cb * inTile, run,
                  run, in.a / g, streaming);
        } else {
          // Run r of every tile column in turn (where in.a == g, a source
          // tile row read straight through).
          for (int64_t r = 0; r < plan.band; r += g)
            in.kernels->copyRows(
                to + r / out.a * rowBytes(out) + r % out.a * in.b * s, outTile,
                from + r / in.a * rowBytes(in) + r % in.a * in.b * s, inTile,
                run, colBlocks, streaming);
        }
        continue;
      }
      untileRows(untile, from, stage.data(), 0, ceilDivide(untile.rows, in.a),
                 false);
      tileRows(tile, stage.data(), to, zeros.data(), 0,
               ceilDivide(tile.rows, out.a), streaming);
    }
    if (streaming)
      storeFence();
  });
  if (plan.dstBytes > plan.tailStart)
    std::memset(dst + plan.tailStart, 0, plan.dstBytes - plan.tailStart);
}

std::string describeRetile(const RetilePlan &plan) {
  auto tile = [](const TilePlan &p) {
    std::string text =
        "(" + std::to_string(p.a) + "," + std::to_string(p.b) + ")";
    return p.k > 1 ? text + "(" + std::to_string(p.k) + ",1)" : text;
  };
  std::string how =
      plan.tileByTile ? " tile by tile"
      : plan.directRows
          ? " straight from tile to tile in runs of " +
                std::to_string(plan.directRows) + " rows"
          : " through a stage of " + std::to_string(plan.band) + " rows";
  return "retile " + tile(plan.source) + " to " + tile(plan.destination) + how +
         ", " + std::to_string(plan.source.elementBytes) + "-byte elements";
}

std::string describeTile(const TilePlan &plan) {
  int64_t b = plan.subByteBits ? plan.b * 8 / plan.subByteBits : plan.b;
  std::string tile =
      "(" + std::to_string(plan.a) + "," + std::to_string(b) + ")";
  if (plan.k > 1)
    tile += "(" + std::to_string(plan.k) + ",1)";
  return std::string(plan.toTiled ? "tile rows into " : "untile rows from ") +
         tile + " tiles" +
         (plan.k > 1 ? ", " + std::to_string(plan.k) + " rows interleaved"
                     : "") +
         ", " +
         (plan.subByteBits
              ? std::to_string(plan.subByteBits) +
                    "-bit elements moved as bytes"
              : std::to_string(plan.elementBytes) + "-byte elements");
}

} // namespace tessel::relayout
