//===- InputPrefetchTest.cpp - Prefetching the next tile's input rows -----===//
//
// Which loads of a marked kernel get a prefetch (parsed LLVM IR, printed
// back), and that a transpose fusion compiled with the prefetches gives the
// evaluator's bits, while the size gate leaves small transposes alone.
//
//===----------------------------------------------------------------------===//
#include "InputPrefetch.h"
#include "KernelCheck.h"
#include "LlvmText.h"

#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/HloEvaluator.h"

#include "llvm/IR/Module.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using namespace tessel;

namespace {

/// @k loads a vector from %in at element %i, a scalar from %in, a vector
/// from %other (masked, as at a tile's ragged edge) and one from %out.
const char *kLoads = R"(
declare <8 x float> @llvm.masked.load.v8f32.p0(ptr, i32, <8 x i1>, <8 x float>)
define <8 x float> @k(ptr %in, ptr %other, ptr %out, i64 %i, <8 x i1> %m) {
  %p = getelementptr float, ptr %in, i64 %i
  %v = load <8 x float>, ptr %p, align 4
  %s = load float, ptr %in, align 4
  %q = getelementptr float, ptr %other, i64 %i
  %w = call <8 x float> @llvm.masked.load.v8f32.p0(ptr %q, i32 4, <8 x i1> %m, <8 x float> poison)
  %r = getelementptr float, ptr %out, i64 %i
  %x = load <8 x float>, ptr %r, align 4
  %a = fadd <8 x float> %v, %w
  %b = fadd <8 x float> %a, %x
  %c = insertelement <8 x float> %b, float %s, i64 0
  ret <8 x float> %c
}
)";

/// The module after markInputPrefetches(@k, inputs) and
/// addInputPrefetches, and how many prefetches were added.
std::string prefetched(const std::vector<std::pair<unsigned, int64_t>> &inputs,
                       int &added) {
  return transformLlvmText(
      kLoads,
      [&](llvm::Module &module) {
        markInputPrefetches(module, "k", inputs);
        return addInputPrefetches(module);
      },
      added);
}

TEST(InputPrefetchTest, VectorLoadsOfListedInputsOnly) {
  int added = 0;
  std::string text = prefetched({{0, 512}, {1, 64}}, added);
  // The vector loads from %in and %other (masked); not the scalar one, not
  // %out's.
  EXPECT_EQ(added, 2) << text;
  EXPECT_EQ(countOccurrences(text, "call void @llvm.prefetch.p0("), 2) << text;
  EXPECT_NE(text.find("getelementptr i8, ptr %p, i64 512"), std::string::npos)
      << text;
  EXPECT_NE(text.find("getelementptr i8, ptr %q, i64 64"), std::string::npos)
      << text;
  // Read, into L2, data.
  EXPECT_EQ(countOccurrences(text, "i32 0, i32 2, i32 1)"), 2) << text;
  EXPECT_NE(text.find("noinline"), std::string::npos) << text;
  EXPECT_NE(text.find("\"tessel-prefetch-inputs\"=\"0:512,1:64\""),
            std::string::npos)
      << text;
}

TEST(InputPrefetchTest, NothingWithoutInputs) {
  int added = -1;
  std::string text = prefetched({}, added);
  EXPECT_EQ(added, 0);
  EXPECT_EQ(countOccurrences(text, "llvm.prefetch"), 0) << text;
  EXPECT_EQ(countOccurrences(text, "tessel-prefetch-inputs"), 0) << text;
}

/// The LLVM IR of `module` with TESSEL_PREFETCH set to `mode` (empty: the
/// size decides).
Expected<std::string> llvmWith(const HloModule &module, const char *mode) {
  ScopedEnv prefetch("TESSEL_PREFETCH", mode);
  return emitHloModule(module, EmitKind::Llvm, CompileOptions());
}

/// negate -> transpose -> abs of an s8[rows, cols] parameter.
auto negateTransposeAbs(int rows, int cols) {
  std::string in = "s8[" + std::to_string(rows) + "," + std::to_string(cols) +
                   "]",
              out = "s8[" + std::to_string(cols) + "," + std::to_string(rows) +
                    "]";
  return parseTestModule(
      "HloModule prefetched\nfused {\n  %p = " + in +
      " parameter(0)\n  %n = " + in + " negate(%p)\n  %t = " + out +
      " transpose(%n), dimensions={1,0}\n  ROOT %a = " + out +
      " abs(%t)\n}\nENTRY e {\n  %x = " + in + " parameter(0)\n  ROOT %f = " +
      out + " fusion(%x), kind=kInput, calls=fused\n}\n");
}

/// An s8 transpose fusion of whole tiles (256 rows of 128 bytes): the loads
/// of its input prefetch 128 bytes ahead when asked (TESSEL_PREFETCH=1),
/// not when small (the size decides) or TESSEL_PREFETCH=0. Whole tiles, so
/// that the input's loads are vectors on every host (at a ragged edge an
/// AVX2 host, which has no masked byte loads, keeps them scalar: nothing
/// to prefetch).
TEST(InputPrefetchTest, TransposeTilesPrefetchTheNextTile) {
  auto module = negateTransposeAbs(256, 512);
  ASSERT_TRUE(module);
  Expected<std::string> on = llvmWith(*module, "1");
  Expected<std::string> sized = llvmWith(*module, "");
  Expected<std::string> off = llvmWith(*module, "0");
  ASSERT_TRUE(on && sized && off);
  EXPECT_GT(countOccurrences(*on, "call void @llvm.prefetch.p0("), 0);
  EXPECT_NE(on->find("i64 128\n"), std::string::npos);
  EXPECT_EQ(countOccurrences(*sized, "llvm.prefetch"), 0);
  EXPECT_EQ(countOccurrences(*off, "llvm.prefetch"), 0);
}

/// Compiled with the prefetches, a transpose fusion with ragged tiles on
/// both sides gives the evaluator's bits.
TEST(InputPrefetchTest, PrefetchedRaggedTransposeMatchesTheEvaluator) {
  auto module = negateTransposeAbs(300, 520);
  ASSERT_TRUE(module);
  Expected<std::shared_ptr<Executable>> exe = [&] {
    ScopedEnv prefetch("TESSEL_PREFETCH", "1");
    return Executable::compile(*module, CompileOptions());
  }();
  ASSERT_TRUE(exe) << exe.error().message;
  std::vector<Literal> arguments = randomArguments(*module, 5);
  Expected<Literal> want = evaluateHloModule(*module, arguments);
  ASSERT_TRUE(want) << want.error().message;
  size_t bytes =
      static_cast<size_t>(want->elementCount() * want->elementBytes());
  std::vector<uint8_t> out(bytes);
  RunOptions run;
  run.threads = 2;
  Status ran = (*exe)->runPhysical({arguments[0].data()}, {out.data()}, run);
  ASSERT_TRUE(ran) << ran.error().message;
  EXPECT_EQ(std::memcmp(out.data(), want->data(), bytes), 0);
}

} // namespace
