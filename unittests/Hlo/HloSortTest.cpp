//===- HloSortTest.cpp - sort, topk and TopK against std::stable_sort -----===//
#include "EvaluatorTestHelpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

using namespace tessel;
using namespace tessel::test;

namespace {

/// sort of (keys, iota) along `dim` with a key comparator `direction`.
std::string sortModule(const std::string &dims, int dim,
                       const std::string &compare) {
  return "HloModule m\nless {\n  a = s32[] parameter(0)\n  b = s32[] "
         "parameter(1)\n  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n"
         "  ROOT r = pred[] " +
         compare + "\n}\nENTRY e {\n  k = s32" + dims +
         " parameter(0)\n  i = s32" + dims +
         " iota(), iota_dimension=" + std::to_string(dim) +
         "\n  ROOT s = (s32" + dims + ", s32" + dims +
         ") sort(k, i), dimensions={" + std::to_string(dim) +
         "}, is_stable=true, to_apply=less\n}\n";
}

TEST(HloSort, StableArgsortMatchesStdStableSort) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 40; ++trial) {
    int rows = 1 + trial % 4, cols = 1 + (trial * 7) % 9;
    int dim = trial % 2;
    bool descending = trial % 3 == 0;
    std::string dims =
        "[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
    std::string text = sortModule(dims, dim,
                                  std::string("compare(a, b), direction=") +
                                      (descending ? "GT" : "LT"));
    Literal keys(Shape(PrimitiveType::S32, {rows, cols}));
    for (int64_t i = 0; i < keys.elementCount(); ++i)
      keys.setInt(i, std::uniform_int_distribution<int>(-3, 3)(rng));
    Expected<Literal> got = evaluateText(text, {keys});
    ASSERT_TRUE(got) << got.error().message;
    // Each line independently with std::stable_sort on (key, position).
    int lines = dim == 0 ? cols : rows, length = dim == 0 ? rows : cols;
    for (int line = 0; line < lines; ++line) {
      auto at = [&](int t) {
        return dim == 0 ? t * cols + line : line * cols + t;
      };
      std::vector<int> order(length);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        int64_t x = keys.getInt(at(a)), y = keys.getInt(at(b));
        return descending ? x > y : x < y;
      });
      for (int t = 0; t < length; ++t) {
        EXPECT_EQ(got->tupleElements()[0].getInt(at(t)),
                  keys.getInt(at(order[t])));
        EXPECT_EQ(got->tupleElements()[1].getInt(at(t)), order[t]);
      }
    }
  }
}

TEST(HloSort, InconsistentComparatorGivesAPermutation) {
  // LT on floats is no strict weak order with NaNs, and "always true" is no
  // order at all; the result must still be a permutation of the input.
  for (const char *root : {"compare(a, b), direction=LT", "constant(true)",
                           "compare(a, b), direction=NE"}) {
    std::string text = std::string("HloModule m\nless {\n  a = f32[] "
                                   "parameter(0)\n  b = f32[] parameter(1)\n"
                                   "  ROOT r = pred[] ") +
                       root +
                       "\n}\nENTRY e {\n  x = f32[9] parameter(0)\n  ROOT s = "
                       "f32[9] sort(x), dimensions={0}, to_apply=less\n}\n";
    Literal x(Shape(PrimitiveType::F32, {9}));
    float values[] = {3, NAN, -1, 0, NAN, 2, -INFINITY, 2, -0.0f};
    for (int i = 0; i < 9; ++i)
      x.setDouble(i, values[i]);
    Expected<Literal> got = evaluateText(text, {x});
    ASSERT_TRUE(got) << got.error().message;
    std::vector<uint64_t> in, out;
    for (int i = 0; i < 9; ++i) {
      in.push_back(x.getBits(i));
      out.push_back(got->getBits(i));
    }
    std::sort(in.begin(), in.end());
    std::sort(out.begin(), out.end());
    EXPECT_EQ(in, out) << root;
  }
}

TEST(HloSort, TotalOrderPlacesNansAndSignedZeros) {
  const char *text = R"(HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  x = f32[7] parameter(0)
  ROOT s = f32[7] sort(x), dimensions={0}, is_stable=false, to_apply=less
}
)";
  EXPECT_EQ(evaluateToString(text, {"{nan, 0, -0, 1, -nan, -inf, inf}"}),
            "{-nan, -inf, -0, 0, 1, inf, nan}");
}

TEST(HloSort, TopKOpAndCustomCallAgree) {
  const char *op = R"(HloModule m
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true
}
)";
  const char *smallest = R"(HloModule m
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=false
}
)";
  const char *customCall = R"(HloModule m
greater {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=GT, type=TOTALORDER
}
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT t = (f32[2,3], s32[2,3]) custom-call(x), custom_call_target="TopK", called_computations={greater}
}
)";
  const char *input = "{ {1, 5, 5, -2, nan}, {-0, 0, 3, 3, 3} }";
  EXPECT_EQ(evaluateToString(op, {input}),
            "({ { nan, 5, 5 }, { 3, 3, 3 } }, { { 4, 1, 2 }, { 2, 3, 4 } })");
  EXPECT_EQ(evaluateToString(customCall, {input}),
            evaluateToString(op, {input}));
  EXPECT_EQ(evaluateToString(smallest, {input}),
            "({ { -2, 1, 5 }, { -0, 0, 3 } }, { { 3, 0, 1 }, { 0, 1, 2 } })");
}

TEST(HloSort, BadComparatorsAreErrors) {
  const char *text = R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  ROOT s = f32[3] sort(x), dimensions={0}, to_apply=cmp
}
)";
  EXPECT_NE(evaluateToString(text, {"{1, 2, 3}"})
                .find("the comparator %cmp returns f32[], expected pred[]"),
            std::string::npos);
  const char *badDim = R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[3] parameter(0)
  ROOT s = f32[3] sort(x), dimensions={1}, to_apply=cmp
}
)";
  EXPECT_NE(evaluateToString(badDim, {"{1, 2, 3}"})
                .find("9:3: %s: sort needs dimensions={d} with one d in 0..0"),
            std::string::npos);
}

} // namespace
