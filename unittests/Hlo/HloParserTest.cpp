//===- HloParserTest.cpp - Parsing and printing HLO text ------------------===//
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Support/Npy.h"

#include "../ErrorText.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

std::unique_ptr<HloModule> parse(const std::string &text) {
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  EXPECT_TRUE(module) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

std::string parseError(const std::string &text) {
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  return module ? "ok" : lineColumnText(module.error());
}

/// print(parse(text)) parses back and prints the same.
void expectRoundTrip(const std::string &text) {
  std::unique_ptr<HloModule> module = parse(text);
  ASSERT_TRUE(module);
  std::string printed = module->toString();
  std::unique_ptr<HloModule> again = parse(printed);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->toString(), printed);
}

const char *kSeedGelu = R"(HloModule m
gelu {
%param = bf16[6,512,4096] parameter(0)
%constant_0 = bf16[] constant(0.5)
%bcast_0 = bf16[6,512,4096] broadcast(bf16[] %constant_0), dimensions={}
%constant_1 = bf16[] constant(1)
%bcast_1 = bf16[6,512,4096] broadcast(bf16[] %constant_1), dimensions={}
%constant_2 = bf16[] constant(0.79785)
%bcast_2 = bf16[6,512,4096] broadcast(bf16[] %constant_2), dimensions={}
%constant_3 = bf16[] constant(0.044708)
%bcast_3 = bf16[6,512,4096] broadcast(bf16[] %constant_3), dimensions={}
%square = bf16[6,512,4096] multiply(bf16[6,512,4096] %param, bf16[6,512,4096] %param)
%cube = bf16[6,512,4096] multiply(bf16[6,512,4096] %square, bf16[6,512,4096] %param)
%multiply_3 = bf16[6,512,4096] multiply(bf16[6,512,4096] %cube, bf16[6,512,4096] %bcast_3)
%add_1 = bf16[6,512,4096] add(bf16[6,512,4096] %param, bf16[6,512,4096] %multiply_3)
%multiply_2 = bf16[6,512,4096] multiply(bf16[6,512,4096] %add_1, bf16[6,512,4096] %bcast_2)
%tanh_0 = bf16[6,512,4096] tanh(bf16[6,512,4096] %multiply_2)
%add_0 = bf16[6,512,4096] add(bf16[6,512,4096] %tanh_0, bf16[6,512,4096] %bcast_1)
%multiply_1 = bf16[6,512,4096] multiply(bf16[6,512,4096] %add_0, bf16[6,512,4096] %bcast_0)
ROOT %multiply_0 = bf16[6,512,4096] multiply(bf16[6,512,4096] %param, bf16[6,512,4096] %multiply_1)
}
ENTRY main {
%param = bf16[6,512,4096] parameter(0)
ROOT fusion = bf16[6,512,4096] fusion(%param), kind=kLoop, calls=gelu
}
)";

TEST(HloParser, SeedGelu) {
  std::unique_ptr<HloModule> module = parse(kSeedGelu);
  ASSERT_TRUE(module);
  EXPECT_EQ(module->name(), "m");
  ASSERT_EQ(module->computations().size(), 2u);
  HloComputation *entry = module->entry();
  EXPECT_EQ(entry->name(), "main");
  HloInstruction *fusion = entry->root();
  EXPECT_EQ(fusion->opcode(), HloOpcode::Fusion);
  EXPECT_EQ(fusion->attributes().fusionKind, FusionKind::Loop);
  EXPECT_EQ(fusion->calledComputation()->name(), "gelu");
  EXPECT_EQ(fusion->operand(0)->name(), "param");
  HloComputation *gelu = module->computation("gelu");
  EXPECT_EQ(gelu->root()->name(), "multiply_0");
  EXPECT_EQ(gelu->parameterCount(), 1);
  // users: %param feeds square (twice), cube, add_1, multiply_0.
  EXPECT_EQ(gelu->instruction("param")->users().size(), 4u);
  EXPECT_EQ(gelu->instruction("constant_2")->literal().getDouble(0), 0.796875);
  EXPECT_EQ(gelu->instruction("tanh_0")->location().line, 17);
  EXPECT_TRUE(verifyHloModule(*module));
  expectRoundTrip(kSeedGelu);
}

TEST(HloParser, PrintsInXlaForm) {
  std::unique_ptr<HloModule> module = parse(R"(
HloModule jit_f, entry_computation_layout={(f32[4,8]{1,0})->f32[8,4]{0,1}}

ENTRY main.3 {
  x.1 = f32[4,8]{1,0} parameter(0)
  ROOT t = f32[8,4]{0,1} transpose(x.1), dimensions={1,0}, metadata={op_name="jit(f)/transpose" source_line=3}
}
)");
  ASSERT_TRUE(module);
  EXPECT_EQ(module->toString(),
            "HloModule jit_f, "
            "entry_computation_layout={(f32[4,8]{1,0})->f32[8,4]{0,1}}\n\n"
            "ENTRY %main.3 (x.1: f32[4,8]) -> f32[8,4] {\n"
            "  %x.1 = f32[4,8]{1,0} parameter(0)\n"
            "  ROOT %t = f32[8,4]{0,1} transpose(f32[4,8]{1,0} %x.1), "
            "dimensions={1,0}, metadata={op_name=\"jit(f)/transpose\" "
            "source_line=3}\n"
            "}\n\n");
}

TEST(HloParser, EveryAttributeRoundTrips) {
  expectRoundTrip(R"(
HloModule everything, is_scheduled=true, frontend_attributes={a="b"}

FileNames
1 "/tmp/f.py"

StackFrames
1 {file_location_id=1 parent_frame_id=1}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %a, f32[] %b)
}, execution_thread="main"

%argmax (a: f32[], i: s32[], b: f32[], j: s32[]) -> (f32[], s32[]) {
  %a = f32[] parameter(0)
  %i = s32[] parameter(1)
  %b = f32[] parameter(2)
  %j = s32[] parameter(3)
  %gt = pred[] compare(%a, %b), direction=GT, type=TOTALORDER
  %v = f32[] select(%gt, %a, %b)
  %k = s32[] select(%gt, %i, %j)
  ROOT %t = (f32[], s32[]) tuple(%v, %k)
}

ENTRY %main (p: f32[4,6], q: s32[4,6]) -> f32[2,3] {
  %p = f32[4,6]{1,0:T(2,2)} parameter(0), sharding={replicated}
  %q = s32[4,6] parameter(1)
  /* comments */ %zero = f32[] constant(0) // and line comments
  %izero = s32[] constant(-1)
  %c = f32[2,2] constant({ { 1.5, -2 }, { inf, -nan } })
  %e = f32[1000] constant({...})
  %r = f32[4] reduce(%p, %zero), dimensions={1}, to_apply=%add
  %am = (f32[4], s32[4]) reduce(%p, %q, %zero, %izero), dimensions={1}, to_apply=%argmax
  %g = s32[4] get-tuple-element(%am), index=1
  %w = f32[2,3] reduce-window(%p, %zero), window={size=2x2 stride=2x2 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1}, to_apply=%add
  %s = f32[2,3] slice(%p), slice={[0:4:2], [1:6:2]}
  %pd = f32[9,3] pad(%p, %zero), padding=1_2_1x-1_-2
  %d = f32[4,4] dot(%p, %p), lhs_contracting_dims={1}, rhs_contracting_dims={1}, operand_precision={default,default}
  %i = s32[] constant(1)
  %ds = f32[2,2] dynamic-slice(%p, %i, %i), dynamic_slice_sizes={2,2}
  %io = s32[2,3] iota(), iota_dimension=1
  %cc = f32[4,12] concatenate(%p, %p), dimensions={1}
  %bc = u32[4,6] bitcast-convert(%p)
  %cp = f32[4,6]{0,1} copy(%p), backend_config={"flag":true,"x":[1,2]}
  ROOT %out = f32[2,3] add(%s, %w), control-predecessors={%cp}
}
)");
}

// input_output_alias is read into the module (output index, parameter,
// parameter index, kind), printed back in XLA's form, and changes no value.
TEST(HloParser, InputOutputAlias) {
  const char *text =
      R"(HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: (2, {}, must-alias), {2}: (1, {}) }, entry_computation_layout={(f32[4]{0}, f32[2]{0}, s32[3]{0})->(f32[4]{0}, s32[3]{0}, f32[2]{0})}

ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[2]{0} parameter(1)
  c = s32[3]{0} parameter(2)
  na = f32[4]{0} negate(a)
  nc = s32[3]{0} negate(c)
  nb = f32[2]{0} negate(b)
  ROOT t = (f32[4]{0}, s32[3]{0}, f32[2]{0}) tuple(na, nc, nb)
}
)";
  std::unique_ptr<HloModule> module = parse(text);
  ASSERT_TRUE(module);
  const std::vector<HloInputOutputAlias> &aliases =
      module->inputOutputAliases();
  ASSERT_EQ(aliases.size(), 3u);
  EXPECT_EQ(aliases[1].outputIndex, std::vector<int64_t>{1});
  EXPECT_EQ(aliases[1].parameterNumber, 2);
  EXPECT_TRUE(aliases[1].parameterIndex.empty());
  EXPECT_EQ(aliases[1].kind, HloInputOutputAlias::Kind::MustAlias);
  EXPECT_EQ(aliases[2].kind, HloInputOutputAlias::Kind::MayAlias);
  EXPECT_EQ(aliases[1].location.line, 1);
  EXPECT_EQ(aliases[1].location.column, 60);
  EXPECT_TRUE(module->rawAttributes().empty());
  EXPECT_TRUE(verifyHloModule(*module));
  // The kind is always printed (may-alias when it was left out).
  EXPECT_EQ(module->toString().substr(0, module->toString().find('\n')),
            "HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: "
            "(2, {}, must-alias), {2}: (1, {}, may-alias) }, "
            "entry_computation_layout={(f32[4]{0}, f32[2]{0}, "
            "s32[3]{0})->(f32[4]{0}, s32[3]{0}, f32[2]{0})}");
  expectRoundTrip(text);
  std::unique_ptr<HloModule> again = parse(module->toString());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->inputOutputAliases(), aliases);
  // Aliasing changes no value: the same results without the attribute.
  std::string plain = text;
  plain.erase(plain.find(", input_output_alias"),
              plain.find(", entry_computation_layout") -
                  plain.find(", input_output_alias"));
  std::unique_ptr<HloModule> unaliased = parse(plain);
  ASSERT_TRUE(unaliased);
  EXPECT_TRUE(unaliased->inputOutputAliases().empty());
  std::vector<Literal> arguments;
  for (const Shape &shape : module->entryProgramShape().parameters) {
    Literal literal(shape);
    for (int64_t i = 0; i < literal.elementCount(); ++i)
      literal.setDouble(i, static_cast<double>(i) - 1.5);
    arguments.push_back(std::move(literal));
  }
  Expected<Literal> aliased = evaluateHloModule(*module, arguments);
  Expected<Literal> reference = evaluateHloModule(*unaliased, arguments);
  ASSERT_TRUE(aliased && reference);
  EXPECT_EQ(aliased->toString(), reference->toString());
  EXPECT_EQ(aliased->tupleElements()[0].getDouble(1), 0.5);
}

TEST(HloParser, InputOutputAliasErrors) {
  auto header = [](const std::string &alias) {
    return parseError("HloModule m, input_output_alias=" + alias +
                      "\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n");
  };
  EXPECT_EQ(header("{ {}: (0, {}, may-alias) }"), "ok");
  EXPECT_EQ(header("{}"), "ok");
  EXPECT_EQ(header("{ {}: (0, {}, maybe) }"),
            "1:47: expected may-alias or must-alias but found 'maybe'");
  EXPECT_EQ(header("{ {} (0, {}) }"),
            "1:38: expected ':' after the output shape index but found '('");
  EXPECT_EQ(header("{ {}: 0 }"),
            "1:39: expected '(' before the aliased parameter but found '0'");
  EXPECT_EQ(header("{ {}: (x, {}) }"),
            "1:40: expected a parameter number but found 'x'");
  EXPECT_EQ(header("{ {}: (0) }"),
            "1:41: expected ',' after the parameter number but found ')'");
  EXPECT_EQ(header("{ {}: (0, 1) }"),
            "1:43: expected '{' to open a parameter shape index but found '1'");
  EXPECT_EQ(header("{ {-1}: (0, {}) }"),
            "1:36: expected a tuple index but found '-1'");
  EXPECT_EQ(header("{ {}: (0, {}) "),
            "2:1: expected ',' or '}' in input_output_alias but found "
            "'ENTRY'");
  EXPECT_EQ(parseError("HloModule m, input_output_alias={}, "
                       "input_output_alias={}\nENTRY e {\n  ROOT p = f32[2] "
                       "parameter(0)\n}\n"),
            "1:37: input_output_alias is given twice");
}

TEST(HloParser, UnsupportedOpsAreKeptVerbatim) {
  const char *text = R"(
HloModule m

cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ENTRY e {
  p = f32[8] parameter(0)
  c = f32[8] custom-call(p), custom_call_target="foo", api_version=API_VERSION_TYPED_FFI, backend_config={x=1}
  ROOT s = f32[8] sort(c), dimensions={0}, is_stable=true, to_apply=%cmp
}
)";
  // The raw to_apply of an unsupported op is text, but it must name a
  // computation, as in XLA.
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n"
                       "  ROOT s = f32[8] sort(p), dimensions={0}, "
                       "to_apply=%nowhere\n}\n"),
            "4:54: use of undefined computation %nowhere");
  std::unique_ptr<HloModule> module = parse(text);
  ASSERT_TRUE(module);
  HloInstruction *call = module->entry()->instruction("c");
  EXPECT_EQ(call->opcode(), HloOpcode::CustomCall);
  ASSERT_NE(call->rawAttribute("custom_call_target"), nullptr);
  EXPECT_EQ(*call->rawAttribute("custom_call_target"), "\"foo\"");
  EXPECT_TRUE(verifyHloModule(*module)); // not checked, not rejected
  expectRoundTrip(text);
}

TEST(HloParser, ErrorsNameLineColumnAndExpectation) {
  EXPECT_EQ(parseError("HloModule m;\nENTRY e {\n p = f32[] parameter(0)\n}"),
            "1:12: expected ',' and an attribute or a new line after the "
            "module header but found ';'");
  // XLA accepts `HloModule m:`.
  EXPECT_TRUE(parseHloModule("HloModule m:\nENTRY e {\n p = f32[] "
                             "parameter(0)\n}"));
  EXPECT_EQ(parseError("HloModule a\nENTRY e {\n p = f32[] parameter(0)\n}\n"
                       "HloModule b\nENTRY e {\n p = f32[] parameter(0)\n}"),
            "5:1: a second HloModule: tessel reads one module per file, "
            "expected a computation (split the file in two)");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT n = f32[] negate(q)\n}"),
            "4:25: use of undefined instruction %q");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[] frobnicate(0)\n}"),
            "3:13: unknown opcode 'frobnicate'");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f33[] parameter(0)\n}"),
            "3:7: unknown element type 'f33', expected one of pred, s2, s4, "
            "s8, s16, s32, s64, u2, u4, u8, u16, u32, u64, f16, bf16, f32, "
            "f64, c64, c128, f8e5m2, f8e4m3fn, f8e4m3b11fnuz, f8e5m2fnuz, "
            "f8e4m3fnuz");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  ROOT b = f32[2,2] broadcast(p)\n}"),
            "4:21: broadcast needs the attribute dimensions=");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  ROOT c = f32[2] compare(p, p), direction=XX\n}"),
            "4:44: expected a comparison direction (EQ, NE, GE, GT, LE, LT) "
            "but found 'XX'");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  ROOT r = f32[] reduce(p, p), dimensions={0}, "
                       "to_apply=nowhere\n}"),
            "4:57: use of undefined computation %nowhere");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  p = f32[2] parameter(1)\n}"),
            "4:3: instruction %p is defined twice in %e");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  c = f32[2] constant({1, 2, "
                       "3})\n}"),
            "3:28: too many elements in dim 0, expected 2");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)"),
            "3:26: expected '}' to close computation %e but found the end of "
            "the input");
  EXPECT_EQ(
      parseError("HloModule m\nENTRY e {\n  p = f32[2]{1} parameter(0)\n}"),
      "3:14: minor_to_major {1} names dim 1, expected a permutation of "
      "0..0");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0), "
                       "metadata={op_name=\"x\"\n}"),
            "4:2: expected '}' to close computation %e but found the end of "
            "the input");
}

TEST(HloParser, SignatureAndOperandStylesAreOptional) {
  std::unique_ptr<HloModule> a =
      parse("HloModule m\nENTRY %e (x: f32[2]) -> f32[2] {\n"
            "  %x = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} "
            "negate(f32[2]{0} %x)\n}\n");
  std::unique_ptr<HloModule> b =
      parse("HloModule m\nENTRY e {\n  x = f32[2]{0} parameter(0)\n"
            "  ROOT n = f32[2]{0} negate(x)\n}\n");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->toString(), b->toString());
}

TEST(HloParser, ExampleFilesParseAndVerify) {
  for (const char *file : {"gelu.hlo", "gelu_small.hlo"}) {
    Expected<std::string> text =
        readFileBytes(std::string(TESSEL_EXAMPLES) + "/" + file);
    ASSERT_TRUE(text) << text.error().message;
    std::unique_ptr<HloModule> module = parse(*text);
    ASSERT_TRUE(module) << file;
    Status problem = verifyHloModule(*module);
    EXPECT_TRUE(problem) << file << ": " << problem.error().message;
    expectRoundTrip(*text);
  }
}

TEST(HloParser, ErrorsRenderTheOffendingLine) {
  Expected<std::unique_ptr<HloModule>> module =
      parseHloModule("HloModule m\nENTRY e {\n\tp = f32[2] parameter(0)\n"
                     "\tROOT x = f32[2] frobnicate(p)\n}\n");
  ASSERT_FALSE(module);
  // The tab counts as one column and shows as a tab stop.
  EXPECT_EQ(renderError(module.error().inSource("m.hlo")),
            "m.hlo:4:18: error: unknown opcode 'frobnicate'\n"
            "        ROOT x = f32[2] frobnicate(p)\n"
            "                        ^");
}

} // namespace
