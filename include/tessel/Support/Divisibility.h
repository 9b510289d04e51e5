//===- Divisibility.h - What is known about a value modulo m ----*- C++ -*-===//
//
// The (modulus, remainder) lattice of Halide's modulus-remainder analysis,
// for two's complement integers of a given bit width. A `Divisibility` says
// "every value v this may take satisfies v == remainder (mod modulus)", with
// v read as a signed integer:
//
//   modulus 0   the value is the constant `remainder`
//   modulus 1   nothing is known (the top of the lattice)
//   modulus m   v == remainder (mod m), 0 <= remainder < m
//
// Transfer functions follow the integer operations of MLIR's arith dialect.
// Operations that may wrap around (add, sub, mul, shl without a no-wrap flag)
// keep only the part of the modulus that survives a wrap: the result is the
// exact result minus k * 2^width, so only divisors of 2^width stay true.
//
//   Divisibility i = Divisibility::unknown();
//   Divisibility x = add(mul(i, constant(128), 64, /*mayWrap=*/false),
//                        constant(32), 64, /*mayWrap=*/false);
//   x.print()                      -> "32 mod 128"
//   x.isMultipleOf(128).verdict    -> Verdict::ProvenNot (every value is
//                                     32 mod 128)
//   x.isMultipleOf(32).verdict     -> Verdict::Proven
//   mul(i, constant(24), 64, true) -> "0 mod 8" (i * 24 may wrap)
//
// Every transfer function is sound: for all concrete inputs the operands
// allow, the concrete result is allowed by the returned value (checked by a
// fuzz test that evaluates random expressions).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_DIVISIBILITY_H
#define TESSEL_SUPPORT_DIVISIBILITY_H

#include <cstdint>
#include <optional>
#include <string>

namespace tessel {

/// The answer to "is this value always a multiple of N".
enum class Verdict {
  Proven,    ///< every value is a multiple of N
  ProvenNot, ///< no value is a multiple of N
  Unknown,   ///< the analysis cannot tell
};

/// The answer with the evidence a diagnostic needs.
struct DivisibilityQuery {
  Verdict verdict;
  /// For ProvenNot and Unknown: a value the facts allow that is not a
  /// multiple of N (for ProvenNot any value allowed will do; the smallest
  /// non-negative one is given).
  std::optional<int64_t> counterexample;
};

/// A value known modulo `modulus()` (see the file comment).
class Divisibility {
public:
  /// Nothing known.
  static Divisibility unknown() { return Divisibility(1, 0); }
  /// Exactly `value`.
  static Divisibility constant(int64_t value) { return Divisibility(0, value); }
  /// remainder (mod modulus); modulus 0 is a constant. Normalizes the
  /// remainder into [0, modulus).
  static Divisibility of(uint64_t modulus, int64_t remainder);
  /// A multiple of `n` (n > 0), as `assume_multiple` promises.
  static Divisibility multipleOf(uint64_t n) { return of(n, 0); }

  uint64_t modulus() const { return mod; }
  int64_t remainder() const { return rem; }
  bool isConstant() const { return mod == 0; }
  bool isUnknown() const { return mod == 1; }
  std::optional<int64_t> constantValue() const {
    return mod == 0 ? std::optional<int64_t>(rem) : std::nullopt;
  }

  /// The largest power of two that every value is a multiple of, or 0 for the
  /// constant 0. Capped at 2^62.
  uint64_t knownPowerOfTwoDivisor() const;
  /// The largest n such that every value is a multiple of n (0 for the
  /// constant 0; 1 when nothing is known).
  uint64_t largestKnownDivisor() const;

  /// Is every value a multiple of n? @pre n > 0
  DivisibilityQuery isMultipleOf(int64_t n) const;

  /// Least upper bound: what is true of both (for select, min, max, phis).
  static Divisibility join(const Divisibility &a, const Divisibility &b);

  bool operator==(const Divisibility &o) const {
    return mod == o.mod && rem == o.rem;
  }
  bool operator!=(const Divisibility &o) const { return !(*this == o); }

  /// "unknown", "constant 5", "0 mod 128", "32 mod 128".
  std::string print() const;

private:
  Divisibility(uint64_t modulus, int64_t remainder)
      : mod(modulus), rem(remainder) {}
  uint64_t mod;
  int64_t rem;
};

// Transfer functions. `width` is the bit width of the operands (1..64; index
// is 64). `mayWrap` is false only when the operation is known not to wrap
// (arith's nsw flag, affine maps, loop induction variables).

Divisibility add(const Divisibility &a, const Divisibility &b, unsigned width,
                 bool mayWrap);
Divisibility sub(const Divisibility &a, const Divisibility &b, unsigned width,
                 bool mayWrap);
Divisibility mul(const Divisibility &a, const Divisibility &b, unsigned width,
                 bool mayWrap);
/// Signed division rounding toward zero (arith.divsi).
Divisibility divSigned(const Divisibility &a, const Divisibility &b,
                       unsigned width);
/// Signed division rounding toward negative infinity (arith.floordivsi,
/// affine floordiv).
Divisibility floorDivSigned(const Divisibility &a, const Divisibility &b,
                            unsigned width);
/// Signed division rounding toward positive infinity (arith.ceildivsi,
/// affine ceildiv).
Divisibility ceilDivSigned(const Divisibility &a, const Divisibility &b,
                           unsigned width);
/// Unsigned division (arith.divui).
Divisibility divUnsigned(const Divisibility &a, const Divisibility &b,
                         unsigned width);
/// Signed remainder with the sign of the dividend (arith.remsi).
Divisibility remSigned(const Divisibility &a, const Divisibility &b,
                       unsigned width);
/// Remainder with the sign of the divisor (affine mod).
Divisibility floorModSigned(const Divisibility &a, const Divisibility &b,
                            unsigned width);
/// Unsigned remainder (arith.remui).
Divisibility remUnsigned(const Divisibility &a, const Divisibility &b,
                         unsigned width);
Divisibility shiftLeft(const Divisibility &a, const Divisibility &b,
                       unsigned width, bool mayWrap);
/// Arithmetic shift right (arith.shrsi): floor division by 2^b.
Divisibility shiftRightSigned(const Divisibility &a, const Divisibility &b,
                              unsigned width);
/// Logical shift right (arith.shrui).
Divisibility shiftRightUnsigned(const Divisibility &a, const Divisibility &b,
                                unsigned width);
Divisibility bitAnd(const Divisibility &a, const Divisibility &b,
                    unsigned width);
Divisibility bitOr(const Divisibility &a, const Divisibility &b,
                   unsigned width);
Divisibility bitXor(const Divisibility &a, const Divisibility &b,
                    unsigned width);
/// min and max (signed or unsigned) are one of their operands.
Divisibility minOrMax(const Divisibility &a, const Divisibility &b);
/// Sign extension keeps the signed value.
inline Divisibility extendSigned(const Divisibility &a) { return a; }
/// Zero extension from `fromWidth` bits.
Divisibility extendUnsigned(const Divisibility &a, unsigned fromWidth);
/// Truncation to `toWidth` bits.
Divisibility truncate(const Divisibility &a, unsigned toWidth);

/// `v` as a signed integer of `width` bits (wrapping). @pre 1 <= width <= 64
int64_t wrapToWidth(int64_t v, unsigned width);

} // namespace tessel

#endif // TESSEL_SUPPORT_DIVISIBILITY_H
