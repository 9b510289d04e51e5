//===- HalfConversionLoopsTest.cpp - Vector width hints for f16 loops -----===//
//
// Which loops get a vector width hint and which width (parsed LLVM IR,
// printed back), and that a convert chain through f16 computed by the
// hinted kernel gives the evaluator's bits for every bf16 input.
//
//===----------------------------------------------------------------------===//
#include "HalfConversionLoops.h"
#include "KernelCheck.h"
#include "LlvmText.h"

#include "tessel/Codegen/Compiler.h"

#include "llvm/IR/Module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

using namespace tessel;

namespace {

/// A function with two loops over n elements: @convert's body converts
/// through `half` (computing in `float` or `wide`), @scale's does not.
std::string loopsModule(const std::string &wide) {
  return R"(
define void @convert(ptr %in, ptr %out, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr float, ptr %in, i64 %i
  %x = load float, ptr %p
  %h = fptrunc float %x to half
  %y = fpext half %h to )" +
         wide + R"(
  %q = getelementptr )" +
         wide + R"(, ptr %out, i64 %i
  store )" +
         wide +
         R"( %y, ptr %q
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

define void @scale(ptr %in, ptr %out, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr float, ptr %in, i64 %i
  %x = load float, ptr %p
  %y = fmul float %x, 3.0
  store float %y, ptr %p
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
)";
}

/// The module printed after hinting with `vectorBits`, and how many loops
/// were marked.
std::string hinted(const std::string &text, unsigned vectorBits, int &marked) {
  return transformLlvmText(
      text,
      [&](llvm::Module &module) {
        return hintHalfConversionLoops(module, vectorBits);
      },
      marked);
}

TEST(HalfConversionLoopsTest, LoopsThroughHalfGetTheRegistersWidth) {
  int marked = 0;
  std::string text = hinted(loopsModule("float"), 512, marked);
  EXPECT_EQ(marked, 1);
  EXPECT_NE(text.find("!{!\"llvm.loop.vectorize.width\", i32 16}"),
            std::string::npos)
      << text;
  // Only the loop of @convert: its latch branch carries the loop ID.
  size_t scale = text.find("define void @scale");
  ASSERT_NE(scale, std::string::npos);
  EXPECT_NE(text.substr(0, scale).find("!llvm.loop"), std::string::npos);
  EXPECT_EQ(text.substr(scale).find("!llvm.loop"), std::string::npos);

  text = hinted(loopsModule("float"), 256, marked);
  EXPECT_EQ(marked, 1);
  EXPECT_NE(text.find("i32 8}"), std::string::npos) << text;
  // A loop computing in double fits half as many lanes.
  text = hinted(loopsModule("double"), 512, marked);
  EXPECT_EQ(marked, 1);
  EXPECT_NE(text.find("i32 8}"), std::string::npos) << text;
}

TEST(HalfConversionLoopsTest, NoHintWithoutVectorConversions) {
  int marked = -1;
  std::string text = hinted(loopsModule("float"), 0, marked);
  EXPECT_EQ(marked, 0);
  EXPECT_EQ(text.find("!llvm.loop"), std::string::npos) << text;
  // 64 bits hold one double: no vector.
  text = hinted(loopsModule("double"), 64, marked);
  EXPECT_EQ(marked, 0);
}

TEST(HalfConversionLoopsTest, NoHintOnReductions) {
  // An f16 sum, rounded to f16 after every add: with an explicit width the
  // loop vectorizer may reorder it as if it had `reassoc`.
  std::string sum = R"(
define half @sum(ptr %in, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %acc = phi half [ 0xH0000, %entry ], [ %s, %loop ]
  %p = getelementptr half, ptr %in, i64 %i
  %x = load half, ptr %p
  %a = fpext half %acc to float
  %b = fpext half %x to float
  %t = fadd float %a, %b
  %s = fptrunc float %t to half
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret half %s
}
)";
  int marked = -1;
  std::string text = hinted(sum, 512, marked);
  EXPECT_EQ(marked, 0);
  EXPECT_EQ(text.find("!llvm.loop"), std::string::npos) << text;
  // The same loop with its accumulator stored instead is hinted.
  text = hinted(loopsModule("float"), 512, marked);
  EXPECT_EQ(marked, 1);
}

/// The benchmark's convert chain, computed (no table), on every bf16 bit
/// pattern at shuffled positions: the evaluator's bits, NaNs, infinities,
/// the values f16 cannot hold and its subnormals included.
TEST(HalfConversionLoopsTest, ComputedConvertChainMatchesTheEvaluator) {
  const char *text = R"(HloModule m

f {
  %x = bf16[4,65536] parameter(0)
  %wide = f32[4,65536] convert(%x)
  %three = f32[] constant(3)
  %b3 = f32[4,65536] broadcast(%three), dimensions={}
  %scaled = f32[4,65536] multiply(%wide, %b3)
  %half = f16[4,65536] convert(%scaled)
  %back = f32[4,65536] convert(%half)
  %one = f32[] constant(1)
  %b1 = f32[4,65536] broadcast(%one), dimensions={}
  %plus = f32[4,65536] add(%back, %b1)
  ROOT %out = bf16[4,65536] convert(%plus)
}

ENTRY e {
  %x = bf16[4,65536] parameter(0)
  ROOT %y = bf16[4,65536] fusion(%x), kind=kLoop, calls=f
}
)";
  std::unique_ptr<HloModule> module = parseTestModule(text);
  ASSERT_TRUE(module);
  Literal input(module->entryProgramShape().parameters.front());
  std::mt19937_64 random(11);
  std::vector<uint16_t> patterns(4 * 65536);
  for (size_t i = 0; i < patterns.size(); ++i)
    patterns[i] = static_cast<uint16_t>(i);
  std::shuffle(patterns.begin(), patterns.end(), random);
  std::memcpy(input.data(), patterns.data(), patterns.size() * 2);
  CompileOptions options;
  options.tables = false;
  for (int threads : {1, 2}) {
    KernelCheckResult check = checkKernels(*module, {input}, options, threads);
    EXPECT_EQ(check.failure, "");
  }
}

} // namespace
