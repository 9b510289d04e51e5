//===- HloComplexTest.cpp - c64/c128 arithmetic and reduce-precision ------===//
#include "EvaluatorTestHelpers.h"
#include "tessel/Hlo/LiteralComparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace tessel;
using namespace tessel::test;

namespace {

TEST(HloComplex, ArithmeticMatchesStdComplex) {
  const char *text = R"(HloModule m
ENTRY e {
  a = f32[64] parameter(0)
  b = f32[64] parameter(1)
  c = f32[64] parameter(2)
  d = f32[64] parameter(3)
  x = c64[64] complex(a, b)
  y = c64[64] complex(c, d)
  add = c64[64] add(x, y)
  sub = c64[64] subtract(x, y)
  mul = c64[64] multiply(x, y)
  div = c64[64] divide(x, y)
  exp = c64[64] exponential(x)
  abs = f32[64] abs(x)
  eq = pred[64] compare(x, x), direction=EQ
  ne = pred[64] compare(x, y), direction=NE
  re = f32[64] real(mul)
  im = f32[64] imag(mul)
  ROOT t = (c64[64], c64[64], c64[64], c64[64], c64[64], f32[64], pred[64], pred[64], f32[64], f32[64]) tuple(add, sub, mul, div, exp, abs, eq, ne, re, im)
}
)";
  std::mt19937 rng(64);
  std::uniform_real_distribution<float> value(-4, 4);
  std::vector<Literal> args;
  for (int k = 0; k < 4; ++k) {
    Literal l(Shape(PrimitiveType::F32, {64}));
    for (int i = 0; i < 64; ++i)
      l.setDouble(i, value(rng));
    args.push_back(std::move(l));
  }
  Expected<Literal> got = evaluateText(text, args);
  ASSERT_TRUE(got) << got.error().message;
  const std::vector<Literal> &r = got->tupleElements();
  for (int i = 0; i < 64; ++i) {
    std::complex<double> x(args[0].getDouble(i), args[1].getDouble(i));
    std::complex<double> y(args[2].getDouble(i), args[3].getDouble(i));
    std::complex<double> want[] = {x + y, x - y, x * y, x / y, std::exp(x)};
    for (int k = 0; k < 5; ++k) {
      std::complex<double> z = r[k].getComplex(i);
      double scale = 1e-6 * (1 + std::abs(want[k]));
      EXPECT_NEAR(z.real(), want[k].real(), scale) << "op " << k << " " << i;
      EXPECT_NEAR(z.imag(), want[k].imag(), scale) << "op " << k << " " << i;
    }
    EXPECT_NEAR(r[5].getDouble(i), std::abs(x), 1e-6 * (1 + std::abs(x)));
    EXPECT_EQ(r[6].getBits(i), 1u);
    EXPECT_EQ(r[7].getBits(i), x != y ? 1u : 0u);
    EXPECT_EQ(r[8].getDouble(i), r[2].getComplex(i).real());
    EXPECT_EQ(r[9].getDouble(i), r[2].getComplex(i).imag());
  }
}

TEST(HloComplex, ConvertsAndReducesComplexValues) {
  const char *text = R"(HloModule m
add {
  a = c128[] parameter(0)
  b = c128[] parameter(1)
  ROOT s = c128[] add(a, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  c = c64[3] convert(x)
  w = c128[3] convert(c)
  z = c128[] constant((0, 0))
  s = c128[] reduce(w, z), dimensions={0}, to_apply=add
  i = f32[3] imag(x)
  ROOT t = (c64[3], c128[], f32[3]) tuple(c, s, i)
}
)";
  EXPECT_EQ(evaluateToString(text, {"{1.5, -2, 4}"}),
            "({(1.5, 0), (-2, 0), (4, 0)}, (3.5, 0), {0, 0, 0})");
}

TEST(HloComplex, UnsignedIntegersConvertByTheirValue) {
  // u64 past INT64_MAX is a large positive real part, not a negative one.
  const char *text = R"(HloModule m
ENTRY e {
  x = u64[2] parameter(0)
  ROOT c = c128[2] convert(x)
}
)";
  EXPECT_EQ(evaluateToString(text, {"{18446744073709551615, 7}"}),
            "{(1.8446744073709552e+19, 0), (7, 0)}");
}

TEST(HloComplex, ComparisonSeesBothPartsOfC128) {
  // compareLiterals read 8 bytes of an element: c128's imaginary part
  // was never compared.
  Literal a(Shape(PrimitiveType::C128, {1})),
      b(Shape(PrimitiveType::C128, {1}));
  a.setComplex(0, {1.0, 2.0});
  b.setComplex(0, {1.0, std::nextafter(2.0, 3.0)});
  LiteralComparison c = compareLiterals(a, b);
  EXPECT_EQ(c.differing, 1);
  EXPECT_EQ(c.failing, 1);
  EXPECT_EQ(c.maxUlp, 1u);
  EXPECT_EQ(compareLiterals(a, b, ComparisonBound{1, 0}).failing, 0);
  // NaN parts are equal whatever their payload.
  a.setComplex(0, {1.0, std::nan("")});
  b.setComplex(0, {1.0, -std::nan("")});
  EXPECT_EQ(compareLiterals(a, b).differing, 0);
}

TEST(HloComplex, RandomLiteralsHaveRandomParts) {
  // Both parts random floats (not integers in the real part alone), some
  // of them special.
  for (PrimitiveType type : {PrimitiveType::C64, PrimitiveType::C128}) {
    Literal x = randomLiteral(Shape(type, {4096}), 1, /*specials=*/true);
    int fractional = 0, special = 0;
    for (int64_t i = 0; i < 4096; ++i) {
      std::complex<double> z = x.getComplex(i);
      for (double part : {z.real(), z.imag()}) {
        fractional += std::isfinite(part) && part != std::floor(part);
        special += !std::isfinite(part) || part == 0;
      }
    }
    EXPECT_GT(fractional, 7000);
    EXPECT_GT(special, 100);
  }
}

/// Rounds f32 values through a narrow type (Literal's exact conversion).
float through(PrimitiveType type, float v) {
  Literal l(Shape(type, {1}));
  l.setDouble(0, v);
  return static_cast<float>(l.getDouble(0));
}

TEST(HloReducePrecision, MatchesConversionThroughF16AndBf16) {
  // exponent_bits=5 mantissa_bits=10 is f16 without its subnormals;
  // 8, 7 is bf16 (with them: f32's exponent range is not reduced).
  const char *text = R"(HloModule m
ENTRY e {
  x = f32[4096] parameter(0)
  h = f32[4096] reduce-precision(x), exponent_bits=5, mantissa_bits=10
  b = f32[4096] reduce-precision(x), exponent_bits=8, mantissa_bits=7
  ROOT t = (f32[4096], f32[4096]) tuple(h, b)
}
)";
  std::mt19937 rng(5);
  Literal x(Shape(PrimitiveType::F32, {4096}));
  for (int i = 0; i < 4096; ++i) {
    // Random bits, most with exponents near f16's range.
    uint32_t bits = static_cast<uint32_t>(rng());
    if (i % 4 != 0)
      bits = (bits & 0x807fffffu) |
             ((static_cast<uint32_t>(112 + rng() % 34)) << 23);
    float v;
    std::memcpy(&v, &bits, 4);
    x.setFloat(i, v);
  }
  Expected<Literal> got = evaluateText(text, {x});
  ASSERT_TRUE(got) << got.error().message;
  for (int i = 0; i < 4096; ++i) {
    float v = x.getFloat(i);
    float h = got->tupleElements()[0].getFloat(i);
    float b = got->tupleElements()[1].getFloat(i);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(h) && std::isnan(b));
      continue;
    }
    float wantH = through(PrimitiveType::F16, v);
    if (std::fabs(wantH) < 6.103515625e-05f) // f16's smallest normal
      wantH = std::copysign(0.0f, v);
    EXPECT_EQ(std::memcmp(&h, &wantH, 4), 0)
        << v << " -> " << h << " vs " << wantH;
    float wantB = through(PrimitiveType::BF16, v);
    EXPECT_EQ(std::memcmp(&b, &wantB, 4), 0)
        << v << " -> " << b << " vs " << wantB;
  }
}

} // namespace
