//===- InputSlicesEmitterTest.cpp - The input-slices emitter --------------===//
//
// Input slices (every output a slice of one array): which fusions get the
// emitter and why not, its map by enumeration (every element of the array
// read once, so every slice element written once), and random multi-slice
// fusions with producers against the evaluator with the CPU's and the GPU's
// launch.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Indexing/BruteForce.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>

using namespace tessel;

namespace {

std::string randomLayout(std::mt19937 &rng, size_t rank) {
  std::vector<int64_t> minorToMajor(rank);
  std::iota(minorToMajor.begin(), minorToMajor.end(), 0);
  std::shuffle(minorToMajor.begin(), minorToMajor.end(), rng);
  std::string layout = "{";
  for (size_t d = 0; d < rank; ++d)
    layout += (d ? "," : "") + std::to_string(minorToMajor[d]);
  return layout + "}";
}

/// Every element of `input` read by exactly one point of the launch, and
/// so every element of each of `slices` written once; "" when so.
std::string
checkInputSlicesMap(const HloInstruction &input,
                    const std::vector<const HloInstruction *> &slices,
                    Target target, mlir::MLIRContext *context) {
  LaunchConfig config = getInputSlicesLaunch(input, target);
  IndexingMap map = getInputSlicesMap(input, config, context);
  Expected<std::vector<DomainPoint>> points = enumerateDomain(map, 1 << 22);
  if (!points)
    return points.error().message;
  const std::vector<int64_t> &dims = input.shape().dims;
  std::map<std::vector<int64_t>, int> reads;
  std::vector<std::map<std::vector<int64_t>, int>> writes(slices.size());
  for (const DomainPoint &point : *points) {
    std::vector<int64_t> index(point.results.begin(), point.results.end());
    for (size_t d = 0; d < index.size(); ++d)
      if (index[d] < 0 || index[d] >= dims[d])
        return "an index outside the array";
    ++reads[index];
    // The emitter's rule: in slice k when start <= i < limit and
    // (i - start) % stride == 0, at (i - start) / stride.
    for (size_t k = 0; k < slices.size(); ++k) {
      const std::vector<SliceDim> &slice = slices[k]->attributes().slice;
      std::vector<int64_t> at;
      bool inside = true;
      for (size_t d = 0; d < index.size(); ++d) {
        int64_t rel = index[d] - slice[d].start;
        inside &= index[d] >= slice[d].start && index[d] < slice[d].limit &&
                  rel % slice[d].stride == 0;
        at.push_back(rel / slice[d].stride);
      }
      if (inside)
        ++writes[k][at];
    }
  }
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  for (const auto &[index, count] : reads)
    if (count != 1)
      return "an element is read " + std::to_string(count) + " times";
  if (static_cast<int64_t>(reads.size()) != n)
    return std::to_string(reads.size()) + " of " + std::to_string(n) +
           " elements are read";
  for (size_t k = 0; k < slices.size(); ++k) {
    int64_t elements = 1;
    for (int64_t d : slices[k]->shape().dims)
      elements *= d;
    if (static_cast<int64_t>(writes[k].size()) != elements)
      return "slice " + std::to_string(k) + ": " +
             std::to_string(writes[k].size()) + " of " +
             std::to_string(elements) + " elements are written";
    for (const auto &[index, count] : writes[k]) {
      if (count != 1)
        return "slice " + std::to_string(k) + ": an element is written " +
               std::to_string(count) + " times";
      for (size_t d = 0; d < index.size(); ++d)
        if (index[d] < 0 || index[d] >= slices[k]->shape().dims[d])
          return "slice " + std::to_string(k) + ": an index outside it";
    }
  }
  return "";
}

/// A random array (an add of two parameters, or a negated one) in a random
/// layout and 2 to 4 random slices of it (strides too, empty ones
/// sometimes), each in a random layout: the ROOT tuple of the slices.
std::string randomInputSlices(std::mt19937 &rng, const char *type) {
  int rank = 1 + static_cast<int>(rng() % 4);
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d)
    dims.push_back(1 + rng() % (rank > 2 ? 9 : 70));
  std::string layout = randomLayout(rng, rank);
  std::string body = "  %p0 = " + shapeText(type, dims) + " parameter(0)\n";
  if (rng() % 2) {
    body += "  %p1 = " + shapeText(type, dims) + " parameter(1)\n";
    body += "  %x = " + shapeText(type, dims, layout) + " add(%p0, %p1)\n";
  } else {
    body += "  %x = " + shapeText(type, dims, layout) + " negate(%p0)\n";
  }
  int slices = 2 + static_cast<int>(rng() % 3);
  std::string shapes, names;
  for (int k = 0; k < slices; ++k) {
    std::vector<int64_t> out;
    std::string bounds;
    for (int d = 0; d < rank; ++d) {
      int64_t start = rng() % dims[d];
      int64_t limit = start + rng() % (dims[d] - start + 1);
      if (rng() % 3 == 0)
        limit = dims[d];
      if (rng() % 4 == 0)
        start = 0;
      int64_t stride = rng() % 3 == 0 ? 1 + rng() % 3 : 1;
      out.push_back(limit > start ? (limit - start + stride - 1) / stride : 0);
      bounds += std::string(d ? ", " : "") + "[" + std::to_string(start) + ":" +
                std::to_string(std::max(start, limit)) +
                (stride == 1 ? "" : ":" + std::to_string(stride)) + "]";
    }
    std::string shape = shapeText(type, out, randomLayout(rng, rank));
    std::string name = "%s" + std::to_string(k);
    body +=
        "  " + name + " = " + shape + " slice(%x), slice={" + bounds + "}\n";
    shapes += (k ? ", " : "") + shape;
    names += (k ? ", " : "") + name;
  }
  body += "  ROOT %t = (" + shapes + ") tuple(" + names + ")\n";
  return "HloModule m\nENTRY e {\n" + body + "}\n";
}

/// The analysis of an ENTRY with `body`; the module lives as long as the
/// test (the analysis points into it).
FusionAnalysis analyze(const std::string &body) {
  static std::vector<std::unique_ptr<HloModule>> modules;
  modules.push_back(parseTestModule("HloModule m\nENTRY e {\n" + body + "}\n"));
  return modules.back() ? analyzeFusion(*modules.back()->entry())
                        : FusionAnalysis{};
}

TEST(InputSlicesHeroTest, ChosenAndRejectedWithReasons) {
  FusionAnalysis chosen =
      analyze("  %p = f32[8,6] parameter(0)\n"
              "  %x = f32[8,6] exponential(%p)\n"
              "  %a = f32[3,6] slice(%x), slice={[0:3], [0:6]}\n"
              "  %b = f32[5,2] slice(%x), slice={[3:8], [1:5:2]}\n"
              "  ROOT %t = (f32[3,6], f32[5,2]) tuple(%a, %b)\n");
  EXPECT_EQ(chosen.kind, EmitterKind::InputSlices);
  ASSERT_NE(chosen.hero, nullptr);
  EXPECT_EQ(chosen.hero->name(), "x");
  EXPECT_NE(chosen.reason.find("the 2 outputs are slices of %x"),
            std::string::npos)
      << chosen.reason;
  // Slices of two arrays: the loop emitter, with the reason.
  FusionAnalysis rejected =
      analyze("  %p = f32[8,6] parameter(0)\n  %q = f32[8,6] parameter(1)\n"
              "  %a = f32[3,6] slice(%p), slice={[0:3], [0:6]}\n"
              "  %b = f32[3,6] slice(%q), slice={[0:3], [0:6]}\n"
              "  ROOT %t = (f32[3,6], f32[3,6]) tuple(%a, %b)\n");
  EXPECT_EQ(rejected.kind, EmitterKind::Loop);
  bool said = false;
  for (const std::string &why : rejected.rejected)
    said |=
        why.find("not input slices: %b slices %q, not %p") != std::string::npos;
  EXPECT_TRUE(said) << testing::PrintToString(rejected.rejected);
  // One slice: the loop emitter reads only its elements.
  EXPECT_EQ(analyze("  %p = f32[8,6] parameter(0)\n"
                    "  ROOT %a = f32[3,6] slice(%p), slice={[0:3], [0:6]}\n")
                .kind,
            EmitterKind::Loop);
}

TEST(InputSlicesEmitterTest, MapsByEnumeration) {
  mlir::MLIRContext context;
  std::mt19937 rng(41);
  for (int trial = 0; trial < 60; ++trial) {
    std::string text = randomInputSlices(rng, "f32");
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    const HloInstruction *x = module->entry()->instruction("x");
    ASSERT_NE(x, nullptr);
    std::vector<const HloInstruction *> slices(
        module->entry()->root()->operands().begin(),
        module->entry()->root()->operands().end());
    for (Target target : {Target::Cpu, Target::Gpu})
      EXPECT_EQ(checkInputSlicesMap(*x, slices, target, &context), "") << text;
  }
}

TEST(InputSlicesEmitterTest, RandomSlicesMatchTheEvaluator) {
  std::mt19937 rng(43);
  const char *types[] = {"f32", "bf16", "s8", "f16", "s32"};
  for (int trial = 0; trial < 30; ++trial) {
    std::string text = randomInputSlices(rng, types[trial % 5]);
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    EXPECT_EQ(analyzeFusion(*module->entry()).kind, EmitterKind::InputSlices);
    EXPECT_EQ(checkBothLaunches(*module, randomArguments(*module, 500 + trial)),
              "");
  }
}

TEST(InputSlicesEmitterTest, OneKernelInAFusion) {
  // In a fusion called from ENTRY: one kernel writes both slices (of
  // different dims), and the results match the evaluator.
  auto module = parseTestModule(R"(HloModule m
fused {
  p = f32[40,30] parameter(0)
  x = f32[40,30] sqrt(p)
  a = f32[10,30] slice(x), slice={[0:10], [0:30]}
  b = f32[30,15] slice(x), slice={[10:40], [0:30:2]}
  ROOT t = (f32[10,30], f32[30,15]) tuple(a, b)
}
ENTRY e {
  p0 = f32[40,30] parameter(0)
  ROOT f = (f32[10,30], f32[30,15]) fusion(p0), kind=kInput, calls=fused
}
)");
  ASSERT_TRUE(module);
  EXPECT_EQ(checkBothLaunches(*module, randomArguments(*module, 7)), "");
  Expected<std::string> explain =
      emitHloModule(*module, EmitKind::Explain, CompileOptions{});
  ASSERT_TRUE(explain) << explain.error().message;
  EXPECT_NE(explain->find("emitter: input slices"), std::string::npos)
      << *explain;
  EXPECT_EQ(explain->find("kernel_1"), std::string::npos) << *explain;
}

} // namespace
