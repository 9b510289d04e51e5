//===- TransposeKernels.cpp - Permutations of dims without tiles ----------===//
//
// Without tiles both offsets are strided: offset = sum(index[d] * stride[d]).
// The dims are listed in destination order, size-1 dims dropped, and dims
// that stay adjacent in both layouts merged. What remains is
//
//   a row copy      the destination's minor dim is also the source's: copy
//                   contiguous rows under an odometer over the other dims;
//   a 2-D transpose the source's minor dim J is another dim: blocks of
//                   (destination rows of J) x (destination columns of I, the
//                   destination's minor dim), moved by KxK SIMD transposes
//                   (K = 16 bytes / element size) under the odometer.
//
//===----------------------------------------------------------------------===//
#include "Isa.h"
#include "Kernels.h"
#include "Simd.h"

#include <algorithm>
#include <numeric>
#include <vector>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

namespace tessel::relayout {

namespace {

std::vector<int64_t> strides(const TiledLayout &layout) {
  std::vector<int64_t> result(layout.rank());
  int64_t stride = 1;
  const std::vector<int64_t> &order = layout.physicalOrder();
  for (size_t j = order.size(); j-- > 0;) {
    result[order[j]] = stride;
    stride *= layout.logicalDims()[order[j]];
  }
  return result;
}

} // namespace

/// Whether a band of a transpose (64 bytes of destination row: 64 /
/// elementBytes source rows) is one contiguous run of the source of at
/// most a page: the slice's source rows are whole and adjacent and at most
/// 4 KiB / (64 / elementBytes) bytes long (256 bytes of f32, 128 of bf16).
/// A band reads its run column by column, a line of each row at a time,
/// which the hardware prefetchers (that stay within a page) do not follow:
/// measured on the EPYC VM, f32 [64,4096,64] -> [64,64,4096] ran at 13 GB/s
/// and 26 with the next band prefetched, f32 [a,b,c,d] -> [b,d,a,c] with
/// d = 32 or 64 at 12-13 and 23-27 with the prefetch and the source's
/// order of slices; bands of 8 KiB and more gained nothing (-5% to +5%).
static bool pageBands(const PermutePlan &plan) {
  int64_t s = plan.elementBytes;
  if (s < 1 || s > 8 || plan.isRowCopy() || plan.srcColumnStride != plan.rows)
    return false;
  return (64 / s) * plan.rows * s <= 4096;
}

/// Whether the plan's transposes run through the level's band kernels
/// (transposeBanded): they need whole lines per store group, so 32- and
/// 64-byte vectors whose bands write whole lines. With 16-byte ones the
/// stage (streaming) or the panel is faster.
static bool banded(const PermutePlan &plan) {
  int64_t s = plan.elementBytes;
  if (!plan.kernels || plan.kernels->vectorBytes < 32 ||
      (s != 1 && s != 2 && s != 4 && s != 8))
    return false;
  int log2Width = s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : 3;
  return plan.kernels->transposeBand[log2Width] &&
         plan.kernels->wholeLineBands[log2Width];
}

/// The dims of a permutation without tiles, in elements (elementBytes 0
/// for sub-byte elements).
static std::optional<PermutePlan> permuteDims(const TiledLayout &from,
                                              const TiledLayout &to) {
  if (!from.layout().tiles.empty() || !to.layout().tiles.empty() ||
      from.elementBits() != to.elementBits())
    return std::nullopt;
  PermutePlan plan;
  plan.elementBytes = from.elementBits() / 8;
  std::vector<int64_t> srcStrides = strides(from), dstStrides = strides(to);
  std::vector<PermutePlan::Dim> dims;
  for (int64_t d : to.physicalOrder()) {
    int64_t size = from.logicalDims()[d];
    if (size == 1)
      continue;
    if (!dims.empty() && dims.back().srcStride == srcStrides[d] * size &&
        dims.back().dstStride == dstStrides[d] * size) {
      dims.back().size *= size;
      dims.back().srcStride = srcStrides[d];
      dims.back().dstStride = dstStrides[d];
      continue;
    }
    dims.push_back({size, srcStrides[d], dstStrides[d]});
  }
  if (dims.empty())
    dims.push_back({1, 1, 1});
  PermutePlan::Dim inner = dims.back();
  dims.pop_back();
  plan.columns = inner.size;
  plan.srcColumnStride = inner.srcStride;
  if (inner.srcStride != 1) {
    auto j =
        std::find_if(dims.begin(), dims.end(), [](const PermutePlan::Dim &d) {
          return d.srcStride == 1;
        });
    plan.rows = j->size;
    plan.dstRowStride = j->dstStride;
    dims.erase(j);
  }
  plan.outer = std::move(dims);
  plan.tailStart = to.logicalElements() * plan.elementBytes;
  plan.dstBytes = to.physicalBytes();
  return plan;
}

std::optional<PermutePlan> planPermute(const TiledLayout &from,
                                       const TiledLayout &to,
                                       const KernelSet *kernels) {
  if (from.elementBits() % 8 != 0)
    return std::nullopt;
  std::optional<PermutePlan> plan = permuteDims(from, to);
  if (!plan)
    return plan;
  plan->kernels = kernels;
  // Where bands are short runs of the source (pageBands), the outer dims
  // run in the source's order, so that the band after a slice's last one,
  // which transposeBanded prefetches, is the next slice's first. (The
  // stage transposes of sse2 prefetch nothing and keep the destination's
  // order: the source's ran 10% slower there.)
  // (std::sort of positions with a tie-break, not std::stable_sort: the
  // latter uses get_temporary_buffer, deprecated, an error under clang's
  // -Werror with libstdc++ 12.)
  if (pageBands(*plan) && banded(*plan)) {
    std::vector<size_t> order(plan->outer.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      int64_t sa = plan->outer[a].srcStride, sb = plan->outer[b].srcStride;
      return sa != sb ? sa > sb : a < b;
    });
    std::vector<PermutePlan::Dim> sorted;
    for (size_t k : order)
      sorted.push_back(plan->outer[k]);
    plan->outer = std::move(sorted);
  }
  return plan;
}

std::optional<SubBytePermutePlan> planSubBytePermute(const TiledLayout &from,
                                                     const TiledLayout &to) {
  int64_t bits = from.elementBits();
  if (bits != 1 && bits != 2 && bits != 4)
    return std::nullopt;
  std::optional<PermutePlan> dims = permuteDims(from, to);
  if (!dims || dims->isRowCopy())
    return std::nullopt;
  // Every row of the slices and every outer base on a byte boundary on
  // both sides, so that blocks read and write whole bytes.
  int64_t per = 8 / bits;
  bool whole = dims->rows % per == 0 && dims->columns % per == 0 &&
               dims->srcColumnStride % per == 0 &&
               dims->dstRowStride % per == 0;
  for (const PermutePlan::Dim &d : dims->outer)
    whole = whole && d.srcStride % per == 0 && d.dstStride % per == 0;
  if (!whole)
    return std::nullopt;
  SubBytePermutePlan plan;
  plan.dims = *dims;
  plan.bits = bits;
  plan.tailStart = to.logicalElements() * bits / 8;
  plan.dstBytes = to.physicalBytes();
  return plan;
}

namespace {

/// Source rows per transpose panel: enough that each destination row gets
/// 1 KiB at a time, few enough that the panel stays in cache (an eighth of
/// the usable last-level cache, CacheSizes::usableL3, 4 MiB on the 32 MiB
/// L3 it was measured on: 512 B to 4 KiB and 1 to 4 MiB were within noise
/// of each other, 16 MiB panels slower), and a whole number of the bands
/// of transposeBanded (64 bytes of destination row).
static int64_t panelColumns(const PermutePlan &plan) {
  int64_t s = plan.elementBytes;
  int64_t columns =
      std::min<int64_t>(1024 / s, hostCaches().usableL3() / 8 /
                                      std::max<int64_t>(1, plan.rows * s));
  if (s <= 8)
    return std::max<int64_t>(64 / s, columns / (64 / s) * (64 / s));
  return std::max<int64_t>(16, columns);
}

/// The outer dims as an odometer carrying both base offsets.
struct Odometer {
  const std::vector<PermutePlan::Dim> &dims;
  std::vector<int64_t> index;
  int64_t srcBase = 0, dstBase = 0;

  Odometer(const std::vector<PermutePlan::Dim> &dims, int64_t linear)
      : dims(dims), index(dims.size()) {
    for (size_t d = dims.size(); d-- > 0;) {
      index[d] = linear % dims[d].size;
      linear /= dims[d].size;
      srcBase += index[d] * dims[d].srcStride;
      dstBase += index[d] * dims[d].dstStride;
    }
  }
  void next() {
    for (size_t d = dims.size(); d-- > 0;) {
      srcBase += dims[d].srcStride;
      dstBase += dims[d].dstStride;
      if (++index[d] < dims[d].size)
        return;
      srcBase -= index[d] * dims[d].srcStride;
      dstBase -= index[d] * dims[d].dstStride;
      index[d] = 0;
    }
  }
};

/// K x K blocks of Width-byte elements: src rows (stride srcRow bytes)
/// become dst columns.
template <int Width>
void transposeBlock(const uint8_t *src, int64_t srcRow, uint8_t *dst,
                    int64_t dstRow, bool streaming) {
#if defined(__SSE2__)
  constexpr int K = 16 / Width;
  __m128i v[K];
  for (int r = 0; r < K; ++r)
    v[r] = simd::load(src + r * srcRow);
  constexpr int Rounds = Width == 1 ? 4 : Width == 2 ? 3 : Width == 4 ? 2 : 1;
  simd::rounds<Width, K, Rounds>(v);
  for (int c = 0; c < K; ++c)
    simd::store(dst + c * dstRow, v[c], streaming);
#else
  constexpr int K = 16 / Width;
  for (int r = 0; r < K; ++r)
    for (int c = 0; c < K; ++c)
      std::memcpy(dst + c * dstRow + r * Width, src + r * srcRow + c * Width,
                  Width);
  (void)streaming;
#endif
}

inline void prefetchRow(const uint8_t *p, int64_t bytes) {
#if defined(__SSE2__)
  for (int64_t b = 0; b < bytes; b += 64)
    _mm_prefetch(reinterpret_cast<const char *>(p + b), _MM_HINT_T0);
#else
  (void)p;
  (void)bytes;
#endif
}

/// Destination columns [i0, i1) (source rows, a panel) x all destination
/// rows of one 2-D slice. The panel is first prefetched row after row: on
/// this kind of machine, reading a few hundred bytes from each of many rows
/// runs at a third of the sequential read bandwidth.
template <int Width>
void transposePanel(const PermutePlan &p, const uint8_t *src, uint8_t *dst,
                    int64_t i0, int64_t i1, bool streaming) {
  constexpr int64_t K = Width <= 8 && Width > 0 ? 16 / Width : 1;
  const int64_t s = Width > 0 ? Width : p.elementBytes;
  const int64_t srcRow = p.srcColumnStride * s, dstRow = p.dstRowStride * s;
  // Streams only where each destination row's part is whole 64-byte lines
  // (Isa.h): else the pieces would leave partial lines.
  streaming = streaming && streamingHead(dst + i0 * s) == 0 &&
              dstRow % kLineBytes == 0 && (i1 - i0) * s % kLineBytes == 0;
  for (int64_t i = i0; i < i1; ++i)
    prefetchRow(src + i * srcRow, p.rows * s);
  int64_t j = 0;
  if constexpr (K > 1) {
    for (; j + K <= p.rows; j += K) {
      int64_t i = i0;
      for (; i + K <= i1; i += K)
        transposeBlock<Width>(src + i * srcRow + j * s, srcRow,
                              dst + j * dstRow + i * s, dstRow, streaming);
      for (; i < i1; ++i)
        for (int64_t jj = j; jj < j + K; ++jj)
          std::memcpy(dst + jj * dstRow + i * s, src + i * srcRow + jj * s, s);
    }
  }
  for (; j < p.rows; ++j)
    for (int64_t i = i0; i < i1; ++i)
      std::memcpy(dst + j * dstRow + i * s, src + i * srcRow + j * s, s);
}

/// Destination columns [i0, i1) x all destination rows of one 2-D slice, in
/// blocks of 256-byte destination rows: each block is transposed into a
/// stage that stays in L1, then leaves row by row as whole cache lines.
/// With streaming stores, transposing straight into memory leaves K partial
/// lines in flight per register block. Measured on the 2-core EPYC VM at
/// 64 MiB: bf16 2-D from 15% to 25% of a streaming copy, the 4-D
/// permutation from 15-23% to 32-37%; f32 2-D unchanged (25%). With
/// ordinary stores (outputs that stay in cache) the panel is faster.
/// Transposes a full B x B block (B = 256 / Width) into the stage, whose
/// rows are B * Width = 256 bytes apart. Fixed trip counts and, for 4-byte
/// and 2-byte elements, kernels whose temporaries stay in registers: in this
/// loop the generic unpack rounds spill to the stack, and the whole
/// transpose ran 1.5x slower with them (measured in-process, f32 4096^2).
template <int Width>
void fillStage(const uint8_t *in, int64_t srcRow, uint8_t *stage) {
  constexpr int64_t K = 16 / Width, B = 256 / Width;
#if defined(__SSE2__)
  if constexpr (Width == 4) {
    float *out = reinterpret_cast<float *>(stage);
    for (int64_t ii = 0; ii < B; ii += 4)
      for (int64_t jj = 0; jj < B; jj += 4) {
        const uint8_t *q = in + ii * srcRow + jj * 4;
        __m128 a = _mm_loadu_ps(reinterpret_cast<const float *>(q));
        __m128 b = _mm_loadu_ps(reinterpret_cast<const float *>(q + srcRow));
        __m128 c =
            _mm_loadu_ps(reinterpret_cast<const float *>(q + 2 * srcRow));
        __m128 d =
            _mm_loadu_ps(reinterpret_cast<const float *>(q + 3 * srcRow));
        _MM_TRANSPOSE4_PS(a, b, c, d);
        float *o = out + jj * B + ii;
        _mm_store_ps(o, a);
        _mm_store_ps(o + B, b);
        _mm_store_ps(o + 2 * B, c);
        _mm_store_ps(o + 3 * B, d);
      }
    return;
  }
  if constexpr (Width == 2) {
    for (int64_t ii = 0; ii < B; ii += 8)
      for (int64_t jj = 0; jj < B; jj += 8) {
        const uint8_t *q = in + ii * srcRow + jj * 2;
        __m128i a[8];
        for (int r = 0; r < 8; ++r)
          a[r] = simd::load(q + r * srcRow);
        // Pairs, then quads, then octets of rows: column c ends in r[c].
        __m128i t0 = _mm_unpacklo_epi16(a[0], a[1]);
        __m128i t1 = _mm_unpackhi_epi16(a[0], a[1]);
        __m128i t2 = _mm_unpacklo_epi16(a[2], a[3]);
        __m128i t3 = _mm_unpackhi_epi16(a[2], a[3]);
        __m128i t4 = _mm_unpacklo_epi16(a[4], a[5]);
        __m128i t5 = _mm_unpackhi_epi16(a[4], a[5]);
        __m128i t6 = _mm_unpacklo_epi16(a[6], a[7]);
        __m128i t7 = _mm_unpackhi_epi16(a[6], a[7]);
        __m128i u0 = _mm_unpacklo_epi32(t0, t2);
        __m128i u1 = _mm_unpackhi_epi32(t0, t2);
        __m128i u2 = _mm_unpacklo_epi32(t1, t3);
        __m128i u3 = _mm_unpackhi_epi32(t1, t3);
        __m128i u4 = _mm_unpacklo_epi32(t4, t6);
        __m128i u5 = _mm_unpackhi_epi32(t4, t6);
        __m128i u6 = _mm_unpacklo_epi32(t5, t7);
        __m128i u7 = _mm_unpackhi_epi32(t5, t7);
        __m128i r[8] = {_mm_unpacklo_epi64(u0, u4), _mm_unpackhi_epi64(u0, u4),
                        _mm_unpacklo_epi64(u1, u5), _mm_unpackhi_epi64(u1, u5),
                        _mm_unpacklo_epi64(u2, u6), _mm_unpackhi_epi64(u2, u6),
                        _mm_unpacklo_epi64(u3, u7), _mm_unpackhi_epi64(u3, u7)};
        uint8_t *o = stage + (jj * B + ii) * 2;
        for (int c = 0; c < 8; ++c)
          _mm_store_si128(reinterpret_cast<__m128i *>(o + c * B * 2), r[c]);
      }
    return;
  }
#endif
  for (int64_t ii = 0; ii < B; ii += K)
    for (int64_t jj = 0; jj < B; jj += K)
      transposeBlock<Width>(in + ii * srcRow + jj * Width, srcRow,
                            stage + (jj * B + ii) * Width, B * Width, false);
}

/// A band of 64 / Width rows in K x K register blocks (K = 16 / Width):
/// four 16-byte pieces per destination line.
template <int Width>
int64_t sse2Band(const uint8_t *in, int64_t srcRow, uint8_t *out,
                 int64_t dstRow, int64_t columns, bool streaming) {
  constexpr int64_t K = 16 / Width, R = 64 / Width;
  // Each destination line is written in four pieces: streamed only when
  // they are the four quarters of one line (Isa.h).
  bool stream =
      streaming && streamingHead(out) == 0 && dstRow % kLineBytes == 0;
  int64_t c = 0;
  for (; c + K <= columns; c += K)
    for (int64_t q = 0; q < R; q += K)
      transposeBlock<Width>(in + q * srcRow + c * Width, srcRow,
                            out + c * dstRow + q * Width, dstRow, stream);
  return c;
}

/// sse2Band with the rows and lines listed (KernelSet::transposeRows).
template <int Width>
int64_t sse2Rows(const uint8_t *const *in, uint8_t *const *out, int64_t columns,
                 bool streaming) {
  constexpr int64_t K = 16 / Width, R = 64 / Width;
  uintptr_t misaligned = 0;
  for (int64_t c = 0; streaming && c < columns; ++c)
    misaligned |= reinterpret_cast<uintptr_t>(out[c]);
  bool stream = streaming && misaligned % kLineBytes == 0;
  int64_t c = 0;
  for (; c + K <= columns; c += K)
    for (int64_t q = 0; q < R; q += K) {
#if defined(__SSE2__)
      constexpr int Rounds = Width == 1   ? 4
                             : Width == 2 ? 3
                             : Width == 4 ? 2
                                          : 1;
      __m128i v[K];
      for (int r = 0; r < K; ++r)
        v[r] = simd::load(in[q + r] + c * Width);
      simd::rounds<Width, K, Rounds>(v);
      for (int i = 0; i < K; ++i)
        simd::storeTo(out[c + i] + q * Width, v[i], stream);
#else
      for (int64_t r = 0; r < K; ++r)
        for (int64_t i = 0; i < K; ++i)
          std::memcpy(out[c + i] + (q + r) * Width, in[q + r] + (c + i) * Width,
                      Width);
      (void)stream;
#endif
    }
  return c;
}

} // namespace

int64_t sse2TransposeRows1(const uint8_t *const *in, uint8_t *const *out,
                           int64_t columns, bool streaming) {
  return sse2Rows<1>(in, out, columns, streaming);
}
int64_t sse2TransposeRows2(const uint8_t *const *in, uint8_t *const *out,
                           int64_t columns, bool streaming) {
  return sse2Rows<2>(in, out, columns, streaming);
}
int64_t sse2TransposeRows4(const uint8_t *const *in, uint8_t *const *out,
                           int64_t columns, bool streaming) {
  return sse2Rows<4>(in, out, columns, streaming);
}
int64_t sse2TransposeRows8(const uint8_t *const *in, uint8_t *const *out,
                           int64_t columns, bool streaming) {
  return sse2Rows<8>(in, out, columns, streaming);
}

int64_t sse2TransposeBand1(const uint8_t *in, int64_t srcRow, uint8_t *out,
                           int64_t dstRow, int64_t columns, bool streaming) {
  return sse2Band<1>(in, srcRow, out, dstRow, columns, streaming);
}
int64_t sse2TransposeBand2(const uint8_t *in, int64_t srcRow, uint8_t *out,
                           int64_t dstRow, int64_t columns, bool streaming) {
  return sse2Band<2>(in, srcRow, out, dstRow, columns, streaming);
}
int64_t sse2TransposeBand4(const uint8_t *in, int64_t srcRow, uint8_t *out,
                           int64_t dstRow, int64_t columns, bool streaming) {
  return sse2Band<4>(in, srcRow, out, dstRow, columns, streaming);
}
int64_t sse2TransposeBand8(const uint8_t *in, int64_t srcRow, uint8_t *out,
                           int64_t dstRow, int64_t columns, bool streaming) {
  return sse2Band<8>(in, srcRow, out, dstRow, columns, streaming);
}

void sse2FillStage1(const uint8_t *in, int64_t srcRow, uint8_t *stage) {
  fillStage<1>(in, srcRow, stage);
}
void sse2FillStage2(const uint8_t *in, int64_t srcRow, uint8_t *stage) {
  fillStage<2>(in, srcRow, stage);
}
void sse2FillStage4(const uint8_t *in, int64_t srcRow, uint8_t *stage) {
  fillStage<4>(in, srcRow, stage);
}
void sse2FillStage8(const uint8_t *in, int64_t srcRow, uint8_t *stage) {
  fillStage<8>(in, srcRow, stage);
}

namespace {

template <int Width>
void transposeStaged(const PermutePlan &p, const uint8_t *src, uint8_t *dst,
                     int64_t i0, int64_t i1, bool streaming) {
  constexpr int64_t K = 16 / Width, B = 256 / Width;
  alignas(64) uint8_t stage[B * B * Width];
  const int64_t srcRow = p.srcColumnStride * Width;
  const int64_t dstRow = p.dstRowStride * Width;
  constexpr int log2Width = Width == 1   ? 0
                            : Width == 2 ? 1
                            : Width == 4 ? 2
                                         : 3;
  auto *fill = p.kernels->fillStage[log2Width];
  auto *copy = p.kernels->copy;
  for (int64_t i = i0; i < i1; i += B) {
    int64_t bi = std::min(B, i1 - i);
    for (int64_t j = 0; j < p.rows; j += B) {
      int64_t bj = std::min(B, p.rows - j);
      const uint8_t *in = src + i * srcRow + j * Width;
      if (bi == B && bj == B) {
        fill(in, srcRow, stage);
        for (int64_t jj = 0; jj < B; ++jj)
          copy(dst + (j + jj) * dstRow + i * Width, stage + jj * B * Width,
               B * Width, streaming);
        continue;
      }
      for (int64_t ii = 0; ii < bi; ii += K)
        for (int64_t jj = 0; jj < bj; jj += K) {
          uint8_t *out = stage + (jj * B + ii) * Width;
          if (ii + K <= bi && jj + K <= bj) {
            transposeBlock<Width>(in + ii * srcRow + jj * Width, srcRow, out,
                                  B * Width, false);
            continue;
          }
          for (int64_t r = ii; r < std::min(bi, ii + K); ++r)
            for (int64_t c = jj; c < std::min(bj, jj + K); ++c)
              std::memcpy(stage + (c * B + r) * Width,
                          in + r * srcRow + c * Width, Width);
        }
      for (int64_t jj = 0; jj < bj; ++jj)
        copy(dst + (j + jj) * dstRow + i * Width, stage + jj * B * Width,
             bi * Width, streaming);
    }
  }
}

/// Bands of 64 / Width source rows through the level's register kernel
/// (KernelSet::transposeBand): every destination row receives a whole
/// 64-byte line per band, straight from registers, no stage. The columns
/// are taken in blocks so that a block of the panel (source rows i0..i1)
/// stays in L2 while its bands are written.
template <int Width>
void transposeBanded(const PermutePlan &p, const uint8_t *src, uint8_t *dst,
                     int64_t i0, int64_t i1, bool streaming) {
  constexpr int64_t R = 64 / Width;
  constexpr int log2Width = Width == 1   ? 0
                            : Width == 2 ? 1
                            : Width == 4 ? 2
                                         : 3;
  auto *band = p.kernels->transposeBand[log2Width];
  auto *wide = p.kernels->transposeWideBand[log2Width];
  const int64_t srcRow = p.srcColumnStride * Width;
  const int64_t dstRow = p.dstRowStride * Width;
  // Source columns per block: the panel's block fills a quarter of L2
  // (1 KiB of each of 256 f32 rows on a 1 MiB L2), at least 256 bytes.
  int64_t blockBytes = hostCaches().l2 / 4 / std::max<int64_t>(1, i1 - i0);
  int64_t block = std::max<int64_t>(256, blockBytes) / Width;
  int64_t full = i0 + (i1 - i0) / R * R;
  // Bands of one contiguous page or less (pageBands): the next band's run
  // is prefetched whole while this one is transposed (past the slice's end
  // it is the next slice's, or memory nobody reads; prefetches never
  // fault).
  bool prefetch = pageBands(p) && block >= p.rows;
  // Where the level has transposeWideBand (avx512; avx2 for 1-, 2- and
  // 4-byte elements), the bands run kWideBands at a time, each destination row
  // receiving their lines back to back (HwyKernels.cpp); the rest one by
  // one.
  auto runBand = [&](const uint8_t *in, uint8_t *out, int64_t columns) {
    int64_t done = band(in, srcRow, out, dstRow, columns, streaming);
    for (int64_t j = done; j < columns; ++j)
      for (int64_t r = 0; r < R; ++r)
        std::memcpy(out + j * dstRow + r * Width, in + r * srcRow + j * Width,
                    Width);
  };
  for (int64_t j0 = 0; j0 < p.rows; j0 += block) {
    int64_t columns = std::min(block, p.rows - j0);
    // The first band not yet moved.
    int64_t next = i0;
    if (wide && !prefetch) {
      for (; next + kWideBands * R <= full; next += kWideBands * R) {
        const uint8_t *in = src + next * srcRow + j0 * Width;
        uint8_t *out = dst + j0 * dstRow + next * Width;
        int64_t done = wide(in, srcRow, out, dstRow, columns, streaming);
        for (int64_t q = 0; done < columns && q < kWideBands; ++q)
          runBand(in + q * R * srcRow + done * Width,
                  out + done * dstRow + q * R * Width, columns - done);
      }
    }
    for (int64_t i = next; i < full; i += R) {
      const uint8_t *in = src + i * srcRow + j0 * Width;
      uint8_t *out = dst + j0 * dstRow + i * Width;
      if (prefetch)
        prefetchRow(in + R * srcRow, R * srcRow);
      runBand(in, out, columns);
    }
  }
  if (full < i1)
    transposePanel<Width>(p, src, dst, full, i1, streaming);
}

template <int Width>
void transposeWith(const PermutePlan &p, const uint8_t *src, uint8_t *dst,
                   int64_t i0, int64_t i1, bool streaming) {
  // At avx2 the 1- and 2-byte bands write half lines, and the streaming
  // permutes go through the stage (transposeStaged), but where the level
  // has a wide band they take the bands too: four at a time through its
  // stage, the few rows left over one by one. (Not where a band is a page
  // or less of the source, which transposeBanded takes band by band.)
  if (banded(p) ||
      (streaming && Width <= 2 && p.kernels &&
       p.kernels->transposeWideBand[Width == 1 ? 0 : 1] && !pageBands(p)))
    return transposeBanded<Width>(p, src, dst, i0, i1, streaming);
  if (streaming)
    return transposeStaged<Width>(p, src, dst, i0, i1, true);
  return transposePanel<Width>(p, src, dst, i0, i1, false);
}

void transposeSlice(const PermutePlan &p, const uint8_t *src, uint8_t *dst,
                    int64_t i0, int64_t i1, bool streaming) {
  switch (p.elementBytes) {
  case 1:
    return transposeWith<1>(p, src, dst, i0, i1, streaming);
  case 2:
    return transposeWith<2>(p, src, dst, i0, i1, streaming);
  case 4:
    return transposeWith<4>(p, src, dst, i0, i1, streaming);
  case 8:
    return transposeWith<8>(p, src, dst, i0, i1, streaming);
  case 16:
    return transposePanel<16>(p, src, dst, i0, i1, streaming);
  default:
    return transposePanel<0>(p, src, dst, i0, i1, streaming);
  }
}

} // namespace

int64_t PermutePlan::outerCount() const {
  int64_t count = 1;
  for (const Dim &d : outer)
    count *= d.size;
  return count;
}

void runPermute(const PermutePlan &plan, const uint8_t *src, uint8_t *dst,
                int threads, bool streaming) {
  int64_t s = plan.elementBytes;
  // Work items: (outer index, chunk of the destination columns): pieces of
  // a row (row copies) or panels of source rows (transposes).
  int64_t chunk = plan.isRowCopy()
                      ? std::max<int64_t>(1, (int64_t(256) << 10) / s)
                      : panelColumns(plan);
  int64_t extent = plan.columns;
  int64_t chunks = ceilDivide(extent, chunk);
  int64_t itemBytes =
      std::min(extent, chunk) * s * (plan.isRowCopy() ? 1 : plan.rows);
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / itemBytes);
  parallelFor(threads, plan.outerCount() * chunks, grain,
              [&](int64_t begin, int64_t end) {
                Odometer odometer(plan.outer, begin / chunks);
                for (int64_t item = begin; item < end; ++item) {
                  int64_t c = item % chunks;
                  if (item != begin && c == 0)
                    odometer.next();
                  int64_t e0 = c * chunk, e1 = std::min(extent, e0 + chunk);
                  const uint8_t *in = src + odometer.srcBase * s;
                  uint8_t *out = dst + odometer.dstBase * s;
                  if (plan.isRowCopy())
                    plan.kernels->copy(out + e0 * s, in + e0 * s, (e1 - e0) * s,
                                       streaming);
                  else
                    transposeSlice(plan, in, out, e0, e1, streaming);
                }
                if (streaming)
                  storeFence();
              });
  if (plan.dstBytes > plan.tailStart)
    std::memset(dst + plan.tailStart, 0, plan.dstBytes - plan.tailStart);
}

namespace {

/// One block of a sub-byte transpose: bi source rows (destination columns
/// i..i+bi) x bj source columns (destination rows j..j+bj), unpacked to a
/// byte each, transposed in cache, packed again.
template <int64_t bits>
void subByteBlock(const SubBytePermutePlan &p, const uint8_t *src, uint8_t *dst,
                  int64_t srcBase, int64_t dstBase, int64_t i, int64_t j,
                  int64_t bi, int64_t bj, uint8_t *stageA, uint8_t *stageB) {
  constexpr int64_t B = 64, per = 8 / bits, mask = (1 << bits) - 1;
  const PermutePlan &d = p.dims;
  for (int64_t r = 0; r < bi; ++r) {
    const uint8_t *in =
        src + (srcBase + (i + r) * d.srcColumnStride + j) * bits / 8;
    uint8_t *row = stageA + r * B;
    // Byte by byte with a fixed inner trip count: the compiler vectorizes
    // it (an element-indexed loop divides per element).
    for (int64_t k = 0; k < bj / per; ++k) {
      uint8_t byte = in[k];
      for (int64_t q = 0; q < per; ++q)
        row[k * per + q] = (byte >> (q * bits)) & mask;
    }
  }
  int64_t r = 0;
  if (bi == B && bj == B && p.dims.kernels->transposeBand[0])
    for (; r + 64 <= bi; r += 64)
      p.dims.kernels->transposeBand[0](stageA + r * B, B, stageB + r, B, bj,
                                       false);
  for (; r < bi; ++r)
    for (int64_t c = 0; c < bj; ++c)
      stageB[c * B + r] = stageA[r * B + c];
  for (int64_t c = 0; c < bj; ++c) {
    uint8_t *out = dst + (dstBase + (j + c) * d.dstRowStride + i) * bits / 8;
    const uint8_t *row = stageB + c * B;
    for (int64_t k = 0; k < bi / per; ++k) {
      uint8_t byte = 0;
      for (int64_t q = 0; q < per; ++q)
        byte |= static_cast<uint8_t>(row[k * per + q] << (q * bits));
      out[k] = byte;
    }
  }
}

} // namespace

void pairNibblesScalar(const uint8_t *a, const uint8_t *b, uint8_t *low,
                       uint8_t *high, int64_t bytes) {
  // Byte by byte: the compiler vectorizes it for the baseline (SSE2).
  for (int64_t k = 0; k < bytes; ++k) {
    low[k] = static_cast<uint8_t>((a[k] & 0x0F) | (b[k] << 4));
    high[k] = static_cast<uint8_t>((a[k] >> 4) | (b[k] & 0xF0));
  }
}

namespace {

/// A full block of `rows` (128, or 512 by 512 nibbles where the level has
/// nibbleWideBand) source rows by `width` (a multiple of 128) nibbles
/// (4-bit elements): destination columns i..i+rows (source rows) by
/// destination rows j..j+width (source columns). Source rows 2p and 2p + 1
/// hold, in byte k, the elements of columns 2k and 2k + 1; the destination
/// byte at row 2k, column pair p is (low nibble of row 2p's byte k) | (low
/// nibble of row 2p + 1's) << 4, and at row 2k + 1 the two high nibbles.
/// So the rows are combined in pairs, a byte at a time, into two byte
/// matrices (the low and the high nibbles), which are then transposed as
/// bytes into the even and the odd destination rows. Blocks of 512 rows go
/// to the level's nibbleWideBand, which pairs the rows straight into its
/// stages and gives each destination row kWideBands = 4 whole lines back
/// to back (HwyKernels.cpp). Blocks of 128 rows pair into `low` and `high`
/// (rows/2 x width/2 bytes each), which the level's band kernel transposes,
/// one whole line (64 bytes) of each destination row per block. Streamed
/// when asked.
void nibbleBlock(const SubBytePermutePlan &p, const uint8_t *src, uint8_t *dst,
                 int64_t srcBase, int64_t dstBase, int64_t i, int64_t j,
                 int64_t rows, int64_t width, uint8_t *low, uint8_t *high,
                 uint8_t *lines, bool streaming) {
  constexpr int64_t B = 64;
  const PermutePlan &d = p.dims;
  int64_t W = width / 2, srcRow = d.srcColumnStride / 2, pairs = rows / 2;
  const uint8_t *first = src + (srcBase + i * d.srcColumnStride + j) / 2;
  int64_t rowBytes = d.dstRowStride / 2;
  uint8_t *even = dst + (dstBase + j * d.dstRowStride + i) / 2;
  const KernelSet &kernels = *d.kernels;
  if (pairs == kWideBands * B) {
    // Whole 512-nibble widths only (runSubBytePermute): W is 256 bytes,
    // which the wide band moves whole.
    [[maybe_unused]] int64_t done =
        kernels.nibbleWideBand(first, srcRow, even, rowBytes, W, streaming);
    assert(done == W && "the wide band moves 256 byte columns whole");
    return;
  }
  // The same rows' next segment into L2 (two blocks ahead in the chunk's
  // order): the band reads 128 rows at once, which the hardware
  // prefetchers do not follow. Each pair of rows is prefetched beside its
  // own reads (as the bands do, HwyKernels.cpp): all 128 rows as a burst
  // before the reads gained less.
  bool ahead = j + 2 * width <= d.rows;
  for (int64_t q = 0; q < pairs; ++q) {
    const uint8_t *a = first + 2 * q * srcRow;
    if (ahead)
      for (int64_t k = 0; k < W; k += 64) {
        __builtin_prefetch(a + W + k, 0, 2);
        __builtin_prefetch(a + srcRow + W + k, 0, 2);
      }
    kernels.pairNibbles(a, a + srcRow, low + q * W, high + q * W, W);
  }
  assert(pairs == B && "blocks of 128 or 512 rows");
  // Where the level's band writes lines in pieces (sse2's 16-byte blocks,
  // avx2's s8 squares), it fills a stage of whole lines in L1 instead,
  // which copyRows then writes out (streaming those pieces straight to
  // memory ran at 7-10% of copy on the EPYC VM).
  bool staged = !kernels.wholeLineBands[0];
  for (int half = 0; half < 2; ++half) {
    const uint8_t *in = half ? high : low;
    uint8_t *out = even + half * rowBytes;
    uint8_t *to = staged ? lines : out;
    int64_t toRow = staged ? B : 2 * rowBytes;
    int64_t done =
        kernels.transposeBand[0](in, W, to, toRow, W, streaming && !staged);
    for (int64_t c = done; c < W; ++c)
      for (int64_t r = 0; r < B; ++r)
        to[c * toRow + r] = in[r * W + c];
    if (staged)
      kernels.copyRows(out, 2 * rowBytes, lines, B, B, W, streaming);
  }
}

} // namespace

void runSubBytePermute(const SubBytePermutePlan &plan, const uint8_t *src,
                       uint8_t *dst, int threads, bool streaming) {
  // A work item is a chunk of 256 source rows (512 where the level has
  // nibbleWideBand: avx2, avx512): each destination row then receives
  // whole lines (128 nibbles, 64 bytes) per visit. Nibbles go in blocks of
  // 128 rows (a whole chunk of 512 at once with the wide band) by 512 (then
  // 128) columns where the blocks are whole (nibbleBlock: 9% -> 22-32% of copy
  // for s4 [8192,16384] in thread CPU time on the EPYC VM; blocks of 128
  // columns without the prefetch 15-28%), the rest in 64 x 64 blocks
  // through byte stages (subByteBlock, ordinary stores: they write half
  // lines). With the wide band pairing the rows itself, without the two
  // buffers of pairs in between: Zen 5, one thread, thread CPU time, 64 and
  // 256 MiB, alternated three times, 17.9-19.3 -> 22.0-23.2 GB/s (41-45% ->
  // 47-51% of copy) at avx512, 17.5-18.5 -> 21.1-21.9 at avx2.
  constexpr int64_t B = 64, N = 2 * B, Wide = 8 * B;
  const PermutePlan &d = plan.dims;
  bool nibbles = plan.bits == 4 && d.kernels->transposeBand[0];
  // Blocks of 512 rows: four lines of each destination row back to back,
  // where the band gave one line of each of 256 rows in turn, which
  // streaming stores write at half a copy's speed (HwyKernels.cpp).
  bool wide = nibbles && d.kernels->nibbleWideBand;
  const int64_t chunk = wide ? kWideBands * N : 4 * B;
  int64_t chunks = ceilDivide(d.columns, chunk);
  int64_t grain = 1;
  auto block = plan.bits == 4   ? subByteBlock<4>
               : plan.bits == 2 ? subByteBlock<2>
                                : subByteBlock<1>;
  parallelFor(
      threads, d.outerCount() * chunks, grain, [&](int64_t begin, int64_t end) {
        alignas(64) uint8_t stageA[B * B], stageB[B * B];
        // low and high of a block of N rows (N / 2 rows of Wide / 2 bytes
        // each), then the lines of a staged band (Wide / 2 of 64 B).
        std::vector<uint8_t> stage(nibbles ? N * Wide / 2 + Wide * B + 64 : 0);
        uint8_t *aligned =
            stage.data() +
            (64 - reinterpret_cast<uintptr_t>(stage.data()) % 64) % 64;
        Odometer odometer(d.outer, begin / chunks);
        for (int64_t item = begin; item < end; ++item) {
          int64_t c = item % chunks;
          if (item != begin && c == 0)
            odometer.next();
          int64_t i0 = c * chunk;
          int64_t i1 = std::min(d.columns, i0 + chunk);
          int64_t srcBase = odometer.srcBase, dstBase = odometer.dstBase;
          // Destination rows [j0, j1) x columns [c0, c1) in 64 x 64 blocks.
          auto small = [&](int64_t c0, int64_t c1, int64_t j0, int64_t j1) {
            for (int64_t j = j0; j < j1; j += B)
              for (int64_t i = c0; i < c1; i += B)
                block(plan, src, dst, srcBase, dstBase, i, j,
                      std::min(B, c1 - i), std::min(B, j1 - j), stageA, stageB);
          };
          int64_t j = 0;
          int64_t iFull = nibbles ? i0 + (i1 - i0) / N * N : i0;
          if (iFull > i0) {
            for (int64_t width : {Wide, N}) {
              // With the wide band, a whole chunk's 512-nibble widths in
              // one block of rows; else (the 128-nibble widths, a ragged
              // last chunk) blocks of 128.
              int64_t rows =
                  wide && iFull - i0 == chunk && width == Wide ? chunk : N;
              for (; j + width <= d.rows; j += width)
                for (int64_t i = i0; i < iFull; i += rows)
                  nibbleBlock(plan, src, dst, srcBase, dstBase, i, j, rows,
                              width, aligned, aligned + N * Wide / 4,
                              aligned + N * Wide / 2, streaming);
            }
            small(iFull, i1, 0, j);
          }
          small(i0, i1, j, d.rows);
        }
        if (streaming)
          storeFence();
      });
  if (plan.dstBytes > plan.tailStart)
    std::memset(dst + plan.tailStart, 0, plan.dstBytes - plan.tailStart);
}

std::string describeSubBytePermute(const SubBytePermutePlan &plan) {
  return "sub-byte transpose of " + std::to_string(plan.dims.rows) + "x" +
         std::to_string(plan.dims.columns) + " slices of " +
         std::to_string(plan.bits) +
         (plan.bits != 4 || !plan.dims.kernels->transposeBand[0]
              ? "-bit elements through byte stages of 64x64, "
          : plan.dims.kernels->transposeWideBand[0]
              ? "-bit elements, rows combined in pairs into bytes and "
                "transposed in blocks of 512 rows, four lines of each "
                "destination row at once (128 rows, then 64x64 byte stages, "
                "at the edges), "
              : "-bit elements, rows combined in pairs into bytes and "
                "transposed in blocks of 128 rows (64x64 byte stages at the "
                "edges), ") +
         std::to_string(plan.dims.outer.size()) + " outer dims";
}

std::string describePermute(const PermutePlan &plan) {
  std::string outer = std::to_string(plan.outer.size()) + " outer dims";
  std::string bytes = std::to_string(plan.elementBytes) + "-byte elements";
  if (plan.isRowCopy())
    return "permute: copy rows of " + std::to_string(plan.columns) +
           " contiguous elements, " + outer + ", " + bytes;
  int64_t k = plan.elementBytes <= 8 ? 16 / plan.elementBytes : 1;
  return "permute: blocked transpose of " + std::to_string(plan.rows) + "x" +
         std::to_string(plan.columns) + " slices with " + std::to_string(k) +
         "x" + std::to_string(k) + " SIMD blocks, " + outer + ", " + bytes;
}

} // namespace tessel::relayout
