//===- ScatterEmitterTest.cpp - The scatter emitter -----------------------===//
//
// The scatter hero: which kernels get it and why not, its map by
// enumeration, and random scatters (random dimension numbers: inserted,
// window and batching dims, any index_vector_dim; index values that
// collide and fall out of bounds; add, multiply, maximum and replace) with
// producers and consumers against the evaluator, bit for bit, with the
// CPU's and the GPU's launch; variadic scatters (several operands and
// updates, one kernel writing every output); unique_indices scatters with a
// thread per update.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Indexing/BruteForce.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>

using namespace tessel;

namespace {

/// A combiner computation `combine` of `op` (add, multiply, maximum, or
/// replace: the update wins).
std::string combiner(const std::string &type, const std::string &op) {
  std::string text = "combine {\n  a = " + type + "[] parameter(0)\n";
  if (op == "replace")
    return text + "  ROOT b = " + type + "[] parameter(1)\n}\n";
  return text + "  b = " + type + "[] parameter(1)\n  ROOT r = " + type +
         "[] " + op + "(a, b)\n}\n";
}

/// A variadic combiner `combine` of 2n parameters (the n current elements,
/// then the n updates) returning n values: `ops[k]` on element k, or with
/// `ops` {"argmax"} each element taken from the update where update 0 is
/// greater than element 0 (jax's argmax-style pairs).
std::string variadicCombiner(const std::vector<std::string> &types,
                             const std::vector<std::string> &ops) {
  size_t n = types.size();
  std::string text = "combine {\n", tuple;
  for (size_t k = 0; k < 2 * n; ++k)
    text += "  p" + std::to_string(k) + " = " + types[k % n] + "[] parameter(" +
            std::to_string(k) + ")\n";
  if (ops.front() == "argmax")
    text +=
        "  gt = pred[] compare(p" + std::to_string(n) + ", p0), direction=GT\n";
  for (size_t k = 0; k < n; ++k) {
    std::string a = "p" + std::to_string(k), b = "p" + std::to_string(n + k);
    std::string r = "r" + std::to_string(k);
    if (ops.front() == "argmax")
      text +=
          "  " + r + " = " + types[k] + "[] select(gt, " + b + ", " + a + ")\n";
    else if (ops[k] == "replace")
      r = b;
    else
      text += "  " + r + " = " + types[k] + "[] " + ops[k] + "(" + a + ", " +
              b + ")\n";
    tuple += (k ? ", " : "") + r;
  }
  std::string shapes;
  for (size_t k = 0; k < n; ++k)
    shapes += (k ? ", " : "") + types[k] + "[]";
  return text + "  ROOT t = (" + shapes + ") tuple(" + tuple + ")\n}\n";
}

struct RandomScatter {
  std::string text;
  /// The largest operand dim, for index values around the valid range.
  int64_t maxDim = 1;
  /// The indices' parameter number (the number of operands).
  int64_t indexParameter = 1;
};

/// The attributes after update_window_dims, to_apply included.
std::string dimensionNumbers(const std::vector<int64_t> &inserted,
                             const std::vector<int64_t> &toOperand,
                             const std::vector<int64_t> &batching,
                             const std::vector<int64_t> &indicesBatching,
                             int64_t vectorDim) {
  return ", inserted_window_dims=" + listText(inserted) +
         ", scatter_dims_to_operand_dims=" + listText(toOperand) +
         (batching.empty() ? std::string()
                           : ", input_batching_dims=" + listText(batching) +
                                 ", scatter_indices_batching_dims=" +
                                 listText(indicesBatching)) +
         ", index_vector_dim=" + std::to_string(vectorDim) +
         ", to_apply=%combine\n";
}

/// The module of a variadic scatter of `types` with the given dims:
/// operands %op<k> (parameters 0 to n-1, each sometimes negated first),
/// %idx (parameter n), updates %up<k> (parameters n+1 to 2n, each
/// sometimes negated); the scatter is the ROOT, or its elements are read
/// through get-tuple-element by an epilogue (abs of element 0).
RandomScatter variadicScatterText(
    std::mt19937 &rng, const std::vector<std::string> &types,
    const std::vector<std::string> &ops, const std::vector<int64_t> &dims,
    const std::vector<int64_t> &indexDims,
    const std::vector<int64_t> &updateDims, RandomScatter r,
    const std::function<std::string(const std::string &, const std::string &)>
        &scatterCall) {
  size_t n = types.size();
  std::string body, operands, updates, resultShape;
  for (size_t k = 0; k < n; ++k)
    body += "  %op" + std::to_string(k) + " = " + types[k] +
            shapeText("", dims) + " parameter(" + std::to_string(k) + ")\n";
  body += "  %idx = s32" + shapeText("", indexDims) + " parameter(" +
          std::to_string(n) + ")\n";
  for (size_t k = 0; k < n; ++k)
    body += "  %up" + std::to_string(k) + " = " + types[k] +
            shapeText("", updateDims) + " parameter(" +
            std::to_string(n + 1 + k) + ")\n";
  for (size_t k = 0; k < n; ++k) {
    std::string name = "%op" + std::to_string(k);
    if (rng() % 100 < 25) {
      body += "  %o" + std::to_string(k) + " = " + types[k] +
              shapeText("", dims) + " negate(" + name + ")\n";
      name = "%o" + std::to_string(k);
    }
    operands += (k ? ", " : "") + name;
    name = "%up" + std::to_string(k);
    if (rng() % 100 < 25) {
      body += "  %u" + std::to_string(k) + " = " + types[k] +
              shapeText("", updateDims) + " negate(" + name + ")\n";
      name = "%u" + std::to_string(k);
    }
    updates += (k ? ", " : "") + name;
    resultShape += (k ? ", " : "") + types[k] + shapeText("", dims);
  }
  bool epilogue = rng() % 100 < 30;
  body += std::string(epilogue ? "  %s = (" : "  ROOT %s = (") + resultShape +
          ")" + scatterCall(operands, updates);
  if (epilogue) {
    std::string elements;
    for (size_t k = 0; k < n; ++k) {
      body += "  %g" + std::to_string(k) + " = " + types[k] +
              shapeText("", dims) +
              " get-tuple-element(%s), index=" + std::to_string(k) + "\n";
      elements += (k ? ", %g" : "%a") + std::to_string(k);
    }
    body += "  %a0 = " + types[0] + shapeText("", dims) + " abs(%g0)\n";
    body += "  ROOT %t = (" + resultShape + ") tuple(" + elements + ")\n";
  }
  r.indexParameter = static_cast<int64_t>(n);
  r.text = "HloModule m\n" + variadicCombiner(types, ops) + "ENTRY e {\n" +
           body + "}\n";
  return r;
}

/// A scatter with random dimension numbers: operand of rank 1 to 3, some
/// dims inserted, sometimes one batching dim, the index vector at any
/// position (or implicit), 0 to 2 more batch dims of the indices; the
/// operand sometimes computed (a negate), the updates sometimes computed,
/// and sometimes an epilogue after the scatter. With several `types` (and
/// `ops` for them, see variadicCombiner) a variadic scatter of one operand
/// and one update of each type.
RandomScatter randomScatter(std::mt19937 &rng,
                            const std::vector<std::string> &types,
                            const std::vector<std::string> &ops) {
  auto chance = [&](int percent) {
    return static_cast<int>(rng() % 100) < percent;
  };
  int rank = 1 + static_cast<int>(rng() % 3);
  std::vector<int64_t> dims;
  RandomScatter r;
  for (int d = 0; d < rank; ++d) {
    dims.push_back(1 + rng() % 6);
    r.maxDim = std::max(r.maxDim, dims.back());
  }
  std::vector<int64_t> batching;
  if (rank >= 2 && chance(25))
    batching.push_back(rng() % rank);
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(batching.begin(), batching.end(), d) == batching.end())
      rest.push_back(d);
  std::vector<int64_t> toOperand = rest;
  std::shuffle(toOperand.begin(), toOperand.end(), rng);
  toOperand.resize(1 + rng() % rest.size());
  std::vector<int64_t> inserted, windowDims;
  for (int64_t d : rest)
    if (chance(40))
      inserted.push_back(d);
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(inserted.begin(), inserted.end(), d) == inserted.end() &&
        std::find(batching.begin(), batching.end(), d) == batching.end())
      windowDims.push_back(d);
  // The indices' batch dims (the batching one at a random place).
  std::vector<int64_t> batch;
  for (int64_t n = rng() % 3; n > 0; --n)
    batch.push_back(1 + rng() % 4);
  int64_t batchingAt = -1;
  if (!batching.empty()) {
    batchingAt = rng() % (batch.size() + 1);
    batch.insert(batch.begin() + batchingAt, dims[batching.front()]);
  }
  int64_t k = static_cast<int64_t>(toOperand.size());
  std::vector<int64_t> indexDims = batch;
  int64_t vectorDim = static_cast<int64_t>(batch.size());
  if (k > 1 || chance(60)) {
    vectorDim = rng() % (batch.size() + 1);
    indexDims.insert(indexDims.begin() + vectorDim, k);
  }
  std::vector<int64_t> indicesBatching;
  if (batchingAt >= 0)
    indicesBatching.push_back(batchingAt < vectorDim ? batchingAt
                                                     : batchingAt + 1);
  // The updates: the batch dims in order, the window dims at random
  // (sorted) positions.
  int64_t updateRank = static_cast<int64_t>(batch.size() + windowDims.size());
  std::vector<int64_t> positions(updateRank);
  for (int64_t p = 0; p < updateRank; ++p)
    positions[p] = p;
  std::shuffle(positions.begin(), positions.end(), rng);
  std::vector<int64_t> updateWindowDims(positions.begin(),
                                        positions.begin() + windowDims.size());
  std::sort(updateWindowDims.begin(), updateWindowDims.end());
  std::vector<int64_t> updateDims(updateRank);
  for (size_t w = 0, b = 0, p = 0; p < updateDims.size(); ++p) {
    if (w < updateWindowDims.size() &&
        updateWindowDims[w] == static_cast<int64_t>(p)) {
      updateDims[p] = 1 + rng() % dims[windowDims[w]];
      ++w;
    } else {
      updateDims[p] = batch[b++];
    }
  }
  if (types.size() > 1)
    return variadicScatterText(
        rng, types, ops, dims, indexDims, updateDims, r,
        [&](const std::string &operands, const std::string &updates) {
          return " scatter(" + operands + ", %idx, " + updates +
                 "), update_window_dims=" + listText(updateWindowDims) +
                 dimensionNumbers(inserted, toOperand, batching,
                                  indicesBatching, vectorDim);
        });
  const std::string &t = types.front();
  const std::string &op = ops.front();
  std::string body = "  %op = " + t + shapeText("", dims) + " parameter(0)\n" +
                     "  %idx = s32" + shapeText("", indexDims) +
                     " parameter(1)\n" + "  %up = " + t +
                     shapeText("", updateDims) + " parameter(2)\n";
  std::string operand = "%op", updates = "%up";
  if (chance(30)) {
    body += "  %o = " + t + shapeText("", dims) + " negate(%op)\n";
    operand = "%o";
  }
  if (chance(30)) {
    body += "  %u = " + t + shapeText("", updateDims) + " negate(%up)\n";
    updates = "%u";
  }
  bool epilogue = chance(30);
  body += std::string(epilogue ? "  %s = " : "  ROOT %s = ") + t +
          shapeText("", dims) + " scatter(" + operand + ", %idx, " + updates +
          "), update_window_dims=" + listText(updateWindowDims) +
          dimensionNumbers(inserted, toOperand, batching, indicesBatching,
                           vectorDim);
  if (epilogue)
    body += "  ROOT %a = " + t + shapeText("", dims) + " abs(%s)\n";
  r.text = "HloModule m\n" + combiner(t, op) + "ENTRY e {\n" + body + "}\n";
  return r;
}

/// Index values in [-2, maxDim + 1]: most in range, many colliding, some
/// out of bounds (those updates are skipped).
Literal indexValues(const Shape &shape, int64_t maxDim, std::mt19937 &rng) {
  Literal literal(shape);
  for (int64_t i = 0; i < literal.elementCount(); ++i)
    literal.setInt(i, static_cast<int64_t>(rng() % (maxDim + 4)) - 2);
  return literal;
}

TEST(ScatterHeroTest, ChosenAndRejectedWithReasons) {
  auto module = parseTestModule(R"(HloModule m
combine {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  op = f32[6,5] parameter(0)
  idx = s32[4,1] parameter(1)
  up = f32[4,5] parameter(2)
  ROOT s = f32[6,5] scatter(op, idx, up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
}
)");
  ASSERT_TRUE(module);
  FusionAnalysis chosen = analyzeFusion(*module->entry());
  EXPECT_EQ(chosen.kind, EmitterKind::Scatter);
  EXPECT_NE(chosen.reason.find("one after the other in the evaluator's order"),
            std::string::npos)
      << chosen.reason;
  Expected<std::string> explain =
      emitHloModule(*module, EmitKind::Explain, CompileOptions{});
  ASSERT_TRUE(explain) << explain.error().message;
  EXPECT_NE(explain->find("emitter: scatter: %s scatters into its operand"),
            std::string::npos)
      << *explain;
  // The operand is read by the updates too: the buffer cannot be updated
  // in place, so the computation cannot be compiled as one kernel.
  auto shared = parseTestModule(R"(HloModule m
combine {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  op = f32[6,5] parameter(0)
  idx = s32[4,1] parameter(1)
  up = f32[4,5] slice(op), slice={[0:4], [0:5]}
  ROOT s = f32[6,5] scatter(op, idx, up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
}
)");
  ASSERT_TRUE(shared);
  FusionAnalysis rejected = analyzeFusion(*shared->entry());
  EXPECT_EQ(rejected.kind, EmitterKind::Loop);
  std::string all;
  for (const std::string &why : rejected.rejected)
    all += why + "\n";
  EXPECT_NE(all.find("%s is not a scatter hero: its operand %op has other "
                     "users"),
            std::string::npos)
      << all;
}

TEST(ScatterEmitterTest, MapsByEnumeration) {
  mlir::MLIRContext context;
  std::mt19937 rng(59);
  for (int trial = 0; trial < 40; ++trial) {
    RandomScatter r = randomScatter(rng, {"f32"}, {"add"});
    auto module = parseTestModule(r.text);
    ASSERT_TRUE(module);
    const HloInstruction *s = module->entry()->instruction("s");
    ASSERT_NE(s, nullptr);
    const Shape &updates = s->operand(2)->shape();
    int64_t n = 1;
    for (int64_t d : updates.dims)
      n *= d;
    for (bool unique : {false, true})
      for (Target target : {Target::Cpu, Target::Gpu}) {
        LaunchConfig config = getScatterLaunch(*s, unique, target);
        Expected<std::vector<DomainPoint>> points = enumerateDomain(
            getScatterUpdateMap(*s, unique, config, &context), 1 << 22);
        ASSERT_TRUE(points) << points.error().message;
        std::map<std::vector<int64_t>, int> hits;
        for (const DomainPoint &point : *points) {
          std::vector<int64_t> index(point.results.begin(),
                                     point.results.end());
          for (size_t d = 0; d < index.size(); ++d)
            ASSERT_TRUE(index[d] >= 0 && index[d] < updates.dims[d]) << r.text;
          ++hits[index];
        }
        EXPECT_EQ(static_cast<int64_t>(hits.size()), n) << r.text;
        for (const auto &[index, count] : hits)
          EXPECT_EQ(count, 1) << r.text;
        if (!unique) {
          EXPECT_EQ(config.numThreads * config.numBlocks, 1);
        }
      }
  }
}

TEST(ScatterEmitterTest, RandomScattersMatchTheEvaluatorBitForBit) {
  std::mt19937 rng(61);
  const char *types[] = {"f32", "bf16", "s32", "f16"};
  const char *ops[] = {"add", "multiply", "maximum", "replace", "add"};
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    RandomScatter r = randomScatter(rng, {types[trial % 4]}, {ops[trial % 5]});
    SCOPED_TRACE(r.text);
    auto module = parseTestModule(r.text);
    ASSERT_TRUE(module);
    Status problem = verifyHloModule(*module);
    ASSERT_TRUE(problem) << problem.error().message;
    std::vector<Literal> arguments = randomArguments(*module, 1100 + trial);
    arguments[1] = indexValues(arguments[1].shape(), r.maxDim, rng);
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
    ++checked;
  }
  EXPECT_EQ(checked, 40);
}

// Variadic scatters (2 or 3 operands of mixed types, one set of indices):
// per-element combiners, or element 0 deciding for all (argmax-style), the
// random dimension numbers and index values above; one kernel writes the n
// outputs, bit for bit the evaluator's with both launches.
TEST(ScatterEmitterTest, RandomVariadicScattersMatchTheEvaluatorBitForBit) {
  std::mt19937 rng(71);
  const char *types[] = {"f32", "bf16", "s32", "f16"};
  const char *ops[] = {"add", "multiply", "maximum", "replace"};
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    size_t n = 2 + trial % 2;
    std::vector<std::string> operandTypes, combine;
    for (size_t k = 0; k < n; ++k) {
      operandTypes.push_back(types[rng() % 4]);
      combine.push_back(ops[rng() % 4]);
    }
    if (trial % 3 == 0)
      combine = {"argmax"};
    RandomScatter r = randomScatter(rng, operandTypes, combine);
    SCOPED_TRACE(r.text);
    auto module = parseTestModule(r.text);
    ASSERT_TRUE(module);
    Status problem = verifyHloModule(*module);
    ASSERT_TRUE(problem) << problem.error().message;
    std::vector<Literal> arguments = randomArguments(*module, 1500 + trial);
    arguments[r.indexParameter] =
        indexValues(arguments[r.indexParameter].shape(), r.maxDim, rng);
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
    Expected<std::string> explain =
        emitHloModule(*module, EmitKind::Explain, CompileOptions{});
    ASSERT_TRUE(explain) << explain.error().message;
    EXPECT_NE(explain->find("emitter: scatter: %s scatters into its " +
                            std::to_string(n) + " operands"),
              std::string::npos)
        << *explain;
    ++checked;
  }
  EXPECT_EQ(checked, 40);
}

// A scatter whose updates are its operand reads the operand while it
// writes the output: the operand's buffer is copied, never updated in place,
// neither a temporary (reused otherwise) nor a donated parameter. Row i
// goes to row i + 1, so an update read from a buffer updated already would
// carry every earlier row along.
TEST(ScatterEmitterTest, OperandReadAsUpdatesIsCopied) {
  const std::string scatter =
      "scatter(op, idx, op), update_window_dims={1}, "
      "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
      "index_vector_dim=1, to_apply=combine\n";
  const std::string temporary =
      "HloModule m\n" + combiner("f32", "add") +
      "f {\n  op = f32[6,5] parameter(0)\n  idx = s32[6,1] parameter(1)\n"
      "  ROOT s = f32[6,5] " +
      scatter +
      "}\nENTRY e {\n  p = f32[6,5] parameter(0)\n  idx = s32[6,1] "
      "parameter(1)\n  n = f32[6,5] negate(p)\n  ROOT s = f32[6,5] "
      "fusion(n, idx), kind=kLoop, calls=f\n}\n";
  const std::string donated =
      "HloModule m, input_output_alias={ {}: (0, {}) }\n" +
      combiner("f32", "add") +
      "ENTRY e {\n  op = f32[6,5] parameter(0)\n  idx = s32[6,1] "
      "parameter(1)\n  ROOT s = f32[6,5] " +
      scatter + "}\n";
  for (const std::string &text : {temporary, donated}) {
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    std::vector<Literal> arguments = randomArguments(*module, 1700);
    for (int64_t i = 0; i < 6; ++i)
      arguments[1].setInt(i, (i + 1) % 6);
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
    Expected<std::string> explain =
        emitHloModule(*module, EmitKind::Explain, CompileOptions{});
    ASSERT_TRUE(explain) << explain.error().message;
    EXPECT_NE(explain->find("emitter: scatter:"), std::string::npos)
        << *explain;
    EXPECT_NE(explain->find("the operand's buffer is copied into the output "
                            "buffer once before the kernel"),
              std::string::npos)
        << *explain;
    if (text == donated) {
      EXPECT_NE(explain->find("(input_output_alias gives it parameter 0's "
                              "buffer, but the kernel reads the parameter "
                              "otherwise too)"),
                std::string::npos)
          << *explain;
    }
  }
}

TEST(ScatterEmitterTest, UniqueIndicesRunAThreadPerUpdate) {
  // Distinct positions (some out of bounds) of a rank-2 operand, one
  // element each: with unique_indices a thread takes each update.
  std::mt19937 rng(67);
  for (int trial = 0; trial < 12; ++trial) {
    int64_t rows = 2 + rng() % 30, cols = 1 + rng() % 40;
    std::vector<std::pair<int64_t, int64_t>> positions;
    for (int64_t i = -1; i <= rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        positions.push_back({i, j});
    std::shuffle(positions.begin(), positions.end(), rng);
    int64_t n = 1 + rng() % positions.size();
    std::string text =
        "HloModule m\n" + combiner("f32", "add") + "ENTRY e {\n  op = f32[" +
        std::to_string(rows) + "," + std::to_string(cols) +
        "] parameter(0)\n  idx = s32[" + std::to_string(n) +
        ",2] parameter(1)\n  up = f32[" + std::to_string(n) +
        "] parameter(2)\n  ROOT s = f32[" + std::to_string(rows) + "," +
        std::to_string(cols) +
        "] scatter(op, idx, up), update_window_dims={}, "
        "inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, "
        "index_vector_dim=1, unique_indices=true, to_apply=combine\n}\n";
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    std::vector<Literal> arguments = randomArguments(*module, 1300 + trial);
    for (int64_t i = 0; i < n; ++i) {
      arguments[1].setInt(2 * i, positions[i].first);
      arguments[1].setInt(2 * i + 1, positions[i].second);
    }
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
    Expected<std::string> explain =
        emitHloModule(*module, EmitKind::Explain, CompileOptions{});
    ASSERT_TRUE(explain) << explain.error().message;
    EXPECT_NE(explain->find("a thread per element (unique_indices"),
              std::string::npos)
        << *explain;
  }
}

} // namespace
