//===- HwyKernels.cpp - Relayout kernels for AVX2 and AVX-512 (Highway) ---===//
//
// Written once against Google Highway's portable vector ops and compiled by
// foreach_target.h for each x86 target Highway can attain (AVX2 and AVX3,
// i.e. AVX-512 F/BW/DQ/VL); Isa.cpp picks the one the plan runs. Vectors
// are 32 or 64 bytes, so the same source gives:
//
//   copy / zero     non-temporal stores of whole 64-byte lines (one vector
//                   on AVX-512), ordinary ones for the head and tail
//   interleave      k rows into a tile row: Highway's StoreInterleaved2/4
//   deinterleave    LoadInterleaved2/4 (bf16 pairs, s8 quads)
//   transposeSquare an L x L register transpose (L = lanes, at most 16 so
//                   that the vectors stay in registers: bf16 on AVX-512
//                   uses 256-bit vectors, s8 128-bit ones), the base of
//   transposeBand   64 / width source rows to one whole line of each
//                   destination row, straight from the registers (where
//                   a band does not fit the registers, the permutes use
//                   sse2's stage transposes instead). At AVX-512, 1- and
//                   2-byte elements gather each vector from four source
//                   rows instead (transposeBandGather): block-local
//                   unpacks then leave whole lines, 16 vectors a step.
//   transposeRows   the same bands with the source rows and destination
//                   lines listed one by one (the tiled transpose's, whose
//                   rows and lines lie in different tiles).
//   transposeWideBand  four bands at once, each destination row getting
//                   four lines back to back; 1- and 2-byte elements (and
//                   f32 at AVX2) through a stage in cache whose squares
//                   prefetch the next block (wideBandSquares)
//   nibbleWideBand  the same for 4-bit elements, rows paired into bytes
//                   straight into two stages
//
// The SSSE3 and SSE4 targets are left out: for these kernels they are
// SSE2 with other names, and tessel's own SSE2 kernels cover them.
//
//===----------------------------------------------------------------------===//
#include "Isa.h"

#include <cstring>
#include <type_traits>

// SSE4 and SSSE3 are not worth their compile time here (see above).
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SSE4)
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "HwyKernels.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep
#include <hwy/highway.h>

// The static target (Highway's scalar or emulated 128-bit code, for the
// x86-64 baseline) is compiled too but never used: sse2 is tessel's own.
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
HWY_BEFORE_NAMESPACE();
namespace tessel::relayout::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D8 = hn::ScalableTag<uint8_t>;
/// Bytes in a vector of this target.
constexpr int64_t kVector = static_cast<int64_t>(hn::MaxLanes(D8()));

inline bool alignedTo(const uint8_t *p, int64_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0;
}

void copyVec(uint8_t *dst, const uint8_t *src, int64_t bytes, bool streaming) {
  // Whole 64-byte lines only (see kLineBytes in Isa.h).
  int64_t head = streamingHead(dst);
  if (!streaming || bytes < head + kLineBytes) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const D8 d;
  // Calls of the C library for nothing cost as much as moving a tile row:
  // heads and tails are usually empty.
  if (head)
    std::memcpy(dst, src, head);
  int64_t i = head;
  for (; i + 4 * kVector <= bytes; i += 4 * kVector) {
    auto a = hn::LoadU(d, src + i);
    auto b = hn::LoadU(d, src + i + kVector);
    auto c = hn::LoadU(d, src + i + 2 * kVector);
    auto e = hn::LoadU(d, src + i + 3 * kVector);
    hn::Stream(a, d, dst + i);
    hn::Stream(b, d, dst + i + kVector);
    hn::Stream(c, d, dst + i + 2 * kVector);
    hn::Stream(e, d, dst + i + 3 * kVector);
  }
  for (; i + kLineBytes <= bytes; i += kLineBytes)
    for (int64_t v = 0; v < kLineBytes; v += kVector)
      hn::Stream(hn::LoadU(d, src + i + v), d, dst + i + v);
  if (i < bytes)
    std::memcpy(dst + i, src + i, bytes - i);
}

void copyRowsVec(uint8_t *dst, int64_t dstStride, const uint8_t *src,
                 int64_t srcStride, int64_t rowBytes, int64_t rows,
                 bool streaming) {
  for (int64_t r = 0; r < rows; ++r)
    copyVec(dst + r * dstStride, src + r * srcStride, rowBytes, streaming);
}

/// One vector of pairNibbles: the bytes at a and b combined into the low
/// nibbles' bytes at `low` and the high ones' at `high`.
HWY_INLINE void pairNibbleVector(const uint8_t *a, const uint8_t *b,
                                 uint8_t *low, uint8_t *high) {
  const D8 d;
  const hn::Repartition<uint16_t, D8> d16;
  auto lowMask = hn::Set(d, 0x0F), highMask = hn::Set(d, 0xF0);
  auto x = hn::LoadU(d, a), y = hn::LoadU(d, b);
  // Byte shifts by 4 as 16-bit shifts, masked.
  auto yUp = hn::BitCast(d, hn::ShiftLeft<4>(hn::BitCast(d16, y)));
  auto xDown = hn::BitCast(d, hn::ShiftRight<4>(hn::BitCast(d16, x)));
  hn::StoreU(hn::Or(hn::And(x, lowMask), hn::And(yUp, highMask)), d, low);
  hn::StoreU(hn::Or(hn::And(xDown, lowMask), hn::And(y, highMask)), d, high);
}

void pairNibblesVec(const uint8_t *a, const uint8_t *b, uint8_t *low,
                    uint8_t *high, int64_t bytes) {
  int64_t k = 0;
  for (; k + kVector <= bytes; k += kVector)
    pairNibbleVector(a + k, b + k, low + k, high + k);
  for (; k < bytes; ++k) {
    low[k] = static_cast<uint8_t>((a[k] & 0x0F) | (b[k] << 4));
    high[k] = static_cast<uint8_t>((a[k] >> 4) | (b[k] & 0xF0));
  }
}

void zeroVec(uint8_t *dst, int64_t bytes, bool streaming) {
  if (bytes <= 0)
    return;
  int64_t head = streamingHead(dst);
  if (!streaming || bytes < head + kLineBytes) {
    std::memset(dst, 0, bytes);
    return;
  }
  const D8 d;
  if (head)
    std::memset(dst, 0, head);
  int64_t i = head;
  auto zero = hn::Zero(d);
  for (; i + kLineBytes <= bytes; i += kLineBytes)
    for (int64_t v = 0; v < kLineBytes; v += kVector)
      hn::Stream(zero, d, dst + i + v);
  if (i < bytes)
    std::memset(dst + i, 0, bytes - i);
}

/// Stores v to p, non-temporally when `stream` (p then aligned to a
/// vector).
inline void put(uint8_t *p, hn::Vec<D8> v, bool stream) {
  if (stream)
    hn::Stream(v, D8(), p);
  else
    hn::StoreU(v, D8(), p);
}

/// Stores `count` vectors held in `buffer` (aligned) to out. Highway's
/// StoreInterleaved2/4 store only with ordinary stores: they fill the
/// buffer (in L1) and this streams it.
inline void flush(const uint8_t *buffer, int count, uint8_t *out, bool stream) {
  for (int m = 0; m < count; ++m)
    put(out + m * kVector, hn::Load(D8(), buffer + m * kVector), stream);
}

/// The vector loop of interleaveVec: streams every iteration when `stream`
/// (out then on a line boundary).
int64_t interleaveLoop(uint8_t *out, const uint8_t *const *rows, int64_t count,
                       int64_t s, int64_t k, bool stream) {
  const D8 d8;
  alignas(64) uint8_t buffer[4 * 64];
  int64_t j = 0;
  if (s == 2 && k == 2) {
    const hn::ScalableTag<uint16_t> d;
    constexpr int64_t n = kVector / 2;
    const uint8_t *r0 = rows[0], *r1 = rows[1];
    for (; j + n <= count; j += n) {
      auto a = hn::BitCast(d, hn::LoadU(d8, r0 + j * 2));
      auto b = hn::BitCast(d, hn::LoadU(d8, r1 + j * 2));
      hn::StoreInterleaved2(a, b, d, reinterpret_cast<uint16_t *>(buffer));
      flush(buffer, 2, out + j * 4, stream);
    }
  } else if (s == 1 && k == 4) {
    constexpr int64_t n = kVector;
    const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
    for (; j + n <= count; j += n) {
      hn::StoreInterleaved4(hn::LoadU(d8, r0 + j), hn::LoadU(d8, r1 + j),
                            hn::LoadU(d8, r2 + j), hn::LoadU(d8, r3 + j), d8,
                            buffer);
      flush(buffer, 4, out + j * 4, stream);
    }
  }
  return j;
}

int64_t interleaveVec(uint8_t *out, const uint8_t *const *rows, int64_t count,
                      int64_t s, int64_t k, bool streaming) {
  if (!vectorInterleaved(s, k))
    return 0;
  auto body = [&](uint8_t *o, const uint8_t *const *r, int64_t c, bool stream) {
    return interleaveLoop(o, r, c, s, k, stream);
  };
  return interleaveInLines(body, out, rows, count, s, k, streaming);
}

int64_t deinterleaveVec(const uint8_t *in, uint8_t *const *rows, int64_t count,
                        int64_t s, int64_t k, bool streaming) {
  const D8 d8;
  StreamRange range;
  if (streaming)
    range = rowsStreamRange(rows, k, count, s);
  // Each step fills one whole 64-byte line of every destination row with
  // consecutive stores (two vectors a row at AVX2): with one vector a row
  // per step, k half-written lines stay open at once. s8 (4,1) untiling on
  // Zen 3 (AVX2, 64 MiB, one thread) went from 12.2-12.5 to 15.7-16.4 GB/s
  // in thread CPU time.
  constexpr int kSteps = static_cast<int>(kLineBytes / kVector);
  static_assert(kSteps >= 1 && kSteps * kVector == kLineBytes);
  int64_t j = 0;
  if (s == 2 && k == 2) {
    const hn::ScalableTag<uint16_t> d;
    constexpr int64_t n = kVector / 2, line = n * kSteps;
    uint8_t *o0 = rows[0], *o1 = rows[1];
    for (; j + line <= count; j += line) {
      bool stream = j + line <= range.end;
      hn::Vec<decltype(d)> a[kSteps], b[kSteps];
      for (int u = 0; u < kSteps; ++u)
        hn::LoadInterleaved2(
            d, reinterpret_cast<const uint16_t *>(in + (j + u * n) * 4), a[u],
            b[u]);
      for (int u = 0; u < kSteps; ++u)
        put(o0 + (j + u * n) * 2, hn::BitCast(d8, a[u]), stream);
      for (int u = 0; u < kSteps; ++u)
        put(o1 + (j + u * n) * 2, hn::BitCast(d8, b[u]), stream);
    }
    for (; j + n <= count; j += n) {
      hn::Vec<decltype(d)> a, b;
      hn::LoadInterleaved2(d, reinterpret_cast<const uint16_t *>(in + j * 4), a,
                           b);
      put(o0 + j * 2, hn::BitCast(d8, a), false);
      put(o1 + j * 2, hn::BitCast(d8, b), false);
    }
  } else if (s == 1 && k == 4) {
    constexpr int64_t n = kVector, line = n * kSteps;
    for (; j + line <= count; j += line) {
      bool stream = j + line <= range.end;
      hn::Vec<D8> v[4][kSteps];
      for (int u = 0; u < kSteps; ++u)
        hn::LoadInterleaved4(d8, in + (j + u * n) * 4, v[0][u], v[1][u],
                             v[2][u], v[3][u]);
      for (int q = 0; q < 4; ++q)
        for (int u = 0; u < kSteps; ++u)
          put(rows[q] + j + u * n, v[q][u], stream);
    }
    for (; j + n <= count; j += n) {
      hn::Vec<D8> v[4];
      hn::LoadInterleaved4(d8, in + j * 4, v[0], v[1], v[2], v[3]);
      for (int q = 0; q < 4; ++q)
        put(rows[q] + j, v[q], false);
    }
  }
  return j;
}

/// Lane Q of k = 2 interleaved 2-byte elements (bf16 (2,1) tiles):
/// ConcatEven / ConcatOdd of two vectors.
template <int Q>
int64_t pickLane2(const uint8_t *in, uint8_t *out, int64_t count,
                  StreamRange range) {
  const D8 d8;
  const hn::ScalableTag<uint16_t> d;
  constexpr int64_t n = kVector / 2;
  int64_t j = 0;
  for (; j + n <= count; j += n) {
    auto lo = hn::BitCast(d, hn::LoadU(d8, in + j * 4));
    auto hi = hn::BitCast(d, hn::LoadU(d8, in + j * 4 + kVector));
    auto v = Q ? hn::ConcatOdd(d, hi, lo) : hn::ConcatEven(d, hi, lo);
    put(out + j * 2, hn::BitCast(d8, v), j + n <= range.end);
  }
  return j;
}

/// The byte shuffles of pickLane4: [q][m][b] is the source byte of byte b
/// (within its 128-bit block) for vector m and lane q, 0x80 for zero.
struct LaneShuffles {
  uint8_t bytes[4][4][32] = {};
  constexpr LaneShuffles() {
    for (int q = 0; q < 4; ++q)
      for (int m = 0; m < 4; ++m)
        for (int b = 0; b < 32; ++b) {
          int at = b % 16 - 4 * m;
          bytes[q][m][b] =
              at >= 0 && at < 4 ? static_cast<uint8_t>(q + 4 * at) : 0x80;
        }
  }
};
alignas(64) constexpr LaneShuffles kLaneShuffles;

/// Lane q of k = 4 interleaved bytes (s8 (4,1) tiles), 32 bytes from four
/// vectors: in each 128-bit block, vector m's four bytes of lane q go to
/// bytes 4m..4m+3 (a byte shuffle that zeroes the rest), the four are
/// OR-ed, and a 32-bit permute puts the blocks' dwords in order.
int64_t pickLane4(const uint8_t *in, uint8_t *out, int64_t count, int64_t q,
                  StreamRange range) {
  const D8 d;
  const hn::Repartition<uint32_t, D8> d32;
  const uint8_t(*index)[32] = kLaneShuffles.bytes[q];
  auto i0 = hn::LoadU(d, index[0]), i1 = hn::LoadU(d, index[1]);
  auto i2 = hn::LoadU(d, index[2]), i3 = hn::LoadU(d, index[3]);
  alignas(32) static constexpr uint32_t kOrder[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  auto order = hn::SetTableIndices(d32, kOrder);
  int64_t j = 0;
  for (; j + kVector <= count; j += kVector) {
    const uint8_t *p = in + j * 4;
    auto v = hn::Or(
        hn::Or(hn::TableLookupBytesOr0(hn::LoadU(d, p), i0),
               hn::TableLookupBytesOr0(hn::LoadU(d, p + kVector), i1)),
        hn::Or(hn::TableLookupBytesOr0(hn::LoadU(d, p + 2 * kVector), i2),
               hn::TableLookupBytesOr0(hn::LoadU(d, p + 3 * kVector), i3)));
    v = hn::BitCast(d, hn::TableLookupLanes(hn::BitCast(d32, v), order));
    put(out + j, v, j + kVector <= range.end);
  }
  return j;
}

int64_t pickLaneVec(const uint8_t *in, uint8_t *out, int64_t count, int64_t s,
                    int64_t k, int64_t q, bool streaming) {
  if (!vectorInterleaved(s, k))
    return 0;
  StreamRange range;
  if (streaming)
    range = alignedStreamRange(out, count, s);
  if (k == 4)
    return pickLane4(in, out, count, q, range);
  return q ? pickLane2<1>(in, out, count, range)
           : pickLane2<0>(in, out, count, range);
}

//===----------------------------------------------------------------------===//
// Transposes into the stage (rows 256 bytes apart)
//===----------------------------------------------------------------------===//

/// log2(K) rounds of block-local unpacks over K vectors: afterwards, in
/// every 128-bit block, v[c] holds column c of the K rows (the rotation of
/// Simd.h, with Highway's block-local InterleaveLower/Upper).
template <class D, int K> HWY_INLINE void blockTranspose(D d, hn::Vec<D> *v) {
  for (int round = 1; round < K; round *= 2) {
    hn::Vec<D> next[K];
    for (int j = 0; j < K / 2; ++j) {
      next[2 * j] = hn::InterleaveLower(d, v[j], v[j + K / 2]);
      next[2 * j + 1] = hn::InterleaveUpper(d, v[j], v[j + K / 2]);
    }
    for (int j = 0; j < K; ++j)
      v[j] = next[j];
  }
}

/// Where a band's source rows are: row r at base + r * stride (a strided
/// array), or listed one by one (the rows of a tiled transpose's band come
/// from different tiles).
struct StridedRows {
  const uint8_t *base;
  int64_t stride;
  const uint8_t *operator()(int64_t r) const { return base + r * stride; }
};
struct ListedRows {
  const uint8_t *const *rows;
  const uint8_t *operator()(int64_t r) const { return rows[r]; }
};

/// How far ahead of its reads a band prefetches in each of its rows.
constexpr int64_t kBandAhead = 128;

/// The line kBandAhead bytes past `p` (a band's read in one of its rows)
/// into L2, for rows at a stride (a permute's); listed rows (a tiled
/// transpose's, in tiles) prefetch nothing. A band reads a line of each of
/// 16 to 64 rows per step, more streams than the hardware prefetchers
/// follow. Issued one row at a time beside the row's own read (the same
/// prefetches as a burst before the step's reads gained half as much), by
/// the AVX-512 bands whose steps read each row's line whole: the 1- and
/// 2-byte bands' tile copies (rows 4 KiB apart) and 4- and 8-byte
/// elements (the AVX2 bands do without, see transposeBandOf). Measured on the
/// EPYC VM (Zen 4, thread CPU time, one thread, 64 MiB): s8 2-D from 31% to 45%
/// of copy, f32 2-D from 55% to 62%, f32 4-D from 34% to 47% (BENCHMARKS.md,
/// "Bands that prefetch their rows").
template <class Rows> HWY_INLINE void prefetchAhead(Rows, const uint8_t *p) {
  if constexpr (std::is_same_v<Rows, StridedRows>)
    __builtin_prefetch(p + kBandAhead, 0, 2);
}

/// Where a band's destination lines are: line c at base + c * stride, or
/// listed one by one.
struct StridedLines {
  uint8_t *base;
  int64_t stride;
  uint8_t *operator()(int64_t c) const { return base + c * stride; }
};
struct ListedLines {
  uint8_t *const *lines;
  uint8_t *operator()(int64_t c) const { return lines[c]; }
};

/// An L x L transpose (L = lanes of D) of source rows first..first + L,
/// `offset` bytes into each: blockTranspose within each group of K rows,
/// then the 128-bit blocks are transposed across the groups (one group:
/// nothing; two: the halves; four: adjacent blocks, then halves). Column i
/// leaves in v[i], a whole vector.
template <class D, class Rows>
HWY_INLINE void transposeSquare(D d, Rows rows, int64_t first, int64_t offset,
                                hn::Vec<D> *v, bool ahead) {
  using T = hn::TFromD<D>;
  constexpr int64_t W = sizeof(T), K = 16 / W;
  constexpr int64_t L = static_cast<int64_t>(hn::MaxLanes(D())), groups = L / K;
  using V = hn::Vec<D>;
  const hn::Repartition<uint8_t, D> d8;
  V a[L];
  for (int r = 0; r < L; ++r) {
    if (ahead)
      prefetchAhead(rows, rows(first + r) + offset);
    a[r] = hn::BitCast(d, hn::LoadU(d8, rows(first + r) + offset));
  }
  for (int g = 0; g < groups; ++g)
    blockTranspose<D, K>(d, a + g * K);
  for (int c = 0; c < K; ++c) {
    if constexpr (groups == 1) {
      v[c] = a[c];
    } else if constexpr (groups == 2) {
      v[c] = hn::ConcatLowerLower(d, a[K + c], a[c]);
      v[K + c] = hn::ConcatUpperUpper(d, a[K + c], a[c]);
    } else {
      static_assert(groups == 4, "256 or 512-bit vectors");
      V g0 = a[c], g1 = a[K + c], g2 = a[2 * K + c], g3 = a[3 * K + c];
      V lo01 = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(g1), g0);
      V hi01 = hn::OddEvenBlocks(g1, hn::SwapAdjacentBlocks(g0));
      V lo23 = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(g3), g2);
      V hi23 = hn::OddEvenBlocks(g3, hn::SwapAdjacentBlocks(g2));
      v[c] = hn::ConcatLowerLower(d, lo23, lo01);
      v[K + c] = hn::ConcatLowerLower(d, hi23, hi01);
      v[2 * K + c] = hn::ConcatUpperUpper(d, lo23, lo01);
      v[3 * K + c] = hn::ConcatUpperUpper(d, hi23, hi01);
    }
  }
}

/// Lanes of the square transposes: at most 16, so that a square's vectors
/// stay in registers (bf16 on AVX-512 uses 256-bit vectors, s8 128-bit).
template <typename T> constexpr size_t squareLanes() {
  return kVector / sizeof(T) < 16 ? kVector / sizeof(T) : 16;
}

/// Whether a band's squares fit the registers at once (32 at AVX-512, 16
/// at AVX2), so that transposeBandVec writes each line whole.
template <typename T> constexpr bool bandInRegisters() {
  constexpr int64_t L = static_cast<int64_t>(squareLanes<T>());
  constexpr int64_t squares = 64 / (L * static_cast<int64_t>(sizeof(T)));
  return squares * L <= (HWY_TARGET == HWY_AVX3 ? 32 : 16);
}

/// Copies the line at byte `offset` of each of a band's `height` rows into
/// `tile` (64 bytes a row), each row prefetched ahead as it goes: the tiles
/// of the bands whose rows are a multiple of 4 KiB apart, which would
/// otherwise share one L1 set.
template <class Rows>
HWY_INLINE void copyLinesToTile(Rows rows, int64_t offset, int64_t height,
                                uint8_t *tile) {
  const D8 d8;
  for (int64_t r = 0; r < height; ++r) {
    prefetchAhead(rows, rows(r) + offset);
    for (int64_t b = 0; b < 64; b += kVector)
      hn::Store(hn::LoadU(d8, rows(r) + offset + b), d8, tile + r * 64 + b);
  }
}

template <class D>
HWY_INLINE void storeLine(D d, hn::Vec<D> v, uint8_t *p, bool stream) {
  if (stream)
    hn::Stream(v, d, p);
  else
    hn::StoreU(v, d, p);
}

/// A band of 64 / W source rows: squares of L x L with L <= 16 (so that the
/// L vectors stay in registers), 64 / (L * W) squares side by side filling
/// one line of each destination line. `stream`: every line is on a
/// boundary and is streamed.
template <typename T, class Rows, class Lines>
int64_t transposeBandVec(Rows rows, Lines lines, int64_t columns, bool stream) {
  constexpr int64_t W = sizeof(T);
  using D = hn::CappedTag<T, squareLanes<T>()>;
  const D d;
  const hn::Repartition<uint8_t, D> d8;
  constexpr int64_t L = static_cast<int64_t>(hn::MaxLanes(D()));
  constexpr int64_t squares = 64 / (L * W);
  int64_t c = 0;
  for (; c + L <= columns; c += L) {
    // Only where a step reads each row's line whole (64-byte squares): where
    // two steps read one line, the rows' lines share L1 sets (rows 4 KiB
    // apart) and the prefetched lines evicted the ones still in use (bf16 at
    // AVX-512 and AVX2, f32 at AVX2 ran 5-30% slower with it).
    constexpr bool ahead = L * W == 64;
    if constexpr (bandInRegisters<T>()) {
      hn::Vec<D> v[squares][L];
      for (int64_t q = 0; q < squares; ++q)
        transposeSquare(d, rows, q * L, c * W, v[q], ahead);
      for (int64_t i = 0; i < L; ++i)
        for (int64_t q = 0; q < squares; ++q)
          storeLine(d8, hn::BitCast(d8, v[q][i]), lines(c + i) + q * L * W,
                    stream);
    } else {
      for (int64_t q = 0; q < squares; ++q) {
        hn::Vec<D> v[L];
        transposeSquare(d, rows, q * L, c * W, v, ahead);
        for (int64_t i = 0; i < L; ++i)
          storeLine(d8, hn::BitCast(d8, v[i]), lines(c + i) + q * L * W,
                    stream);
      }
    }
  }
  return c;
}

#if HWY_TARGET == HWY_AVX3
/// 16 columns of a band of 64 / W source rows (`offset` bytes into each)
/// into 16 whole destination lines, on 64-byte vectors for 1- and 2-byte
/// elements, whose 16 x 16 squares do not fit the registers side by side:
/// each vector is gathered from four 16-byte pieces, block b from source
/// row b * K + i (K = 16 / W rows per block), so that the block-local
/// unpacks alone leave a whole destination line (64 / W rows of one column)
/// in each vector: 16 vectors, no cross-block shuffles, no spills.
template <typename T, class Rows, class Lines>
HWY_INLINE void gatherStep(Rows rows, int64_t offset, Lines lines,
                           int64_t first, bool stream) {
  constexpr int64_t W = sizeof(T), K = 16 / W, groups = 16 / K;
  static_assert(kVector == 64, "four 128-bit blocks per vector");
  const hn::ScalableTag<T> d;
  const hn::Full256<T> d2;
  const hn::Full128<T> d1;
  const D8 d8;
  // One group of K lines at a time, so that only K vectors and the
  // transpose's temporaries are live: all 16 at once spilled, and bf16
  // ran at 60% of the speed (1 MiB in cache, thread CPU time, Zen 4).
  for (int64_t g = 0; g < groups; ++g) {
    hn::Vec<decltype(d)> a[K];
    for (int64_t i = 0; i < K; ++i) {
      // Block b of a[i] from row b * K + i.
      auto piece = [&](int64_t row) {
        return hn::LoadU(
            d1, reinterpret_cast<const T *>(rows(row) + offset + g * K * W));
      };
      a[i] = hn::Combine(d, hn::Combine(d2, piece(3 * K + i), piece(2 * K + i)),
                         hn::Combine(d2, piece(K + i), piece(i)));
    }
    blockTranspose<decltype(d), K>(d, a);
    for (int64_t j = 0; j < K; ++j)
      storeLine(d8, hn::BitCast(d8, a[j]), lines(first + g * K + j), stream);
  }
}

/// The band kernel of 1- and 2-byte elements at AVX-512: gatherStep over
/// the band, 16 columns at a time. A step reads 16 bytes of each of the
/// 64 rows of an s8 band (32 of each of 32 rows of bf16), so every source
/// line serves four steps (two); where the rows are a multiple of 4 KiB
/// apart they all fall into one set of the L1 (4 KiB per way on x86
/// cores), which holds 8 or 12 of them, and each line would come from L2
/// again at each step. The band then copies one line of each row into a
/// contiguous tile first, prefetching the row two lines ahead as it goes:
/// s8 [8192,8192] 2-D went from 9.2 to 11.2 GB/s with the tile and to 14
/// with the prefetch, bf16 [8192,4096] from 42% to 52% of copy with both
/// (the tile alone cost bf16 5%; thread CPU time, EPYC VM). With rows 9 or
/// 8.5 KiB apart the copy cost a quarter (10-12 GB/s to 8-9).
template <typename T, class Rows, class Lines>
int64_t transposeBandGather(Rows rows, Lines lines, int64_t columns,
                            bool stream) {
  constexpr int64_t W = sizeof(T);
  int64_t c = 0;
  if constexpr (W <= 2 && std::is_same_v<Rows, StridedRows>) {
    if (rows.stride % 4096 == 0) {
      constexpr int64_t Height = 64 / W, Line = 64 / W;
      alignas(64) uint8_t tile[Height * 64];
      for (; c + Line <= columns; c += Line) {
        copyLinesToTile(rows, c * W, Height, tile);
        for (int64_t h = 0; h < Line; h += 16)
          gatherStep<T>(StridedRows{tile + h * W, 64}, 0, lines, c + h, stream);
      }
    }
  }
  for (; c + 16 <= columns; c += 16)
    gatherStep<T>(rows, c * W, lines, c, stream);
  return c;
}

#endif

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
/// The next block of a stage's source rows (RowLines lines of each row,
/// from `base`, rows `stride` bytes apart), prefetched into L2 a few lines
/// at a time, in the order the block will be read, while the current
/// block's squares are shuffled. Prefetched as a burst beside the stage's
/// own reads, the next block's lines came in while the core was busy with
/// those reads, and the squares after them ran with the memory idle: the
/// wide bands ran at the speed of their shuffles and of a copy added up
/// (bf16 2-D in cache 62 GB/s, a copy 45, the transpose 25-26).
template <int64_t RowLines> struct NextBlock {
  const uint8_t *base;
  int64_t stride;
  int64_t line = 0;
  HWY_INLINE void prefetch(int64_t count) {
    for (int64_t k = 0; k < count; ++k, ++line)
      __builtin_prefetch(base + line / RowLines * stride + line % RowLines * 64,
                         0, 2);
  }
};

/// One strip of a wide band: the L x L squares of a stage (Rows rows,
/// Pitch bytes apart) at columns s..s + L, each prefetching PerSquare
/// lines of `next`, into `strip` (L rows of Rows elements), then its rows
/// written out whole to first + j * rowStep. The streaming stores of one
/// strip drain while the next one's squares are shuffled.
template <typename T, int64_t Rows, int64_t Pitch, int64_t PerSquare,
          int64_t RowLines>
HWY_INLINE void stageStrip(const uint8_t *stage, int64_t s,
                           NextBlock<RowLines> &next, uint8_t *strip,
                           uint8_t *first, int64_t rowStep, bool stream) {
  using D = hn::CappedTag<T, 16>;
  constexpr int64_t W = sizeof(T), L = static_cast<int64_t>(hn::MaxLanes(D())),
                    Line = Rows * W;
  const D d;
  const hn::Repartition<uint8_t, D> dBytes;
  const D8 d8;
  for (int64_t q = 0; q < Rows; q += L) {
    next.prefetch(PerSquare);
    hn::Vec<D> v[L];
    transposeSquare(d, StridedRows{stage, Pitch}, q, s * W, v, false);
    for (int64_t j = 0; j < L; ++j)
      hn::Store(hn::BitCast(dBytes, v[j]), dBytes, strip + j * Line + q * W);
  }
  for (int64_t j = 0; j < L; ++j)
    for (int64_t b = 0; b < Line; b += kVector)
      storeLine(d8, hn::Load(d8, strip + j * Line + b), first + j * rowStep + b,
                stream);
}

/// kWideBands bands of 1-, 2- or 4-byte elements (256, 128 or 64 source
/// rows) at once, `Block` columns at a time, as the transpose emitter's CPU
/// kernel does it: the rows' Block elements are copied into a stage (rows
/// 32 bytes more than that apart, so that rows 4 KiB apart in the source
/// do not share L1 sets), then,
/// strip by strip of L columns, its L x L squares (L = 16 or the lanes of
/// a vector: an xmm per row for bytes, a ymm for 2-byte elements and for
/// f32 at AVX2) go into a second stage of L destination rows of 256 bytes,
/// written out whole, four lines each, before the next strip: the streaming
/// stores of one strip drain while the next one's squares are shuffled. Zen 5,
/// 64 MiB, thread CPU time, alternated: bf16 [8192,4096] 2-D 21.5-21.7
/// -> 25.8-26.2 GB/s with one thread (256 MiB: 20.8-20.9 -> 26.1-26.2), 32-34
/// -> 37-48 GB/s with two; f16 [8,4096,1024] (1,2,0) 23.6 -> 27.3 GB/s (128
/// columns a block; 256 the same). s8 [8192,8192] 2-D, 512 columns a
/// block: 19.8-20.4 -> 22.4-23.2 GB/s with one thread, 28-31 -> 31-36 with two
/// (128 columns: 20.8-22.1 with one, 256: 21.2-23.0, 1024: 16.5-17.1). Before,
/// both went through a kernel that gathered each 64-byte vector from four
/// 16-byte pieces of four source rows (transposeBandGather's steps, the four
/// bands in turn). The next block is prefetched by the squares (NextBlock):
/// Zen 5, one thread, thread CPU time, 64 and 256 MiB, alternated three
/// times, bf16 2-D 25.6-27.5 -> 27.9-30.9 GB/s, s8 22.7-24.2 -> 24.0-27.5
/// at avx512; at avx2 bf16 24.9-25.5 -> 29.8-31.2, f32 24.6-27.7 ->
/// 25.1-30.8, s8 the same. With two threads, s8 +10-15%, bf16 0-8%.
template <typename T, int64_t Block>
int64_t wideBandSquares(const uint8_t *in, int64_t srcRow, uint8_t *out,
                        int64_t dstRow, int64_t columns, bool stream) {
  using D = hn::CappedTag<T, 16>;
  constexpr int64_t W = sizeof(T), Rows = kWideBands * 64 / W,
                    L = static_cast<int64_t>(hn::MaxLanes(D()));
  constexpr int64_t Pitch = Block * W + 32, Line = Rows * W;
  const D8 d8;
  alignas(64) uint8_t stage[Rows * Pitch];
  alignas(64) uint8_t strip[L * Line];
  // Each square prefetches its share of the next block's lines.
  constexpr int64_t PerSquare =
      Rows * (Block * W / 64) / (Block / L) / (Rows / L);
  static_assert(PerSquare * (Block / L) * (Rows / L) == Rows * (Block * W / 64),
                "the next block's lines shared evenly among the squares");
  int64_t c = 0;
  for (; c + Block <= columns; c += Block) {
    for (int64_t r = 0; r < Rows; ++r)
      for (int64_t b = 0; b < Block * W; b += kVector)
        hn::StoreU(hn::LoadU(d8, in + r * srcRow + c * W + b), d8,
                   stage + r * Pitch + b);
    NextBlock<Block * W / 64> next{in + (c + Block) * W, srcRow};
    for (int64_t s = 0; s < Block; s += L)
      stageStrip<T, Rows, Pitch, PerSquare>(
          stage, s, next, strip, out + (c + s) * dstRow, dstRow, stream);
  }
  return c;
}

/// transposeWideBand through wideBandSquares' stage (1- and 2-byte
/// elements at AVX2 and AVX-512, f32 at AVX2): bytes 512 columns a block
/// then 128 (the byte matrices of a 4-bit transpose have rows of 64 to 256
/// bytes), the others 128.
template <typename T>
int64_t wideBandStaged(const uint8_t *in, int64_t srcRow, uint8_t *out,
                       int64_t dstRow, int64_t columns, bool streaming) {
  bool stream = streaming && alignedTo(out, 64) && dstRow % 64 == 0;
  if constexpr (sizeof(T) >= 2) {
    return wideBandSquares<T, 128>(in, srcRow, out, dstRow, columns, stream);
  } else {
    int64_t c =
        wideBandSquares<T, 512>(in, srcRow, out, dstRow, columns, stream);
    return c + wideBandSquares<T, 128>(in + c, srcRow, out + c * dstRow, dstRow,
                                       columns - c, stream);
  }
}

/// KernelSet::nibbleWideBand: the 4-bit transpose's rows combined in pairs
/// (pairNibbles) straight into two stages, `Block` bytes of each of the
/// 2 * kWideBands * 64 source rows at a time, whose 16 x 16 squares then
/// go out as wideBandSquares' strips (stageStrip, which prefetches the
/// next block), 256 bytes to each destination row: the low nibbles' stage
/// to the even rows, the high ones' to the odd. Before, the pairs went to two
/// 64 KiB buffers in L2 first, which the wide band then read back into its
/// stage.
template <int64_t Block>
int64_t nibbleWideBandOf(const uint8_t *in, int64_t srcRow, uint8_t *out,
                         int64_t dstRow, int64_t bytes, bool streaming) {
  using D = hn::CappedTag<uint8_t, 16>;
  constexpr int64_t Pairs = kWideBands * 64, Pitch = Block + 32,
                    L = static_cast<int64_t>(hn::MaxLanes(D())), Line = Pairs;
  bool stream = streaming && alignedTo(out, 64) && dstRow % 64 == 0;
  // Each square prefetches its share of the next block's lines.
  // (2 * Pairs rows of Block / 64 lines, 2 * (Block / L) * (Pairs / L)
  // squares.)
  constexpr int64_t PerSquare = (Block / 64) * L * L / Block;
  static_assert(PerSquare * 2 * (Block / L) * (Pairs / L) ==
                    2 * Pairs * (Block / 64),
                "the next block's lines shared evenly among the squares");
  alignas(64) uint8_t stage[2][Pairs * Pitch];
  alignas(64) uint8_t strip[L * Line];
  int64_t c = 0;
  for (; c + Block <= bytes; c += Block) {
    for (int64_t q = 0; q < Pairs; ++q) {
      const uint8_t *a = in + 2 * q * srcRow + c;
      for (int64_t k = 0; k < Block; k += kVector)
        pairNibbleVector(a + k, a + srcRow + k, stage[0] + q * Pitch + k,
                         stage[1] + q * Pitch + k);
    }
    NextBlock<Block / 64> next{in + c + Block, srcRow};
    for (int64_t s = 0; s < Block; s += L)
      for (int64_t h = 0; h < 2; ++h)
        stageStrip<uint8_t, Pairs, Pitch, PerSquare>(
            stage[h], s, next, strip, out + (2 * (c + s) + h) * dstRow,
            2 * dstRow, stream);
  }
  return c;
}

int64_t nibbleWideBand(const uint8_t *in, int64_t srcRow, uint8_t *out,
                       int64_t dstRow, int64_t bytes, bool streaming) {
  return nibbleWideBandOf<128>(in, srcRow, out, dstRow, bytes, streaming);
}

#endif

#if HWY_TARGET == HWY_AVX2
/// K = 16 / sizeof(T) vectors of 32 bytes, vector i gathered from the
/// 16-byte pieces `piece(i)` (low block) and `piece(K + i)` (high block),
/// transposed by block-local unpacks: afterwards a[j] holds column j of
/// rows 0..K-1, then of rows K..2K-1 (32 bytes of one destination line).
template <typename T, class Piece>
HWY_INLINE void transposeRowPairs(Piece piece, hn::Vec<hn::ScalableTag<T>> *a) {
  constexpr int64_t K = 16 / sizeof(T);
  const hn::ScalableTag<T> d;
  for (int64_t i = 0; i < K; ++i)
    a[i] = hn::Combine(d, piece(K + i), piece(i));
  blockTranspose<decltype(d), K>(d, a);
}

/// 16 columns of a band of 64 / W source rows (`offset` bytes into each)
/// into 16 whole destination lines, on 32-byte vectors, for 1- and 2-byte
/// elements: the 16 x 16 squares of transposeBandVec do not fit AVX2's 16
/// registers and spilled. Each vector is gathered from two 16-byte pieces,
/// rows i and K + i of one half of the band (K = 16 / W), so that the
/// block-local unpacks alone leave 32 bytes of one destination line in it;
/// a line's two halves are written one after the other, 16 / W lines at a
/// time.
template <typename T, class Rows, class Lines>
HWY_INLINE void halfLineStep(Rows rows, int64_t offset, Lines lines,
                             int64_t first, bool stream) {
  constexpr int64_t W = sizeof(T), K = 16 / W;
  static_assert(kVector == 32, "two 128-bit blocks per vector");
  const hn::ScalableTag<T> d;
  const hn::Full128<T> d1;
  const D8 d8;
  for (int64_t g = 0; g < 16 / K; ++g)
    for (int64_t h = 0; h < 2; ++h) {
      auto piece = [&](int64_t row) {
        return hn::LoadU(d1, reinterpret_cast<const T *>(rows(h * 2 * K + row) +
                                                         offset + g * K * W));
      };
      hn::Vec<decltype(d)> a[K];
      transposeRowPairs<T>(piece, a);
      for (int64_t j = 0; j < K; ++j)
        storeLine(d8, hn::BitCast(d8, a[j]),
                  lines(first + g * K + j) + h * kVector, stream);
    }
}
#endif

#if HWY_TARGET == HWY_AVX2
/// KernelSet::fillStage for 1- and 2-byte elements on 32-byte vectors: a
/// full B x B block (B = 256 / W) into the stage, whose rows are 256 bytes
/// apart. Each vector is gathered from two 16-byte pieces, rows r and K + r
/// of a group of 2K rows (K = 16 / W), so that the block-local unpacks
/// alone leave 32 bytes of one stage row in it: no cross-block shuffle,
/// twice the bytes per unpack of sse2's 16 x 16 squares.
template <typename T>
void fillStageVec(const uint8_t *in, int64_t srcRow, uint8_t *stage) {
  constexpr int64_t W = sizeof(T), K = 16 / W, B = 256 / W;
  static_assert(kVector == 32, "two 128-bit blocks per vector");
  const hn::ScalableTag<T> d;
  const hn::Full128<T> d1;
  for (int64_t r0 = 0; r0 < B; r0 += 2 * K)
    for (int64_t c0 = 0; c0 < B; c0 += K) {
      auto piece = [&](int64_t r) {
        return hn::LoadU(
            d1, reinterpret_cast<const T *>(in + (r0 + r) * srcRow + c0 * W));
      };
      hn::Vec<decltype(d)> a[K];
      transposeRowPairs<T>(piece, a);
      for (int64_t j = 0; j < K; ++j)
        hn::Store(a[j], d,
                  reinterpret_cast<T *>(stage + ((c0 + j) * B + r0) * W));
    }
}
#endif

/// The band kernel of elements of type T on the level's registers.
template <typename T, class Rows, class Lines>
int64_t transposeBandOf(Rows rows, Lines lines, int64_t columns, bool stream) {
#if HWY_TARGET == HWY_AVX3
  if constexpr (sizeof(T) <= 2)
    return transposeBandGather<T>(rows, lines, columns, stream);
#elif HWY_TARGET == HWY_AVX2
  // The tiles and prefetches of the bands whose rows are a multiple of 4
  // KiB apart (above at AVX-512) are not used here: on Zen 3, whose best
  // level is AVX2, they made bf16 [8192,4096] 2-D slower (6.0-6.6 GB/s
  // against 7.3-8.5 without, thread CPU time, one thread) and f32
  // [4096,4096] too (11.1-11.6 against 12.1-12.5), although an AVX-512 CPU
  // capped at AVX2 (Zen 4) ran them 10-30% faster. The AVX2 level is tuned
  // for the CPUs that run it by default.
  if constexpr (sizeof(T) <= 2) {
    int64_t c = 0;
    for (; c + 16 <= columns; c += 16)
      halfLineStep<T>(rows, c * sizeof(T), lines, c, stream);
    return c;
  }
#endif
  return transposeBandVec<T>(rows, lines, columns, stream);
}

template <typename T>
int64_t transposeBand(const uint8_t *in, int64_t srcRow, uint8_t *out,
                      int64_t dstRow, int64_t columns, bool streaming) {
  bool stream = streaming && alignedTo(out, 64) && dstRow % 64 == 0;
  return transposeBandOf<T>(StridedRows{in, srcRow}, StridedLines{out, dstRow},
                            columns, stream);
}

#if HWY_TARGET == HWY_AVX3
/// KernelSet::transposeWideBand at AVX-512: kWideBands bands at once, so
/// that each destination row receives their lines back to back, where band
/// by band it received one line per pass over the columns, 64 bytes at a
/// time in turn across hundreds of rows. Streaming stores in that order
/// write at half a copy's speed (Zen 5, one thread, 64 MiB of stores
/// alone, `transpose-pattern --write-orders`: one line a row in turn 7.0
/// ms, four lines of each row back to back 1.7-1.8; a copy that also reads
/// as much 2.8-3.1). 1- and 2-byte elements through wideBandSquares; 4-
/// and 8-byte ones as 128 bytes of each band's rows in turn. Zen 5, one thread,
/// 64 MiB: f32 2-D 54% -> 66-81% of a copy, 3-D (2,0,1) 40% -> 69%, f64 2-D 60%
/// -> 72-79%, s8 2-D 17.8-18.2
/// -> 20.3-20.9 GB/s, bf16 18.9-19.9 -> 19.4-21.4 through the gathered
/// steps (thread CPU time, alternated three times), 25.8-26.2 through
/// wideBandSquares (s8 22.4-23.2). AVX2 has its own (makeKernels): its f32
/// bands read each line in two steps, and grouped straight from the source
/// its f32 2-D went from 24 to 18 GB/s; it goes through the stage.
template <typename T>
int64_t transposeWideBand(const uint8_t *in, int64_t srcRow, uint8_t *out,
                          int64_t dstRow, int64_t columns, bool streaming) {
  if constexpr (sizeof(T) <= 2) {
    return wideBandStaged<T>(in, srcRow, out, dstRow, columns, streaming);
  } else {
    bool stream = streaming && alignedTo(out, 64) && dstRow % 64 == 0;
    constexpr int64_t W = sizeof(T), R = 64 / W, Chunk = 128 / W;
    static_assert(Chunk % squareLanes<T>() == 0, "whole squares a chunk");
    int64_t c = 0;
    for (; c + Chunk <= columns; c += Chunk)
      for (int64_t q = 0; q < kWideBands; ++q)
        transposeBandOf<T>(StridedRows{in + q * R * srcRow + c * W, srcRow},
                           StridedLines{out + c * dstRow + q * 64, dstRow},
                           Chunk, stream);
    return c;
  }
}
#endif

/// transposeBand with the source rows and destination lines listed.
template <typename T>
int64_t transposeRows(const uint8_t *const *in, uint8_t *const *out,
                      int64_t columns, bool streaming) {
  uintptr_t misaligned = 0;
  for (int64_t c = 0; streaming && c < columns; ++c)
    misaligned |= reinterpret_cast<uintptr_t>(out[c]);
  bool stream = streaming && misaligned % 64 == 0;
  return transposeBandOf<T>(ListedRows{in}, ListedLines{out}, columns, stream);
}

KernelSet makeKernels(IsaLevel level) {
  KernelSet k;
  k.level = level;
  k.vectorBytes = kVector;
  k.copy = copyVec;
  k.copyRows = copyRowsVec;
  k.pairNibbles = pairNibblesVec;
  k.nibbleWideBand = nibbleWideBand;
  k.zero = zeroVec;
  k.interleave = interleaveVec;
  k.deinterleave = deinterleaveVec;
  // Untiling one destination row at a time pays at AVX2 (Zen 3); at
  // AVX-512 the deinterleave's whole-line stores were measured at copy
  // speed (Zen 4) and stay.
  if (HWY_TARGET == HWY_AVX2)
    k.pickLane = pickLaneVec;
  k.transposeBand[0] = transposeBand<uint8_t>;
  k.transposeBand[1] = transposeBand<uint16_t>;
  k.transposeBand[2] = transposeBand<uint32_t>;
  k.transposeBand[3] = transposeBand<uint64_t>;
#if HWY_TARGET == HWY_AVX3
  k.transposeWideBand[0] = transposeWideBand<uint8_t>;
  k.transposeWideBand[1] = transposeWideBand<uint16_t>;
  k.transposeWideBand[2] = transposeWideBand<uint32_t>;
  k.transposeWideBand[3] = transposeWideBand<uint64_t>;
#endif
  k.transposeRows[0] = transposeRows<uint8_t>;
  k.transposeRows[1] = transposeRows<uint16_t>;
  k.transposeRows[2] = transposeRows<uint32_t>;
  k.transposeRows[3] = transposeRows<uint64_t>;
  // At AVX-512, transposeBandGather writes whole lines for 1 and 2 bytes.
  // (At AVX2, halfLineStep writes them in halves: s8 bands write into a
  // stage in cache, s4 transposes 1.02-1.07x the 16 x 16 squares on Zen 3.)
  k.wholeLineBands[0] = HWY_TARGET == HWY_AVX3 || bandInRegisters<uint8_t>();
  // At AVX2, halfLineStep writes whole lines of 2 bytes (the tiled
  // transposes' bands; the permutes go through the stage, below).
  k.wholeLineBands[1] = true;
  k.wholeLineBands[2] = bandInRegisters<uint32_t>();
  k.wholeLineBands[3] = bandInRegisters<uint64_t>();
  // The stage transposes of the streaming permutes where bands do not
  // write whole lines: sse2's (baseline code, callable from any level).
  k.fillStage[0] = sse2FillStage1;
  k.fillStage[1] = sse2FillStage2;
  k.fillStage[2] = sse2FillStage4;
  k.fillStage[3] = sse2FillStage8;
#if HWY_TARGET == HWY_AVX2
  // The streaming 1- and 2-byte permutes at AVX2 whose bands are a page or
  // less of the source go through the stage with fillStageVec: on Zen 3
  // (thread CPU time, 64 MiB, one thread) s8 2-D 8.3 -> 8.9 GB/s against
  // sse2's fill, and bf16 faster than halfLineStep's bands: 2-D 8.3 -> 9.3
  // GB/s, [64,4096,128] {1,0,2} 7.4 -> 10.7 (wall clock, 1.45x; 2 threads
  // 1.3x).
  k.fillStage[0] = fillStageVec<uint8_t>;
  k.fillStage[1] = fillStageVec<uint16_t>;
  k.wholeLineBands[1] = false;
  // The others take four bands at once through wideBandStaged's stage
  // (transposeBanded): Zen 5 capped at AVX2 (TESSEL_ISA=avx2, thread CPU
  // time, one thread, 64 and 256 MiB, alternated three times) bf16 2-D
  // 15.8-19.3 -> 22.9-24.2 GB/s, s8 2-D 10.9-14.1 -> 21.5-23.1, s4 2-D
  // 12.3-13.6 -> 17.0-18.0, where they too went through fillStageVec's
  // stage; not measured on a CPU whose best level is AVX2.
  k.transposeWideBand[0] = wideBandStaged<uint8_t>;
  k.transposeWideBand[1] = wideBandStaged<uint16_t>;
  // f32 too, 128 columns a block with 8 x 8 squares: Zen 5 capped at AVX2
  // (thread CPU time, one thread, 64 and 256 MiB, alternated three times)
  // 2-D 18.9-23.7 -> 23.1-26.3 GB/s (48-60% -> 61-65% of copy), 3-D
  // (2,0,1) 15.7-19.7 -> 21.3-24.2 (45-51% -> 55-63%), 4-D the same; the
  // bands straight from the source, four at a time, had gone from 24 to 18
  // GB/s. Not f64 (2-D 24.5-25.4 -> 21.8-22.1 GB/s).
  k.transposeWideBand[2] = wideBandStaged<uint32_t>;
#endif
  return k;
}

} // namespace tessel::relayout::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif

#if HWY_ONCE
namespace tessel::relayout {

const KernelSet *highwayKernels(IsaLevel level) {
#if HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX2)
  static const KernelSet avx2 = N_AVX2::makeKernels(IsaLevel::Avx2);
  if (level == IsaLevel::Avx2)
    return &avx2;
#endif
#if HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX3)
  static const KernelSet avx512 = N_AVX3::makeKernels(IsaLevel::Avx512);
  if (level == IsaLevel::Avx512)
    return &avx512;
#endif
  (void)level;
  return nullptr;
}

} // namespace tessel::relayout
#endif // HWY_ONCE
