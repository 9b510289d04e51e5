//===- LiteralTest.cpp - Literals: access, printing, physical buffers -----===//
#include "tessel/Hlo/Literal.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Layout/ShapeParser.h"
#include "tessel/Layout/TiledLayout.h"

#include "../ErrorText.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace tessel;

namespace {

Shape shape(const char *text) { return parseShape(text).value(); }

TEST(Literal, ElementAccessRoundsAndWraps) {
  Literal a(shape("bf16[2,3]"));
  a.setDouble({1, 2}, 0.79785);
  EXPECT_EQ(a.getDouble({1, 2}), 0.796875);
  EXPECT_EQ(a.toString(), "{ { 0, 0, 0 }, { 0, 0, 0.797 } }");
  Literal s(shape("s8[2]"));
  s.setInt(0, 200); // wraps to -56
  EXPECT_EQ(s.getInt(0), -56);
  s.setDouble(1, 1e9); // float -> int saturates
  EXPECT_EQ(s.getInt(1), 127);
  s.setDouble(1, std::nan(""));
  EXPECT_EQ(s.getInt(1), 0);
  Literal u(shape("u4[1]"));
  u.setInt(0, -1);
  EXPECT_EQ(u.getBits(0), 15u);
  Literal p(shape("pred[2]"));
  p.setDouble(0, 0.5);
  EXPECT_EQ(p.toString(), "{true, false}");
}

TEST(Literal, FloatsPrintWithTheFewestDigitsThatReadBack) {
  std::mt19937 rng(3);
  for (PrimitiveType type :
       {PrimitiveType::F32, PrimitiveType::BF16, PrimitiveType::F16,
        PrimitiveType::F64, PrimitiveType::F8E4M3FN}) {
    Literal x(Shape(type, {}));
    for (int i = 0; i < 2000; ++i) {
      x.setBits(0, rng() & ((uint64_t(1) << std::min(bitWidth(type), 32)) - 1));
      if (type == PrimitiveType::F64)
        x.setDouble(0, std::ldexp(static_cast<double>(rng()), -20));
      Expected<Literal> back = parseLiteral(x.toString(), x.shape());
      ASSERT_TRUE(back) << back.error().message;
      if (std::isnan(x.getDouble(0)))
        EXPECT_TRUE(std::isnan(back->getDouble(0)));
      else
        EXPECT_EQ(back->getBits(0), x.getBits(0)) << x.toString();
    }
  }
  EXPECT_EQ(formatFloat(PrimitiveType::F32, 0.1f), "0.1");
  EXPECT_EQ(formatFloat(PrimitiveType::F32, -INFINITY), "-inf");
}

TEST(Literal, ParsesEveryElementType) {
  for (PrimitiveType type : kArrayTypes) {
    Shape s(type, {2});
    std::string text = type == PrimitiveType::Pred ? "{true, false}"
                       : isComplex(type)           ? "{(1, 2), (-0.5, 0)}"
                                                   : "{1, 0}";
    Expected<Literal> literal = parseLiteral(text, s);
    ASSERT_TRUE(literal) << primitiveTypeName(type) << ": "
                         << literal.error().message;
    EXPECT_EQ(literal->toString(), text) << primitiveTypeName(type);
  }
}

TEST(Literal, ParseErrorsSayWhatWasExpected) {
  auto error = [](const char *text, const char *s) {
    Expected<Literal> l = parseLiteral(text, shape(s));
    return l ? std::string("ok") : columnText(l.error());
  };
  EXPECT_EQ(error("{1, 2, 3}", "f32[2]"),
            "6: too many elements in dim 0, expected 2");
  EXPECT_EQ(error("{1}", "f32[2]"),
            "3: expected ',' and element 1 of 2 in dim 0 but found '}'");
  EXPECT_EQ(error("300", "s8[]"), "1: integer 300 is out of range for s8");
  EXPECT_EQ(error("-1", "u32[]"), "1: integer -1 is out of range for u32");
  EXPECT_EQ(error("1.5", "s32[]"),
            "2: expected the end of the literal but found '.5'");
  EXPECT_EQ(error("x", "f32[]"), "1: expected a number for f32 but found 'x'");
  EXPECT_EQ(error("maybe", "pred[]"),
            "1: expected true or false for pred but found 'maybe'");
  EXPECT_EQ(error("{...}", "f32[3]"), "ok");
  EXPECT_EQ(error("18446744073709551615", "u64[]"), "ok");
  EXPECT_EQ(error("-9223372036854775808", "s64[]"), "ok");
  EXPECT_EQ(error("9223372036854775808", "s64[]"),
            "1: integer 9223372036854775808 is out of range for s64");
}

/// Physical buffers agree with TiledLayout::offset on every element.
TEST(Literal, PhysicalBuffersFollowTheLayout) {
  for (const char *text :
       {"f32[3,5]{1,0:T(2,2)}", "bf16[8,8]{1,0:T(2,4)(2,1,1,1)}",
        "s32[2,3,4]{0,2,1}", "f32[5]{0:T(8,128)}", "u8[3,7]{0,1:T(4,4)L(64)}",
        // Row-major (one copy) and untiled permutations (by strides).
        "f32[4,3]{1,0}", "s64[]", "s8[0,3]{1,0}", "u16[3,1,5]{2,0,1}",
        "s32[2,3,4,5]{1,3,0,2}", "u8[6]{0}", "f32[3,4]{0,1}"}) {
    Shape s = shape(text);
    Literal x(Shape(s.elementType, s.dims));
    for (int64_t i = 0; i < x.elementCount(); ++i)
      x.setInt(i, i + 1);
    Expected<std::string> buffer = toPhysical(x, s);
    ASSERT_TRUE(buffer) << buffer.error().message;
    TiledLayout layout = TiledLayout::get(s).value();
    ASSERT_EQ(static_cast<int64_t>(buffer->size()),
              layout.physicalElements() * x.elementBytes());
    for (int64_t offset = 0; offset < layout.physicalElements(); ++offset) {
      std::optional<std::vector<int64_t>> index = layout.logicalIndex(offset);
      uint64_t stored = 0;
      std::memcpy(&stored, &(*buffer)[offset * x.elementBytes()],
                  x.elementBytes());
      EXPECT_EQ(stored, index ? x.getBits(x.linearIndex(*index)) : 0)
          << text << " " << offset;
    }
    Expected<Literal> back = fromPhysical(*buffer, s);
    ASSERT_TRUE(back) << back.error().message;
    back->setLayout(std::nullopt);
    EXPECT_EQ(*back, x) << text;
  }
  Literal packed(shape("s4[2,2]"));
  Expected<std::string> refused =
      toPhysical(packed, shape("s4[2,2]{1,0:E(4)}"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "packed layout s4[2,2]{1,0:E(4)} is not "
                                     "supported for buffers, expected whole "
                                     "bytes");
  EXPECT_FALSE(fromPhysical("abc", shape("f32[2,2]")));
}

TEST(Literal, FigureOneOfTheTiledLayoutDoc) {
  // f32[3,5]{1,0:T(2,2)}: element (2,3) lands at offset 17, 24 slots.
  Literal x(shape("f32[3,5]"));
  x.setDouble({2, 3}, 42);
  std::string buffer = toPhysical(x, shape("f32[3,5]{1,0:T(2,2)}")).value();
  ASSERT_EQ(buffer.size(), 24u * 4);
  float at17;
  std::memcpy(&at17, &buffer[17 * 4], 4);
  EXPECT_EQ(at17, 42.0f);
}

} // namespace
