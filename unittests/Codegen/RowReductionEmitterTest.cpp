//===- RowReductionEmitterTest.cpp - The GPU's row-reduction emitter ------===//
//
// Which reduces are row-reduction heroes on the GPU (and why the others are
// not), the maps checked by enumeration (every operand element read once;
// thread j of a row takes elements j, j + 16, ... of each run in order, as
// partial result j of the compiler's order; the tail by the row's first
// thread; each output written once by the row that read its elements), and
// compiled row reductions with producers and consumers against the
// evaluator in the compiler's order, bit for bit, with both launches.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Indexing/BruteForce.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

using namespace tessel;

namespace {

std::string reducer(const std::string &type, const std::string &op) {
  return "%red {\n  %a = " + type + "[] parameter(0)\n  %b = " + type +
         "[] parameter(1)\n  ROOT %s = " + type + "[] " + op + "(%a, %b)\n}\n";
}

std::unique_ptr<HloModule> moduleOf(const std::string &type,
                                    const std::string &op,
                                    const std::string &body) {
  return parseTestModule("HloModule m\n" + reducer(type, op) + "ENTRY e {\n" +
                         body + "\n}\n");
}

/// The analysis of a module that is gone: its hero must not be read.
FusionAnalysis analyzeOnGpu(const std::string &type, const std::string &op,
                            const std::string &body) {
  auto module = moduleOf(type, op, body);
  if (!module)
    return {};
  return analyzeFusion(*module->entry(), {}, Target::Gpu);
}

TEST(RowReductionHeroTest, RowReductionsAreHeroesOnTheGpuOnly) {
  const char *sum = R"(
  %p = f32[300,1000] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[300] reduce(%p, %z), dimensions={1}, to_apply=%red)";
  auto module = moduleOf("f32", "add", sum);
  ASSERT_TRUE(module);
  EXPECT_EQ(analyzeFusion(*module->entry()).kind, EmitterKind::Loop);
  FusionAnalysis a = analyzeFusion(*module->entry(), {}, Target::Gpu);
  ASSERT_EQ(a.kind, EmitterKind::RowReduction) << a.reason;
  EXPECT_EQ(a.rowReduction.rows, 300);
  EXPECT_EQ(a.rowReduction.outer, 1);
  EXPECT_EQ(a.rowReduction.minor, 1000);
  EXPECT_TRUE(a.rowReduction.inPartials);
  RowReductionLaunch launch = getRowReductionLaunch(a.rowReduction);
  EXPECT_EQ(launch.rowsPerBlock, 16);
  EXPECT_EQ(launch.config.numThreads, 256);
  EXPECT_EQ(launch.config.numBlocks, 19);
  EXPECT_EQ(launch.tileShape, (std::vector<int64_t>{16, 1, 16}));

  // A max of f32 is not in the compiler's partial order, but its bits do
  // not depend on the order.
  a = analyzeOnGpu("f32", "maximum", R"(
  %p = f32[5,7,64] parameter(0)
  %z = f32[] constant(-inf)
  ROOT %r = f32[5] reduce(%p, %z), dimensions={1,2}, to_apply=%red)");
  ASSERT_EQ(a.kind, EmitterKind::RowReduction) << a.reason;
  EXPECT_FALSE(a.rowReduction.inPartials);
  EXPECT_EQ(a.rowReduction.outer, 7);
  EXPECT_EQ(a.rowReduction.outerDims, (std::vector<int64_t>{1}));
  launch = getRowReductionLaunch(a.rowReduction);
  EXPECT_EQ(launch.rowsPerBlock, 5);
  EXPECT_EQ(launch.config.numBlocks, 1);

  // Runs of partial results that would fill shared memory: fewer rows per
  // block (50 runs of 16 f32 are 3200 bytes a row: 4 rows).
  a = analyzeOnGpu("f32", "add", R"(
  %p = f32[40,50,64] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[40] reduce(%p, %z), dimensions={1,2}, to_apply=%red)");
  ASSERT_EQ(a.kind, EmitterKind::RowReduction) << a.reason;
  launch = getRowReductionLaunch(a.rowReduction);
  EXPECT_EQ(launch.rowsPerBlock, 4);
  EXPECT_EQ(launch.config.numThreads, 64);
  EXPECT_EQ(launch.config.numBlocks, 10);
}

TEST(RowReductionHeroTest, RejectionsSayWhy) {
  struct Case {
    const char *type, *op, *body, *why;
  } cases[] = {
      // bf16 sums round after every add: the order shows in the bits.
      {"bf16", "add",
       "%p = bf16[8,64] parameter(0)\n%z = bf16[] constant(0)\n"
       "ROOT %r = bf16[8] reduce(%p, %z), dimensions={1}, to_apply=%red",
       "a row reduction, but its result depends on the order"},
      {"f32", "add",
       "%p = f32[8,31] parameter(0)\n%z = f32[] constant(0)\n"
       "ROOT %r = f32[8] reduce(%p, %z), dimensions={1}, to_apply=%red",
       "31 contiguous elements"},
      {"f32", "add",
       "%p = f32[8,64]{0,1} parameter(0)\n%z = f32[] constant(0)\n"
       "ROOT %r = f32[8] reduce(%p, %z), dimensions={1}, to_apply=%red",
       "not a column reduction (it keeps 8 elements per row"},
      {"f64", "add",
       "%p = f64[4,300,64] parameter(0)\n%z = f64[] constant(0)\n"
       "ROOT %r = f64[4] reduce(%p, %z), dimensions={1,2}, to_apply=%red",
       "300 elements"},
      // Read back through a broadcast: not an elementwise epilogue.
      {"f32", "add",
       "%p = f32[8,64] parameter(0)\n%z = f32[] constant(0)\n"
       "%r = f32[8] reduce(%p, %z), dimensions={1}, to_apply=%red\n"
       "%b = f32[8,64] broadcast(%r), dimensions={0}\n"
       "ROOT %d = f32[8,64] subtract(%p, %b)",
       "not elementwise"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.body);
    FusionAnalysis a = analyzeOnGpu(c.type, c.op, c.body);
    EXPECT_EQ(a.kind, EmitterKind::Loop);
    ASSERT_EQ(a.rejected.size(), 1u);
    EXPECT_NE(a.rejected[0].find(c.why), std::string::npos) << a.rejected[0];
  }
}

/// Enumerates the maps of the row-reduction emitter: every operand element
/// is read once; the reads of slot (block, tile row, run, lane) are the
/// elements lane, lane + 16, ... of one run of one output element, chunk
/// after chunk (partial result `lane` of the compiler's order), the run
/// being the row-major index of the other reduced dims; the tail of each
/// run goes to lane 0; each output is written once, by the tile row whose
/// slots hold its elements.
std::string checkRowReductionMaps(const HloInstruction &reduce,
                                  const RowReduction &r,
                                  mlir::MLIRContext *context) {
  IndexingMap read = getRowReductionReadMap(reduce, r, context);
  IndexingMap write = getRowReductionWriteMap(reduce, r, context);
  Expected<std::vector<DomainPoint>> reads = enumerateDomain(read, 1 << 22);
  Expected<std::vector<DomainPoint>> writes = enumerateDomain(write, 1 << 22);
  if (!reads || !writes)
    return "cannot enumerate";
  std::vector<DomainPoint> tails;
  int64_t whole = r.minor / kRowReductionLanes * kRowReductionLanes;
  if (whole < r.minor) {
    Expected<std::vector<DomainPoint>> t = enumerateDomain(
        getRowReductionTailMap(reduce, r, context), int64_t(1) << 22);
    if (!t)
      return "cannot enumerate the tail";
    tails = std::move(*t);
  }
  const Shape &operand = reduce.operand(0)->shape();
  size_t rank = operand.rank();
  std::vector<bool> isReduced(rank, false);
  for (int64_t d : reduce.dimensions())
    isReduced[d] = true;
  // The kept index and the run of an operand index.
  auto split = [&](const std::vector<int64_t> &index, int64_t *run) {
    std::vector<int64_t> kept;
    for (size_t d = 0; d < rank; ++d)
      if (!isReduced[d])
        kept.push_back(index[d]);
    *run = 0;
    for (int64_t d : r.outerDims)
      *run = *run * operand.dims[d] + index[d];
    return kept;
  };
  std::map<std::vector<int64_t>, int> seen;
  // (block, tile row) -> the kept index its slots read.
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> rowOf;
  auto claim = [&](int64_t block, int64_t tileRow,
                   const std::vector<int64_t> &kept) {
    auto [it, inserted] = rowOf.insert({{block, tileRow}, kept});
    return inserted || it->second == kept;
  };
  for (const DomainPoint &p : *reads) {
    std::vector<int64_t> index(p.results.begin(), p.results.begin() + rank);
    for (size_t d = 0; d < rank; ++d)
      if (index[d] < 0 || index[d] >= operand.dims[d])
        return "a read outside the operand";
    if (++seen[index] > 1)
      return "an operand element is read twice";
    int64_t tileRow = p.results[rank], run = p.results[rank + 1],
            lane = p.results[rank + 2];
    int64_t block = p.dims[1], chunk = p.dims[3];
    if (lane != p.dims[0] % kRowReductionLanes ||
        tileRow != p.dims[0] / kRowReductionLanes)
      return "a thread writes another thread's slot";
    int64_t indexRun;
    std::vector<int64_t> kept = split(index, &indexRun);
    if (!claim(block, tileRow, kept))
      return "one tile row reads elements of two outputs";
    if (run != p.dims[2] || indexRun != run)
      return "a slot takes elements of another run";
    if (index[r.minorDim] != chunk * kRowReductionLanes + lane)
      return "partial result " + std::to_string(lane) +
             " takes an element that is not lane + 16 * chunk";
  }
  for (const DomainPoint &p : tails) {
    std::vector<int64_t> index(p.results.begin(), p.results.end());
    if (p.dims[0] % kRowReductionLanes != 0)
      return "a tail element is read by a thread other than the row's first";
    if (++seen[index] > 1)
      return "an operand element is read twice";
    int64_t indexRun;
    std::vector<int64_t> kept = split(index, &indexRun);
    if (!claim(p.dims[1], p.dims[0] / kRowReductionLanes, kept))
      return "a tail element of another output";
    if (indexRun != p.dims[2] || index[r.minorDim] != whole + p.dims[3])
      return "the tail is not the run's last elements in order";
  }
  int64_t elements = 1;
  for (int64_t d : operand.dims)
    elements *= d;
  if (static_cast<int64_t>(seen.size()) != elements)
    return "some operand elements are not read";
  std::map<std::vector<int64_t>, int> written;
  for (const DomainPoint &p : *writes) {
    if (p.dims[0] % kRowReductionLanes != 0)
      return "an output is written by a thread other than the row's first";
    std::vector<int64_t> out(p.results.begin(), p.results.end() - 1);
    auto it = rowOf.find({p.dims[1], p.results.back()});
    if (it == rowOf.end() || it->second != out ||
        p.results.back() != p.dims[0] / kRowReductionLanes)
      return "an output is written from another output's partial results";
    if (++written[out] > 1)
      return "an output element is written twice";
  }
  if (written.size() != rowOf.size())
    return "some outputs are not written";
  return "";
}

TEST(RowReductionEmitterTest, MapsByEnumeration) {
  mlir::MLIRContext context;
  for (const char *body : {
           "%p = f32[300,100] parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[300] reduce(%p, %z), dimensions={1}, to_apply=%red",
           // Two runs per output element, a tail of 5; 3 rows.
           "%p = f32[3,2,37] parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[3] reduce(%p, %z), dimensions={1,2}, to_apply=%red",
           // A kept dim between reduced ones, an output of two dims in a
           // column-major layout, size-1 dims.
           "%p = f32[4,5,1,6,48] parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[5,1]{0,1} reduce(%p, %z), dimensions={0,3,4}, "
           "to_apply=%red",
           // The minor dim in memory is dim 0.
           "%p = f32[40,9,7]{0,2,1} parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[9,7] reduce(%p, %z), dimensions={0}, "
           "to_apply=%red",
           // A whole array to one element.
           "%p = f32[2,100] parameter(0)\n%z = f32[] constant(0)\n"
           "ROOT %r = f32[] reduce(%p, %z), dimensions={0,1}, to_apply=%red",
       }) {
    SCOPED_TRACE(body);
    auto module = moduleOf("f32", "add", body);
    ASSERT_TRUE(module);
    FusionAnalysis a = analyzeFusion(*module->entry(), {}, Target::Gpu);
    ASSERT_EQ(a.kind, EmitterKind::RowReduction) << a.reason;
    EXPECT_EQ(checkRowReductionMaps(*a.hero, a.rowReduction, &context), "");
  }
}

/// Finite values over 12 decades (so that the order of a sum shows in its
/// bits) for float parameters, the usual random values with special ones
/// otherwise.
std::vector<Literal> wideArguments(const HloModule &module, uint64_t seed) {
  std::vector<Literal> arguments = randomArguments(module, seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1000.0, 1000.0);
  for (Literal &x : arguments) {
    PrimitiveType type = x.elementType();
    if (type != PrimitiveType::F32 && type != PrimitiveType::F64)
      continue;
    for (int64_t i = 0; i < x.elementCount(); ++i)
      x.setDouble(i, value(rng) * std::ldexp(1.0, int(rng() % 40) - 20));
  }
  return arguments;
}

TEST(RowReductionEmitterTest, RandomRowReductionsMatchTheEvaluator) {
  // Sums of f32/f64 in the compiler's order (finite values, so that a sum
  // in another order gives other bits), max/min of floats and integer ops
  // in any order (special values included); rank 2 to 4, the minor dim
  // reduced with others or alone, some column-major layouts, a producer
  // and an epilogue; the GPU's launch runs the row-reduction emitter.
  struct Case {
    const char *type, *op, *init;
  } cases[] = {{"f32", "add", "0.5"},      {"f64", "add", "-2"},
               {"f32", "maximum", "-inf"}, {"bf16", "minimum", "inf"},
               {"f16", "maximum", "-inf"}, {"f64", "minimum", "inf"},
               {"s32", "add", "3"},        {"u8", "multiply", "1"},
               {"s16", "maximum", "-5"},   {"u32", "xor", "0"}};
  std::mt19937 rng(29);
  int trial = 0;
  for (int round = 0; round < 3; ++round)
    for (const Case &c : cases) {
      int rank = 2 + static_cast<int>(rng() % 3);
      std::vector<int64_t> dims;
      for (int d = 0; d < rank; ++d)
        dims.push_back(1 + rng() % 9);
      // The minor dim in memory: the last one, or (one case in four) the
      // first, in a layout that walks the rest from the last.
      bool firstMinor = rng() % 4 == 0;
      int minorDim = firstMinor ? 0 : rank - 1;
      dims[minorDim] = 32 + rng() % 300;
      std::string layout;
      if (firstMinor) {
        layout = "{0";
        for (int d = rank - 1; d > 0; --d)
          layout += "," + std::to_string(d);
        layout += "}";
      }
      // The other reduced dims come before the minor one (the compiler's
      // order runs partial results along the last reduced dim).
      std::vector<int64_t> reduced = {minorDim}, keptDims;
      for (int d = 0; d < rank; ++d)
        if (d != minorDim) {
          if (d < minorDim && rng() % 3 == 0)
            reduced.push_back(d);
          else
            keptDims.push_back(d);
        }
      std::sort(reduced.begin(), reduced.end());
      std::vector<int64_t> outDims;
      for (int64_t d : keptDims)
        outDims.push_back(dims[d]);
      std::string reducedList;
      for (size_t k = 0; k < reduced.size(); ++k)
        reducedList += (k ? "," : "") + std::to_string(reduced[k]);
      std::string type = c.type;
      std::string in = shapeText(type, dims, layout);
      std::string out = shapeText(type, outDims);
      bool isFloat = type[0] == 'f' || type[0] == 'b';
      std::string producer = isFloat ? "negate" : "not";
      std::string text =
          "HloModule m\n" + reducer(type, c.op) + "ENTRY e {\n  %p = " + in +
          " parameter(0)\n  %n = " + in + " " + producer +
          "(%p)\n  %z = " + type + "[] constant(" + c.init +
          ")\n  %r = " + out + " reduce(%n, %z), dimensions={" + reducedList +
          "}, to_apply=%red\n  %q = " + out +
          " parameter(1)\n  ROOT %a = " + out + " add(%r, %q)\n}\n";
      SCOPED_TRACE(text);
      auto module = parseTestModule(text);
      ASSERT_TRUE(module);
      FusionAnalysis a = analyzeFusion(*module->entry(), {}, Target::Gpu);
      EXPECT_EQ(a.kind, EmitterKind::RowReduction) << a.reason;
      EXPECT_EQ(checkBothLaunches(*module, wideArguments(*module, 70 + trial)),
                "");
      ++trial;
    }
}

TEST(RowReductionEmitterTest, CpuRowsReadSeveralAtATimeMatchTheEvaluator) {
  // On the CPU the loop emitter reduces a row per thread, and
  // -tessel-jam-reduction-loops runs 4 threads' rows in one loop (2 where 4
  // does not divide the threads, none for 7; behind a bounds check, where
  // all 4 are in bounds): each row's elements are
  // still combined in order, so a max with NaNs and signed zeros, an
  // argmax (two carried values) and an integer sum give the evaluator's
  // bits, with one worker and with two.
  const char *argmax = R"(
%red {
  %av = f32[] parameter(0)
  %ai = s32[] parameter(1)
  %bv = f32[] parameter(2)
  %bi = s32[] parameter(3)
  %gt = pred[] compare(%av, %bv), direction=GT
  %eq = pred[] compare(%av, %bv), direction=EQ
  %lt = pred[] compare(%ai, %bi), direction=LT
  %tie = pred[] and(%eq, %lt)
  %pick = pred[] or(%gt, %tie)
  %v = f32[] select(%pick, %av, %bv)
  %i = s32[] select(%pick, %ai, %bi)
  ROOT %t = (f32[], s32[]) tuple(%v, %i)
}
)";
  // 302 rows of 1000: 19 blocks of 16 threads, each thread's row behind a
  // bounds check; rows 300 and 301 share a group of 4 with two rows out of
  // bounds, which runs thread by thread.
  for (int64_t rows : {8, 12, 6, 7, 302})
    for (int which = 0; which < 4; ++which) {
      std::string r = std::to_string(rows), text;
      std::string length = rows == 302 ? "1000" : "100";
      if (which < 3) {
        const char *type = which == 0 ? "f32" : which == 1 ? "bf16" : "s32";
        const char *op = which == 0   ? "maximum"
                         : which == 1 ? "minimum"
                                      : "add";
        const char *init = which == 0 ? "-inf" : which == 1 ? "inf" : "0";
        text = "HloModule m\n" + reducer(type, op) +
               "ENTRY e {\n  %p = " + type + "[" + r + "," + length +
               "] parameter(0)\n  %z = " + type + "[] constant(" + init +
               ")\n  ROOT %r = " + type + "[" + r +
               "] reduce(%p, %z), dimensions={1}, to_apply=%red\n}\n";
      } else {
        text =
            "HloModule m\n" + std::string(argmax) + "ENTRY e {\n  %p = f32[" +
            r + "," + length + "] parameter(0)\n  %io = s32[" + r + "," +
            length +
            "] iota(), iota_dimension=1\n  %ninf = f32[] "
            "constant(-inf)\n  %zero = s32[] constant(0)\n  ROOT %r = (f32[" +
            r + "], s32[" + r +
            "]) reduce(%p, %io, %ninf, %zero), dimensions={1}, "
            "to_apply=%red\n}\n";
      }
      SCOPED_TRACE(text);
      auto module = parseTestModule(text);
      ASSERT_TRUE(module);
      ASSERT_EQ(analyzeFusion(*module->entry()).kind, EmitterKind::Loop);
      std::vector<Literal> arguments = randomArguments(*module, 90 + rows);
      for (int threads : {1, 2}) {
        KernelCheckResult check =
            checkKernels(*module, arguments, CompileOptions(), threads);
        EXPECT_FALSE(check.refused) << check.failure;
        EXPECT_EQ(check.failure, "") << threads << " workers";
      }
    }
}

} // namespace
