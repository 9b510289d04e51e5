//===- ConcatenateEmitterTest.cpp - The concatenate emitter ---------------===//
//
// The concatenate hero: which fusions get it and why not, its maps by
// enumeration (every output element written by exactly one operand's loop,
// once), and random concatenates with producers and an epilogue against
// the evaluator with the CPU's and the GPU's launch.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Indexing/BruteForce.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

using namespace tessel;

namespace {

/// Every element of `concatenate`'s output written by exactly one
/// operand's loop, once, within the operand's dims; "" when so.
std::string checkConcatenateMaps(const HloInstruction &concatenate,
                                 Target target, mlir::MLIRContext *context) {
  LaunchConfig config = getConcatenateLaunch(concatenate, target);
  int64_t dim = concatenate.dimensions().front(), offset = 0;
  std::map<std::vector<int64_t>, int> hits;
  for (int64_t k = 0; k < concatenate.operandCount(); ++k) {
    const Shape &operand = concatenate.operand(k)->shape();
    IndexingMap map = getConcatenateOperandMap(concatenate, k, config, context);
    Expected<std::vector<DomainPoint>> points = enumerateDomain(map, 1 << 22);
    if (!points)
      return points.error().message;
    for (const DomainPoint &point : *points) {
      std::vector<int64_t> index(point.results.begin(), point.results.end());
      for (size_t d = 0; d < index.size(); ++d)
        if (index[d] < 0 || index[d] >= operand.dims[d])
          return "operand " + std::to_string(k) + ": an index outside it";
      index[dim] += offset;
      ++hits[index];
    }
    offset += operand.dims[dim];
  }
  int64_t n = 1;
  for (int64_t d : concatenate.shape().dims)
    n *= d;
  for (const auto &[index, count] : hits)
    if (count != 1)
      return "an output element is written " + std::to_string(count) + " times";
  if (static_cast<int64_t>(hits.size()) != n)
    return std::to_string(hits.size()) + " of " + std::to_string(n) +
           " output elements are written";
  return "";
}

/// A random concatenate of 1 to 4 operands (each a negated parameter),
/// along a random dim, with an epilogue that reads another parameter at
/// the output index, in a random output layout.
std::string randomConcatenate(std::mt19937 &rng, const char *type) {
  int rank = 1 + static_cast<int>(rng() % 4);
  int64_t dim = static_cast<int64_t>(rng() % rank);
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d)
    dims.push_back(1 + rng() % (rank > 2 ? 9 : 70));
  int operands = 1 + static_cast<int>(rng() % 4);
  std::vector<int64_t> minorToMajor(rank);
  std::iota(minorToMajor.begin(), minorToMajor.end(), 0);
  std::shuffle(minorToMajor.begin(), minorToMajor.end(), rng);
  std::string layout = "{";
  for (int d = 0; d < rank; ++d)
    layout += (d ? "," : "") + std::to_string(minorToMajor[d]);
  layout += "}";
  std::string body, list;
  std::vector<int64_t> out = dims;
  out[dim] = 0;
  for (int k = 0; k < operands; ++k) {
    std::vector<int64_t> d = dims;
    d[dim] = rng() % 5 == 0 ? 0 + rng() % 2 : 1 + rng() % 40;
    out[dim] += d[dim];
    std::string p = "%p" + std::to_string(k), n = "%n" + std::to_string(k);
    body += "  " + p + " = " + shapeText(type, d) + " parameter(" +
            std::to_string(k) + ")\n  " + n + " = " + shapeText(type, d) +
            " negate(" + p + ")\n";
    list += (k ? ", " : "") + n;
  }
  if (out[dim] == 0)
    return "";
  body += "  %c = " + shapeText(type, out, layout) + " concatenate(" + list +
          "), dimensions={" + std::to_string(dim) + "}\n";
  body += "  %q = " + shapeText(type, out, layout) + " parameter(" +
          std::to_string(operands) + ")\n";
  body += "  ROOT %a = " + shapeText(type, out, layout) + " add(%c, %q)\n";
  return "HloModule m\nENTRY e {\n" + body + "}\n";
}

TEST(ConcatenateHeroTest, ChosenWithAnEpilogueAndRejectedWithReasons) {
  auto analyze = [](const std::string &body) {
    auto module = parseTestModule("HloModule m\nENTRY e {\n" + body + "}\n");
    return module ? analyzeFusion(*module->entry()) : FusionAnalysis{};
  };
  FusionAnalysis chosen =
      analyze("  %a = f32[4,5] parameter(0)\n  %b = f32[4,3] parameter(1)\n"
              "  %c = f32[4,8] concatenate(%a, %b), dimensions={1}\n"
              "  ROOT %e = f32[4,8] exponential(%c)\n");
  EXPECT_EQ(chosen.kind, EmitterKind::Concatenate);
  EXPECT_NE(chosen.reason.find("concatenates 2 operands along dim 1"),
            std::string::npos);
  // Read at another index than its own (a transpose after it): the loop
  // emitter, with the reason.
  FusionAnalysis rejected =
      analyze("  %a = f32[4,5] parameter(0)\n  %b = f32[4,3] parameter(1)\n"
              "  %c = f32[4,8] concatenate(%a, %b), dimensions={1}\n"
              "  ROOT %t = f32[8,4] transpose(%c), dimensions={1,0}\n");
  EXPECT_EQ(rejected.kind, EmitterKind::Loop);
  bool said = false;
  for (const std::string &why : rejected.rejected)
    said |=
        why.find("%c is not a concatenate hero: %t reads") != std::string::npos;
  EXPECT_TRUE(said) << testing::PrintToString(rejected.rejected);
}

TEST(ConcatenateEmitterTest, MapsByEnumeration) {
  mlir::MLIRContext context;
  std::mt19937 rng(31);
  int checked = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::string text = randomConcatenate(rng, "f32");
    if (text.empty())
      continue;
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    const HloInstruction *c = module->entry()->instruction("c");
    ASSERT_NE(c, nullptr);
    for (Target target : {Target::Cpu, Target::Gpu})
      EXPECT_EQ(checkConcatenateMaps(*c, target, &context), "") << text;
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

TEST(ConcatenateEmitterTest, RandomConcatenatesMatchTheEvaluator) {
  std::mt19937 rng(37);
  const char *types[] = {"f32", "bf16", "s8", "f16", "s32"};
  int checked = 0;
  for (int trial = 0; trial < 30; ++trial) {
    std::string text = randomConcatenate(rng, types[trial % 5]);
    if (text.empty())
      continue;
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    EXPECT_EQ(analyzeFusion(*module->entry()).kind, EmitterKind::Concatenate);
    EXPECT_EQ(checkBothLaunches(*module, randomArguments(*module, 300 + trial)),
              "");
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

} // namespace
