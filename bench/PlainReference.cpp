//===- PlainReference.cpp - The bench's hand-written peer (-march=native) -===//
//
// Deliberately plain: one loop nest per case, 256-bit registers when the
// host has AVX2 (portable loops otherwise), 32-byte streaming stores that
// fill whole cache lines before moving on. See PlainReference.h.
//
//===----------------------------------------------------------------------===//
#include "PlainReference.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstring>
#include <functional>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace plain {

const char *isa() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__)
  return "avx2";
#else
  return "sse2";
#endif
}

namespace {

void parallel(tbb::task_arena &arena, int64_t count,
              const std::function<void(int64_t)> &body) {
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, count),
                      [&](const tbb::blocked_range<int64_t> &r) {
                        for (int64_t i = r.begin(); i < r.end(); ++i)
                          body(i);
#if defined(__AVX2__)
                        _mm_sfence();
#endif
                      });
  });
}

#if defined(__AVX2__)
inline __m256i load(const uint8_t *p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
}
inline void stream(uint8_t *p, __m256i v) {
  _mm256_stream_si256(reinterpret_cast<__m256i *>(p), v);
}
#endif

/// 512 bytes (one tile row of 128 elements x k rows) from `rows` into out.
void interleaveRow(uint8_t *out, const uint8_t *const *rows, int64_t s,
                   int64_t k) {
#if defined(__AVX2__)
  if (k == 1) {
    for (int64_t x = 0; x < 512; x += 32)
      stream(out + x, load(rows[0] + x));
    return;
  }
  if (k == 2 && s == 2) {
    for (int64_t x = 0; x < 256; x += 32) {
      __m256i a = load(rows[0] + x), b = load(rows[1] + x);
      __m256i lo = _mm256_unpacklo_epi16(a, b),
              hi = _mm256_unpackhi_epi16(a, b);
      stream(out + 2 * x, _mm256_permute2x128_si256(lo, hi, 0x20));
      stream(out + 2 * x + 32, _mm256_permute2x128_si256(lo, hi, 0x31));
    }
    return;
  }
  if (k == 4 && s == 1) {
    for (int64_t x = 0; x < 128; x += 32) {
      __m256i a = load(rows[0] + x), b = load(rows[1] + x);
      __m256i c = load(rows[2] + x), d = load(rows[3] + x);
      __m256i abLo = _mm256_unpacklo_epi8(a, b),
              abHi = _mm256_unpackhi_epi8(a, b);
      __m256i cdLo = _mm256_unpacklo_epi8(c, d),
              cdHi = _mm256_unpackhi_epi8(c, d);
      __m256i q0 = _mm256_unpacklo_epi16(abLo, cdLo);
      __m256i q1 = _mm256_unpackhi_epi16(abLo, cdLo);
      __m256i q2 = _mm256_unpacklo_epi16(abHi, cdHi);
      __m256i q3 = _mm256_unpackhi_epi16(abHi, cdHi);
      stream(out + 4 * x, _mm256_permute2x128_si256(q0, q1, 0x20));
      stream(out + 4 * x + 32, _mm256_permute2x128_si256(q2, q3, 0x20));
      stream(out + 4 * x + 64, _mm256_permute2x128_si256(q0, q1, 0x31));
      stream(out + 4 * x + 96, _mm256_permute2x128_si256(q2, q3, 0x31));
    }
    return;
  }
#endif
  for (int64_t j = 0; j < 512 / (s * k); ++j)
    for (int64_t q = 0; q < k; ++q)
      std::memcpy(out + (j * k + q) * s, rows[q] + j * s, s);
}

/// The inverse: 512 bytes of a tile into k rows.
void deinterleaveRow(const uint8_t *in, uint8_t *const *rows, int64_t s,
                     int64_t k) {
#if defined(__AVX2__)
  if (k == 1) {
    for (int64_t x = 0; x < 512; x += 32)
      stream(rows[0] + x, load(in + x));
    return;
  }
  if (k == 2 && s == 2) {
    // Per 128-bit lane: a0 b0 a1 b1 a2 b2 a3 b3 -> a0 a1 a2 a3 b0 b1 b2 b3.
    const __m256i m =
        _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                         0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    for (int64_t x = 0; x < 256; x += 32) {
      __m256i v0 = _mm256_permute4x64_epi64(
          _mm256_shuffle_epi8(load(in + 2 * x), m), 0xD8);
      __m256i v1 = _mm256_permute4x64_epi64(
          _mm256_shuffle_epi8(load(in + 2 * x + 32), m), 0xD8);
      stream(rows[0] + x, _mm256_permute2x128_si256(v0, v1, 0x20));
      stream(rows[1] + x, _mm256_permute2x128_si256(v0, v1, 0x31));
    }
    return;
  }
  if (k == 4 && s == 1) {
    // Per lane: quads -> a0..a3 b0..b3 c0..c3 d0..d3, then the dwords of
    // both lanes paired so that each qword holds 8 bytes of one row.
    const __m256i m =
        _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                         0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i pair = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int64_t x = 0; x < 128; x += 32) {
      __m256i y[4];
      for (int i = 0; i < 4; ++i)
        y[i] = _mm256_permutevar8x32_epi32(
            _mm256_shuffle_epi8(load(in + 4 * x + 32 * i), m), pair);
      __m256i t0 = _mm256_unpacklo_epi64(y[0], y[1]);
      __m256i t1 = _mm256_unpackhi_epi64(y[0], y[1]);
      __m256i t2 = _mm256_unpacklo_epi64(y[2], y[3]);
      __m256i t3 = _mm256_unpackhi_epi64(y[2], y[3]);
      stream(rows[0] + x, _mm256_permute2x128_si256(t0, t2, 0x20));
      stream(rows[1] + x, _mm256_permute2x128_si256(t1, t3, 0x20));
      stream(rows[2] + x, _mm256_permute2x128_si256(t0, t2, 0x31));
      stream(rows[3] + x, _mm256_permute2x128_si256(t1, t3, 0x31));
    }
    return;
  }
#endif
  for (int64_t j = 0; j < 512 / (s * k); ++j)
    for (int64_t q = 0; q < k; ++q)
      std::memcpy(rows[q] + j * s, in + (j * k + q) * s, s);
}

} // namespace

void tile(const uint8_t *src, uint8_t *dst, int64_t rows, int64_t cols,
          int64_t s, int64_t k, tbb::task_arena &arena) {
  int64_t colBlocks = cols / 128, rowBytes = cols * s, tileBytes = 1024 * s;
  parallel(arena, rows / 8, [&](int64_t band) {
    const uint8_t *in = src + band * 8 * rowBytes;
    uint8_t *out = dst + band * colBlocks * tileBytes;
    for (int64_t cb = 0; cb < colBlocks; ++cb)
      for (int64_t g = 0; g < 8 / k; ++g) {
        const uint8_t *r[4];
        for (int64_t q = 0; q < k; ++q)
          r[q] = in + (g * k + q) * rowBytes + cb * 128 * s;
        interleaveRow(out + cb * tileBytes + g * 512, r, s, k);
      }
  });
}

void untile(const uint8_t *src, uint8_t *dst, int64_t rows, int64_t cols,
            int64_t s, int64_t k, tbb::task_arena &arena) {
  int64_t colBlocks = cols / 128, rowBytes = cols * s, tileBytes = 1024 * s;
  parallel(arena, rows / 8, [&](int64_t band) {
    const uint8_t *in = src + band * colBlocks * tileBytes;
    uint8_t *out = dst + band * 8 * rowBytes;
    for (int64_t cb = 0; cb < colBlocks; ++cb)
      for (int64_t g = 0; g < 8 / k; ++g) {
        uint8_t *r[4];
        for (int64_t q = 0; q < k; ++q)
          r[q] = out + (g * k + q) * rowBytes + cb * 128 * s;
        deinterleaveRow(in + cb * tileBytes + g * 512, r, s, k);
      }
  });
}

namespace {

#if defined(__AVX2__)
/// 8x8 floats from rows r[0..7] at column c; column i leaves in out[i].
inline void transpose8x8(const float *const *r, int64_t c, __m256 *out) {
  __m256 a[8];
  for (int i = 0; i < 8; ++i)
    a[i] = _mm256_loadu_ps(r[i] + c);
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(a[2 * i], a[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(a[2 * i], a[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    out[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
    out[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
  }
}

/// 8x8 16-bit elements (SSE2 unpacks); column i leaves in out[i].
inline void transpose8x8x16(const uint8_t *const *r, int64_t c, __m128i *out) {
  __m128i a[8], t[8], u[8];
  for (int i = 0; i < 8; ++i)
    a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(r[i] + c * 2));
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
    t[2 * i + 1] = _mm_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm_unpacklo_epi32(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm_unpackhi_epi32(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm_unpacklo_epi32(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm_unpackhi_epi32(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = _mm_unpacklo_epi64(u[i], u[4 + i]);
    out[2 * i + 1] = _mm_unpackhi_epi64(u[i], u[4 + i]);
  }
}
#endif

} // namespace

void transpose(const uint8_t *src, uint8_t *dst, int64_t batch,
               int64_t batchStride, const std::vector<int64_t> &rowOffset,
               int64_t cols, int64_t s, tbb::task_arena &arena) {
  int64_t rows = static_cast<int64_t>(rowOffset.size());
  // Each step fills one 64-byte line of 8 destination rows: 16 source rows
  // of f32 or 32 of bf16.
  int64_t band = 64 / s, bands = rows / band;
  parallel(arena, batch * bands, [&](int64_t item) {
    int64_t b = item / bands, r0 = item % bands * band;
    const uint8_t *in = src + b * batchStride * s;
    uint8_t *out = dst + (b * cols * rows + r0) * s;
    const uint8_t *r[32];
    for (int64_t i = 0; i < band; ++i)
      r[i] = in + rowOffset[r0 + i] * s;
#if defined(__AVX2__)
    for (int64_t c = 0; c < cols; c += 8) {
      if (s == 4) {
        __m256 lo[8], hi[8];
        transpose8x8(reinterpret_cast<const float *const *>(r), c, lo);
        transpose8x8(reinterpret_cast<const float *const *>(r + 8), c, hi);
        for (int i = 0; i < 8; ++i) {
          float *o = reinterpret_cast<float *>(out + (c + i) * rows * s);
          _mm256_stream_ps(o, lo[i]);
          _mm256_stream_ps(o + 8, hi[i]);
        }
      } else {
        __m128i q[4][8];
        for (int g = 0; g < 4; ++g)
          transpose8x8x16(r + 8 * g, c, q[g]);
        for (int i = 0; i < 8; ++i) {
          uint8_t *o = out + (c + i) * rows * s;
          stream(o, _mm256_set_m128i(q[1][i], q[0][i]));
          stream(o + 32, _mm256_set_m128i(q[3][i], q[2][i]));
        }
      }
    }
#else
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t i = 0; i < band; ++i)
        std::memcpy(out + (c * rows + i) * s, r[i] + c * s, s);
#endif
  });
}

} // namespace plain
