//===- StreamingKernelsTest.cpp - Head and tail peeling of streaming stores
//===//
//
// The streaming kernels of every instruction set level write only whole
// 64-byte lines of their destination with non-temporal stores: copy and
// zero peel the head before the first line boundary and the tail after the
// last with ordinary stores, the interleave kernels and transpose bands
// stream only when their destination starts on a line (lib/Relayout/Isa.h).
// These tests call each kernel directly with destinations at every offset
// within a line and lengths around the line size (shorter than a line, a line,
// a line and a bit), and check that it writes exactly what memcpy, memset or
// the scalar loop would, and nothing outside its destination.
//
//===----------------------------------------------------------------------===//
#include "Isa.h"
#include "Kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tessel::relayout;

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint8_t kGuard = 0xA5;
/// Room on each side of a destination for guard bytes.
constexpr int64_t kMargin = 192;

/// A buffer whose byte `kMargin + offset` is `offset` bytes past a 64-byte
/// boundary, filled with guard bytes.
struct Destination {
  Bytes storage;
  uint8_t *base = nullptr;
  Destination(int64_t bytes, int64_t offset)
      : storage(bytes + 2 * kMargin + 128, kGuard) {
    auto address = reinterpret_cast<uintptr_t>(storage.data());
    base = storage.data() + (64 - address % 64) % 64 + kMargin + offset;
  }
  /// Bytes [lo, hi) relative to base.
  Bytes slice(int64_t lo, int64_t hi) const {
    return Bytes(base + lo, base + hi);
  }
};

Bytes randomBytes(std::mt19937 &rng, int64_t n) {
  Bytes b(n);
  for (uint8_t &x : b)
    x = static_cast<uint8_t>(rng());
  return b;
}

const std::vector<int64_t> &lengths() {
  static const std::vector<int64_t> values = {
      0,   1,   15,  16,  17,  47,  48,  63,  64,  65,  79,  111, 127, 128,
      129, 191, 192, 200, 255, 256, 257, 300, 383, 511, 512, 513, 1000};
  return values;
}

std::string where(IsaLevel level, int64_t offset, int64_t bytes,
                  bool streaming) {
  return std::string(isaName(level)) + ", destination 64-byte boundary + " +
         std::to_string(offset) + ", " + std::to_string(bytes) + " bytes, " +
         (streaming ? "streaming" : "ordinary") + " stores";
}

TEST(StreamingKernels, CopyAndZeroPeelHeadAndTail) {
  std::mt19937 rng(7);
  for (IsaLevel level : supportedLevels()) {
    const KernelSet &k = kernelSet(level);
    for (int64_t offset = 0; offset < 64; ++offset)
      for (int64_t bytes : lengths())
        for (bool streaming : {true, false}) {
          SCOPED_TRACE(where(level, offset, bytes, streaming));
          Bytes src = randomBytes(rng, bytes + 1);
          Destination copy(bytes, offset);
          k.copy(copy.base, src.data(), bytes, streaming);
          Destination zero(bytes, offset);
          k.zero(zero.base, bytes, streaming);
          if (streaming)
            storeFence();
          ASSERT_EQ(copy.slice(0, bytes), Bytes(src.begin(), src.end() - 1));
          ASSERT_EQ(zero.slice(0, bytes), Bytes(bytes, 0));
          for (const Destination *d : {&copy, &zero}) {
            ASSERT_EQ(d->slice(-kMargin, 0), Bytes(kMargin, kGuard));
            ASSERT_EQ(d->slice(bytes, bytes + kMargin), Bytes(kMargin, kGuard));
          }
        }
  }
}

/// (element bytes, rows) pairs the interleave kernels take.
const int64_t kInterleaves[][2] = {{2, 2}, {1, 4}};

TEST(StreamingKernels, InterleaveWritesExactlyItsElementsAtAnyOffset) {
  std::mt19937 rng(8);
  for (IsaLevel level : supportedLevels()) {
    const KernelSet &kernels = kernelSet(level);
    for (auto [s, k] : kInterleaves)
      for (int64_t offset = 0; offset < 64; ++offset)
        for (int64_t count : {0, 3, 15, 16, 40, 64, 65, 100, 128, 200, 257})
          for (bool streaming : {true, false}) {
            SCOPED_TRACE(where(level, offset, count * k * s, streaming) + ", " +
                         std::to_string(k) + " rows of " + std::to_string(s) +
                         "-byte elements");
            std::vector<Bytes> rows;
            std::vector<const uint8_t *> pointers;
            for (int64_t q = 0; q < k; ++q) {
              rows.push_back(randomBytes(rng, count * s));
              pointers.push_back(rows.back().data());
            }
            int64_t bytes = count * k * s;
            Destination out(bytes, offset);
            int64_t done = kernels.interleave(out.base, pointers.data(), count,
                                              s, k, streaming);
            ASSERT_GE(done, 0);
            ASSERT_LE(done, count);
            Bytes expected(done * k * s);
            for (int64_t j = 0; j < done; ++j)
              for (int64_t q = 0; q < k; ++q)
                std::memcpy(expected.data() + (j * k + q) * s,
                            rows[q].data() + j * s, s);
            ASSERT_EQ(out.slice(0, done * k * s), expected);
            ASSERT_EQ(out.slice(-kMargin, 0), Bytes(kMargin, kGuard));
            ASSERT_EQ(out.slice(done * k * s, bytes + kMargin),
                      Bytes(bytes - done * k * s + kMargin, kGuard));
          }
  }
}

TEST(StreamingKernels, DeinterleaveWritesExactlyItsElementsAtAnyOffsets) {
  std::mt19937 rng(9);
  for (IsaLevel level : supportedLevels()) {
    const KernelSet &kernels = kernelSet(level);
    for (auto [s, k] : kInterleaves)
      for (int64_t offset = 0; offset < 64; ++offset)
        // Rows at the same offset within a line, and rows at different
        // offsets (ordinary stores).
        for (int64_t skew : {0, 16, 1})
          for (int64_t count : {0, 3, 16, 40, 64, 65, 100, 128, 200, 257})
            for (bool streaming : {true, false}) {
              SCOPED_TRACE(where(level, offset, count * s, streaming) +
                           ", rows skewed by " + std::to_string(skew) + ", " +
                           std::to_string(k) + " rows of " + std::to_string(s) +
                           "-byte elements");
              Bytes in = randomBytes(rng, count * k * s);
              std::vector<Destination> rows;
              rows.reserve(k);
              std::vector<uint8_t *> pointers;
              for (int64_t q = 0; q < k; ++q)
                rows.emplace_back(count * s, (offset + q * skew) % 64);
              for (Destination &d : rows)
                pointers.push_back(d.base);
              int64_t done = kernels.deinterleave(in.data(), pointers.data(),
                                                  count, s, k, streaming);
              ASSERT_GE(done, 0);
              ASSERT_LE(done, count);
              for (int64_t q = 0; q < k; ++q) {
                Bytes expected(done * s);
                for (int64_t j = 0; j < done; ++j)
                  std::memcpy(expected.data() + j * s,
                              in.data() + (j * k + q) * s, s);
                ASSERT_EQ(rows[q].slice(0, done * s), expected);
                ASSERT_EQ(rows[q].slice(-kMargin, 0), Bytes(kMargin, kGuard));
                ASSERT_EQ(rows[q].slice(done * s, count * s + kMargin),
                          Bytes((count - done) * s + kMargin, kGuard));
              }
            }
  }
}

TEST(StreamingKernels, PickLaneWritesExactlyItsElementsAtAnyOffset) {
  std::mt19937 rng(10);
  int64_t levelsWithIt = 0;
  for (IsaLevel level : supportedLevels()) {
    const KernelSet &kernels = kernelSet(level);
    if (!kernels.pickLane)
      continue;
    ++levelsWithIt;
    for (auto [s, k] : kInterleaves)
      for (int64_t q = 0; q < k; ++q)
        for (int64_t offset = 0; offset < 64; ++offset)
          for (int64_t count : {0, 3, 16, 40, 64, 65, 100, 128, 200, 257})
            for (bool streaming : {true, false}) {
              SCOPED_TRACE(where(level, offset, count * s, streaming) +
                           ", lane " + std::to_string(q) + " of " +
                           std::to_string(k) + " rows of " + std::to_string(s) +
                           "-byte elements");
              Bytes in = randomBytes(rng, count * k * s);
              Destination out(count * s, offset);
              int64_t done = kernels.pickLane(in.data(), out.base, count, s, k,
                                              q, streaming);
              ASSERT_GE(done, 0);
              ASSERT_LE(done, count);
              // It must take all but a tail shorter than a vector.
              ASSERT_GT(done * s + kernels.vectorBytes, count * s);
              Bytes expected(done * s);
              for (int64_t j = 0; j < done; ++j)
                std::memcpy(expected.data() + j * s,
                            in.data() + (j * k + q) * s, s);
              ASSERT_EQ(out.slice(0, done * s), expected);
              ASSERT_EQ(out.slice(-kMargin, 0), Bytes(kMargin, kGuard));
              ASSERT_EQ(out.slice(done * s, count * s + kMargin),
                        Bytes((count - done) * s + kMargin, kGuard));
            }
  }
  // AVX2 has it; sse2 and AVX-512 untile through deinterleave.
  bool avx2 = false;
  for (IsaLevel level : supportedLevels())
    avx2 = avx2 || level == IsaLevel::Avx2;
  EXPECT_EQ(levelsWithIt, avx2 ? 1 : 0);
}

TEST(StreamingKernels, TransposeBandsOnUnalignedRows) {
  std::mt19937 rng(10);
  for (IsaLevel level : supportedLevels()) {
    const KernelSet &kernels = kernelSet(level);
    for (int log2Width = 0; log2Width < 4; ++log2Width) {
      int64_t width = int64_t(1) << log2Width, rowsIn = 64 / width;
      for (int64_t offset : {0, 1, 8, 16, 48})
        for (int64_t dstRow : {int64_t(64), int64_t(128), int64_t(80)})
          for (bool streaming : {true, false}) {
            SCOPED_TRACE(where(level, offset, 64, streaming) +
                         ", destination rows " + std::to_string(dstRow) +
                         " bytes apart, " + std::to_string(width) +
                         "-byte elements");
            int64_t columns = 32, srcRow = columns * width;
            Bytes in = randomBytes(rng, rowsIn * srcRow);
            Destination out(columns * dstRow, offset);
            int64_t done = kernels.transposeBand[log2Width](
                in.data(), srcRow, out.base, dstRow, columns, streaming);
            ASSERT_GE(done, 0);
            ASSERT_LE(done, columns);
            for (int64_t j = 0; j < done; ++j)
              for (int64_t r = 0; r < rowsIn; ++r)
                ASSERT_EQ(std::memcmp(out.base + j * dstRow + r * width,
                                      in.data() + r * srcRow + j * width,
                                      width),
                          0)
                    << "column " << j << ", row " << r;
            ASSERT_EQ(out.slice(-kMargin, 0), Bytes(kMargin, kGuard));
          }
    }
  }
}

// Bands of every width and level with column counts that are not a multiple
// of the kernel's step (16 columns for 1- and 2-byte elements at avx512,
// whose kernel gathers each vector from four source rows), source rows
// padded to odd lengths, by 4 KiB, or exactly 4 KiB apart (where the s8
// kernel at avx512 copies them into a tile first), and destination rows
// whose lines are not on a boundary: the leading columns a kernel reports
// are exactly the transpose, nothing else in the destination changes.
TEST(StreamingKernels, TransposeBandsOfAnyWidthAndRowLength) {
  std::mt19937 rng(11);
  for (IsaLevel level : supportedLevels()) {
    const KernelSet &kernels = kernelSet(level);
    for (int log2Width = 0; log2Width < 4; ++log2Width) {
      int64_t width = int64_t(1) << log2Width, rowsIn = 64 / width;
      for (int64_t columns : {0, 1, 15, 16, 17, 31, 33, 48, 70})
        for (int64_t pad : {0, 1, 7, 4096, -1})
          for (int64_t offset : {0, 24})
            for (bool streaming : {true, false}) {
              int64_t srcRow = pad < 0 ? 4096 : columns * width + pad,
                      dstRow = 64 * width + offset;
              SCOPED_TRACE(where(level, offset, 64, streaming) + ", " +
                           std::to_string(columns) + " columns, rows of " +
                           std::to_string(srcRow) + " bytes, " +
                           std::to_string(width) + "-byte elements");
              Bytes in = randomBytes(rng, rowsIn * srcRow + 16);
              Destination out(columns * dstRow, offset);
              int64_t done = kernels.transposeBand[log2Width](
                  in.data(), srcRow, out.base, dstRow, columns, streaming);
              ASSERT_GE(done, std::max<int64_t>(0, columns - 15));
              ASSERT_LE(done, columns);
              for (int64_t j = 0; j < columns; ++j) {
                for (int64_t r = 0; r < rowsIn && j < done; ++r)
                  ASSERT_EQ(std::memcmp(out.base + j * dstRow + r * width,
                                        in.data() + r * srcRow + j * width,
                                        width),
                            0)
                      << "column " << j << ", row " << r;
                int64_t from = j < done ? 64 : 0;
                ASSERT_EQ(out.slice(j * dstRow + from, (j + 1) * dstRow),
                          Bytes(dstRow - from, kGuard))
                    << "column " << j;
              }
              ASSERT_EQ(out.slice(-kMargin, 0), Bytes(kMargin, kGuard));
              ASSERT_EQ(out.slice(columns * dstRow, columns * dstRow + kMargin),
                        Bytes(kMargin, kGuard));
            }
    }
  }
}

// copyRows (a tile's rows to or from the matrix) writes each row exactly
// and nothing between the rows or around them, at every destination offset
// and for rows shorter than a line, a line and longer.
TEST(StreamingKernels, CopyRowsWritesEachRowAndNothingElse) {
  std::mt19937 rng(13);
  for (IsaLevel level : supportedLevels()) {
    const KernelSet &k = kernelSet(level);
    ASSERT_NE(k.copyRows, nullptr);
    for (int64_t offset : {0, 1, 16, 48})
      for (int64_t rowBytes : {0, 1, 63, 64, 65, 128, 200, 512})
        for (int64_t gap : {0, 3, 64})
          for (bool streaming : {true, false}) {
            SCOPED_TRACE(where(level, offset, rowBytes, streaming) + ", rows " +
                         std::to_string(gap) + " bytes apart");
            int64_t rows = 5, dstStride = rowBytes + gap,
                    srcStride = rowBytes + 7;
            Bytes src = randomBytes(rng, rows * srcStride);
            Destination out(rows * dstStride, offset);
            k.copyRows(out.base, dstStride, src.data(), srcStride, rowBytes,
                       rows, streaming);
            for (int64_t r = 0; r < rows; ++r) {
              ASSERT_EQ(out.slice(r * dstStride, r * dstStride + rowBytes),
                        Bytes(src.begin() + r * srcStride,
                              src.begin() + r * srcStride + rowBytes))
                  << "row " << r;
              ASSERT_EQ(
                  out.slice(r * dstStride + rowBytes, (r + 1) * dstStride),
                  Bytes(gap, kGuard))
                  << "after row " << r;
            }
            ASSERT_EQ(out.slice(-kMargin, 0), Bytes(kMargin, kGuard));
            ASSERT_EQ(out.slice(rows * dstStride, rows * dstStride + kMargin),
                      Bytes(kMargin, kGuard));
          }
  }
}

// pairNibbles (the first step of a 4-bit transpose) at every level and
// length, against the formula, writing nothing past `bytes`.
TEST(StreamingKernels, PairNibblesCombinesTwoRows) {
  std::mt19937 rng(15);
  for (IsaLevel level : supportedLevels()) {
    const KernelSet &k = kernelSet(level);
    ASSERT_NE(k.pairNibbles, nullptr);
    for (int64_t bytes : lengths()) {
      SCOPED_TRACE(std::string(isaName(level)) + ", " + std::to_string(bytes) +
                   " bytes");
      Bytes a = randomBytes(rng, bytes), b = randomBytes(rng, bytes);
      Destination low(bytes, 0), high(bytes, 3);
      k.pairNibbles(a.data(), b.data(), low.base, high.base, bytes);
      for (int64_t i = 0; i < bytes; ++i) {
        ASSERT_EQ(low.base[i], uint8_t((a[i] & 15) | (b[i] << 4))) << i;
        ASSERT_EQ(high.base[i], uint8_t((a[i] >> 4) | (b[i] & 0xF0))) << i;
      }
      ASSERT_EQ(low.slice(bytes, bytes + kMargin), Bytes(kMargin, kGuard));
      ASSERT_EQ(high.slice(bytes, bytes + kMargin), Bytes(kMargin, kGuard));
    }
  }
}

// The listed-rows band (the tiled transpose's): source rows at unrelated
// places in a buffer, destination lines shuffled, each on or off a line
// boundary; the leading columns a kernel reports are exactly the
// transpose, and nothing else changes.
TEST(StreamingKernels, TransposeRowsFromListedRowsAndLines) {
  std::mt19937 rng(12);
  for (IsaLevel level : supportedLevels()) {
    const KernelSet &kernels = kernelSet(level);
    for (int log2Width = 0; log2Width < 4; ++log2Width) {
      ASSERT_NE(kernels.transposeRows[log2Width], nullptr);
      int64_t width = int64_t(1) << log2Width, rowsIn = 64 / width;
      for (int64_t columns : {0, 1, 15, 16, 17, 33, 64, 130})
        for (int64_t offset : {0, 16, 8})
          for (bool streaming : {true, false}) {
            SCOPED_TRACE(where(level, offset, 64, streaming) + ", " +
                         std::to_string(columns) + " columns, " +
                         std::to_string(width) + "-byte elements");
            int64_t rowBytes = columns * width;
            // Row r at a random slot of a buffer of 2 * rowsIn rows.
            Bytes in = randomBytes(rng, 2 * rowsIn * (rowBytes + 8) + 16);
            std::vector<int64_t> slots(2 * rowsIn);
            for (size_t i = 0; i < slots.size(); ++i)
              slots[i] = static_cast<int64_t>(i);
            std::shuffle(slots.begin(), slots.end(), rng);
            std::vector<const uint8_t *> rows(rowsIn);
            for (int64_t r = 0; r < rowsIn; ++r)
              rows[r] = in.data() + slots[r] * (rowBytes + 8) + rng() % 8;
            // Line c at slot order[c] of the destination, 128 bytes apart.
            int64_t pitch = 128;
            Destination out(std::max<int64_t>(1, columns) * pitch, offset);
            std::vector<int64_t> order(columns);
            for (int64_t c = 0; c < columns; ++c)
              order[c] = c;
            std::shuffle(order.begin(), order.end(), rng);
            std::vector<uint8_t *> lines(columns);
            for (int64_t c = 0; c < columns; ++c)
              lines[c] = out.base + order[c] * pitch;
            int64_t done = kernels.transposeRows[log2Width](
                rows.data(), lines.data(), columns, streaming);
            ASSERT_GE(done, std::max<int64_t>(0, columns - 15));
            ASSERT_LE(done, columns);
            for (int64_t c = 0; c < columns; ++c) {
              for (int64_t r = 0; r < rowsIn && c < done; ++r)
                ASSERT_EQ(std::memcmp(lines[c] + r * width, rows[r] + c * width,
                                      width),
                          0)
                    << "column " << c << ", row " << r;
              int64_t from = c < done ? 64 : 0;
              ASSERT_EQ(
                  out.slice(order[c] * pitch + from, (order[c] + 1) * pitch),
                  Bytes(pitch - from, kGuard))
                  << "column " << c;
            }
            ASSERT_EQ(out.slice(-kMargin, 0), Bytes(kMargin, kGuard));
            ASSERT_EQ(out.slice(columns * pitch, columns * pitch + kMargin),
                      Bytes(kMargin, kGuard));
          }
    }
  }
}

/// The L3 a relayout counts on is what the CPU reports up to 32 MiB: a
/// server part's 105 or 320 MiB is shared by dozens of cores, and outputs
/// under half of it written with ordinary stores ran 2-3x slower on such a
/// machine (Isa.h).
TEST(CacheSizes, UsableL3IsAtMost32MiB) {
  CacheSizes caches;
  caches.l3 = int64_t(320) << 20;
  EXPECT_EQ(caches.usableL3(), int64_t(32) << 20);
  caches.l3 = int64_t(32) << 20;
  EXPECT_EQ(caches.usableL3(), int64_t(32) << 20);
  caches.l3 = int64_t(8) << 20;
  EXPECT_EQ(caches.usableL3(), int64_t(8) << 20);
  EXPECT_LE(hostCaches().usableL3(), int64_t(32) << 20);
  EXPECT_LE(hostCaches().usableL3(), hostCaches().l3);
}

} // namespace
