//===- Simd.h - SSE2 building blocks of the relayout kernels (internal) ---===//
//
// Interleaving rows, deinterleaving them and transposing small blocks are all
// the same operation on the bits of an element's position: with N vectors
// of L lanes, a round of unpacks that pairs vector j with vector j + N/2
// sends position bits (v, l) to rotl((v, l), 1). A KxK transpose is log2(K)
// rounds; interleaving k rows of a tile is log2(k) rounds; deinterleaving
// is the rounds that complete the rotation.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_RELAYOUT_SIMD_H
#define TESSEL_LIB_RELAYOUT_SIMD_H

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>

namespace tessel::relayout::simd {

inline __m128i load(const uint8_t *p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
}

/// Stores 16 bytes, non-temporally when asked and p is 16-byte aligned.
inline void store(uint8_t *p, __m128i v, bool streaming) {
  if (streaming && (reinterpret_cast<uintptr_t>(p) & 15) == 0)
    _mm_stream_si128(reinterpret_cast<__m128i *>(p), v);
  else
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), v);
}

/// Stores 16 bytes to p, non-temporally when `stream` (p must then be
/// 16-byte aligned; callers check the base once, outside their loops).
inline void storeTo(uint8_t *p, __m128i v, bool stream) {
  if (stream)
    _mm_stream_si128(reinterpret_cast<__m128i *>(p), v);
  else
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), v);
}

inline bool aligned16(const uint8_t *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
}

template <int Width> inline __m128i unpackLo(__m128i a, __m128i b) {
  if constexpr (Width == 1)
    return _mm_unpacklo_epi8(a, b);
  else if constexpr (Width == 2)
    return _mm_unpacklo_epi16(a, b);
  else if constexpr (Width == 4)
    return _mm_unpacklo_epi32(a, b);
  else
    return _mm_unpacklo_epi64(a, b);
}

template <int Width> inline __m128i unpackHi(__m128i a, __m128i b) {
  if constexpr (Width == 1)
    return _mm_unpackhi_epi8(a, b);
  else if constexpr (Width == 2)
    return _mm_unpackhi_epi16(a, b);
  else if constexpr (Width == 4)
    return _mm_unpackhi_epi32(a, b);
  else
    return _mm_unpackhi_epi64(a, b);
}

/// One round over N vectors of Width-byte lanes (see the file comment).
template <int Width, int N> inline void round(__m128i (&v)[N]) {
  __m128i next[N];
  for (int j = 0; j < N / 2; ++j) {
    next[2 * j] = unpackLo<Width>(v[j], v[j + N / 2]);
    next[2 * j + 1] = unpackHi<Width>(v[j], v[j + N / 2]);
  }
  for (int j = 0; j < N; ++j)
    v[j] = next[j];
}

template <int Width, int N, int Count> inline void rounds(__m128i (&v)[N]) {
  if constexpr (Count > 0) {
    round<Width, N>(v);
    rounds<Width, N, Count - 1>(v);
  }
}

} // namespace tessel::relayout::simd

#endif // __SSE2__
#endif // TESSEL_LIB_RELAYOUT_SIMD_H
