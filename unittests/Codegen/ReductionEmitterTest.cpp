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

#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Indexing/BruteForce.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

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
                               mlir::MLIRContext *context) {
  IndexingMap read = getColumnReductionReadMap(reduce, r, context);
  IndexingMap write = getColumnReductionWriteMap(reduce, r, context);
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
       }) {
    SCOPED_TRACE(body);
    auto module = parseTestModule("HloModule m\n" + reducer("f32", "add") +
                                  "ENTRY e {\n" + body + "\n}\n");
    ASSERT_TRUE(module);
    FusionAnalysis a = analyzeFusion(*module->entry());
    ASSERT_EQ(a.kind, EmitterKind::ColumnReduction) << a.reason;
    EXPECT_EQ(checkReductionMaps(*a.hero, a.reduction, &context), "");
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
