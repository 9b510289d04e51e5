//===- RngBitGeneratorTest.cpp - rng-bit-generator, compiled --------------===//
//
// rng-bit-generator compiled element by element (RngBits.h): every
// algorithm (rng_default, rng_three_fry, rng_philox), random keys and
// counters (some about to carry into the high word), results of rank 0 to
// 3 with odd and even dims, 8- to 64-bit element types (unsigned, signed,
// float), Philox's three-element state; as one computation and as a kernel
// of its own; bit for bit against the evaluator with one and two workers
// and the GPU's launch.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Hlo/HloParser.h"

#include <gtest/gtest.h>

#include <random>

using namespace tessel;

namespace {

/// (state', bits) = rng-bit-generator(state) of `algorithm`, both results
/// returned. With `ownKernel` a fusion in the ENTRY makes every other
/// instruction a kernel of its own (the rng one wrapped alone).
std::string rngModule(const std::string &algorithm, int64_t stateSize,
                      const std::string &bits, bool ownKernel) {
  std::string state = "u64[" + std::to_string(stateSize) + "]";
  std::string text = "HloModule m\n\n";
  if (ownKernel)
    text += "copy {\n  c = " + state + " parameter(0)\n  ROOT n = " + state +
            " copy(c)\n}\n\n";
  text += "ENTRY e {\n  s = " + state + " parameter(0)\n";
  std::string from = "s";
  if (ownKernel) {
    text += "  f = " + state + " fusion(s), kind=kLoop, calls=copy\n";
    from = "f";
  }
  text += "  r = (" + state + ", " + bits + ") rng-bit-generator(" + from +
          "), algorithm=" + algorithm + "\n";
  text += "  next = " + state + " get-tuple-element(r), index=0\n";
  text += "  out = " + bits + " get-tuple-element(r), index=1\n";
  text += "  ROOT t = (" + state + ", " + bits + ") tuple(next, out)\n}\n";
  return text;
}

std::string checkRng(const HloModule &module,
                     const std::vector<Literal> &arguments) {
  KernelCheckResult one = checkKernels(module, arguments, CompileOptions{}, 1);
  return (one.failure.empty() ? "" : "one worker: " + one.failure) +
         checkBothLaunches(module, arguments);
}

TEST(RngBitGeneratorTest, EveryAlgorithmShapeAndTypeMatchesTheEvaluator) {
  std::mt19937_64 rng(31);
  const char *algorithms[] = {"rng_default", "rng_three_fry", "rng_philox"};
  const char *types[] = {"u32", "u64", "s32", "f32",  "u8",
                         "u16", "s64", "f64", "bf16", "s8"};
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {1}, {7}, {8}, {5, 7}, {4, 6}, {5, 3}, {3, 4, 6}, {3, 5, 7}};
  int checked = 0;
  for (int trial = 0; trial < 36; ++trial) {
    std::string algorithm = algorithms[trial % 3];
    int64_t stateSize = algorithm != "rng_three_fry" && trial % 2 == 1 ? 3 : 2;
    const std::vector<int64_t> &dims = shapes[rng() % shapes.size()];
    std::string bits =
        std::string(types[rng() % 10]) + "[" + joinText(dims) + "]";
    bool ownKernel = trial % 4 >= 2;
    std::string text = rngModule(algorithm, stateSize, bits, ownKernel);
    std::unique_ptr<HloModule> module = parseTestModule(text);
    ASSERT_TRUE(module);
    Literal state(Shape(PrimitiveType::U64, {stateSize}));
    for (int64_t i = 0; i < stateSize; ++i)
      state.setBits(i, rng());
    // Counters about to carry into the high word (Philox's 128 bits).
    if (trial % 5 == 0)
      state.setBits(1, ~uint64_t(0) - 2);
    std::vector<Literal> arguments;
    arguments.push_back(std::move(state));
    EXPECT_EQ(checkRng(*module, arguments), "") << text;
    ++checked;
  }
  EXPECT_EQ(checked, 36);
}

// The results read by other ops (a reshape of the bits, the new state fed
// to a second generator), as jax chains them: the corpus's pattern.
TEST(RngBitGeneratorTest, ChainedGenerators) {
  for (const char *algorithm : {"rng_default", "rng_three_fry"}) {
    std::string text = std::string(R"(HloModule m

ENTRY e {
  key = u32[4] parameter(0)
  k = u32[2,2] reshape(key)
  s = u64[2] bitcast-convert(k)
  r1 = (u64[2], u32[6,5]) rng-bit-generator(s), algorithm=)") +
                       algorithm + R"(
  s1 = u64[2] get-tuple-element(r1), index=0
  r2 = (u64[2], u64[9]) rng-bit-generator(s1), algorithm=)" +
                       algorithm + R"(
  b1 = u32[6,5] get-tuple-element(r1), index=1
  b2 = u64[9] get-tuple-element(r2), index=1
  flat = u32[30] reshape(b1)
  s2 = u64[2] get-tuple-element(r2), index=0
  ROOT t = (u32[30], u64[9], u64[2]) tuple(flat, b2, s2)
}
)";
    std::unique_ptr<HloModule> module = parseTestModule(text);
    ASSERT_TRUE(module);
    EXPECT_EQ(checkRng(*module, randomArguments(*module, 4)), "") << text;
  }
}

// What the evaluator refuses, the compiler refuses with the instruction's
// name: a state of the wrong size for Threefry.
TEST(RngBitGeneratorTest, BadStateIsRefusedByName) {
  std::string text = rngModule("rng_three_fry", 3, "u32[4]", false);
  std::unique_ptr<HloModule> module = parseTestModule(text);
  ASSERT_TRUE(module);
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, CompileOptions{});
  ASSERT_FALSE(exe);
  EXPECT_NE(exe.error().message.find("cannot compile %r (rng-bit-generator): "
                                     "the state is u64[3], expected u64[2]"),
            std::string::npos)
      << exe.error().message;
}

} // namespace
