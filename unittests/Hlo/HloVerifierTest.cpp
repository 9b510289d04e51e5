//===- HloVerifierTest.cpp - Shape inference and module checks ------------===//
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Hlo/HloParser.h"

#include "../ErrorText.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

/// Verifies `body` as the ENTRY of a module (with %add defined); "ok" or the
/// message.
std::string verify(const std::string &body) {
  std::string text = "HloModule m\n"
                     "add {\n  a = f32[] parameter(0)\n  b = f32[] "
                     "parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                     "ENTRY e {\n" +
                     body + "}\n";
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  if (!module)
    return "parse: " + lineColumnText(module.error());
  Status problem = verifyHloModule(**module);
  return problem ? "ok" : lineColumnText(problem.error());
}

TEST(HloVerifier, InfersShapesOfValidOps) {
  EXPECT_EQ(verify("  p = f32[4,6] parameter(0)\n"
                   "  z = f32[] constant(0)\n"
                   "  t = f32[6,4]{0,1} transpose(p), dimensions={1,0}\n"
                   "  b = f32[3,4,6] broadcast(p), dimensions={1,2}\n"
                   "  r = f32[6] reduce(p, z), dimensions={0}, to_apply=add\n"
                   "  s = f32[2,2] slice(p), slice={[0:4:2], [1:5:2]}\n"
                   "  pd = f32[10,3] pad(p, z), padding=1_2_1x-1_-2\n"
                   "  w = f32[3,3] reduce-window(p, z), window={size=2x2 "
                   "stride=1x2}, to_apply=add\n"
                   "  d = f32[4,4] dot(p, p), lhs_contracting_dims={1}, "
                   "rhs_contracting_dims={1}\n"
                   "  c = pred[4,6] compare(p, p), direction=LT\n"
                   "  sel = f32[4,6] select(c, p, p)\n"
                   "  i = s32[] constant(1)\n"
                   "  ds = f32[2,3] dynamic-slice(p, i, i), "
                   "dynamic_slice_sizes={2,3}\n"
                   "  du = f32[4,6] dynamic-update-slice(p, ds, i, i)\n"
                   "  cc = f32[4,12] concatenate(p, p), dimensions={1}\n"
                   "  bc = s32[4,6] bitcast-convert(p)\n"
                   "  narrow = u8[4,6,4] bitcast-convert(p)\n"
                   "  cv = bf16[4,6] convert(p)\n"
                   "  cl = f32[4,6] clamp(z, p, z)\n"
                   "  fin = pred[4,6] is-finite(p)\n"
                   "  tu = (f32[4,6], s32[]) tuple(p, i)\n"
                   "  g = s32[] get-tuple-element(tu), index=1\n"
                   "  io = s32[5,2] iota(), iota_dimension=0\n"
                   "  rs = f32[24] reshape(p)\n"
                   "  btc = f32[6,4]{0,1} bitcast(p)\n"
                   "  ROOT sh = s32[5,2] shift-left(io, io)\n"),
            "ok");
}

TEST(HloVerifier, ReportsMismatchesAtTheInstruction) {
  EXPECT_EQ(verify("  p = f32[4] parameter(0)\n  ROOT n = f32[5] negate(p)\n"),
            "9:3: %n: declared shape f32[5] does not match the inferred "
            "f32[4]");
  EXPECT_EQ(verify("  p = f32[4] parameter(0)\n  q = f32[5] parameter(1)\n"
                   "  ROOT n = f32[4] add(p, q)\n"),
            "10:3: %n: add of f32[4] and f32[5], expected one shape");
  EXPECT_EQ(verify("  p = f32[4,6] parameter(0)\n"
                   "  ROOT t = f32[6,4] transpose(p), dimensions={1,1}\n"),
            "9:3: %t: transpose dimension 1 appears twice");
  EXPECT_EQ(verify("  p = f32[4,6] parameter(0)\n"
                   "  ROOT s = f32[4,6] slice(p), slice={[0:5], [0:6]}\n"),
            "9:3: %s: slice [0:5:1] of dim 0 (size 4), expected 0 <= start <= "
            "limit <= size and stride >= 1");
  EXPECT_EQ(verify("  p = f32[4,6] parameter(0)\n"
                   "  ROOT b = f32[4,5] broadcast(p), dimensions={0,1}\n"),
            "9:3: %b: operand dim 1 of size 6 maps to result dim 1 of size 5, "
            "expected equal sizes");
  EXPECT_EQ(verify("  p = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
                   "  ROOT r = f32[6] reduce(p, z), dimensions={2}, "
                   "to_apply=add\n"),
            "10:3: %r: reduce dimension 2 is out of range, expected 0..1");
  EXPECT_EQ(verify("  p = s32[4] parameter(0)\n"
                   "  ROOT e = s32[4] exponential(p)\n"),
            "9:3: %e: exponential does not apply to s32");
  EXPECT_EQ(verify("  p = f32[4] parameter(0)\n  q = f32[4] parameter(0)\n"
                   "  ROOT a = f32[4] add(p, q)\n"),
            "9:3: %q: parameter number 0 is used twice or out of range in %e");
  EXPECT_EQ(verify("  p = f32[4] parameter(0)\n  z = s32[] constant(0)\n"
                   "  ROOT r = f32[] reduce(p, z), dimensions={0}, "
                   "to_apply=add\n"),
            "10:3: %r: init value s32[] must be a scalar of f32");
  EXPECT_EQ(verify("  p = f32[4,6] parameter(0)\n"
                   "  ROOT d = f32[4,4] dot(p, p), lhs_contracting_dims={1}, "
                   "rhs_contracting_dims={0}\n"),
            "9:3: %d: contracting dims of sizes 6 and 4 differ");
  EXPECT_EQ(verify("  p = f32[4,6] parameter(0)\n"
                   "  ROOT b = f32[2,2] bitcast(p)\n"),
            "9:3: %b: bitcast of f32[4,6]{1,0} (96 bytes) to f32[2,2]{1,0} (16 "
            "bytes), "
            "expected the same buffer size");
}

TEST(HloVerifier, ChecksCallsAndTheEntryLayout) {
  Expected<std::unique_ptr<HloModule>> cycle = parseHloModule(
      "HloModule m\na {\n  x = f32[] parameter(0)\n  ROOT c = f32[] call(x), "
      "to_apply=b\n}\nb {\n  x = f32[] parameter(0)\n  ROOT c = f32[] "
      "call(x), to_apply=a\n}\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT "
      "c = f32[] call(x), to_apply=a\n}\n");
  ASSERT_TRUE(cycle);
  Status problem = verifyHloModule(**cycle);
  ASSERT_FALSE(problem);
  EXPECT_EQ(lineColumnText(problem.error()),
            "8:3: %c: calling %a forms a cycle");

  Expected<std::unique_ptr<HloModule>> layout = parseHloModule(
      "HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\n"
      "ENTRY e {\n  ROOT x = f32[2] parameter(0)\n}\n");
  ASSERT_TRUE(layout);
  problem = verifyHloModule(**layout);
  ASSERT_FALSE(problem);
  EXPECT_EQ(lineColumnText(problem.error()),
            "1:14: entry_computation_layout does not match the entry "
            "computation %e: parameter 0 is f32[3]{0}, the entry's f32[2]{0}");
  EXPECT_EQ(verify("  p = f32[4] parameter(0)\n"
                   "  ROOT f = f32[] fusion(p, p), kind=kLoop, calls=add\n"),
            "9:3: %f: operand 0 f32[4] does not match parameter 0 of %add "
            "(f32[])");
}

// input_output_alias against the entry: parameter numbers, shape indices,
// shapes with layouts, and no buffer named twice, each at its position.
TEST(HloVerifier, InputOutputAlias) {
  auto verifyAlias = [](const std::string &alias,
                        const std::string &result = "f32[4]{0}") {
    std::string text =
        "HloModule m, input_output_alias={ " + alias +
        " }\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  b = f32[4]{0} "
        "parameter(1)\n  c = f32[4]{0:T(2)} parameter(2)\n  d = (f32[4]{0}, "
        "s32[2]{0}) parameter(3)\n  n = f32[4]{0} negate(a)\n  ROOT r = " +
        result + " tuple(n, n)\n}\n";
    if (result == "f32[4]{0}")
      text.replace(text.find(" tuple(n, n)"), 12, " add(a, b)");
    Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
    if (!module)
      return "parse: " + lineColumnText(module.error());
    Status problem = verifyHloModule(**module);
    return problem ? std::string("ok") : lineColumnText(problem.error());
  };
  const std::string pair = "(f32[4]{0}, f32[4]{0})";
  EXPECT_EQ(verifyAlias("{}: (0, {}, may-alias)"), "ok");
  EXPECT_EQ(verifyAlias("{1}: (1, {}), {0}: (0, {}, must-alias)", pair), "ok");
  EXPECT_EQ(verifyAlias("{}: (3, {0})"), "ok");
  EXPECT_EQ(verifyAlias("{}: (4, {})"),
            "1:35: input_output_alias {}: (4, {}, may-alias): the entry has "
            "no parameter 4 (it has 4)");
  EXPECT_EQ(verifyAlias("{0}: (0, {})"),
            "1:35: input_output_alias {0}: (0, {}, may-alias): output index "
            "{0} is not in the result f32[4]{0}");
  EXPECT_EQ(verifyAlias("{2}: (0, {})", pair),
            "1:35: input_output_alias {2}: (0, {}, may-alias): output index "
            "{2} is not in the result (f32[4]{0}, f32[4]{0})");
  EXPECT_EQ(verifyAlias("{}: (0, {0})"),
            "1:35: input_output_alias {}: (0, {0}, may-alias): parameter "
            "index {0} is not in parameter 0, f32[4]{0}");
  EXPECT_EQ(verifyAlias("{}: (3, {1})"),
            "1:35: input_output_alias {}: (3, {1}, may-alias): the output is "
            "f32[4]{0}, the parameter s32[2]{0}; aliased buffers must have "
            "the same shape and layout");
  EXPECT_EQ(verifyAlias("{}: (2, {})"),
            "1:35: input_output_alias {}: (2, {}, may-alias): the output is "
            "f32[4]{0}, the parameter f32[4]{0:T(2)}; aliased buffers must "
            "have the same shape and layout");
  EXPECT_EQ(verifyAlias("{0}: (0, {}), {0}: (1, {})", pair),
            "1:49: input_output_alias {0}: (1, {}, may-alias): output {0} is "
            "aliased twice");
  EXPECT_EQ(verifyAlias("{0}: (0, {}), {1}: (0, {})", pair),
            "1:49: input_output_alias {1}: (0, {}, may-alias): parameter 0 {} "
            "is aliased to two outputs");
}

TEST(HloVerifier, CallsNestAtMost256Deep) {
  auto chain = [](int levels) {
    std::string text = "HloModule m\nc0 {\n  p = f32[] parameter(0)\n"
                       "  ROOT r = f32[] negate(p)\n}\n";
    for (int i = 1; i < levels; ++i)
      text += "c" + std::to_string(i) +
              " {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), "
              "to_apply=c" +
              std::to_string(i - 1) + "\n}\n";
    return text +
           "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT r = f32[] "
           "call(x), to_apply=c" +
           std::to_string(levels - 1) + "\n}\n";
  };
  Expected<std::unique_ptr<HloModule>> ok = parseHloModule(chain(256));
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(verifyHloModule(**ok));
  Expected<std::unique_ptr<HloModule>> deep = parseHloModule(chain(5000));
  ASSERT_TRUE(deep) << deep.error().message;
  Status problem = verifyHloModule(**deep);
  ASSERT_FALSE(problem);
  EXPECT_EQ(lineColumnText(problem.error()),
            "20004:3: %r: calls nest 5000 deep from here, more than the 256 "
            "levels tessel evaluates, analyses and compiles");
}

} // namespace
