//===- HloEvaluatorOps.cpp - Elementwise kernels of the evaluator ---------===//
//
// Narrow floats (bf16, f16, f8) and f32 compute in `float` and round once to
// the result type; f64 computes in `double`. Integers compute on 64-bit
// values and wrap to their width when stored (Literal::setInt masks).
//
//===----------------------------------------------------------------------===//
#include "EvaluatorOps.h"

#include <bitset>
#include <cmath>
#include <cstring>
#include <limits>

namespace tessel::eval {

Kind kindOf(PrimitiveType type) {
  if (type == PrimitiveType::Pred)
    return Kind::Pred;
  if (isSignedInteger(type))
    return Kind::Signed;
  if (isUnsignedInteger(type))
    return Kind::Unsigned;
  if (type == PrimitiveType::F64)
    return Kind::F64;
  if (isFloat(type))
    return Kind::Narrow;
  if (isComplex(type))
    return Kind::Complex;
  return Kind::Other;
}

namespace {

template <typename T> T floatUnary(HloOpcode op, T x) {
  switch (op) {
  case HloOpcode::Abs:
    return std::fabs(x);
  case HloOpcode::Negate:
    return -x;
  case HloOpcode::Exp:
    return std::exp(x);
  case HloOpcode::ExponentialMinusOne:
    return std::expm1(x);
  case HloOpcode::Log:
    return std::log(x);
  case HloOpcode::LogPlusOne:
    return std::log1p(x);
  case HloOpcode::Tanh:
    return std::tanh(x);
  case HloOpcode::Logistic:
    return T(1) / (T(1) + std::exp(-x));
  case HloOpcode::Sqrt:
    return std::sqrt(x);
  case HloOpcode::Rsqrt:
    return T(1) / std::sqrt(x);
  case HloOpcode::Cbrt:
    return std::cbrt(x);
  case HloOpcode::Sine:
    return std::sin(x);
  case HloOpcode::Cosine:
    return std::cos(x);
  case HloOpcode::Tan:
    return std::tan(x);
  case HloOpcode::Floor:
    return std::floor(x);
  case HloOpcode::Ceil:
    return std::ceil(x);
  case HloOpcode::RoundNearestAfz:
    return std::round(x);
  case HloOpcode::RoundNearestEven:
    return std::nearbyint(x);
  case HloOpcode::Sign:
    return std::isnan(x) || x == 0 ? x : std::copysign(T(1), x);
  case HloOpcode::Erf:
    return std::erf(x);
  default:
    return x;
  }
}

template <typename T> T floatBinary(HloOpcode op, T a, T b) {
  switch (op) {
  case HloOpcode::Add:
    return a + b;
  case HloOpcode::Subtract:
    return a - b;
  case HloOpcode::Multiply:
    return a * b;
  case HloOpcode::Divide:
    return a / b;
  case HloOpcode::Remainder:
    return std::fmod(a, b);
  case HloOpcode::Power:
    return std::pow(a, b);
  case HloOpcode::Atan2:
    return std::atan2(a, b);
  case HloOpcode::Maximum:
    if (std::isnan(a) || std::isnan(b))
      return std::isnan(a) ? a : b;
    if (a == 0 && b == 0)
      return std::signbit(a) ? b : a; // +0 above -0
    return a > b ? a : b;
  case HloOpcode::Minimum:
    if (std::isnan(a) || std::isnan(b))
      return std::isnan(a) ? a : b;
    if (a == 0 && b == 0)
      return std::signbit(a) ? a : b;
    return a < b ? a : b;
  default:
    return a;
  }
}

uint64_t widthMask(int bits) {
  return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
}

int64_t signExtend(uint64_t v, int bits) {
  if (bits >= 64)
    return static_cast<int64_t>(v);
  uint64_t sign = uint64_t(1) << (bits - 1);
  v &= widthMask(bits);
  return static_cast<int64_t>((v ^ sign) - sign);
}

/// Integer ops on the bits of w-bit values; the result is masked by the
/// caller. `isSigned` selects signed division, comparison and power.
uint64_t integerBinary(HloOpcode op, uint64_t a, uint64_t b, int bits,
                       bool isSigned) {
  uint64_t mask = widthMask(bits);
  a &= mask;
  b &= mask;
  int64_t sa = signExtend(a, bits), sb = signExtend(b, bits);
  uint64_t minValue = uint64_t(1) << (bits - 1); // INT_MIN's bits
  switch (op) {
  case HloOpcode::Add:
    return a + b;
  case HloOpcode::Subtract:
    return a - b;
  case HloOpcode::Multiply:
    return a * b;
  case HloOpcode::Divide:
    if (b == 0)
      return mask; // -1, or the largest unsigned value
    if (!isSigned)
      return a / b;
    if (a == minValue && sb == -1)
      return minValue;
    return static_cast<uint64_t>(sa / sb);
  case HloOpcode::Remainder:
    if (b == 0)
      return a;
    if (!isSigned)
      return a % b;
    if (a == minValue && sb == -1)
      return 0;
    return static_cast<uint64_t>(sa % sb);
  case HloOpcode::Maximum:
    return isSigned ? (sa >= sb ? a : b) : (a >= b ? a : b);
  case HloOpcode::Minimum:
    return isSigned ? (sa <= sb ? a : b) : (a <= b ? a : b);
  case HloOpcode::And:
    return a & b;
  case HloOpcode::Or:
    return a | b;
  case HloOpcode::Xor:
    return a ^ b;
  case HloOpcode::ShiftLeft:
    return b >= static_cast<uint64_t>(bits) ? 0 : a << b;
  case HloOpcode::ShiftRightLogical:
    return b >= static_cast<uint64_t>(bits) ? 0 : a >> b;
  case HloOpcode::ShiftRightArithmetic: // on the bits, signed or not
    if (b >= static_cast<uint64_t>(bits))
      return sa < 0 ? mask : 0;
    return static_cast<uint64_t>(sa >> b);
  case HloOpcode::Power: {
    // The exponent is compared with 0 as a signed number, as XLA does.
    if (sb < 0)
      return a == 1 ? 1 : 0;
    uint64_t result = 1, base = a;
    for (uint64_t e = b; e; e >>= 1) {
      if (e & 1)
        result *= base;
      base *= base;
    }
    return result;
  }
  default:
    return a;
  }
}

uint64_t predBinary(HloOpcode op, uint64_t a, uint64_t b) {
  switch (op) {
  case HloOpcode::And:
  case HloOpcode::Minimum:
  case HloOpcode::Multiply:
    return a & b;
  case HloOpcode::Or:
  case HloOpcode::Maximum:
  case HloOpcode::Add:
    return a | b;
  case HloOpcode::Xor:
    return a ^ b;
  default:
    return a;
  }
}

int64_t broadcastIndex(const Literal &operand, int64_t i) {
  return operand.rank() == 0 ? 0 : i;
}

std::string typeError(HloOpcode op, PrimitiveType type) {
  return std::string(hloOpcodeName(op)) + " of " +
         std::string(primitiveTypeName(type)) +
         " is not supported by the evaluator";
}

/// A key that orders the floats of a `width`-bit type totally, from their
/// own bits (as XLA compares them, NaN payloads and signaling NaNs
/// included): -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. The sign
/// bit makes the bits a negative integer; negative floats count down.
int64_t totalOrderKey(uint64_t raw, int width) {
  int64_t bits = static_cast<int64_t>(raw << (64 - width)) >> (64 - width);
  int64_t magnitude = (int64_t(1) << (width - 1)) - 1;
  if (width == 64)
    magnitude = std::numeric_limits<int64_t>::max();
  return bits < 0 ? bits ^ magnitude : bits;
}

template <typename T> bool compareValues(ComparisonDirection d, T a, T b) {
  switch (d) {
  case ComparisonDirection::Eq:
    return a == b;
  case ComparisonDirection::Ne:
    return a != b;
  case ComparisonDirection::Ge:
    return a >= b;
  case ComparisonDirection::Gt:
    return a > b;
  case ComparisonDirection::Le:
    return a <= b;
  case ComparisonDirection::Lt:
    return a < b;
  }
  return false;
}

} // namespace

int64_t totalOrderKeyAt(const Literal &x, int64_t i) {
  return totalOrderKey(x.getBits(i), bitWidth(x.elementType()));
}

bool supportsBinary(HloOpcode op, PrimitiveType type) {
  switch (kindOf(type)) {
  case Kind::Pred:
    return op == HloOpcode::And || op == HloOpcode::Or ||
           op == HloOpcode::Xor || op == HloOpcode::Maximum ||
           op == HloOpcode::Minimum || op == HloOpcode::Add ||
           op == HloOpcode::Multiply;
  case Kind::Signed:
  case Kind::Unsigned:
    return op != HloOpcode::Atan2;
  case Kind::Narrow:
  case Kind::F64:
    return op != HloOpcode::And && op != HloOpcode::Or &&
           op != HloOpcode::Xor && op != HloOpcode::ShiftLeft &&
           op != HloOpcode::ShiftRightLogical &&
           op != HloOpcode::ShiftRightArithmetic;
  case Kind::Complex:
    return supportsComplexBinary(op);
  default:
    return false;
  }
}

void binaryAt(HloOpcode op, const Literal &a, int64_t i, const Literal &b,
              int64_t j, Literal &out, int64_t o) {
  PrimitiveType type = out.elementType();
  switch (kindOf(type)) {
  case Kind::Narrow:
    out.setFloat(o, floatBinary<float>(op, a.getFloat(i), b.getFloat(j)));
    return;
  case Kind::F64:
    out.setDouble(o, floatBinary<double>(op, a.getDouble(i), b.getDouble(j)));
    return;
  case Kind::Signed:
  case Kind::Unsigned:
    out.setBits(o, integerBinary(op, a.getBits(i), b.getBits(j), bitWidth(type),
                                 kindOf(type) == Kind::Signed) &
                       widthMask(bitWidth(type)));
    return;
  case Kind::Pred:
    out.setBits(o, predBinary(op, a.getBits(i), b.getBits(j)));
    return;
  case Kind::Complex:
    complexBinaryAt(op, a, i, b, j, out, o);
    return;
  default:
    return;
  }
}

Expected<Literal> unary(HloOpcode op, const Literal &x, const Shape &result) {
  Literal out(result);
  PrimitiveType type = x.elementType();
  int64_t n = x.elementCount();
  Kind kind = kindOf(type);
  if (op == HloOpcode::IsFinite) {
    if (kind != Kind::Narrow && kind != Kind::F64)
      return Error(typeError(op, type));
    for (int64_t i = 0; i < n; ++i)
      out.setBits(i, std::isfinite(x.getDouble(i)) ? 1 : 0);
    return out;
  }
  switch (kind) {
  case Kind::Complex:
    return complexUnary(op, x, result);
  case Kind::Narrow:
    if (op == HloOpcode::Not || op == HloOpcode::PopulationCount ||
        op == HloOpcode::CountLeadingZeros)
      return Error(typeError(op, type));
    for (int64_t i = 0; i < n; ++i)
      out.setFloat(i, floatUnary<float>(op, x.getFloat(i)));
    return out;
  case Kind::F64:
    if (op == HloOpcode::Not || op == HloOpcode::PopulationCount ||
        op == HloOpcode::CountLeadingZeros)
      return Error(typeError(op, type));
    for (int64_t i = 0; i < n; ++i)
      out.setDouble(i, floatUnary<double>(op, x.getDouble(i)));
    return out;
  case Kind::Signed:
  case Kind::Unsigned: {
    int bits = bitWidth(type);
    uint64_t mask = widthMask(bits);
    bool isSigned = kind == Kind::Signed;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v = x.getBits(i) & mask;
      int64_t s = isSigned ? signExtend(v, bits) : static_cast<int64_t>(v);
      uint64_t r;
      switch (op) {
      case HloOpcode::Abs:
        r = isSigned && s < 0 ? uint64_t(0) - v : v;
        break;
      case HloOpcode::Negate:
        r = uint64_t(0) - v;
        break;
      case HloOpcode::Sign:
        r = isSigned ? static_cast<uint64_t>((s > 0) - (s < 0)) : v != 0;
        break;
      case HloOpcode::Not:
        r = ~v;
        break;
      case HloOpcode::PopulationCount:
        r = std::bitset<64>(v).count();
        break;
      case HloOpcode::CountLeadingZeros: {
        int length = 0;
        for (uint64_t t = v; t; t >>= 1)
          ++length;
        r = static_cast<uint64_t>(bits - length);
        break;
      }
      default:
        return Error(typeError(op, type));
      }
      out.setBits(i, r & mask);
    }
    return out;
  }
  case Kind::Pred:
    if (op != HloOpcode::Not)
      return Error(typeError(op, type));
    for (int64_t i = 0; i < n; ++i)
      out.setBits(i, x.getBits(i) ? 0 : 1);
    return out;
  default:
    return Error(typeError(op, type));
  }
}

Expected<Literal> binary(HloOpcode op, const Literal &x, const Literal &y,
                         const Shape &result) {
  if (!supportsBinary(op, result.elementType))
    return Error(typeError(op, result.elementType));
  Literal out(result);
  int64_t n = out.elementCount();
  PrimitiveType type = result.elementType;
  if (type == PrimitiveType::F32 || type == PrimitiveType::BF16) {
    for (int64_t i = 0; i < n; ++i)
      out.setFloat(i, floatBinary<float>(op, x.getFloat(i), y.getFloat(i)));
    return out;
  }
  for (int64_t i = 0; i < n; ++i)
    binaryAt(op, x, i, y, i, out, i);
  return out;
}

Expected<Literal> compare(const HloAttributes &attributes, const Literal &x,
                          const Literal &y, const Shape &result) {
  Literal out(result);
  ComparisonDirection d = attributes.comparisonDirection;
  PrimitiveType type = x.elementType();
  Kind kind = kindOf(type);
  int64_t n = out.elementCount();
  bool total = attributes.comparisonType == ComparisonType::TotalOrder;
  for (int64_t i = 0; i < n; ++i) {
    bool r;
    if (kind == Kind::Narrow || kind == Kind::F64) {
      int width = bitWidth(type);
      r = total ? compareValues(d, totalOrderKey(x.getBits(i), width),
                                totalOrderKey(y.getBits(i), width))
                : compareValues(d, x.getDouble(i), y.getDouble(i));
    } else if (kind == Kind::Signed) {
      r = compareValues(d, x.getInt(i), y.getInt(i));
    } else if (kind == Kind::Unsigned || kind == Kind::Pred) {
      r = compareValues(d, x.getBits(i), y.getBits(i));
    } else if (kind == Kind::Complex &&
               (d == ComparisonDirection::Eq || d == ComparisonDirection::Ne)) {
      r = (x.getComplex(i) == y.getComplex(i)) ==
          (d == ComparisonDirection::Eq);
    } else {
      return Error(typeError(HloOpcode::Compare, type));
    }
    out.setBits(i, r ? 1 : 0);
  }
  return out;
}

Expected<Literal> convert(const Literal &x, const Shape &result) {
  Literal out(result);
  Kind from = kindOf(x.elementType()), to = kindOf(result.elementType);
  if (to == Kind::Complex && from != Kind::Other) {
    // A real value becomes the real part; c64 <-> c128 rounds each part.
    for (int64_t i = 0; i < x.elementCount(); ++i)
      out.setComplex(i, from == Kind::Complex
                            ? x.getComplex(i)
                            : std::complex<double>(
                                  from == Kind::Narrow || from == Kind::F64
                                      ? x.getDouble(i)
                                  : from == Kind::Unsigned
                                      ? static_cast<double>(x.getBits(i))
                                      : static_cast<double>(x.getInt(i)),
                                  0));
    return out;
  }
  if (from == Kind::Complex || to == Kind::Complex || from == Kind::Other ||
      to == Kind::Other)
    return Error("convert from " +
                 std::string(primitiveTypeName(x.elementType())) + " to " +
                 std::string(primitiveTypeName(result.elementType)) +
                 " is not supported by the evaluator");
  int64_t n = x.elementCount();
  for (int64_t i = 0; i < n; ++i) {
    if (to == Kind::Pred) {
      bool nonzero = from == Kind::Narrow || from == Kind::F64
                         ? x.getDouble(i) != 0
                         : x.getBits(i) != 0;
      out.setBits(i, nonzero ? 1 : 0);
    } else if (from == Kind::Narrow || from == Kind::F64) {
      out.setDouble(i, x.getDouble(i)); // rounds or saturates
    } else if (x.elementType() == PrimitiveType::U64 &&
               (to == Kind::Narrow || to == Kind::F64)) {
      // Above 2^63 a u64 is no int64: convert the unsigned value (to f32
      // first for the narrow types, as setInt does).
      uint64_t value = x.getBits(i);
      out.setDouble(i, to == Kind::F64
                           ? static_cast<double>(value)
                           : static_cast<double>(static_cast<float>(value)));
    } else {
      out.setInt(i, x.getInt(i)); // wraps, or converts to float
    }
  }
  return out;
}

Expected<Literal> bitcastConvert(const Literal &x, const Shape &result) {
  Literal out(result);
  int fromBits = bitWidth(x.elementType()),
      toBits = bitWidth(result.elementType);
  if (fromBits == toBits && fromBits < 8) {
    for (int64_t i = 0; i < x.elementCount(); ++i)
      out.setBits(i, x.getBits(i) & widthMask(fromBits));
    return out;
  }
  if (x.elementCount() * x.elementBytes() !=
      out.elementCount() * out.elementBytes())
    return Error("bitcast-convert changes the byte size");
  // Dense little-endian storage: the bytes are the same.
  if (out.elementCount() > 0)
    std::memcpy(out.data(), x.data(), x.elementCount() * x.elementBytes());
  return out;
}

Expected<Literal> select(const Literal &p, const Literal &t, const Literal &f,
                         const Shape &result) {
  Literal out(result);
  int64_t width = out.elementBytes();
  for (int64_t i = 0; i < out.elementCount(); ++i) {
    const Literal &chosen = p.getBits(broadcastIndex(p, i)) ? t : f;
    std::memcpy(out.data() + i * width, chosen.data() + i * width, width);
  }
  return out;
}

Expected<Literal> clamp(const Literal &lo, const Literal &x, const Literal &hi,
                        const Shape &result) {
  PrimitiveType type = result.elementType;
  if (!supportsBinary(HloOpcode::Maximum, type) || kindOf(type) == Kind::Pred)
    return Error(typeError(HloOpcode::Clamp, type));
  Literal out(result);
  for (int64_t i = 0; i < out.elementCount(); ++i) {
    // minimum(hi, maximum(lo, x)), as XLA emits it.
    binaryAt(HloOpcode::Maximum, lo, broadcastIndex(lo, i), x, i, out, i);
    binaryAt(HloOpcode::Minimum, hi, broadcastIndex(hi, i), out, i, out, i);
  }
  return out;
}

} // namespace tessel::eval
