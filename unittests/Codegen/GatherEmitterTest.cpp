//===- GatherEmitterTest.cpp - Gather in the loop emitter -----------------===//
//
// Random gathers (random dimension numbers: collapsed and offset dims,
// sometimes a batching dim, the index vector at any position or implicit,
// 0 to 2 more batch dims; index values of five types around the valid
// range, so that most starts are clamped) with a producer and a consumer,
// against the evaluator bit for bit with the CPU's and the GPU's launch.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Hlo/GatherDimensions.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace tessel;

namespace {

bool contains(const std::vector<int64_t> &v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

struct RandomGather {
  std::string text;
  /// The largest operand dim, for index values around the valid range.
  int64_t maxDim = 1;
};

/// A gather of a rank 1 to 3 operand of `type` with `indexType` indices:
/// a random subset of the operand dims started by the index vector, some
/// of those collapsed, sometimes one batching dim; the operand sometimes
/// computed (a negate) and sometimes an epilogue after the gather.
RandomGather randomGather(std::mt19937 &rng, const std::string &type,
                          const std::string &indexType) {
  auto chance = [&](int percent) {
    return static_cast<int>(rng() % 100) < percent;
  };
  RandomGather r;
  int rank = 1 + static_cast<int>(rng() % 3);
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d) {
    dims.push_back(1 + rng() % 6);
    r.maxDim = std::max(r.maxDim, dims.back());
  }
  std::vector<int64_t> batching;
  if (rank >= 2 && chance(25))
    batching.push_back(rng() % rank);
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(batching, d))
      rest.push_back(d);
  std::vector<int64_t> startIndexMap = rest;
  std::shuffle(startIndexMap.begin(), startIndexMap.end(), rng);
  startIndexMap.resize(1 + rng() % rest.size());
  std::vector<int64_t> sliceSizes(rank), collapsed, windowDims;
  for (int64_t d = 0; d < rank; ++d) {
    if (contains(batching, d)) {
      sliceSizes[d] = 1;
      continue;
    }
    sliceSizes[d] = 1 + rng() % dims[d];
    if (sliceSizes[d] == 1 && chance(60))
      collapsed.push_back(d);
    else
      windowDims.push_back(d);
  }
  // The indices' batch dims (the batching one at a random place).
  std::vector<int64_t> batch;
  for (int64_t n = rng() % 3; n > 0; --n)
    batch.push_back(1 + rng() % 4);
  int64_t batchingAt = -1;
  if (!batching.empty()) {
    batchingAt = rng() % (batch.size() + 1);
    batch.insert(batch.begin() + batchingAt, dims[batching.front()]);
  }
  int64_t k = static_cast<int64_t>(startIndexMap.size());
  std::vector<int64_t> indexDims = batch;
  int64_t vectorDim = static_cast<int64_t>(batch.size());
  if (k > 1 || chance(60)) {
    vectorDim = rng() % (batch.size() + 1);
    indexDims.insert(indexDims.begin() + vectorDim, k);
  }
  std::vector<int64_t> indicesBatching;
  if (batchingAt >= 0)
    indicesBatching.push_back(batchingAt < vectorDim ? batchingAt
                                                     : batchingAt + 1);
  // The output: the batch dims in order, the offset dims at random
  // (sorted) positions.
  int64_t outRank = static_cast<int64_t>(batch.size() + windowDims.size());
  std::vector<int64_t> positions(outRank);
  for (int64_t p = 0; p < outRank; ++p)
    positions[p] = p;
  std::shuffle(positions.begin(), positions.end(), rng);
  std::vector<int64_t> offsetDims(positions.begin(),
                                  positions.begin() + windowDims.size());
  std::sort(offsetDims.begin(), offsetDims.end());
  std::vector<int64_t> outDims(outRank);
  for (size_t w = 0, b = 0, p = 0; p < outDims.size(); ++p) {
    if (w < offsetDims.size() && offsetDims[w] == static_cast<int64_t>(p))
      outDims[p] = sliceSizes[windowDims[w++]];
    else
      outDims[p] = batch[b++];
  }
  const std::string &t = type;
  std::string body = "  %op = " + t + shapeText("", dims) + " parameter(0)\n" +
                     "  %idx = " + indexType + shapeText("", indexDims) +
                     " parameter(1)\n";
  std::string operand = "%op";
  if (chance(30)) {
    body += "  %o = " + t + shapeText("", dims) + " negate(%op)\n";
    operand = "%o";
  }
  bool epilogue = chance(30);
  body +=
      std::string(epilogue ? "  %g = " : "  ROOT %g = ") + t +
      shapeText("", outDims) + " gather(" + operand +
      ", %idx), offset_dims=" + listText(offsetDims) +
      ", collapsed_slice_dims=" + listText(collapsed) +
      ", start_index_map=" + listText(startIndexMap) +
      (batching.empty()
           ? std::string()
           : ", operand_batching_dims=" + listText(batching) +
                 ", start_indices_batching_dims=" + listText(indicesBatching)) +
      ", index_vector_dim=" + std::to_string(vectorDim) +
      ", slice_sizes=" + listText(sliceSizes) + "\n";
  if (epilogue)
    body += "  ROOT %a = " + t + shapeText("", outDims) + " abs(%g)\n";
  r.text = "HloModule m\nENTRY e {\n" + body + "}\n";
  return r;
}

/// Index values in [-2, maxDim + 1] (for unsigned types -1 and -2 are the
/// largest values, a u64 past INT64_MAX included): most starts are clamped.
Literal indexValues(const Shape &shape, int64_t maxDim, std::mt19937 &rng) {
  Literal literal(shape);
  for (int64_t i = 0; i < literal.elementCount(); ++i)
    literal.setInt(i, static_cast<int64_t>(rng() % (maxDim + 4)) - 2);
  return literal;
}

TEST(GatherEmitterTest, DimensionNumbersAsTheEvaluatorReadsThem) {
  auto module = parseTestModule(
      "HloModule m\nENTRY e {\n  %x = f32[10,5] parameter(0)\n"
      "  %i = s32[6,1] parameter(1)\n"
      "  ROOT %g = f32[6,5] gather(%x, %i), offset_dims={1}, "
      "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
      "slice_sizes={1,5}\n}\n");
  ASSERT_TRUE(module);
  Expected<GatherDimensions> g = getGatherDimensions(*module->entry()->root());
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->offsetDims, (std::vector<int64_t>{1}));
  EXPECT_EQ(g->startIndexMap, (std::vector<int64_t>{0}));
  EXPECT_EQ(g->sliceSizes, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(g->indexVectorDim, 1);
  EXPECT_EQ(g->windowDims, (std::vector<int64_t>{1}));
  EXPECT_EQ(g->batchPositions, (std::vector<int64_t>{0}));
  EXPECT_FALSE(getGatherDimensions(*module->entry()->parameters()[0]));
}

TEST(GatherEmitterTest, RandomGathersMatchTheEvaluatorBitForBit) {
  std::mt19937 rng(71);
  const char *types[] = {"f32", "bf16", "s32", "f16", "s8"};
  const char *indexTypes[] = {"s32", "u32", "s64", "u64", "s8", "u8", "s16"};
  int checked = 0;
  for (int trial = 0; trial < 70; ++trial) {
    RandomGather r = randomGather(rng, types[trial % 5], indexTypes[trial % 7]);
    SCOPED_TRACE(r.text);
    auto module = parseTestModule(r.text);
    ASSERT_TRUE(module);
    Status problem = verifyHloModule(*module);
    ASSERT_TRUE(problem) << problem.error().message;
    std::vector<Literal> arguments = randomArguments(*module, 1300 + trial);
    arguments[1] = indexValues(arguments[1].shape(), r.maxDim, rng);
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
    ++checked;
  }
  EXPECT_EQ(checked, 70);
}

} // namespace
