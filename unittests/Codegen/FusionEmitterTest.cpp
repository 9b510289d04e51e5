//===- FusionEmitterTest.cpp - The loop emitter's launch and thread map ---===//
//
// The loop emitter's contract: its map from (thread, block)[vector_index] to
// the output index hits every output element exactly once, for every shape,
// layout and target; and the seed's numbers for its GELU.
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/FusionEmitter.h"

#include "tessel/Indexing/BruteForce.h"
#include "tessel/Layout/ShapeParser.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

using namespace tessel;

namespace {

/// "" when `map` hits each index of `shape` exactly once, else the first
/// index hit another number of times.
std::string checkExactlyOnce(const IndexingMap &map, const Shape &shape) {
  Expected<std::vector<DomainPoint>> points = enumerateDomain(map, 1 << 22);
  if (!points)
    return points.error().message;
  std::map<std::vector<int64_t>, int> hits;
  for (const DomainPoint &point : *points) {
    std::vector<int64_t> index(point.results.begin(), point.results.end());
    for (size_t d = 0; d < index.size(); ++d)
      if (index[d] < 0 || index[d] >= shape.dims[d])
        return "an index outside the shape, dim " + std::to_string(d) + " = " +
               std::to_string(index[d]);
    ++hits[index];
  }
  int64_t n = 1;
  for (int64_t d : shape.dims)
    n *= d;
  for (const auto &[index, count] : hits)
    if (count != 1)
      return "an index is written " + std::to_string(count) + " times";
  if (static_cast<int64_t>(hits.size()) != n)
    return std::to_string(hits.size()) + " of " + std::to_string(n) +
           " elements are written";
  return "";
}

TEST(LoopEmitterTest, SeedGeluOnTheGpu) {
  mlir::MLIRContext context;
  Shape shape = *parseShape("bf16[6,512,4096]");
  LaunchConfig config = getLoopLaunchConfig(shape, Target::Gpu);
  EXPECT_EQ(config.numThreads, 128);
  EXPECT_EQ(config.numBlocks, 24576);
  EXPECT_EQ(config.vectorSize, 4);
  EXPECT_EQ(getLoopThreadToOutputMap(shape, config, &context).toString(),
            "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x "
            "floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + "
            "vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], "
            "vector_index in [0, 3]");
}

TEST(LoopEmitterTest, SeedGeluOnTheCpu) {
  mlir::MLIRContext context;
  Shape shape = *parseShape("bf16[6,512,4096]");
  LaunchConfig config = getLoopLaunchConfig(shape, Target::Cpu);
  EXPECT_EQ(config.numThreads, 4096);
  EXPECT_EQ(config.numBlocks, 3072);
  EXPECT_EQ(config.vectorSize, 1);
}

TEST(LoopEmitterTest, RowReductionsSpreadOverBlocks) {
  // A row reduction's output is small, but each element reads a row: on
  // the CPU it gets at least 64 blocks, and the map still writes every
  // element exactly once.
  mlir::MLIRContext context;
  for (const char *text : {"f32[8192]", "f32[4096]", "f32[1000]", "f32[3,300]",
                           "f32[64,2]{0,1}"}) {
    SCOPED_TRACE(text);
    Shape shape = *parseShape(text);
    int64_t n = 1;
    for (int64_t d : shape.dims)
      n *= d;
    LaunchConfig config = getLoopLaunchConfig(shape, Target::Cpu, 4096);
    EXPECT_GE(config.numBlocks, std::min<int64_t>(64, n / 16)) << text;
    EXPECT_EQ(config.numThreads % 16 == 0 || config.numThreads == n, true);
    IndexingMap map = getLoopThreadToOutputMap(shape, config, &context);
    EXPECT_EQ(checkExactlyOnce(map, shape), "") << map.toString();
  }
  // Without work per element (elementwise), the blocks stay as large.
  EXPECT_EQ(
      getLoopLaunchConfig(*parseShape("f32[8192]"), Target::Cpu).numBlocks, 1);
  // On the GPU an element that reduces a row gets a thread of its own (a
  // row each, not four), in blocks small enough for 256 of them.
  for (const char *text : {"f32[8192]", "f32[65536]", "f32[1000]", "f32[3,300]",
                           "f32[64,2]{0,1}", "f32[5]"}) {
    SCOPED_TRACE(text);
    Shape shape = *parseShape(text);
    int64_t n = 1;
    for (int64_t d : shape.dims)
      n *= d;
    LaunchConfig config = getLoopLaunchConfig(shape, Target::Gpu, 4096);
    EXPECT_EQ(config.vectorSize, 1);
    EXPECT_LE(config.numThreads, 128);
    EXPECT_GE(config.numBlocks, std::min<int64_t>(256, n / 32));
    IndexingMap map = getLoopThreadToOutputMap(shape, config, &context);
    EXPECT_EQ(checkExactlyOnce(map, shape), "") << map.toString();
  }
  LaunchConfig gpu =
      getLoopLaunchConfig(*parseShape("f32[8192]"), Target::Gpu, 4096);
  EXPECT_EQ(gpu.numThreads, 32);
  EXPECT_EQ(gpu.numBlocks, 256);
  // A window or a contraction (64 per element) keeps 4 elements a thread.
  EXPECT_EQ(
      getLoopLaunchConfig(*parseShape("f32[8192]"), Target::Gpu, 64).vectorSize,
      4);
}

TEST(LoopEmitterTest, SmallShapesExactlyOnce) {
  mlir::MLIRContext context;
  for (const char *text :
       {"f32[]", "f32[1]", "f32[7]", "f32[130]", "bf16[3,5]", "s8[2,3,4]",
        "f32[3,5]{0,1}", "f32[2,3,4]{0,2,1}", "f32[129,3]", "pred[5,1,7]",
        "f32[3,5]{1,0:T(2,2)}", "bf16[9,300]{1,0:T(8,128)(2,1)}",
        "f32[1,1,1,1]", "f32[0,3]"}) {
    Shape shape = *parseShape(text);
    for (Target target : {Target::Cpu, Target::Gpu}) {
      SCOPED_TRACE(std::string(text) +
                   (target == Target::Cpu ? " on the CPU" : " on the GPU"));
      LaunchConfig config = getLoopLaunchConfig(shape, target);
      IndexingMap map = getLoopThreadToOutputMap(shape, config, &context);
      int64_t n = 1;
      for (int64_t d : shape.dims)
        n *= d;
      if (n == 0)
        continue; // nothing to write; the launch is one empty block
      EXPECT_EQ(checkExactlyOnce(map, shape), "") << map.toString();
      EXPECT_GE(config.numThreads * config.numBlocks * config.vectorSize, n);
    }
  }
}

TEST(LoopEmitterTest, RandomShapesAndLayoutsExactlyOnce) {
  mlir::MLIRContext context;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    int rank = static_cast<int>(rng() % 5);
    std::vector<int64_t> dims;
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) {
      // Mostly small dims, sometimes one that is not a multiple of 4 or
      // larger than a block.
      int64_t size = rng() % 4 == 0 ? 1 + rng() % 300 : 1 + rng() % 9;
      if (n * size > 200000)
        size = 1;
      dims.push_back(size);
      n *= size;
    }
    std::vector<int64_t> minorToMajor(rank);
    std::iota(minorToMajor.begin(), minorToMajor.end(), 0);
    std::shuffle(minorToMajor.begin(), minorToMajor.end(), rng);
    Shape shape(PrimitiveType::F32, dims);
    shape.layout = Layout();
    shape.layout->minorToMajor = minorToMajor;
    for (Target target : {Target::Cpu, Target::Gpu}) {
      SCOPED_TRACE(shape.toString() +
                   (target == Target::Cpu ? " on the CPU" : " on the GPU"));
      LaunchConfig config = getLoopLaunchConfig(shape, target);
      IndexingMap map = getLoopThreadToOutputMap(shape, config, &context);
      ASSERT_EQ(checkExactlyOnce(map, shape), "") << map.toString();
      if (target == Target::Gpu) {
        EXPECT_LE(config.numThreads, 128);
      }
    }
  }
}

} // namespace
