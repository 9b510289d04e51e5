//===- ShapeParserTest.cpp - Parsing and printing shapes ------------------===//
#include "tessel/Layout/ShapeParser.h"

#include "../ErrorText.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

std::string roundTrip(const std::string &text) {
  Expected<Shape> shape = parseShape(text);
  if (!shape)
    return "error: " + columnText(shape.error());
  return shape->toString();
}

std::string errorOf(const std::string &text) {
  Expected<Shape> shape = parseShape(text);
  if (shape)
    return "parsed: " + shape->toString();
  return columnText(shape.error());
}

TEST(ShapeParser, CanonicalFormsRoundTrip) {
  for (const char *text : {
           "f32[3,5]{1,0:T(2,2)}",
           "bf16[4,8]{1,0:T(2,4)(2,1)}",
           "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
           "f32[]",
           "f32[]{:T(128)}",
           "pred[32,256]{1,0:T(32,128)(32,1)E(1)}",
           "s4[16,256]{0,1:T(8,128)(8,1)L(1024)E(4)S(1)}",
           "f32[8]{0:#(s32)*(u64)}",
           "f32[4,6]{1,0:SC(0:2)(1:1,3)}",
           "f32[4]{0:P(f32[4]{0})M(16)}",
           "(f32[2]{0}, s32[])",
           "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])",
           "f32[<=4,?,3]{2,1,0}",
           "token[]",
           "()",
       })
    EXPECT_EQ(roundTrip(text), text);
}

TEST(ShapeParser, NormalizesCaseSpacesAndAttributeOrder) {
  EXPECT_EQ(roundTrip(" F32[3, 5]{ 1, 0 : T(2, 2) } "), "f32[3,5]{1,0:T(2,2)}");
  EXPECT_EQ(roundTrip("BF16[8,256]{1,0:E(16)T(8,128)(2,1)}"),
            "bf16[8,256]{1,0:T(8,128)(2,1)E(16)}");
  EXPECT_EQ(roundTrip("s32[]{}"), "s32[]");
  EXPECT_EQ(roundTrip("(f32[2]{0},s32[]{})"), "(f32[2]{0}, s32[])");
}

TEST(ShapeParser, ErrorsNameTheColumnAndWhatWasExpected) {
  EXPECT_EQ(errorOf("f33[3]"),
            "1: unknown element type 'f33', expected one of pred, s2, s4, s8, "
            "s16, s32, s64, u2, u4, u8, u16, u32, u64, f16, bf16, f32, f64, "
            "c64, c128, f8e5m2, f8e4m3fn, f8e4m3b11fnuz, f8e5m2fnuz, "
            "f8e4m3fnuz");
  EXPECT_EQ(errorOf("f32[3,5]{1,1}"),
            "12: minor_to_major {1,1} repeats dim 1, expected a permutation of "
            "0..1");
  EXPECT_EQ(errorOf("f32[3,5]{2,0}"),
            "10: minor_to_major {2,0} names dim 2, expected a permutation of "
            "0..1");
  EXPECT_EQ(errorOf("f32[3,5]{0}"),
            "9: layout {0} has 1 dims but the shape has rank 2");
  // Found by the shape fuzzer: the layout was accepted and then dropped.
  EXPECT_EQ(errorOf("token[]{4}"),
            "8: a token shape has no layout, expected token[]");
  std::string manyDims = "f32[1";
  for (int d = 1; d < 1025; ++d)
    manyDims += ",1";
  EXPECT_EQ(errorOf(manyDims + "]"),
            "2053: more than 1024 dims, the most tessel handles");
  EXPECT_EQ(errorOf("f32[3,5]{1,0:T(0,2)}"),
            "16: tile dim 0 is invalid, expected a positive size or '*'");
  EXPECT_EQ(errorOf("f32[3,5]{1,0:T(2,-1)}"),
            "18: tile dim -1 is invalid, expected a positive size or '*' "
            "(write '*' to combine dims)");
  EXPECT_EQ(errorOf("f32[3,5]{1,0:T(2,*)}"),
            "18: '*' cannot be the last dim of tile (2,*): the most minor dim "
            "has no more minor dim to combine into");
  EXPECT_EQ(errorOf("f32[3,5]{1,0:T()}"),
            "15: empty tile (), expected at least one tile dim");
  EXPECT_EQ(errorOf("f32[3,5"), "8: expected ',' or ']' in the dims but found "
                                "the end of the input");
  EXPECT_EQ(errorOf("f32[3,-5]"),
            "7: expected a dimension size (a non-negative integer) but found "
            "'-'");
  EXPECT_EQ(errorOf("f32[3,5]{1,0:Q(2)}"),
            "14: unknown layout attribute 'Q', expected one of T L # * E S SC "
            "P M");
  EXPECT_EQ(
      errorOf("f32[3,5]{1,0:L(0)}"),
      "14: L(0) is invalid, expected a tail padding alignment of at least "
      "1");
  EXPECT_EQ(errorOf("s4[3,5]{1,0:E(3)}"),
            "13: E(3) does not fit s4, expected an element size from 4 to 8 "
            "bits");
  EXPECT_EQ(errorOf("f32[3]{0:T(2)T(4)}"),
            "14: attribute T appears twice in the layout");
  EXPECT_EQ(errorOf("f32[3]{0} x"), "11: unexpected 'x' after the shape");
  EXPECT_EQ(errorOf("f32[99999999999999999999]"),
            "5: a dimension size (a non-negative integer) is too large for 64 "
            "bits");
  EXPECT_EQ(errorOf("f32[4294967296,4294967296]"),
            "1: the physical size of f32[4294967296,4294967296] overflows 64 "
            "bits");
  EXPECT_EQ(errorOf("f32[2,2]{1,0:T(4294967296,4294967296)}"),
            "9: the physical size of f32[2,2]{1,0:T(4294967296,4294967296)} "
            "overflows 64 bits");
}

TEST(ShapeParser, ErrorsRenderWithACaret) {
  Expected<Shape> shape = parseShape("f32[3,5]{1,1}");
  ASSERT_FALSE(shape);
  EXPECT_EQ(renderError(shape.error().inSource("--shape")),
            "--shape:1:12: error: minor_to_major {1,1} repeats dim 1, "
            "expected a permutation of 0..1\n"
            "f32[3,5]{1,1}\n"
            "           ^");
  // An unknown element type is underlined whole.
  Expected<Shape> type = parseShape("  f33[2]");
  ASSERT_FALSE(type);
  std::string text = renderError(type.error());
  EXPECT_EQ(text.substr(text.find('\n')), "\n  f33[2]\n  ^~~");
  // A layout parsed alone points into its own text.
  Expected<Layout> layout =
      parseLayoutFor("{1,0:T(2,x)}", parseShape("f32[3,5]").value());
  ASSERT_FALSE(layout);
  EXPECT_EQ(layout.error().span->column, 10);
}

} // namespace
