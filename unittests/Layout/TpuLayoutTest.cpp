//===- TpuLayoutTest.cpp - The tilings a TPU compiler picks ---------------===//
#include "tessel/Layout/TpuLayout.h"
#include "tessel/Layout/ShapeParser.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

std::string tpu(const std::string &text, bool packedPred = false) {
  Expected<Shape> shape = parseShape(text);
  EXPECT_TRUE(shape) << shape.error().message;
  Expected<TpuLayoutChoice> choice = chooseTpuLayout(*shape, {packedPred});
  if (!choice)
    return "error: " + choice.error().message;
  return choice->shape.toString();
}

TEST(TpuLayout, TheTableOfTheDocument) {
  EXPECT_EQ(tpu("f32[64,300]"), "f32[64,300]{1,0:T(8,128)}");
  EXPECT_EQ(tpu("f32[2,300]"), "f32[2,300]{1,0:T(2,128)}");
  EXPECT_EQ(tpu("f32[1,300]"), "f32[1,300]{1,0:T(2,128)}");
  EXPECT_EQ(tpu("f32[3,300]"), "f32[3,300]{1,0:T(4,128)}");
  EXPECT_EQ(tpu("s32[4,7]"), "s32[4,7]{1,0:T(4,128)}");
  EXPECT_EQ(tpu("bf16[64,300]"), "bf16[64,300]{1,0:T(8,128)(2,1)}");
  EXPECT_EQ(tpu("bf16[3,300]"), "bf16[3,300]{1,0:T(4,128)(2,1)}");
  EXPECT_EQ(tpu("f16[2,300]"), "f16[2,300]{1,0:T(2,128)(2,1)}");
  EXPECT_EQ(tpu("s8[64,300]"), "s8[64,300]{1,0:T(8,128)(4,1)}");
  EXPECT_EQ(tpu("s8[2,300]"), "s8[2,300]{1,0:T(4,128)(4,1)}");
  EXPECT_EQ(tpu("pred[64,300]"), "pred[64,300]{1,0:T(8,128)(4,1)}");
  EXPECT_EQ(tpu("pred[64,300]", true), "pred[64,300]{1,0:T(32,128)(32,1)E(1)}");
  EXPECT_EQ(tpu("s4[64,300]"), "s4[64,300]{1,0:T(8,128)(8,1)E(4)}");
  EXPECT_EQ(tpu("u2[64,300]"), "u2[64,300]{1,0:T(16,128)(16,1)E(2)}");
  EXPECT_EQ(tpu("f64[64,300]"), "f64[64,300]{1,0:T(8,128)}");
}

TEST(TpuLayout, OurChoicesForRankZeroAndOne) {
  EXPECT_EQ(tpu("f32[]"), "f32[]");
  EXPECT_EQ(tpu("f32[100]"), "f32[100]{0:T(128)}");
  EXPECT_EQ(tpu("f32[5000]"), "f32[5000]{0:T(1024)}");
  EXPECT_EQ(tpu("bf16[4096]"), "bf16[4096]{0:T(1024)(128)(2,1)}");
  EXPECT_EQ(tpu("s8[129]"), "s8[129]{0:T(1024)(128)(4,1)}");
}

TEST(TpuLayout, KeepsTheDimOrderAndHigherDims) {
  // The second-minor dim is the physical one: dim 0 of size 3 here.
  EXPECT_EQ(tpu("f32[3,300]{0,1}"), "f32[3,300]{0,1:T(8,128)}");
  EXPECT_EQ(tpu("f32[300,3]{0,1}"), "f32[300,3]{0,1:T(4,128)}");
  EXPECT_EQ(tpu("bf16[2,5,64,300]"), "bf16[2,5,64,300]{3,2,1,0:T(8,128)(2,1)}");
  EXPECT_EQ(tpu("f32[3,300]{1,0:T(2,2)}"), "f32[3,300]{1,0:T(4,128)}");
}

TEST(TpuLayout, ExplainsAndRejects) {
  Expected<TpuLayoutChoice> choice =
      chooseTpuLayout(*parseShape("bf16[3,300]"));
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->reason,
            "the second-minor dim has only 3 rows, so a compact 4 x 128 tile "
            "wastes less than 8 x 128; 2 bf16 values share one 32-bit word, "
            "taken from 2 consecutive rows (the (2,1) tile): moving data "
            "across rows is cheap on a TPU, across lanes it is not");
  EXPECT_EQ(tpu("(f32[2])"),
            "error: a TPU layout needs an array shape, got (f32[2])");
  EXPECT_EQ(tpu("f32[<=4,3]"),
            "error: a TPU layout needs static dims, got f32[<=4,3]");
}

} // namespace
