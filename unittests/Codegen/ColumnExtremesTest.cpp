//===- ColumnExtremesTest.cpp - -tessel-column-extremes -------------------===//
//
// Column maxima and minima of f32, bf16 and f16 run first as a compare
// and select and per-column sums that show NaNs and a zero result's sign,
// and as they were where a block saw a NaN or a zero result whose sign the
// sum does not tell (ColumnExtremes.cpp). Every kind of column (extreme in the
// first or the last row, a zero result of either sign, NaNs, infinities), alone
// among ordinary columns, and initial values that are NaNs or zeros: the
// bits must be the evaluator's (a NaN where it has one), with the CPU's
// launch and the GPU's.
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

enum class Column {
  Ordinary,
  ExtremeFirst,
  ExtremeLast,
  ZeroOfBothSigns, // every other element beyond it the other way
  NegativeZeroOnly,
  ZerosOnly,
  PositiveZerosOnly, // a ReLU's dead unit
  NegativeZerosOnly,
  OneNaN,
  Infinities,
};
constexpr Column kColumns[] = {
    Column::Ordinary,          Column::ExtremeFirst,      Column::ExtremeLast,
    Column::ZeroOfBothSigns,   Column::NegativeZeroOnly,  Column::ZerosOnly,
    Column::PositiveZerosOnly, Column::NegativeZerosOnly, Column::OneNaN,
    Column::Infinities};

/// `type`[rows, cols] of ordinary values (none a zero), column `which` of
/// `kind`. `sign` is 1 for a maximum, -1 for a minimum: "beyond" is
/// `sign` times greater.
Literal columns(PrimitiveType type, int64_t rows, int64_t cols, int64_t which,
                Column kind, float sign, std::mt19937 &rng) {
  Literal l(Shape(type, {rows, cols}));
  std::uniform_real_distribution<float> value(0.5f, 100.0f);
  auto at = [&](int64_t r, int64_t c) { return r * cols + c; };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      l.setFloat(at(r, c), (rng() % 2 ? 1.0f : -1.0f) * value(rng));
  auto row = [&] { return static_cast<int64_t>(rng() % rows); };
  switch (kind) {
  case Column::Ordinary:
    break;
  case Column::ExtremeFirst:
    l.setFloat(at(0, which), sign * 1000.0f);
    break;
  case Column::ExtremeLast:
    l.setFloat(at(rows - 1, which), sign * 1000.0f);
    break;
  case Column::ZeroOfBothSigns:
  case Column::NegativeZeroOnly:
    for (int64_t r = 0; r < rows; ++r)
      l.setFloat(at(r, which), -sign * value(rng));
    l.setFloat(at(row(), which), -0.0f);
    if (kind == Column::ZeroOfBothSigns)
      l.setFloat(at(row(), which), 0.0f);
    l.setFloat(at(row(), which), -0.0f);
    break;
  case Column::ZerosOnly:
    for (int64_t r = 0; r < rows; ++r)
      l.setFloat(at(r, which), rng() % 2 ? 0.0f : -0.0f);
    break;
  case Column::PositiveZerosOnly:
  case Column::NegativeZerosOnly:
    for (int64_t r = 0; r < rows; ++r)
      l.setFloat(at(r, which),
                 kind == Column::PositiveZerosOnly ? 0.0f : -0.0f);
    break;
  case Column::OneNaN: {
    // Quiet or signaling, either sign, a payload.
    bool quiet = rng() % 2, negative = rng() % 2;
    l.setBits(at(row(), which),
              nanPattern(type, quiet, negative, 1 + rng() % 7));
    break;
  }
  case Column::Infinities:
    l.setFloat(at(row(), which), std::numeric_limits<float>::infinity());
    l.setFloat(at(row(), which), -std::numeric_limits<float>::infinity());
    break;
  }
  return l;
}

TEST(ColumnExtremesTest, EveryKindOfColumnMatchesTheEvaluator) {
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(29);
  for (const char *typeName : {"f32", "bf16", "f16"})
    for (const char *op : {"maximum", "minimum"}) {
      PrimitiveType type = *parsePrimitiveType(typeName);
      std::string t = typeName;
      bool isMax = std::strcmp(op, "maximum") == 0;
      float sign = isMax ? 1.0f : -1.0f;
      // Initial values: the identity, zeros of both signs, a NaN, a value
      // beyond every element of some columns.
      const float nan = std::numeric_limits<float>::quiet_NaN();
      const float inits[] = {-sign * inf, 0.0f, -0.0f, nan, sign * 50.0f};
      // 72 rows: 9 steps of 8; 300: 75 steps of 4; 1024: segments of 256,
      // then 4 rows (too few for the pass).
      for (int64_t rows : {72, 300, 1024}) {
        const int64_t cols = 40;
        std::string text = reduceModuleText(t, {rows, cols}, 0, op);
        SCOPED_TRACE(text);
        auto module = parseTestModule(text);
        ASSERT_TRUE(module);
        for (Target target : {Target::Cpu, Target::Gpu}) {
          CompileOptions options;
          options.target = target;
          Expected<std::shared_ptr<Executable>> exe =
              Executable::compile(*module, testBackendOptions(options));
          ASSERT_TRUE(exe) << exe.error().message;
          for (Column kind : kColumns)
            for (float init : inits) {
              int64_t which = rng() % cols;
              std::vector<Literal> args;
              args.push_back(columns(type, rows, cols, which, kind, sign, rng));
              args.push_back(floatScalar(type, init));
              RunOptions run;
              run.threads = 2;
              Expected<Literal> got = (*exe)->run(args, run);
              ASSERT_TRUE(got) << got.error().message;
              Expected<Literal> want = evaluateHloModule(*module, args);
              ASSERT_TRUE(want) << want.error().message;
              int64_t c = firstDifferentBits(*got, *want);
              ASSERT_EQ(c, -1)
                  << (target == Target::Cpu ? "CPU" : "GPU")
                  << " launch, column " << c << " of kind "
                  << static_cast<int>(kind) << " at " << which
                  << ", initial value " << init << ": " << got->getFloat(c)
                  << ", expected " << want->getFloat(c);
            }
        }
      }
    }
}

} // namespace
