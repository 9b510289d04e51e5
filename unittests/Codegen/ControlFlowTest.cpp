//===- ControlFlowTest.cpp - call, while and conditional in the plan ------===//
//
// Hand-written modules with control flow, each compiled for the CPU, run
// with one and two worker threads and compared with the evaluator bit for
// bit (and, where the result is simple, with a value worked out here): the
// aliasing hazards of a while's state (an element passed through, two
// swapped, an old element read after a new one is computed, an ENTRY
// parameter or a constant as the operand, the state as the module's
// output), loops of 0 and 1000 iterations, nested loops, conditionals on a
// pred and on an s32 index in and out of range, a conditional inside a
// loop, and a state of several element types.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"
#include "ModulePlan.h"

#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/HloEvaluator.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tessel;

namespace {

/// "" when `module` runs on the CPU (its own launch and the GPU's, one and
/// two threads) as the evaluator says with `arguments`; the failures
/// otherwise.
std::string checkAll(const HloModule &module,
                     const std::vector<Literal> &arguments) {
  std::string failures;
  for (Target target : {Target::Cpu, Target::Gpu})
    for (int threads : {1, 2}) {
      CompileOptions options;
      options.target = target;
      KernelCheckResult check =
          checkKernels(module, arguments, options, threads);
      if (!check.failure.empty())
        failures += std::string(target == Target::Cpu ? "CPU" : "GPU") +
                    " launch, " + std::to_string(threads) +
                    " threads: " + check.failure;
    }
  return failures;
}

/// The module's result on the CPU with one thread.
Literal runOnCpu(const HloModule &module,
                 const std::vector<Literal> &arguments) {
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(module, CompileOptions());
  EXPECT_TRUE(exe) << exe.error().message;
  if (!exe)
    return Literal();
  RunOptions run;
  run.threads = 1;
  Expected<Literal> result = (*exe)->run(arguments, run);
  EXPECT_TRUE(result) << result.error().message;
  return result ? std::move(*result) : Literal();
}

std::string stepsOf(const HloModule &module) {
  Expected<ModulePlan> plan = planModule(module);
  EXPECT_TRUE(plan) << plan.error().message;
  return plan ? describeSteps(*plan) : "";
}

Literal s32Scalar(int32_t value) {
  Literal literal(Shape(PrimitiveType::S32, {}));
  std::memcpy(literal.data(), &value, sizeof(value));
  return literal;
}

Literal predScalar(bool value) {
  Literal literal(Shape(PrimitiveType::Pred, {}));
  *literal.data() = value ? 1 : 0;
  return literal;
}

Literal f32Array(std::vector<int64_t> dims, float first, float step) {
  Literal literal(Shape(PrimitiveType::F32, std::move(dims)));
  auto *data = reinterpret_cast<float *>(literal.data());
  for (int64_t i = 0; i < literal.elementCount(); ++i)
    data[i] = first + step * static_cast<float>(i);
  return literal;
}

float f32At(const Literal &literal, int64_t i) {
  float value;
  std::memcpy(&value, literal.data() + 4 * i, 4);
  return value;
}

int32_t s32At(const Literal &literal, int64_t i) {
  int32_t value;
  std::memcpy(&value, literal.data() + 4 * i, 4);
  return value;
}

/// A condition `i < N` over state (s32[], ...) of `types`.
std::string lessThan(const std::string &name, const std::string &state, int n) {
  return name + " {\n  s = " + state +
         " parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
         "  n = s32[] constant(" +
         std::to_string(n) +
         ")\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n";
}

// The body passes b through unchanged and reads the ENTRY parameter's
// values through the state: the parameter (the caller's) is not written,
// and b is not copied back into the state; a's new value, which reads a
// reversed, is.
TEST(ControlFlowTest, ElementPassedThroughAndEntryParameterKept) {
  std::string state = "(s32[], f32[8], f32[8])";
  std::unique_ptr<HloModule> module =
      parseTestModule("HloModule m\n" + lessThan("cond", state, 5) +
                      R"(fused {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  r = f32[8] reverse(a), dimensions={0}
  ROOT c = f32[8] add(r, b)
}
body {
  s = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a = f32[8] get-tuple-element(s), index=1
  b = f32[8] get-tuple-element(s), index=2
  c = f32[8] fusion(a, b), kind=kLoop, calls=fused
  ROOT t = (s32[], f32[8], f32[8]) tuple(j, c, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  zero = s32[] constant(0)
  t = (s32[], f32[8], f32[8]) tuple(zero, x, y)
  w = (s32[], f32[8], f32[8]) while(t), condition=cond, body=body
  a = f32[8] get-tuple-element(w), index=1
  b = f32[8] get-tuple-element(w), index=2
  ROOT r = (f32[8], f32[8]) tuple(a, b)
})");
  ASSERT_TRUE(module);
  std::vector<Literal> arguments = {f32Array({8}, 1, 1),
                                    f32Array({8}, 0.5, 0.25)};
  EXPECT_EQ(checkAll(*module, arguments), "");
  Literal result = runOnCpu(*module, arguments);
  ASSERT_TRUE(result.isTuple());
  std::vector<float> a(8), b(8);
  for (int k = 0; k < 8; ++k) {
    a[k] = 1.0f + k;
    b[k] = 0.5f + 0.25f * k;
  }
  for (int n = 0; n < 5; ++n) {
    std::vector<float> c(8);
    for (int k = 0; k < 8; ++k)
      c[k] = a[7 - k] + b[k];
    a = c;
  }
  for (int64_t k = 0; k < 8; ++k) {
    EXPECT_EQ(f32At(result.tupleElements()[0], k), a[k]) << k;
    EXPECT_EQ(f32At(result.tupleElements()[1], k), b[k]) << k;
  }
  // Only a is copied back: b is passed through, and the counter's kernel
  // (i + 1) writes the state itself.
  std::string steps = stepsOf(*module);
  size_t body = steps.find("body:");
  ASSERT_NE(body, std::string::npos) << steps;
  std::string tail = steps.substr(body);
  size_t copies = 0;
  for (size_t at = tail.find("copy "); at != std::string::npos;
       at = tail.find("copy ", at + 1))
    ++copies;
  EXPECT_EQ(copies, 1u) << steps;

  // The caller's input buffers keep their bytes (runPhysical writes into
  // the caller's pointers, none of which is an input here).
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, CompileOptions());
  ASSERT_TRUE(exe) << exe.error().message;
  std::vector<std::string> inputs;
  for (const Literal &argument : arguments)
    inputs.emplace_back(reinterpret_cast<const char *>(argument.data()), 32);
  std::vector<std::string> kept = inputs;
  std::string out0(32, '\0'), out1(32, '\0');
  Status ran = (*exe)->runPhysical({inputs[0].data(), inputs[1].data()},
                                   {out0.data(), out1.data()}, RunOptions());
  ASSERT_TRUE(ran) << ran.error().message;
  EXPECT_EQ(inputs, kept);
}

// tuple(i + 1, b, a): each element is the other's state buffer, which is
// overwritten itself, so one goes through a temporary. An odd number of
// iterations leaves them swapped.
TEST(ControlFlowTest, SwappedElements) {
  std::string state = "(s32[], f32[6], f32[6])";
  for (int n : {0, 1, 2, 7}) {
    std::unique_ptr<HloModule> module =
        parseTestModule("HloModule m\n" + lessThan("cond", state, n) +
                        R"(body {
  s = (s32[], f32[6], f32[6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a = f32[6] get-tuple-element(s), index=1
  b = f32[6] get-tuple-element(s), index=2
  ROOT t = (s32[], f32[6], f32[6]) tuple(j, b, a)
}
ENTRY e {
  x = f32[6] parameter(0)
  y = f32[6] parameter(1)
  zero = s32[] constant(0)
  t = (s32[], f32[6], f32[6]) tuple(zero, x, y)
  ROOT w = (s32[], f32[6], f32[6]) while(t), condition=cond, body=body
})");
    ASSERT_TRUE(module);
    std::vector<Literal> arguments = {f32Array({6}, 1, 1),
                                      f32Array({6}, -10, 2)};
    EXPECT_EQ(checkAll(*module, arguments), "") << n << " iterations";
    Literal result = runOnCpu(*module, arguments);
    ASSERT_TRUE(result.isTuple());
    EXPECT_EQ(s32At(result.tupleElements()[0], 0), n);
    for (int64_t k = 0; k < 6; ++k) {
      float x = 1 + k, y = -10 + 2 * k;
      EXPECT_EQ(f32At(result.tupleElements()[1], k), n % 2 ? y : x);
      EXPECT_EQ(f32At(result.tupleElements()[2], k), n % 2 ? x : y);
    }
  }
}

// The body computes the new a, then reads the old a for the new b, and
// passes the old a on as c: (a, b, c) -> (a + b, a * b, a). c's new value
// is a's state buffer, which is overwritten: it goes through a temporary.
TEST(ControlFlowTest, OldElementReadAfterTheNewOneIsComputed) {
  std::string state = "(s32[], f32[4], f32[4], f32[4])";
  std::unique_ptr<HloModule> module =
      parseTestModule("HloModule m\n" + lessThan("cond", state, 4) +
                      R"(body {
  s = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a = f32[4] get-tuple-element(s), index=1
  b = f32[4] get-tuple-element(s), index=2
  a2 = f32[4] add(a, b)
  b2 = f32[4] multiply(a, b)
  ROOT t = (s32[], f32[4], f32[4], f32[4]) tuple(j, a2, b2, a)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  half = f32[] constant(0.5)
  h = f32[4] broadcast(half), dimensions={}
  t = (s32[], f32[4], f32[4], f32[4]) tuple(zero, x, h, x)
  ROOT w = (s32[], f32[4], f32[4], f32[4]) while(t), condition=cond, body=body
})");
  ASSERT_TRUE(module);
  std::vector<Literal> arguments = {f32Array({4}, 0.25, 0.5)};
  EXPECT_EQ(checkAll(*module, arguments), "");
  Literal result = runOnCpu(*module, arguments);
  ASSERT_TRUE(result.isTuple());
  for (int64_t k = 0; k < 4; ++k) {
    float a = 0.25f + 0.5f * k, b = 0.5f, c = a;
    for (int n = 0; n < 4; ++n) {
      float a2 = a + b, b2 = a * b;
      c = a;
      a = a2;
      b = b2;
    }
    EXPECT_EQ(f32At(result.tupleElements()[1], k), a);
    EXPECT_EQ(f32At(result.tupleElements()[2], k), b);
    EXPECT_EQ(f32At(result.tupleElements()[3], k), c);
  }
  EXPECT_NE(stepsOf(*module).find("copy buffer"), std::string::npos);
}

// (a, b) -> (-b, a + b): the new a does not read the old one, but the new
// b, computed after it, does: the new a is not written into a's state
// buffer before the end of the body.
TEST(ControlFlowTest, OldElementReadByALaterKernel) {
  std::string state = "(s32[], f32[4], f32[4])";
  std::unique_ptr<HloModule> module =
      parseTestModule("HloModule m\n" + lessThan("cond", state, 6) +
                      R"(body {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a = f32[4] get-tuple-element(s), index=1
  b = f32[4] get-tuple-element(s), index=2
  a2 = f32[4] negate(b)
  b2 = f32[4] add(a, b)
  ROOT t = (s32[], f32[4], f32[4]) tuple(j, a2, b2)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  zero = s32[] constant(0)
  t = (s32[], f32[4], f32[4]) tuple(zero, x, y)
  ROOT w = (s32[], f32[4], f32[4]) while(t), condition=cond, body=body
})");
  ASSERT_TRUE(module);
  std::vector<Literal> arguments = {f32Array({4}, 1, 1),
                                    f32Array({4}, 0.5, -2)};
  EXPECT_EQ(checkAll(*module, arguments), "");
  Literal result = runOnCpu(*module, arguments);
  ASSERT_TRUE(result.isTuple());
  for (int64_t k = 0; k < 4; ++k) {
    float a = 1.0f + k, b = 0.5f - 2.0f * k;
    for (int n = 0; n < 6; ++n) {
      float a2 = -b, b2 = a + b;
      a = a2;
      b = b2;
    }
    EXPECT_EQ(f32At(result.tupleElements()[1], k), a);
    EXPECT_EQ(f32At(result.tupleElements()[2], k), b);
  }
}

// x -> x * 0.5 reads x only at the element it writes: its kernel writes
// the loop's state itself, nothing is copied back. x -> x + reverse(x)
// reads other elements of x: its new value is copied back after the body.
TEST(ControlFlowTest, ElementwiseUpdateWritesTheStateItself) {
  for (bool reversed : {false, true}) {
    std::string state = "(s32[], f32[6])";
    std::string update = reversed ? "  r = f32[6] reverse(x), dimensions={0}\n"
                                    "  y = f32[6] add(x, r)\n"
                                  : "  h = f32[] constant(0.5)\n"
                                    "  b = f32[6] broadcast(h), dimensions={}\n"
                                    "  y = f32[6] multiply(x, b)\n";
    std::unique_ptr<HloModule> module = parseTestModule(
        "HloModule m\n" + lessThan("cond", state, 5) + "fused {\n" +
        "  x = f32[6] parameter(0)\n" + update + "}\n" + R"(body {
  s = (s32[], f32[6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[6] get-tuple-element(s), index=1
  y = f32[6] fusion(x), kind=kLoop, calls=fused
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[6]) tuple(j, y)
}
ENTRY e {
  x = f32[6] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[6]) tuple(zero, x)
  w = (s32[], f32[6]) while(t), condition=cond, body=body
  ROOT y = f32[6] get-tuple-element(w), index=1
})");
    ASSERT_TRUE(module);
    std::vector<Literal> arguments = {f32Array({6}, 1, 1)};
    EXPECT_EQ(checkAll(*module, arguments), "") << reversed;
    Literal result = runOnCpu(*module, arguments);
    std::vector<float> x = {1, 2, 3, 4, 5, 6};
    for (int n = 0; n < 5; ++n) {
      std::vector<float> y(6);
      for (int e = 0; e < 6; ++e)
        y[e] = reversed ? x[e] + x[5 - e] : x[e] * 0.5f;
      x = y;
    }
    for (int64_t e = 0; e < 6; ++e)
      EXPECT_EQ(f32At(result, e), x[e]) << reversed;
    std::string steps = stepsOf(*module);
    std::string body = steps.substr(steps.find("body:"));
    EXPECT_EQ(body.find("f32[6] into") != std::string::npos, reversed) << steps;
  }
}

// A constant as the loop's operand, the state's elements as the module's
// outputs (one of them twice), run twice by the same executable: the
// second run starts from the constant again.
TEST(ControlFlowTest, ConstantOperandAndStateAsOutputs) {
  std::string state = "(s32[], f32[3])";
  std::unique_ptr<HloModule> module =
      parseTestModule("HloModule m\n" + lessThan("cond", state, 3) +
                      R"(body {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a = f32[3] get-tuple-element(s), index=1
  d = f32[3] add(a, a)
  ROOT t = (s32[], f32[3]) tuple(j, d)
}
ENTRY e {
  x = f32[3] parameter(0)
  zero = s32[] constant(0)
  c = f32[3] constant({1, 2, 3})
  t = (s32[], f32[3]) tuple(zero, c)
  w = (s32[], f32[3]) while(t), condition=cond, body=body
  i = s32[] get-tuple-element(w), index=0
  a = f32[3] get-tuple-element(w), index=1
  b = f32[3] add(a, x)
  ROOT r = (s32[], f32[3], f32[3], f32[3]) tuple(i, a, a, b)
})");
  ASSERT_TRUE(module);
  std::vector<Literal> arguments = {f32Array({3}, 100, 1)};
  EXPECT_EQ(checkAll(*module, arguments), "");
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, CompileOptions());
  ASSERT_TRUE(exe) << exe.error().message;
  for (int run = 0; run < 2; ++run) {
    Expected<Literal> result = (*exe)->run(arguments, RunOptions());
    ASSERT_TRUE(result) << result.error().message;
    const std::vector<Literal> &outputs = result->tupleElements();
    EXPECT_EQ(s32At(outputs[0], 0), 3);
    for (int64_t k = 0; k < 3; ++k) {
      EXPECT_EQ(f32At(outputs[1], k), 8.0f * (k + 1)) << run;
      EXPECT_EQ(f32At(outputs[2], k), 8.0f * (k + 1)) << run;
      EXPECT_EQ(f32At(outputs[3], k), 8.0f * (k + 1) + 100 + k) << run;
    }
  }
}

// 0 and 1000 iterations of a loop whose state holds arrays of several
// element types and a scalar counter.
TEST(ControlFlowTest, ZeroAndManyIterationsOfAMixedState) {
  std::string state = "(s32[], f32[5], u8[2,3], s64[], bf16[4])";
  for (int n : {0, 1000}) {
    std::unique_ptr<HloModule> module =
        parseTestModule("HloModule m\n" + lessThan("cond", state, n) +
                        R"(body {
  s = (s32[], f32[5], u8[2,3], s64[], bf16[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  f = f32[5] get-tuple-element(s), index=1
  k = f32[] constant(1.001)
  kk = f32[5] broadcast(k), dimensions={}
  f2 = f32[5] multiply(f, kk)
  u = u8[2,3] get-tuple-element(s), index=2
  u1 = u8[] constant(7)
  uu = u8[2,3] broadcast(u1), dimensions={}
  u2 = u8[2,3] add(u, uu)
  t = s64[] get-tuple-element(s), index=3
  ij = s64[] convert(j)
  t2 = s64[] add(t, ij)
  h = bf16[4] get-tuple-element(s), index=4
  h2 = bf16[4] negate(h)
  ROOT r = (s32[], f32[5], u8[2,3], s64[], bf16[4]) tuple(j, f2, u2, t2, h2)
}
ENTRY e {
  f = f32[5] parameter(0)
  u = u8[2,3] parameter(1)
  h = bf16[4] parameter(2)
  zero = s32[] constant(0)
  z64 = s64[] constant(0)
  t = (s32[], f32[5], u8[2,3], s64[], bf16[4]) tuple(zero, f, u, z64, h)
  ROOT w = (s32[], f32[5], u8[2,3], s64[], bf16[4]) while(t), condition=cond, body=body
})");
    ASSERT_TRUE(module);
    std::vector<Literal> arguments = randomArguments(*module, 5);
    EXPECT_EQ(checkAll(*module, arguments), "") << n << " iterations";
    Literal result = runOnCpu(*module, arguments);
    ASSERT_TRUE(result.isTuple());
    EXPECT_EQ(s32At(result.tupleElements()[0], 0), n);
    int64_t sum;
    std::memcpy(&sum, result.tupleElements()[3].data(), 8);
    EXPECT_EQ(sum, int64_t(n) * (n + 1) / 2);
    // u8 wraps: 7 n mod 256 added to each element.
    for (int64_t e = 0; e < 6; ++e)
      EXPECT_EQ((result.tupleElements()[2].data())[e],
                static_cast<uint8_t>((arguments[1].data())[e] + 7 * n));
  }
}

// A loop inside a loop's body: 5 outer iterations of 3 inner ones.
TEST(ControlFlowTest, NestedLoops) {
  std::string inner = "(s32[], s32[], f32[4])";
  std::string outer = "(s32[], s32[], f32[4])";
  std::unique_ptr<HloModule> module =
      parseTestModule("HloModule m\n" + lessThan("inner_cond", inner, 3) +
                      lessThan("outer_cond", outer, 5) + R"(inner_body {
  s = (s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  c = s32[] get-tuple-element(s), index=1
  c2 = s32[] add(c, one)
  x = f32[4] get-tuple-element(s), index=2
  two = f32[] constant(2)
  tt = f32[4] broadcast(two), dimensions={}
  x2 = f32[4] multiply(x, tt)
  ROOT t = (s32[], s32[], f32[4]) tuple(j, c2, x2)
}
outer_body {
  s = (s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  c = s32[] get-tuple-element(s), index=1
  x = f32[4] get-tuple-element(s), index=2
  zero = s32[] constant(0)
  t0 = (s32[], s32[], f32[4]) tuple(zero, c, x)
  w = (s32[], s32[], f32[4]) while(t0), condition=inner_cond, body=inner_body
  c2 = s32[] get-tuple-element(w), index=1
  x2 = f32[4] get-tuple-element(w), index=2
  h = f32[] constant(0.25)
  hh = f32[4] broadcast(h), dimensions={}
  x3 = f32[4] add(x2, hh)
  ROOT t = (s32[], s32[], f32[4]) tuple(j, c2, x3)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], s32[], f32[4]) tuple(zero, zero, x)
  w = (s32[], s32[], f32[4]) while(t), condition=outer_cond, body=outer_body
  c = s32[] get-tuple-element(w), index=1
  y = f32[4] get-tuple-element(w), index=2
  ROOT r = (s32[], f32[4]) tuple(c, y)
})");
  ASSERT_TRUE(module);
  std::vector<Literal> arguments = {f32Array({4}, 1, 0.5)};
  EXPECT_EQ(checkAll(*module, arguments), "");
  Literal result = runOnCpu(*module, arguments);
  ASSERT_TRUE(result.isTuple());
  EXPECT_EQ(s32At(result.tupleElements()[0], 0), 15);
  for (int64_t k = 0; k < 4; ++k) {
    float x = 1 + 0.5f * k;
    for (int o = 0; o < 5; ++o)
      x = x * 8 + 0.25f;
    EXPECT_EQ(f32At(result.tupleElements()[1], k), x);
  }
  std::string steps = stepsOf(*module);
  EXPECT_NE(steps.find("while %w (condition %outer_cond"), std::string::npos)
      << steps;
  EXPECT_NE(steps.find("      while %w (condition %inner_cond"),
            std::string::npos)
      << steps;
}

// pred: true runs branch 0 (true_computation), false branch 1.
TEST(ControlFlowTest, ConditionalOnAPred) {
  std::unique_ptr<HloModule> module = parseTestModule(R"(HloModule m
neg {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
dbl {
  p = (f32[4], f32[4]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  b = f32[4] get-tuple-element(p), index=1
  ROOT s = f32[4] add(a, b)
}
ENTRY e {
  c = pred[] parameter(0)
  x = f32[4] parameter(1)
  y = f32[4] parameter(2)
  t = (f32[4], f32[4]) tuple(x, y)
  ROOT r = f32[4] conditional(c, x, t), true_computation=neg, false_computation=dbl
})");
  ASSERT_TRUE(module);
  for (bool c : {true, false}) {
    std::vector<Literal> arguments = {predScalar(c), f32Array({4}, 1, 1),
                                      f32Array({4}, 10, 10)};
    EXPECT_EQ(checkAll(*module, arguments), "") << c;
    Literal result = runOnCpu(*module, arguments);
    for (int64_t k = 0; k < 4; ++k)
      EXPECT_EQ(f32At(result, k), c ? -(1.0f + k) : 11.0f * (k + 1)) << c;
  }
  EXPECT_NE(stepsOf(*module).find("true runs branch 0"), std::string::npos);
}

// An s32 index: branch k for k in [0, 3), the last branch otherwise (XLA's
// semantics, as the evaluator). A branch that returns its parameter
// (copied into the conditional's buffer) and a tuple result.
TEST(ControlFlowTest, ConditionalOnAnIndexInAndOutOfRange) {
  std::unique_ptr<HloModule> module = parseTestModule(R"(HloModule m
b0 {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  zero = s32[] constant(0)
  ROOT t = (f32[4], s32[]) tuple(n, zero)
}
b1 {
  p = f32[4] parameter(0)
  one = s32[] constant(1)
  ROOT t = (f32[4], s32[]) tuple(p, one)
}
b2 {
  p = f32[4] parameter(0)
  e = f32[4] add(p, p)
  two = s32[] constant(2)
  ROOT t = (f32[4], s32[]) tuple(e, two)
}
ENTRY e {
  k = s32[] parameter(0)
  x = f32[4] parameter(1)
  c = (f32[4], s32[]) conditional(k, x, x, x), branch_computations={b0, b1, b2}
  a = f32[4] get-tuple-element(c), index=0
  b = s32[] get-tuple-element(c), index=1
  ROOT r = (f32[4], s32[], f32[4]) tuple(a, b, x)
})");
  ASSERT_TRUE(module);
  for (int32_t k : {-1, 0, 1, 2, 3, 100, INT32_MIN}) {
    std::vector<Literal> arguments = {s32Scalar(k), f32Array({4}, 1, 1)};
    EXPECT_EQ(checkAll(*module, arguments), "") << k;
    Literal result = runOnCpu(*module, arguments);
    ASSERT_TRUE(result.isTuple());
    int branch = k >= 0 && k < 3 ? k : 2;
    EXPECT_EQ(s32At(result.tupleElements()[1], 0), branch) << k;
    for (int64_t e = 0; e < 4; ++e) {
      float x = 1.0f + e;
      EXPECT_EQ(f32At(result.tupleElements()[0], e), branch == 0   ? -x
                                                     : branch == 1 ? x
                                                                   : 2 * x)
          << k;
      EXPECT_EQ(f32At(result.tupleElements()[2], e), x) << k;
    }
  }
  EXPECT_NE(stepsOf(*module).find("outside [0, 3) runs branch 2"),
            std::string::npos);
}

// A conditional in a loop's body: odd iterations negate, even ones add 1.
TEST(ControlFlowTest, ConditionalInsideALoop) {
  std::string state = "(s32[], f32[4])";
  std::unique_ptr<HloModule> module =
      parseTestModule("HloModule m\n" + lessThan("cond", state, 9) +
                      R"(neg {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
inc {
  p = f32[4] parameter(0)
  one = f32[] constant(1)
  o = f32[4] broadcast(one), dimensions={}
  ROOT a = f32[4] add(p, o)
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  two = s32[] constant(2)
  r = s32[] remainder(i, two)
  x = f32[4] get-tuple-element(s), index=1
  y = f32[4] conditional(r, x, x), branch_computations={inc, neg}
  ROOT t = (s32[], f32[4]) tuple(j, y)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  ROOT y = f32[4] get-tuple-element(w), index=1
})");
  ASSERT_TRUE(module);
  std::vector<Literal> arguments = {f32Array({4}, 0.5, 1)};
  EXPECT_EQ(checkAll(*module, arguments), "");
  Literal result = runOnCpu(*module, arguments);
  for (int64_t e = 0; e < 4; ++e) {
    float x = 0.5f + e;
    for (int i = 0; i < 9; ++i)
      x = i % 2 ? -x : x + 1;
    EXPECT_EQ(f32At(result, e), x);
  }
}

// call, at the ENTRY and nested, planned in place: a fusion inside the
// called computation, a call returning its parameter, and a while whose
// body calls a computation that calls another.
TEST(ControlFlowTest, CallsArePlannedInPlace) {
  std::unique_ptr<HloModule> module = parseTestModule(R"(HloModule m
scaled {
  p = f32[4] parameter(0)
  c = f32[] constant(3)
  b = f32[4] broadcast(c), dimensions={}
  ROOT m = f32[4] multiply(p, b)
}
inner {
  a = f32[4] parameter(0)
  i = s32[] parameter(1)
  f = f32[4] fusion(a), kind=kLoop, calls=scaled
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (f32[4], s32[], f32[4]) tuple(f, j, a)
}
outer {
  a = f32[4] parameter(0)
  i = s32[] parameter(1)
  ROOT c = (f32[4], s32[], f32[4]) call(a, i), to_apply=inner
}
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  c = (f32[4], s32[], f32[4]) call(x, i), to_apply=outer
  y = f32[4] get-tuple-element(c), index=0
  j = s32[] get-tuple-element(c), index=1
  ROOT t = (s32[], f32[4]) tuple(j, y)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  c = (f32[4], s32[], f32[4]) call(x, zero), to_apply=outer
  y = f32[4] get-tuple-element(c), index=0
  old = f32[4] get-tuple-element(c), index=2
  t = (s32[], f32[4]) tuple(zero, y)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  z = f32[4] get-tuple-element(w), index=1
  ROOT r = (f32[4], f32[4]) tuple(z, old)
})");
  ASSERT_TRUE(module);
  std::vector<Literal> arguments = {f32Array({4}, 1, 1)};
  EXPECT_EQ(checkAll(*module, arguments), "");
  Literal result = runOnCpu(*module, arguments);
  ASSERT_TRUE(result.isTuple());
  for (int64_t e = 0; e < 4; ++e) {
    EXPECT_EQ(f32At(result.tupleElements()[0], e), 243.0f * (1 + e));
    EXPECT_EQ(f32At(result.tupleElements()[1], e), 1.0f + e);
  }
}

// A dynamic-update-slice in a loop's body writes the counter into its
// slot. Nothing reads the old state after it: the kernel updates the
// state's buffer in place, and nothing is copied back. When the body also
// passes the old array on (as a third element), the kernel updates a copy
// and the old array survives until the end of the body.
TEST(ControlFlowTest, InPlaceUpdateInsideALoop) {
  for (bool keepOld : {false, true}) {
    std::string state = keepOld ? "(s32[], f32[8], f32[8])" : "(s32[], f32[8])";
    std::unique_ptr<HloModule> module =
        parseTestModule("HloModule m\n" + lessThan("cond", state, 8) +
                        "body {\n  s = " + state + R"( parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[8] get-tuple-element(s), index=1
  f = f32[] convert(i)
  u = f32[1] broadcast(f), dimensions={}
  y = f32[8] dynamic-update-slice(x, u, i)
  ROOT t = )" + state + (keepOld ? " tuple(j, y, x)" : " tuple(j, y)") +
                        R"(
}
ENTRY e {
  x = f32[8] parameter(0)
  zero = s32[] constant(0)
  t = )" + state + (keepOld ? " tuple(zero, x, x)" : " tuple(zero, x)") +
                        "\n  w = " + state +
                        R"( while(t), condition=cond, body=body
  ROOT y = f32[8] get-tuple-element(w), index=1
})");
    ASSERT_TRUE(module);
    std::vector<Literal> arguments = {f32Array({8}, -1, -1)};
    EXPECT_EQ(checkAll(*module, arguments), "") << keepOld;
    Literal result = runOnCpu(*module, arguments);
    for (int64_t e = 0; e < 8; ++e)
      EXPECT_EQ(f32At(result, e), static_cast<float>(e)) << keepOld;
    Expected<ModulePlan> plan = planModule(*module);
    ASSERT_TRUE(plan) << plan.error().message;
    bool inPlace = false;
    for (const PlannedKernel &kernel : plan->kernels)
      if (!kernel.inPlace.empty()) {
        inPlace = true;
        EXPECT_TRUE(kernel.inLoop);
        EXPECT_EQ(kernel.inPlace[0].reusesOperand, !keepOld);
      }
    EXPECT_TRUE(inPlace);
    std::string steps = describeSteps(*plan);
    std::string body = steps.substr(steps.find("body:"));
    EXPECT_EQ(body.find("f32[8] into") != std::string::npos, keepOld) << steps;
  }
}

// A nested tuple in a loop's state is refused with the instruction's name
// and line, never run.
TEST(ControlFlowTest, BadControlFlowIsRefused) {
  std::unique_ptr<HloModule> module = parseTestModule(R"(HloModule m
cond {
  s = ((s32[], f32[2]), f32[2]) parameter(0)
  ROOT c = pred[] constant(false)
}
body {
  s = ((s32[], f32[2]), f32[2]) parameter(0)
  a = (s32[], f32[2]) get-tuple-element(s), index=0
  x = f32[2] get-tuple-element(s), index=1
  ROOT t = ((s32[], f32[2]), f32[2]) tuple(a, x)
}
ENTRY e {
  x = f32[2] parameter(0)
  zero = s32[] constant(0)
  a = (s32[], f32[2]) tuple(zero, x)
  t = ((s32[], f32[2]), f32[2]) tuple(a, x)
  w = ((s32[], f32[2]), f32[2]) while(t), condition=cond, body=body
  ROOT y = f32[2] get-tuple-element(w), index=1
})");
  ASSERT_TRUE(module);
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, CompileOptions());
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.error().message,
            "operand 0 of %t is a tuple; only get-tuple-element of it is "
            "supported");
  ASSERT_TRUE(exe.error().span);
  EXPECT_EQ(exe.error().span->line, 16);
}

} // namespace
