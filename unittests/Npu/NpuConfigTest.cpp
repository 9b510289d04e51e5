//===- NpuConfigTest.cpp - Configurations, addresses, channel slots -------===//
#include "tessel/Npu/NpuConfig.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

std::string errorOf(Expected<NpuConfig> config) {
  return config ? "ok: " + config->toString() : config.error().message;
}

TEST(NpuConfig, SeedAddressSplits) {
  // Spec section 1: X = 4, S = 1024.
  NpuConfig seed = NpuConfig::seed();
  struct Case {
    int64_t address, npu, offset;
  } cases[] = {{340, 0, 340}, {1472, 1, 448}, {2300, 2, 252}, {3088, 3, 16}};
  for (const Case &c : cases) {
    Expected<NpuPlace> place = seed.split(c.address);
    ASSERT_TRUE(place) << place.error().message;
    EXPECT_EQ(place->npu, c.npu) << c.address;
    EXPECT_EQ(place->offset, c.offset) << c.address;
    EXPECT_EQ(seed.address(*place), c.address);
  }
}

TEST(NpuConfig, SplitRejectsAddressesOutsideLocalMemory) {
  NpuConfig seed = NpuConfig::seed();
  EXPECT_EQ(seed.split(4096).error().message,
            "address 4096 is outside local memory, expected 0..4095 (4 npus "
            "x 1024 bytes)");
  EXPECT_FALSE(seed.split(-1));
  EXPECT_TRUE(seed.split(4095));
}

TEST(NpuConfig, SplitAndAddressAreInverseOnEveryByte) {
  Expected<NpuConfig> config = NpuConfig::get(3, 256, 2, 64);
  ASSERT_TRUE(config);
  for (int64_t a = 0; a < config->totalBytes(); ++a) {
    NpuPlace p = *config->split(a);
    EXPECT_GE(p.offset, 0);
    EXPECT_LT(p.offset, 256);
    EXPECT_EQ(config->address(p), a);
  }
}

TEST(NpuConfig, ChannelsPerNpuSeedCases) {
  // Spec section 2, for several X (the seed writes them for any X).
  for (int64_t x : {2, 3, 4, 5, 8, 64}) {
    NpuConfig config = *NpuConfig::get(x, 1024);
    EXPECT_EQ(config.channelsPerNpu(0, x - 1), 1) << x;
    EXPECT_EQ(config.channelsPerNpu(1, x - 1), 1) << x;
    EXPECT_EQ(config.channelsPerNpu(0, x + 2), 2) << x;
    EXPECT_EQ(config.channelsPerNpu(x - 1, x + 2), 3) << x;
    // C = X + 2 at Q = 0: channels X and X + 1 in the second slot of NPUs 0
    // and 1.
    EXPECT_EQ(config.channelSlot(0, x).npu, 0);
    EXPECT_EQ(config.channelSlot(0, x).slot, 1);
    EXPECT_EQ(config.channelSlot(0, x + 1).npu, 1);
    EXPECT_EQ(config.channelSlot(0, x + 1).slot, 1);
  }
}

TEST(NpuConfig, ChannelSlotMatchesBruteForce) {
  for (int64_t x : {1, 3, 4, 7}) {
    NpuConfig config = *NpuConfig::get(x, 128);
    for (int64_t q = 0; q < x; ++q)
      for (int64_t channels = 1; channels <= 3 * x + 1; ++channels) {
        // Walk the channels in order, filling NPUs q, q+1, ... and wrapping
        // into the next slot row.
        int64_t npu = q, slot = 0, maxSlot = 0;
        for (int64_t c = 0; c < channels; ++c) {
          ChannelSlot cs = config.channelSlot(q, c);
          EXPECT_EQ(cs.npu, npu);
          EXPECT_EQ(cs.slot, slot);
          maxSlot = slot;
          if (++npu == x) {
            npu = 0;
            ++slot;
          }
        }
        EXPECT_EQ(config.channelsPerNpu(q, channels), maxSlot + 1);
      }
  }
}

TEST(NpuConfig, Presets) {
  NpuConfig bm1684 = *NpuConfig::preset("bm1684");
  EXPECT_EQ(bm1684.npus(), 64);
  EXPECT_EQ(bm1684.bytesPerNpu(), 512 * 1024);
  EXPECT_EQ(bm1684.banks(), 8);
  EXPECT_EQ(bm1684.alignBytes(), 128);
  EXPECT_TRUE(bm1684.hasPackedModes());
  NpuConfig bm1684x = *NpuConfig::preset("BM1684X");
  EXPECT_EQ(bm1684x.npus(), 64);
  EXPECT_EQ(bm1684x.bytesPerNpu(), 256 * 1024);
  EXPECT_EQ(bm1684x.banks(), 16);
  EXPECT_EQ(bm1684x.alignBytes(), 64);
  EXPECT_FALSE(bm1684x.hasPackedModes());
  NpuConfig bm1688 = *NpuConfig::preset("bm1688");
  EXPECT_EQ(bm1688.npus(), 32);
  EXPECT_EQ(bm1688.bytesPerNpu(), 128 * 1024);
  EXPECT_EQ(bm1688.banks(), 16);
  EXPECT_EQ(bm1688.alignBytes(), 16);
  EXPECT_EQ(bm1688.bankBytes(), 8192);
  EXPECT_EQ(bm1684x.toString(), "bm1684x: 64 npus x 256 KiB, 16 banks of 16 "
                                "KiB, 64-byte alignment");
  EXPECT_EQ(NpuConfig::seed().toString(),
            "custom: 4 npus x 1 KiB, 128-byte alignment, 4N/2N/2IC modes");
  EXPECT_EQ(errorOf(NpuConfig::preset("bm1680")),
            "unknown chip 'bm1680', expected one of bm1684, bm1684x, bm1688");
}

TEST(NpuConfig, ValidationNamesTheBadValue) {
  EXPECT_EQ(errorOf(NpuConfig::get(0, 1024)), "npus is 0, expected 1..65536");
  EXPECT_EQ(errorOf(NpuConfig::get(4, 0)),
            "local memory of 0 bytes per npu is out of range, expected "
            "1..1099511627776");
  EXPECT_EQ(errorOf(NpuConfig::get(4, 1024, 3)),
            "3 banks do not divide the 1024 bytes of an npu, expected a "
            "divisor of 1024");
  EXPECT_EQ(errorOf(NpuConfig::get(4, 1024, 1, 96)),
            "alignment unit of 96 bytes is not a power of two");
  EXPECT_EQ(errorOf(NpuConfig::get(4, 1000, 1, 128)),
            "local memory of 1000 bytes per npu is not a multiple of the "
            "128-byte alignment unit");
  EXPECT_TRUE(NpuConfig::get(4, 1000, 8, 8));
  EXPECT_TRUE(NpuConfig::get(65536, int64_t(1) << 40));
}

TEST(NpuConfig, ByteSizes) {
  EXPECT_EQ(*parseByteSize("1024"), 1024);
  EXPECT_EQ(*parseByteSize("512K"), 512 * 1024);
  EXPECT_EQ(*parseByteSize("256KiB"), 256 * 1024);
  EXPECT_EQ(*parseByteSize("1m"), 1 << 20);
  EXPECT_EQ(parseByteSize("12Q").error().message,
            "unknown unit 'Q' in '12Q', expected K, KiB, M, MiB, G or GiB");
  EXPECT_EQ(parseByteSize("K").error().message,
            "byte size 'K' does not start with a number, expected e.g. 1024 "
            "or 512K");
  EXPECT_FALSE(parseByteSize("99999999999999999999"));
  EXPECT_FALSE(parseByteSize("9999999999999G"));
  EXPECT_EQ(formatBytes(512 * 1024), "512 KiB");
  EXPECT_EQ(formatBytes(1000), "1000 bytes");
  EXPECT_EQ(formatBytes(3 << 20), "3 MiB");
}

TEST(NpuConfig, ElementTypeNames) {
  EXPECT_EQ(*parseNpuType("fp32"), PrimitiveType::F32);
  EXPECT_EQ(*parseNpuType("F32"), PrimitiveType::F32);
  EXPECT_EQ(*parseNpuType("int8"), PrimitiveType::S8);
  EXPECT_EQ(*parseNpuType("s8"), PrimitiveType::S8);
  EXPECT_EQ(*parseNpuType("uint16"), PrimitiveType::U16);
  EXPECT_EQ(*parseNpuType("bf16"), PrimitiveType::BF16);
  EXPECT_EQ(*parseNpuType("f8e4m3fn"), PrimitiveType::F8E4M3FN);
  EXPECT_EQ(npuTypeName(PrimitiveType::S8), "int8");
  EXPECT_EQ(npuTypeName(PrimitiveType::F32), "fp32");
  EXPECT_EQ(npuTypeName(PrimitiveType::F8E5M2), "f8e5m2");
  EXPECT_EQ(parseNpuType("s4").error().message,
            "element type 's4' is 4 bits wide; npu local memory holds whole "
            "bytes, expected a type of 8 bits or more");
  EXPECT_EQ(parseNpuType("fp33").error().message,
            "unknown element type 'fp33', expected one of fp32, fp16, bf16, "
            "fp64, int8, uint8, int16, uint16, int32, uint32, int64, uint64, "
            "bool");
  EXPECT_FALSE(parseNpuType("token"));
}

} // namespace
