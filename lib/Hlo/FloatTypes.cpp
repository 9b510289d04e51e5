//===- FloatTypes.cpp - Exact conversions of the small float types --------===//
#include "tessel/Hlo/FloatTypes.h"

#include <cassert>
#include <cmath>
#include <limits>

namespace tessel {

std::optional<FloatFormat> floatFormat(PrimitiveType type) {
  using Nan = FloatFormat::NanStyle;
  switch (type) {
  case PrimitiveType::F16:
    return FloatFormat{5, 10, 15, Nan::Ieee};
  case PrimitiveType::BF16:
    return FloatFormat{8, 7, 127, Nan::Ieee};
  case PrimitiveType::F8E5M2:
    return FloatFormat{5, 2, 15, Nan::Ieee};
  case PrimitiveType::F8E4M3FN:
    return FloatFormat{4, 3, 7, Nan::AllOnes};
  case PrimitiveType::F8E4M3FNUZ:
    return FloatFormat{4, 3, 8, Nan::NegativeZero};
  case PrimitiveType::F8E4M3B11FNUZ:
    return FloatFormat{4, 3, 11, Nan::NegativeZero};
  case PrimitiveType::F8E5M2FNUZ:
    return FloatFormat{5, 2, 16, Nan::NegativeZero};
  default:
    return std::nullopt;
  }
}

double decodeFloat(const FloatFormat &f, uint64_t bits) {
  int m = f.mantissaBits;
  uint64_t signBit = uint64_t(1) << (f.exponentBits + m);
  uint64_t expMax = (uint64_t(1) << f.exponentBits) - 1;
  uint64_t mantMask = (uint64_t(1) << m) - 1;
  bool negative = (bits & signBit) != 0;
  uint64_t exponent = (bits >> m) & expMax;
  uint64_t mantissa = bits & mantMask;
  double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.nanStyle) {
  case FloatFormat::NanStyle::Ieee:
    if (exponent == expMax) {
      if (mantissa != 0)
        return negative ? -nan : nan;
      return negative ? -HUGE_VAL : HUGE_VAL;
    }
    break;
  case FloatFormat::NanStyle::AllOnes:
    if (exponent == expMax && mantissa == mantMask)
      return negative ? -nan : nan;
    break;
  case FloatFormat::NanStyle::NegativeZero:
    if (negative && exponent == 0 && mantissa == 0)
      return nan;
    break;
  }
  double magnitude =
      exponent == 0
          ? std::ldexp(static_cast<double>(mantissa), 1 - f.bias - m)
          : std::ldexp(static_cast<double>(mantissa | (uint64_t(1) << m)),
                       static_cast<int>(exponent) - f.bias - m);
  return negative ? -magnitude : magnitude;
}

uint64_t encodeFloat(const FloatFormat &f, double value) {
  int m = f.mantissaBits;
  uint64_t signBit = uint64_t(1) << (f.exponentBits + m);
  uint64_t expMax = (uint64_t(1) << f.exponentBits) - 1;
  uint64_t mantMask = (uint64_t(1) << m) - 1;
  bool negative = std::signbit(value);
  uint64_t sign = negative ? signBit : 0;
  // The NaN and infinity patterns, and the largest finite magnitude.
  uint64_t nanBits, maxFinite;
  switch (f.nanStyle) {
  case FloatFormat::NanStyle::Ieee:
    nanBits = sign | (expMax << m) | (uint64_t(1) << (m - 1));
    maxFinite = ((expMax - 1) << m) | mantMask;
    break;
  case FloatFormat::NanStyle::AllOnes:
    nanBits = sign | (expMax << m) | mantMask;
    maxFinite = (expMax << m) | (mantMask - 1);
    break;
  case FloatFormat::NanStyle::NegativeZero:
  default:
    nanBits = signBit;
    maxFinite = (expMax << m) | mantMask;
    break;
  }
  uint64_t overflow = f.hasInfinity() ? (sign | (expMax << m)) : nanBits;
  if (std::isnan(value))
    return nanBits;
  if (std::isinf(value))
    return overflow;
  double magnitude = std::fabs(value);
  uint64_t encoded; // exponent and mantissa fields, without the sign
  if (magnitude == 0) {
    encoded = 0;
  } else {
    int exp2;
    std::frexp(magnitude, &exp2); // magnitude = frac * 2^exp2, frac in [.5,1)
    int unbiased = exp2 - 1;      // magnitude = 1.xxx * 2^unbiased
    int minNormal = 1 - f.bias;
    if (unbiased > minNormal + static_cast<int>(maxFinite >> m) + 1)
      return overflow; // far beyond the range; avoids huge quotients below
    // Quantum: the value of one unit in the last place at this exponent.
    int quantumExp = (unbiased < minNormal ? minNormal : unbiased) - m;
    double scaled = std::ldexp(magnitude, -quantumExp);
    double rounded = std::nearbyint(scaled); // ties to even (default mode)
    uint64_t units = static_cast<uint64_t>(rounded);
    if (unbiased < minNormal) {
      encoded = units; // subnormal; 2^m carries into the smallest normal
    } else {
      uint64_t field = static_cast<uint64_t>(unbiased + f.bias);
      // units is in [2^m, 2^(m+1)]; 2^(m+1) carries into the exponent.
      encoded = (field << m) + (units - (uint64_t(1) << m));
    }
  }
  if (encoded > maxFinite)
    return overflow;
  if (encoded == 0 && !f.hasNegativeZero())
    return 0;
  return sign | encoded;
}

double decodeFloat(PrimitiveType type, uint64_t bits) {
  std::optional<FloatFormat> format = floatFormat(type);
  assert(format && "decodeFloat of a type that is not a narrow float");
  return decodeFloat(*format, bits);
}

uint64_t encodeFloat(PrimitiveType type, double value) {
  std::optional<FloatFormat> format = floatFormat(type);
  assert(format && "encodeFloat of a type that is not a narrow float");
  return encodeFloat(*format, value);
}

} // namespace tessel
