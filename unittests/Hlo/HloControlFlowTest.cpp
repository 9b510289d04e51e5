//===- HloControlFlowTest.cpp - while, conditional and call, nested -------===//
#include "EvaluatorTestHelpers.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {

/// A loop over i < n whose body runs an inner loop over j < i and adds i*j
/// (or, through a conditional on i % 3, i - j or a call's 2*j) to the
/// accumulator: whiles, a conditional and a call nested three deep.
const char *kNested = R"(HloModule m
twice {
  v = s32[] parameter(0)
  ROOT t = s32[] add(v, v)
}
product {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  j = s32[] get-tuple-element(p), index=1
  ROOT r = s32[] multiply(i, j)
}
difference {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  j = s32[] get-tuple-element(p), index=1
  ROOT r = s32[] subtract(i, j)
}
doubled {
  p = (s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(p), index=1
  ROOT r = s32[] call(j), to_apply=twice
}
inner_cond {
  s = (s32[], s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(s), index=1
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(j, i), direction=LT
}
inner_body {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  j = s32[] get-tuple-element(s), index=1
  acc = s32[] get-tuple-element(s), index=2
  three = s32[] constant(3)
  k = s32[] remainder(i, three)
  ij = (s32[], s32[]) tuple(i, j)
  term = s32[] conditional(k, ij, ij, ij), branch_computations={product, difference, doubled}
  acc2 = s32[] add(acc, term)
  one = s32[] constant(1)
  j2 = s32[] add(j, one)
  ROOT r = (s32[], s32[], s32[]) tuple(i, j2, acc2)
}
outer_cond {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
outer_body {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  acc = s32[] get-tuple-element(s), index=2
  zero = s32[] constant(0)
  init = (s32[], s32[], s32[]) tuple(i, zero, acc)
  w = (s32[], s32[], s32[]) while(init), condition=inner_cond, body=inner_body
  acc2 = s32[] get-tuple-element(w), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT r = (s32[], s32[], s32[]) tuple(i2, n, acc2)
}
ENTRY e {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[], s32[]) tuple(zero, n, zero)
  w = (s32[], s32[], s32[]) while(init), condition=outer_cond, body=outer_body
  ROOT acc = s32[] get-tuple-element(w), index=2
}
)";

TEST(HloControlFlow, NestedLoopsConditionalsAndCallsMatchALoopNest) {
  for (int n : {0, 1, 2, 5, 13}) {
    int64_t want = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < i; ++j)
        want += i % 3 == 0 ? i * j : i % 3 == 1 ? i - j : 2 * j;
    EXPECT_EQ(evaluateToString(kNested, {std::to_string(n)}),
              std::to_string(want))
        << "n = " << n;
  }
}

TEST(HloControlFlow, StepLimitStopsARunawayLoop) {
  const char *text = R"(HloModule m
cond {
  s = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  s = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT r = s32[] add(s, one)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
)";
  EvaluatorOptions options;
  options.maxSteps = 1000;
  std::string error = evaluateToString(text, {}, options);
  EXPECT_NE(error.find("error: 13:3: %w: the loops ran 1000 iterations"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("--max-steps"), std::string::npos) << error;
}

TEST(HloControlFlow, StepLimitAllowsExactlyThatManyIterations) {
  const char *text = R"(HloModule m
cond {
  s = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT t = pred[] compare(s, ten), direction=LT
}
body {
  s = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT r = s32[] add(s, one)
}
ENTRY e {
  z = s32[] parameter(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
)";
  EvaluatorOptions options;
  options.maxSteps = 10;
  EXPECT_EQ(evaluateToString(text, {"0"}, options), "10");
  EXPECT_EQ(evaluateToString(text, {"3"}, options), "10");
  EXPECT_EQ(evaluateToString(text, {"42"}, options), "42");
  options.maxSteps = 9;
  EXPECT_NE(evaluateToString(text, {"0"}, options).find("9 iterations"),
            std::string::npos);
}

const char *kSwitch = R"(HloModule m
b0 {
  x = f32[2] parameter(0)
  ROOT r = f32[2] negate(x)
}
b1 {
  x = f32[2] parameter(0)
  ROOT r = f32[2] add(x, x)
}
b2 {
  y = s32[] parameter(0)
  seven = f32[] constant(7)
  ROOT r = f32[2] broadcast(seven), dimensions={}
}
ENTRY e {
  k = s32[] parameter(0)
  x = f32[2] parameter(1)
  y = s32[] constant(5)
  ROOT c = f32[2] conditional(k, x, x, y), branch_computations={b0, b1, b2}
}
)";

TEST(HloControlFlow, BranchIndexOutOfRangeRunsTheLastBranch) {
  EXPECT_EQ(evaluateToString(kSwitch, {"0", "{1.5, -2}"}), "{-1.5, 2}");
  EXPECT_EQ(evaluateToString(kSwitch, {"1", "{1.5, -2}"}), "{3, -4}");
  EXPECT_EQ(evaluateToString(kSwitch, {"2", "{1.5, -2}"}), "{7, 7}");
  EXPECT_EQ(evaluateToString(kSwitch, {"3", "{1.5, -2}"}), "{7, 7}");
  EXPECT_EQ(evaluateToString(kSwitch, {"-1", "{1.5, -2}"}), "{7, 7}");
}

TEST(HloControlFlow, PredicateRunsTrueOrFalseComputation) {
  const char *text = R"(HloModule m
yes {
  x = f32[] parameter(0)
  ROOT r = f32[] negate(x)
}
no {
  x = f32[] parameter(0)
  ROOT r = f32[] add(x, x)
}
ENTRY e {
  p = pred[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(p, x, x), true_computation=yes, false_computation=no
}
)";
  EXPECT_EQ(evaluateToString(text, {"true", "3"}), "-3");
  EXPECT_EQ(evaluateToString(text, {"false", "3"}), "6");
}

TEST(HloControlFlow, MalformedLoopsAreErrorsNotCrashes) {
  const char *badBody = R"(HloModule m
cond {
  s = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  s = s32[] parameter(0)
  ROOT r = f32[] constant(1)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
)";
  EXPECT_NE(evaluateToString(badBody, {})
                .find("the body %body returns f32[], expected s32[]"),
            std::string::npos);
  const char *badCond = R"(HloModule m
cond {
  ROOT s = s32[] parameter(0)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=cond
}
)";
  EXPECT_NE(evaluateToString(badCond, {})
                .find("the condition %cond returns s32[], expected pred[]"),
            std::string::npos);
  const char *noBody = R"(HloModule m
cond {
  s = s32[] parameter(0)
  ROOT t = pred[] constant(false)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond
}
)";
  EXPECT_NE(
      evaluateToString(noBody, {})
          .find("8:3: %w: while needs body= naming one computation, found 0"),
      std::string::npos)
      << evaluateToString(noBody, {});
}

/// Evaluates `text` without verifying it first (what the evaluator does
/// with a module whose declared shapes lie).
std::string evaluateUnverified(const std::string &text,
                               const std::vector<Literal> &arguments) {
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  if (!module)
    return "parse: " + lineColumnText(module.error());
  Expected<Literal> result = evaluateHloModule(**module, arguments);
  return result ? result->toString()
                : "error: " + lineColumnText(result.error());
}

TEST(HloControlFlow, ValuesOfAnotherShapeThanDeclaredAreErrors) {
  // The verifier refuses a declared shape that is not the op's; the
  // evaluator, given the unverified module, still does not hand a value of
  // another shape to users that trust the declaration.
  const char *branch = R"(HloModule m
small {
  x = f32[2] parameter(0)
  ROOT r = f32[1] slice(x), slice={[0:1]}
}
ENTRY e {
  k = s32[] parameter(0)
  x = f32[2] parameter(1)
  c = f32[2] conditional(k, x), branch_computations={small}
  ROOT n = f32[2] negate(c)
}
)";
  EXPECT_EQ(evaluateToString(branch, {"0", "{1, 2}"}),
            "error: verify: 9:3: %c: declared shape f32[2] does not match the "
            "inferred f32[1]");
  Literal k(Shape(PrimitiveType::S32, {}));
  Literal x(Shape(PrimitiveType::F32, {2}));
  EXPECT_EQ(evaluateUnverified(branch, {k, x}),
            "error: 9:3: %c: the op gives f32[1], its declared shape is "
            "f32[2]");
  const char *sorted = R"(HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[3] parameter(0)
  ROOT s = f32[4] sort(x), dimensions={0}, to_apply=less
}
)";
  EXPECT_EQ(evaluateToString(sorted, {"{3, 1, 2}"}),
            "error: verify: 9:3: %s: declared shape f32[4] does not match the "
            "inferred f32[3]");
  Literal three(Shape(PrimitiveType::F32, {3}));
  EXPECT_EQ(evaluateUnverified(sorted, {three}),
            "error: 9:3: %s: the op gives f32[3], its declared shape is "
            "f32[4]");
}

} // namespace
