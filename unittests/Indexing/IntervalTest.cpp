//===- IntervalTest.cpp - Interval arithmetic against enumeration ---------===//
#include "tessel/Indexing/Interval.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

/// The smallest interval holding f(x) for every x in `in`.
template <typename Fn> Interval hullOf(Interval in, Fn f) {
  Interval result;
  for (int64_t x = in.lower; x <= in.upper; ++x)
    result = result.hull(Interval::point(f(x)));
  return result;
}

TEST(Interval, Basics) {
  EXPECT_TRUE(Interval().isEmpty());
  EXPECT_TRUE(Interval(3, 2).isEmpty());
  EXPECT_EQ(Interval(2, 5).size(), 4);
  EXPECT_EQ(Interval::full().size(), std::nullopt);
  EXPECT_EQ(Interval(2, 5).toString(), "[2, 5]");
  EXPECT_EQ(Interval(2, 5).intersect(Interval(4, 9)), Interval(4, 5));
  EXPECT_TRUE(Interval(2, 5).intersect(Interval(6, 9)).isEmpty());
  EXPECT_TRUE(Interval(0, 9).contains(Interval(3, 2)));
  EXPECT_EQ(Interval(2, 5) + Interval(0, 3), Interval(2, 8));
  EXPECT_EQ(Interval(2, 5) * -3, Interval(-15, -6));
  EXPECT_EQ(Interval(-7, 9).floorDiv(4), Interval(-2, 2));
  EXPECT_EQ(Interval(5, 6).mod(4), Interval(1, 2));
  EXPECT_EQ(Interval(3, 9).mod(4), Interval(0, 3));
}

TEST(Interval, SaturatesInsteadOfOverflowing) {
  EXPECT_EQ(Interval(0, Interval::kMax) + Interval(1, 1),
            Interval(1, Interval::kMax));
  EXPECT_EQ(Interval(-2, 2) * Interval::kMax,
            Interval(Interval::kMin, Interval::kMax));
  EXPECT_EQ(Interval::full().ceilDiv(2),
            Interval(Interval::kMin / 2, Interval::kMax / 2 + 1));
}

TEST(Interval, ExactAgainstEnumeration) {
  for (int64_t lo = -12; lo <= 12; ++lo)
    for (int64_t hi = lo; hi <= lo + 14; ++hi) {
      Interval in(lo, hi);
      for (int64_t c = 1; c <= 7; ++c) {
        EXPECT_EQ(in.floorDiv(c),
                  hullOf(in, [&](int64_t x) { return floorDiv(x, c); }));
        EXPECT_EQ(in.ceilDiv(c),
                  hullOf(in, [&](int64_t x) { return -floorDiv(-x, c); }));
        Interval mod = in.mod(c);
        Interval actual = hullOf(in, [&](int64_t x) { return floorMod(x, c); });
        EXPECT_TRUE(mod.contains(actual)) << in << " mod " << c;
        if (in.floorDiv(c).isPoint()) {
          EXPECT_EQ(mod, actual);
        }
      }
      for (int64_t f = -4; f <= 4; ++f)
        EXPECT_EQ(in * f, hullOf(in, [&](int64_t x) { return x * f; }));
      for (int64_t a = -3; a <= 3; ++a) {
        Interval other(a, a + 2);
        EXPECT_EQ(in + other, Interval(lo + a, hi + a + 2));
        Interval product;
        for (int64_t x = lo; x <= hi; ++x)
          for (int64_t y = a; y <= a + 2; ++y)
            product = product.hull(Interval::point(x * y));
        EXPECT_EQ(in * other, product);
      }
    }
}

} // namespace
