//===- TransposeEmitterTest.cpp - Hero analysis and the transpose emitter -===//
//
// Which fusions go to the transpose emitter (and why the others do not),
// the seed's numbers, the two phases' maps checked by enumeration (every
// element read once, written once, through the same slot of the same
// block's tile), and compiled transposes of 2 to 5 dims, with producers and
// consumers, against the evaluator.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Indexing/BruteForce.h"
#include "tessel/Support/Npy.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <random>

using namespace tessel;

namespace {

const HloComputation &entry(const HloModule &module) { return *module.entry(); }

const char *kSeedTranspose = R"(
HloModule transpose
ENTRY fused {
  %p = f32[20,160,170] parameter(0)
  %e = f32[20,160,170] exponential(%p)
  %t = f32[170,160,20] transpose(%e), dimensions={2,1,0}
  ROOT %a = f32[170,160,20] abs(%t)
}
)";

TEST(HeroAnalysisTest, SeedTransposeGoesToTheTransposeEmitter) {
  auto module = parseTestModule(kSeedTranspose);
  ASSERT_TRUE(module);
  FusionAnalysis analysis = analyzeFusion(entry(*module));
  EXPECT_EQ(analysis.kind, EmitterKind::Transpose) << analysis.reason;
  ASSERT_TRUE(analysis.hero);
  EXPECT_EQ(analysis.hero->name(), "t");
  EXPECT_EQ(analysis.transpose.dims, (std::vector<int64_t>{20, 160, 170}));
  EXPECT_EQ(analysis.transpose.permutation, (std::vector<int64_t>{2, 1, 0}));
  TransposeLaunch launch =
      getTransposeLaunch(*analysis.hero, analysis.transpose, Target::Gpu);
  EXPECT_EQ(launch.config.numThreads, 128);
  EXPECT_EQ(launch.config.numBlocks, 960);
  EXPECT_EQ(launch.tileShape, (std::vector<int64_t>{32, 1, 33}));
  // On the CPU, tiles of 32 rows by 128 elements of the minor dim: 170
  // takes 2 of them, 20 one, so 2 * 160 blocks; the writing phase has a
  // thread per element of the tile (4096), the reading phase 512.
  TransposeLaunch cpu =
      getTransposeLaunch(*analysis.hero, analysis.transpose, Target::Cpu);
  EXPECT_EQ(cpu.config.numThreads, 4096);
  EXPECT_EQ(cpu.config.numBlocks, 320);
  EXPECT_EQ(cpu.tileShape, (std::vector<int64_t>{32, 1, 129}));
}

/// Elements of one byte get tiles of 64 rows by 256 columns on the CPU
/// (each output row of a tile a whole 64-byte line), read by 2048 threads
/// of 8 elements each and written by one thread per element; the others
/// keep 32x128, and the GPU 32x32.
TEST(HeroAnalysisTest, ByteElementsGetTilesOfWholeLinesOnTheCpu) {
  struct Case {
    const char *type;
    int64_t cpuThreads, cpuBlocks;
    std::vector<int64_t> cpuTile;
  };
  // [100,300] -> [300,100]: 100 rows become minor, 300 columns.
  const Case cases[] = {
      {"s8", 16384, 2 * 2, {64, 257}},   {"u8", 16384, 2 * 2, {64, 257}},
      {"pred", 16384, 2 * 2, {64, 257}}, {"bf16", 4096, 4 * 3, {32, 129}},
      {"f32", 4096, 4 * 3, {32, 129}},   {"s32", 4096, 4 * 3, {32, 129}},
  };
  for (const Case &c : cases) {
    std::string text = std::string("HloModule m\nENTRY e {\n  %p = ") + c.type +
                       "[100,300] parameter(0)\n  ROOT %t = " + c.type +
                       "[300,100] transpose(%p), dimensions={1,0}\n}\n";
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    FusionAnalysis analysis = analyzeFusion(entry(*module));
    ASSERT_EQ(analysis.kind, EmitterKind::Transpose) << analysis.reason;
    TransposeLaunch cpu =
        getTransposeLaunch(*analysis.hero, analysis.transpose, Target::Cpu);
    EXPECT_EQ(cpu.config.numThreads, c.cpuThreads);
    EXPECT_EQ(cpu.config.numBlocks, c.cpuBlocks);
    EXPECT_EQ(cpu.tileShape, c.cpuTile);
    TransposeLaunch gpu =
        getTransposeLaunch(*analysis.hero, analysis.transpose, Target::Gpu);
    EXPECT_EQ(gpu.config.numThreads, 128);
    EXPECT_EQ(gpu.config.numBlocks, 4 * 10);
    EXPECT_EQ(gpu.tileShape, (std::vector<int64_t>{32, 33}));
  }
}

TEST(HeroAnalysisTest, SeedGeluGoesToTheLoopEmitter) {
  Expected<std::string> text =
      readFileBytes(std::string(TESSEL_EXAMPLES) + "/gelu.hlo");
  ASSERT_TRUE(text);
  auto module = parseTestModule(*text);
  ASSERT_TRUE(module);
  for (const auto &computation : module->computations()) {
    FusionAnalysis analysis = analyzeFusion(*computation);
    EXPECT_EQ(analysis.kind, EmitterKind::Loop) << computation->name();
  }
}

/// The emitter analyzeFusion picks for a one-fusion module, and the first
/// rejection.
std::pair<EmitterKind, std::string> analyze(const std::string &body) {
  auto module = parseTestModule("HloModule m\nENTRY e {\n" + body + "\n}\n");
  if (!module)
    return {EmitterKind::Loop, "parse error"};
  FusionAnalysis analysis = analyzeFusion(entry(*module));
  return {analysis.kind,
          analysis.rejected.empty() ? "" : analysis.rejected.front()};
}

TEST(HeroAnalysisTest, RejectionsSayWhy) {
  auto [kind, why] = analyze(R"(
  %p = f32[64,32,48] parameter(0)
  ROOT %t = f32[32,64,48] transpose(%p), dimensions={1,0,2})");
  EXPECT_EQ(kind, EmitterKind::Loop);
  EXPECT_NE(why.find("does not move the minor physical dim"), std::string::npos)
      << why;

  std::tie(kind, why) = analyze(R"(
  %p = f32[4,600] parameter(0)
  ROOT %t = f32[600,4] transpose(%p), dimensions={1,0})");
  EXPECT_EQ(kind, EmitterKind::Loop);
  EXPECT_NE(why.find("at least 16"), std::string::npos) << why;

  std::tie(kind, why) = analyze(R"(
  %p = f32[64,48] parameter(0)
  %t = f32[48,64] transpose(%p), dimensions={1,0}
  ROOT %s = f32[48,32] slice(%t), slice={[0:48], [0:32]})");
  EXPECT_EQ(kind, EmitterKind::Loop);
  EXPECT_NE(why.find("not elementwise"), std::string::npos) << why;

  std::tie(kind, why) = analyze(R"(
  %p = f32[64,48] parameter(0)
  %t = f32[48,64] transpose(%p), dimensions={1,0}
  %q = f32[48,64] parameter(1)
  %u = f32[64,48] transpose(%q), dimensions={1,0}
  %v = f32[48,64] transpose(%u), dimensions={1,0}
  ROOT %a = f32[48,64] add(%t, %v))");
  EXPECT_EQ(kind, EmitterKind::Loop);
  EXPECT_NE(why.find("transposes that move the minor dim"), std::string::npos)
      << why;

  std::tie(kind, why) = analyze(R"(
  %p = f32[64,48] parameter(0)
  %t = f32[48,64] transpose(%p), dimensions={1,0}
  %n = f32[48,64] negate(%t)
  ROOT %r = (f32[48,64], f32[48,64]) tuple(%t, %n))");
  EXPECT_EQ(kind, EmitterKind::Loop);
  EXPECT_NE(why.find("2 outputs"), std::string::npos) << why;
}

TEST(HeroAnalysisTest, NormalizationMergesAndDropsDims) {
  // [a, b, c, 1, d] -> [d, 1, a, b, c]: a,b,c stay adjacent, the 1 goes.
  auto module = parseTestModule(R"(
HloModule m
ENTRY e {
  %p = f32[2,3,5,1,7] parameter(0)
  ROOT %t = f32[7,1,2,3,5] transpose(%p), dimensions={4,3,0,1,2}
})");
  ASSERT_TRUE(module);
  NormalizedTranspose n = normalizeTranspose(*entry(*module).root());
  EXPECT_EQ(n.dims, (std::vector<int64_t>{30, 7}));
  EXPECT_EQ(n.permutation, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(n.groups, (std::vector<std::vector<int64_t>>{{0, 1, 2}, {4}}));
}

/// Checks the two phases of the transpose emitter by enumeration: every
/// operand element is read exactly once, every result element written
/// exactly once, and the result element at `o` comes out of the tile slot
/// (in the same block) that the operand element it transposes went into.
std::string checkTransposeMaps(const HloInstruction &hero,
                               const NormalizedTranspose &n,
                               mlir::MLIRContext *context, Target target) {
  IndexingMap read = getTransposeReadMap(hero, n, context, target);
  IndexingMap write = getTransposeWriteMap(hero, n, context, target);
  size_t rank = hero.shape().rank();
  Expected<std::vector<DomainPoint>> reads = enumerateDomain(read, 1 << 23);
  Expected<std::vector<DomainPoint>> writes = enumerateDomain(write, 1 << 23);
  if (!reads || !writes)
    return "cannot enumerate";
  // operand index -> (block, tile slot)
  std::map<std::vector<int64_t>, std::pair<int64_t, std::vector<int64_t>>>
      slotOf;
  const Shape &in = hero.operand(0)->shape();
  for (const DomainPoint &p : *reads) {
    std::vector<int64_t> index(p.results.begin(), p.results.begin() + rank);
    for (size_t d = 0; d < rank; ++d)
      if (index[d] < 0 || index[d] >= in.dims[d])
        return "a read outside the operand: " + read.toString();
    std::vector<int64_t> slot(p.results.begin() + rank, p.results.end());
    if (!slotOf.emplace(index, std::make_pair(p.dims[1], slot)).second)
      return "an operand element is read twice";
  }
  int64_t elements = 1;
  for (int64_t d : in.dims)
    elements *= d;
  if (static_cast<int64_t>(slotOf.size()) != elements)
    return "some operand elements are not read";
  std::map<std::vector<int64_t>, int> written;
  std::vector<int64_t> perm = logicalPermutation(hero);
  for (const DomainPoint &p : *writes) {
    std::vector<int64_t> out(p.results.begin(), p.results.begin() + rank);
    for (size_t d = 0; d < rank; ++d)
      if (out[d] < 0 || out[d] >= hero.shape().dims[d])
        return "a write outside the result: " + write.toString();
    if (++written[out] > 1)
      return "a result element is written twice";
    std::vector<int64_t> operandIndex(rank);
    for (size_t o = 0; o < rank; ++o)
      operandIndex[perm[o]] = out[o];
    std::vector<int64_t> slot(p.results.begin() + rank, p.results.end());
    auto it = slotOf.find(operandIndex);
    if (it == slotOf.end() || it->second.first != p.dims[1])
      return "a result element is not read from its operand element's block";
    // On the CPU phase 2 reads the tile transposed in registers: slot
    // (row r, column c) of the first tile is (c, r) of the second.
    std::vector<int64_t> want = it->second.second;
    if (target == Target::Cpu &&
        hero.shape().elementType != PrimitiveType::Pred)
      want = {want[n.minor()], want[n.toMinor()]};
    if (slot != want)
      return "a result element is not read from its operand element's slot";
  }
  if (static_cast<int64_t>(written.size()) != elements)
    return "some result elements are not written";
  return "";
}

/// checkTransposeMaps for the CPU's and the GPU's launch.
std::string checkTransposeMaps(const HloInstruction &hero,
                               const NormalizedTranspose &n,
                               mlir::MLIRContext *context) {
  std::string cpu = checkTransposeMaps(hero, n, context, Target::Cpu);
  std::string gpu = checkTransposeMaps(hero, n, context, Target::Gpu);
  return (cpu.empty() ? "" : "cpu: " + cpu) +
         (gpu.empty() ? "" : "gpu: " + gpu);
}

TEST(TransposeEmitterTest, SeedMapsByEnumeration) {
  mlir::MLIRContext context;
  auto module = parseTestModule(kSeedTranspose);
  ASSERT_TRUE(module);
  FusionAnalysis analysis = analyzeFusion(entry(*module));
  ASSERT_EQ(analysis.kind, EmitterKind::Transpose);
  EXPECT_EQ(checkTransposeMaps(*analysis.hero, analysis.transpose, &context),
            "");
}

/// A random transpose of 2 to 5 dims that moves the minor dim, with sizes
/// around the tile's (not multiples of 32 too).
struct RandomTranspose {
  std::vector<int64_t> dims;
  std::vector<int64_t> permutation;
};

RandomTranspose randomTranspose(std::mt19937 &rng) {
  for (;;) {
    RandomTranspose t;
    int rank = 2 + static_cast<int>(rng() % 4);
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) {
      int64_t size = rng() % 3 == 0 ? 1 + rng() % 4 : 16 + rng() % 60;
      if (n * size > 120000)
        size = 1 + rng() % 2;
      t.dims.push_back(size);
      n *= size;
    }
    t.permutation.resize(rank);
    std::iota(t.permutation.begin(), t.permutation.end(), 0);
    std::shuffle(t.permutation.begin(), t.permutation.end(), rng);
    std::vector<int64_t> out;
    for (int64_t d : t.permutation)
      out.push_back(t.dims[d]);
    return t;
  }
}

/// The maps of 60 random transposes (those the transpose emitter takes, at
/// least 15), each of the element type `typeOf(trial)`, checked by
/// enumeration.
void checkRandomTransposeMaps(const std::function<const char *(int)> &typeOf) {
  mlir::MLIRContext context;
  std::mt19937 rng(12);
  int tiled = 0;
  for (int trial = 0; trial < 60; ++trial) {
    RandomTranspose t = randomTranspose(rng);
    std::vector<int64_t> out;
    for (int64_t d : t.permutation)
      out.push_back(t.dims[d]);
    const char *type = typeOf(trial);
    std::string text =
        "HloModule m\nENTRY e {\n  %p = " + shapeText(type, t.dims) +
        " parameter(0)\n  ROOT %t = " + shapeText(type, out) +
        " transpose(%p), dimensions={" + joinText(t.permutation) + "}\n}\n";
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    FusionAnalysis analysis = analyzeFusion(entry(*module));
    if (analysis.kind != EmitterKind::Transpose)
      continue;
    ++tiled;
    SCOPED_TRACE(text);
    EXPECT_EQ(checkTransposeMaps(*analysis.hero, analysis.transpose, &context),
              "");
  }
  EXPECT_GE(tiled, 15); // the generator makes enough tiled transposes
}

TEST(TransposeEmitterTest, RandomMapsByEnumeration) {
  checkRandomTransposeMaps([](int) { return "f32"; });
}

/// The same for elements of one byte, whose CPU tile is 64x256 (pred's
/// phase 2 reads the first tile transposed, s8's the second tile).
TEST(TransposeEmitterTest, RandomByteMapsByEnumeration) {
  checkRandomTransposeMaps([](int trial) {
    return trial % 3 == 0 ? "pred" : trial % 3 == 1 ? "s8" : "u8";
  });
}

/// Compiles and runs `text` for both launch configurations and compares
/// with the evaluator; `expectTranspose` says which emitter must write it.
/// An HLO module transposing a `type`[dims] parameter by `permutation`:
/// alone, or (`fused`) after a negation (pred: not) and before a multiply
/// and an add with a second parameter (pred: xor).
std::string transposeModuleText(const std::string &type,
                                const std::vector<int64_t> &dims,
                                const std::vector<int64_t> &permutation,
                                bool fused) {
  std::vector<int64_t> out;
  for (int64_t d : permutation)
    out.push_back(dims[d]);
  std::string in = shapeText(type, dims), res = shapeText(type, out);
  std::string perm = joinText(permutation);
  std::string body;
  if (!fused) {
    body = "  %p = " + in + " parameter(0)\n  ROOT %t = " + res +
           " transpose(%p), dimensions={" + perm + "}\n";
  } else if (type == "pred") {
    body = "  %p = " + in + " parameter(0)\n  %n = " + in +
           " not(%p)\n  %t = " + res + " transpose(%n), dimensions={" + perm +
           "}\n  %q = " + res + " parameter(1)\n  ROOT %m = " + res +
           " xor(%t, %q)\n";
  } else {
    body = "  %p = " + in + " parameter(0)\n  %n = " + in +
           " negate(%p)\n  %t = " + res + " transpose(%n), dimensions={" +
           perm + "}\n  %q = " + res + " parameter(1)\n  %m = " + res +
           " multiply(%t, %q)\n  ROOT %a = " + res + " add(%m, %t)\n";
  }
  return "HloModule m\nENTRY e {\n" + body + "}\n";
}

void checkModule(const std::string &text, bool expectTranspose, uint64_t seed) {
  SCOPED_TRACE(text);
  auto module = parseTestModule(text);
  ASSERT_TRUE(module);
  EXPECT_EQ(analyzeFusion(entry(*module)).kind == EmitterKind::Transpose,
            expectTranspose);
  EXPECT_EQ(checkBothLaunches(*module, randomArguments(*module, seed)), "");
}

TEST(TransposeEmitterTest, SeedMatchesTheEvaluator) {
  checkModule(kSeedTranspose, true, 1);
}

TEST(TransposeEmitterTest, RandomTransposesMatchTheEvaluator) {
  std::mt19937 rng(5);
  const char *types[] = {"f32", "bf16", "s8", "f16", "s32", "pred"};
  int compiled = 0;
  for (int trial = 0; trial < 80; ++trial) {
    RandomTranspose t = randomTranspose(rng);
    std::vector<int64_t> out;
    for (int64_t d : t.permutation)
      out.push_back(t.dims[d]);
    const char *type = types[trial % 6];
    bool isPred = std::string(type) == "pred";
    std::string in = shapeText(type, t.dims), res = shapeText(type, out);
    // A producer before the hero and a consumer after it (reading a second
    // parameter at the output's index), or the bare transpose.
    std::string body;
    if (trial % 3 == 0 || isPred) {
      body = "  %p = " + in + " parameter(0)\n  ROOT %t = " + res +
             " transpose(%p), dimensions={" + joinText(t.permutation) + "}\n";
    } else {
      body = "  %p = " + in + " parameter(0)\n  %n = " + in +
             " negate(%p)\n  %t = " + res + " transpose(%n), dimensions={" +
             joinText(t.permutation) + "}\n  %q = " + res +
             " parameter(1)\n  %m = " + res +
             " multiply(%t, %q)\n  ROOT %a = " + res + " add(%m, %t)\n";
    }
    std::string text = "HloModule m\nENTRY e {\n" + body + "}\n";
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    bool tiled = analyzeFusion(entry(*module)).kind == EmitterKind::Transpose;
    compiled += tiled;
    checkModule(text, tiled, 100 + trial);
  }
  EXPECT_GE(compiled, 15);
}

TEST(HeroAnalysisTest, CopyKeepingTheMinorDimIsNotAHero) {
  // The copy swaps the two major dims physically; the minor dim stays, so
  // each row is copied whole and the loop emitter is as good.
  auto module = parseTestModule(R"(
HloModule m
ENTRY e {
  %p = f32[40,72,3]{2,1,0} parameter(0)
  %t = f32[72,40,3]{2,0,1} transpose(%p), dimensions={1,0,2}
  ROOT %c = f32[72,40,3]{2,1,0} copy(%t)
})");
  ASSERT_TRUE(module);
  FusionAnalysis analysis = analyzeFusion(entry(*module));
  EXPECT_EQ(analysis.kind, EmitterKind::Loop);
  ASSERT_EQ(analysis.rejected.size(), 2u);
  EXPECT_NE(analysis.rejected[1].find("%c is not a transpose hero: it does "
                                      "not move the minor physical dim "
                                      "(normalized [40,72,3] by {1,0,2})"),
            std::string::npos)
      << analysis.rejected[1];
}

TEST(TransposeEmitterTest, XlaCopyFormMatchesTheEvaluator) {
  const char *text = R"(
HloModule m
ENTRY e {
  %p = f32[32,48]{1,0} parameter(0)
  %t = f32[48,32]{0,1} transpose(%p), dimensions={1,0}
  ROOT %c = f32[48,32]{1,0} copy(%t)
})";
  auto module = parseTestModule(text);
  ASSERT_TRUE(module);
  FusionAnalysis analysis = analyzeFusion(entry(*module));
  ASSERT_EQ(analysis.kind, EmitterKind::Transpose) << analysis.reason;
  EXPECT_EQ(analysis.hero->name(), "c");
  mlir::MLIRContext context;
  EXPECT_EQ(checkTransposeMaps(*analysis.hero, analysis.transpose, &context),
            "");
  checkModule(text, true, 9);
}

/// The CPU's squares: 16x16 for elements of 2 bytes (a ymm per row of
/// bf16); for those of 1 and 4 bytes 16x16 and 8x8 where the squares' rows
/// are at most 256 bits (AVX2, Zen 4), 32x32 and 16x16 on the AVX-512 CPUs
/// that run zmm shuffles whole (Zen 5, Sapphire Rapids); 8x8 for 8 bytes.
/// Sizes that are not multiples of the square leave partial squares at the
/// tile's edges, and the epilogue reads a second input at the output's
/// index. The values are checked with this CPU's squares and with those of
/// 256 bits (--prefer-vector-width=256).
TEST(TransposeEmitterTest, SquaresByElementWidthAndCpu) {
  struct Case {
    const char *type;
    std::vector<int64_t> dims;
    std::vector<int64_t> permutation;
    const char *narrow, *wide;
  };
  const Case cases[] = {
      {"bf16", {45, 70}, {1, 0}, "16x16 squares", "16x16 squares"},
      {"s8", {3, 50, 37}, {0, 2, 1}, "16x16 squares", "32x32 squares"},
      {"u8", {100, 300}, {1, 0}, "16x16 squares", "32x32 squares"},
      {"bf16", {3, 50, 37}, {0, 2, 1}, "16x16 squares", "16x16 squares"},
      {"f16", {33, 2, 129}, {2, 1, 0}, "16x16 squares", "16x16 squares"},
      {"u16", {17, 161}, {1, 0}, "16x16 squares", "16x16 squares"},
      {"f32", {45, 70}, {1, 0}, "8x8 squares", "16x16 squares"},
      {"s32", {3, 37, 150}, {0, 2, 1}, "8x8 squares", "16x16 squares"},
      {"f32", {70, 2, 260}, {2, 1, 0}, "8x8 squares", "16x16 squares"},
      {"f64", {40, 19}, {1, 0}, "8x8 squares", "8x8 squares"},
  };
  for (const Case &c : cases) {
    std::vector<int64_t> out;
    for (int64_t d : c.permutation)
      out.push_back(c.dims[d]);
    std::string in = shapeText(c.type, c.dims), res = shapeText(c.type, out);
    std::string text =
        "HloModule m\nENTRY e {\n  %p = " + in + " parameter(0)\n  %n = " + in +
        " negate(%p)\n  %t = " + res + " transpose(%n), dimensions={" +
        joinText(c.permutation) + "}\n  %q = " + res +
        " parameter(1)\n  ROOT %m = " + res + " multiply(%t, %q)\n}\n";
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    FusionAnalysis analysis = analyzeFusion(entry(*module));
    ASSERT_EQ(analysis.kind, EmitterKind::Transpose) << analysis.reason;
    for (auto [cpu, squares] : {std::pair{"x86-64-v3", c.narrow},
                                {"znver4", c.narrow},
                                {"znver5", c.wide},
                                {"sapphirerapids", c.wide}}) {
      CompileOptions options;
      options.cpu = cpu;
      Expected<std::string> explained =
          emitHloModule(*module, EmitKind::Explain, options);
      ASSERT_TRUE(explained) << explained.error().message;
      EXPECT_NE(explained->find(squares), std::string::npos) << cpu << ":\n"
                                                             << *explained;
    }
    checkModule(text, true, 17);
    CompileOptions narrow;
    narrow.vectorWidth = 256;
    EXPECT_EQ(
        checkKernels(*module, randomArguments(*module, 18), narrow, 2).failure,
        "");
  }
}

/// Transposes of one-byte elements through the CPU's 64x256 tiles (and the
/// GPU's 32x32) against the evaluator: bare, after a producer and before
/// an epilogue, in shapes that are not multiples of the tile (partial tiles
/// along both swapped dims), whole tiles, and a third dim kept.
TEST(TransposeEmitterTest, ByteTransposesMatchTheEvaluator) {
  struct Case {
    const char *type;
    std::vector<int64_t> dims;
    std::vector<int64_t> permutation;
    bool fused;
  };
  const Case cases[] = {
      {"s8", {100, 300}, {1, 0}, false},
      {"s8", {100, 300}, {1, 0}, true},
      {"s8", {3, 65, 130}, {0, 2, 1}, true},
      {"s8", {65, 3, 130}, {2, 1, 0}, false},
      {"s8", {128, 512}, {1, 0}, true},
      {"u8", {100, 300}, {1, 0}, true},
      {"u8", {3, 65, 130}, {0, 2, 1}, false},
      {"u8", {17, 2, 257}, {2, 1, 0}, true},
      {"pred", {100, 300}, {1, 0}, false},
      {"pred", {3, 65, 130}, {0, 2, 1}, true},
  };
  mlir::MLIRContext context;
  for (const Case &c : cases) {
    std::string text =
        transposeModuleText(c.type, c.dims, c.permutation, c.fused);
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    FusionAnalysis analysis = analyzeFusion(entry(*module));
    ASSERT_EQ(analysis.kind, EmitterKind::Transpose) << analysis.reason;
    TransposeLaunch launch =
        getTransposeLaunch(*analysis.hero, analysis.transpose, Target::Cpu);
    EXPECT_EQ(launch.config.numThreads, 64 * 256);
    EXPECT_EQ(checkTransposeMaps(*analysis.hero, analysis.transpose, &context),
              "");
    checkModule(text, true, 23);
  }
}

TEST(TransposeEmitterTest, FusionWithinAModule) {
  // As XLA's optimized HLO has it: the transpose fusion called from ENTRY,
  // next to a loop fusion.
  const char *text = R"(
HloModule m
%fused_t {
  %p = bf16[70,33,40] parameter(0)
  %c = f32[70,33,40] convert(%p)
  %t = f32[40,33,70] transpose(%c), dimensions={2,1,0}
  ROOT %e = f32[40,33,70] exponential(%t)
}
%fused_n {
  %x = f32[40,33,70] parameter(0)
  ROOT %n = f32[40,33,70] negate(%x)
}
ENTRY e {
  %a = bf16[70,33,40] parameter(0)
  %f = f32[40,33,70] fusion(%a), kind=kLoop, calls=%fused_t
  ROOT %g = f32[40,33,70] fusion(%f), kind=kLoop, calls=%fused_n
}
)";
  auto module = parseTestModule(text);
  ASSERT_TRUE(module);
  for (const auto &computation : module->computations())
    if (computation->name() == "fused_t") {
      EXPECT_EQ(analyzeFusion(*computation).kind, EmitterKind::Transpose);
    }
  checkModule(text, false, 3);
}

/// CompileOptions::cpu: another CPU's assembly (AVX-512 registers for
/// znver4, none for znver3), an error for a name LLVM does not know, and
/// no executable for another CPU.
TEST(TransposeEmitterTest, AnotherCpusCode) {
  std::unique_ptr<HloModule> module = parseTestModule(R"(
HloModule t
fused {
  %p = f32[256,256] parameter(0)
  %e = f32[256,256] exponential(%p)
  %t = f32[256,256] transpose(%e), dimensions={1,0}
  ROOT %a = f32[256,256] abs(%t)
}
ENTRY e {
  %x = f32[256,256] parameter(0)
  ROOT %f = f32[256,256] fusion(%x), kind=kInput, calls=fused
}
)");
  ASSERT_TRUE(module);
  CompileOptions options;
  options.cpu = "znver4";
  Expected<std::string> zen4 = emitHloModule(*module, EmitKind::Asm, options);
  ASSERT_TRUE(zen4) << zen4.error().message;
  EXPECT_NE(zen4->find("%zmm"), std::string::npos);
  options.cpu = "znver3";
  Expected<std::string> zen3 = emitHloModule(*module, EmitKind::Asm, options);
  ASSERT_TRUE(zen3) << zen3.error().message;
  EXPECT_EQ(zen3->find("%zmm"), std::string::npos);
  EXPECT_NE(zen3->find("%ymm"), std::string::npos);
  options.cpu = "pentium9";
  Expected<std::string> unknown =
      emitHloModule(*module, EmitKind::Asm, options);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("LLVM knows no CPU 'pentium9'"),
            std::string::npos)
      << unknown.error().message;
  options.cpu = "znver4";
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, options);
  ASSERT_FALSE(exe);
  EXPECT_NE(exe.error().message.find("an executable runs on this CPU"),
            std::string::npos)
      << exe.error().message;
}

} // namespace

/// On the CPU a tile holds 256 bytes' worth of the rows that become an
/// output row's elements (four whole lines of each output row), or fewer
/// rows that divide that dim, where 128 columns divide the minor dim; the
/// tiles of before (32 rows, s8 64 rows of 256) otherwise. Each shape's
/// tile, its maps checked by brute force, and the module against the
/// evaluator on both launches, plain and fused.
TEST(TransposeEmitterTest, RowsOf256BytesWhereTheyDivideTheDims) {
  struct Case {
    const char *type;
    std::vector<int64_t> dims, permutation;
    int64_t rows, cols;
  };
  const Case cases[] = {
      {"f32", {128, 256}, {1, 0}, 64, 128},
      {"f32", {3, 192, 128}, {0, 2, 1}, 64, 128},
      {"bf16", {256, 128}, {1, 0}, 128, 128},
      {"bf16", {192, 256}, {1, 0}, 64, 128}, // 192: 64 rows divide it
      {"s8", {512, 128}, {1, 0}, 256, 128},
      {"s8", {384, 256}, {1, 0}, 128, 128}, // 384: 128 rows divide it
      {"f64", {64, 128}, {1, 0}, 32, 128},  // 256 bytes: 32 rows, as before
      {"f32", {96, 128}, {1, 0}, 32, 128},  // 96: 64 does not divide it
      {"f32", {128, 96}, {1, 0}, 32, 128},  // 96 columns: ragged
      {"s8", {256, 300}, {1, 0}, 64, 256},  // s8's tile of before
  };
  mlir::MLIRContext context;
  uint64_t seed = 40;
  for (const Case &c : cases)
    for (bool fused : {false, true}) {
      std::string text =
          transposeModuleText(c.type, c.dims, c.permutation, fused);
      SCOPED_TRACE(text);
      auto module = parseTestModule(text);
      ASSERT_TRUE(module);
      FusionAnalysis analysis = analyzeFusion(entry(*module));
      ASSERT_EQ(analysis.kind, EmitterKind::Transpose) << analysis.reason;
      TransposeLaunch launch =
          getTransposeLaunch(*analysis.hero, analysis.transpose, Target::Cpu);
      const NormalizedTranspose &n = analysis.transpose;
      EXPECT_EQ(launch.tileShape[n.toMinor()], c.rows);
      EXPECT_EQ(launch.tileShape[n.minor()], c.cols + 1);
      EXPECT_EQ(checkTransposeMaps(*analysis.hero, n, &context), "");
      checkModule(text, true, seed++);
    }
}
