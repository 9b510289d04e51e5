//===- RandomFusionTest.cpp - Random fusions against the evaluator --------===//
//
// Thousands of random loop fusions (RandomFusion.h) are compiled, run on
// random arguments with special values, and compared with the reference
// evaluator: bit for bit, since no op in them is approximated; and a smaller
// family ending in a transcendental function, within the compiler's bound.
// TESSEL_RANDOM_FUSION_MODULES=N runs N modules of each family instead of
// the default (each module holds 16 fusions), from the seed
// TESSEL_RANDOM_FUSION_FIRST on (default 1 and 100000, so that a long
// campaign can go on where the last one stopped); TESSEL_RANDOM_FUSION_SEED=S
// checks one module; TESSEL_RANDOM_FUSION_DUMP=DIR writes each module and
// its arguments there (DIR/seedS.hlo, DIR/seedS.inputK.npy).
//
//===----------------------------------------------------------------------===//
#include "RandomFusion.h"
#include "KernelCheck.h"

#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Support/Npy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace tessel;

namespace {

constexpr int kFusionsPerModule = 16;

int modulesToRun(int fallback) {
  const char *env = std::getenv("TESSEL_RANDOM_FUSION_MODULES");
  return env ? std::max(1, std::atoi(env)) : fallback;
}

/// The offset of the first seed of a family (0 unless
/// TESSEL_RANDOM_FUSION_FIRST is set: the exact family's seeds then start
/// there, the approximated family's at 100000 plus it).
uint64_t firstSeedOffset() {
  const char *env = std::getenv("TESSEL_RANDOM_FUSION_FIRST");
  return env ? std::strtoull(env, nullptr, 10) : 0;
}

/// Compiles and checks one random module; on a mismatch, narrows it down to
/// the fusion that fails by checking each one alone.
void checkRandomModule(uint64_t seed, const RandomFusionOptions &options,
                       Target target) {
  RandomFusionGenerator generator(seed, options);
  RandomModule m = generator.module(kFusionsPerModule);
  SCOPED_TRACE("seed " + std::to_string(seed));
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(m.text);
  ASSERT_TRUE(module) << module.error().message << "\n" << m.text;
  Status problem = verifyHloModule(**module);
  ASSERT_TRUE(problem) << "the generator made an invalid module: "
                       << problem.error().message << "\n"
                       << m.text;
  std::vector<Literal> arguments;
  for (size_t i = 0; i < m.parameters.size(); ++i)
    arguments.push_back(
        randomLiteral(m.parameters[i], seed * 1000 + i, /*specials=*/true));
  if (const char *dir = std::getenv("TESSEL_RANDOM_FUSION_DUMP")) {
    // The module and its arguments, for `tessel run module.hlo --input
    // input0.npy ... --check`.
    std::string prefix = std::string(dir) + "/seed" + std::to_string(seed);
    std::ofstream(prefix + ".hlo") << m.text;
    for (size_t i = 0; i < arguments.size(); ++i) {
      const Literal &a = arguments[i];
      NpyArray array{npyDescr(a.elementType()), a.dims(), false,
                     std::string(reinterpret_cast<const char *>(a.data()),
                                 a.elementCount() * a.elementBytes())};
      std::ofstream(prefix + ".input" + std::to_string(i) + ".npy",
                    std::ios::binary)
          << writeNpy(array);
    }
  }
  CompileOptions compileOptions;
  compileOptions.target = target;
  KernelCheckResult check =
      checkKernels(**module, arguments, compileOptions, /*threads=*/2);
  EXPECT_FALSE(check.refused) << check.failure << "\n" << m.text;
  if (check.failure.empty() || check.refused)
    return;
  // The fusions whose outputs differ.
  std::string failing;
  size_t last = SIZE_MAX;
  for (size_t output : check.failingOutputs) {
    size_t fusion = m.fusionOfOutput[output];
    if (fusion != last)
      failing += m.fusions[fusion];
    last = fusion;
  }
  ADD_FAILURE() << check.failure << (failing.empty() ? m.text : failing);
}

class RandomFusions : public testing::TestWithParam<int> {};

// TESSEL_RANDOM_FUSION_SEED=S checks that one module alone (a failure
// prints its seed), on the CPU and with the GPU's launch.
TEST(RandomFusionSeed, FromTheEnvironment) {
  const char *env = std::getenv("TESSEL_RANDOM_FUSION_SEED");
  if (!env)
    GTEST_SKIP() << "TESSEL_RANDOM_FUSION_SEED is not set";
  uint64_t seed = std::strtoull(env, nullptr, 10);
  RandomFusionOptions options;
  options.approximateFunctions = seed >= 100000;
  checkRandomModule(seed, options, Target::Cpu);
  checkRandomModule(seed, options, Target::Gpu);
}

TEST_P(RandomFusions, ExactOpsMatchTheEvaluatorBitForBit) {
  int shard = GetParam();
  int modules = modulesToRun(24);
  uint64_t first = std::max<uint64_t>(1, firstSeedOffset());
  for (int k = shard; k < modules; k += 4)
    checkRandomModule(first + k, RandomFusionOptions{},
                      k % 3 == 2 ? Target::Gpu : Target::Cpu);
}

TEST_P(RandomFusions, ApproximatedFunctionsWithinTheBound) {
  int shard = GetParam();
  int modules = modulesToRun(8);
  RandomFusionOptions options;
  options.approximateFunctions = true;
  uint64_t first = 100000 + firstSeedOffset();
  for (int k = shard; k < modules; k += 4)
    checkRandomModule(first + k, options, Target::Cpu);
}

// Four shards, so that ctest runs them side by side.
INSTANTIATE_TEST_SUITE_P(Shards, RandomFusions, testing::Values(0, 1, 2, 3));

TEST(RandomFusionGeneratorTest, MakesValidModulesOfEveryKind) {
  // The generator itself: valid modules, and every kind of op appears.
  std::string all;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    RandomFusionGenerator generator(seed);
    RandomModule m = generator.module(kFusionsPerModule);
    Expected<std::unique_ptr<HloModule>> module = parseHloModule(m.text);
    ASSERT_TRUE(module) << module.error().message << "\n" << m.text;
    Status problem = verifyHloModule(**module);
    ASSERT_TRUE(problem) << problem.error().message << "\n" << m.text;
    all += m.text;
  }
  for (const char *op : {" broadcast(",
                         " reshape(",
                         " transpose(",
                         " slice(",
                         " pad(",
                         " reverse(",
                         " concatenate(",
                         " iota(",
                         " convert(",
                         " bitcast-convert(",
                         " reduce-precision(",
                         " compare(",
                         " select(",
                         " clamp(",
                         " dynamic-slice(",
                         " dynamic-update-slice(",
                         " reduce(",
                         " bf16[",
                         " f16[",
                         " s8[",
                         " f8e4m3fn[",
                         " pred[",
                         " tuple("})
    EXPECT_NE(all.find(op), std::string::npos) << op;
}

} // namespace
