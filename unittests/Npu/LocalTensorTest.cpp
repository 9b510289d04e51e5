//===- LocalTensorTest.cpp - Strides, placement and the seed's numbers ----===//
#include "tessel/Npu/LocalTensor.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace tessel;

namespace {

TensorDesc desc(Dims4 shape, PrimitiveType type, NpuLayout layout,
                int64_t address = 0, StorageMode mode = StorageMode::Normal) {
  TensorDesc d;
  d.shape = shape;
  d.type = type;
  d.layout = layout;
  d.address = address;
  d.mode = mode;
  return d;
}

TensorDesc matrix(int64_t rows, int64_t cols, int64_t w, int64_t address = 0) {
  TensorDesc d =
      desc({rows, cols, 1, 1}, PrimitiveType::F32, NpuLayout::Matrix, address);
  d.matrixW = w;
  return d;
}

LocalTensor make(const TensorDesc &d, NpuConfig config = NpuConfig::seed()) {
  Expected<LocalTensor> t = LocalTensor::get(config, d);
  EXPECT_TRUE(t) << t.error().message;
  return std::move(*t);
}

std::string errorOf(const TensorDesc &d, NpuConfig config = NpuConfig::seed()) {
  Expected<LocalTensor> t = LocalTensor::get(config, d);
  return t ? "ok" : t.error().message;
}

constexpr PrimitiveType F32 = PrimitiveType::F32;

TEST(LocalTensor, SeedAlignedStridesAtStartNpu0And2) {
  // fp32 (2,3,4,5), X = 4: C stride ceil(20/32)*32 = 32, 12 empty 4-byte
  // blocks after each feature; N stride 32 at Q = 0 and 64 at Q = 2.
  LocalTensor q0 = make(desc({2, 3, 4, 5}, F32, NpuLayout::Aligned, 0));
  EXPECT_EQ(q0.strides(), (Dims4{32, 32, 5, 1}));
  EXPECT_EQ(q0.channelsPerNpu(), 1);
  EXPECT_EQ(q0.stridesUsed(), (std::array<bool, 4>{true, false, true, true}));
  EXPECT_EQ(q0.usageOn(0).featurePadding, 2 * 12 * 4);
  EXPECT_EQ(q0.bytesPerNpu(), 256);
  EXPECT_EQ(q0.npus(), (std::vector<int64_t>{0, 1, 2}));
  LocalTensor q2 = make(desc({2, 3, 4, 5}, F32, NpuLayout::Aligned, 2048));
  EXPECT_EQ(q2.strides(), (Dims4{64, 32, 5, 1}));
  EXPECT_EQ(q2.channelsPerNpu(), 2);
  EXPECT_EQ(q2.stridesUsed(), (std::array<bool, 4>{true, true, true, true}));
  EXPECT_EQ(q2.npus(), (std::vector<int64_t>{2, 3, 0}));
  // Channel 2 wraps to NPU 0, slot 1: element (1,2,3,4) at 4*(64+32+15+4).
  EXPECT_EQ(q2.locate({1, 2, 3, 4}), (NpuPlace{0, 460}));
  EXPECT_EQ(q2.slotOf({1, 2, 3, 4}), 1);
  // Slot 0 of NPU 0 holds nothing of this tensor.
  EXPECT_EQ(q2.classify({0, 0}).kind, ByteKind::EmptySlot);
  EXPECT_EQ(q2.usageOn(0).emptySlots, 2 * 32 * 4);
}

TEST(LocalTensor, SeedCompactStrides) {
  LocalTensor q0 = make(desc({2, 3, 4, 5}, F32, NpuLayout::Compact, 0));
  EXPECT_EQ(q0.strides(), (Dims4{20, 20, 5, 1}));
  EXPECT_EQ(q0.totalUsage().featurePadding, 0);
  LocalTensor q2 = make(desc({2, 3, 4, 5}, F32, NpuLayout::Compact, 2048));
  EXPECT_EQ(q2.strides(), (Dims4{40, 20, 5, 1}));
  EXPECT_EQ(q2.requiredAlignment(), 4);
}

TEST(LocalTensor, AlignedElementsPerUnitByWidth) {
  // 32 elements of 32 bits, 64 of 16 bits, 128 of 8 bits per 128 bytes.
  Dims4 shape{1, 1, 3, 7};
  EXPECT_EQ(make(desc(shape, F32, NpuLayout::Aligned)).strides()[1], 32);
  EXPECT_EQ(
      make(desc(shape, PrimitiveType::F16, NpuLayout::Aligned)).strides()[1],
      64);
  EXPECT_EQ(
      make(desc(shape, PrimitiveType::S8, NpuLayout::Aligned)).strides()[1],
      128);
  EXPECT_EQ(make(desc({1, 1, 10, 7}, F32, NpuLayout::Aligned)).strides()[1],
            96);
  // The chip's own unit: 64 bytes on BM1684X, 16 on BM1688.
  NpuConfig bm1684x = *NpuConfig::preset("bm1684x");
  NpuConfig bm1688 = *NpuConfig::preset("bm1688");
  EXPECT_EQ(
      make(desc(shape, F32, NpuLayout::ChipAligned), bm1684x).strides()[1], 32);
  EXPECT_EQ(make(desc(shape, F32, NpuLayout::ChipAligned), bm1688).strides()[1],
            24);
  EXPECT_EQ(make(desc(shape, PrimitiveType::S8, NpuLayout::ChipAligned), bm1688)
                .strides()[1],
            32);
  EXPECT_EQ(make(desc(shape, F32, NpuLayout::ChipAligned), bm1688)
                .requiredAlignment(),
            16);
}

TEST(LocalTensor, SeedStridedExamples) {
  // (2,5,3,4) fp32 at NPU 0 with W 2, H 16, C 56, N 120.
  TensorDesc d = desc({2, 5, 3, 4}, F32, NpuLayout::Strided);
  d.strides = {120, 56, 16, 2};
  LocalTensor t = make(d);
  EXPECT_EQ(t.channelsPerNpu(), 2);
  EXPECT_EQ(t.stridesUsed(), (std::array<bool, 4>{true, true, true, true}));
  EXPECT_EQ(t.locate({1, 4, 2, 3}), (NpuPlace{0, 4 * (120 + 56 + 32 + 6)}));
  EXPECT_EQ(t.bytesPerNpu(), 4 * (120 + 56 + 32 + 6 + 1));
  EXPECT_TRUE(t.checkNoAliasing());
  EXPECT_EQ(t.classify({0, 4}).kind, ByteKind::Gap);
  // (2,3,1,10) at NPU 1 with W 2, N 120: H = 1 and one channel per NPU, so
  // the H and C strides mean nothing.
  TensorDesc d1 = desc({2, 3, 1, 10}, F32, NpuLayout::Strided, 1024);
  d1.strides = {120, 0, 0, 2};
  LocalTensor t1 = make(d1);
  EXPECT_EQ(t1.channelsPerNpu(), 1);
  EXPECT_EQ(t1.stridesUsed(), (std::array<bool, 4>{true, false, false, true}));
  EXPECT_EQ(t1.npus(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(t1.checkNoAliasing());
}

TEST(LocalTensor, SeedMatrix2x40) {
  // Blocks of 4 bytes per row on the fullest NPU, channels and NPUs used.
  struct Case {
    int64_t w, channels, cpn, blocksPerRow, npusUsed, lastCols;
  } cases[] = {{40, 1, 1, 64, 1, 40}, {20, 2, 1, 32, 2, 20},
               {10, 4, 1, 32, 4, 10}, {8, 5, 2, 64, 4, 8},
               {15, 3, 1, 32, 3, 10}, {6, 7, 2, 64, 4, 4}};
  for (const Case &c : cases) {
    LocalTensor t = make(matrix(2, 40, c.w));
    EXPECT_EQ(t.storageShape(), (Dims4{2, c.channels, 1, c.w})) << c.w;
    EXPECT_EQ(t.channelsPerNpu(), c.cpn) << c.w;
    EXPECT_EQ(t.strides()[0], c.blocksPerRow) << c.w;
    EXPECT_EQ(t.npuCount(), c.npusUsed) << c.w;
    EXPECT_EQ(t.bytesPerNpu(), 2 * 4 * c.blocksPerRow) << c.w;
    // The last column is the last element of the last channel.
    NpuPlace last = t.locate({0, 39, 0, 0});
    ByteInfo info = t.classify(last);
    EXPECT_EQ(info.kind, ByteKind::Element);
    EXPECT_EQ(info.index, (Dims4{0, 39, 0, 0}));
    EXPECT_EQ(t.classify({last.npu, last.offset + 4}).kind,
              c.lastCols == c.w ? ByteKind::FeaturePadding
                                : ByteKind::MatrixTail)
        << c.w;
  }
  // W = 6 uses more memory than W = 15.
  EXPECT_GT(make(matrix(2, 40, 6)).bytesPerNpu(),
            make(matrix(2, 40, 15)).bytesPerNpu());
  EXPECT_EQ(make(matrix(2, 40, 15)).usageOn(2).data, 2 * 10 * 4);
  EXPECT_EQ(make(matrix(2, 40, 15)).usageOn(2).matrixTail, 2 * 5 * 4);
}

TEST(LocalTensor, Seed4NAnd2NModes) {
  // int8 (6,5,4,5) in 4N: int8x4 (2,5,4,5); two dummies after n = 4, 5.
  LocalTensor t = make(desc({6, 5, 4, 5}, PrimitiveType::S8, NpuLayout::Aligned,
                            0, StorageMode::N4));
  EXPECT_EQ(t.storageShape(), (Dims4{2, 5, 4, 5}));
  EXPECT_EQ(t.storedTypeName(), "int8x4");
  EXPECT_EQ(t.storedBytes(), 4);
  EXPECT_EQ(t.strides(), (Dims4{64, 32, 5, 1}));
  NpuPlace p4 = t.locate({4, 0, 0, 0});
  EXPECT_EQ(p4, (NpuPlace{0, 4 * 64}));
  EXPECT_EQ(t.locate({5, 0, 0, 0}), (NpuPlace{0, 4 * 64 + 1}));
  EXPECT_EQ(t.classify({0, 4 * 64 + 2}).kind, ByteKind::Dummy);
  EXPECT_EQ(t.classify({0, 4 * 64 + 3}).kind, ByteKind::Dummy);
  EXPECT_EQ(t.classify({0, 4 * 64 + 3}).index, (Dims4{1, 0, 0, 0}));
  EXPECT_EQ(t.totalUsage().dummy, 2 * 5 * 4 * 5);
  // int16 (3,5,4,5) in 2N: int16x2 (2,5,4,5); one dummy after n = 2.
  LocalTensor t2 = make(desc({3, 5, 4, 5}, PrimitiveType::S16,
                             NpuLayout::Aligned, 0, StorageMode::N2));
  EXPECT_EQ(t2.storageShape(), (Dims4{2, 5, 4, 5}));
  EXPECT_EQ(t2.storedTypeName(), "int16x2");
  EXPECT_EQ(t2.locate({2, 0, 0, 0}), (NpuPlace{0, 4 * 64}));
  EXPECT_EQ(t2.classify({0, 4 * 64 + 2}).kind, ByteKind::Dummy);
  // fp32 weights [3, 2, 1, 1] in 2IC: fp32x2 (2, 2, 1, 1), 16 per 128 bytes.
  LocalTensor w =
      make(desc({3, 2, 1, 1}, F32, NpuLayout::Aligned, 0, StorageMode::IC2));
  EXPECT_EQ(w.storedTypeName(), "fp32x2");
  EXPECT_EQ(w.storageShape(), (Dims4{2, 2, 1, 1}));
  EXPECT_EQ(w.alignElements(), 16);
  EXPECT_EQ(w.strides(), (Dims4{16, 16, 1, 1}));
  EXPECT_EQ(w.locate({1, 1, 0, 0}), (NpuPlace{1, 4}));
  EXPECT_EQ(w.classify({1, 8 * 16 + 4}).kind, ByteKind::Dummy);
}

TEST(LocalTensor, ModesAreCheckedAgainstTypeAndChip) {
  EXPECT_EQ(
      errorOf(desc({4, 1, 1, 1}, F32, NpuLayout::Aligned, 0, StorageMode::N4)),
      "4N mode stores int8 or uint8, not fp32");
  EXPECT_EQ(errorOf(desc({4, 1, 1, 1}, PrimitiveType::S8, NpuLayout::Aligned, 0,
                         StorageMode::N2)),
            "2N mode stores int16 or uint16, not int8");
  EXPECT_EQ(errorOf(desc({4, 1, 1, 1}, PrimitiveType::F16, NpuLayout::Aligned,
                         0, StorageMode::IC2)),
            "2IC mode stores fp32 conv weights, not fp16");
  EXPECT_EQ(errorOf(desc({4, 1, 1, 1}, PrimitiveType::S8, NpuLayout::Aligned, 0,
                         StorageMode::N4),
                    *NpuConfig::preset("bm1684x")),
            "bm1684x has no 4N mode (only bm1684-style chips pack along N)");
  EXPECT_EQ(errorOf(desc({4, 1, 1, 1}, PrimitiveType::U8, NpuLayout::Aligned, 0,
                         StorageMode::N4),
                    *NpuConfig::preset("bm1684")),
            "ok");
}

TEST(LocalTensor, DescriptionErrors) {
  EXPECT_EQ(errorOf(desc({2, 0, 4, 5}, F32, NpuLayout::Aligned)),
            "dimension c is 0, expected at least 1");
  EXPECT_EQ(errorOf(desc({2, 3, 4, 5}, F32, NpuLayout::Continuous)),
            "continuous is the layout of system memory, expected a local "
            "layout: aligned, eu, compact, matrix or strides");
  EXPECT_EQ(errorOf(desc({2, 3, 4, 5}, F32, NpuLayout::Aligned, 4096)),
            "address 4096 is outside local memory, expected 0..4095 (4 npus "
            "x 1024 bytes)");
  EXPECT_EQ(errorOf(matrix(2, 40, 41)),
            "matrix W is 41, expected 1..40 (the number of columns)");
  EXPECT_EQ(errorOf(desc({2, 3, 4, 5}, PrimitiveType::S4, NpuLayout::Aligned)),
            "element type s4 is not a whole number of bytes");
  TensorDesc neg = desc({2, 3, 4, 5}, F32, NpuLayout::Strided);
  neg.strides = {1, 1, -1, 1};
  EXPECT_EQ(errorOf(neg), "h stride is -1, expected a stride >= 0");
  TensorDesc huge =
      desc({int64_t(1) << 40, 1 << 20, 1, 1}, F32, NpuLayout::Aligned);
  EXPECT_EQ(errorOf(huge),
            "tensor (1099511627776,1048576,1,1) of fp32 is too large to "
            "place");
}

TEST(LocalTensor, PlacementChecks) {
  LocalTensor misaligned =
      make(desc({2, 3, 4, 5}, F32, NpuLayout::Aligned, 1472));
  ASSERT_FALSE(misaligned.checkAlignment());
  EXPECT_EQ(misaligned.checkAlignment().error().message,
            "address 1472 (npu 1 offset 448) is not aligned for the aligned "
            "layout: the offset must be a multiple of 128 bytes, the nearest "
            "are 384 and 512");
  EXPECT_TRUE(
      make(desc({2, 3, 4, 5}, F32, NpuLayout::Compact, 1472)).checkAlignment());
  LocalTensor big = make(desc({4, 3, 4, 5}, F32, NpuLayout::Aligned, 768));
  ASSERT_FALSE(big.checkFits());
  EXPECT_EQ(big.checkFits().error().message,
            "tensor needs 512 bytes per npu from offset 768, 256 bytes past "
            "the end of the 1024-byte local memory of npu 0");
  LocalTensor a = make(desc({2, 3, 4, 5}, F32, NpuLayout::Aligned, 0));
  LocalTensor b = make(desc({1, 1, 4, 5}, F32, NpuLayout::Aligned, 2048 + 128));
  LocalTensor c = make(desc({1, 1, 4, 5}, F32, NpuLayout::Aligned, 3072));
  // b sits on NPU 2, inside a's bytes 0..255; c on NPU 3, which a leaves free.
  ASSERT_FALSE(a.checkOverlap(b, "a", "b"));
  EXPECT_EQ(a.checkOverlap(b, "a", "b").error().message,
            "a overlaps b on npu 2: both use bytes 128..255");
  EXPECT_TRUE(a.checkOverlap(c));
  EXPECT_TRUE(c.checkOverlap(a));
}

TEST(LocalTensor, AliasingStrides) {
  TensorDesc d = desc({1, 1, 2, 3}, F32, NpuLayout::Strided);
  d.strides = {0, 0, 2, 1};
  ASSERT_FALSE(make(d).checkNoAliasing());
  EXPECT_EQ(make(d).checkNoAliasing().error().message,
            "strides (0,0,2,1) put stored elements (0,0,0,2) and (0,0,1,0) at "
            "the same place, npu 0 byte 8");
  // Interleaved but injective: sizes 3 x 2 with strides 2 and 3.
  d.shape = {1, 1, 3, 2};
  d.strides = {0, 0, 2, 3};
  EXPECT_TRUE(make(d).checkNoAliasing());
  EXPECT_EQ(make(d).classify({0, 4 * 5}).index, (Dims4{0, 0, 1, 1}));
  EXPECT_EQ(make(d).classify({0, 4 * 1}).kind, ByteKind::Gap);
  EXPECT_TRUE(checkStridesInjective({2, 3, 4, 5}, {60, 20, 5, 1}));
  EXPECT_FALSE(checkStridesInjective({2, 3, 4, 5}, {60, 20, 5, 0}));
  EXPECT_TRUE(checkStridesInjective({1, 1, 3, 2}, {7, 7, 2, 3}));
}

} // namespace

#include "RandomTensors.h"

namespace {

std::string describe(const LocalTensor &t) {
  const TensorDesc &d = t.desc();
  std::string out = npuTypeName(d.type) + " (" + std::to_string(d.shape[0]);
  for (int i = 1; i < 4; ++i)
    out += "," + std::to_string(d.shape[i]);
  out += ") " + std::string(layoutName(d.layout)) + " " +
         std::string(modeName(d.mode)) + " @" + std::to_string(d.address) +
         " on " + t.config().toString();
  return out;
}

/// Every logical element: locate is in range, injective, and classify
/// inverts it on each of its bytes.
void checkForwardMap(const LocalTensor &t) {
  const Dims4 &s = t.shape();
  int64_t eb = t.elementBytes();
  std::map<std::pair<int64_t, int64_t>, Dims4> seen;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w) {
          Dims4 i{n, c, h, w};
          NpuPlace p = t.locate(i);
          ASSERT_TRUE(t.touchesNpu(p.npu)) << describe(t);
          ASSERT_GE(p.offset, t.start().offset) << describe(t);
          ASSERT_LE(p.offset + eb, t.start().offset + t.bytesPerNpu())
              << describe(t);
          for (int64_t b = 0; b < eb; ++b) {
            auto [it, fresh] = seen.emplace(std::pair(p.npu, p.offset + b), i);
            ASSERT_TRUE(fresh)
                << describe(t) << " element " << n << c << h << w;
            ByteInfo info = t.classify({p.npu, p.offset + b});
            ASSERT_EQ(info.kind, ByteKind::Element) << describe(t);
            ASSERT_EQ(info.index, i) << describe(t);
            ASSERT_EQ(info.byte, b) << describe(t);
          }
        }
}

/// Every byte of every NPU: the kinds add up to the usage report.
void checkByteCensus(const LocalTensor &t) {
  const NpuConfig &config = t.config();
  for (int64_t npu = 0; npu < config.npus(); ++npu) {
    NpuUsage want = t.usageOn(npu), got;
    for (int64_t off = 0; off < config.bytesPerNpu(); ++off) {
      ByteInfo info = t.classify({npu, off});
      bool inside = t.touchesNpu(npu) && off >= t.start().offset &&
                    off < t.start().offset + t.bytesPerNpu();
      ASSERT_EQ(info.kind == ByteKind::Outside, !inside) << describe(t);
      switch (info.kind) {
      case ByteKind::Element:
        ++got.data;
        break;
      case ByteKind::Dummy:
        ++got.dummy;
        break;
      case ByteKind::MatrixTail:
        ++got.matrixTail;
        break;
      case ByteKind::FeaturePadding:
        ++got.featurePadding;
        break;
      case ByteKind::EmptySlot:
        ++got.emptySlots;
        break;
      case ByteKind::Gap:
        ++got.gaps;
        break;
      case ByteKind::Outside:
        break;
      }
    }
    EXPECT_EQ(got.data, want.data) << describe(t) << " npu " << npu;
    EXPECT_EQ(got.dummy, want.dummy) << describe(t) << " npu " << npu;
    EXPECT_EQ(got.matrixTail, want.matrixTail) << describe(t);
    EXPECT_EQ(got.featurePadding, want.featurePadding) << describe(t);
    EXPECT_EQ(got.emptySlots, want.emptySlots) << describe(t);
    EXPECT_EQ(got.gaps, want.gaps) << describe(t) << " npu " << npu;
    EXPECT_EQ(want.data + want.wasted(), want.reserved) << describe(t);
  }
  EXPECT_EQ(t.totalUsage().data, t.logicalElements() * t.elementBytes());
}

TEST(LocalTensorProperty, RandomTensorsMapInjectivelyAndInvert) {
  std::mt19937_64 rng(20240611);
  int checked = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    NpuConfig config = npu_testing::randomConfig(rng);
    std::optional<LocalTensor> t = npu_testing::randomPlacedTensor(rng, config);
    if (!t)
      continue;
    ASSERT_TRUE(t->checkNoAliasing()) << describe(*t);
    checkForwardMap(*t);
    checkByteCensus(*t);
    if (::testing::Test::HasFailure())
      return;
    ++checked;
  }
  EXPECT_GT(checked, 1500);
}

TEST(LocalTensorProperty, StridesMatchTheirDefinitions) {
  // N stride: n -> n+1; C stride: c -> c+X (same NPU); H and W strides.
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 300; ++iter) {
    NpuConfig config = npu_testing::randomConfig(rng);
    std::optional<LocalTensor> t = npu_testing::randomPlacedTensor(rng, config);
    if (!t || t->layout() == NpuLayout::Matrix ||
        t->mode() != StorageMode::Normal)
      continue;
    const Dims4 &s = t->shape();
    int64_t x = config.npus(), eb = t->elementBytes();
    Dims4 i{s[0] - 1, s[1] - 1, s[2] - 1, s[3] - 1};
    NpuPlace base = t->locate({0, 0, 0, 0});
    if (s[0] > 1) {
      EXPECT_EQ(t->locate({1, 0, 0, 0}).offset - base.offset,
                eb * t->strides()[0]);
    }
    if (s[1] > x) {
      EXPECT_EQ(t->locate({0, x, 0, 0}).npu, base.npu);
      EXPECT_EQ(t->locate({0, x, 0, 0}).offset - base.offset,
                eb * t->strides()[1]);
    }
    if (s[2] > 1) {
      EXPECT_EQ(t->locate({0, 0, 1, 0}).offset - base.offset,
                eb * t->strides()[2]);
    }
    if (s[3] > 1) {
      EXPECT_EQ(t->locate({0, 0, 0, 1}).offset - base.offset,
                eb * t->strides()[3]);
    }
    // The spec's formula for any element.
    int64_t q = t->start().npu;
    NpuPlace p = t->locate(i);
    EXPECT_EQ(p.npu, (q + i[1]) % x);
    EXPECT_EQ(p.offset,
              t->start().offset +
                  eb * (i[0] * t->strides()[0] +
                        (q + i[1]) / x * t->strides()[1] +
                        i[2] * t->strides()[2] + i[3] * t->strides()[3]));
  }
}

} // namespace
