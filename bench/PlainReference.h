//===- PlainReference.h - A short hand-written relayout, the bench's peer -===//
//
// What a user could write in an afternoon instead of using tessel: cache-
// blocked loops, 8x8 register transposes, streaming stores, compiled for
// the host CPU (-march=native, PlainReference.cpp). relayout-bench runs it
// next to tessel as the "plain" column, so that every run shows whether
// the library beats a short loop on the machine at hand. Only the cases of
// the benchmark are covered; it checks nothing.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_PLAINREFERENCE_H
#define TESSEL_BENCH_PLAINREFERENCE_H

#include <tbb/task_arena.h>

#include <cstdint>
#include <vector>

namespace plain {

/// The instruction set the reference was compiled for ("avx512", "avx2",
/// "sse2").
const char *isa();

/// Row-major rows x cols <-> T(8,128)(k,1) (k = 1, 2 or 4; element size 4,
/// 2 or 1 bytes). @pre rows % 8 == 0, cols % 128 == 0.
void tile(const uint8_t *src, uint8_t *dst, int64_t rows, int64_t cols,
          int64_t elementBytes, int64_t k, tbb::task_arena &arena);
void untile(const uint8_t *src, uint8_t *dst, int64_t rows, int64_t cols,
            int64_t elementBytes, int64_t k, tbb::task_arena &arena);

/// dst[b][c][r] = src[b * batchStride + rowOffset[r] + c] for b < batch,
/// r < rowOffset.size(), c < cols (a batch of 2-D transposes whose source
/// rows may be strided); element size 4 or 2 bytes. @pre the row count and
/// cols are multiples of 16.
void transpose(const uint8_t *src, uint8_t *dst, int64_t batch,
               int64_t batchStride, const std::vector<int64_t> &rowOffset,
               int64_t cols, int64_t elementBytes, tbb::task_arena &arena);

} // namespace plain

#endif // TESSEL_BENCH_PLAINREFERENCE_H
