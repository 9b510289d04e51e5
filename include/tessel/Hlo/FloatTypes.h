//===- FloatTypes.h - Exact conversions of the small float types -*- C++
//-*-===//
//
// XLA's narrow floats (f16, bf16 and the five f8 types) are decoded to and
// encoded from `double` exactly: decoding is exact, encoding rounds to the
// nearest representable value with ties to even (IEEE 754 roundTiesToEven).
//
//   encodeFloat(BF16, 1.00390625)  -> 0x3f80  (a tie: rounds to the even 1.0)
//   encodeFloat(BF16, 1.01171875)  -> 0x3f82  (a tie: rounds up to
//   even 1.015625) decodeFloat(F8E4M3FN, 0x7e)    -> 448     (the largest
//   finite value) encodeFloat(F8E4M3FN, 1000.0)  -> 0x7f    (NaN: the type has
//   no infinity) encodeFloat(F8E4M3FNUZ, -0.0)  -> 0x00    (no negative zero:
//   0x80 is NaN)
//
// The formats, as ml_dtypes and XLA define them:
//
//   type            exp  mant  bias  infinity  NaN encodings      -0
//   f16              5    10    15    yes      exp all ones      yes
//   bf16             8     7   127    yes      exp all ones      yes
//   f8e5m2           5     2    15    yes      exp all ones      yes
//   f8e4m3fn         4     3     7    no       s.1111.111 only   yes
//   f8e4m3fnuz       4     3     8    no       0x80 only         no
//   f8e4m3b11fnuz    4     3    11    no       0x80 only         no
//   f8e5m2fnuz       5     2    16    no       0x80 only         no
//
// A value too large for a type rounds to infinity when the type has one and
// to NaN otherwise (non-saturating conversion, as XLA's `convert`). A NaN
// encodes as the type's quiet NaN with the sign kept where the type has a
// signed NaN.
//
// @post decodeFloat(t, encodeFloat(t, decodeFloat(t, b))) has the bits of b
//       for every non-NaN pattern b (tested exhaustively in FloatTypesTest).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_FLOATTYPES_H
#define TESSEL_HLO_FLOATTYPES_H

#include "tessel/Layout/PrimitiveType.h"

#include <cstdint>
#include <cstring>
#include <optional>

namespace tessel {

/// How a narrow float type spends its bits.
struct FloatFormat {
  enum class NanStyle {
    /// Exponent all ones: infinity with a zero mantissa, NaN otherwise.
    Ieee,
    /// Only exponent and mantissa all ones is NaN; no infinity (f8e4m3fn).
    AllOnes,
    /// Only the negative-zero pattern is NaN; no infinity, no -0 (*fnuz).
    NegativeZero,
  };
  int exponentBits = 0;
  int mantissaBits = 0;
  int bias = 0;
  NanStyle nanStyle = NanStyle::Ieee;

  int totalBits() const { return 1 + exponentBits + mantissaBits; }
  bool hasInfinity() const { return nanStyle == NanStyle::Ieee; }
  bool hasNegativeZero() const { return nanStyle != NanStyle::NegativeZero; }
};

/// The format of f16, bf16 and the f8 types; nullopt for other types (f32
/// and f64 are native C++ types).
std::optional<FloatFormat> floatFormat(PrimitiveType type);

/// The exact value of a bit pattern of a narrow float type.
/// @pre floatFormat(type) has a value.
double decodeFloat(PrimitiveType type, uint64_t bits);
double decodeFloat(const FloatFormat &format, uint64_t bits);

/// The bits of `value` rounded to nearest, ties to even.
/// @pre floatFormat(type) has a value.
uint64_t encodeFloat(PrimitiveType type, double value);
uint64_t encodeFloat(const FloatFormat &format, double value);

/// Fast paths for the common bf16 case, equal to decodeFloat/encodeFloat.
inline float bf16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}
inline uint16_t floatToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep the sign, make it quiet
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7fffu + lsb) >> 16);
}

} // namespace tessel

#endif // TESSEL_HLO_FLOATTYPES_H
