//===- LocalMemoryTest.cpp - Moving tensors in and out of local memory ----===//
#include "tessel/Npu/LocalMemory.h"
#include "tessel/Relayout/Relayout.h"

#include "RandomTensors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using namespace tessel;
using tessel::npu_testing::uniform;

namespace {

LocalTensor make(const TensorDesc &d, NpuConfig config = NpuConfig::seed()) {
  Expected<LocalTensor> t = LocalTensor::get(config, d);
  EXPECT_TRUE(t) << t.error().message;
  return std::move(*t);
}

TensorDesc seedTensor(NpuLayout layout, int64_t address) {
  TensorDesc d;
  d.shape = {2, 3, 4, 5};
  d.layout = layout;
  d.address = address;
  return d;
}

std::vector<uint8_t> iota(int64_t n) {
  std::vector<uint8_t> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>(i * 7 + 3);
  return v;
}

TEST(LocalMemory, SeedAlignedTensorAtNpu2) {
  LocalMemory mem = *LocalMemory::create(NpuConfig::seed());
  LocalTensor t = make(seedTensor(NpuLayout::Aligned, 2048));
  std::vector<float> x(120);
  for (int i = 0; i < 120; ++i)
    x[i] = static_cast<float>(i);
  Dims4 strides = continuousStrides(t.shape());
  Expected<int64_t> written =
      mem.store(t, reinterpret_cast<const uint8_t *>(x.data()), 480, strides);
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(*written, 480);
  // Element (1,2,3,4) = 60 + 40 + 15 + 4 = 119 is on NPU 0 at byte 460.
  float v;
  std::memcpy(&v, mem.bytes().data() + 0 * 1024 + 460, 4);
  EXPECT_EQ(v, 119.0f);
  std::vector<float> y(120, -1);
  ASSERT_TRUE(mem.load(t, reinterpret_cast<uint8_t *>(y.data()), 480, strides));
  EXPECT_EQ(x, y);
}

TEST(LocalMemory, PackedDummiesAreZero) {
  NpuConfig config = NpuConfig::seed();
  LocalMemory mem = *LocalMemory::create(config);
  mem.fill(0xee);
  TensorDesc d;
  d.shape = {6, 5, 4, 5};
  d.type = PrimitiveType::S8;
  d.mode = StorageMode::N4;
  LocalTensor t = make(d);
  std::vector<uint8_t> x = iota(600);
  ASSERT_TRUE(mem.store(t, x.data(), 600, continuousStrides(d.shape)));
  // int8x4 element (1,0,0,0) at NPU 0 byte 256: n = 4, 5, then two dummies.
  EXPECT_EQ(mem.at({0, 256}), x[4 * 100]);
  EXPECT_EQ(mem.at({0, 257}), x[5 * 100]);
  EXPECT_EQ(mem.at({0, 258}), 0);
  EXPECT_EQ(mem.at({0, 259}), 0);
  // Feature padding is left alone.
  EXPECT_EQ(mem.at({0, 4 * 20}), 0xee);
}

TEST(LocalMemory, ChecksComeBeforeAnyWrite) {
  LocalMemory mem = *LocalMemory::create(NpuConfig::seed());
  mem.fill(0x11);
  std::vector<uint8_t> x = iota(480);
  Dims4 strides{60, 20, 5, 1};
  auto untouched = [&] {
    for (uint8_t b : mem.bytes())
      if (b != 0x11)
        return false;
    return true;
  };
  Expected<int64_t> misaligned = mem.store(
      make(seedTensor(NpuLayout::Aligned, 1472)), x.data(), 480, strides, "x");
  ASSERT_FALSE(misaligned);
  EXPECT_EQ(misaligned.error().message,
            "x: address 1472 (npu 1 offset 448) is not aligned for the "
            "aligned layout: the offset must be a multiple of 128 bytes, the "
            "nearest are 384 and 512");
  Expected<int64_t> tooBig = mem.store(
      make(seedTensor(NpuLayout::Aligned, 896)), x.data(), 480, strides, "x");
  ASSERT_FALSE(tooBig);
  EXPECT_EQ(tooBig.error().message,
            "x: tensor needs 256 bytes per npu from offset 896, 128 bytes "
            "past the end of the 1024-byte local memory of npu 0");
  Expected<int64_t> small = mem.store(make(seedTensor(NpuLayout::Aligned, 0)),
                                      x.data(), 479, strides, "x");
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().message, "system buffer of 479 bytes is too small "
                                   "for the strides, expected at least 480 "
                                   "bytes");
  EXPECT_TRUE(untouched());
  EXPECT_TRUE(mem.placed().empty());
  // a occupies bytes 0..255 of NPUs 0-2; b would reuse NPU 2's bytes.
  ASSERT_TRUE(mem.store(make(seedTensor(NpuLayout::Aligned, 0)), x.data(), 480,
                        strides, "a"));
  std::vector<uint8_t> before = mem.bytes();
  Expected<int64_t> overlap =
      mem.store(make(seedTensor(NpuLayout::Compact, 2048 + 200)), x.data(), 480,
                strides, "b");
  ASSERT_FALSE(overlap);
  EXPECT_EQ(overlap.error().message,
            "b overlaps a on npu 2: both use bytes 200..255");
  EXPECT_EQ(mem.bytes(), before);
  // Storing a again at the same place is fine; b fits right after a.
  EXPECT_TRUE(mem.store(make(seedTensor(NpuLayout::Aligned, 0)), x.data(), 480,
                        strides, "a"));
  EXPECT_TRUE(mem.store(make(seedTensor(NpuLayout::Compact, 256)), x.data(),
                        480, strides, "b"));
  // Starting at NPU 3, b's channels wrap onto NPUs 0 and 1, where a is.
  Expected<int64_t> wrapped = mem.store(
      make(seedTensor(NpuLayout::Compact, 3072)), x.data(), 480, strides, "c");
  ASSERT_FALSE(wrapped);
  EXPECT_EQ(wrapped.error().message,
            "c overlaps a on npu 0: both use bytes 0..255");
}

TEST(LocalMemory, DestinationsMustKeepElementsApart) {
  LocalMemory mem = *LocalMemory::create(NpuConfig::seed());
  LocalTensor t = make(seedTensor(NpuLayout::Compact, 0));
  std::vector<uint8_t> x = iota(480), y(480);
  ASSERT_TRUE(mem.store(t, x.data(), 480, {60, 20, 5, 1}));
  Expected<int64_t> alias = mem.load(t, y.data(), 480, {60, 20, 4, 1});
  ASSERT_FALSE(alias);
  EXPECT_EQ(alias.error().message,
            "system destination: strides (60,20,4,1) put elements (0,0,0,4) "
            "and (0,0,1,0) at the same offset 4");
  // Reading a broadcast source (stride 0) is fine.
  std::vector<uint8_t> plane = iota(80);
  LocalMemory other = *LocalMemory::create(NpuConfig::seed());
  EXPECT_TRUE(other.store(t, plane.data(), 80, {0, 0, 5, 1}));
  other.releaseAll();
  // A local tensor whose strides alias cannot be stored.
  TensorDesc d = seedTensor(NpuLayout::Strided, 0);
  d.strides = {20, 0, 4, 1};
  Expected<int64_t> local =
      other.store(make(d), x.data(), 480, {60, 20, 5, 1}, "s");
  ASSERT_FALSE(local);
  EXPECT_EQ(local.error().message,
            "s: strides (20,0,4,1) put stored elements (0,0,0,4) and "
            "(0,0,1,0) at the same place, npu 0 byte 16");
}

TEST(LocalMemory, RefusesHugeMemories) {
  EXPECT_EQ(LocalMemory::create(*NpuConfig::get(1024, 1 << 30)).error().message,
            "simulating 1048576 MiB of local memory is more than the 1024 MiB "
            "tessel allows");
  EXPECT_TRUE(LocalMemory::create(*NpuConfig::preset("bm1684")));
}

/// Every byte of `mem` against the tensor's byte map: elements hold the
/// source's bytes, dummies are zero, everything else still `fill`.
void expectStoredBytes(const LocalMemory &mem, const LocalTensor &t,
                       const std::vector<uint8_t> &src, const Dims4 &in,
                       uint8_t fill) {
  const NpuConfig &config = t.config();
  int64_t eb = t.elementBytes();
  for (int64_t npu = 0; npu < config.npus(); ++npu)
    for (int64_t off = 0; off < config.bytesPerNpu(); ++off) {
      ByteInfo info = t.classify({npu, off});
      uint8_t want = fill;
      if (info.kind == ByteKind::Element) {
        const Dims4 &i = info.index;
        want = src[eb * (i[0] * in[0] + i[1] * in[1] + i[2] * in[2] +
                         i[3] * in[3]) +
                   info.byte];
      } else if (info.kind == ByteKind::Dummy) {
        want = 0;
      }
      ASSERT_EQ(mem.at({npu, off}), want)
          << "npu " << npu << " byte " << off << " " << byteKindName(info.kind);
    }
}

/// A packed tensor of the tests below and the gap between the rows of w of
/// its system buffer.
struct PackedCase {
  Dims4 shape;
  PrimitiveType type;
  StorageMode mode;
  NpuLayout layout;
  int64_t systemRowGap; ///< elements between system rows of w
};

/// Whole h x w planes (one call per channel), rows with gaps on either side
/// (one call per row), widths below and above a vector, partial last groups.
const PackedCase kPackedCases[] = {
    {{8, 3, 5, 70}, PrimitiveType::S8, StorageMode::N4, NpuLayout::Aligned, 0},
    {{6, 5, 4, 5}, PrimitiveType::U8, StorageMode::N4, NpuLayout::Compact, 0},
    {{4, 2, 3, 130}, PrimitiveType::S8, StorageMode::N4, NpuLayout::Aligned, 3},
    {{9, 4, 2, 67}, PrimitiveType::S8, StorageMode::N4, NpuLayout::Strided, 0},
    {{4, 3, 6, 40}, PrimitiveType::S16, StorageMode::N2, NpuLayout::Aligned, 0},
    {{5, 2, 3, 33}, PrimitiveType::S16, StorageMode::N2, NpuLayout::Compact, 1},
};

LocalTensor packedTensor(const PackedCase &c, const NpuConfig &config) {
  TensorDesc d;
  d.shape = c.shape;
  d.type = c.type;
  d.mode = c.mode;
  d.layout = c.layout;
  if (c.layout == NpuLayout::Strided) {
    // Local rows of w padded to w + 5 words: one call per row.
    int64_t w = c.shape[3] + 5;
    d.strides = {c.shape[1] * c.shape[2] * w, c.shape[2] * w, w, 1};
  }
  return make(d, config);
}

Dims4 packedSystemStrides(const PackedCase &c) {
  if (!c.systemRowGap)
    return continuousStrides(c.shape);
  int64_t w = c.shape[3] + c.systemRowGap;
  return {c.shape[1] * c.shape[2] * w, c.shape[2] * w, w, 1};
}

/// Runs fn(isa) with TESSEL_ISA set to each level the CPU has, then to a
/// name that is no level ("sse3"), and restores the variable.
template <typename Fn> void atEveryLevelThenABadOne(Fn fn) {
  const char *before = std::getenv("TESSEL_ISA");
  std::string saved = before ? before : "";
  std::vector<std::string> levels = relayoutIsaLevels();
  levels.push_back("sse3");
  for (const std::string &isa : levels) {
    ::setenv("TESSEL_ISA", isa.c_str(), 1);
    fn(isa);
  }
  if (before)
    ::setenv("TESSEL_ISA", saved.c_str(), 1);
  else
    ::unsetenv("TESSEL_ISA");
}

constexpr const char *kBadLevel =
    "TESSEL_ISA: unknown instruction set 'sse3', expected sse2, avx2 or avx512";

// The packed stores (4N int8, 2N int16 with w contiguous) go through the
// relayout library's interleave kernels of the best level the CPU has:
// every level, against the byte map, with the cases above (dummies of a
// partial last group included). A level that is not one fails the store.
TEST(LocalMemory, PackedStoresAgreeWithTheByteMapAtEveryLevel) {
  NpuConfig config = *NpuConfig::get(3, 16384, 1, 128, true);
  std::mt19937_64 rng(5);
  atEveryLevelThenABadOne([&](const std::string &isa) {
    for (const PackedCase &c : kPackedCases) {
      LocalTensor t = packedTensor(c, config);
      SCOPED_TRACE(isa + ", case " + std::to_string(&c - kPackedCases));
      Dims4 in = packedSystemStrides(c);
      int64_t eb = t.elementBytes();
      int64_t bytes = *systemBufferBytes(c.shape, in, eb);
      std::vector<uint8_t> src(bytes);
      for (uint8_t &b : src)
        b = static_cast<uint8_t>(uniform(rng, 0, 255));
      LocalMemory mem = *LocalMemory::create(config);
      mem.fill(0xa5);
      Expected<int64_t> written = mem.store(t, src.data(), bytes, in);
      if (isa == "sse3") {
        ASSERT_FALSE(written);
        EXPECT_EQ(written.error().message, kBadLevel);
        continue;
      }
      ASSERT_TRUE(written) << written.error().message;
      expectStoredBytes(mem, t, src, in, 0xa5);
    }
  });
}

// The packed loads deinterleave through the same kernels: every level,
// against the byte map (each element of the destination holds the bytes
// the map places it at), into destinations with and without gaps between
// rows (one call per plane or per row), with a partial last group that
// takes the general runs; bytes between destination rows stay untouched.
// A level that is not one fails the load.
TEST(LocalMemory, PackedLoadsAgreeWithTheByteMapAtEveryLevel) {
  NpuConfig config = *NpuConfig::get(3, 16384, 1, 128, true);
  std::mt19937_64 rng(6);
  // Random elements in local memory (stored through the general runs'
  // continuous strides, then read back against the byte map, not `src`).
  std::vector<LocalMemory> memories;
  for (const PackedCase &c : kPackedCases) {
    LocalTensor t = packedTensor(c, config);
    memories.push_back(*LocalMemory::create(config));
    int64_t srcBytes = *systemBufferBytes(c.shape, continuousStrides(c.shape),
                                          t.elementBytes());
    std::vector<uint8_t> src(srcBytes);
    for (uint8_t &b : src)
      b = static_cast<uint8_t>(uniform(rng, 0, 255));
    ASSERT_TRUE(memories.back().store(t, src.data(), srcBytes,
                                      continuousStrides(c.shape)));
  }
  atEveryLevelThenABadOne([&](const std::string &isa) {
    for (const PackedCase &c : kPackedCases) {
      LocalTensor t = packedTensor(c, config);
      const LocalMemory &mem = memories[&c - kPackedCases];
      SCOPED_TRACE(isa + ", case " + std::to_string(&c - kPackedCases));
      Dims4 out = packedSystemStrides(c);
      int64_t eb = t.elementBytes();
      int64_t bytes = *systemBufferBytes(c.shape, out, eb);
      std::vector<uint8_t> dst(bytes, 0xee);
      Expected<int64_t> read = mem.load(t, dst.data(), bytes, out);
      if (isa == "sse3") {
        ASSERT_FALSE(read);
        EXPECT_EQ(read.error().message, kBadLevel);
        continue;
      }
      ASSERT_TRUE(read) << read.error().message;
      EXPECT_EQ(*read, c.shape[0] * c.shape[1] * c.shape[2] * c.shape[3] * eb);
      std::vector<bool> element(bytes, false);
      for (int64_t npu = 0; npu < config.npus(); ++npu)
        for (int64_t off = 0; off < config.bytesPerNpu(); ++off) {
          ByteInfo info = t.classify({npu, off});
          if (info.kind != ByteKind::Element)
            continue;
          const Dims4 &i = info.index;
          int64_t at = eb * (i[0] * out[0] + i[1] * out[1] + i[2] * out[2] +
                             i[3] * out[3]) +
                       info.byte;
          element[at] = true;
          ASSERT_EQ(dst[at], mem.at({npu, off}))
              << "element (" << i[0] << "," << i[1] << "," << i[2] << ","
              << i[3] << ") byte " << info.byte;
        }
      for (int64_t b = 0; b < bytes; ++b) {
        if (!element[b]) {
          ASSERT_EQ(dst[b], 0xee) << "destination byte " << b;
        }
      }
    }
  });
}

/// Random system strides over `shape`: a random dim order with gaps.
Dims4 randomSystemStrides(std::mt19937_64 &rng, const Dims4 &shape) {
  if (uniform(rng, 0, 2) == 0)
    return continuousStrides(shape);
  return npu_testing::randomNestedStrides(rng, shape);
}

TEST(LocalMemoryProperty, RoundTripsAndTouchesOnlyTheTensorsBytes) {
  std::mt19937_64 rng(99);
  int checked = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    NpuConfig config = npu_testing::randomConfig(rng);
    std::optional<LocalTensor> t = npu_testing::randomPlacedTensor(rng, config);
    if (!t)
      continue;
    int64_t eb = t->elementBytes();
    Dims4 in = randomSystemStrides(rng, t->shape());
    int64_t inBytes = *systemBufferBytes(t->shape(), in, eb);
    std::vector<uint8_t> src(inBytes);
    for (uint8_t &b : src)
      b = static_cast<uint8_t>(uniform(rng, 0, 255));
    LocalMemory mem = *LocalMemory::create(config);
    mem.fill(0xa5);
    Expected<int64_t> written = mem.store(*t, src.data(), inBytes, in);
    ASSERT_TRUE(written) << written.error().message;
    // Every byte of local memory: elements hold the source, dummies are
    // zero, everything else is untouched.
    for (int64_t npu = 0; npu < config.npus(); ++npu)
      for (int64_t off = 0; off < config.bytesPerNpu(); ++off) {
        ByteInfo info = t->classify({npu, off});
        uint8_t want = 0xa5;
        if (info.kind == ByteKind::Element) {
          const Dims4 &i = info.index;
          want = src[eb * (i[0] * in[0] + i[1] * in[1] + i[2] * in[2] +
                           i[3] * in[3]) +
                     info.byte];
        } else if (info.kind == ByteKind::Dummy) {
          want = 0;
        }
        ASSERT_EQ(mem.at({npu, off}), want) << "npu " << npu << " byte " << off
                                            << " " << byteKindName(info.kind);
      }
    // Local -> system at other strides, then system -> fresh local memory.
    Dims4 out = randomSystemStrides(rng, t->shape());
    int64_t outBytes = *systemBufferBytes(t->shape(), out, eb);
    std::vector<uint8_t> dst(outBytes, 0);
    ASSERT_TRUE(mem.load(*t, dst.data(), outBytes, out));
    LocalMemory again = *LocalMemory::create(config);
    again.fill(0xa5);
    ASSERT_TRUE(again.store(*t, dst.data(), outBytes, out));
    EXPECT_EQ(again.bytes(), mem.bytes());
    ++checked;
  }
  EXPECT_GT(checked, 1500);
}

} // namespace
