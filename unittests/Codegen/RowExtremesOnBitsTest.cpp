//===- RowExtremesOnBitsTest.cpp - bf16/f16 row maxima on the bits --------===//
//
// A bf16 or f16 row maximum or minimum runs on the bits of its elements:
// three integer reductions per lane, and the loop as it was for a row
// where a lane met a NaN (-tessel-vectorize-partials, minMaxOnBits). A long
// row takes two chunks of 16 a step, one vector of 32 lanes, whose halves
// are combined after the loop; where its loop has an odd number of steps
// one chunk is taken alone, the first (the emitter's loop starts at chunk
// 1) or the last. Rows of every length that changes which chunks are
// paired, each with one kind of element at a place that one of those
// paths alone reads (chunk 0, the initial value; chunk 1, alone; the low
// and high halves of a pair; the last chunk; the elements after the
// chunks): the bits must be the evaluator's (a NaN where it has one,
// firstDifferentBits), with the CPU's launch and the GPU's.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace tessel;

namespace {

enum class Row {
  Ordinary,
  ExtremeAt,      // one element beyond every other, at the place
  AllNegative,    // the maximum of a row without a non-negative element
  AllNonNegative, // with +0s
  ZerosOnly,      // +0 and -0
  NegativeZeroAt, // negative numbers and one -0 at the place
  OneNaNAt,       // mixed signs, one NaN at the place
  InfinitiesAt,   // +inf at the place, -inf elsewhere
};
constexpr Row kRows[] = {
    Row::Ordinary,  Row::ExtremeAt,      Row::AllNegative, Row::AllNonNegative,
    Row::ZerosOnly, Row::NegativeZeroAt, Row::OneNaNAt,    Row::InfinitiesAt};

/// A random element in each part of a row of `length` that one path alone
/// reads: chunk 0 (the initial partials), chunks 1 to 3 (chunk 1 alone and
/// the halves of the first pair, or the first pair and the low half of
/// the second), a chunk in the middle, the last chunk, and the elements
/// after the last chunk (where the length is not a multiple of 16).
std::vector<int64_t> places(int64_t length, std::mt19937 &rng) {
  int64_t chunks = length / 16;
  std::vector<int64_t> chunkList = {0, 1, 2, 3, chunks / 2, chunks - 1};
  std::vector<int64_t> at;
  for (int64_t c : chunkList)
    at.push_back(c * 16 + static_cast<int64_t>(rng() % 16));
  if (length % 16 != 0)
    at.push_back(chunks * 16 + static_cast<int64_t>(rng() % (length % 16)));
  return at;
}

/// Fills row `r` of `l` (`type`[rows, length]) as `kind`, its special
/// element at `place`; `sign` is 1 for a maximum, -1 for a minimum.
void fillRow(Literal &l, PrimitiveType type, int64_t r, int64_t length,
             Row kind, int64_t place, float sign, std::mt19937 &rng) {
  std::uniform_real_distribution<float> value(0.5f, 100.0f);
  auto set = [&](int64_t i, float v) { l.setFloat(r * length + i, v); };
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < length; ++i) {
    float magnitude = value(rng);
    switch (kind) {
    case Row::AllNegative:
    case Row::NegativeZeroAt:
      set(i, -magnitude);
      break;
    case Row::AllNonNegative:
      set(i, i % 5 == 0 ? 0.0f : magnitude);
      break;
    case Row::ZerosOnly:
      set(i, rng() % 2 ? 0.0f : -0.0f);
      break;
    case Row::InfinitiesAt:
      set(i, -sign * inf);
      break;
    default:
      set(i, (rng() % 2 ? 1.0f : -1.0f) * magnitude);
    }
  }
  switch (kind) {
  case Row::ExtremeAt:
    set(place, sign * 1000.0f);
    break;
  case Row::NegativeZeroAt:
    set(place, -0.0f);
    break;
  case Row::OneNaNAt:
    l.setBits(r * length + place,
              nanPattern(type, rng() % 2, rng() % 2, 1 + rng() % 7));
    break;
  case Row::InfinitiesAt:
    set(place, sign * inf);
    break;
  default:
    break;
  }
}

TEST(RowExtremesOnBitsTest, EveryKindOfRowAtEveryPlaceMatchesTheEvaluator) {
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(41);
  // The loop's steps (the chunks of 16 after the first) and how they run:
  // 512: 31, one chunk a step (15 pairs would be too few); 544: 33, chunk 1
  // alone, then 16 pairs; 560: 34, chunk 1 alone, 16 pairs, the last chunk
  // alone; 1000: 61, chunk 1 alone, 30 pairs, then 8 more elements; 1040:
  // 64, chunk 1 alone, 31 pairs, the last chunk alone.
  for (int64_t length : {512, 544, 560, 1000, 1040})
    for (const char *typeName : {"bf16", "f16"})
      for (const char *op : {"maximum", "minimum"}) {
        PrimitiveType type = *parsePrimitiveType(typeName);
        std::string t = typeName;
        bool isMax = std::strcmp(op, "maximum") == 0;
        float sign = isMax ? 1.0f : -1.0f;
        const int64_t rows = 40;
        std::string text = reduceModuleText(t, {rows, length}, 1, op);
        SCOPED_TRACE(text);
        auto module = parseTestModule(text);
        ASSERT_TRUE(module);
        for (Target target : {Target::Cpu, Target::Gpu}) {
          CompileOptions options;
          options.target = target;
          Expected<std::shared_ptr<Executable>> exe =
              Executable::compile(*module, testBackendOptions(options));
          ASSERT_TRUE(exe) << exe.error().message;
          for (float init : {-sign * inf, 0.0f, -0.0f,
                             std::numeric_limits<float>::quiet_NaN()})
            for (Row kind : kRows)
              for (int64_t place : places(length, rng)) {
                // Rows of `kind` with the special element at `place`,
                // among rows of every other kind at random places.
                Literal input(Shape(type, {rows, length}));
                std::vector<std::pair<Row, int64_t>> made;
                for (int64_t r = 0; r < rows; ++r) {
                  bool mine = r % 3 == 0;
                  Row k = mine ? kind : kRows[rng() % std::size(kRows)];
                  std::vector<int64_t> at = places(length, rng);
                  int64_t p = mine ? place : at[rng() % at.size()];
                  fillRow(input, type, r, length, k, p, sign, rng);
                  made.emplace_back(k, p);
                }
                std::vector<Literal> args;
                args.push_back(std::move(input));
                args.push_back(floatScalar(type, init));
                RunOptions run;
                run.threads = 2;
                Expected<Literal> got = (*exe)->run(args, run);
                ASSERT_TRUE(got) << got.error().message;
                Expected<Literal> want = evaluateHloModule(*module, args);
                ASSERT_TRUE(want) << want.error().message;
                int64_t r = firstDifferentBits(*got, *want);
                ASSERT_EQ(r, -1)
                    << (target == Target::Cpu ? "CPU" : "GPU")
                    << " launch, rows of " << length << ", row " << r
                    << " of kind " << static_cast<int>(made[r].first) << " at "
                    << made[r].second << ", initial value " << init << ": "
                    << got->getFloat(r) << ", expected " << want->getFloat(r)
                    << " (bits " << got->getBits(r) << ", expected "
                    << want->getBits(r) << ")";
              }
        }
      }
}

} // namespace
