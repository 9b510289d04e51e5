//===- Divisibility.cpp - The (modulus, remainder) lattice ----------------===//
#include "tessel/Support/Divisibility.h"

#include <cassert>
#include <numeric>

namespace tessel {

namespace {

using Int = __int128;

/// Moduli stay at or below 2^62 so that r + m never overflows int64; a
/// larger modulus is replaced by one of its divisors (still true).
constexpr uint64_t kMaxModulus = uint64_t(1) << 62;

Int absInt(Int v) { return v < 0 ? -v : v; }

Int gcdInt(Int a, Int b) {
  a = absInt(a);
  b = absInt(b);
  while (b != 0) {
    Int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/// The largest power of two dividing m (m > 0), capped at 2^62.
uint64_t powerOfTwoPart(Int m) {
  assert(m > 0);
  unsigned t = 0;
  while (t < 62 && (m & 1) == 0) {
    m >>= 1;
    ++t;
  }
  return uint64_t(1) << t;
}

Divisibility make(Int modulus, Int remainder) {
  if (modulus == 0)
    return Divisibility::constant(int64_t(uint64_t(remainder)));
  if (modulus > Int(kMaxModulus)) {
    Int p = powerOfTwoPart(modulus);
    modulus = p < Int(kMaxModulus) ? p : Int(kMaxModulus);
  }
  Int r = remainder % modulus;
  if (r < 0)
    r += modulus;
  return Divisibility::of(uint64_t(modulus), int64_t(r));
}

uint64_t maskOf(unsigned width) {
  return width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
}

/// What stays true after the exact result is reduced modulo 2^width.
Divisibility wrapped(const Divisibility &x, unsigned width) {
  if (x.isConstant())
    return Divisibility::constant(wrapToWidth(x.remainder(), width));
  uint64_t p = powerOfTwoPart(x.modulus());
  if (width <= 62 && p >= (uint64_t(1) << width))
    return Divisibility::constant(wrapToWidth(x.remainder(), width));
  return make(p, x.remainder());
}

/// The facts about the unsigned reading of a `width`-bit value.
Divisibility unsignedView(const Divisibility &x, unsigned width) {
  if (x.isConstant())
    return x; // the caller masks constants itself
  return wrapped(x, width);
}

/// The low bits of every value: `count` bits equal to `bits`.
struct KnownBits {
  unsigned count;
  uint64_t bits;
};

KnownBits knownLowBits(const Divisibility &x, unsigned width) {
  if (x.isConstant())
    return {width, uint64_t(x.remainder()) & maskOf(width)};
  unsigned t = 0;
  for (uint64_t m = x.modulus(); (m & 1) == 0 && t < width; m >>= 1)
    ++t;
  return {t, uint64_t(x.remainder()) & maskOf(t)};
}

Divisibility fromKnownBits(unsigned count, uint64_t bits, unsigned width) {
  if (count >= width)
    return Divisibility::constant(wrapToWidth(int64_t(bits), width));
  if (count > 62)
    count = 62;
  return make(Int(1) << count, Int(bits & maskOf(count)));
}

enum class BitOp { And, Or, Xor };

Divisibility bitwise(const Divisibility &a, const Divisibility &b,
                     unsigned width, BitOp op) {
  KnownBits ka = knownLowBits(a, width), kb = knownLowBits(b, width);
  uint64_t bits = 0;
  unsigned count = 0;
  for (; count < width; ++count) {
    bool knownA = count < ka.count, knownB = count < kb.count;
    int bitA = int((ka.bits >> count) & 1), bitB = int((kb.bits >> count) & 1);
    int bit;
    if (knownA && knownB) {
      bit = op == BitOp::And  ? (bitA & bitB)
            : op == BitOp::Or ? (bitA | bitB)
                              : (bitA ^ bitB);
    } else if (op == BitOp::And && ((knownA && !bitA) || (knownB && !bitB))) {
      bit = 0;
    } else if (op == BitOp::Or && ((knownA && bitA) || (knownB && bitB))) {
      bit = 1;
    } else {
      break;
    }
    bits |= uint64_t(bit) << count;
  }
  return fromKnownBits(count, bits, width);
}

/// floor(a / c) for a constant c != 0, exact (no wrap: the quotient fits
/// except for INT_MIN / -1, which arith leaves undefined).
Divisibility floorDivByConstant(const Divisibility &a, Int c) {
  if (a.isConstant()) {
    Int q = Int(a.remainder()) / c;
    if (Int(a.remainder()) % c != 0 && ((a.remainder() < 0) != (c < 0)))
      --q;
    return make(0, q);
  }
  if (c < 0) // floor(a / c) == floor(-a / -c)
    return floorDivByConstant(make(a.modulus(), -Int(a.remainder())), -c);
  if (Int(a.modulus()) % c != 0)
    return Divisibility::unknown();
  // a == m*k + r with 0 <= r < m and c | m: floor(a / c) == (m/c)*k + r / c.
  return make(Int(a.modulus()) / c, Int(a.remainder()) / c);
}

std::optional<Int> constantDivisor(const Divisibility &b, unsigned width) {
  std::optional<int64_t> c = b.constantValue();
  if (!c || wrapToWidth(*c, width) == 0)
    return std::nullopt;
  return Int(wrapToWidth(*c, width));
}

/// The most negative `width`-bit value.
int64_t minOfWidth(unsigned width) { return int64_t(-(Int(1) << (width - 1))); }

Divisibility negate(const Divisibility &a) {
  return make(a.modulus(), -Int(a.remainder()));
}

} // namespace

int64_t wrapToWidth(int64_t v, unsigned width) {
  assert(width >= 1 && width <= 64);
  if (width == 64)
    return v;
  uint64_t u = uint64_t(v) & maskOf(width);
  if (u >> (width - 1))
    u |= ~maskOf(width);
  return int64_t(u);
}

Divisibility Divisibility::of(uint64_t modulus, int64_t remainder) {
  if (modulus == 0)
    return Divisibility(0, remainder);
  if (modulus > kMaxModulus)
    return make(modulus, remainder);
  Int r = Int(remainder) % Int(modulus);
  if (r < 0)
    r += modulus;
  return Divisibility(modulus, int64_t(r));
}

uint64_t Divisibility::knownPowerOfTwoDivisor() const {
  if (mod == 0)
    return rem == 0 ? 0 : powerOfTwoPart(absInt(rem));
  return powerOfTwoPart(rem == 0 ? Int(mod) : gcdInt(mod, rem));
}

uint64_t Divisibility::largestKnownDivisor() const {
  if (mod == 0)
    return uint64_t(absInt(rem));
  return uint64_t(rem == 0 ? Int(mod) : gcdInt(mod, rem));
}

DivisibilityQuery Divisibility::isMultipleOf(int64_t n) const {
  assert(n > 0 && "isMultipleOf needs a positive n");
  if (mod == 0) {
    if (rem % n == 0)
      return {Verdict::Proven, std::nullopt};
    return {Verdict::ProvenNot, rem};
  }
  // Some value r + k*m is a multiple of n iff gcd(m, n) divides r.
  if (rem % int64_t(std::gcd(mod, uint64_t(n))) != 0)
    return {Verdict::ProvenNot, rem};
  if (mod % uint64_t(n) == 0)
    return {Verdict::Proven, std::nullopt};
  // r + k*m for k in {0, 1}: one of them is not a multiple of n.
  int64_t example = rem % n != 0 ? rem : rem + int64_t(mod);
  return {Verdict::Unknown, example};
}

Divisibility Divisibility::join(const Divisibility &a, const Divisibility &b) {
  if (a == b)
    return a;
  Int m = gcdInt(gcdInt(a.mod, b.mod), Int(a.rem) - Int(b.rem));
  return make(m, a.rem);
}

std::string Divisibility::print() const {
  if (mod == 0)
    return "constant " + std::to_string(rem);
  if (mod == 1)
    return "unknown";
  return std::to_string(rem) + " mod " + std::to_string(mod);
}

Divisibility add(const Divisibility &a, const Divisibility &b, unsigned width,
                 bool mayWrap) {
  if (a.isConstant() && b.isConstant())
    return Divisibility::constant(wrapToWidth(
        int64_t(uint64_t(a.remainder()) + uint64_t(b.remainder())), width));
  Divisibility r = make(gcdInt(a.modulus(), b.modulus()),
                        Int(a.remainder()) + Int(b.remainder()));
  return mayWrap ? wrapped(r, width) : r;
}

Divisibility sub(const Divisibility &a, const Divisibility &b, unsigned width,
                 bool mayWrap) {
  if (a.isConstant() && b.isConstant())
    return Divisibility::constant(wrapToWidth(
        int64_t(uint64_t(a.remainder()) - uint64_t(b.remainder())), width));
  Divisibility r = make(gcdInt(a.modulus(), b.modulus()),
                        Int(a.remainder()) - Int(b.remainder()));
  return mayWrap ? wrapped(r, width) : r;
}

Divisibility mul(const Divisibility &a, const Divisibility &b, unsigned width,
                 bool mayWrap) {
  if (a.isConstant() && b.isConstant())
    return Divisibility::constant(wrapToWidth(
        int64_t(uint64_t(a.remainder()) * uint64_t(b.remainder())), width));
  // (ma*i + ra)(mb*j + rb) = ma*mb*ij + ma*rb*i + mb*ra*j + ra*rb.
  Int ma = a.modulus(), mb = b.modulus(), ra = a.remainder(),
      rb = b.remainder();
  Int m = gcdInt(gcdInt(ma * mb, ma * rb), mb * ra);
  Divisibility r = make(m, ra * rb);
  return mayWrap ? wrapped(r, width) : r;
}

Divisibility divSigned(const Divisibility &a, const Divisibility &b,
                       unsigned width) {
  std::optional<Int> c = constantDivisor(b, width);
  if (!c)
    return Divisibility::unknown();
  if (a.isConstant()) {
    if (*c == -1 && a.remainder() == minOfWidth(width))
      return Divisibility::unknown(); // overflow: undefined
    return make(0, Int(a.remainder()) / *c);
  }
  // Exact division rounds the same way toward zero and toward -infinity.
  Int absC = absInt(*c);
  if (absC <= Int(INT64_MAX) &&
      a.isMultipleOf(int64_t(absC)).verdict == Verdict::Proven)
    return floorDivByConstant(a, *c);
  return Divisibility::unknown();
}

Divisibility floorDivSigned(const Divisibility &a, const Divisibility &b,
                            unsigned width) {
  std::optional<Int> c = constantDivisor(b, width);
  if (!c || (*c == -1 && a.isConstant() && a.remainder() == minOfWidth(width)))
    return Divisibility::unknown();
  return floorDivByConstant(a, *c);
}

Divisibility ceilDivSigned(const Divisibility &a, const Divisibility &b,
                           unsigned width) {
  std::optional<Int> c = constantDivisor(b, width);
  if (!c || (*c == -1 && a.isConstant() && a.remainder() == minOfWidth(width)))
    return Divisibility::unknown();
  Divisibility q = floorDivByConstant(negate(a), *c);
  return q.isConstant() ? make(0, -Int(q.remainder())) : negate(q);
}

Divisibility divUnsigned(const Divisibility &a, const Divisibility &b,
                         unsigned width) {
  std::optional<int64_t> cv = b.constantValue();
  if (!cv)
    return Divisibility::unknown();
  uint64_t c = uint64_t(*cv) & maskOf(width);
  if (c == 0)
    return Divisibility::unknown();
  if (c == 1)
    return a;
  if (a.isConstant())
    return Divisibility::constant(
        int64_t((uint64_t(a.remainder()) & maskOf(width)) / c));
  Divisibility u = unsignedView(a, width);
  if (u.isConstant())
    return divUnsigned(u, b, width);
  if (u.modulus() % c != 0)
    return Divisibility::unknown();
  return make(Int(u.modulus() / c), Int(u.remainder()) / Int(c));
}

Divisibility remSigned(const Divisibility &a, const Divisibility &b,
                       unsigned width) {
  std::optional<Int> c = constantDivisor(b, width);
  if (!c)
    return Divisibility::unknown();
  if (a.isConstant())
    return make(0, Int(a.remainder()) % *c);
  // a - c*q == a (mod c), whatever the rounding of q.
  return make(gcdInt(a.modulus(), *c), a.remainder());
}

Divisibility floorModSigned(const Divisibility &a, const Divisibility &b,
                            unsigned width) {
  std::optional<Int> c = constantDivisor(b, width);
  if (!c)
    return Divisibility::unknown();
  if (a.isConstant()) {
    Int r = Int(a.remainder()) % *c;
    if (r != 0 && ((r < 0) != (*c < 0)))
      r += *c;
    return make(0, r);
  }
  return make(gcdInt(a.modulus(), *c), a.remainder());
}

Divisibility remUnsigned(const Divisibility &a, const Divisibility &b,
                         unsigned width) {
  std::optional<int64_t> cv = b.constantValue();
  if (!cv)
    return Divisibility::unknown();
  uint64_t c = uint64_t(*cv) & maskOf(width);
  if (c == 0)
    return Divisibility::unknown();
  if (a.isConstant())
    return Divisibility::constant(wrapToWidth(
        int64_t((uint64_t(a.remainder()) & maskOf(width)) % c), width));
  Divisibility u = unsignedView(a, width);
  if (u.isConstant())
    return remUnsigned(u, b, width);
  // The result is u - c*q == u (mod c); reading it as signed subtracts
  // 2^width at most, and gcd(m, c) divides m, a power of two <= 2^width.
  return make(gcdInt(u.modulus(), c), u.remainder());
}

Divisibility shiftLeft(const Divisibility &a, const Divisibility &b,
                       unsigned width, bool mayWrap) {
  std::optional<int64_t> k = b.constantValue();
  if (!k)
    // a << k is a times some integer (or poison).
    return mul(a, Divisibility::unknown(), width, true);
  if (*k < 0 || *k >= int64_t(width))
    return Divisibility::unknown(); // poison
  if (*k >= 62)
    mayWrap = true;
  return mul(
      a, Divisibility::constant(wrapToWidth(int64_t(uint64_t(1) << *k), width)),
      width, mayWrap);
}

Divisibility shiftRightSigned(const Divisibility &a, const Divisibility &b,
                              unsigned width) {
  std::optional<int64_t> k = b.constantValue();
  if (!k || *k < 0 || *k >= int64_t(width) || *k > 62)
    return Divisibility::unknown();
  return floorDivByConstant(a, Int(1) << *k);
}

Divisibility shiftRightUnsigned(const Divisibility &a, const Divisibility &b,
                                unsigned width) {
  std::optional<int64_t> k = b.constantValue();
  if (!k || *k < 0 || *k >= int64_t(width))
    return Divisibility::unknown();
  return divUnsigned(a, Divisibility::constant(int64_t(uint64_t(1) << *k)),
                     width);
}

Divisibility bitAnd(const Divisibility &a, const Divisibility &b,
                    unsigned width) {
  return bitwise(a, b, width, BitOp::And);
}

Divisibility bitOr(const Divisibility &a, const Divisibility &b,
                   unsigned width) {
  return bitwise(a, b, width, BitOp::Or);
}

Divisibility bitXor(const Divisibility &a, const Divisibility &b,
                    unsigned width) {
  return bitwise(a, b, width, BitOp::Xor);
}

Divisibility minOrMax(const Divisibility &a, const Divisibility &b) {
  return Divisibility::join(a, b);
}

Divisibility extendUnsigned(const Divisibility &a, unsigned fromWidth) {
  if (fromWidth >= 64)
    return a;
  if (a.isConstant())
    return Divisibility::constant(
        int64_t(uint64_t(a.remainder()) & maskOf(fromWidth)));
  return unsignedView(a, fromWidth);
}

Divisibility truncate(const Divisibility &a, unsigned toWidth) {
  return wrapped(a, toWidth);
}

} // namespace tessel
