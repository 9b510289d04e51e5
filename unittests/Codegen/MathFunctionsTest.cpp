//===- MathFunctionsTest.cpp - Compiled math functions on every input -----===//
//
// The transcendental functions the compiler approximates, against the
// evaluator (the C library) on hard inputs: for bf16 and f16 every one of
// the 65536 bit patterns (NaNs, infinities, zeros, subnormals included),
// for f32 every bf16 value widened (so every exponent, both signs and the
// special values) plus a million random bit patterns. A 16-bit result must
// be within 1 ulp; an f32 result within 8 ulp, or, near a zero of the
// function, within an absolute 1e-6 times the largest magnitude.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Hlo/HloParser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace tessel;

namespace {

struct MathCase {
  const char *op;
  const char *type;
  bool binary = false;
};

/// Every bit pattern of a 16-bit type, or (f32) every bf16 value widened
/// and then random bit patterns.
Literal hardInputs(PrimitiveType type, uint64_t seed) {
  if (bitWidth(type) == 16) {
    Literal all(Shape(type, {65536}));
    for (int64_t i = 0; i < 65536; ++i)
      all.setBits(i, static_cast<uint64_t>(i));
    return all;
  }
  constexpr int64_t kRandom = 1 << 20;
  Literal inputs(Shape(type, {65536 + kRandom}));
  for (int64_t i = 0; i < 65536; ++i)
    inputs.setBits(i, static_cast<uint64_t>(i) << 16);
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < kRandom; ++i)
    inputs.setBits(65536 + i, rng() & 0xffffffffu);
  return inputs;
}

class MathFunctions : public testing::TestWithParam<MathCase> {};

TEST_P(MathFunctions, MatchTheEvaluatorOnHardInputs) {
  MathCase c = GetParam();
  PrimitiveType type = *parsePrimitiveType(c.type);
  Literal x = hardInputs(type, 1);
  std::string n = std::to_string(x.elementCount());
  std::string shape = std::string(c.type) + "[" + n + "]";
  // A binary function reads the inputs against themselves in another
  // order (every exponent against every other, roughly).
  std::string text =
      "HloModule m\nENTRY e {\n  x = " + shape + " parameter(0)\n" +
      (c.binary ? "  z = " + shape + " parameter(1)\n  ROOT y = " + shape +
                      " " + c.op + "(x, z)\n}\n"
                : "  ROOT y = " + shape + " " + c.op + "(x)\n}\n");
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  ASSERT_TRUE(module) << module.error().message;
  std::vector<Literal> arguments;
  if (c.binary) {
    Literal z = x;
    std::mt19937_64 rng(2);
    for (int64_t i = z.elementCount() - 1; i > 0; --i) {
      int64_t j = static_cast<int64_t>(rng() % (i + 1));
      uint64_t t = z.getBits(i);
      z.setBits(i, z.getBits(j));
      z.setBits(j, t);
    }
    arguments.push_back(std::move(x));
    arguments.push_back(std::move(z));
  } else {
    arguments.push_back(std::move(x));
  }
  KernelCheckResult check =
      checkKernels(**module, arguments, CompileOptions{}, /*threads=*/2);
  EXPECT_EQ(check.failure, "");
}

std::vector<MathCase> cases() {
  std::vector<MathCase> all;
  for (const char *op :
       {"exponential", "exponential-minus-one", "log", "log-plus-one", "tanh",
        "logistic", "sine", "cosine", "tan", "erf", "cbrt", "sqrt", "rsqrt"})
    for (const char *type : {"f32", "bf16", "f16"})
      all.push_back({op, type});
  for (const char *op : {"power", "atan2", "remainder", "divide"})
    for (const char *type : {"f32", "bf16", "f16"})
      all.push_back({op, type, true});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Functions, MathFunctions, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<MathCase> &info) {
                           std::string name = std::string(info.param.op) + "_" +
                                              info.param.type;
                           for (char &ch : name)
                             if (ch == '-')
                               ch = '_';
                           return name;
                         });

} // namespace
