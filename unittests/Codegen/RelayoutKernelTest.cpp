//===- RelayoutKernelTest.cpp - Data-moving kernels run as relayouts ------===//
//
// Which kernels run as a relayout plan, and that they give the transpose
// emitter's bytes: random transposes and layout-changing copies (2-D to
// 5-D, several element types, tiled layouts included) compiled with and
// without relayouts, run on the same input, compared byte for byte, and
// against the evaluator.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/LiteralArrays.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace tessel;

namespace {

std::shared_ptr<Executable> compile(const HloModule &module, bool relayouts,
                                    Target target = Target::Cpu) {
  CompileOptions options;
  options.relayouts = relayouts;
  options.target = target;
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(module, options);
  EXPECT_TRUE(exe) << exe.error().message;
  return exe ? *exe : nullptr;
}

/// `type[dims]{minor_to_major[:tiles]}`.
std::string shapeText(const std::string &type, const std::vector<int64_t> &dims,
                      const std::vector<int64_t> &minorToMajor,
                      const std::string &tiles = "") {
  return type + "[" + joinText(dims) + "]{" + joinText(minorToMajor) +
         (tiles.empty() ? "" : ":" + tiles) + "}";
}

/// A random transpose (as the ENTRY's ROOT or in a fusion) or a
/// layout-changing copy in a fusion, of a random rank, type and layouts.
std::string randomMove(std::mt19937_64 &random) {
  const std::vector<std::string> types = {"f32", "bf16", "s8", "f64", "u16"};
  std::string type = types[random() % types.size()];
  int64_t rank = 2 + static_cast<int64_t>(random() % 4);
  std::vector<int64_t> dims(rank);
  for (int64_t &d : dims)
    d = 1 + static_cast<int64_t>(random() % (rank == 2 ? 300 : 24));
  auto permutation = [&] {
    std::vector<int64_t> p(rank);
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), random);
    return p;
  };
  std::vector<int64_t> inOrder = permutation(), outOrder = permutation();
  // Sometimes tiles on the output (TPU-style) for 2-D f32/bf16.
  std::string tiles;
  if (rank == 2 && random() % 3 == 0)
    tiles = type == "bf16" ? "T(8,128)(2,1)" : "T(8,128)";
  std::string in = shapeText(type, dims, inOrder);
  int kind = static_cast<int>(random() % 3);
  if (kind == 2) { // a copy that changes the layout
    std::string out = shapeText(type, dims, outOrder, tiles);
    return "HloModule m\nf {\n  %p = " + in +
           " parameter(0)\n  ROOT %c = " + out +
           " copy(%p)\n}\nENTRY e {\n  %x = " + in +
           " parameter(0)\n  ROOT %y = " + out +
           " fusion(%x), kind=kLoop, calls=f\n}\n";
  }
  std::vector<int64_t> perm = permutation();
  std::vector<int64_t> outDims(rank);
  for (int64_t d = 0; d < rank; ++d)
    outDims[d] = dims[perm[d]];
  std::string out = shapeText(type, outDims, outOrder, tiles);
  std::string transpose =
      out + " transpose(%p), dimensions={" + joinText(perm) + "}";
  if (kind == 0)
    return "HloModule m\nENTRY e {\n  %p = " + in +
           " parameter(0)\n  ROOT %t = " + transpose + "\n}\n";
  return "HloModule m\nf {\n  %p = " + in +
         " parameter(0)\n  ROOT %t = " + transpose +
         "\n}\nENTRY e {\n  %x = " + in + " parameter(0)\n  ROOT %y = " + out +
         " fusion(%x), kind=kLoop, calls=f\n}\n";
}

TEST(RelayoutKernelTest, RelayoutsGiveTheEmittersBytes) {
  std::mt19937_64 random(20261126);
  for (int i = 0; i < 60; ++i) {
    std::string text = randomMove(random);
    SCOPED_TRACE(text);
    std::unique_ptr<HloModule> module = parseTestModule(text);
    ASSERT_TRUE(module);
    std::shared_ptr<Executable> moved = compile(*module, true);
    std::shared_ptr<Executable> emitted = compile(*module, false);
    ASSERT_TRUE(moved && emitted);
    ASSERT_EQ(moved->relayoutKernels(), std::vector<std::string>{"kernel_0"});
    ASSERT_TRUE(emitted->relayoutKernels().empty());
    Shape input = module->entryProgramShape().parameters.front();
    Literal argument = randomLiteral(input, 100 + i, true);
    // Both through run(): logical in, logical out, and the physical output
    // buffers start zeroed; then the physical bytes, padding included.
    for (int threads : {1, 2}) {
      RunOptions options;
      options.threads = threads;
      Expected<Literal> a = moved->run({argument}, options);
      Expected<Literal> b = emitted->run({argument}, options);
      ASSERT_TRUE(a && b);
      EXPECT_TRUE(*a == *b);
    }
    Expected<std::string> physical = toPhysical(argument, input);
    ASSERT_TRUE(physical);
    std::string x(moved->outputBytes().front(), '\0');
    std::string y(emitted->outputBytes().front(), '\0');
    ASSERT_TRUE(moved->runPhysical({physical->data()}, {x.data()}, {}));
    ASSERT_TRUE(emitted->runPhysical({physical->data()}, {y.data()}, {}));
    EXPECT_TRUE(x == y);
    KernelCheckResult check =
        checkKernels(*module, {argument}, CompileOptions{}, 2);
    EXPECT_EQ(check.failure, "");
  }
}

TEST(RelayoutKernelTest, OnlyKernelsThatMoveAnInputRunAsRelayouts) {
  const char *computed = R"(HloModule m
f {
  %p = f32[64,96] parameter(0)
  %e = f32[64,96] exponential(%p)
  ROOT %t = f32[96,64] transpose(%e), dimensions={1,0}
}
ENTRY e {
  %x = f32[64,96] parameter(0)
  ROOT %y = f32[96,64] fusion(%x), kind=kLoop, calls=f
})";
  const char *epilogue = R"(HloModule m
f {
  %p = f32[64,96] parameter(0)
  %t = f32[96,64] transpose(%p), dimensions={1,0}
  ROOT %a = f32[96,64] abs(%t)
}
ENTRY e {
  %x = f32[64,96] parameter(0)
  ROOT %y = f32[96,64] fusion(%x), kind=kLoop, calls=f
})";
  for (const char *text : {computed, epilogue}) {
    std::unique_ptr<HloModule> module = parseTestModule(text);
    ASSERT_TRUE(module);
    std::shared_ptr<Executable> exe = compile(*module, true);
    ASSERT_TRUE(exe);
    EXPECT_TRUE(exe->relayoutKernels().empty()) << text;
  }
  // The GPU's launch runs the emitter's code.
  std::unique_ptr<HloModule> module = parseTestModule(
      "HloModule m\nENTRY e {\n  %p = f32[64,96] parameter(0)\n"
      "  ROOT %t = f32[96,64] transpose(%p), dimensions={1,0}\n}\n");
  ASSERT_TRUE(module);
  std::shared_ptr<Executable> gpu = compile(*module, true, Target::Gpu);
  ASSERT_TRUE(gpu);
  EXPECT_TRUE(gpu->relayoutKernels().empty());
}

} // namespace
