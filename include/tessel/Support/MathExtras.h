//===- MathExtras.h - Integer helpers with overflow checks ------*- C++ -*-===//
//
// Layout sizes are products of user-given extents; every such product goes
// through these helpers so that an overflow becomes an error, never undefined
// behaviour.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_MATHEXTRAS_H
#define TESSEL_SUPPORT_MATHEXTRAS_H

#include <cstdint>
#include <optional>

namespace tessel {

/// a * b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// a + b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// ceil(a / b) for a >= 0, b > 0.
inline int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/// a rounded up to a multiple of b, or nullopt on overflow (a >= 0, b > 0).
inline std::optional<int64_t> checkedRoundUp(int64_t a, int64_t b) {
  return checkedMul(ceilDiv(a, b), b);
}

/// Floor division and modulo that round toward negative infinity (b != 0),
/// as affine maps define them: floorDiv(-1, 4) == -1, floorMod(-1, 4) == 3.
inline int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

} // namespace tessel

#endif // TESSEL_SUPPORT_MATHEXTRAS_H
