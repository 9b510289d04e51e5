//===- HloEvaluatorTest.cpp - The reference evaluator's semantics ---------===//
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Layout/ShapeParser.h"

#include "../ErrorText.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace tessel;

namespace {

/// Evaluates `body` (the ENTRY, with %add and %max defined) on arguments
/// given as literal texts of the parameter shapes; returns the printed
/// result or the error.
std::string run(const std::string &body,
                const std::vector<std::string> &arguments = {}) {
  std::string text = "HloModule m\n"
                     "add {\n  a = f32[] parameter(0)\n  b = f32[] "
                     "parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                     "ENTRY e {\n" +
                     body + "}\n";
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  if (!module)
    return "parse: " + lineColumnText(module.error());
  if (Status problem = verifyHloModule(**module); !problem)
    return "verify: " + lineColumnText(problem.error());
  std::vector<HloInstruction *> params = (*module)->entry()->parameters();
  std::vector<Literal> values;
  for (size_t i = 0; i < arguments.size(); ++i) {
    Shape shape = params[i]->shape();
    shape.layout.reset();
    Expected<Literal> literal = parseLiteral(arguments[i], shape);
    if (!literal)
      return "argument: " + columnText(literal.error());
    values.push_back(std::move(*literal));
  }
  Expected<Literal> result = evaluateHloModule(**module, values);
  return result ? result->toString()
                : "error: " + lineColumnText(result.error());
}

TEST(HloEvaluator, IntegerEdgeCasesFollowXla) {
  const char *params = "  a = s32[6] parameter(0)\n  b = s32[6] parameter(1)\n";
  std::vector<std::string> args = {"{7, -7, -2147483648, -2147483648, 5, 1}",
                                   "{0, 0, -1, 2, 32, -1}"};
  EXPECT_EQ(run(std::string(params) + "  ROOT r = s32[6] divide(a, b)\n", args),
            "{-1, -1, -2147483648, -1073741824, 0, -1}");
  EXPECT_EQ(
      run(std::string(params) + "  ROOT r = s32[6] remainder(a, b)\n", args),
      "{7, -7, 0, 0, 5, 0}");
  EXPECT_EQ(
      run(std::string(params) + "  ROOT r = s32[6] shift-left(a, b)\n", args),
      "{7, -7, 0, 0, 0, 0}");
  EXPECT_EQ(run(std::string(params) +
                    "  ROOT r = s32[6] shift-right-arithmetic(a, b)\n",
                args),
            "{7, -7, -1, -536870912, 0, 0}");
  EXPECT_EQ(
      run(std::string(params) + "  ROOT r = s32[6] shift-right-logical(a, b)\n",
          args),
      "{7, -7, 0, 536870912, 0, 0}");
  EXPECT_EQ(
      run(std::string(params) + "  ROOT r = s32[6] multiply(a, b)\n", args),
      "{0, 0, -2147483648, 0, 160, -1}");
  EXPECT_EQ(run(std::string(params) + "  ROOT r = s32[6] power(b, a)\n", args),
            "{0, 0, 0, 0, 33554432, -1}");
  EXPECT_EQ(run("  a = u8[3] parameter(0)\n  b = u8[3] parameter(1)\n"
                "  ROOT r = u8[3] divide(a, b)\n",
                {"{7, 255, 200}", "{0, 2, 100}"}),
            "{255, 127, 2}");
  EXPECT_EQ(run("  a = s8[4] parameter(0)\n"
                "  ROOT r = s8[4] abs(a)\n",
                {"{-128, -5, 0, 127}"}),
            "{-128, 5, 0, 127}");
  EXPECT_EQ(run("  a = u16[3] parameter(0)\n"
                "  ROOT r = u16[3] count-leading-zeros(a)\n",
                {"{0, 1, 65535}"}),
            "{16, 15, 0}");
  EXPECT_EQ(run("  a = s32[3] parameter(0)\n"
                "  ROOT r = s32[3] popcnt(a)\n",
                {"{-1, 0, 7}"}),
            "{32, 0, 3}");
}

TEST(HloEvaluator, FloatSemantics) {
  EXPECT_EQ(run("  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
                "  ROOT r = f32[4] maximum(a, b)\n",
                {"{nan, 1, -0, 2}", "{1, nan, 0, -inf}"}),
            "{nan, nan, 0, 2}");
  EXPECT_EQ(run("  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
                "  ROOT r = f32[4] minimum(a, b)\n",
                {"{nan, 1, -0, 2}", "{1, nan, 0, -inf}"}),
            "{nan, nan, -0, -inf}");
  EXPECT_EQ(run("  a = f32[4] parameter(0)\n"
                "  ROOT r = f32[4] round-nearest-afz(a)\n",
                {"{0.5, 1.5, 2.5, -2.5}"}),
            "{1, 2, 3, -3}");
  EXPECT_EQ(run("  a = f32[4] parameter(0)\n"
                "  ROOT r = f32[4] round-nearest-even(a)\n",
                {"{0.5, 1.5, 2.5, -2.5}"}),
            "{0, 2, 2, -2}");
  EXPECT_EQ(run("  a = f32[4] parameter(0)\n  ROOT r = f32[4] sign(a)\n",
                {"{-3, -0, nan, 0.25}"}),
            "{-1, -0, nan, 1}");
  EXPECT_EQ(run("  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                "  ROOT r = f32[2] remainder(a, b)\n",
                {"{-7, 7}", "{2, -2}"}),
            "{-1, 1}");
  EXPECT_EQ(run("  a = f32[5] parameter(0)\n  ROOT r = s32[5] convert(a)\n",
                {"{nan, inf, -inf, 1e10, -2.9}"}),
            "{0, 2147483647, -2147483648, 2147483647, -2}");
  EXPECT_EQ(run("  a = f32[3] parameter(0)\n  ROOT r = u8[3] convert(a)\n",
                {"{-5, 300, 7.9}"}),
            "{0, 255, 7}");
  // bf16 ops compute in f32 and round once: 1 + 2^-8 is a tie -> 1.
  EXPECT_EQ(run("  a = bf16[2] parameter(0)\n  b = bf16[2] parameter(1)\n"
                "  ROOT r = bf16[2] add(a, b)\n",
                {"{1, 1}", "{0.00390625, 0.01171875}"}),
            "{1, 1.016}");
  EXPECT_EQ(run("  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                "  ROOT r = pred[2] compare(a, b), direction=LT, "
                "type=TOTALORDER\n",
                {"{-0, nan}", "{0, inf}"}),
            "{true, false}");
  EXPECT_EQ(run("  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                "  ROOT r = pred[2] compare(a, b), direction=NE\n",
                {"{-0, nan}", "{0, nan}"}),
            "{false, true}");
}

TEST(HloEvaluator, DataMovement) {
  const char *x = "{ { 1, 2, 3 }, { 4, 5, 6 } }";
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n"
                "  ROOT t = f32[3,2] transpose(p), dimensions={1,0}\n",
                {x}),
            "{ { 1, 4 }, { 2, 5 }, { 3, 6 } }");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT q = f32[3,5] pad(p, z), padding=1_0x0_0_1\n",
                {x}),
            "{ { 0, 0, 0, 0, 0 }, { 1, 0, 2, 0, 3 }, { 4, 0, 5, 0, 6 } }");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT q = f32[1,2] pad(p, z), padding=0_-1x-1_0\n",
                {x}),
            "{ { 2, 3 } }");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n"
                "  ROOT r = f32[2,3] reverse(p), dimensions={0,1}\n",
                {x}),
            "{ { 6, 5, 4 }, { 3, 2, 1 } }");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n"
                "  ROOT s = f32[1,2] slice(p), slice={[1:2], [0:3:2]}\n",
                {x}),
            "{ { 4, 6 } }");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n  i = s32[] constant(5)\n"
                "  ROOT s = f32[2,2] dynamic-slice(p, i, i), "
                "dynamic_slice_sizes={2,2}\n",
                {x}),
            "{ { 2, 3 }, { 5, 6 } }");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n  i = s32[] constant(-4)\n"
                "  u = f32[1,2] constant({ { 9, 8 } })\n"
                "  ROOT s = f32[2,3] dynamic-update-slice(p, u, i, i)\n",
                {x}),
            "{ { 9, 8, 3 }, { 4, 5, 6 } }");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n"
                "  ROOT c = f32[2,6] concatenate(p, p), dimensions={1}\n",
                {x}),
            "{ { 1, 2, 3, 1, 2, 3 }, { 4, 5, 6, 4, 5, 6 } }");
  EXPECT_EQ(run("  p = f32[3] parameter(0)\n"
                "  ROOT b = f32[2,3] broadcast(p), dimensions={1}\n",
                {"{1, 2, 3}"}),
            "{ { 1, 2, 3 }, { 1, 2, 3 } }");
  EXPECT_EQ(run("  ROOT i = s32[2,3] iota(), iota_dimension=1\n"),
            "{ { 0, 1, 2 }, { 0, 1, 2 } }");
}

TEST(HloEvaluator, ReductionsDotAndWindows) {
  const char *x = "{ { 1, 2, 3 }, { 4, 5, 6 } }";
  EXPECT_EQ(
      run("  p = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
          "  ROOT r = f32[3] reduce(p, z), dimensions={0}, to_apply=add\n",
          {x}),
      "{5, 7, 9}");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n  z = f32[] constant(10)\n"
                "  ROOT r = f32[] reduce(p, z), dimensions={0,1}, "
                "to_apply=add\n",
                {x}),
            "31");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n"
                "  ROOT d = f32[2,2] dot(p, p), lhs_contracting_dims={1}, "
                "rhs_contracting_dims={1}\n",
                {x}),
            "{ { 14, 32 }, { 32, 77 } }");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT w = f32[2,2] reduce-window(p, z), window={size=1x2 "
                "stride=1x1}, to_apply=add\n",
                {x}),
            "{ { 3, 5 }, { 9, 11 } }");
  EXPECT_EQ(run("  p = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT w = f32[2,3] reduce-window(p, z), window={size=1x3 "
                "pad=0_0x1_1}, to_apply=add\n",
                {x}),
            "{ { 3, 6, 5 }, { 9, 15, 11 } }");
}

TEST(HloEvaluator, BitcastReadsThePhysicalBuffer) {
  // f32[2,3]{1,0} and f32[3,2]{0,1} share one buffer: the bitcast is a
  // transpose of the logical arrays.
  EXPECT_EQ(run("  p = f32[2,3]{1,0} parameter(0)\n"
                "  ROOT b = f32[3,2]{0,1} bitcast(p)\n",
                {"{ { 1, 2, 3 }, { 4, 5, 6 } }"}),
            "{ { 1, 4 }, { 2, 5 }, { 3, 6 } }");
  // A tiled operand: f32[2,2]{1,0:T(2,2)} is row-major within one tile.
  EXPECT_EQ(run("  p = f32[3,2]{1,0:T(2,2)} parameter(0)\n"
                "  ROOT b = f32[8] bitcast(p)\n",
                {"{ { 1, 2 }, { 3, 4 }, { 5, 6 } }"}),
            "{1, 2, 3, 4, 5, 6, 0, 0}");
}

TEST(HloEvaluator, RefusesWhatItCannotDo) {
  EXPECT_EQ(
      run("  p = f32[4] parameter(0)\n"
          "  ROOT c = f32[4] custom-call(p), custom_call_target=\"x\"\n",
          {"{1, 2, 3, 4}"}),
      "error: 9:3: %c: custom-call \"x\" is not supported by the evaluator "
      "(it runs TopK, Sharding)");
  EXPECT_EQ(run("  ROOT c = f32[3] constant({...})\n"),
            "error: 8:3: %c: the constant has elided contents {...}: XLA "
            "printed the module without the values of its large constants; "
            "dump it with them, e.g. XLA_FLAGS='--xla_dump_to=DIR "
            "--xla_dump_hlo_as_text --xla_dump_large_constants', or print it "
            "with HloPrintOptions::print_large_constants");
  // opt-barrier and the custom-call Sharding pass their operand through.
  EXPECT_EQ(run("  p = f32[2] parameter(0)\n"
                "  t = (f32[2], f32[2]) tuple(p, p)\n"
                "  b = (f32[2], f32[2]) opt-barrier(t)\n"
                "  g = f32[2] get-tuple-element(b), index=1\n"
                "  s = f32[2] custom-call(g), custom_call_target=\"Sharding\", "
                "sharding={replicated}\n"
                "  ROOT n = f32[2] negate(s)\n",
                {"{1, 2}"}),
            "{-1, -2}");
  EXPECT_EQ(run("  p = f32[2] parameter(0)\n"
                "  ROOT s = f32[3] custom-call(p), "
                "custom_call_target=\"Sharding\"\n",
                {"{1, 2}"}),
            "verify: 9:3: %s: declared shape f32[3] does not match its "
            "operand's f32[2], expected the same (the op passes its operand "
            "through)");
}

TEST(HloEvaluator, RefusesValuesLargerThanItMayAllocate) {
  // Checked before allocating: with -fno-exceptions a failed allocation
  // would abort.
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(
      "HloModule m\nENTRY e {\n  c = f32[] constant(1)\n"
      "  ROOT b = f32[1000000] broadcast(c), dimensions={}\n}\n");
  ASSERT_TRUE(module) << module.error().message;
  EvaluatorOptions options;
  options.maxBytes = 1 << 20;
  Expected<Literal> result = evaluateHloModule(**module, {}, options);
  ASSERT_FALSE(result);
  EXPECT_EQ(lineColumnText(result.error()),
            "4:3: %b: cannot hold a value of shape f32[1000000]{0}: 4000000 "
            "bytes "
            "(3.8 MiB), more than the evaluator may allocate (1048576 bytes "
            "(1.0 MiB))");
  options.maxBytes = 4000000;
  EXPECT_TRUE(evaluateHloModule(**module, {}, options));
}

TEST(HloEvaluator, CallsNestAtMost256Deep) {
  std::string text = "HloModule m\nc0 {\n  p = f32[] parameter(0)\n"
                     "  ROOT r = f32[] negate(p)\n}\n";
  for (int i = 1; i < 300; ++i)
    text += "c" + std::to_string(i) +
            " {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), "
            "to_apply=c" +
            std::to_string(i - 1) + "\n}\n";
  text += "ENTRY e {\n  x = f32[] constant(1)\n  ROOT r = f32[] call(x), "
          "to_apply=c299\n}\n";
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  ASSERT_TRUE(module) << module.error().message;
  Expected<Literal> result = evaluateHloModule(**module, {});
  ASSERT_FALSE(result);
  // One message, not the name of every call on the way.
  EXPECT_EQ(result.error().message, "calls nest more than 256 deep at %c43");
}

TEST(HloEvaluator, EvaluatesEachCallOfTheSameValuesOnce) {
  // c_i calls c_{i-1} twice on its parameter: 2^80 calls without sharing.
  std::string text = "HloModule m\nc0 {\n  p = f32[] parameter(0)\n"
                     "  ROOT r = f32[] negate(p)\n}\n";
  for (int i = 1; i < 80; ++i) {
    std::string callee = "c" + std::to_string(i - 1);
    text += "c" + std::to_string(i) +
            " {\n  p = f32[] parameter(0)\n  a = f32[] call(p), to_apply=" +
            callee + "\n  b = f32[] call(p), to_apply=" + callee +
            "\n  ROOT r = f32[] add(a, b)\n}\n";
  }
  text += "ENTRY e {\n  x = f32[] constant(1)\n  ROOT r = f32[] call(x), "
          "to_apply=c79\n}\n";
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  ASSERT_TRUE(module) << module.error().message;
  Expected<Literal> result = evaluateHloModule(**module, {});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->toString(), "-6.044629e+23");
}

} // namespace

namespace {

TEST(HloEvaluator, PrefixReduceWindowFoldsInOrder) {
  // jax's cumsum/cummax: a window over the whole dim with size-1 padding
  // before. Each output must be the in-order fold of elements 0..i (f32
  // additions in that order, bit for bit), along either dim.
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> value(-1e3f, 1e3f);
  for (int rows : {1, 3, 7})
    for (int cols : {1, 5, 64}) {
      Literal x(Shape(PrimitiveType::F32, {rows, cols}));
      for (int64_t i = 0; i < x.elementCount(); ++i)
        x.setFloat(i, value(rng));
      for (int dim = 0; dim < 2; ++dim) {
        int length = dim ? cols : rows;
        // A window longer than the dim is still a prefix.
        int size = length + (rows % 2);
        std::string window =
            dim ? "size=1x" + std::to_string(size) + " pad=0_0x" +
                      std::to_string(size - 1) + "_0"
                : "size=" + std::to_string(size) +
                      "x1 pad=" + std::to_string(size - 1) + "_0x0_0";
        std::string shape =
            "f32[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
        std::string text = "HloModule m\nadd {\n  a = f32[] parameter(0)\n  "
                           "b = f32[] parameter(1)\n  ROOT s = f32[] add(a, "
                           "b)\n}\nmax {\n  a = f32[] parameter(0)\n  b = "
                           "f32[] parameter(1)\n  ROOT s = f32[] maximum(a, "
                           "b)\n}\nENTRY e {\n  x = " +
                           shape +
                           " parameter(0)\n  z = f32[] constant(0)\n "
                           " s = " +
                           shape + " reduce-window(x, z), window={" + window +
                           "}, to_apply=add\n  m = " + shape +
                           " reduce-window(x, z), window={" + window +
                           "}, to_apply=max\n  ROOT t = (" + shape + ", " +
                           shape + ") tuple(s, m)\n}\n";
        Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
        ASSERT_TRUE(module) << module.error().message;
        Expected<Literal> got = evaluateHloModule(**module, {x});
        ASSERT_TRUE(got) << got.error().message;
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < cols; ++c) {
            float sum = 0, max = 0;
            for (int k = 0; k <= (dim ? c : r); ++k) {
              float v =
                  dim ? x.getFloat(r * cols + k) : x.getFloat(k * cols + c);
              sum += v;
              max = std::max(max, v);
            }
            EXPECT_EQ(got->tupleElements()[0].getFloat(r * cols + c), sum);
            EXPECT_EQ(got->tupleElements()[1].getFloat(r * cols + c), max);
          }
      }
    }
}

} // namespace

namespace {

/// f32[rows, n] summed along dim 1 (the minor one), starting at `init`.
std::unique_ptr<HloModule> rowSumModule(int64_t rows, int64_t n) {
  std::string text =
      "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] "
      "parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[" +
      std::to_string(rows) + "," + std::to_string(n) +
      "] parameter(0)\n  z = f32[] constant(0.375)\n  ROOT r = f32[" +
      std::to_string(rows) +
      "] reduce(p, z), dimensions={1}, to_apply=add\n}\n";
  return std::move(*parseHloModule(text));
}

/// The documented order (reducesInPartials), written out in plain floats.
float partialSum(const std::vector<float> &x, float init) {
  int64_t n = static_cast<int64_t>(x.size()), chunks = n / 16;
  float partial[16];
  for (int j = 0; j < 16; ++j)
    partial[j] = x[j];
  for (int64_t c = 1; c < chunks; ++c)
    for (int j = 0; j < 16; ++j)
      partial[j] = partial[j] + x[c * 16 + j];
  float acc = init;
  for (int j = 0; j < 16; ++j)
    acc = acc + partial[j];
  for (int64_t t = chunks * 16; t < n; ++t)
    acc = acc + x[t];
  return acc;
}

} // namespace

TEST(HloEvaluator, CompilerReductionOrderIsTheDocumentedOne) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1000.0f, 1000.0f);
  for (int64_t n : {32, 33, 47, 48, 100, 1000, 4099}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const int64_t rows = 3;
    std::unique_ptr<HloModule> module = rowSumModule(rows, n);
    ASSERT_TRUE(reducesInPartials(*module->entry()->root()));
    Literal x(Shape(PrimitiveType::F32, {rows, n}));
    std::vector<std::vector<float>> data(rows, std::vector<float>(n));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < n; ++i) {
        // Magnitudes over 12 decades, so that the order shows in the bits.
        float v =
            value(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20);
        data[r][i] = v;
        x.setDouble({r, i}, v);
      }
    EvaluatorOptions options;
    options.compilerReductionOrder = true;
    Expected<Literal> partial = evaluateHloModule(*module, {x}, options);
    Expected<Literal> sequential = evaluateHloModule(*module, {x});
    ASSERT_TRUE(partial && sequential);
    bool anyDiffers = false;
    for (int64_t r = 0; r < rows; ++r) {
      float want = partialSum(data[r], 0.375f);
      EXPECT_EQ(partial->getDouble({r}), static_cast<double>(want)) << r;
      // Both orders are within their error bounds of the exact sum.
      double exact = 0.375, magnitude = 0.375;
      for (float v : data[r]) {
        exact += v; // double: exact enough against f32's bounds
        magnitude += std::fabs(v);
      }
      double u = std::ldexp(1.0, -24);
      double bound = (double(n) + double(n) / 16 + 32) * u * magnitude * 1.01;
      EXPECT_LE(std::fabs(partial->getDouble({r}) - sequential->getDouble({r})),
                bound);
      EXPECT_LE(std::fabs(partial->getDouble({r}) - exact),
                (double(n) / 16 + 33) * u * magnitude * 1.01);
      anyDiffers |= partial->getDouble({r}) != sequential->getDouble({r});
    }
    if (n >= 100) {
      EXPECT_TRUE(anyDiffers) << "the two orders gave the same bits: the "
                                 "test does not tell them apart";
    }
  }
}

TEST(HloEvaluator, OnlyWideSumsAndNarrowMaxMinOverTheMinorDimArePartial) {
  auto reduceOf = [](const std::string &type, const std::string &op,
                     const std::string &dims, const std::string &layout,
                     const std::string &reduced) {
    std::string text =
        "HloModule m\nr {\n  a = " + type + "[] parameter(0)\n  b = " + type +
        "[] parameter(1)\n  ROOT s = " + type + "[] " + op +
        "(a, b)\n}\nENTRY e {\n  p = " + type + "[" + dims + "]" + layout +
        " parameter(0)\n  z = " + type + "[] constant(0)\n  ROOT x = " + type +
        "[4] reduce(p, z), dimensions={" + reduced + "}, to_apply=r\n}\n";
    auto module = parseHloModule(text);
    EXPECT_TRUE(module) << text;
    return module ? reducesInPartials(*(*module)->entry()->root()) : false;
  };
  EXPECT_TRUE(reduceOf("f32", "add", "4,64", "", "1"));
  EXPECT_TRUE(reduceOf("f64", "add", "4,64", "", "1"));
  EXPECT_TRUE(reduceOf("bf16", "maximum", "4,64", "", "1"));
  EXPECT_FALSE(reduceOf("bf16", "add", "4,64", "", "1"));
  EXPECT_FALSE(reduceOf("f32", "maximum", "4,64", "", "1"));
  EXPECT_FALSE(reduceOf("s32", "add", "4,64", "", "1"));
  EXPECT_FALSE(reduceOf("f32", "add", "4,31", "", "1"));      // too short
  EXPECT_FALSE(reduceOf("f32", "add", "64,4", "", "0"));      // a column sum
  EXPECT_FALSE(reduceOf("f32", "add", "4,64", "{0,1}", "1")); // not minor
  EXPECT_TRUE(reduceOf("f32", "add", "64,4", "{0,1}", "0"));  // minor in memory
}

TEST(HloEvaluator, OrderFreeReducesGiveTheSameBitsInAnyOrder) {
  // reducesInAnyOrder: the rows shuffled give the same bits (any NaN equal
  // to any other), signed zeros, NaNs, infinities and wrapping included;
  // the sums of floats, which it leaves out, do not.
  struct Case {
    const char *type, *op;
    bool anyOrder;
  } cases[] = {{"f32", "maximum", true},  {"f64", "minimum", true},
               {"bf16", "maximum", true}, {"f16", "minimum", true},
               {"s32", "add", true},      {"u8", "multiply", true},
               {"s64", "maximum", true},  {"u16", "minimum", true},
               {"s8", "xor", true},       {"pred", "or", true},
               {"pred", "and", true},     {"f32", "add", false},
               {"bf16", "add", false},    {"f64", "add", false}};
  std::mt19937 rng(11);
  const double specials[] = {0.0,      -0.0,      NAN,   -NAN,
                             INFINITY, -INFINITY, 1e-40, -1e-40};
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.type) + " " + c.op);
    std::string type = c.type;
    std::string text = "HloModule m\nr {\n  a = " + type +
                       "[] parameter(0)\n  b = " + type +
                       "[] parameter(1)\n  ROOT s = " + type + "[] " + c.op +
                       "(a, b)\n}\nENTRY e {\n  p = " + type +
                       "[6,300] parameter(0)\n  z = " + type +
                       "[] parameter(1)\n  ROOT x = " + type +
                       "[6] reduce(p, z), dimensions={1}, to_apply=r\n}\n";
    auto module = parseHloModule(text);
    ASSERT_TRUE(module) << text;
    EXPECT_EQ(reducesInAnyOrder(*(*module)->entry()->root()), c.anyOrder);
    Literal x((*module)->entry()->parameters()[0]->shape());
    Literal init((*module)->entry()->parameters()[1]->shape());
    bool isFloat = type[0] == 'f' || type[0] == 'b';
    auto fill = [&](Literal &l, int64_t i) {
      if (!isFloat)
        l.setBits(i, (uint64_t(rng()) << 32) | rng());
      else if (rng() % 8 == 0)
        l.setDouble(i, specials[rng() % 8]);
      else
        l.setDouble(i, std::ldexp(double(int64_t(rng() % 2001) - 1000),
                                  int(rng() % 80) - 40));
    };
    for (int64_t i = 0; i < x.elementCount(); ++i)
      fill(x, i);
    // Rows 0 to 2 finite, so that a float sum's bits can differ.
    if (isFloat)
      for (int64_t i = 0; i < 3 * 300; ++i)
        if (!std::isfinite(x.getDouble(i)))
          x.setDouble(i, 1.5);
    // Row 4 only signed zeros: max and min must order them.
    if (isFloat)
      for (int64_t i = 4 * 300; i < 5 * 300; ++i)
        x.setDouble(i, rng() % 2 ? 0.0 : -0.0);
    fill(init, 0);
    if (isFloat && !std::isfinite(init.getDouble(0)))
      init.setDouble(0, rng() % 2 ? 0.0 : -0.0);
    if (isFloat && std::isnan(init.getDouble(0)))
      init.setDouble(0, 0.5);
    Expected<Literal> want = evaluateHloModule(**module, {x, init});
    ASSERT_TRUE(want);
    bool anyDiffers = false;
    for (int trial = 0; trial < 8; ++trial) {
      Literal shuffled = x;
      for (int64_t row = 0; row < 6; ++row)
        for (int64_t k = 299; k > 0; --k) {
          int64_t j = rng() % (k + 1);
          uint64_t a = shuffled.getBits(row * 300 + k);
          shuffled.setBits(row * 300 + k, shuffled.getBits(row * 300 + j));
          shuffled.setBits(row * 300 + j, a);
        }
      Expected<Literal> got = evaluateHloModule(**module, {shuffled, init});
      ASSERT_TRUE(got);
      for (int64_t row = 0; row < 6; ++row) {
        bool nan = isFloat && std::isnan(got->getDouble(row)) &&
                   std::isnan(want->getDouble(row));
        anyDiffers |= !nan && got->getBits(row) != want->getBits(row);
      }
    }
    EXPECT_EQ(anyDiffers, !c.anyOrder);
  }
}

namespace {

/// f32[rows, columns] summed along dim 0 (a column sum), starting at `init`.
std::unique_ptr<HloModule> columnSumModule(int64_t rows, int64_t columns) {
  std::string text =
      "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] "
      "parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[" +
      std::to_string(rows) + "," + std::to_string(columns) +
      "] parameter(0)\n  z = f32[] constant(-0.625)\n  ROOT r = f32[" +
      std::to_string(columns) +
      "] reduce(p, z), dimensions={0}, to_apply=add\n}\n";
  return std::move(*parseHloModule(text));
}

/// The documented order (sumsColumnsInSegments), written out in plain
/// floats: segments of 256 rows (the last one shorter), each from +0,
/// added to `init` in order.
float segmentedSum(const std::vector<float> &x, float init) {
  float acc = init;
  for (size_t r0 = 0; r0 < x.size(); r0 += kColumnSumSegmentRows) {
    float segment = 0.0f;
    for (size_t r = r0; r < std::min(x.size(), r0 + kColumnSumSegmentRows); ++r)
      segment = segment + x[r];
    acc = acc + segment;
  }
  return acc;
}

} // namespace

TEST(HloEvaluator, ColumnSumSegmentsAreTheDocumentedOrder) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1000.0f, 1000.0f);
  const int64_t columns = 17;
  for (int64_t rows : {512, 600, 768, 1000, 4096}) {
    SCOPED_TRACE("rows = " + std::to_string(rows));
    std::unique_ptr<HloModule> module = columnSumModule(rows, columns);
    ASSERT_TRUE(sumsColumnsInSegments(*module->entry()->root()));
    Literal x(Shape(PrimitiveType::F32, {rows, columns}));
    std::vector<std::vector<float>> data(columns, std::vector<float>(rows));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < columns; ++c) {
        // Magnitudes over 12 decades, so that the order shows in the bits.
        float v =
            value(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20);
        data[c][r] = v;
        x.setDouble({r, c}, v);
      }
    EvaluatorOptions options;
    options.compilerReductionOrder = true;
    Expected<Literal> segmented = evaluateHloModule(*module, {x}, options);
    Expected<Literal> sequential = evaluateHloModule(*module, {x});
    ASSERT_TRUE(segmented && sequential);
    bool anyDiffers = false;
    double u = std::ldexp(1.0, -24);
    double segments = std::ceil(double(rows) / kColumnSumSegmentRows);
    for (int64_t c = 0; c < columns; ++c) {
      EXPECT_EQ(segmented->getDouble({c}),
                static_cast<double>(segmentedSum(data[c], -0.625f)))
          << c;
      double exact = -0.625, magnitude = 0.625;
      for (float v : data[c]) {
        exact += v;
        magnitude += std::fabs(v);
      }
      // The bound of docs/codegen.md: (256 + K) u sum |x| from the exact
      // sum; the one-by-one order within (R - 1) u sum |x|.
      EXPECT_LE(std::fabs(segmented->getDouble({c}) - exact),
                (kColumnSumSegmentRows + segments) * u * magnitude * 1.01);
      EXPECT_LE(std::fabs(sequential->getDouble({c}) - exact),
                double(rows) * u * magnitude * 1.01);
      anyDiffers |= segmented->getDouble({c}) != sequential->getDouble({c});
    }
    EXPECT_TRUE(anyDiffers) << "the two orders gave the same bits: the test "
                               "does not tell them apart";
  }
}

TEST(HloEvaluator, OnlyWideSumsOverLeadingRowMajorDimsAreSegmented) {
  auto reduceOf = [](const std::string &type, const std::string &op,
                     const std::string &dims, const std::string &layout,
                     const std::string &reduced, const std::string &out) {
    std::string text =
        "HloModule m\nr {\n  a = " + type + "[] parameter(0)\n  b = " + type +
        "[] parameter(1)\n  ROOT s = " + type + "[] " + op +
        "(a, b)\n}\nENTRY e {\n  p = " + type + "[" + dims + "]" + layout +
        " parameter(0)\n  z = " + type + "[] constant(0)\n  ROOT x = " + type +
        "[" + out + "] reduce(p, z), dimensions={" + reduced +
        "}, to_apply=r\n}\n";
    auto module = parseHloModule(text);
    EXPECT_TRUE(module) << text;
    return module ? sumsColumnsInSegments(*(*module)->entry()->root()) : false;
  };
  EXPECT_TRUE(reduceOf("f32", "add", "512,16", "", "0", "16"));
  EXPECT_TRUE(reduceOf("f64", "add", "1024,40", "", "0", "40"));
  EXPECT_TRUE(reduceOf("f32", "add", "2,256,3,16", "", "0,1", "3,16"));
  EXPECT_FALSE(reduceOf("f32", "add", "256,16", "", "0", "16"));  // 1 segment
  EXPECT_TRUE(reduceOf("f32", "add", "600,16", "", "0", "16"));   // 256+256+88
  EXPECT_FALSE(reduceOf("f32", "add", "511,16", "", "0", "16"));  // 2 segments
  EXPECT_FALSE(reduceOf("f32", "add", "512,15", "", "0", "15"));  // narrow
  EXPECT_FALSE(reduceOf("bf16", "add", "512,16", "", "0", "16")); // bf16
  EXPECT_FALSE(reduceOf("f32", "maximum", "512,16", "", "0", "16"));
  EXPECT_FALSE(reduceOf("f32", "add", "512,16", "{0,1}", "0", "16"));
  EXPECT_FALSE(reduceOf("f32", "add", "16,512", "", "1", "16")); // a row sum
  EXPECT_FALSE(reduceOf("f32", "add", "2,512,16", "", "1", "2,16"));
}

TEST(HloEvaluator, EvaluatesOneInstructionOnGivenOperands) {
  // What the compiler folds: one instruction on its operands' values, the
  // same as the instruction gives inside the whole module.
  std::string text = "HloModule m\n"
                     "add {\n  a = f32[] parameter(0)\n  b = f32[] "
                     "parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                     "ENTRY e {\n"
                     "  i = f32[2,3] iota(), iota_dimension=1\n"
                     "  q = f32[2,3] divide(i, i)\n"
                     "  z = f32[] constant(0)\n"
                     "  ROOT r = f32[2] reduce(q, z), dimensions={1}, "
                     "to_apply=add\n"
                     "}\n";
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  ASSERT_TRUE(module) << module.error().message;
  const HloComputation &entry = *(*module)->entry();
  const HloInstruction &iota = *entry.instructions()[0];
  const HloInstruction &quotient = *entry.instructions()[1];
  const HloInstruction &reduce = *entry.instructions()[3];
  Expected<Literal> i = evaluateInstruction(iota, {});
  ASSERT_TRUE(i) << i.error().message;
  EXPECT_EQ(i->toString(), "{ { 0, 1, 2 }, { 0, 1, 2 } }");
  Expected<Literal> q = evaluateInstruction(quotient, {*i, *i});
  ASSERT_TRUE(q) << q.error().message;
  // 0 / 0 is the CPU's NaN, whose sign bit is set.
  EXPECT_EQ(q->getBits(0), 0xffc00000u);
  EXPECT_EQ(q->getBits(1), 0x3f800000u);
  Expected<Literal> zero = evaluateInstruction(*entry.instructions()[2], {});
  ASSERT_TRUE(zero);
  Expected<Literal> r = evaluateInstruction(reduce, {*q, *zero});
  Expected<Literal> whole = evaluateHloModule(**module, {});
  ASSERT_TRUE(r && whole);
  EXPECT_EQ(r->getBits(0), whole->getBits(0));
  EXPECT_EQ(r->getBits(1), whole->getBits(1));
  // Operands that do not match, and a parameter, are refused.
  Expected<Literal> missing = evaluateInstruction(quotient, {*i});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "%q takes 2 operands, given 1");
  Expected<Literal> wrong = evaluateInstruction(quotient, {*i, *zero});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().message, "operand 1 is f32[], expected f32[2,3]");
}
