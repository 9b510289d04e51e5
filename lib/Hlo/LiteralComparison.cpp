//===- LiteralComparison.cpp - Arrays compared element by element ---------===//
#include "tessel/Hlo/LiteralComparison.h"

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <random>

namespace tessel {

uint64_t ulpDistance(uint64_t a, uint64_t b, int bits) {
  uint64_t sign = uint64_t(1) << (bits - 1);
  auto position = [&](uint64_t x) -> int64_t {
    int64_t magnitude = static_cast<int64_t>(x & (sign - 1));
    return (x & sign) ? -magnitude : magnitude;
  };
  int64_t d = position(a) - position(b);
  return d < 0 ? static_cast<uint64_t>(-d) : static_cast<uint64_t>(d);
}

namespace {

/// The parts of element `i` compared as floats: one (a float) or two (the
/// real and imaginary parts of a complex), as values and raw bits.
struct Parts {
  int count = 1;
  double value[2] = {0, 0};
  uint64_t bits[2] = {0, 0};
};

Parts partsOf(const Literal &x, int64_t i) {
  Parts p;
  if (!isComplex(x.elementType())) {
    p.value[0] = x.getDouble(i);
    p.bits[0] = x.getBits(i);
    return p;
  }
  p.count = 2;
  std::complex<double> z = x.getComplex(i);
  p.value[0] = z.real();
  p.value[1] = z.imag();
  for (int k = 0; k < 2; ++k) {
    if (x.elementType() == PrimitiveType::C64) {
      float f = static_cast<float>(p.value[k]);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      p.bits[k] = b;
    } else {
      std::memcpy(&p.bits[k], &p.value[k], 8);
    }
  }
  return p;
}

} // namespace

LiteralComparison compareLiterals(const Literal &got, const Literal &want,
                                  const ComparisonBound &bound) {
  LiteralComparison c;
  PrimitiveType type = want.elementType();
  // A complex element compares part by part, each as a float of half its
  // width: the element's distance is the larger of the two.
  bool complex = isComplex(type);
  bool floating = isFloat(type) || complex;
  int bits = complex ? bitWidth(type) / 2 : bitWidth(type);
  double scale = 1;
  if (floating && bound.relativeToMax > 0)
    for (int64_t i = 0; i < want.elementCount(); ++i) {
      Parts w = partsOf(want, i);
      for (int k = 0; k < w.count; ++k)
        if (std::isfinite(w.value[k]))
          scale = std::max(scale, std::fabs(w.value[k]));
    }
  for (int64_t i = 0; i < want.elementCount(); ++i) {
    if (!floating) {
      if (got.getBits(i) == want.getBits(i))
        continue;
      ++c.differing;
      ++c.failing;
      if (c.worst < 0)
        c.worst = i;
      continue;
    }
    Parts g = partsOf(got, i), w = partsOf(want, i);
    bool differs = false, fails = false;
    for (int k = 0; k < w.count; ++k) {
      if (g.bits[k] == w.bits[k])
        continue;
      double gd = g.value[k], wd = w.value[k];
      if (std::isnan(gd) && std::isnan(wd))
        continue;
      differs = true;
      uint64_t ulp = std::isnan(gd) || std::isnan(wd)
                         ? UINT64_MAX
                         : ulpDistance(g.bits[k], w.bits[k], bits);
      double abs = std::fabs(gd - wd);
      if (c.worst < 0 || ulp > c.maxUlp) {
        c.maxUlp = ulp;
        c.worst = i;
      }
      if (!std::isnan(abs))
        c.maxAbs = std::max(c.maxAbs, abs);
      bool withinUlps = ulp <= bound.ulps;
      bool withinAbs =
          bound.relativeToMax > 0 && abs <= bound.relativeToMax * scale;
      fails |= !withinUlps && !withinAbs;
    }
    c.differing += differs;
    c.failing += fails;
  }
  return c;
}

std::string multiIndexString(const Literal &literal, int64_t linear) {
  std::vector<int64_t> index(literal.rank());
  for (int64_t d = literal.rank() - 1; d >= 0; --d) {
    int64_t size = std::max<int64_t>(literal.dims()[d], 1);
    index[d] = linear % size;
    linear /= size;
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? "," : "") + std::to_string(index[d]);
  return text + "]";
}

std::string describeComparison(const LiteralComparison &c, const Literal &got,
                               const Literal &want) {
  if (c.exact())
    return "bit-exact";
  std::string text = std::to_string(c.differing) + " of " +
                     std::to_string(want.elementCount()) + " elements differ";
  if (isFloat(want.elementType()) || isComplex(want.elementType())) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.3g", c.maxAbs);
    text += ", at most " +
            (c.maxUlp == UINT64_MAX ? std::string("NaN vs a number, not an")
                                    : std::to_string(c.maxUlp)) +
            " ulp (" + buffer + " absolute)";
  }
  if (c.worst >= 0) {
    std::string g = got.elementToString(c.worst),
                w = want.elementToString(c.worst);
    text +=
        ", worst at " + multiIndexString(want, c.worst) + ": " + g + " vs " + w;
    if (g == w) {
      // The same printed value in other bits (a NaN payload, a predicate
      // stored as neither 0 nor 1).
      char bits[64];
      std::snprintf(bits, sizeof(bits), " (bits 0x%llx vs 0x%llx)",
                    static_cast<unsigned long long>(got.getBits(c.worst)),
                    static_cast<unsigned long long>(want.getBits(c.worst)));
      text += bits;
    }
  }
  return text;
}

/// Raw bits of a special value of a binary float type: NaN, +-inf, +-0, the
/// smallest subnormal, the largest finite value.
static uint64_t specialBits(PrimitiveType type, unsigned which) {
  int bits = bitWidth(type);
  int exponentBits = type == PrimitiveType::F16   ? 5
                     : type == PrimitiveType::F64 ? 11
                                                  : 8;
  int mantissaBits = bits - 1 - exponentBits;
  uint64_t sign = uint64_t(1) << (bits - 1);
  uint64_t infinity = ((uint64_t(1) << exponentBits) - 1) << mantissaBits;
  switch (which % 8) {
  case 0:
    return infinity | (uint64_t(1) << (mantissaBits - 1)); // quiet NaN
  case 1:
    return infinity;
  case 2:
    return sign | infinity;
  case 3:
    return 0;
  case 4:
    return sign;
  case 5:
    return 1; // smallest subnormal
  case 6:
    return infinity - 1; // largest finite
  default:
    return sign | (uint64_t(1) << mantissaBits); // -smallest normal
  }
}

Literal randomLiteral(const Shape &shape, uint64_t seed, bool specials) {
  Literal literal(Shape(shape.elementType, shape.dims));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-3.0, 3.0);
  std::uniform_int_distribution<int64_t> integer(-8, 8);
  std::uniform_int_distribution<int64_t> natural(0, 15);
  PrimitiveType t = shape.elementType;
  bool binaryFloat = t == PrimitiveType::F16 || t == PrimitiveType::BF16 ||
                     t == PrimitiveType::F32 || t == PrimitiveType::F64;
  // A complex element's parts are drawn as f32 (c64) or f64 (c128) values.
  PrimitiveType part =
      t == PrimitiveType::C64 ? PrimitiveType::F32 : PrimitiveType::F64;
  auto randomPart = [&]() {
    uint64_t r = specials ? rng() : 1;
    if ((r & 15) != 0)
      return real(rng);
    uint64_t bits = specialBits(part, static_cast<unsigned>(r >> 4));
    float f;
    double d;
    uint32_t b32 = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b32, 4);
    std::memcpy(&d, &bits, 8);
    return part == PrimitiveType::F32 ? static_cast<double>(f) : d;
  };
  for (int64_t i = 0; i < literal.elementCount(); ++i) {
    if (t == PrimitiveType::Pred)
      literal.setBits(i, rng() & 1);
    else if (isComplex(t)) {
      double re = randomPart();
      literal.setComplex(i, {re, randomPart()});
    } else if (isFloat(t)) {
      // Without specials, one draw per element (the same values as before
      // specials existed, for a given seed).
      uint64_t r = specials && binaryFloat ? rng() : 1;
      if ((r & 15) == 0)
        literal.setBits(i, specialBits(t, static_cast<unsigned>(r >> 4)));
      else
        literal.setDouble(i, real(rng));
    } else if (isUnsignedInteger(t))
      literal.setInt(i, natural(rng));
    else
      literal.setInt(i, integer(rng));
  }
  return literal;
}

} // namespace tessel
