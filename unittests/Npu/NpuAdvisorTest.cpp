//===- NpuAdvisorTest.cpp - Matrix W advice and fit reports ---------------===//
#include "tessel/Npu/NpuAdvisor.h"

#include "RandomTensors.h"

#include <gtest/gtest.h>

using namespace tessel;
using tessel::npu_testing::uniform;

namespace {

constexpr PrimitiveType F32 = PrimitiveType::F32;

TEST(MatrixAdvisor, SeedDiscussionOf2x40) {
  NpuConfig seed = NpuConfig::seed();
  // Bytes on the fullest NPU for the seed's W values.
  struct Case {
    int64_t w, bytes, channels, npus;
  } cases[] = {{40, 512, 1, 1}, {20, 256, 2, 2}, {10, 256, 4, 4},
               {8, 512, 5, 4},  {15, 256, 3, 3}, {6, 512, 7, 4}};
  for (const Case &c : cases) {
    MatrixChoice m = evaluateMatrixW(seed, 2, 40, F32, c.w);
    EXPECT_EQ(m.fullestNpuBytes, c.bytes) << c.w;
    EXPECT_EQ(m.channels, c.channels) << c.w;
    EXPECT_EQ(m.npusUsed, c.npus) << c.w;
  }
  Expected<MatrixAdvice> advice = adviseMatrix(seed, 2, 40, F32);
  ASSERT_TRUE(advice) << advice.error().message;
  EXPECT_EQ(advice->best.w, 20);
  EXPECT_EQ(advice->best.fullestNpuBytes, 256);
  EXPECT_EQ(advice->tieLow, 10);
  EXPECT_EQ(advice->tieHigh, 32);
  EXPECT_EQ(advice->tieCount, 23);
  std::vector<std::string> want = {
      "W = 20: 2 channels on npus 0, 1, 1 per npu; a row takes 32 fp32 (128 "
      "bytes) per slot, 256 bytes on the fullest npu",
      "every W in 10..32 needs those 256 bytes; W = 20 is the smallest with "
      "the fewest channels (2)",
      "W = 33 needs 512 bytes: a slot of 33 fp32 rounds up to 64 elements (2 "
      "128-byte units)",
      "W = 9 needs 512 bytes: its 5 channels wrap past the 4 npus (from npu "
      "0), so an npu holds 2 slots of each row"};
  EXPECT_EQ(advice->reasons, want);
  std::vector<int64_t> ws;
  for (const MatrixChoice &c : advice->candidates)
    ws.push_back(c.w);
  EXPECT_EQ(ws, (std::vector<int64_t>{40, 20, 14, 10, 8, 7, 6, 5, 4, 3, 2, 1}));
}

TEST(MatrixAdvisor, StartNpuChangesTheAnswer) {
  // From NPU 3 any two channels wrap into a second slot row, so W = 20..32
  // cost 512 bytes like W = 40, which has one channel and wins the tie.
  Expected<MatrixAdvice> advice =
      adviseMatrix(NpuConfig::seed(), 2, 40, F32, 3);
  ASSERT_TRUE(advice);
  EXPECT_EQ(advice->best.w, 40);
  EXPECT_EQ(advice->best.channels, 1);
  EXPECT_EQ(advice->best.fullestNpuBytes, 512);
  EXPECT_EQ(
      evaluateMatrixW(NpuConfig::seed(), 2, 40, F32, 20, 3).fullestNpuBytes,
      512);
  EXPECT_EQ(adviseMatrix(NpuConfig::seed(), 2, 40, F32, 4).error().message,
            "start npu 4 is not 0..3");
  EXPECT_FALSE(adviseMatrix(NpuConfig::seed(), 0, 40, F32));
}

bool better(const MatrixChoice &a, const MatrixChoice &b) {
  if (a.fullestNpuBytes != b.fullestNpuBytes)
    return a.fullestNpuBytes < b.fullestNpuBytes;
  if (a.channels != b.channels)
    return a.channels < b.channels;
  return a.w < b.w;
}

TEST(MatrixAdvisor, AgreesWithBruteForceAndLocalTensor) {
  std::mt19937_64 rng(5);
  const PrimitiveType types[] = {F32, PrimitiveType::F16, PrimitiveType::S8,
                                 PrimitiveType::F64};
  for (int iter = 0; iter < 300; ++iter) {
    NpuConfig config = npu_testing::randomConfig(rng);
    int64_t rows = uniform(rng, 1, 4), cols = uniform(rng, 1, 300);
    PrimitiveType type = types[uniform(rng, 0, 3)];
    int64_t q = uniform(rng, 0, config.npus() - 1);
    Expected<MatrixAdvice> advice = adviseMatrix(config, rows, cols, type, q);
    ASSERT_TRUE(advice);
    MatrixChoice best = evaluateMatrixW(config, rows, cols, type, 1, q);
    int64_t ties = 0;
    for (int64_t w = 1; w <= cols; ++w) {
      MatrixChoice c = evaluateMatrixW(config, rows, cols, type, w, q);
      if (better(c, best))
        best = c;
      TensorDesc d;
      d.shape = {rows, cols, 1, 1};
      d.type = type;
      d.layout = NpuLayout::Matrix;
      d.matrixW = w;
      d.address = q * config.bytesPerNpu();
      LocalTensor t = *LocalTensor::get(config, d);
      ASSERT_EQ(t.bytesPerNpu(), c.fullestNpuBytes);
      ASSERT_EQ(t.npuCount(), c.npusUsed);
      ASSERT_EQ(t.totalUsage().reserved, c.totalBytes);
      ASSERT_EQ(t.totalUsage().wasted(), c.wastedBytes);
    }
    for (int64_t w = 1; w <= cols; ++w)
      ties += evaluateMatrixW(config, rows, cols, type, w, q).fullestNpuBytes ==
              best.fullestNpuBytes;
    EXPECT_EQ(advice->best.w, best.w) << cols;
    EXPECT_EQ(advice->tieCount, ties) << cols;
  }
}

TensorSpec spec(const std::string &text) {
  Expected<TensorSpec> s = parseTensorSpec(text);
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

TEST(Fit, PlacesFirstFitAroundFixedTensors) {
  NpuConfig seed = NpuConfig::seed();
  Expected<FitReport> report =
      fitTensors(seed, {spec("a=fp32[2,3,4,5]:aligned@0"),
                        spec("b=fp32[1,1,4,5]"), spec("c=fp32[2,40]:matrix")});
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->fits());
  ASSERT_EQ(report->entries.size(), 3u);
  EXPECT_EQ(report->entries[0].name, "a");
  // b (one channel) takes the free NPU 3 at offset 0.
  EXPECT_EQ(report->entries[1].spec.desc.address, 3 * 1024);
  EXPECT_TRUE(report->entries[1].autoPlaced);
  // c gets W = 20 and two NPUs: offset 256 of NPUs 0 and 1.
  EXPECT_EQ(report->entries[2].spec.desc.matrixW, 20);
  EXPECT_TRUE(report->entries[2].autoW);
  EXPECT_EQ(report->entries[2].spec.desc.address, 256);
  EXPECT_EQ(report->highWater, (std::vector<int64_t>{512, 512, 256, 128}));
  EXPECT_EQ(report->reserved, (std::vector<int64_t>{512, 512, 256, 128}));
  EXPECT_EQ(report->data,
            (std::vector<int64_t>{160 + 160, 160 + 160, 160, 80}));
}

TEST(Fit, ReportsProblemsAndCheaperChoices) {
  NpuConfig seed = NpuConfig::seed();
  Expected<FitReport> report = fitTensors(
      seed, {spec("a=fp32[2,6,4,5]:aligned@3072"),
             spec("b=fp32[2,3,4,5]:compact@100"),
             spec("c=fp32[2,40]:matrix(40)@1664"), spec("d=fp32[64,4,4,5]")});
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(report->fits());
  // a spans bytes 0..767 of every NPU (3 slots per npu from NPU 3).
  std::vector<std::string> problems = {
      "c: tensor needs 512 bytes per npu from offset 640, 128 bytes past the "
      "end of the 1024-byte local memory of npu 1",
      "d: no free place of 8192 bytes on the npus it needs",
      "b overlaps a on npu 0: both use bytes 100..259",
      "c overlaps a on npu 1: both use bytes 640..767"};
  EXPECT_EQ(report->problems, problems);
  // a starts at NPU 3: 6 channels need 3 slots per npu there, 2 from npu 0.
  std::vector<std::string> a = {
      "start at npu 0..2 (address 0 for npu 0): 2 channel slots per npu "
      "instead of 3, 512 bytes per npu instead of 768",
      "compact layout (if the operation accepts it): 480 bytes per npu "
      "instead of 768"};
  EXPECT_EQ(report->entries[0].suggestions, a);
  std::vector<std::string> c = {
      "matrix W = 20: 256 bytes per npu instead of 512"};
  EXPECT_EQ(report->entries[2].suggestions, c);
  EXPECT_EQ(fitTensors(seed, {spec("a=fp32[2,3,4,5]"), spec("b=fp32[1,1,1,1]"),
                              spec("a=fp32[1,1,1,1]")})
                .error()
                .message,
            "the tensor name 'a' is given twice, expected each name once");
  EXPECT_EQ(fitTensors(seed, {spec("w=fp32[2,3,4,5]:4n")}).error().message,
            "w: 4N mode stores int8 or uint8, not fp32");
}

} // namespace
