//===- Float8Test.cpp - The f8 types in compiled kernels ------------------===//
//
// The five f8 types are bytes in the kernels, decoded to f32 to compute and
// encoded back (ScalarOps.cpp). Every bit pattern of each is converted to
// f32, f64, bf16 and the other f8 types, and f32 and f64 values around
// every rounding boundary (the midpoints between neighbours, one ulp
// either side, the overflow thresholds, NaN, infinities, zeros) are
// converted to each: bit for bit against the evaluator (FloatTypes.h's
// encodeFloat), with both launches. Arithmetic on f8 runs in the random
// fusions (RandomFusion.cpp).
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Hlo/FloatTypes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace tessel;

namespace {

const PrimitiveType kF8Types[] = {
    PrimitiveType::F8E5M2, PrimitiveType::F8E4M3FN, PrimitiveType::F8E4M3FNUZ,
    PrimitiveType::F8E4M3B11FNUZ, PrimitiveType::F8E5M2FNUZ};

/// f64 values around every rounding boundary of `type`.
std::vector<double> boundaryValues(PrimitiveType type) {
  std::vector<double> finite;
  for (uint64_t bits = 0; bits < 256; ++bits) {
    double v = decodeFloat(type, bits);
    if (std::isfinite(v))
      finite.push_back(v);
  }
  std::sort(finite.begin(), finite.end());
  finite.erase(std::unique(finite.begin(), finite.end()), finite.end());
  std::vector<double> values = {0.0,
                                -0.0,
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN(),
                                -std::numeric_limits<double>::quiet_NaN(),
                                1e30,
                                -1e30,
                                1e-30,
                                -1e-30};
  for (size_t i = 0; i < finite.size(); ++i) {
    double v = finite[i];
    values.push_back(v);
    if (i + 1 == finite.size()) {
      // Past the largest finite value: the overflow threshold is half a
      // quantum above it.
      double quantum = v - finite[i - 1];
      for (double k : {0.25, 0.5, 0.75, 1.0, 4.0})
        values.push_back(v + k * quantum);
      continue;
    }
    double mid = (v + finite[i + 1]) / 2;
    for (double x :
         {mid, std::nextafter(mid, -INFINITY), std::nextafter(mid, INFINITY),
          // One f32 ulp either side: an f64 that rounds to the
          // midpoint in f32 would round twice through f32.
          mid - std::fabs(mid) * 0x1p-30, mid + std::fabs(mid) * 0x1p-30})
      values.push_back(x);
  }
  return values;
}

Literal vectorOf(PrimitiveType type, const std::vector<double> &values) {
  Literal literal(Shape(type, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i)
    literal.setDouble(static_cast<int64_t>(i), values[i]);
  return literal;
}

TEST(Float8Test, EveryPatternConvertsAsTheEvaluator) {
  for (PrimitiveType type : kF8Types) {
    std::string t(primitiveTypeName(type));
    std::string text = "HloModule m\nENTRY e {\n  %p = " + t +
                       "[256] parameter(0)\n"
                       "  %a = f32[256] convert(%p)\n"
                       "  %b = f64[256] convert(%p)\n"
                       "  %c = bf16[256] convert(%p)\n"
                       "  %d = s32[256] convert(%p)\n"
                       "  %n = " +
                       t + "[256] negate(%p)\n";
    std::string tuple = "%a, %b, %c, %d, %n";
    std::string shapes =
        "f32[256], f64[256], bf16[256], s32[256], " + t + "[256]";
    for (PrimitiveType other : kF8Types) {
      if (other == type)
        continue;
      std::string o(primitiveTypeName(other));
      text += "  %" + o + " = " + o + "[256] convert(%p)\n";
      tuple += ", %" + o;
      shapes += ", " + o + "[256]";
    }
    text += "  ROOT %r = (" + shapes + ") tuple(" + tuple + ")\n}\n";
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    Literal patterns(Shape(type, {256}));
    for (int64_t i = 0; i < 256; ++i)
      patterns.setBits(i, static_cast<uint64_t>(i));
    std::vector<Literal> arguments;
    arguments.push_back(std::move(patterns));
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
  }
}

TEST(Float8Test, RoundingBoundariesConvertAsTheEvaluator) {
  for (PrimitiveType type : kF8Types) {
    std::string t(primitiveTypeName(type));
    std::vector<double> values = boundaryValues(type);
    std::string n = std::to_string(values.size());
    std::string text =
        "HloModule m\nENTRY e {\n  %x = f32[" + n +
        "] parameter(0)\n  %y = f64[" + n + "] parameter(1)\n  %z = bf16[" + n +
        "] parameter(2)\n  %a = " + t + "[" + n + "] convert(%x)\n  %b = " + t +
        "[" + n + "] convert(%y)\n  %c = " + t + "[" + n +
        "] convert(%z)\n  ROOT %r = (" + t + "[" + n + "], " + t + "[" + n +
        "], " + t + "[" + n + "]) tuple(%a, %b, %c)\n}\n";
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    std::vector<Literal> arguments;
    arguments.push_back(vectorOf(PrimitiveType::F32, values));
    arguments.push_back(vectorOf(PrimitiveType::F64, values));
    arguments.push_back(vectorOf(PrimitiveType::BF16, values));
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
  }
}

} // namespace
