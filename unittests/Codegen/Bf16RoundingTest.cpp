//===- Bf16RoundingTest.cpp - Compiled bf16 rounding, bit for bit ---------===//
//
// The compiled f32 -> bf16 conversion and bf16 arithmetic agree with the
// evaluator on every bit, NaN signs and payloads included: special values,
// subnormals, rounding ties, and a sweep over random bit patterns.
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloParser.h"

#include <gtest/gtest.h>

#include <random>

namespace tessel {
namespace {

std::unique_ptr<HloModule> parse(const std::string &text) {
  auto module = parseHloModule(text);
  EXPECT_TRUE(module.ok()) << (module ? "" : module.error().message);
  return module ? std::move(*module) : nullptr;
}

/// f32 bit patterns worth testing: zeros, subnormals, ties, the largest
/// finite values, infinities, quiet and signaling NaNs of both signs, then
/// random ones.
std::vector<uint32_t> interestingBits() {
  std::vector<uint32_t> bits = {
      0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x00008000, 0x00018000,
      0x00007fff, 0x0000ffff, 0x007fffff, 0x00800000, 0x3f808000, 0x3f818000,
      0x3f807fff, 0x3f80ffff, 0x7f7fffff, 0xff7fffff, 0x7f7f8000, 0x7f800000,
      0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fa00000,
      0x7fffffff, 0xffffffff, 0x7f810000, 0xff810000};
  std::mt19937 rng(7);
  for (int i = 0; i < 4096; ++i)
    bits.push_back(rng());
  return bits;
}

Literal f32Literal(const std::vector<uint32_t> &bits) {
  Literal literal(Shape(PrimitiveType::F32, {int64_t(bits.size())}));
  for (size_t i = 0; i < bits.size(); ++i)
    literal.setBits(i, bits[i]);
  return literal;
}

void expectSameBits(const Literal &got, const Literal &want,
                    const Literal &input) {
  ASSERT_EQ(got.elementCount(), want.elementCount());
  int failures = 0;
  for (int64_t i = 0; i < want.elementCount() && failures < 10; ++i)
    if (got.getBits(i) != want.getBits(i)) {
      ++failures;
      ADD_FAILURE() << "input bits 0x" << std::hex << input.getBits(i)
                    << ": compiled 0x" << got.getBits(i) << ", evaluator 0x"
                    << want.getBits(i);
    }
}

void checkConvert(const std::string &type) {
  std::vector<uint32_t> bits = interestingBits();
  std::string n = std::to_string(bits.size());
  auto module = parse("HloModule m\nENTRY e {\n  p = f32[" + n +
                      "] parameter(0)\n  ROOT c = " + type + "[" + n +
                      "] convert(p)\n}\n");
  ASSERT_TRUE(module);
  Literal input = f32Literal(bits);
  auto exe = Executable::compile(*module, CompileOptions{});
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  auto got = (*exe)->run({input});
  auto want = evaluateHloModule(*module, {input});
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(want.ok()) << want.error().message;
  expectSameBits(*got, *want, input);
}

TEST(Bf16RoundingTest, ConvertToBf16MatchesTheEvaluatorOnEveryBit) {
  checkConvert("bf16");
}

TEST(Bf16RoundingTest, ConvertToF16MatchesTheEvaluatorOnEveryBit) {
  checkConvert("f16");
}

// Products of bf16 values round without the NaN check (Bf16Rounding.h):
// every bf16 pattern, NaNs and signaling NaNs included, times a few
// factors still matches the evaluator bit for bit.
TEST(Bf16RoundingTest, ArithmeticOnEveryBf16Value) {
  auto module = parse(R"(HloModule m
ENTRY e {
  x = bf16[65536] parameter(0)
  y = bf16[65536] parameter(1)
  m = bf16[65536] multiply(x, y)
  a = bf16[65536] add(m, x)
  ROOT d = bf16[65536] divide(a, y)
}
)");
  ASSERT_TRUE(module);
  Literal x(Shape(PrimitiveType::BF16, {65536}));
  Literal y(Shape(PrimitiveType::BF16, {65536}));
  const uint16_t factors[] = {0x3f80, 0xbfc0, 0x0001, 0x7f80,
                              0x0000, 0x7fc0, 0x7f81, 0x4049};
  for (int64_t i = 0; i < 65536; ++i) {
    x.setBits(i, i);
    y.setBits(i, factors[i % 8]);
  }
  auto exe = Executable::compile(*module, CompileOptions{});
  ASSERT_TRUE(exe.ok()) << exe.error().message;
  auto got = (*exe)->run({x, y});
  auto want = evaluateHloModule(*module, {x, y});
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(want.ok()) << want.error().message;
  expectSameBits(*got, *want, x);
}

} // namespace
} // namespace tessel
