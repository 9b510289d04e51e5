//===- HloRngTest.cpp - rng-bit-generator against published vectors -------===//
//
// The known-answer vectors of Random123 (Salmon et al., SC 2011) for
// Threefry-2x32-20 and Philox-4x32-10, fed through rng-bit-generator's
// state layout; and the relations between 32- and 64-bit results that
// XLA's block layout implies. test/Hlo/corpus/rng_bit_generator_u32 checks
// whole arrays against XLA:CPU.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorTestHelpers.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {

std::string module(const std::string &state, const std::string &bits,
                   const std::string &algorithm) {
  return "HloModule m\nENTRY e {\n  s = " + state +
         " parameter(0)\n  ROOT r = (" + state + ", " + bits +
         ") rng-bit-generator(s), algorithm=" + algorithm + "\n}\n";
}

uint64_t pack(uint32_t low, uint32_t high) {
  return uint64_t(low) | uint64_t(high) << 32;
}

Literal u64s(const std::vector<uint64_t> &values) {
  Literal l(Shape(PrimitiveType::U64, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i)
    l.setBits(static_cast<int64_t>(i), values[i]);
  return l;
}

TEST(HloRng, ThreefryKnownAnswers) {
  // {counter words, key words, output words}.
  const uint32_t vectors[3][6] = {
      {0, 0, 0, 0, 0x6b200159, 0x99ba4efe},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xc4923a9c, 0x483df7a0}};
  for (const auto &v : vectors) {
    Literal state = u64s({pack(v[2], v[3]), pack(v[0], v[1])});
    Expected<Literal> got =
        evaluateText(module("u64[2]", "u32[2]", "rng_three_fry"), {state});
    ASSERT_TRUE(got) << got.error().message;
    const Literal &bits = got->tupleElements()[1];
    EXPECT_EQ(bits.getBits(0), v[4]);
    EXPECT_EQ(bits.getBits(1), v[5]);
    // One block used: the counter advances by one, the key stays.
    EXPECT_EQ(got->tupleElements()[0].getBits(0), state.getBits(0));
    EXPECT_EQ(got->tupleElements()[0].getBits(1), state.getBits(1) + 1);
  }
}

TEST(HloRng, PhiloxKnownAnswers) {
  // {counter words x4, key words x2, output words x4}.
  const uint32_t vectors[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
       0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
       0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
  for (const auto &v : vectors) {
    Literal state =
        u64s({pack(v[4], v[5]), pack(v[0], v[1]), pack(v[2], v[3])});
    for (const char *algorithm : {"rng_philox", "rng_default"}) {
      Expected<Literal> got =
          evaluateText(module("u64[3]", "u32[4]", algorithm), {state});
      ASSERT_TRUE(got) << got.error().message;
      for (int w = 0; w < 4; ++w)
        EXPECT_EQ(got->tupleElements()[1].getBits(w), v[6 + w]) << w;
      // The 128-bit counter advances by one block, with the carry.
      auto [low, high] = std::make_pair(
          state.getBits(1) + 1, state.getBits(2) + (state.getBits(1) + 1 == 0));
      EXPECT_EQ(got->tupleElements()[0].getBits(1), low);
      EXPECT_EQ(got->tupleElements()[0].getBits(2), high);
    }
  }
}

TEST(HloRng, SixtyFourBitResultsJoinThirtyTwoBitWords) {
  Literal state = u64s({0x0123456789abcdefu, 0xfffffffffffffffeu, 7});
  // Philox: 64-bit element e is 32-bit elements 2e and 2e+1.
  Expected<Literal> narrow =
      evaluateText(module("u64[3]", "u32[10]", "rng_philox"), {state});
  Expected<Literal> wide =
      evaluateText(module("u64[3]", "u64[5]", "rng_philox"), {state});
  ASSERT_TRUE(narrow && wide);
  for (int e = 0; e < 5; ++e)
    EXPECT_EQ(
        wide->tupleElements()[1].getBits(e),
        pack(static_cast<uint32_t>(narrow->tupleElements()[1].getBits(2 * e)),
             static_cast<uint32_t>(
                 narrow->tupleElements()[1].getBits(2 * e + 1))));
  // Threefry: 64-bit element i is the block of counter + i, which a 32-bit
  // u32[2] result of the state advanced by i holds.
  Literal two = u64s({state.getBits(0), state.getBits(1)});
  Expected<Literal> wide3 =
      evaluateText(module("u64[2]", "u64[3]", "rng_three_fry"), {two});
  ASSERT_TRUE(wide3) << wide3.error().message;
  for (uint64_t i = 0; i < 3; ++i) {
    Literal advanced = u64s({two.getBits(0), two.getBits(1) + i});
    Expected<Literal> block =
        evaluateText(module("u64[2]", "u32[2]", "rng_three_fry"), {advanced});
    ASSERT_TRUE(block);
    EXPECT_EQ(
        wide3->tupleElements()[1].getBits(static_cast<int64_t>(i)),
        pack(static_cast<uint32_t>(block->tupleElements()[1].getBits(0)),
             static_cast<uint32_t>(block->tupleElements()[1].getBits(1))));
  }
  // Narrow results keep the low bits of the 32-bit values.
  Expected<Literal> bytes =
      evaluateText(module("u64[3]", "u8[10]", "rng_philox"), {state});
  ASSERT_TRUE(bytes);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(bytes->tupleElements()[1].getBits(i),
              narrow->tupleElements()[1].getBits(i) & 0xff);
}

TEST(HloRng, BadStatesAreErrors) {
  EXPECT_NE(evaluateToString(module("u64[3]", "u32[4]", "rng_three_fry"),
                             {"{1, 2, 3}"})
                .find("expected u64[2]"),
            std::string::npos);
  EXPECT_NE(
      evaluateToString(module("u64[2]", "u32[4]", "rng_mersenne"), {"{1, 2}"})
          .find("algorithm=rng_mersenne, expected"),
      std::string::npos);
}

} // namespace
