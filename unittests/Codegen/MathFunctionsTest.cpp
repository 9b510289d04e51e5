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

#include <cmath>
#include <cstdint>
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

/// f32 exp on the CPU is tessel's own approximation (ExpApproximation.h):
/// within 1 ulp of the correctly rounded exp where that is a normal number,
/// over every f32 in [-87.3, 88.7] a stride apart and random ones, and
/// exact at the edges: +inf above 88.7228, 0 below the smallest normal
/// result, a NaN for a NaN, 1 for both zeros.
TEST(ExpF32, WithinOneUlpAndExactAtTheEdges) {
  auto bitsOf = [](float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return u;
  };
  auto floatOf = [](uint32_t u) {
    float v;
    std::memcpy(&v, &u, 4);
    return v;
  };
  std::vector<float> inputs = {
      0.0f,      -0.0f,  INFINITY,  -INFINITY,  NAN,     -NAN,    88.7228f,
      88.72284f, 88.8f,  89.0f,     1e30f,      -87.33f, -87.34f, -88.0f,
      -88.5f,    -1e30f, 0x1p-149f, -0x1p-149f, 1e-8f,   -1e-8f};
  // Every f32 from -87.3 to 88.7 a stride of bit patterns apart, both
  // signs, and random values in the range.
  for (uint32_t u = 0; u <= bitsOf(88.7f); u += 997) {
    inputs.push_back(floatOf(u));
    if (floatOf(u) <= 87.3f)
      inputs.push_back(-floatOf(u));
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> range(-87.3f, 88.7f);
  for (int i = 0; i < 200000; ++i)
    inputs.push_back(range(rng));
  int64_t n = static_cast<int64_t>(inputs.size());
  std::string shape = "f32[" + std::to_string(n) + "]";
  std::unique_ptr<HloModule> module = parseTestModule(
      "HloModule m\nENTRY e {\n  x = " + shape +
      " parameter(0)\n  ROOT y = " + shape + " exponential(x)\n}\n");
  ASSERT_TRUE(module);
  Literal x(Shape(PrimitiveType::F32, {n}));
  std::memcpy(x.data(), inputs.data(), inputs.size() * 4);
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, CompileOptions());
  ASSERT_TRUE(exe) << exe.error().message;
  std::vector<Literal> arguments;
  arguments.push_back(std::move(x));
  Expected<Literal> y = (*exe)->run(arguments, RunOptions());
  ASSERT_TRUE(y) << y.error().message;
  const auto *out = reinterpret_cast<const float *>(y->data());
  int64_t worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    float in = inputs[i], got = out[i];
    float want = static_cast<float>(std::exp(static_cast<double>(in)));
    if (std::isnan(in)) {
      EXPECT_TRUE(std::isnan(got)) << "exp(NaN) = " << got;
    } else if (want != 0.0f && std::fabs(want) < 0x1p-126f) {
      EXPECT_EQ(bitsOf(got), 0u) << "exp(" << in << ") = " << got;
    } else if (std::isinf(want) || want == 0.0f) {
      EXPECT_EQ(bitsOf(got), bitsOf(want)) << "exp(" << in << ") = " << got;
    } else {
      int64_t ulps = std::llabs(static_cast<int64_t>(bitsOf(got)) -
                                static_cast<int64_t>(bitsOf(want)));
      worst = std::max(worst, ulps);
      EXPECT_LE(ulps, 1) << "exp(" << in << ") = " << got << ", not " << want;
    }
  }
  EXPECT_LE(worst, 1);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 1.0f);
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
