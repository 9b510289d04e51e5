//===- Memory.cpp - Threads, streaming copies and fences for relayouts ----===//
#include "Kernels.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <map>
#include <memory>
#include <mutex>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tessel::relayout {

int resolveThreads(int requested) {
  int cores = tbb::this_task_arena::max_concurrency();
  // More threads than cores would only oversubscribe them.
  if (requested <= 0 || requested > cores)
    return std::max(1, cores);
  return requested;
}

/// One arena per thread count, created on first use and kept: building an
/// arena per call costs far more than a small relayout.
static tbb::task_arena &arenaFor(int threads) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<tbb::task_arena>> arenas;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<tbb::task_arena> &arena = arenas[threads];
  if (!arena) {
    arena = std::make_unique<tbb::task_arena>(threads);
    arena->initialize();
  }
  return *arena;
}

void parallelFor(int threads, int64_t count, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn) {
  if (count <= 0)
    return;
  grain = std::max<int64_t>(1, grain);
  if (threads <= 1 || count <= grain) {
    fn(0, count);
    return;
  }
  arenaFor(threads).execute([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, count, grain),
                      [&](const tbb::blocked_range<int64_t> &range) {
                        fn(range.begin(), range.end());
                      });
  });
}

void copyBytes(uint8_t *dst, const uint8_t *src, int64_t bytes,
               bool streaming) {
#if defined(__SSE2__)
  // Only whole, aligned 64-byte lines are streamed; the bytes before the
  // first line boundary and after the last go through ordinary stores.
  // Streaming a line in 16-byte pieces that straddle two lines (a
  // destination 16 bytes past a boundary, as np.empty and std::string give)
  // leaves partial lines in the write-combining buffers.
  int64_t head = streamingHead(dst);
  if (streaming && bytes >= head + kLineBytes) {
    if (head)
      std::memcpy(dst, src, head);
    int64_t i = head;
    for (; i + kLineBytes <= bytes; i += kLineBytes) {
      __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
      __m128i b =
          _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 16));
      __m128i c =
          _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 32));
      __m128i d =
          _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 48), d);
    }
    if (i < bytes)
      std::memcpy(dst + i, src + i, bytes - i);
    return;
  }
#endif
  (void)streaming;
  std::memcpy(dst, src, bytes);
}

void copyRowsBytes(uint8_t *dst, int64_t dstStride, const uint8_t *src,
                   int64_t srcStride, int64_t rowBytes, int64_t rows,
                   bool streaming) {
  for (int64_t r = 0; r < rows; ++r)
    copyBytes(dst + r * dstStride, src + r * srcStride, rowBytes, streaming);
}

void zeroBytes(uint8_t *dst, int64_t bytes, bool streaming) {
#if defined(__SSE2__)
  int64_t head = streamingHead(dst);
  if (streaming && bytes >= head + kLineBytes) {
    if (head)
      std::memset(dst, 0, head);
    int64_t i = head;
    __m128i zero = _mm_setzero_si128();
    for (; i + kLineBytes <= bytes; i += kLineBytes)
      for (int m = 0; m < 4; ++m)
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 16 * m), zero);
    if (i < bytes)
      std::memset(dst + i, 0, bytes - i);
    return;
  }
#endif
  (void)streaming;
  if (bytes > 0)
    std::memset(dst, 0, bytes);
}

void storeFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

BitConversion BitConversion::get(const TiledLayout &from,
                                 const TiledLayout &to) {
  BitConversion result;
  result.srcBits = static_cast<int>(from.elementBits());
  result.dstBits = static_cast<int>(to.elementBits());
  PrimitiveType type = from.shape().elementType;
  result.naturalBits = bitWidth(type);
  result.signExtend = isSignedInteger(type);
  return result;
}

} // namespace tessel::relayout
