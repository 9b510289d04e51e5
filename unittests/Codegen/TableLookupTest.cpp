//===- TableLookupTest.cpp - Elementwise kernels run as table lookups -----===//
//
// Which kernels run as a table lookup, and that a lookup gives the
// computing kernel's bits for every input bit pattern: the same module is
// compiled with and without tables and run on an input that holds every bit
// pattern several times, at shuffled positions, and the outputs compared
// byte for byte (and against the evaluator within the compiler's bound).
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/HloParser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>

using namespace tessel;

namespace {

/// With `tables`: wherever a table is possible, whether it pays on this
/// CPU or not, so that every case is tabulated on every host.
std::shared_ptr<Executable> compile(const HloModule &module, bool tables) {
  CompileOptions options;
  options.tables = tables;
  options.tablesByCost = false;
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(module, options);
  EXPECT_TRUE(exe) << exe.error().message;
  return exe ? *exe : nullptr;
}

/// A module whose ENTRY is one loop fusion of `body` (instructions over
/// %p, the parameter `input`; the last is the ROOT).
std::string elementwiseModule(const std::string &input, const std::string &body,
                              const std::string &output) {
  return "HloModule m\n\nf {\n  %p = " + input + " parameter(0)\n" + body +
         "}\n\nENTRY e {\n  %x = " + input +
         " parameter(0)\n  ROOT %y = " + output +
         " fusion(%x), kind=kLoop, calls=f\n}\n";
}

struct TableCase {
  const char *name;
  std::string module;
};

std::vector<TableCase> tabulatedCases() {
  // Sizes that are not multiples of the kernels' blocks.
  const std::string bf16 = "bf16[4,65539]";
  return {
      {"bf16 gelu",
       elementwiseModule(bf16,
                         "  %h = bf16[] constant(0.5)\n"
                         "  %hb = bf16[4,65539] broadcast(%h), dimensions={}\n"
                         "  %one = bf16[] constant(1)\n"
                         "  %ob = bf16[4,65539] broadcast(%one), "
                         "dimensions={}\n"
                         "  %k = bf16[] constant(0.79785)\n"
                         "  %kb = bf16[4,65539] broadcast(%k), dimensions={}\n"
                         "  %c = bf16[] constant(0.044708)\n"
                         "  %cb = bf16[4,65539] broadcast(%c), dimensions={}\n"
                         "  %sq = bf16[4,65539] multiply(%p, %p)\n"
                         "  %cu = bf16[4,65539] multiply(%sq, %p)\n"
                         "  %m3 = bf16[4,65539] multiply(%cu, %cb)\n"
                         "  %a1 = bf16[4,65539] add(%p, %m3)\n"
                         "  %m2 = bf16[4,65539] multiply(%a1, %kb)\n"
                         "  %t = bf16[4,65539] tanh(%m2)\n"
                         "  %a0 = bf16[4,65539] add(%t, %ob)\n"
                         "  %m1 = bf16[4,65539] multiply(%a0, %hb)\n"
                         "  ROOT %r = bf16[4,65539] multiply(%p, %m1)\n",
                         bf16)},
      {"f16 to f32 exp",
       elementwiseModule("f16[300007]",
                         "  %c = f32[300007] convert(%p)\n"
                         "  ROOT %r = f32[300007] exponential(%c)\n",
                         "f32[300007]")},
      {"s16 square plus constant",
       elementwiseModule("s16[512,600]",
                         "  %c = s32[512,600] convert(%p)\n"
                         "  %sq = s32[512,600] multiply(%c, %c)\n"
                         "  %k = s32[] constant(-7)\n"
                         "  %kb = s32[512,600] broadcast(%k), dimensions={}\n"
                         "  ROOT %r = s32[512,600] add(%sq, %kb)\n",
                         "s32[512,600]")},
      {"u16 compare to pred",
       elementwiseModule("u16[270000]",
                         "  %k = u16[] constant(40000)\n"
                         "  %kb = u16[270000] broadcast(%k), dimensions={}\n"
                         "  ROOT %r = pred[270000] compare(%p, %kb), "
                         "direction=GT\n",
                         "pred[270000]")},
      // 1-byte inputs, 2-byte entries: eight inputs read at once.
      {"s8 to bf16 scaled",
       elementwiseModule("s8[3,7001]",
                         "  %c = bf16[3,7001] convert(%p)\n"
                         "  %k = bf16[] constant(-0.37)\n"
                         "  %kb = bf16[3,7001] broadcast(%k), dimensions={}\n"
                         "  ROOT %r = bf16[3,7001] multiply(%c, %kb)\n",
                         "bf16[3,7001]")},
      {"u8 log in f64", elementwiseModule("u8[3001]",
                                          "  %c = f64[3001] convert(%p)\n"
                                          "  ROOT %r = f64[3001] log(%c)\n",
                                          "f64[3001]")},
      {"s8 abs in a column-major layout",
       elementwiseModule("s8[64,70]{0,1}",
                         "  ROOT %r = s8[64,70]{0,1} abs(%p)\n",
                         "s8[64,70]{0,1}")},
      {"pred select",
       elementwiseModule("pred[5000]",
                         "  %a = s32[] constant(3)\n"
                         "  %ab = s32[5000] broadcast(%a), dimensions={}\n"
                         "  %b = s32[] constant(-9)\n"
                         "  %bb = s32[5000] broadcast(%b), dimensions={}\n"
                         "  ROOT %r = s32[5000] select(%p, %ab, %bb)\n",
                         "s32[5000]")},
  };
}

/// `elements` elements of `width` bytes holding every bit pattern of the
/// width (pred: only 0 and 1) at least once, at random positions.
std::vector<uint8_t> everyPattern(int64_t elements, int width, bool pred,
                                  uint64_t seed) {
  int64_t patterns = pred ? 2 : int64_t(1) << (8 * width);
  std::vector<int64_t> order(elements);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 random(seed);
  std::shuffle(order.begin(), order.end(), random);
  std::vector<uint8_t> bytes(elements * width);
  for (int64_t i = 0; i < elements; ++i) {
    uint16_t pattern = static_cast<uint16_t>(order[i] % patterns);
    std::memcpy(bytes.data() + i * width, &pattern, width);
  }
  return bytes;
}

TEST(TableLookupTest, LookupsGiveTheKernelsBitsForEveryInput) {
  for (const TableCase &c : tabulatedCases()) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<HloModule> module = parseTestModule(c.module);
    ASSERT_TRUE(module);
    std::shared_ptr<Executable> table = compile(*module, true);
    std::shared_ptr<Executable> computed = compile(*module, false);
    ASSERT_TRUE(table && computed);
    EXPECT_EQ(table->tabulatedKernels(), std::vector<std::string>{"kernel_0"});
    EXPECT_TRUE(computed->tabulatedKernels().empty());

    Shape input = module->entryProgramShape().parameters.front();
    int width = byteWidth(input.elementType);
    int64_t elements = *input.elementCount();
    ASSERT_EQ(table->inputBytes().front(), elements * width);
    std::vector<uint8_t> in = everyPattern(
        elements, width, input.elementType == PrimitiveType::Pred, 7);
    // Ordinary and streaming stores (whole 64-byte lines of the output;
    // the buffer need not start on one), 1 and 2 workers.
    for (int run = 0; run < 4; ++run) {
      int threads = 1 + run % 2;
      bool streaming = run >= 2;
      setenv("TESSEL_TABLE_STREAM", streaming ? "1" : "0", 1);
      SCOPED_TRACE("threads " + std::to_string(threads) +
                   (streaming ? ", streaming" : ""));
      // The lookup's output 16 bytes past a 64-byte line.
      int64_t bytes = table->outputBytes().front();
      std::vector<uint8_t> space(bytes + 128, 0xA5);
      uint8_t *got = space.data() +
                     (64 - reinterpret_cast<uintptr_t>(space.data()) % 64) + 16;
      std::vector<uint8_t> want(computed->outputBytes().front(), 0x5A);
      RunOptions options;
      options.threads = threads;
      ASSERT_TRUE(table->runPhysical({in.data()}, {got}, options));
      ASSERT_TRUE(computed->runPhysical({in.data()}, {want.data()}, options));
      bool same = std::memcmp(got, want.data(), bytes) == 0;
      EXPECT_TRUE(same);
      if (!same)
        break;
    }
    unsetenv("TESSEL_TABLE_STREAM");
  }
}

TEST(TableLookupTest, LookupsMatchTheEvaluator) {
  for (const TableCase &c : tabulatedCases()) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<HloModule> module = parseTestModule(c.module);
    ASSERT_TRUE(module);
    Shape input = module->entryProgramShape().parameters.front();
    std::vector<Literal> arguments = {randomLiteral(input, 3, true)};
    CompileOptions options;
    options.tablesByCost = false;
    KernelCheckResult check = checkKernels(*module, arguments, options, 2);
    EXPECT_EQ(check.failure, "");
  }
}

TEST(TableLookupTest, OnlyElementwiseKernelsOfOneNarrowInputAreTabulated) {
  struct Refused {
    const char *why;
    std::string module;
  };
  std::vector<Refused> refused = {
      {"two inputs",
       "HloModule m\nf {\n  %p = bf16[300000] parameter(0)\n"
       "  %q = bf16[300000] parameter(1)\n"
       "  ROOT %r = bf16[300000] add(%p, %q)\n}\n"
       "ENTRY e {\n  %x = bf16[300000] parameter(0)\n"
       "  %y = bf16[300000] parameter(1)\n"
       "  ROOT %z = bf16[300000] fusion(%x, %y), kind=kLoop, calls=f\n}\n"},
      {"an iota", elementwiseModule("s16[300000]",
                                    "  %i = s16[300000] iota(), "
                                    "iota_dimension=0\n"
                                    "  ROOT %r = s16[300000] add(%p, %i)\n",
                                    "s16[300000]")},
      {"a 32-bit input", elementwiseModule("f32[300000]",
                                           "  ROOT %r = f32[300000] "
                                           "exponential(%p)\n",
                                           "f32[300000]")},
      {"too few elements for the table",
       elementwiseModule("bf16[200000]",
                         "  ROOT %r = bf16[200000] exponential(%p)\n",
                         "bf16[200000]")},
      {"a table over 256 KiB",
       elementwiseModule("bf16[300000]",
                         "  %c = f64[300000] convert(%p)\n"
                         "  ROOT %r = f64[300000] exponential(%c)\n",
                         "f64[300000]")},
      {"another layout for the output",
       elementwiseModule("bf16[600,600]{1,0}",
                         "  ROOT %r = bf16[600,600]{0,1} negate(%p)\n",
                         "bf16[600,600]{0,1}")},
      {"a non-scalar constant",
       elementwiseModule("u8[1024,4]",
                         "  %k = u8[4] constant({1, 2, 3, 4})\n"
                         "  %kb = u8[1024,4] broadcast(%k), dimensions={1}\n"
                         "  ROOT %r = u8[1024,4] add(%p, %kb)\n",
                         "u8[1024,4]")},
      {"a bitcast-convert between widths (an element reads its neighbour)",
       elementwiseModule("u8[1024,2]",
                         "  %w = u16[1024] bitcast-convert(%p)\n"
                         "  %n = u16[1024] not(%w)\n"
                         "  ROOT %r = u8[1024,2] bitcast-convert(%n)\n",
                         "u8[1024,2]")},
      {"a reduce",
       "HloModule m\nadd {\n  %a = s32[] parameter(0)\n"
       "  %b = s32[] parameter(1)\n  ROOT %c = s32[] add(%a, %b)\n}\n"
       "f {\n  %p = u8[2048,300] parameter(0)\n"
       "  %c = s32[2048,300] convert(%p)\n  %z = s32[] constant(0)\n"
       "  ROOT %r = s32[2048] reduce(%c, %z), dimensions={1}, to_apply=add\n}\n"
       "ENTRY e {\n  %x = u8[2048,300] parameter(0)\n"
       "  ROOT %y = s32[2048] fusion(%x), kind=kLoop, calls=f\n}\n"},
  };
  for (const Refused &r : refused) {
    SCOPED_TRACE(r.why);
    std::unique_ptr<HloModule> module = parseTestModule(r.module);
    ASSERT_TRUE(module);
    std::shared_ptr<Executable> exe = compile(*module, true);
    ASSERT_TRUE(exe);
    EXPECT_TRUE(exe->tabulatedKernels().empty());
  }
}

/// By default a table is built only where it is estimated to pay: the
/// GELU's (8 ops rounded to bf16 and a tanh: more than 5 vector
/// instructions per element even in 512-bit registers) on every CPU, a
/// widening convert's (one instruction per 4 or more elements) on none.
TEST(TableLookupTest, TablesOnlyWhereComputingCostsMore) {
  struct Case {
    const char *name;
    std::string module;
    bool tabulated;
  };
  std::vector<Case> cases = {
      {"bf16 gelu", tabulatedCases().front().module, true},
      {"u8 to f32",
       elementwiseModule("u8[4096]", "  ROOT %r = f32[4096] convert(%p)\n",
                         "f32[4096]"),
       false},
      {"s16 to s32 plus one",
       elementwiseModule("s16[300000]",
                         "  %c = s32[300000] convert(%p)\n"
                         "  %k = s32[] constant(1)\n"
                         "  %kb = s32[300000] broadcast(%k), dimensions={}\n"
                         "  ROOT %r = s32[300000] add(%c, %kb)\n",
                         "s32[300000]"),
       false},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<HloModule> module = parseTestModule(c.module);
    ASSERT_TRUE(module);
    Expected<std::shared_ptr<Executable>> byCost =
        Executable::compile(*module, CompileOptions{});
    ASSERT_TRUE(byCost) << byCost.error().message;
    EXPECT_EQ((*byCost)->tabulatedKernels().size(), c.tabulated ? 1u : 0u);
    // Without the estimate both are tabulated.
    std::shared_ptr<Executable> always = compile(*module, true);
    ASSERT_TRUE(always);
    EXPECT_EQ(always->tabulatedKernels().size(), 1u);
  }
}

TEST(TableLookupTest, TheGpuLaunchComputes) {
  std::unique_ptr<HloModule> module =
      parseTestModule(tabulatedCases().front().module);
  ASSERT_TRUE(module);
  CompileOptions options;
  options.target = Target::Gpu;
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, options);
  ASSERT_TRUE(exe) << exe.error().message;
  EXPECT_TRUE((*exe)->tabulatedKernels().empty());
}

} // namespace
