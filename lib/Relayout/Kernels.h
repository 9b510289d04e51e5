//===- Kernels.h - Relayout kernels shared by the plan (internal) -*- C++
//-*-===//
//
// The plan (Relayout.cpp) picks one of these kernels in create() and runs it
// in execute():
//
//   generic    any pair of layouts: the logical dims are grouped so that
//              both offsets are sums of per-group tables (see planGeneric);
//              an odometer walks the groups, the innermost group copies
//              runs that are contiguous on both sides with memcpy.
//   bits       the same walk for E(n) sub-byte elements, bit by bit.
//   tile rows  row-major <-> T(a,b) or T(a,b)(k,1) (TileKernels.cpp).
//   permute    dim permutations without tiles (TransposeKernels.cpp).
//   tiled transpose  rank 2, tiled both sides, dim order swapped
//              (TiledTranspose.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_RELAYOUT_KERNELS_H
#define TESSEL_LIB_RELAYOUT_KERNELS_H

#include "Isa.h"

#include "tessel/Layout/TiledLayout.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessel::relayout {

/// Threads an execute() with `requested` threads (0 = all cores) uses.
int resolveThreads(int requested);

/// Runs fn(begin, end) over [0, count) in chunks of at least `grain` items,
/// in a TBB arena of `threads` threads (threads <= 1 runs inline).
void parallelFor(int threads, int64_t count, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn);

/// Copies `bytes` bytes (dst and src do not overlap). With `streaming`, the
/// whole 64-byte lines of dst are written with non-temporal stores and the
/// head and tail with ordinary ones (see kLineBytes in Isa.h); the caller
/// issues storeFence() before the data is read.
void copyBytes(uint8_t *dst, const uint8_t *src, int64_t bytes, bool streaming);
/// copyBytes of `rows` rows (KernelSet::copyRows).
void copyRowsBytes(uint8_t *dst, int64_t dstStride, const uint8_t *src,
                   int64_t srcStride, int64_t rowBytes, int64_t rows,
                   bool streaming);
/// Zeroes `bytes` bytes, with streaming stores when asked.
void zeroBytes(uint8_t *dst, int64_t bytes, bool streaming);
/// Orders streaming stores before later loads and stores (sfence).
void storeFence();

/// Reads `bits` (<= 64) bits starting at bit `bitPos` of p, low bits first.
inline uint64_t loadBits(const uint8_t *p, int64_t bitPos, int bits) {
  uint64_t value = 0;
  for (int i = 0; i < bits;) {
    int64_t bit = bitPos + i;
    int shift = static_cast<int>(bit & 7);
    int take = std::min(8 - shift, bits - i);
    uint64_t chunk = (p[bit >> 3] >> shift) & ((1u << take) - 1);
    value |= chunk << i;
    i += take;
  }
  return value;
}

/// ORs the low `bits` bits of value into p at bit `bitPos` (the slot must
/// be zero).
inline void orBits(uint8_t *p, int64_t bitPos, int bits, uint64_t value) {
  for (int i = 0; i < bits;) {
    int64_t bit = bitPos + i;
    int shift = static_cast<int>(bit & 7);
    int take = std::min(8 - shift, bits - i);
    uint64_t chunk = (value >> i) & ((1u << take) - 1);
    p[bit >> 3] |= static_cast<uint8_t>(chunk << shift);
    i += take;
  }
}

/// How an element's bits change between two element sizes: copied as they
/// are when the sizes agree; otherwise the value (the type's natural bits)
/// is sign-extended for signed integers and zero-extended for the rest.
struct BitConversion {
  int srcBits = 0;
  int dstBits = 0;
  int naturalBits = 0;
  bool signExtend = false;

  static BitConversion get(const TiledLayout &from, const TiledLayout &to);
  uint64_t convert(uint64_t value) const {
    if (srcBits == dstBits)
      return value;
    uint64_t mask = naturalBits >= 64 ? ~0ull : (1ull << naturalBits) - 1;
    value &= mask;
    if (signExtend && (value >> (naturalBits - 1)) & 1)
      value |= ~mask;
    return dstBits >= 64 ? value : value & ((1ull << dstBits) - 1);
  }
};

/// The generic kernel's plan. The logical dims are split into groups (the
/// connected components of "a `*` combines them" in either layout); every
/// physical coordinate of either layout depends on one group only, so an
/// offset is a sum of one table entry per group, indexed by the row-major
/// index of the group's dims.
struct GenericPlan {
  struct Group {
    std::vector<int64_t> dims; ///< logical dims, ascending
    int64_t size = 1;
    std::vector<int64_t> srcOffsets, dstOffsets;
  };
  /// Outer groups major to minor, then the inner group (last).
  std::vector<Group> groups;
  /// Runs [start, start + length) of the inner group that are contiguous
  /// in both buffers.
  std::vector<std::pair<int64_t, int64_t>> runs;
  int64_t elementBytes = 0; ///< 0: the bit kernel
  BitConversion bits;
  /// The bit kernel's threads: `Any` when no two outer indices write bits
  /// of one destination byte (each run of the inner group writes whole
  /// bytes), so the walk splits anywhere; else one thread.
  enum class BitSplit { One, Any } bitSplit = BitSplit::One;
  /// Same bit widths and every run starts and ends on a byte boundary on
  /// both sides: the bit kernel copies runs with memcpy.
  bool bitRunsAreBytes = false;
  bool dstHasPadding = false;
  int64_t dstBytes = 0;

  int64_t outerCount() const;
};

/// Builds the generic plan, or nullopt when its tables would exceed
/// `maxTableEntries` (huge combined groups).
std::optional<GenericPlan> planGeneric(const TiledLayout &from,
                                       const TiledLayout &to,
                                       int64_t maxTableEntries);
void runGeneric(const GenericPlan &plan, const uint8_t *src, uint8_t *dst,
                int threads, bool streaming);

inline int64_t ceilDivide(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Row-major <-> a row-major layout tiled by T(a,b) or T(a,b)(k,1)
/// (TileKernels.cpp). The leading dims collapse into `lead` matrices of
/// rows x cols.
struct TilePlan {
  bool toTiled = true;
  int64_t elementBytes = 0;
  int64_t lead = 1, rows = 1, cols = 1;
  int64_t a = 1, b = 1, k = 1;
  /// 1, 2 or 4 for packed sub-byte elements (E(n), k = 1) whose matrix
  /// rows and tile rows are whole bytes: they move as bytes, and cols, b
  /// and elementBytes (1) count bytes. 0 otherwise.
  int64_t subByteBits = 0;
  /// Destination bytes past the tiles (L(n) padding), zeroed at the end.
  int64_t tailStart = 0, dstBytes = 0;
  /// The vector kernels of the plan's instruction set level.
  const KernelSet *kernels = nullptr;
};
std::optional<TilePlan> planTile(const TiledLayout &from,
                                 const TiledLayout &to);
void runTile(const TilePlan &plan, const uint8_t *src, uint8_t *dst,
             int threads, bool streaming);
std::string describeTile(const TilePlan &plan);

/// One T(a,b)(k,1) tiling to another over the same row-major dim order:
/// bands of lcm(a, a') rows are untiled into a cache-resident stage and
/// tiled from it (TileKernels.cpp).
struct RetilePlan {
  TilePlan source, destination;
  int64_t band = 1;
  /// Rows that stay together in both tilings (gcd of a and a'), where
  /// they move straight from tile to tile: both without (k,1), the same b,
  /// whole bands and whole tile columns. 0: through the stage.
  int64_t directRows = 0;
  /// The same tiles but for (k,1) on one side (bf16 T(8,128)(2,1) <->
  /// T(8,128)), whole bands and tile columns: each tile is interleaved or
  /// deinterleaved straight into the destination's tile.
  bool tileByTile = false;
  int64_t tailStart = 0, dstBytes = 0;
};
std::optional<RetilePlan> planRetile(const TiledLayout &from,
                                     const TiledLayout &to);
void runRetile(const RetilePlan &plan, const uint8_t *src, uint8_t *dst,
               int threads, bool streaming);
std::string describeRetile(const RetilePlan &plan);

/// Rank 2, tiled on both sides, the dim order swapped: {1,0:T(a,b)} <->
/// {0,1:T(a2,b2)} (TiledTranspose.cpp). rows x cols is the source's
/// physical orientation (its major dim first); blocks of blockRows x
/// blockCols = lcm(a, b2) x lcm(b, a2) elements hold whole tiles of both.
struct TiledTransposePlan {
  int64_t elementBytes = 0;
  /// Matrices of the leading dims, each rows x cols in the source.
  int64_t batch = 1;
  int64_t rows = 1, cols = 1;
  /// Bytes of one matrix's tiles, padding included, in either buffer.
  int64_t srcMatrixBytes = 0, dstMatrixBytes = 0;
  int64_t a = 1, b = 1, a2 = 1, b2 = 1;
  int64_t blockRows = 1, blockCols = 1;
  int64_t tailStart = 0, dstBytes = 0;
  const KernelSet *kernels = nullptr;
};
std::optional<TiledTransposePlan> planTiledTranspose(const TiledLayout &from,
                                                     const TiledLayout &to);
void runTiledTranspose(const TiledTransposePlan &plan, const uint8_t *src,
                       uint8_t *dst, int threads, bool streaming);
std::string describeTiledTranspose(const TiledTransposePlan &plan);

/// A permutation of dims, no tiles (TransposeKernels.cpp): the destination
/// is `outer` x rows x columns with columns contiguous; in the source the
/// rows are contiguous (a transpose) unless rows == 1 and the columns are
/// contiguous there too (a row copy).
struct PermutePlan {
  struct Dim {
    int64_t size, srcStride, dstStride;
  };
  int64_t elementBytes = 0;
  std::vector<Dim> outer;
  int64_t columns = 1, srcColumnStride = 1;
  int64_t rows = 1, dstRowStride = 0;
  int64_t tailStart = 0, dstBytes = 0;
  /// The vector kernels of the plan's instruction set level.
  const KernelSet *kernels = nullptr;

  bool isRowCopy() const { return srcColumnStride == 1; }
  int64_t outerCount() const;
};
/// The plan runs on `kernels` (some of its choices depend on the level).
std::optional<PermutePlan> planPermute(const TiledLayout &from,
                                       const TiledLayout &to,
                                       const KernelSet *kernels);

/// A transpose of 1-, 2- or 4-bit elements whose slice rows and outer
/// bases all start on byte boundaries (TransposeKernels.cpp): blocks of
/// 64 x 64 elements are unpacked to a byte each, transposed in cache and
/// packed, so that memory sees whole bytes only and threads never share
/// one.
struct SubBytePermutePlan {
  PermutePlan dims; ///< in elements; dims.kernels is the level's
  int64_t bits = 4;
  int64_t tailStart = 0, dstBytes = 0;
};
std::optional<SubBytePermutePlan> planSubBytePermute(const TiledLayout &from,
                                                     const TiledLayout &to);
void runSubBytePermute(const SubBytePermutePlan &plan, const uint8_t *src,
                       uint8_t *dst, int threads, bool streaming);
std::string describeSubBytePermute(const SubBytePermutePlan &plan);
void runPermute(const PermutePlan &plan, const uint8_t *src, uint8_t *dst,
                int threads, bool streaming);
std::string describePermute(const PermutePlan &plan);

} // namespace tessel::relayout

#endif // TESSEL_LIB_RELAYOUT_KERNELS_H
