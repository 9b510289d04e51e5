//===- Isa.h - Instruction set levels of the relayout kernels (internal) --===//
//
// The vector parts of the relayout kernels exist once per instruction set
// level; a plan picks one level when it is created and calls the kernels
// through a table of function pointers:
//
//   sse2     tessel's own SSE2 kernels (every x86-64 CPU; portable loops on
//            other machines)
//   avx2     the same kernels written once with Google Highway and compiled
//   avx512   for AVX2 and AVX-512 (Highway's AVX3 target) by foreach_target
//
// The level is the best the CPU supports, lowered by TESSEL_ISA or
// RelayoutOptions::isa. Each pointer moves a unit of at least a few hundred
// bytes (a tile row, a stage row, a 256-byte square of a transpose), so the
// indirect call costs nothing measurable.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_RELAYOUT_ISA_H
#define TESSEL_LIB_RELAYOUT_ISA_H

#include "tessel/Support/Expected.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::relayout {

enum class IsaLevel { Sse2 = 0, Avx2 = 1, Avx512 = 2 };
constexpr int kIsaLevels = 3;

const char *isaName(IsaLevel level);

/// Streaming (non-temporal) stores write whole 64-byte cache lines: a line
/// that receives part non-temporal and part ordinary stores, or
/// non-temporal stores that straddle two lines, is flushed from the
/// write-combining buffers partially (reported 17x slower for tiling 16
/// bytes past a line boundary; up to 2x for f32 untiling on the EPYC VM,
/// BENCHMARKS.md). Every
/// kernel that streams therefore streams only the whole lines of its
/// destination (ordinary stores for the head up to the first line boundary
/// and the tail after the last), or, where its walk cannot reach a line
/// boundary (rows whose offsets differ modulo 64, or a boundary that falls
/// inside an element group), uses ordinary stores throughout. The
/// interleave and deinterleave kernels of (k,1) tiles and the transpose
/// bands stream only when their destination rows start on a line (see
/// interleaveInLines for why they do not peel).
constexpr int64_t kLineBytes = 64;

/// Bytes from p up to the next 64-byte boundary (0 when p is on one).
inline int64_t streamingHead(const void *p) {
  return static_cast<int64_t>(
      (kLineBytes - (reinterpret_cast<uintptr_t>(p) & (kLineBytes - 1))) &
      (kLineBytes - 1));
}

/// The elements [begin, end) of a run of `count` elements, `unit` bytes
/// each, stored from p whose bytes are whole 64-byte lines: the part a
/// kernel streams. Empty where no line boundary falls between elements
/// (unit does not divide the head) or no whole line fits.
struct StreamRange {
  int64_t begin = 0, end = 0;
  bool empty() const { return end <= begin; }
};
inline StreamRange streamRange(const void *p, int64_t count, int64_t unit) {
  int64_t head = streamingHead(p);
  // Element sizes are powers of two up to a line: shifts, not divisions
  // (a row of a tile per call made the divisions a tenth of the s8
  // untiling's time).
  if (unit <= 0 || unit > kLineBytes || (unit & (unit - 1)) ||
      (head & (unit - 1)))
    return {};
  int shift = __builtin_ctzll(static_cast<unsigned long long>(unit));
  int64_t begin = head >> shift, perLine = kLineBytes >> shift;
  if (begin >= count)
    return {};
  int64_t end = begin + ((count - begin) & ~(perLine - 1));
  if (end == begin)
    return {};
  return {begin, end};
}

/// Runs the vector loop of an interleave kernel, `body(out, rows, count,
/// stream)` (elements of `s` bytes from k rows; returns how many leading
/// elements it wrote; with `stream`, out is on a line boundary and every
/// iteration is streamed), so that only whole lines are streamed: when out
/// starts on a line boundary, the iterations that end within the run's
/// whole lines are streamed and the rest use ordinary stores; otherwise all
/// of it does. Peeling a head up to the boundary instead cost more than it
/// saved in rows of a few hundred bytes: s8 (4,1) tiling 16 bytes past a
/// boundary ran at 5.5-5.9 GB/s peeled against 12-18 with ordinary stores
/// at avx2/avx512 (bf16 (2,1) at sse2: 8 GB/s with a scalar head, 18 with
/// ordinary stores), on the EPYC VM. Returns how many leading elements are
/// written.
template <class Body>
int64_t interleaveInLines(Body body, uint8_t *out, const uint8_t *const *rows,
                          int64_t count, int64_t s, int64_t k, bool streaming) {
  StreamRange range;
  if (streaming)
    range = streamRange(out, count, k * s);
  if (range.empty() || range.begin != 0 || k > 4)
    return body(out, rows, count, false);
  int64_t j = body(out, rows, range.end, true);
  if (j == count)
    return j;
  const uint8_t *shifted[4];
  for (int64_t q = 0; q < k; ++q)
    shifted[q] = rows[q] + j * s;
  return j + body(out + j * k * s, shifted, count - j, false);
}

/// Whether the interleave, deinterleave and pickLane kernels have vector
/// code for k rows of s-byte elements: bf16 (2,1) pairs and s8 (4,1)
/// quads.
inline bool vectorInterleaved(int64_t s, int64_t k) {
  return (s == 2 && k == 2) || (s == 1 && k == 4);
}

/// The part of a run that a deinterleave kernel streams: its whole lines
/// when the run starts on a line boundary, else nothing (see
/// interleaveInLines).
inline StreamRange alignedStreamRange(const void *p, int64_t count,
                                      int64_t unit) {
  StreamRange range = streamRange(p, count, unit);
  return range.begin == 0 ? range : StreamRange{};
}

/// The same for k destination rows of a deinterleave: every row must start
/// on a line boundary.
inline StreamRange rowsStreamRange(uint8_t *const *rows, int64_t k,
                                   int64_t count, int64_t s) {
  for (int64_t q = 1; q < k; ++q)
    if (streamingHead(rows[q]) != 0)
      return {};
  return alignedStreamRange(rows[0], count, s);
}

/// The vector kernels of one level. Each returns or writes exactly what its
/// portable counterpart in TileKernels.cpp / TransposeKernels.cpp would.
struct KernelSet {
  IsaLevel level = IsaLevel::Sse2;
  /// Bytes in one vector register of the level (16, 32, 64).
  int64_t vectorBytes = 16;
  /// Copies `bytes` bytes; with `streaming`, the whole 64-byte lines of dst
  /// are written with non-temporal stores, the rest with ordinary ones (the
  /// caller fences).
  void (*copy)(uint8_t *dst, const uint8_t *src, int64_t bytes,
               bool streaming) = nullptr;
  /// copy of `rows` rows of `rowBytes` bytes each, row r from src + r *
  /// srcStride to dst + r * dstStride (a tile's rows to or from the
  /// matrix: one call per tile instead of per tile row, which matters
  /// when the rows are a line or two, as in s4 T(8,128)).
  void (*copyRows)(uint8_t *dst, int64_t dstStride, const uint8_t *src,
                   int64_t srcStride, int64_t rowBytes, int64_t rows,
                   bool streaming) = nullptr;
  /// The bytes of two rows of packed nibbles, a and b, combined in pairs:
  /// low[k] = (a[k] & 15) | b[k] << 4, high[k] = a[k] >> 4 | (b[k] & 0xF0)
  /// for k < bytes (the first step of a 4-bit transpose).
  void (*pairNibbles)(const uint8_t *a, const uint8_t *b, uint8_t *low,
                      uint8_t *high, int64_t bytes) = nullptr;
  /// Zeroes `bytes` bytes, non-temporally when `streaming`.
  void (*zero)(uint8_t *dst, int64_t bytes, bool streaming) = nullptr;
  /// Interleaves k rows of `count` elements of `s` bytes into out
  /// (element j of row q at out + (j * k + q) * s) for (s, k) = (2, 2) and
  /// (1, 4); returns how many leading elements it wrote (the caller does
  /// the rest), 0 for other (s, k).
  int64_t (*interleave)(uint8_t *out, const uint8_t *const *rows, int64_t count,
                        int64_t s, int64_t k, bool streaming) = nullptr;
  /// The inverse, into k rows that are all non-null.
  int64_t (*deinterleave)(const uint8_t *in, uint8_t *const *rows,
                          int64_t count, int64_t s, int64_t k,
                          bool streaming) = nullptr;
  /// Lane q of k interleaved rows: out[j] = element j * k + q of `in` for
  /// `count` elements of `s` bytes, (s, k) = (2, 2) and (1, 4); returns how
  /// many leading elements it wrote (0 for other (s, k)). With
  /// `streaming`, out's whole lines are non-temporal when out starts on a
  /// line boundary. Null where the untiling of interleaved tiles goes
  /// through deinterleave instead (see untileRows in TileKernels.cpp).
  int64_t (*pickLane)(const uint8_t *in, uint8_t *out, int64_t count, int64_t s,
                      int64_t k, int64_t q, bool streaming) = nullptr;
  /// A 4-bit transpose of 2 * kWideBands * 64 source rows (srcRow bytes
  /// apart) by 2 * `bytes` columns: byte k of source rows 2p and 2p + 1
  /// (pairNibbles) gives byte p of destination rows 2k (the low nibbles)
  /// and 2k + 1 (the high ones), at out + (2k or 2k + 1) * dstRow; each
  /// destination row receives kWideBands * 64 bytes, streamed when
  /// `streaming` and every line is 64-byte aligned. Returns how many
  /// leading bytes of each source row it moved. Null at sse2.
  int64_t (*nibbleWideBand)(const uint8_t *in, int64_t srcRow, uint8_t *out,
                            int64_t dstRow, int64_t bytes,
                            bool streaming) = nullptr;
  /// Transposes a full B x B block, B = 256 / width, of `width`-byte
  /// elements (width 1, 2, 4 or 8; index log2(width)) whose rows are
  /// srcRow bytes apart into `stage`, whose rows are 256 bytes apart (the
  /// streaming permutes that do not use bands; sse2's at every level).
  void (*fillStage[4])(const uint8_t *in, int64_t srcRow, uint8_t *stage) = {};
  /// Transposes a band of 64 / width source rows (srcRow bytes apart) and
  /// `columns` columns into `columns` destination rows (dstRow bytes apart)
  /// of 64 bytes each, one whole cache line per destination row, streamed
  /// when `streaming` and every line is 64-byte aligned. Returns how many
  /// leading columns it moved (a multiple of its square; the caller does
  /// the rest). The sse2 level's writes 16 bytes at a time; permutes use
  /// it only from 32-byte vectors up (the stage is faster below).
  int64_t (*transposeBand[4])(const uint8_t *in, int64_t srcRow, uint8_t *out,
                              int64_t dstRow, int64_t columns,
                              bool streaming) = {};
  /// kWideBands bands of transposeBand[i] at once, band q's rows from
  /// in + q * (64 / width) * srcRow and its lines at out + q * 64: every
  /// destination row receives the bands' kWideBands lines back to back, a
  /// few destination rows at a time (1- and 2-byte elements, and f32 at
  /// avx2: 512 or 128 columns at a time through a stage, 16 or 8
  /// destination rows a strip; HwyKernels.cpp, wideBandSquares). Null where
  /// the level has none (sse2, and avx2 for 8-byte elements: there the
  /// bands run one after the other). Returns how many leading columns it
  /// moved.
  int64_t (*transposeWideBand[4])(const uint8_t *in, int64_t srcRow,
                                  uint8_t *out, int64_t dstRow, int64_t columns,
                                  bool streaming) = {};
  /// transposeBand with the rows listed: in[0..64 / width) are the
  /// source rows, out[0..columns) the destination lines (64 bytes each;
  /// element i of line c is element c of row in[i]), streamed when
  /// `streaming` and every line is on a 64-byte boundary. Returns how many
  /// leading columns it moved: the tiled transpose's bands, whose rows
  /// and lines lie in different tiles. (sse2's writes each line in four
  /// 16-byte pieces, one after the other.)
  int64_t (*transposeRows[4])(const uint8_t *const *in, uint8_t *const *out,
                              int64_t columns, bool streaming) = {};
  /// Whether transposeBand[i] writes each destination line whole, from
  /// registers (else square by square, half lines at a time: bf16 and s8
  /// at avx2, whose 16 registers hold one square; at avx512 they gather
  /// whole lines). Permutes use bands only where it does.
  bool wholeLineBands[4] = {};
};

/// The bands transposeWideBand moves at once.
constexpr int64_t kWideBands = 4;

/// The kernels of `level`. @pre the CPU supports the level.
const KernelSet &kernelSet(IsaLevel level);

/// Levels this CPU can run, lowest first (always at least sse2).
std::vector<IsaLevel> supportedLevels();

/// The level a plan uses: the best this CPU supports, capped by `requested`
/// (a level name; empty means no cap) and then by the TESSEL_ISA
/// environment variable. A cap above what the CPU has gives the best it
/// has. Fails on a name that is not a level.
Expected<IsaLevel> chooseLevel(const std::string &requested);

/// Cache sizes in bytes, as the CPU reports them through sysfs (Linux) or
/// sysconf, each replaced by a fixed fallback when missing or implausible.
struct CacheSizes {
  int64_t l1 = 32 << 10;
  int64_t l2 = 1 << 20;
  /// The last-level cache, all of it (shared by several cores).
  int64_t l3 = 32 << 20;

  /// The part of the L3 a relayout may count on keeping its data in: all
  /// of it up to 32 MiB (a Zen CCX's L3, which one core reads and writes
  /// at several times memory speed), no more above. A larger L3 is a
  /// server part's, shared by dozens of cores and, under a VM, by other
  /// tenants. On an Intel Xeon VM whose sysfs L3 is 128 MiB or more (the
  /// H100 host of 2026-11-27), outputs of 16 and 64 MiB written with
  /// ordinary stores because they were under half the L3 ran the f32
  /// tiling at 39-80% of copy and the 2-D transposes at 20-33%; with
  /// streaming stores at 101-129% and 51% (s4), and the plain reference
  /// (always streaming) was 2-3x faster than tessel on the transposes.
  int64_t usableL3() const {
    return l3 < (int64_t(32) << 20) ? l3 : int64_t(32) << 20;
  }
};
const CacheSizes &hostCaches();

/// The Highway levels (HwyKernels.cpp): null where the level is not
/// compiled in.
const KernelSet *highwayKernels(IsaLevel level);

/// The pieces of the sse2 level, next to the kernels that use them.
int64_t sse2Interleave(uint8_t *out, const uint8_t *const *rows, int64_t count,
                       int64_t s, int64_t k, bool streaming);
int64_t sse2Deinterleave(const uint8_t *in, uint8_t *const *rows, int64_t count,
                         int64_t s, int64_t k, bool streaming);
void pairNibblesScalar(const uint8_t *a, const uint8_t *b, uint8_t *low,
                       uint8_t *high, int64_t bytes);
int64_t sse2TransposeRows1(const uint8_t *const *in, uint8_t *const *out,
                           int64_t columns, bool streaming);
int64_t sse2TransposeRows2(const uint8_t *const *in, uint8_t *const *out,
                           int64_t columns, bool streaming);
int64_t sse2TransposeRows4(const uint8_t *const *in, uint8_t *const *out,
                           int64_t columns, bool streaming);
int64_t sse2TransposeRows8(const uint8_t *const *in, uint8_t *const *out,
                           int64_t columns, bool streaming);
void sse2FillStage1(const uint8_t *in, int64_t srcRow, uint8_t *stage);
void sse2FillStage2(const uint8_t *in, int64_t srcRow, uint8_t *stage);
void sse2FillStage4(const uint8_t *in, int64_t srcRow, uint8_t *stage);
void sse2FillStage8(const uint8_t *in, int64_t srcRow, uint8_t *stage);
int64_t sse2TransposeBand1(const uint8_t *in, int64_t srcRow, uint8_t *out,
                           int64_t dstRow, int64_t columns, bool streaming);
int64_t sse2TransposeBand2(const uint8_t *in, int64_t srcRow, uint8_t *out,
                           int64_t dstRow, int64_t columns, bool streaming);
int64_t sse2TransposeBand4(const uint8_t *in, int64_t srcRow, uint8_t *out,
                           int64_t dstRow, int64_t columns, bool streaming);
int64_t sse2TransposeBand8(const uint8_t *in, int64_t srcRow, uint8_t *out,
                           int64_t dstRow, int64_t columns, bool streaming);

} // namespace tessel::relayout

#endif // TESSEL_LIB_RELAYOUT_ISA_H
