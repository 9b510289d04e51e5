//===- EvaluatorComplex.cpp - c64/c128 arithmetic and reduce-precision ----===//
//
// c64 computes its parts in float, c128 in double, with XLA's elemental
// formulas: (a+bi)(c+di) = (ac-bd) + (ad+bc)i without C's NaN recovery,
// division by Smith's algorithm, |z| = hypot(a, b); the transcendental
// functions (exp, log, sqrt, ...) use the C++ library's in double and round
// to the part type.
//
// reduce-precision rounds a float to a narrower format of `exponent_bits`
// and `mantissa_bits` (nearest, ties to even), keeping the type: values
// beyond the narrow range become infinity, those below its smallest normal
// flush to zero of the same sign, NaNs stay NaN.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorOps.h"
#include "RawAttributes.h"
#include "tessel/Hlo/HloEvaluator.h"

#include <cmath>
#include <cstring>

namespace tessel::eval {
namespace {

template <typename T> using C = std::complex<T>;

template <typename T> C<T> multiply(C<T> x, C<T> y) {
  T a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  return {a * c - b * d, a * d + b * c};
}

template <typename T> C<T> divide(C<T> x, C<T> y) {
  T a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  if (std::fabs(c) >= std::fabs(d)) {
    T r = d / c, den = c + d * r;
    return {(a + b * r) / den, (b - a * r) / den};
  }
  T r = c / d, den = c * r + d;
  return {(a * r + b) / den, (b * r - a) / den};
}

template <typename T>
std::optional<C<T>> complexBinaryOp(HloOpcode op, C<T> x, C<T> y) {
  switch (op) {
  case HloOpcode::Add:
    return C<T>(x.real() + y.real(), x.imag() + y.imag());
  case HloOpcode::Subtract:
    return C<T>(x.real() - y.real(), x.imag() - y.imag());
  case HloOpcode::Multiply:
    return multiply(x, y);
  case HloOpcode::Divide:
    return divide(x, y);
  case HloOpcode::Power: {
    // c64's parts are exact in double: its power is the double one rounded.
    C<double> r = evaluateComplexPower(C<double>(x.real(), x.imag()),
                                       C<double>(y.real(), y.imag()));
    return C<T>(static_cast<T>(r.real()), static_cast<T>(r.imag()));
  }
  default:
    return std::nullopt;
  }
}

std::optional<C<double>> complexUnaryOp(HloOpcode op, C<double> z) {
  switch (op) {
  case HloOpcode::Negate:
    return -z;
  case HloOpcode::Exp:
    return std::exp(z);
  case HloOpcode::ExponentialMinusOne:
    return std::exp(z) - 1.0;
  case HloOpcode::Log:
    return std::log(z);
  case HloOpcode::LogPlusOne:
    return std::log(z + 1.0);
  case HloOpcode::Sqrt:
    return std::sqrt(z);
  case HloOpcode::Rsqrt:
    return 1.0 / std::sqrt(z);
  case HloOpcode::Tanh:
    return std::tanh(z);
  case HloOpcode::Sine:
    return std::sin(z);
  case HloOpcode::Cosine:
    return std::cos(z);
  case HloOpcode::Tan:
    return std::tan(z);
  case HloOpcode::Logistic:
    return 1.0 / (1.0 + std::exp(-z));
  case HloOpcode::Sign: {
    double m = std::hypot(z.real(), z.imag());
    return m == 0 ? z : z / m;
  }
  default:
    return std::nullopt;
  }
}

bool isC64(const Literal &x) { return x.elementType() == PrimitiveType::C64; }

std::string unsupported(HloOpcode op, PrimitiveType type) {
  return std::string(hloOpcodeName(op)) + " of " +
         std::string(primitiveTypeName(type)) +
         " is not supported by the evaluator";
}

} // namespace

} // namespace tessel::eval

namespace tessel {

std::optional<std::complex<double>>
evaluateComplexUnary(HloOpcode op, std::complex<double> z) {
  if (op == HloOpcode::Negate)
    return std::nullopt; // exact in the part type: not a runtime call
  return eval::complexUnaryOp(op, z);
}

std::complex<double> evaluateComplexPower(std::complex<double> x,
                                          std::complex<double> y) {
  using C = std::complex<double>;
  if (x == C(0, 0))
    return y == C(0, 0) ? C(1, 0) : C(0, 0);
  return std::pow(x, y);
}

} // namespace tessel

namespace tessel::eval {

bool supportsComplexBinary(HloOpcode op) {
  return complexBinaryOp<double>(op, {1, 0}, {1, 0}).has_value();
}

void complexBinaryAt(HloOpcode op, const Literal &a, int64_t i,
                     const Literal &b, int64_t j, Literal &out, int64_t o) {
  C<double> x = a.getComplex(i), y = b.getComplex(j);
  if (isC64(out)) {
    std::optional<C<float>> r = complexBinaryOp<float>(
        op,
        C<float>(static_cast<float>(x.real()), static_cast<float>(x.imag())),
        C<float>(static_cast<float>(y.real()), static_cast<float>(y.imag())));
    if (r)
      out.setComplex(o, C<double>(r->real(), r->imag()));
    return;
  }
  if (std::optional<C<double>> r = complexBinaryOp<double>(op, x, y))
    out.setComplex(o, *r);
}

Expected<Literal> complexUnary(HloOpcode op, const Literal &x,
                               const Shape &result) {
  Literal out(result);
  int64_t n = x.elementCount();
  if (op == HloOpcode::Abs) {
    for (int64_t i = 0; i < n; ++i) {
      C<double> z = x.getComplex(i);
      if (isC64(x))
        out.setDouble(i, std::hypot(static_cast<float>(z.real()),
                                    static_cast<float>(z.imag())));
      else
        out.setDouble(i, std::hypot(z.real(), z.imag()));
    }
    return out;
  }
  if (!complexUnaryOp(op, {1, 0}))
    return Error(unsupported(op, x.elementType()));
  for (int64_t i = 0; i < n; ++i)
    out.setComplex(i, *complexUnaryOp(op, x.getComplex(i)));
  return out;
}

Expected<Literal> realOrImag(HloOpcode op, const Literal &x,
                             const Shape &result) {
  Literal out(result);
  bool complex = kindOf(x.elementType()) == Kind::Complex;
  if (!complex && kindOf(x.elementType()) != Kind::Narrow &&
      kindOf(x.elementType()) != Kind::F64)
    return Error(unsupported(op, x.elementType()));
  for (int64_t i = 0; i < x.elementCount(); ++i) {
    if (complex) {
      C<double> z = x.getComplex(i);
      out.setDouble(i, op == HloOpcode::Real ? z.real() : z.imag());
    } else if (op == HloOpcode::Real) {
      out.setDouble(i, x.getDouble(i));
    } // imag of a real is zero, as constructed
  }
  return out;
}

Expected<Literal> makeComplex(const Literal &re, const Literal &im,
                              const Shape &result) {
  if (kindOf(result.elementType) != Kind::Complex)
    return Error("complex must return c64 or c128");
  Literal out(result);
  for (int64_t i = 0; i < out.elementCount(); ++i)
    out.setComplex(i, {re.getDouble(re.rank() == 0 ? 0 : i),
                       im.getDouble(im.rank() == 0 ? 0 : i)});
  return out;
}

namespace {

/// XLA's reduce-precision on the bits of a float with `exponentWidth`
/// exponent and `mantissaWidth` mantissa bits (f32: 8, 23; f64: 11, 52).
uint64_t reducePrecisionBits(uint64_t x, int exponentWidth, int mantissaWidth,
                             int64_t exponentBits, int64_t mantissaBits) {
  uint64_t signMask = uint64_t(1) << (exponentWidth + mantissaWidth);
  uint64_t exponentMask = ((uint64_t(1) << exponentWidth) - 1) << mantissaWidth;
  uint64_t mantissaMask = (uint64_t(1) << mantissaWidth) - 1;
  bool isNan = (x & exponentMask) == exponentMask && (x & mantissaMask) != 0;
  uint64_t original = x;
  if (mantissaBits < mantissaWidth) {
    // Round to nearest, ties to even, by adding half an ulp of the narrow
    // mantissa (less one, plus its last bit) and truncating.
    int shift = mantissaWidth - static_cast<int>(mantissaBits);
    uint64_t lastBit = uint64_t(1) << shift;
    uint64_t bias = (lastBit >> 1) - 1 + ((x & lastBit) >> shift);
    x = (x + bias) & ~(lastBit - 1);
  }
  if (exponentBits < exponentWidth) {
    int64_t exponentBias = (int64_t(1) << (exponentWidth - 1)) - 1;
    int64_t reducedBias = (int64_t(1) << (exponentBits - 1)) - 1;
    uint64_t exponent = (x & exponentMask) >> mantissaWidth;
    uint64_t signedZero = x & signMask;
    if (exponent > static_cast<uint64_t>(exponentBias + reducedBias))
      x = signedZero | exponentMask; // infinity
    else if (exponent <= static_cast<uint64_t>(exponentBias - reducedBias))
      x = signedZero; // below the narrow format's normals
  }
  if (isNan)
    return mantissaBits > 0 ? original : (original & signMask) | exponentMask;
  return x;
}

} // namespace

Expected<Literal> reducePrecision(const HloInstruction &inst, const Literal &x,
                                  const Shape &result) {
  Expected<int64_t> exponentBits = intAttribute(inst, "exponent_bits");
  if (!exponentBits)
    return exponentBits.takeError();
  Expected<int64_t> mantissaBits = intAttribute(inst, "mantissa_bits");
  if (!mantissaBits)
    return mantissaBits.takeError();
  PrimitiveType type = x.elementType();
  Kind kind = kindOf(type);
  if (kind != Kind::Narrow && kind != Kind::F64)
    return Error("reduce-precision of " + std::string(primitiveTypeName(type)) +
                 " is not supported by the evaluator");
  if (*exponentBits < 1 || *mantissaBits < 0)
    return Error("exponent_bits=" + std::to_string(*exponentBits) +
                 " mantissa_bits=" + std::to_string(*mantissaBits) +
                 ", expected at least 1 exponent bit and 0 mantissa bits");
  Literal out(result);
  for (int64_t i = 0; i < x.elementCount(); ++i) {
    if (kind == Kind::F64) {
      double v = x.getDouble(i);
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      bits = reducePrecisionBits(bits, 11, 52, *exponentBits, *mantissaBits);
      std::memcpy(&v, &bits, 8);
      out.setDouble(i, v);
      continue;
    }
    // Narrow floats are exact in f32: reduce there, round back to the type.
    float v = x.getFloat(i);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits = static_cast<uint32_t>(
        reducePrecisionBits(bits, 8, 23, *exponentBits, *mantissaBits));
    std::memcpy(&v, &bits, 4);
    out.setFloat(i, v);
  }
  return out;
}

} // namespace tessel::eval
