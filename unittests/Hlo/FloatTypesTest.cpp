//===- FloatTypesTest.cpp - Exhaustive tests of the narrow float types ----===//
//
// Every bit pattern of bf16, f16 and the f8 types is decoded and compared
// with a simple independent reference; encoding is checked on every value,
// every midpoint between neighbours (ties go to even), points just beside
// the midpoints, overflow, NaN and zeros.
//
//===----------------------------------------------------------------------===//
#include "tessel/Hlo/FloatTypes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace tessel;

namespace {

constexpr PrimitiveType kNarrow[] = {
    PrimitiveType::F16,        PrimitiveType::BF16,
    PrimitiveType::F8E5M2,     PrimitiveType::F8E4M3FN,
    PrimitiveType::F8E4M3FNUZ, PrimitiveType::F8E4M3B11FNUZ,
    PrimitiveType::F8E5M2FNUZ,
};

/// A decoder written from the format's definition, independently of
/// decodeFloat: sign * 2^(e - bias) * 1.m, or 2^(1 - bias) * 0.m.
double referenceDecode(PrimitiveType type, uint32_t bits) {
  int e, m, bias;
  switch (type) {
  case PrimitiveType::F16:
    e = 5, m = 10, bias = 15;
    break;
  case PrimitiveType::BF16: {
    uint32_t wide = bits << 16;
    float f;
    std::memcpy(&f, &wide, 4);
    return f;
  }
  case PrimitiveType::F8E5M2:
    e = 5, m = 2, bias = 15;
    break;
  case PrimitiveType::F8E4M3FN:
    e = 4, m = 3, bias = 7;
    break;
  case PrimitiveType::F8E4M3FNUZ:
    e = 4, m = 3, bias = 8;
    break;
  case PrimitiveType::F8E4M3B11FNUZ:
    e = 4, m = 3, bias = 11;
    break;
  default: // F8E5M2FNUZ
    e = 5, m = 2, bias = 16;
    break;
  }
  int total = 1 + e + m;
  bool sign = (bits >> (total - 1)) & 1;
  uint32_t exponent = (bits >> m) & ((1u << e) - 1);
  uint32_t mantissa = bits & ((1u << m) - 1);
  bool fnuz = type == PrimitiveType::F8E4M3FNUZ ||
              type == PrimitiveType::F8E4M3B11FNUZ ||
              type == PrimitiveType::F8E5M2FNUZ;
  if (fnuz && bits == (1u << (total - 1)))
    return std::nan("");
  if (type == PrimitiveType::F8E4M3FN && (bits & 0x7f) == 0x7f)
    return std::nan("");
  bool ieee = type == PrimitiveType::F16 || type == PrimitiveType::F8E5M2;
  if (ieee && exponent == (1u << e) - 1)
    return mantissa ? std::nan("")
                    : (sign ? -std::numeric_limits<double>::infinity()
                            : std::numeric_limits<double>::infinity());
  double value = exponent == 0
                     ? mantissa * std::pow(2.0, 1 - bias - m)
                     : (1.0 + mantissa / std::pow(2.0, m)) *
                           std::pow(2.0, static_cast<int>(exponent) - bias);
  return sign ? -value : value;
}

bool sameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(FloatTypes, DecodeEveryPattern) {
  for (PrimitiveType type : kNarrow) {
    uint32_t count = 1u << floatFormat(type)->totalBits();
    for (uint32_t bits = 0; bits < count; ++bits)
      ASSERT_TRUE(
          sameValue(decodeFloat(type, bits), referenceDecode(type, bits)))
          << primitiveTypeName(type) << " bits " << bits;
  }
}

TEST(FloatTypes, EncodeRoundTripsEveryValue) {
  for (PrimitiveType type : kNarrow) {
    uint32_t count = 1u << floatFormat(type)->totalBits();
    for (uint32_t bits = 0; bits < count; ++bits) {
      double value = decodeFloat(type, bits);
      if (std::isnan(value))
        continue;
      ASSERT_EQ(encodeFloat(type, value), bits)
          << primitiveTypeName(type) << " value " << value;
    }
  }
}

/// Every finite non-negative value of a type, ascending, with its bits.
std::vector<std::pair<double, uint32_t>> positiveValues(PrimitiveType type) {
  std::vector<std::pair<double, uint32_t>> values;
  uint32_t count = 1u << floatFormat(type)->totalBits();
  for (uint32_t bits = 0; bits < count; ++bits) {
    double v = decodeFloat(type, bits);
    if (std::isfinite(v) && !std::signbit(v))
      values.push_back({v, bits});
  }
  std::sort(values.begin(), values.end());
  return values;
}

/// The reference encoder: the nearest finite value by brute force, ties to
/// the even pattern, beyond the top rounding boundary infinity or NaN.
uint32_t referenceEncode(PrimitiveType type,
                         const std::vector<std::pair<double, uint32_t>> &values,
                         double v) {
  FloatFormat f = *floatFormat(type);
  uint32_t signBit = 1u << (f.totalBits() - 1);
  bool negative = std::signbit(v);
  double a = std::fabs(v);
  double top = values.back().first;
  double topUlp = top - values[values.size() - 2].first;
  uint32_t sign = negative ? signBit : 0;
  // Past the largest finite value, or on the tie above it when rounding to
  // even goes up (the largest value has an odd mantissa).
  if (a > top + topUlp / 2 ||
      (a == top + topUlp / 2 && (values.back().second & 1)))
    return f.hasInfinity()
               ? sign | (((1u << f.exponentBits) - 1) << f.mantissaBits)
               : static_cast<uint32_t>(encodeFloat(type, NAN)) |
                     (f.nanStyle == FloatFormat::NanStyle::AllOnes ? sign : 0);
  auto it = std::lower_bound(values.begin(), values.end(),
                             std::make_pair(a, uint32_t(0)));
  uint32_t bits;
  if (it == values.end()) {
    bits = values.back().second;
  } else if (it->first == a || it == values.begin()) {
    bits = it->second;
  } else {
    auto below = it - 1;
    double dBelow = a - below->first, dAbove = it->first - a;
    if (dBelow < dAbove)
      bits = below->second;
    else if (dAbove < dBelow)
      bits = it->second;
    else
      bits = (below->second & 1) ? it->second : below->second;
  }
  if (bits == 0 && !f.hasNegativeZero())
    return 0;
  return sign | bits;
}

TEST(FloatTypes, EncodeMidpointsAndNeighboursLikeBruteForce) {
  for (PrimitiveType type : kNarrow) {
    std::vector<std::pair<double, uint32_t>> values = positiveValues(type);
    std::vector<double> probes;
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      double lo = values[i].first, hi = values[i + 1].first;
      double mid = lo + (hi - lo) / 2; // exact in double
      probes.push_back(mid);
      probes.push_back(std::nextafter(mid, 0.0));
      probes.push_back(std::nextafter(mid, HUGE_VAL));
    }
    double top = values.back().first;
    double ulp = top - values[values.size() - 2].first;
    for (double extra : {0.25, 0.5, 0.75, 1.0, 4.0, 1e6})
      probes.push_back(top + ulp * extra);
    probes.push_back(std::numeric_limits<double>::denorm_min());
    probes.push_back(1e300);
    for (double probe : probes)
      for (double v : {probe, -probe})
        ASSERT_EQ(encodeFloat(type, v), referenceEncode(type, values, v))
            << primitiveTypeName(type) << " value " << v;
  }
}

TEST(FloatTypes, EncodeRandomValuesLikeBruteForce) {
  std::mt19937_64 rng(42);
  for (PrimitiveType type : kNarrow) {
    std::vector<std::pair<double, uint32_t>> values = positiveValues(type);
    std::uniform_real_distribution<double> exponent(
        std::log2(values[1].first) - 2, std::log2(values.back().first) + 1);
    for (int i = 0; i < 20000; ++i) {
      double v = std::exp2(exponent(rng)) * (rng() & 1 ? 1 : -1);
      ASSERT_EQ(encodeFloat(type, v), referenceEncode(type, values, v))
          << primitiveTypeName(type) << " value " << v;
    }
  }
}

TEST(FloatTypes, SpecialValues) {
  double inf = std::numeric_limits<double>::infinity();
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(encodeFloat(PrimitiveType::BF16, 1.00390625), 0x3f80u);
  EXPECT_EQ(encodeFloat(PrimitiveType::BF16, 1.01171875), 0x3f82u);
  EXPECT_EQ(decodeFloat(PrimitiveType::F8E4M3FN, 0x7e), 448.0);
  EXPECT_EQ(encodeFloat(PrimitiveType::F8E4M3FN, 1000.0), 0x7fu);
  EXPECT_EQ(encodeFloat(PrimitiveType::F8E4M3FN, -inf), 0xffu);
  EXPECT_EQ(encodeFloat(PrimitiveType::F8E4M3FNUZ, -0.0), 0x00u);
  EXPECT_EQ(encodeFloat(PrimitiveType::F8E4M3FNUZ, nan), 0x80u);
  EXPECT_EQ(encodeFloat(PrimitiveType::F8E5M2, inf), 0x7cu);
  EXPECT_EQ(encodeFloat(PrimitiveType::F8E5M2, 1e9), 0x7cu);
  EXPECT_EQ(encodeFloat(PrimitiveType::F16, -0.0), 0x8000u);
  EXPECT_EQ(encodeFloat(PrimitiveType::F16, 65504.0), 0x7bffu);
  EXPECT_EQ(encodeFloat(PrimitiveType::F16, 65520.0), 0x7c00u); // tie: inf
  EXPECT_EQ(encodeFloat(PrimitiveType::F16, 65519.99), 0x7bffu);
  EXPECT_EQ(encodeFloat(PrimitiveType::F16, std::ldexp(1.0, -25)), 0u);
  EXPECT_EQ(encodeFloat(PrimitiveType::F16, std::ldexp(1.5, -25)), 1u);
  EXPECT_TRUE(std::isnan(decodeFloat(PrimitiveType::BF16, 0x7fc0)));
  EXPECT_EQ(encodeFloat(PrimitiveType::BF16, -nan) & 0x8000u, 0x8000u);
}

TEST(FloatTypes, Bf16FastPathsAgreeOnEveryPatternAndRandomFloats) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float f = bf16ToFloat(static_cast<uint16_t>(bits));
    ASSERT_TRUE(sameValue(f, decodeFloat(PrimitiveType::BF16, bits)));
    if (!std::isnan(f)) {
      ASSERT_EQ(floatToBf16(f), bits);
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 1000000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatToBf16(f), encodeFloat(PrimitiveType::BF16, f))
        << "float bits " << bits;
  }
}

#ifdef __FLT16_MAX__
TEST(FloatTypes, F16AgreesWithTheCompilersFloat16) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    _Float16 h;
    uint16_t b = static_cast<uint16_t>(bits);
    std::memcpy(&h, &b, 2);
    ASSERT_TRUE(sameValue(static_cast<double>(h),
                          decodeFloat(PrimitiveType::F16, bits)));
  }
  std::mt19937 rng(9);
  for (int i = 0; i < 1000000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f))
      continue;
    _Float16 h = static_cast<_Float16>(f);
    uint16_t expected;
    std::memcpy(&expected, &h, 2);
    ASSERT_EQ(encodeFloat(PrimitiveType::F16, f), expected) << f;
  }
}
#endif

} // namespace
