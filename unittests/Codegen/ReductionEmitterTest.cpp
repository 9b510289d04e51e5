//===- ReductionEmitterTest.cpp - The column-reduction emitter ------------===//
//
// Which reduces are column-reduction heroes (and why the others are not),
// the maps checked by enumeration (every operand element added once, each
// accumulator's rows in the evaluator's order, each output written once
// from its own accumulator), and compiled column reductions with producers
// and consumers against the evaluator, bit for bit.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"
#include "ModulePlan.h"

#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Indexing/BruteForce.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

using namespace tessel;

namespace {

std::string reducer(const char *type, const char *op) {
  return std::string("%red {\n  %a = ") + type +
         "[] parameter(0)\n  %b = " + type +
         "[] parameter(1)\n  ROOT %s = " + type + "[] " + op + "(%a, %b)\n}\n";
}

FusionAnalysis analyzeBody(const std::string &body) {
  auto module = parseTestModule("HloModule m\n" + reducer("f32", "add") +
                                "ENTRY e {\n" + body + "\n}\n");
  if (!module)
    return {};
  return analyzeFusion(*module->entry());
}

TEST(ReductionHeroTest, ColumnReductionIsAHero) {
  FusionAnalysis a = analyzeBody(R"(
  %p = f32[300,1000] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[1000] reduce(%p, %z), dimensions={0}, to_apply=%red)");
  ASSERT_EQ(a.kind, EmitterKind::ColumnReduction) << a.reason;
  EXPECT_EQ(a.reduction.rows, 300);
  EXPECT_EQ(a.reduction.columns, 1000);
  LaunchConfig launch = getColumnReductionLaunch(a.reduction);
  EXPECT_EQ(launch.numThreads, 256);
  EXPECT_EQ(launch.numBlocks, 4);
}

TEST(ReductionHeroTest, BatchesOfColumnReductionsAreHeroes) {
  // Kept dims major to the reduced ones: each batch a column reduction.
  FusionAnalysis a = analyzeBody(R"(
  %p = f32[32,256,4096] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[32,4096] reduce(%p, %z), dimensions={1}, to_apply=%red)");
  ASSERT_EQ(a.kind, EmitterKind::ColumnReduction) << a.reason;
  EXPECT_EQ(a.reduction.rows, 256);
  EXPECT_EQ(a.reduction.columns, 32 * 4096);
  EXPECT_EQ(a.reduction.rowColumns, 4096);
  // The CPU gives a block a whole row, read in one sweep; the GPU 256
  // threads.
  LaunchConfig cpu = getColumnReductionLaunch(a.reduction, Target::Cpu);
  EXPECT_EQ(cpu.numThreads, 4096);
  EXPECT_EQ(cpu.numBlocks, 32);
  LaunchConfig gpu = getColumnReductionLaunch(a.reduction, Target::Gpu);
  EXPECT_EQ(gpu.numThreads, 256);
  EXPECT_EQ(gpu.numBlocks, 32 * 16);
  // A kept dim between two reduced ones is not a column reduction.
  a = analyzeBody(R"(
  %p = f32[8,32,64] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[32] reduce(%p, %z), dimensions={0,2}, to_apply=%red)");
  EXPECT_EQ(a.kind, EmitterKind::Loop);
}

TEST(ReductionHeroTest, RejectionsSayWhy) {
  FusionAnalysis a = analyzeBody(R"(
  %p = f32[300,1000] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[300] reduce(%p, %z), dimensions={1}, to_apply=%red)");
  EXPECT_EQ(a.kind, EmitterKind::Loop);
  ASSERT_EQ(a.rejected.size(), 1u);
  EXPECT_NE(a.rejected[0].find("a row reduction"), std::string::npos)
      << a.rejected[0];

  a = analyzeBody(R"(
  %p = f32[300,8] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[8] reduce(%p, %z), dimensions={0}, to_apply=%red)");
  EXPECT_EQ(a.kind, EmitterKind::Loop);
  ASSERT_EQ(a.rejected.size(), 1u);
  EXPECT_NE(a.rejected[0].find("keeps 8 elements"), std::string::npos)
      << a.rejected[0];

  a = analyzeBody(R"(
  %p = f32[300,64] parameter(0)
  %z = f32[] constant(0)
  %r = f32[64] reduce(%p, %z), dimensions={0}, to_apply=%red
  %b = f32[300,64] broadcast(%r), dimensions={1}
  ROOT %m = f32[300,64] multiply(%p, %b))");
  EXPECT_EQ(a.kind, EmitterKind::Loop);
  ASSERT_EQ(a.rejected.size(), 1u);
  EXPECT_NE(a.rejected[0].find("not elementwise"), std::string::npos)
      << a.rejected[0];
}

/// Enumerates the read and write maps: every operand element is added
/// exactly once, into slot th of block bl; the rows of each (block, slot)
/// come in the evaluator's order (row-major over the reduced dims); the
/// output element of each (block, slot) is the one whose operand elements
/// went there.
std::string checkReductionMaps(const HloInstruction &reduce,
                               const ColumnReduction &r,
                               mlir::MLIRContext *context, Target target) {
  IndexingMap read = getColumnReductionReadMap(reduce, r, context, target);
  IndexingMap write = getColumnReductionWriteMap(reduce, r, context, target);
  Expected<std::vector<DomainPoint>> reads = enumerateDomain(read, 1 << 22);
  Expected<std::vector<DomainPoint>> writes = enumerateDomain(write, 1 << 22);
  if (!reads || !writes)
    return "cannot enumerate";
  const Shape &operand = reduce.operand(0)->shape();
  size_t rank = operand.rank();
  std::vector<bool> isReduced(rank, false);
  for (int64_t d : reduce.dimensions())
    isReduced[d] = true;
  std::map<std::vector<int64_t>, int> seen;
  // (block, slot) -> output index and the reduced indices in visit order.
  std::map<std::pair<int64_t, int64_t>,
           std::pair<std::vector<int64_t>, std::vector<std::vector<int64_t>>>>
      slots;
  // Each slot's reduced indices by the row variable that visits them.
  std::map<std::pair<int64_t, int64_t>, std::map<int64_t, std::vector<int64_t>>>
      visits;
  for (const DomainPoint &p : *reads) {
    std::vector<int64_t> index(p.results.begin(), p.results.begin() + rank);
    for (size_t d = 0; d < rank; ++d)
      if (index[d] < 0 || index[d] >= operand.dims[d])
        return "a read outside the operand";
    if (++seen[index] > 1)
      return "an operand element is added twice";
    std::pair<int64_t, int64_t> slot(p.dims[1], p.results[rank]);
    std::vector<int64_t> kept, reduced;
    for (size_t d = 0; d < rank; ++d)
      (isReduced[d] ? reduced : kept).push_back(index[d]);
    auto &entry = slots[slot];
    if (entry.first.empty())
      entry.first = kept;
    else if (entry.first != kept)
      return "one accumulator gets elements of two outputs";
    visits[slot][p.dims[2]] = reduced;
  }
  int64_t elements = 1;
  for (int64_t d : operand.dims)
    elements *= d;
  if (static_cast<int64_t>(seen.size()) != elements)
    return "some operand elements are not added";
  for (auto &[slot, rows] : visits) {
    std::vector<int64_t> previous;
    for (auto &[row, reduced] : rows) {
      if (!previous.empty() && !(previous < reduced))
        return "rows are not in the evaluator's (row-major) order";
      previous = reduced;
    }
  }
  std::map<std::vector<int64_t>, int> written;
  for (const DomainPoint &p : *writes) {
    std::vector<int64_t> out(p.results.begin(), p.results.end() - 1);
    std::pair<int64_t, int64_t> slot(p.dims[1], p.results.back());
    auto it = slots.find(slot);
    if (it == slots.end() || it->second.first != out)
      return "an output is written from another output's accumulator";
    if (++written[out] > 1)
      return "an output element is written twice";
  }
  if (written.size() != slots.size())
    return "some outputs are not written";
  return "";
}

TEST(ColumnReductionEmitterTest, MapsByEnumeration) {
  mlir::MLIRContext context;
  for (const char *body : {
           "%p = f32[300,1000] parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[1000] reduce(%p, %z), dimensions={0}, to_apply=%red",
           "%p = f32[3,5,7,40] parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[7,40] reduce(%p, %z), dimensions={0,1}, "
           "to_apply=%red",
           "%p = f32[6,1,33,17] parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[1,33,17] reduce(%p, %z), dimensions={0}, "
           "to_apply=%red",
           "%p = f32[9,20,30]{1,2,0} parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[20,30] reduce(%p, %z), dimensions={0}, "
           "to_apply=%red",
           // Batches of column reductions (a column sum's segments): on the
           // CPU a block per row of 300 (then 4096) elements, on the GPU 256.
           "%p = f32[3,7,300] parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[3,300] reduce(%p, %z), dimensions={1}, "
           "to_apply=%red",
           "%p = f32[2,5,3,4100] parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[2,4100] reduce(%p, %z), dimensions={1,2}, "
           "to_apply=%red",
       }) {
    SCOPED_TRACE(body);
    auto module = parseTestModule("HloModule m\n" + reducer("f32", "add") +
                                  "ENTRY e {\n" + body + "\n}\n");
    ASSERT_TRUE(module);
    FusionAnalysis a = analyzeFusion(*module->entry());
    ASSERT_EQ(a.kind, EmitterKind::ColumnReduction) << a.reason;
    EXPECT_EQ(checkReductionMaps(*a.hero, a.reduction, &context, Target::Cpu),
              "");
    EXPECT_EQ(checkReductionMaps(*a.hero, a.reduction, &context, Target::Gpu),
              "");
  }
}

void checkModule(const std::string &text, uint64_t seed) {
  SCOPED_TRACE(text);
  auto module = parseTestModule(text);
  ASSERT_TRUE(module);
  EXPECT_EQ(analyzeFusion(*module->entry()).kind, EmitterKind::ColumnReduction);
  EXPECT_EQ(checkBothLaunches(*module, randomArguments(*module, seed)), "");
}

TEST(ColumnReductionEmitterTest, RandomReductionsMatchTheEvaluator) {
  std::mt19937 rng(3);
  const char *types[] = {"f32", "bf16", "s32", "f16"};
  const char *ops[] = {"add", "maximum", "multiply", "minimum"};
  for (int trial = 0; trial < 24; ++trial) {
    const char *type = types[trial % 4];
    const char *op = ops[(trial / 4) % 4];
    int rank = 2 + static_cast<int>(rng() % 3);
    int reducedCount = 1 + static_cast<int>(rng() % (rank - 1));
    std::vector<int64_t> dims;
    for (int d = 0; d < rank; ++d)
      dims.push_back(d < reducedCount ? 2 + rng() % 19 : 4 + rng() % 40);
    // At least 16 kept elements.
    dims.back() = std::max<int64_t>(dims.back(), 16);
    auto shape = [&](bool kept) {
      std::string text = std::string(type) + "[";
      bool first = true;
      for (int d = kept ? reducedCount : 0; d < rank; ++d) {
        text += (first ? "" : ",") + std::to_string(dims[d]);
        first = false;
      }
      return text + "]";
    };
    std::string reducedList;
    for (int d = 0; d < reducedCount; ++d)
      reducedList += (d ? "," : "") + std::to_string(d);
    std::string init = std::string(op) == "multiply" ? "1" : "0";
    std::string text =
        "HloModule m\n" + reducer(type, op) +
        "ENTRY e {\n  %p = " + shape(false) +
        " parameter(0)\n  %n = " + shape(false) +
        " negate(%p)\n  %z = " + type + "[] constant(" + init +
        ")\n  %r = " + shape(true) + " reduce(%n, %z), dimensions={" +
        reducedList + "}, to_apply=%red\n  %q = " + shape(true) +
        " parameter(1)\n  ROOT %a = " + shape(true) + " add(%r, %q)\n}\n";
    checkModule(text, 50 + trial);
  }
}

TEST(ColumnSumSegmentsTest, SplitSumsMatchTheEvaluatorInTheirOrder) {
  // Column sums of f32/f64 over leading dims of at least 512 rows run in
  // segments of 256 rows (sumsColumnsInSegments): a kernel sums each
  // segment, a second adds the segments' sums in order. The evaluator
  // reproduces that order, and it differs from the one-by-one sum in the
  // bits (HloEvaluatorTest), so these match only if the kernels sum in it.
  const char *modules[] = {
      // Not in a fusion, with an epilogue.
      "ENTRY e {\n  %p = f32[1024,48] parameter(0)\n"
      "  %z = f32[] constant(0.5)\n"
      "  %r = f32[48] reduce(%p, %z), dimensions={0}, to_apply=%red\n"
      "  ROOT %n = f32[48] negate(%r)\n}\n",
      // Two reduced and two kept dims (the sum is reshaped back), f64.
      "ENTRY e {\n  %p = f64[2,512,3,20] parameter(0)\n"
      "  %z = f64[] constant(-2)\n"
      "  ROOT %r = f64[3,20] reduce(%p, %z), dimensions={0,1}, "
      "to_apply=%red64\n}\n",
      // In a fusion, with a producer and a consumer.
      "%body {\n  %p = f32[768,40] parameter(0)\n"
      "  %q = f32[40] parameter(1)\n  %n = f32[768,40] negate(%p)\n"
      "  %z = f32[] constant(0)\n"
      "  %r = f32[40] reduce(%n, %z), dimensions={0}, to_apply=%red\n"
      "  ROOT %a = f32[40] add(%r, %q)\n}\n"
      "ENTRY e {\n  %p = f32[768,40] parameter(0)\n"
      "  %q = f32[40] parameter(1)\n"
      "  ROOT %f = f32[40] fusion(%p, %q), kind=kLoop, calls=%body\n}\n",
      // 1000 rows: three segments of 256 and one of 232 (padded with +0).
      "ENTRY e {\n  %p = f32[1000,48] parameter(0)\n"
      "  %z = f32[] constant(0.25)\n"
      "  %r = f32[48] reduce(%p, %z), dimensions={0}, to_apply=%red\n"
      "  ROOT %n = f32[48] negate(%r)\n}\n",
      // 3 x 300 rows over two dims, f64.
      "ENTRY e {\n  %p = f64[3,300,20] parameter(0)\n"
      "  %z = f64[] constant(1)\n"
      "  ROOT %r = f64[20] reduce(%p, %z), dimensions={0,1}, "
      "to_apply=%red64\n}\n",
      // Read back through a broadcast (the sum is materialized too).
      "ENTRY e {\n  %p = f32[512,32] parameter(0)\n"
      "  %z = f32[] constant(0)\n"
      "  %r = f32[32] reduce(%p, %z), dimensions={0}, to_apply=%red\n"
      "  %b = f32[512,32] broadcast(%r), dimensions={1}\n"
      "  ROOT %d = f32[512,32] subtract(%p, %b)\n}\n",
  };
  int trial = 0;
  for (const char *body : modules) {
    std::string text = "HloModule m\n" + reducer("f32", "add") +
                       "%red64 {\n  %a = f64[] parameter(0)\n"
                       "  %b = f64[] parameter(1)\n"
                       "  ROOT %s = f64[] add(%a, %b)\n}\n" +
                       body;
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    bool segmented = false;
    for (const auto &computation : module->computations())
      for (const auto &instruction : computation->instructions())
        segmented |= sumsColumnsInSegments(*instruction);
    EXPECT_TRUE(segmented);
    // Finite values over 12 decades (a NaN or an infinity would make every
    // order give the same bits).
    std::mt19937 rng(700 + trial++);
    std::uniform_real_distribution<double> value(-1000.0, 1000.0);
    std::vector<Literal> arguments;
    for (HloInstruction *param : module->entry()->parameters()) {
      Literal x(Shape(param->shape().elementType, param->shape().dims));
      for (int64_t i = 0; i < x.elementCount(); ++i)
        x.setDouble(i, value(rng) * std::ldexp(1.0, int(rng() % 40) - 20));
      arguments.push_back(std::move(x));
    }
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
  }
}

TEST(ColumnSumSegmentsTest, OrderFreeReducesRunInSegmentsToo) {
  // A column reduce whose bits do not depend on the order
  // (reducesInAnyOrder) is split into segments as the sums are (the last
  // one padded with the start value where 256 does not divide the rows), each
  // segment starting from the op's identity (ModulePlan.cpp, segmentStart)
  // and the reduce's own init combined once: an init other than the
  // identity (3 for a sum, 0x55 for a xor) would come out wrong if each
  // segment started from it. NaNs, infinities and signed zeros among the
  // values (randomArguments), the bits compared.
  struct Case {
    const char *type, *op, *init, *input, *output, *dims;
  } cases[] = {
      {"f32", "maximum", "-inf", "[1000,40]", "[40]", "0"},
      {"f32", "minimum", "7", "[512,3,17]", "[3,17]", "0"},
      {"bf16", "maximum", "-2", "[2,256,33]", "[33]", "0,1"},
      {"f16", "minimum", "inf", "[768,16]", "[16]", "0"},
      {"f64", "maximum", "0", "[512,20]", "[20]", "0"},
      {"s32", "add", "3", "[777,24]", "[24]", "0"},
      {"s8", "multiply", "1", "[512,31]", "[31]", "0"},
      {"u16", "xor", "85", "[300,2,19]", "[19]", "0,1"},
      {"s64", "maximum", "-5", "[700,18]", "[18]", "0"},
      {"s16", "minimum", "100", "[512,19]", "[19]", "0"},
      {"u8", "maximum", "0", "[512,64]", "[64]", "0"},
      {"u32", "minimum", "4000000000", "[512,17]", "[17]", "0"},
      {"u64", "and", "18446744073709551615", "[512,16]", "[16]", "0"},
      {"pred", "or", "false", "[512,40]", "[40]", "0"},
      {"pred", "and", "true", "[513,20]", "[20]", "0"},
  };
  int trial = 0;
  for (const Case &c : cases) {
    std::string text = "HloModule m\n" + reducer(c.type, c.op) +
                       "ENTRY e {\n  %p = " + c.type + c.input +
                       " parameter(0)\n  %z = " + c.type + "[] constant(" +
                       c.init + ")\n  ROOT %r = " + c.type + c.output +
                       " reduce(%p, %z), dimensions={" + c.dims +
                       "}, to_apply=%red\n}\n";
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    Expected<ModulePlan> plan = planModule(*module);
    ASSERT_TRUE(plan) << plan.error().message;
    bool segmented = false;
    for (const PlannedKernel &kernel : plan->kernels)
      for (const auto &instruction : kernel.computation->instructions())
        segmented |= instruction->name() == "r.segments";
    EXPECT_TRUE(segmented);
    EXPECT_EQ(
        checkBothLaunches(*module, randomArguments(*module, 900 + trial++)),
        "");
  }
  // A float sum is split only in its own order (f32 and f64), a reduce of
  // a narrow float sum not at all: bf16 adds round at every step.
  auto module = parseTestModule("HloModule m\n" + reducer("bf16", "add") +
                                "ENTRY e {\n  %p = bf16[512,32] parameter(0)\n"
                                "  %z = bf16[] constant(0)\n"
                                "  ROOT %r = bf16[32] reduce(%p, %z), "
                                "dimensions={0}, to_apply=%red\n}\n");
  ASSERT_TRUE(module);
  Expected<ModulePlan> plan = planModule(*module);
  ASSERT_TRUE(plan) << plan.error().message;
  for (const PlannedKernel &kernel : plan->kernels)
    for (const auto &instruction : kernel.computation->instructions())
      EXPECT_NE(instruction->name(), "r.segments");
}

TEST(RowReductionTest, RowReductionsMatchTheEvaluatorInTheirOrder) {
  // f32/f64 sums run in the compiler's order (reducesInPartials: 16
  // partial sums), which the evaluator reproduces, and bf16/f16 max/min as
  // partial results too (the same bits in any order); the others as one
  // loop LLVM vectorizes. The bits must be the evaluator's either way, NaNs
  // and signed zeros included, with a tail past the last chunk of 16.
  struct Case {
    const char *type, *op, *init;
  } cases[] = {{"f32", "add", "0.5"},     {"f64", "add", "-2"},
               {"f32", "multiply", "1"},  {"f32", "maximum", "-inf"},
               {"f32", "minimum", "inf"}, {"bf16", "maximum", "-inf"},
               {"f16", "minimum", "inf"}, {"s32", "add", "3"},
               {"s8", "multiply", "1"},   {"u16", "xor", "0"},
               {"s64", "maximum", "-5"},  {"pred", "or", "false"},
               {"pred", "and", "true"}};
  std::mt19937 rng(17);
  int trial = 0;
  for (const Case &c : cases) {
    int64_t rows = 1 + rng() % 40, minor = 32 + rng() % 70;
    std::string in = std::string(c.type) + "[" + std::to_string(rows) + ",3," +
                     std::to_string(minor) + "]";
    std::string out = std::string(c.type) + "[" + std::to_string(rows) + "]";
    std::string text =
        "HloModule m\n" + reducer(c.type, c.op) + "ENTRY e {\n  %p = " + in +
        " parameter(0)\n  %z = " + c.type + "[] constant(" + c.init +
        ")\n  ROOT %r = " + out + " reduce(%p, %z), dimensions={1,2}, " +
        "to_apply=%red\n}\n";
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    EXPECT_EQ(analyzeFusion(*module->entry()).kind, EmitterKind::Loop);
    EXPECT_EQ(
        checkBothLaunches(*module, randomArguments(*module, 900 + trial++)),
        "");
  }
}

} // namespace

namespace {

/// A softmax-like fusion over the minor dim of f32[rows, cols] whose max is
/// read back through `readMax` (an HLO snippet that makes f32[rows, cols]
/// %bm from f32[rows] %m).
std::string splitModule(int64_t rows, int64_t cols,
                        const std::string &readMax) {
  std::string r = std::to_string(rows), c = std::to_string(cols);
  std::string full = "f32[" + r + "," + c + "]", row = "f32[" + r + "]";
  return "HloModule m\n" + reducer("f32", "maximum") +
         "%add {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
         "  ROOT %s = f32[] add(%a, %b)\n}\n"
         "%body {\n  %x = " +
         full + " parameter(0)\n  %ninf = f32[] constant(-inf)\n  %m = " + row +
         " reduce(%x, %ninf), dimensions={1}, to_apply=%red\n" + readMax +
         "  %d = " + full + " subtract(%x, %bm)\n  %z = f32[] constant(0)\n" +
         "  %s = " + row + " reduce(%d, %z), dimensions={1}, to_apply=%add\n" +
         "  %bs = " + full + " broadcast(%s), dimensions={0}\n" +
         "  ROOT %o = " + full + " multiply(%d, %bs)\n}\n" +
         "ENTRY e {\n  %p = " + full + " parameter(0)\n  ROOT %f = " + full +
         " fusion(%p), kind=kLoop, calls=%body\n}\n";
}

} // namespace

TEST(RowGroupTest, ChunksOfRowsMatchTheEvaluatorAndTheKernelAtATimeRun) {
  // A split computation whose kernels read the values computed once only
  // at their own row runs a chunk of rows at a time: the same bits as the
  // evaluator and as one kernel after the other, for rows that do and do
  // not fill the last chunk.
  // The first three run in chunks with two workers (64 rows per kernel
  // block of the max at most, about 256 KiB per chunk, 4 chunks or more);
  // small random ones may fall back to a kernel at a time.
  std::mt19937 rng(23);
  const int64_t fixed[][2] = {{3000, 100}, {4000, 300}, {2049, 33}};
  for (int trial = 0; trial < 8; ++trial) {
    int64_t rows = trial < 3 ? fixed[trial][0] : 1 + rng() % 700;
    int64_t cols = trial < 3 ? fixed[trial][1] : 1 + rng() % 300;
    std::string full =
        "f32[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
    std::string text = splitModule(
        rows, cols, "  %bm = " + full + " broadcast(%m), dimensions={0}\n");
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    CompileOptions options;
    std::vector<Literal> arguments = randomArguments(*module, 70 + trial);
    KernelCheckResult check = checkKernels(*module, arguments, options, 2);
    EXPECT_EQ(check.failure, "");
    auto exe = Executable::compile(*module, options);
    ASSERT_TRUE(exe);
    RunOptions chunked, whole;
    chunked.threads = whole.threads = 2;
    whole.rowChunks = false;
    Expected<Literal> a = (*exe)->run(arguments, chunked);
    Expected<Literal> b = (*exe)->run(arguments, whole);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->toString(), b->toString());
  }
}

TEST(RowGroupTest, OnlyKernelsThatReadTheirOwnRowsAreGrouped) {
  auto explain = [](const std::string &text) {
    auto module = parseTestModule(text);
    if (!module)
      return std::string("parse failed");
    Expected<std::string> out =
        emitHloModule(*module, EmitKind::Explain, CompileOptions{});
    return out ? *out : out.error().message;
  };
  std::string full = "f32[256,64]";
  // Own rows: grouped.
  EXPECT_NE(explain(splitModule(256, 64,
                                "  %bm = " + full +
                                    " broadcast(%m), dimensions={0}\n"))
                .find("run a chunk of rows at a time"),
            std::string::npos);
  // The max of another row (reversed): each kernel must see all rows.
  EXPECT_EQ(explain(splitModule(256, 64,
                                "  %rm = f32[256] reverse(%m), dimensions={0}\n"
                                "  %bm = " +
                                    full + " broadcast(%rm), dimensions={0}\n"))
                .find("run a chunk of rows at a time"),
            std::string::npos);
  // A column's value (the max of the first 64 rows, broadcast along rows).
  EXPECT_EQ(explain(splitModule(64, 64,
                                "  %bm = f32[64,64] broadcast(%m), "
                                "dimensions={1}\n"))
                .find("run a chunk of rows at a time"),
            std::string::npos);
}

namespace {

/// A softmax over the minor dim of f32[rows, cols] (along dim `dim` of the
/// broadcasts: 0 for rows, 1 for a column-wise one on a square array).
std::string softmaxModule(int64_t rows, int64_t cols, int dim = 0) {
  std::string r = std::to_string(rows), c = std::to_string(cols);
  std::string full = "f32[" + r + "," + c + "]",
              row = "f32[" + (dim == 0 ? r : c) + "]",
              reduced = dim == 0 ? "1" : "0", kept = std::to_string(dim);
  return "HloModule m\n" + reducer("f32", "maximum") +
         "%add {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
         "  ROOT %s = f32[] add(%a, %b)\n}\n"
         "%body {\n  %x = " +
         full + " parameter(0)\n  %ninf = f32[] constant(-inf)\n  %m = " + row +
         " reduce(%x, %ninf), dimensions={" + reduced +
         "}, to_apply=%red\n  %bm = " + full + " broadcast(%m), dimensions={" +
         kept + "}\n  %d = " + full + " subtract(%x, %bm)\n  %e = " + full +
         " exponential(%d)\n  %z = f32[] constant(0)\n  %s = " + row +
         " reduce(%e, %z), dimensions={" + reduced +
         "}, to_apply=%add\n  %bs = " + full + " broadcast(%s), dimensions={" +
         kept + "}\n  ROOT %o = " + full +
         " divide(%e, %bs)\n}\n"
         "ENTRY e {\n  %p = " +
         full + " parameter(0)\n  ROOT %f = " + full +
         " fusion(%p), kind=kLoop, calls=%body\n}\n";
}

std::string explainModule(const std::string &text) {
  auto module = parseTestModule(text);
  if (!module)
    return "parse failed";
  Expected<std::string> out =
      emitHloModule(*module, EmitKind::Explain, CompileOptions{});
  return out ? *out : out.error().message;
}

} // namespace

TEST(RowGroupTest, SharedExpIsComputedOnceAChunkOfRowsAtATime) {
  // The softmax's exp is read by the sum and by the output: in a row
  // group it is a kernel's output of its own, kept a chunk of rows at a
  // time in each worker's scratch (RowGroup::localBuffers). The bits must
  // be the evaluator's (within the bound of the approximated exp) and the
  // same with one worker, two, and one kernel at a time (where the full
  // buffer is made): a scratch row at the wrong place would show.
  const int64_t shapes[][2] = {{3000, 100}, {2049, 33}, {700, 300}, {64, 40}};
  int trial = 0;
  for (const auto &shape : shapes) {
    std::string text = softmaxModule(shape[0], shape[1]);
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    std::string explained = explainModule(text);
    EXPECT_NE(explained.find("computes %e once"), std::string::npos)
        << explained;
    EXPECT_NE(explained.find("scratch buffer"), std::string::npos) << explained;
    CompileOptions options;
    std::vector<Literal> arguments = randomArguments(*module, 90 + trial++);
    for (int threads : {1, 2}) {
      KernelCheckResult check =
          checkKernels(*module, arguments, options, threads);
      EXPECT_EQ(check.failure, "") << threads << " threads";
    }
    auto exe = Executable::compile(*module, options);
    ASSERT_TRUE(exe);
    RunOptions one, two, whole;
    one.threads = 1;
    two.threads = whole.threads = 2;
    whole.rowChunks = false;
    Expected<Literal> a = (*exe)->run(arguments, one);
    Expected<Literal> b = (*exe)->run(arguments, two);
    Expected<Literal> c = (*exe)->run(arguments, whole);
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(a->toString(), b->toString());
    EXPECT_EQ(a->toString(), c->toString());
  }
  // Column-wise, the kernels cannot run a chunk of rows at a time: the exp
  // is computed again in each kernel that reads it, as before.
  std::string explained = explainModule(softmaxModule(64, 64, 1));
  EXPECT_EQ(explained.find("computes %e once"), std::string::npos) << explained;
  EXPECT_EQ(explained.find("run a chunk of rows at a time"), std::string::npos)
      << explained;
}
