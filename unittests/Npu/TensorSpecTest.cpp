//===- TensorSpecTest.cpp - Parsing and printing tensor specs -------------===//
#include "tessel/Npu/TensorSpec.h"

#include "../ErrorText.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

std::string roundTrip(const std::string &text) {
  Expected<TensorSpec> spec = parseTensorSpec(text);
  if (!spec)
    return "error: " + columnText(spec.error());
  Expected<TensorSpec> again = parseTensorSpec(printTensorSpec(*spec));
  EXPECT_TRUE(again && *again == *spec) << text;
  return printTensorSpec(*spec);
}

std::string errorOf(const std::string &text) {
  Expected<TensorSpec> spec = parseTensorSpec(text);
  return spec ? "parsed: " + printTensorSpec(*spec) : columnText(spec.error());
}

TEST(TensorSpec, CanonicalFormsRoundTrip) {
  for (const char *text : {
           "x=fp32[2,3,4,5]:aligned@2048",
           "w=int8[6,5,4,5]:aligned:4n@0",
           "m=fp32[2,40]:matrix(20)@4096",
           "m=fp32[2,40]:matrix",
           "s=fp32[2,5,3,4]:strides(120,56,16,2)",
           "fp32[2,3,4,5]:compact",
           "int16[3,5,4,5]:eu:2n@128",
           "fp32[1,1,1,1]:continuous",
       })
    EXPECT_EQ(roundTrip(text), text);
}

TEST(TensorSpec, NormalizesSpellings) {
  EXPECT_EQ(roundTrip(" X = F32 [ 2, 3,4,5 ] : ALIGNED @ 0x800 "),
            "X=fp32[2,3,4,5]:aligned@2048");
  EXPECT_EQ(roundTrip("fp32[2,3,4,5]"), "fp32[2,3,4,5]:aligned");
  EXPECT_EQ(roundTrip("s8[6,5,4,5]:4n:chip"), "int8[6,5,4,5]:eu:4n");
  EXPECT_EQ(roundTrip("f32[2,40]:matrix(w=8)"), "fp32[2,40]:matrix(8)");
  EXPECT_EQ(roundTrip("fp32[1,2,3,4]:strided(24,12,4,1)"),
            "fp32[1,2,3,4]:strides(24,12,4,1)");
  Expected<TensorSpec> spec = parseTensorSpec("m=fp32[2,40]:matrix(15)@64");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->desc.shape, (Dims4{2, 40, 1, 1}));
  EXPECT_EQ(spec->desc.matrixW, 15);
  EXPECT_EQ(spec->desc.address, 64);
}

TEST(TensorSpec, ErrorsNameTheColumn) {
  EXPECT_EQ(errorOf("fp33[1,2,3,4]"),
            "1: unknown element type 'fp33', expected one of fp32, fp16, "
            "bf16, fp64, int8, uint8, int16, uint16, int32, uint32, int64, "
            "uint64, bool");
  EXPECT_EQ(errorOf("fp32 2,3]"), "6: expected '[' after the element type, "
                                  "found '2'");
  EXPECT_EQ(errorOf("fp32[2,3,4]"), "5: 3 dimensions, expected 4 (N, C, H, W)");
  EXPECT_EQ(errorOf("fp32[2,3,4,5,6]"),
            "14: 5 dimensions, expected 4 (N, C, H, W)");
  EXPECT_EQ(errorOf("fp32[2,40,1,1]:matrix(8)"),
            "11: 4 dimensions, expected 2 (rows, cols) for a matrix");
  EXPECT_EQ(errorOf("fp32[2,0,4,5]"),
            "8: dimension 1 is 0, expected at least 1");
  EXPECT_EQ(errorOf("fp32[2,3,4,5]:alinged"),
            "15: unknown layout or storage mode 'alinged', expected aligned, "
            "eu, compact, "
            "continuous, matrix(W), strides(n,c,h,w), 4n, 2n or 2ic");
  EXPECT_EQ(errorOf("fp32[2,3,4,5]:aligned:compact"),
            "23: a second layout 'compact'");
  EXPECT_EQ(errorOf("int8[2,3,4,5]:4n:2n"), "18: a second storage mode '2n'");
  EXPECT_EQ(errorOf("fp32[2,3,4,5]:strides(1,2,3)"),
            "28: expected ',' between the 4 strides n,c,h,w, found ')'");
  EXPECT_EQ(errorOf("fp32[2,40]:matrix(41)"),
            "5: matrix W is 41, expected 1..40 (the number of columns)");
  EXPECT_EQ(errorOf("fp32[2,40]:matrix(0)"),
            "19: matrix W is 0, expected at least 1");
  EXPECT_EQ(errorOf("fp32[2,3,4,5]@"),
            "15: expected an address, found the end");
  EXPECT_EQ(errorOf("fp32[2,3,4,5] x"),
            "15: unexpected 'x', expected ':' or '@' or the end");
  EXPECT_EQ(errorOf("fp32[99999999999999999999,1,1,1]"),
            "6: a dimension is too large");
  EXPECT_EQ(errorOf(""), "1: expected an element type such as fp32, found the "
                         "end");
  EXPECT_EQ(errorOf("x="), "3: expected an element type such as fp32, found "
                           "the end");
}

TEST(TensorSpec, Lists) {
  Expected<std::vector<TensorSpec>> list = parseTensorSpecList(
      "a=fp32[2,3,4,5]@0; b=int8[6,5,4,5]:4n\n# a comment\n\n"
      "c=fp32[2,40]:matrix(20) # trailing\n");
  ASSERT_TRUE(list) << list.error().message;
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[1].name, "b");
  EXPECT_EQ((*list)[2].desc.matrixW, 20);
  EXPECT_EQ(lineColumnText(
                parseTensorSpecList("a=fp32[1,1,1,1]\nb=fp32[1,1,1]").error()),
            "2:7: 3 dimensions, expected 4 (N, C, H, W)");
  EXPECT_EQ(lineColumnText(
                parseTensorSpecList("a=fp32[1,1,1,1]; b=fp32[1,1,1]").error()),
            "1:24: 3 dimensions, expected 4 (N, C, H, W)");
  EXPECT_TRUE(parseTensorSpecList("")->empty());
}

TEST(TensorSpec, ListErrorsRenderTheirLine) {
  Expected<std::vector<TensorSpec>> list =
      parseTensorSpecList("a=fp32[1,1,1,1]\nb=fp32[1,1,1]\n");
  ASSERT_FALSE(list);
  EXPECT_EQ(renderError(list.error().inSource("specs.txt")),
            "specs.txt:2:7: error: 3 dimensions, expected 4 (N, C, H, W)\n"
            "b=fp32[1,1,1]\n"
            "      ^");
}

} // namespace
