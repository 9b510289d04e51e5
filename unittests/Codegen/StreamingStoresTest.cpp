//===- StreamingStoresTest.cpp - Non-temporal stores into large outputs ---===//
//
// Which stores the streaming copy of a kernel marks non-temporal (parsed
// LLVM IR, printed back), and that a transpose kernel and a loop kernel
// with their streaming copies give the evaluator's bits into aligned
// outputs (the copy) and unaligned ones (the kernel).
//
//===----------------------------------------------------------------------===//
#include "StreamingStores.h"
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

/// @k stores a 64-byte vector at element 16 * %i of %out (aligned when %out
/// is), one at element 16 * %i + 4 (never aligned to 64), a 16-byte one at
/// element 4 * %i of %out, and one into %in.
const char *kStores = R"(
define void @k(ptr %in, ptr %out, i64 %i, <16 x float> %v, <4 x float> %w) {
  %a = shl i64 %i, 4
  %p = getelementptr float, ptr %out, i64 %a
  store <16 x float> %v, ptr %p, align 4
  %b = add i64 %a, 4
  %q = getelementptr float, ptr %out, i64 %b
  store <16 x float> %v, ptr %q, align 4
  %c = shl i64 %i, 2
  %r = getelementptr float, ptr %out, i64 %c
  store <4 x float> %w, ptr %r, align 4
  %s = getelementptr float, ptr %in, i64 %a
  store <16 x float> %v, ptr %s, align 4
  ret void
}
)";

/// The module after addStreamingCopy(@k, outputs) and markStreamingStores,
/// and how many stores were marked.
std::string streamed(const std::vector<unsigned> &outputs, int &marked) {
  return transformLlvmText(
      kStores,
      [&](llvm::Module &module) {
        addStreamingCopy(module, "k", kStreamSuffix, outputs);
        return markStreamingStores(module);
      },
      marked);
}

TEST(StreamingStoresTest, AlignedVectorStoresIntoOutputsOnly) {
  int marked = 0;
  std::string text = streamed({1}, marked);
  // The 64-byte store at a multiple of 16 elements and the 16-byte one at
  // a multiple of 4; not the one 16 bytes off, not the one into %in.
  EXPECT_EQ(marked, 2) << text;
  size_t copy = text.find("define void @k_stream");
  ASSERT_NE(copy, std::string::npos) << text;
  std::string original = text.substr(0, copy), stream = text.substr(copy);
  EXPECT_EQ(countOccurrences(original, "!nontemporal"), 0) << text;
  EXPECT_EQ(countOccurrences(original, "sfence"), 0) << text;
  EXPECT_EQ(countOccurrences(stream, "!nontemporal"), 2) << text;
  EXPECT_EQ(countOccurrences(stream, "align 64, !nontemporal"), 1) << text;
  EXPECT_EQ(countOccurrences(stream, "align 16, !nontemporal"), 1) << text;
  EXPECT_EQ(countOccurrences(stream, "call void @llvm.x86.sse.sfence()"), 1)
      << text;
  EXPECT_NE(stream.find("noinline"), std::string::npos) << text;
}

/// Stores wider than a line (the CPU's lane loops write vector<32xf32>):
/// marked where they start on a line, with a line's alignment; the code
/// generator splits them into registers that keep the hint.
TEST(StreamingStoresTest, StoresOfSeveralLines) {
  const char *wide = R"(
define void @w(ptr %out, i64 %i, <32 x float> %v, <24 x float> %u) {
  %a = shl i64 %i, 5
  %p = getelementptr float, ptr %out, i64 %a
  store <32 x float> %v, ptr %p, align 4
  %b = add i64 %a, 8
  %q = getelementptr float, ptr %out, i64 %b
  store <32 x float> %v, ptr %q, align 4
  store <24 x float> %u, ptr %p, align 4
  ret void
}
)";
  int marked = 0;
  std::string text = transformLlvmText(
      wide,
      [](llvm::Module &module) {
        addStreamingCopy(module, "w", kStreamSuffix, {0});
        return markStreamingStores(module);
      },
      marked);
  // The one at a multiple of 32 elements; not the one 32 bytes off, not
  // the 96-byte one (not a whole number of lines).
  EXPECT_EQ(marked, 1) << text;
  std::string stream = text.substr(text.find("define void @w_stream"));
  EXPECT_EQ(countOccurrences(stream, "store <32 x float> %v, ptr %p, align "
                                     "64, !nontemporal"),
            1)
      << text;
}

TEST(StreamingStoresTest, NothingMarkedWithoutOutputs) {
  int marked = -1;
  std::string text = streamed({}, marked);
  EXPECT_EQ(marked, 0);
  EXPECT_EQ(countOccurrences(text, "!nontemporal"), 0) << text;
  EXPECT_EQ(countOccurrences(text, "sfence"), 0) << text;
}

/// `text` compiled with TESSEL_STREAM=1 (so that a small output gets the
/// streaming copy): its kernel_0 has a copy with non-temporal stores, and
/// runs into a 64-byte aligned output (the copy runs) and one 16 bytes
/// past a line (the kernel runs) give the evaluator's bits.
void expectStreamedAndExact(const char *text) {
  auto module = parseTestModule(text);
  ASSERT_TRUE(module);
  CompileOptions options;
  auto stream = std::make_unique<ScopedEnv>("TESSEL_STREAM", "1");
  Expected<std::string> assembly =
      emitHloModule(*module, EmitKind::Asm, options);
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, options);
  stream.reset();
  ASSERT_TRUE(assembly) << assembly.error().message;
  ASSERT_TRUE(exe) << exe.error().message;
  EXPECT_NE(assembly->find("kernel_0_stream"), std::string::npos);
  // vmovntps, or vmovntdq where LLVM made the abs an integer and.
  EXPECT_NE(assembly->find("vmovnt"), std::string::npos);

  std::vector<Literal> arguments = randomArguments(*module, 3);
  Expected<Literal> want = evaluateHloModule(*module, arguments);
  ASSERT_TRUE(want) << want.error().message;
  size_t bytes =
      static_cast<size_t>(want->elementCount() * want->elementBytes());
  std::vector<const void *> inputs;
  for (const Literal &argument : arguments)
    inputs.push_back(argument.data());
  for (size_t offset : {size_t(0), size_t(16)}) {
    SCOPED_TRACE("output at " + std::to_string(offset) + " past a line");
    std::vector<uint8_t> storage(bytes + 128, 0);
    uintptr_t at = reinterpret_cast<uintptr_t>(storage.data());
    uint8_t *out = storage.data() + (64 - at % 64) % 64 + offset;
    RunOptions run;
    run.threads = 2;
    Status ran = (*exe)->runPhysical(inputs, {out}, run);
    ASSERT_TRUE(ran) << ran.error().message;
    EXPECT_EQ(std::memcmp(out, want->data(), bytes), 0);
  }
}

TEST(StreamingStoresTest, TransposeIntoAlignedAndUnalignedOutputs) {
  expectStreamedAndExact(R"(
HloModule streamed
ENTRY e {
  %p = f32[96,160] parameter(0)
  %n = f32[96,160] negate(%p)
  %t = f32[160,96] transpose(%n), dimensions={1,0}
  ROOT %a = f32[160,96] abs(%t)
}
)");
}

/// A loop kernel that writes the module's output streams it too (a large
/// elementwise output is read again only after the module returns).
TEST(StreamingStoresTest, LoopKernelIntoAlignedAndUnalignedOutputs) {
  expectStreamedAndExact(R"(
HloModule streamed
ENTRY e {
  %p = f32[96,160] parameter(0)
  %q = f32[96,160] parameter(1)
  %n = f32[96,160] negate(%p)
  ROOT %a = f32[96,160] multiply(%n, %q)
}
)");
}

/// Only the kernel that writes the module's output gets a streaming copy:
/// not the loop kernel whose output the next kernel reads (it should stay
/// in cache), nor the transpose that runs as a relayout plan.
TEST(StreamingStoresTest, OnlyTheKernelWritingTheModulesOutput) {
  auto module = parseTestModule(R"(
HloModule intermediate
%neg {
  %p = f32[96,160] parameter(0)
  ROOT %n = f32[96,160] negate(%p)
}
ENTRY e {
  %p = f32[96,160] parameter(0)
  %f = f32[96,160] fusion(%p), kind=kLoop, calls=%neg
  %t = f32[160,96] transpose(%f), dimensions={1,0}
  ROOT %a = f32[160,96] add(%t, %t)
}
)");
  ASSERT_TRUE(module);
  ScopedEnv stream("TESSEL_STREAM", "1");
  Expected<std::string> assembly =
      emitHloModule(*module, EmitKind::Asm, CompileOptions());
  ASSERT_TRUE(assembly) << assembly.error().message;
  EXPECT_NE(assembly->find("kernel_2_stream:"), std::string::npos);
  EXPECT_EQ(assembly->find("kernel_0_stream:"), std::string::npos);
  EXPECT_EQ(assembly->find("kernel_1_stream:"), std::string::npos);
}

} // namespace
