//===- ComplexTest.cpp - c64 and c128 in compiled kernels -----------------===//
//
// Every complex op the evaluator defines, compiled and run on random values
// with zeros of both signs, infinities, NaNs, subnormals and huge parts,
// against the evaluator (EvaluatorComplex.cpp), for c64 and c128, with the
// CPU's launch and the GPU's (on the CPU). The bound per op, in ulps of
// each part (kBounds below, docs/codegen.md):
//
//   add, subtract, negate, multiply, divide,
//   real, imag, complex, compare, converts, select, data movement   0
//   abs, sign (the C library's hypot, as the evaluator)               0
//   exp, log, sqrt, ... , power (the evaluator's own functions)       0
//
// All are bit-exact on the CPU (NaNs are equal whatever their payload); on
// the GPU, abs and sign call libdevice's hypot instead (CUDA's bounds: 3
// ulp in f32, 2 in f64) and the transcendental functions are refused.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Hlo/LiteralComparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

using namespace tessel;

namespace {

constexpr int64_t kCount = 640;

/// A part: about one in four special, else random of every magnitude.
double randomPart(std::mt19937_64 &rng, bool c64) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double specials[] = {0.0,
                             -0.0,
                             inf,
                             -inf,
                             nan,
                             -nan,
                             1.0,
                             -1.0,
                             c64 ? 1e-40 : 1e-310, // subnormal
                             c64 ? 3e38 : 1.7e308, // near the largest
                             c64 ? 1e-30 : 1e-300,
                             0.5};
  uint64_t r = rng();
  if ((r & 3) == 0)
    return specials[(r >> 2) % std::size(specials)];
  std::uniform_real_distribution<double> unit(-3.0, 3.0);
  double v = unit(rng);
  if ((r & 12) == 0) // every magnitude the type has
    v = std::ldexp(v, static_cast<int>((r >> 8) % (c64 ? 240 : 2000)) -
                          (c64 ? 120 : 1000));
  return v;
}

Literal randomComplex(PrimitiveType type, uint64_t seed) {
  Literal literal(Shape(type, {kCount}));
  std::mt19937_64 rng(seed);
  bool c64 = type == PrimitiveType::C64;
  for (int64_t i = 0; i < kCount; ++i) {
    double re = randomPart(rng, c64), im = randomPart(rng, c64);
    literal.setComplex(i, {re, im});
  }
  // Some equal pairs for compare: the same element in both arguments is
  // set by the caller (seed + 1 differs); a few of the first are copied.
  return literal;
}

struct Output {
  std::string name;
  std::string shape; // "c64[640]", "f32[640]", ...
  std::string expr;  // the instruction's right-hand side
  uint64_t ulps;     // the bound
};

/// Compiles `outputs` over parameters x and y of `type`, runs them with
/// `target`'s launch on the CPU and compares each with the evaluator within
/// its bound: "" or the failures.
std::string check(PrimitiveType type, const std::vector<Output> &outputs,
                  const std::vector<Literal> &arguments, Target target) {
  std::string t(primitiveTypeName(type));
  std::string n = std::to_string(kCount);
  std::string text = "HloModule m\nENTRY e {\n  %x = " + t + "[" + n +
                     "] parameter(0)\n  %y = " + t + "[" + n +
                     "] parameter(1)\n";
  std::string shapes, names;
  for (const Output &o : outputs) {
    text += "  %" + o.name + " = " + o.shape + " " + o.expr + "\n";
    shapes += (shapes.empty() ? "" : ", ") + o.shape;
    names += (names.empty() ? "%" : ", %") + o.name;
  }
  text += "  ROOT %r = (" + shapes + ") tuple(" + names + ")\n}\n";
  auto module = parseTestModule(text);
  if (!module)
    return "the module does not parse";
  CompileOptions options;
  options.target = target;
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, options);
  if (!exe)
    return "refused: " + exe.error().message;
  RunOptions run;
  run.threads = 2;
  Expected<Literal> got = (*exe)->run(arguments, run);
  if (!got)
    return "run failed: " + got.error().message;
  Expected<Literal> want = evaluateHloModule(*module, arguments);
  if (!want)
    return "the evaluator failed: " + want.error().message;
  std::vector<const Literal *> g = outputsOf(*got), w = outputsOf(*want);
  if (g.size() != outputs.size() || w.size() != outputs.size())
    return "wrong number of outputs";
  std::string failures;
  for (size_t i = 0; i < outputs.size(); ++i) {
    LiteralComparison c =
        compareLiterals(*g[i], *w[i], ComparisonBound{outputs[i].ulps, 0});
    if (c.failing)
      failures += outputs[i].name + " (" + outputs[i].expr +
                  "): " + describeComparison(c, *g[i], *w[i]) + "\n";
  }
  return failures;
}

std::vector<Literal> arguments(PrimitiveType type, uint64_t seed) {
  std::vector<Literal> args;
  args.push_back(randomComplex(type, seed));
  args.push_back(randomComplex(type, seed + 1));
  // Every 8th y equals x, so that compare EQ sees equal values.
  for (int64_t i = 0; i < kCount; i += 8)
    args[1].setComplex(i, args[0].getComplex(i));
  return args;
}

const PrimitiveType kTypes[] = {PrimitiveType::C64, PrimitiveType::C128};

std::string partOf(PrimitiveType type) {
  return type == PrimitiveType::C64 ? "f32" : "f64";
}

std::string shape(const std::string &t) {
  return t + "[" + std::to_string(kCount) + "]";
}

TEST(ComplexTest, ArithmeticMatchesTheEvaluatorBitForBit) {
  for (PrimitiveType type : kTypes) {
    std::string t(primitiveTypeName(type)), p = partOf(type);
    std::vector<Output> outputs = {
        {"add", shape(t), "add(%x, %y)", 0},
        {"sub", shape(t), "subtract(%x, %y)", 0},
        {"mul", shape(t), "multiply(%x, %y)", 0},
        {"div", shape(t), "divide(%x, %y)", 0},
        {"neg", shape(t), "negate(%x)", 0},
        {"re", shape(p), "real(%x)", 0},
        {"im", shape(p), "imag(%x)", 0},
        {"eq", shape("pred"), "compare(%x, %y), direction=EQ", 0},
        {"ne", shape("pred"), "compare(%x, %y), direction=NE", 0},
        {"abs", shape(p), "abs(%x)", 0},
        {"sign", shape(t), "sign(%x)", 0},
    };
    for (uint64_t seed : {1, 2}) {
      for (Target target : {Target::Cpu, Target::Gpu}) {
        SCOPED_TRACE(t + " seed " + std::to_string(seed) +
                     (target == Target::Cpu ? " CPU launch" : " GPU launch"));
        EXPECT_EQ(check(type, outputs, arguments(type, seed * 10), target), "");
      }
    }
  }
}

TEST(ComplexTest, TranscendentalFunctionsMatchTheEvaluatorBitForBit) {
  for (PrimitiveType type : kTypes) {
    std::string t(primitiveTypeName(type));
    std::vector<Output> outputs;
    for (const char *op :
         {"exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt",
          "rsqrt", "tanh", "sine", "cosine", "tan", "logistic"})
      outputs.push_back({std::string(op) == "exponential-minus-one" ? "expm1"
                         : std::string(op) == "log-plus-one"        ? "log1p"
                                                                    : op,
                         shape(t), std::string(op) + "(%x)", 0});
    outputs.push_back({"pow", shape(t), "power(%x, %y)", 0});
    SCOPED_TRACE(t);
    EXPECT_EQ(check(type, outputs, arguments(type, 7), Target::Cpu), "");
  }
}

TEST(ComplexTest, ConvertsMatchTheEvaluator) {
  std::string n = std::to_string(kCount);
  // Reals of every kind to both complex types, and between them.
  std::string text = "HloModule m\nENTRY e {\n"
                     "  %f = f32[" +
                     n +
                     "] parameter(0)\n"
                     "  %d = f64[" +
                     n +
                     "] parameter(1)\n"
                     "  %s = s64[" +
                     n +
                     "] parameter(2)\n"
                     "  %u = u64[" +
                     n +
                     "] parameter(3)\n"
                     "  %h = bf16[" +
                     n +
                     "] parameter(4)\n"
                     "  %p = pred[" +
                     n +
                     "] parameter(5)\n"
                     "  %z = c64[" +
                     n + "] parameter(6)\n";
  std::string names, shapes;
  int k = 0;
  for (const char *to : {"c64", "c128"})
    for (const char *from : {"f", "d", "s", "u", "h", "p", "z"}) {
      std::string name = "o" + std::to_string(k++);
      text +=
          "  %" + name + " = " + to + "[" + n + "] convert(%" + from + ")\n";
      names += (names.empty() ? "%" : ", %") + name;
      shapes += (shapes.empty() ? "" : ", ") + std::string(to) + "[" + n + "]";
    }
  // c128 -> c64 rounds each part.
  text += "  %w = c128[" + n + "] convert(%z)\n  %back = c64[" + n +
          "] convert(%w)\n  %i = c128[" + n +
          "] multiply(%w, %w)\n"
          "  %narrow = c64[" +
          n + "] convert(%i)\n";
  names += ", %back, %narrow";
  shapes += ", c64[" + n + "], c64[" + n + "]";
  text += "  ROOT %r = (" + shapes + ") tuple(" + names + ")\n}\n";
  SCOPED_TRACE(text);
  auto module = parseTestModule(text);
  ASSERT_TRUE(module);
  std::vector<Literal> args;
  for (HloInstruction *param : module->entry()->parameters())
    args.push_back(randomLiteral(param->shape(), 40 + param->parameterNumber(),
                                 /*specials=*/true));
  // Integers beyond f32's and f64's precision, and u64 past INT64_MAX.
  std::mt19937_64 rng(3);
  for (int64_t i = 0; i < kCount; i += 3) {
    args[2].setBits(i, rng());
    args[3].setBits(i, rng());
  }
  args[6] = randomComplex(PrimitiveType::C64, 5);
  EXPECT_EQ(checkBothLaunches(*module, args), "");
}

TEST(ComplexTest, DataMovementAndConstants) {
  // Broadcast, reshape, transpose, slice, concatenate, pad, select,
  // dynamic-slice, reverse, copy and constants of c64 and c128 in one
  // fusion with real ops around them; a non-default layout on an input.
  for (const char *t : {"c64", "c128"}) {
    std::string p = std::string(t) == "c64" ? "f32" : "f64";
    std::string T(t);
    std::string text = "HloModule m\nENTRY e {\n"
                       "  %x = " +
                       T +
                       "[4,6]{0,1} parameter(0)\n"
                       "  %y = " +
                       T +
                       "[6] parameter(1)\n"
                       "  %r = " +
                       p +
                       "[4,6] parameter(2)\n"
                       "  %i = s32[] parameter(3)\n"
                       "  %c = " +
                       T +
                       "[] constant((2, -0.5))\n"
                       "  %v = " +
                       T +
                       "[3] constant({(1, 2), (-0, inf), (3.5, -7)})\n"
                       "  %bc = " +
                       T +
                       "[4,6] broadcast(%c), dimensions={}\n"
                       "  %by = " +
                       T +
                       "[4,6] broadcast(%y), dimensions={1}\n"
                       "  %t = " +
                       T +
                       "[6,4] transpose(%x), dimensions={1,0}\n"
                       "  %rs = " +
                       T +
                       "[4,6] reshape(%t)\n"
                       "  %sl = " +
                       T +
                       "[2,6] slice(%x), slice={[1:3], [0:6]}\n"
                       "  %pd = " +
                       T +
                       "[4,6] pad(%sl, %c), padding=1_1x0_0\n"
                       "  %vb = " +
                       T +
                       "[4,3] broadcast(%v), dimensions={1}\n"
                       "  %cc = " +
                       T +
                       "[4,9] concatenate(%x, %vb), dimensions={1}\n"
                       "  %ds = " +
                       T +
                       "[4,6] dynamic-slice(%cc, %i, %i), "
                       "dynamic_slice_sizes={4,6}\n"
                       "  %cx = " +
                       T +
                       "[4,6] complex(%r, %r)\n"
                       "  %gt = pred[4,6] compare(%r, %r), direction=GE\n"
                       "  %se = " +
                       T +
                       "[4,6] select(%gt, %rs, %cx)\n"
                       "  %rv = " +
                       T +
                       "[4,6] reverse(%by), dimensions={0,1}\n"
                       "  %m1 = " +
                       T +
                       "[4,6] multiply(%bc, %se)\n"
                       "  %a1 = " +
                       T +
                       "[4,6] add(%m1, %pd)\n"
                       "  %a2 = " +
                       T +
                       "[4,6] subtract(%a1, %ds)\n"
                       "  %a3 = " +
                       T +
                       "[4,6] divide(%a2, %rv)\n"
                       "  %re = " +
                       p +
                       "[4,6] real(%a3)\n"
                       "  %cp = " +
                       T +
                       "[4,6]{0,1} copy(%a3)\n"
                       "  ROOT %out = (" +
                       T + "[4,6], " + p + "[4,6], " + T + "[4,6]{0,1}, " + T +
                       "[4,9]) tuple(%a3, %re, %cp, %cc)\n}\n";
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    std::vector<Literal> args = randomArguments(*module, 11);
    args[0] = Literal(module->entry()->parameters()[0]->shape());
    args[1] = Literal(module->entry()->parameters()[1]->shape());
    std::mt19937_64 rng(5);
    bool c64 = T == "c64";
    for (int64_t i = 0; i < 24; ++i)
      args[0].setComplex(i, {randomPart(rng, c64), randomPart(rng, c64)});
    for (int64_t i = 0; i < 6; ++i)
      args[1].setComplex(i, {randomPart(rng, c64), randomPart(rng, c64)});
    for (int32_t start : {0, 2, 7}) {
      args[3].setInt(0, start);
      EXPECT_EQ(checkBothLaunches(*module, args), "") << "start " << start;
    }
  }
}

TEST(ComplexTest, ReductionsMatchTheEvaluatorBitForBit) {
  // Sums of rows, of columns and of everything, a product, and a variadic
  // reduce: in the kernels' order (checkBothLaunches asks the evaluator for
  // it), bit for bit.
  for (const char *t : {"c64", "c128"}) {
    std::string T(t);
    std::string text =
        "HloModule m\nadd {\n  %a = " + T + "[] parameter(0)\n  %b = " + T +
        "[] parameter(1)\n  ROOT %s = " + T +
        "[] add(%a, %b)\n}\nmul {\n  %a = " + T +
        "[] parameter(0)\n  %b = " + T + "[] parameter(1)\n  ROOT %s = " + T +
        "[] multiply(%a, %b)\n}\nENTRY e {\n"
        "  %x = " +
        T +
        "[16,300] parameter(0)\n"
        "  %z = " +
        T +
        "[] constant((0, 0))\n"
        "  %one = " +
        T +
        "[] constant((1, 0))\n"
        "  %rows = " +
        T +
        "[16] reduce(%x, %z), dimensions={1}, to_apply=add\n"
        "  %cols = " +
        T +
        "[300] reduce(%x, %z), dimensions={0}, to_apply=add\n"
        "  %all = " +
        T +
        "[] reduce(%x, %z), dimensions={0,1}, to_apply=add\n"
        "  %prod = " +
        T +
        "[16] reduce(%x, %one), dimensions={1}, to_apply=mul\n"
        "  ROOT %t = (" +
        T + "[16], " + T + "[300], " + T + "[], " + T +
        "[16]) tuple(%rows, %cols, %all, %prod)\n}\n";
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    Literal x(Shape(T == "c64" ? PrimitiveType::C64 : PrimitiveType::C128,
                    {16, 300}));
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> unit(-3.0, 3.0);
    for (int64_t i = 0; i < x.elementCount(); ++i)
      x.setComplex(i, {unit(rng), unit(rng)});
    // A few specials: a NaN row, an infinite column.
    x.setComplex(5 * 300 + 7, {std::nan(""), 0});
    x.setComplex(9 * 300 + 11, {INFINITY, -INFINITY});
    std::vector<Literal> args;
    args.push_back(std::move(x));
    EXPECT_EQ(checkBothLaunches(*module, args), "");
  }
}

/// A random fusion of complex and real ops over x, y (complex) and r, s
/// (their part type), shape [4,6]: each new value an op on earlier ones,
/// the last few values the outputs.
std::string randomMixedModule(PrimitiveType type, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string t(primitiveTypeName(type)), p = partOf(type);
  std::string ct = t + "[4,6]", rt = p + "[4,6]";
  std::vector<std::string> complexValues = {"%x", "%y"},
                           realValues = {"%r", "%s"};
  std::string text =
      "HloModule m\nENTRY e {\n  %x = " + ct + " parameter(0)\n  %y = " + ct +
      " parameter(1)\n"
      "  %r = " +
      rt + " parameter(2)\n  %s = " + rt + " parameter(3)\n  %k = " + t +
      "[] constant((0.5, -2))\n"
      "  %kb = " +
      ct + " broadcast(%k), dimensions={}\n";
  complexValues.push_back("%kb");
  auto pick = [&](const std::vector<std::string> &v) {
    return v[rng() % v.size()];
  };
  for (int i = 0; i < 24; ++i) {
    std::string name = "%v" + std::to_string(i);
    switch (rng() % 12) {
    case 0:
      text += "  " + name + " = " + ct + " complex(" + pick(realValues) + ", " +
              pick(realValues) + ")\n";
      complexValues.push_back(name);
      break;
    case 1:
      text += "  " + name + " = " + rt + " real(" + pick(complexValues) + ")\n";
      realValues.push_back(name);
      break;
    case 2:
      text += "  " + name + " = " + rt + " imag(" + pick(complexValues) + ")\n";
      realValues.push_back(name);
      break;
    case 3: {
      // On a real GPU (TESSEL_TEST_BACKEND=nvptx) abs is libdevice's
      // hypot, within 3 ulp, not bit-exact: the part's square instead.
      const char *backend = std::getenv("TESSEL_TEST_BACKEND");
      bool gpu = backend && std::string(backend) == "nvptx";
      std::string z = pick(complexValues);
      text += gpu ? "  " + name + "r = " + rt + " real(" + z + ")\n  " + name +
                        " = " + rt + " multiply(" + name + "r, " + name + "r)\n"
                  : "  " + name + " = " + rt + " abs(" + z + ")\n";
      realValues.push_back(name);
      break;
    }
    case 4:
    case 5:
    case 6:
    case 7: {
      const char *ops[] = {"add", "subtract", "multiply", "divide"};
      text += "  " + name + " = " + ct + " " + ops[rng() % 4] + "(" +
              pick(complexValues) + ", " + pick(complexValues) + ")\n";
      complexValues.push_back(name);
      break;
    }
    case 8:
      text +=
          "  " + name + " = " + ct + " negate(" + pick(complexValues) + ")\n";
      complexValues.push_back(name);
      break;
    case 9: {
      std::string a = pick(complexValues);
      text += "  " + name + "p = pred[4,6] compare(" + a + ", " +
              pick(complexValues) +
              "), direction=" + (rng() & 1 ? "EQ" : "NE") + "\n  " + name +
              " = " + ct + " select(" + name + "p, " + a + ", " +
              pick(complexValues) + ")\n";
      complexValues.push_back(name);
      break;
    }
    case 10: {
      const char *ops[] = {"add", "multiply", "maximum"};
      text += "  " + name + " = " + rt + " " + ops[rng() % 3] + "(" +
              pick(realValues) + ", " + pick(realValues) + ")\n";
      realValues.push_back(name);
      break;
    }
    default:
      text += "  " + name + " = " + ct + " transpose(" + pick(complexValues) +
              "), dimensions={0,1}\n";
      complexValues.push_back(name);
      break;
    }
  }
  text += "  ROOT %out = (" + ct + ", " + rt + ", " + ct + ") tuple(" +
          complexValues.back() + ", " + realValues.back() + ", " +
          complexValues[complexValues.size() / 2] + ")\n}\n";
  return text;
}

TEST(ComplexTest, RandomFusionsOfComplexAndRealOps) {
  for (PrimitiveType type : kTypes)
    for (uint64_t seed = 0; seed < 12; ++seed) {
      std::string text = randomMixedModule(type, seed);
      SCOPED_TRACE(text);
      auto module = parseTestModule(text);
      ASSERT_TRUE(module);
      std::vector<Literal> args;
      std::mt19937_64 rng(seed + 100);
      bool c64 = type == PrimitiveType::C64;
      for (int k = 0; k < 2; ++k) {
        Literal z(Shape(type, {4, 6}));
        for (int64_t i = 0; i < 24; ++i)
          z.setComplex(i, {randomPart(rng, c64), randomPart(rng, c64)});
        args.push_back(std::move(z));
      }
      for (int k = 0; k < 2; ++k)
        args.push_back(randomLiteral(
            Shape(c64 ? PrimitiveType::F32 : PrimitiveType::F64, {4, 6}),
            seed * 7 + k, /*specials=*/true));
      EXPECT_EQ(checkBothLaunches(*module, args), "");
    }
}

TEST(ComplexTest, BitcastConvertsMoveTheBits) {
  // To and from the interleaved pair's bytes: the real part's bits low, as
  // in memory; between widths through an i64 (c64) or i128 (c128).
  std::string text = R"(HloModule m
ENTRY e {
  %x = c128[64] parameter(0)
  %a = f64[64,2] bitcast-convert(%x)
  %b = s32[64,4] bitcast-convert(%x)
  %c = c128[64] bitcast-convert(%b)
  %y = c64[64] parameter(1)
  %e = u64[64] bitcast-convert(%y)
  %f = c64[64] bitcast-convert(%e)
  %g = f64[64] bitcast-convert(%y)
  %h = u8[64,8] bitcast-convert(%y)
  %k = c64[64] bitcast-convert(%h)
  %p = f32[64,2] parameter(2)
  %q = c64[64] bitcast-convert(%p)
  ROOT %r = (f64[64,2], s32[64,4], c128[64], u64[64], c64[64], f64[64], u8[64,8], c64[64], c64[64]) tuple(%a, %b, %c, %e, %f, %g, %h, %k, %q)
}
)";
  auto module = parseTestModule(text);
  ASSERT_TRUE(module);
  EXPECT_EQ(checkBothLaunches(*module, randomArguments(*module, 21)), "");
}

TEST(ComplexTest, RealAndImagOfRealFloats) {
  // real of a float is itself, imag is +0 (the evaluator's zero bits).
  std::string text = R"(HloModule m
ENTRY e {
  %x = f32[64] parameter(0)
  %h = bf16[64] parameter(1)
  %q = f8e5m2[64] parameter(2)
  %d = f64[64] parameter(3)
  %a = f32[64] real(%x)
  %b = f32[64] imag(%x)
  %c = bf16[64] real(%h)
  %e = bf16[64] imag(%h)
  %f = f8e5m2[64] imag(%q)
  %g = f8e5m2[64] real(%q)
  %k = f64[64] imag(%d)
  ROOT %r = (f32[64], f32[64], bf16[64], bf16[64], f8e5m2[64], f8e5m2[64], f64[64]) tuple(%a, %b, %c, %e, %f, %g, %k)
}
)";
  auto module = parseTestModule(text);
  ASSERT_TRUE(module);
  EXPECT_EQ(checkBothLaunches(*module, randomArguments(*module, 5)), "");
}

TEST(ComplexTest, UnsupportedOpsAreRefusedWithTheirLine) {
  struct Case {
    const char *instruction;
    const char *message;
  };
  const Case cases[] = {
      {"%o = pred[4] compare(%x, %x), direction=LT",
       "compare of c64 has only directions EQ and NE"},
      {"%o = f32[4] convert(%x)", "convert from c64 to f32 is not supported"},
      {"%o = c64[4] maximum(%x, %x)", "maximum of c64 is not supported"},
      {"%o = c64[] dot(%x, %x), lhs_contracting_dims={0}, "
       "rhs_contracting_dims={0}",
       "dot of c64 is not supported"},
  };
  for (const Case &c : cases) {
    std::string text = "HloModule m\nENTRY e {\n  %x = c64[4] parameter(0)\n"
                       "  ROOT " +
                       std::string(c.instruction) + "\n}\n";
    auto module = parseHloModule(text);
    ASSERT_TRUE(module) << module.error().message;
    Expected<std::shared_ptr<Executable>> exe =
        Executable::compile(**module, CompileOptions{});
    ASSERT_FALSE(exe) << text;
    EXPECT_NE(exe.error().message.find(c.message), std::string::npos)
        << exe.error().message;
    EXPECT_NE(exe.error().message.find("cannot compile %o"), std::string::npos)
        << exe.error().message;
    ASSERT_TRUE(exe.error().span) << exe.error().message;
    EXPECT_EQ(exe.error().span->line, 4);
  }
}

TEST(ComplexTest, TheGpuRefusesTheTranscendentalFunctions) {
  std::string text = "HloModule m\nENTRY e {\n  %x = c64[4] parameter(0)\n"
                     "  %a = c64[4] multiply(%x, %x)\n"
                     "  ROOT %e = c64[4] exponential(%a)\n}\n";
  auto module = parseTestModule(text);
  ASSERT_TRUE(module);
  CompileOptions options;
  options.backend = Backend::Nvptx;
  Expected<std::string> ptx = emitHloModule(*module, EmitKind::Ptx, options);
  ASSERT_FALSE(ptx);
  EXPECT_NE(ptx.error().message.find("exponential of c64 is not supported "
                                     "on the GPU"),
            std::string::npos)
      << ptx.error().message;
  ASSERT_TRUE(ptx.error().span) << ptx.error().message;
  EXPECT_EQ(ptx.error().span->line, 5); // the exponential's
  EXPECT_EQ(ptx.error().message.find("note:"), std::string::npos)
      << ptx.error().message;
  // The arithmetic compiles to PTX.
  std::string arithmetic =
      "HloModule m\nENTRY e {\n  %x = c128[4] parameter(0)\n"
      "  %a = c128[4] divide(%x, %x)\n  %b = f64[4] abs(%a)\n"
      "  ROOT %t = (c128[4], f64[4]) tuple(%a, %b)\n}\n";
  module = parseTestModule(arithmetic);
  ASSERT_TRUE(module);
  Expected<std::string> ok = emitHloModule(*module, EmitKind::Ptx, options);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_NE(ok->find(".entry kernel_0"), std::string::npos);
}

TEST(ComplexTest, ComparisonSeesBothParts) {
  // The check of the tests above compares the imaginary part too.
  for (PrimitiveType type : kTypes) {
    Literal a(Shape(type, {2})), b(Shape(type, {2}));
    a.setComplex(0, {1.0, 2.0});
    b.setComplex(0, {1.0, 2.0});
    a.setComplex(1, {1.0, 2.0});
    double next = type == PrimitiveType::C64
                      ? static_cast<double>(std::nextafter(2.0f, 3.0f))
                      : std::nextafter(2.0, 3.0);
    b.setComplex(1, {1.0, next});
    LiteralComparison c = compareLiterals(a, b);
    EXPECT_EQ(c.differing, 1);
    EXPECT_EQ(c.maxUlp, 1u);
    EXPECT_EQ(compareLiterals(a, b, ComparisonBound{1, 0}).failing, 0);
  }
}

} // namespace
