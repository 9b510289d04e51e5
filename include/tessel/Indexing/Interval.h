//===- Interval.h - Inclusive integer intervals -----------------*- C++ -*-===//
//
// An Interval is a set of consecutive integers [lower, upper], both ends
// included, as indexing maps write variable ranges: `d0 in [0, 9]` is the
// Interval {0, 9}. An interval with lower > upper is empty.
//
// The arithmetic here is the interval arithmetic of affine expressions: the
// result contains every value the operation can produce from values in the
// operands, and is exact (the smallest such interval) for +, * by a
// constant, floordiv and ceildiv by a positive constant:
//
//   [2, 5] + [0, 3]       = [2, 8]
//   [2, 5] * -3           = [-15, -6]
//   [-7, 9] floordiv 4    = [-2, 2]
//   [5, 6] mod 4          = [1, 2]     (one period: exact)
//   [3, 9] mod 4          = [0, 3]     (crosses a multiple of 4)
//
// Bounds saturate at the int64_t limits instead of overflowing, so the result
// still contains every value that fits in 64 bits.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INDEXING_INTERVAL_H
#define TESSEL_INDEXING_INTERVAL_H

#include "tessel/Support/MathExtras.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>

namespace tessel {

struct Interval {
  int64_t lower = 0;
  int64_t upper = -1;

  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

  constexpr Interval() = default;
  constexpr Interval(int64_t lower, int64_t upper)
      : lower(lower), upper(upper) {}
  /// The single value `value`.
  static constexpr Interval point(int64_t value) { return {value, value}; }
  /// Every int64_t.
  static constexpr Interval full() { return {kMin, kMax}; }

  bool isEmpty() const { return lower > upper; }
  bool isPoint() const { return lower == upper; }
  bool contains(int64_t value) const {
    return lower <= value && value <= upper;
  }
  /// True when every value of `other` is in this interval (an empty `other`
  /// is contained in anything).
  bool contains(const Interval &other) const {
    return other.isEmpty() || (lower <= other.lower && other.upper <= upper);
  }
  /// upper - lower + 1, or nullopt when empty or when it overflows.
  std::optional<int64_t> size() const {
    if (isEmpty())
      return std::nullopt;
    int64_t difference;
    if (__builtin_sub_overflow(upper, lower, &difference) || difference == kMax)
      return std::nullopt;
    return difference + 1;
  }

  Interval intersect(const Interval &other) const {
    return {std::max(lower, other.lower), std::min(upper, other.upper)};
  }
  /// The smallest interval holding both (the convex hull).
  Interval hull(const Interval &other) const {
    if (isEmpty())
      return other;
    if (other.isEmpty())
      return *this;
    return {std::min(lower, other.lower), std::max(upper, other.upper)};
  }

  Interval operator+(const Interval &other) const {
    return {saturate(static_cast<__int128>(lower) + other.lower),
            saturate(static_cast<__int128>(upper) + other.upper)};
  }
  Interval operator*(int64_t factor) const {
    __int128 a = static_cast<__int128>(lower) * factor;
    __int128 b = static_cast<__int128>(upper) * factor;
    return {saturate(std::min(a, b)), saturate(std::max(a, b))};
  }
  /// Product with another interval (both operands variable).
  Interval operator*(const Interval &other) const {
    __int128 products[] = {static_cast<__int128>(lower) * other.lower,
                           static_cast<__int128>(lower) * other.upper,
                           static_cast<__int128>(upper) * other.lower,
                           static_cast<__int128>(upper) * other.upper};
    return {saturate(*std::min_element(products, products + 4)),
            saturate(*std::max_element(products, products + 4))};
  }
  /// @pre divisor > 0.
  Interval floorDiv(int64_t divisor) const {
    return {tessel::floorDiv(lower, divisor), tessel::floorDiv(upper, divisor)};
  }
  /// @pre divisor > 0.
  Interval ceilDiv(int64_t divisor) const {
    auto ceil = [&](int64_t value) {
      __int128 negated = -static_cast<__int128>(value);
      __int128 q = negated / divisor;
      if (negated % divisor != 0 && negated < 0)
        --q;
      return saturate(-q);
    };
    return {ceil(lower), ceil(upper)};
  }
  /// @pre divisor > 0.
  Interval mod(int64_t divisor) const {
    if (floorDiv(divisor).isPoint())
      return {floorMod(lower, divisor), floorMod(upper, divisor)};
    return {0, divisor - 1};
  }

  bool operator==(const Interval &other) const {
    return lower == other.lower && upper == other.upper;
  }
  bool operator!=(const Interval &other) const { return !(*this == other); }

  /// `[lower, upper]`, as indexing maps print ranges.
  std::string toString() const {
    return "[" + std::to_string(lower) + ", " + std::to_string(upper) + "]";
  }

private:
  static int64_t saturate(__int128 value) {
    if (value < kMin)
      return kMin;
    if (value > kMax)
      return kMax;
    return static_cast<int64_t>(value);
  }
};

inline std::ostream &operator<<(std::ostream &out, const Interval &interval) {
  return out << interval.toString();
}

} // namespace tessel

#endif // TESSEL_INDEXING_INTERVAL_H
