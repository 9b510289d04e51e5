//===- DynamicUpdateSliceEmitterTest.cpp - In-place dynamic-update-slice --===//
//
// The in-place dynamic-update-slice emitter: which fusions get it and why
// not, its map by enumeration (every update element written once), random
// updates with start indices in and out of range (XLA's clamping) against
// the evaluator with the CPU's and the GPU's launch, and the aliased case:
// the output buffer is the operand's, and the kernel writes only the
// update's elements. With input_output_alias an ENTRY parameter's buffer is
// updated in place too, unless something reads the parameter afterwards.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Dialect/ErrorDiagnostics.h"
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Indexing/BruteForce.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace tessel;

namespace {

FusionAnalysis analyze(const std::string &body) {
  auto module = parseTestModule("HloModule m\nENTRY e {\n" + body + "}\n");
  return module ? analyzeFusion(*module->entry()) : FusionAnalysis{};
}

/// A random dynamic-update-slice of a parameter (rank 1 to 3) by an update
/// (a parameter or a negated one), with start indices that are parameters
/// (random values: mostly out of range, so clamped) or constants around the
/// valid range, of a random index type.
std::string randomUpdate(std::mt19937 &rng, const char *type) {
  int rank = 1 + static_cast<int>(rng() % 3);
  std::vector<int64_t> dims, update;
  for (int d = 0; d < rank; ++d) {
    dims.push_back(1 + rng() % (rank > 2 ? 9 : 40));
    update.push_back(1 + rng() % dims.back());
  }
  const char *indexTypes[] = {"s32", "u32", "s64", "s8", "u64"};
  std::string indexType = indexTypes[rng() % 5];
  std::string body = "  %op = " + shapeText(type, dims) + " parameter(0)\n" +
                     "  %p1 = " + shapeText(type, update) + " parameter(1)\n";
  std::string u = "%p1";
  if (rng() % 2) {
    body += "  %u = " + shapeText(type, update) +
            (std::string(type) == "pred" ? " not(%p1)\n" : " negate(%p1)\n");
    u = "%u";
  }
  std::string starts;
  int params = 2;
  for (int d = 0; d < rank; ++d) {
    std::string name = "%i" + std::to_string(d);
    if (rng() % 2) {
      body += "  " + name + " = " + indexType + "[] parameter(" +
              std::to_string(params++) + ")\n";
    } else {
      int64_t value = static_cast<int64_t>(rng() % (dims[d] + 8)) - 3;
      // Unsigned: the largest values instead of negative ones (a u64 past
      // INT64_MAX clamps to the end, as the evaluator's).
      std::string text = std::to_string(value);
      if (indexType == "u64" && value < 0)
        text = std::to_string(~uint64_t(0) - uint64_t(-value - 1));
      else if (indexType[0] == 'u' && value < 0)
        text = std::to_string(uint32_t(value));
      body += "  " + name + " = " + indexType + "[] constant(" + text + ")\n";
    }
    starts += ", " + name;
  }
  body += "  ROOT %d = " + shapeText(type, dims) +
          " dynamic-update-slice(%op, " + u + starts + ")\n";
  return "HloModule m\nENTRY e {\n" + body + "}\n";
}

TEST(DynamicUpdateSliceHeroTest, ChosenAndRejectedWithReasons) {
  FusionAnalysis chosen =
      analyze("  %p = f32[8,6] parameter(0)\n  %u = f32[2,3] parameter(1)\n"
              "  %i = s32[] parameter(2)\n"
              "  ROOT %d = f32[8,6] dynamic-update-slice(%p, %u, %i, %i)\n");
  EXPECT_EQ(chosen.kind, EmitterKind::DynamicUpdateSlice);
  EXPECT_NE(chosen.reason.find("writes only the 6 elements of the update"),
            std::string::npos)
      << chosen.reason;
  auto rejectedFor = [](const FusionAnalysis &analysis) {
    std::string all;
    for (const std::string &why : analysis.rejected)
      all += why + "\n";
    return all;
  };
  // The operand is computed in the fusion.
  FusionAnalysis computed =
      analyze("  %p = f32[8,6] parameter(0)\n  %u = f32[2,3] parameter(1)\n"
              "  %i = s32[] parameter(2)\n  %n = f32[8,6] negate(%p)\n"
              "  ROOT %d = f32[8,6] dynamic-update-slice(%n, %u, %i, %i)\n");
  EXPECT_EQ(computed.kind, EmitterKind::Loop);
  EXPECT_NE(rejectedFor(computed).find(
                "%d is not updated in place: its operand %n is computed"),
            std::string::npos)
      << rejectedFor(computed);
  // The update reads the operand.
  FusionAnalysis shared =
      analyze("  %p = f32[8,6] parameter(0)\n  %i = s32[] parameter(1)\n"
              "  %s = f32[2,3] slice(%p), slice={[0:2], [0:3]}\n"
              "  ROOT %d = f32[8,6] dynamic-update-slice(%p, %s, %i, %i)\n");
  EXPECT_EQ(shared.kind, EmitterKind::Loop);
  EXPECT_NE(rejectedFor(shared).find("has other users"), std::string::npos)
      << rejectedFor(shared);
}

TEST(DynamicUpdateSliceEmitterTest, MapsByEnumeration) {
  mlir::MLIRContext context;
  std::mt19937 rng(47);
  for (int trial = 0; trial < 60; ++trial) {
    std::string text = randomUpdate(rng, "f32");
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    const HloInstruction &dus = *module->entry()->root();
    const Shape &update = dus.operand(1)->shape();
    int64_t n = 1;
    for (int64_t d : update.dims)
      n *= d;
    for (Target target : {Target::Cpu, Target::Gpu}) {
      LaunchConfig config = getDynamicUpdateSliceLaunch(dus, target);
      Expected<std::vector<DomainPoint>> points = enumerateDomain(
          getDynamicUpdateSliceMap(dus, config, &context), 1 << 22);
      ASSERT_TRUE(points) << points.error().message;
      std::map<std::vector<int64_t>, int> hits;
      for (const DomainPoint &point : *points) {
        std::vector<int64_t> index(point.results.begin(), point.results.end());
        for (size_t d = 0; d < index.size(); ++d)
          ASSERT_TRUE(index[d] >= 0 && index[d] < update.dims[d]) << text;
        ++hits[index];
      }
      EXPECT_EQ(static_cast<int64_t>(hits.size()), n) << text;
      for (const auto &[index, count] : hits)
        EXPECT_EQ(count, 1) << text;
    }
  }
}

TEST(DynamicUpdateSliceEmitterTest, RandomStartsClampLikeTheEvaluator) {
  std::mt19937 rng(53);
  const char *types[] = {"f32", "bf16", "s8", "f16", "s32", "pred"};
  for (int trial = 0; trial < 36; ++trial) {
    std::string text = randomUpdate(rng, types[trial % 6]);
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    EXPECT_EQ(analyzeFusion(*module->entry()).kind,
              EmitterKind::DynamicUpdateSlice);
    std::vector<Literal> arguments = randomArguments(*module, 700 + trial);
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
  }
}

TEST(DynamicUpdateSliceEmitterTest, U64StartsPastInt64MaxClampToTheEnd) {
  // As the evaluator: such a start is out of range high, so the update (or
  // the slice) goes to the end, not to 0 as a wrapped index would put it.
  auto module = parseTestModule(
      "HloModule m\nENTRY e {\n  %op = f32[8] parameter(0)\n"
      "  %u = f32[3] parameter(1)\n  %i = u64[] parameter(2)\n"
      "  %d = f32[8] dynamic-update-slice(%op, %u, %i)\n"
      "  %s = f32[2] dynamic-slice(%d, %i), dynamic_slice_sizes={2}\n"
      "  ROOT %t = (f32[8], f32[2]) tuple(%d, %s)\n}\n");
  ASSERT_TRUE(module);
  for (uint64_t start : {~uint64_t(0), uint64_t(1) << 63, uint64_t(3)}) {
    SCOPED_TRACE(start);
    std::vector<Literal> arguments = randomArguments(*module, 91);
    arguments[2].setBits(0, start);
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
  }
}

const char *kAliased = R"(HloModule m
negated {
  p = f32[64,48] parameter(0)
  ROOT n = f32[64,48] negate(p)
}
updated {
  op = f32[64,48] parameter(0)
  u = f32[5,7] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  e = f32[5,7] exponential(u)
  ROOT d = f32[64,48] dynamic-update-slice(op, e, i, j)
}
ENTRY e {
  p0 = f32[64,48] parameter(0)
  p1 = f32[5,7] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s32[] parameter(3)
  f = f32[64,48] fusion(p0), kind=kLoop, calls=negated
  ROOT g = f32[64,48] fusion(f, p1, p2, p3), kind=kLoop, calls=updated
}
)";

TEST(DynamicUpdateSliceEmitterTest, AliasedOperandBufferIsUpdatedInPlace) {
  auto module = parseTestModule(kAliased);
  ASSERT_TRUE(module);
  // The plan: the second kernel updates the first one's buffer.
  Expected<std::string> explain =
      emitHloModule(*module, EmitKind::Explain, CompileOptions{});
  ASSERT_TRUE(explain) << explain.error().message;
  EXPECT_NE(explain->find("emitter: dynamic-update-slice in place"),
            std::string::npos)
      << *explain;
  EXPECT_NE(explain->find("the output buffer is the operand's"),
            std::string::npos)
      << *explain;
  // Start indices in range, negative and past the end.
  for (int32_t start : {3, -20, 1000, 43}) {
    std::vector<Literal> arguments = randomArguments(*module, 900);
    arguments[2] = Literal::scalar(PrimitiveType::S32, start);
    arguments[3] = Literal::scalar(PrimitiveType::S32, start / 2);
    EXPECT_EQ(checkBothLaunches(*module, arguments), "") << start;
  }
  // The kernel writes the update's elements and nothing else: one
  // tensor.insert, in a loop over the update's 35 elements, and it never
  // reads the operand's argument.
  const HloComputation *updated = module->computation("updated");
  ASSERT_NE(updated, nullptr);
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> ir =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  ErrorCapture capture(&context);
  auto entry = emitFusion(*ir, *updated, "k", Target::Cpu);
  ASSERT_TRUE(mlir::succeeded(entry)) << capture.takeError("").message;
  // No function (the entry or a subgraph it calls, which take the same
  // parameters first) reads the operand, parameter 0.
  int operandReads = 0;
  ir->walk([&](mlir::tensor::ExtractOp extract) {
    auto argument = mlir::dyn_cast<mlir::BlockArgument>(extract.getTensor());
    operandReads += argument && argument.getArgNumber() == 0;
  });
  EXPECT_EQ(operandReads, 0);
  int inserts = 0;
  ir->walk([&](mlir::tensor::InsertOp) { ++inserts; });
  EXPECT_EQ(inserts, 1);
  const HloInstruction &dus = *updated->root();
  LaunchConfig config = getDynamicUpdateSliceLaunch(dus, Target::Cpu);
  Expected<std::vector<DomainPoint>> points =
      enumerateDomain(getDynamicUpdateSliceMap(dus, config, &context), 1 << 22);
  ASSERT_TRUE(points);
  EXPECT_EQ(points->size(), 35u);
}

/// jax's form with a donated operand: the ENTRY's parameter 0 is the
/// output's buffer.
const char *kEntryAliased =
    R"(HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  x = f32[64,48]{1,0} parameter(0)
  u = f32[5,7]{1,0} parameter(1)
  i = s32[] parameter(2)
  a = f32[5,7]{1,0} abs(u)
  three = s32[] constant(3)
  ROOT d = f32[64,48]{1,0} dynamic-update-slice(x, a, i, three)
}
)";

/// The explain text of `module` ("" on failure).
std::string explainOf(const HloModule &module) {
  Expected<std::string> explain =
      emitHloModule(module, EmitKind::Explain, CompileOptions{});
  EXPECT_TRUE(explain) << explain.error().message;
  return explain ? *explain : "";
}

TEST(DynamicUpdateSliceEmitterTest, AliasedEntryParameterIsUpdatedInPlace) {
  auto module = parseTestModule(kEntryAliased);
  ASSERT_TRUE(module);
  std::string explain = explainOf(*module);
  EXPECT_NE(explain.find("in place: the output buffer is parameter 0's "
                         "(input_output_alias"),
            std::string::npos)
      << explain;
  for (int32_t start : {3, -20, 1000, 59}) {
    std::vector<Literal> arguments = randomArguments(*module, 77);
    arguments[2] = Literal::scalar(PrimitiveType::S32, start);
    EXPECT_EQ(checkBothLaunches(*module, arguments), "") << start;
  }
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, CompileOptions{});
  ASSERT_TRUE(exe) << exe.error().message;
  EXPECT_EQ((*exe)->outputAliases(), std::vector<int64_t>{0});
  std::vector<Literal> arguments = randomArguments(*module, 78);
  arguments[2] = Literal::scalar(PrimitiveType::S32, 11);
  Expected<Literal> want = evaluateHloModule(*module, arguments);
  ASSERT_TRUE(want);
  std::vector<std::string> in;
  for (size_t i = 0; i < arguments.size(); ++i) {
    Expected<std::string> physical =
        toPhysical(arguments[i], module->entry()->parameters()[i]->shape());
    ASSERT_TRUE(physical);
    in.push_back(std::move(*physical));
  }
  std::vector<const void *> inPtrs;
  for (const std::string &s : in)
    inPtrs.push_back(s.data());
  // Another output buffer: the input is copied into it and stays as it was.
  std::string original = in[0], out(in[0].size(), '\0');
  ASSERT_TRUE((*exe)->runPhysical(inPtrs, {out.data()}));
  EXPECT_EQ(in[0], original);
  Expected<Literal> copied =
      fromPhysical(out, module->entry()->root()->shape());
  ASSERT_TRUE(copied);
  EXPECT_EQ(copied->toString(), want->toString());
  // The input's own buffer, donated: updated in place into the output.
  ASSERT_TRUE((*exe)->runPhysical(inPtrs, {in[0].data()}));
  EXPECT_NE(in[0], original);
  Expected<Literal> donated =
      fromPhysical(in[0], module->entry()->root()->shape());
  ASSERT_TRUE(donated);
  EXPECT_EQ(donated->toString(), want->toString());
  // The kernel never reads the operand's argument.
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> ir =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  ErrorCapture capture(&context);
  auto entry = emitFusion(*ir, *module->entry(), "k", Target::Cpu);
  ASSERT_TRUE(mlir::succeeded(entry)) << capture.takeError("").message;
  int operandReads = 0;
  ir->walk([&](mlir::tensor::ExtractOp extract) {
    auto argument = mlir::dyn_cast<mlir::BlockArgument>(extract.getTensor());
    operandReads += argument && argument.getArgNumber() == 0;
  });
  EXPECT_EQ(operandReads, 0);
}

// The alias is used only where nothing reads the parameter after the
// in-place kernel: a kernel that negates it before the update may run, one
// after must see the original values (the parameter is copied), and so
// must an output that is the parameter itself.
TEST(DynamicUpdateSliceEmitterTest, AliasedParameterReadLaterIsCopied) {
  auto moduleWith = [](const std::string &entry, const std::string &result) {
    return parseTestModule(
        "HloModule m, input_output_alias={ {0}: (0, {}) }\n"
        "updated {\n  op = f32[64,48] parameter(0)\n  u = f32[5,7] "
        "parameter(1)\n  i = s32[] parameter(2)\n  z = s32[] constant(0)\n"
        "  ROOT d = f32[64,48] dynamic-update-slice(op, u, i, z)\n}\n"
        "negated {\n  p = f32[64,48] parameter(0)\n  ROOT n = f32[64,48] "
        "negate(p)\n}\nENTRY e {\n  p0 = f32[64,48] parameter(0)\n  p1 = "
        "f32[5,7] parameter(1)\n  p2 = s32[] parameter(2)\n" +
        entry + "  ROOT t = (f32[64,48], f32[64,48]) tuple(" + result +
        ")\n}\n");
  };
  const std::string update = "  g = f32[64,48] fusion(p0, p1, p2), "
                             "kind=kLoop, calls=updated\n";
  const std::string negate =
      "  n = f32[64,48] fusion(p0), kind=kLoop, calls=negated\n";
  struct Case {
    std::string entry, result;
    bool inPlace;
  } cases[] = {{negate + update, "g, n", true},
               {update + negate, "g, n", false},
               {update, "g, p0", false}};
  for (const Case &c : cases) {
    auto module = moduleWith(c.entry, c.result);
    ASSERT_TRUE(module);
    Expected<std::shared_ptr<Executable>> exe =
        Executable::compile(*module, CompileOptions{});
    ASSERT_TRUE(exe) << exe.error().message;
    EXPECT_EQ((*exe)->outputAliases(),
              (std::vector<int64_t>{c.inPlace ? 0 : -1, -1}))
        << c.entry;
    std::string explain = explainOf(*module);
    EXPECT_EQ(explain.find("parameter 0's (input_output_alias") !=
                  std::string::npos,
              c.inPlace)
        << explain;
    for (int32_t start : {7, -3, 70}) {
      std::vector<Literal> arguments = randomArguments(*module, 5);
      arguments[2] = Literal::scalar(PrimitiveType::S32, start);
      EXPECT_EQ(checkBothLaunches(*module, arguments), "") << c.entry;
    }
  }
}

} // namespace
