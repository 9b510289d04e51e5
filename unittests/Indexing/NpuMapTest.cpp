//===- NpuMapTest.cpp - NPU local tensors as maps agree with the model ----===//
#include "tessel/Indexing/NpuMap.h"

#include "../Npu/RandomTensors.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

class NpuMapTest : public ::testing::Test {
protected:
  /// The first index where the map and LocalTensor::locate disagree, or "".
  std::string disagreement(const LocalTensor &tensor) {
    IndexingMap map = getNpuLocalMap(tensor, &context);
    if (std::optional<std::string> problem = map.verify())
      return *problem;
    const Dims4 &shape = tensor.shape();
    for (int64_t n = 0; n < shape[0]; ++n)
      for (int64_t c = 0; c < shape[1]; ++c)
        for (int64_t h = 0; h < shape[2]; ++h)
          for (int64_t w = 0; w < shape[3]; ++w) {
            NpuPlace place = tensor.locate({n, c, h, w});
            std::optional<llvm::SmallVector<int64_t>> got =
                map.evaluate({n, c, h, w}, {});
            if (!got || (*got)[0] != place.npu || (*got)[1] != place.offset)
              return "at (" + std::to_string(n) + ", " + std::to_string(c) +
                     ", " + std::to_string(h) + ", " + std::to_string(w) +
                     "): the model says npu " + std::to_string(place.npu) +
                     " byte " + std::to_string(place.offset) + "; " +
                     map.toString();
          }
    return "";
  }

  mlir::MLIRContext context;
};

TEST_F(NpuMapTest, SeedExample) {
  TensorDesc d;
  d.shape = {2, 3, 4, 5};
  d.address = 2048;
  Expected<LocalTensor> tensor = LocalTensor::get(NpuConfig::seed(), d);
  ASSERT_TRUE(tensor.ok()) << tensor.error().message;
  IndexingMap map = getNpuLocalMap(*tensor, &context);
  EXPECT_EQ(map.toString(),
            "(d0, d1, d2, d3) -> ((d1 + 2) mod 4, d0 * 256 + ((d1 + 2) "
            "floordiv 4) * 128 + d2 * 20 + d3 * 4), domain: d0 in [0, 1], d1 "
            "in [0, 2], d2 in [0, 3], d3 in [0, 4]");
  std::optional<llvm::SmallVector<int64_t>> place =
      map.evaluate({1, 2, 3, 4}, {});
  ASSERT_TRUE(place.has_value());
  EXPECT_EQ((*place)[0], 0);
  EXPECT_EQ((*place)[1], 460);
  EXPECT_EQ(disagreement(*tensor), "");
}

TEST_F(NpuMapTest, AtAddressZeroTheNpuIsTheChannel) {
  TensorDesc d;
  d.shape = {2, 3, 4, 5};
  d.layout = NpuLayout::Compact;
  Expected<LocalTensor> tensor = LocalTensor::get(NpuConfig::seed(), d);
  ASSERT_TRUE(tensor.ok()) << tensor.error().message;
  // One channel per npu: the slot is always 0 and drops out.
  EXPECT_EQ(getNpuLocalMap(*tensor, &context).toString(),
            "(d0, d1, d2, d3) -> (d1, d0 * 80 + d2 * 20 + d3 * 4), domain: "
            "d0 in [0, 1], d1 in [0, 2], d2 in [0, 3], d3 in [0, 4]");
}

TEST_F(NpuMapTest, PackedAndMatrix) {
  TensorDesc packed;
  packed.shape = {6, 5, 2, 3};
  packed.type = PrimitiveType::S8;
  packed.mode = StorageMode::N4;
  packed.address = 1024 + 128;
  Expected<LocalTensor> tensor = LocalTensor::get(NpuConfig::seed(), packed);
  ASSERT_TRUE(tensor.ok()) << tensor.error().message;
  EXPECT_EQ(disagreement(*tensor), "");
  TensorDesc matrix;
  matrix.shape = {3, 10, 1, 1};
  matrix.layout = NpuLayout::Matrix;
  matrix.matrixW = 4;
  tensor = LocalTensor::get(NpuConfig::seed(), matrix);
  ASSERT_TRUE(tensor.ok()) << tensor.error().message;
  EXPECT_EQ(disagreement(*tensor), "");
}

TEST_F(NpuMapTest, AgreesWithTheModelOnGeneratedTensors) {
  std::mt19937_64 rng(2026);
  int checked = 0;
  for (int i = 0; i < 400; ++i) {
    NpuConfig config = npu_testing::randomConfig(rng);
    std::optional<LocalTensor> tensor =
        npu_testing::randomPlacedTensor(rng, config);
    if (!tensor)
      continue;
    ++checked;
    ASSERT_EQ(disagreement(*tensor), "")
        << config.toString() << " layout " << layoutName(tensor->layout())
        << " mode " << modeName(tensor->mode()) << " address "
        << tensor->desc().address;
  }
  EXPECT_GT(checked, 200);
}

TEST_F(NpuMapTest, Continuous) {
  IndexingMap map = getContinuousMap({2, 3, 4, 5}, 2, &context);
  EXPECT_EQ(map.toString(),
            "(d0, d1, d2, d3) -> (d0 * 120 + d1 * 40 + d2 * 10 + d3 * 2), "
            "domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 3], d3 in [0, 4]");
  Dims4 strides = continuousStrides({2, 3, 4, 5});
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t w = 0; w < 5; ++w)
          EXPECT_EQ((*map.evaluate({n, c, h, w}, {}))[0],
                    2 * (n * strides[0] + c * strides[1] + h * strides[2] +
                         w * strides[3]));
}

} // namespace
