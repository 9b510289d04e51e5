//===- ComputationPartitionerTest.cpp - Cutting fusions into functions ----===//
#include "tessel/Codegen/ComputationPartitioner.h"

#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Support/Npy.h"

#include "mlir/IR/MLIRContext.h"

#include "../ErrorText.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

using namespace tessel;

namespace {

/// "" when `partition` keeps the @post of partitionComputation, else what
/// breaks it.
std::string checkPartition(const PartitionedComputation &partition,
                           mlir::MLIRContext *context) {
  const HloComputation &computation = *partition.computation;
  const HloInstruction *root = computation.root();
  bool tupleRoot = root->opcode() == HloOpcode::Tuple;
  std::set<std::string> names;
  for (size_t s = 0; s < partition.subgraphs.size(); ++s) {
    const Subgraph &subgraph = partition.subgraphs[s];
    if (!names.insert(subgraph.name).second)
      return "two functions named " + subgraph.name;
    for (char c : subgraph.name)
      if (!isalnum(static_cast<unsigned char>(c)) && c != '_')
        return "function name " + subgraph.name + " is not a symbol";
    if (subgraph.roots.size() != 1 || !subgraph.contains(*subgraph.roots[0]))
      return subgraph.name + " does not contain its one root";
    if (subgraph.maps.size() != subgraph.instructions.size())
      return subgraph.name + " has " + std::to_string(subgraph.maps.size()) +
             " map sets for " + std::to_string(subgraph.instructions.size()) +
             " instructions";
    const std::vector<IndexingMap> &rootMaps =
        *subgraph.mapsOf(*subgraph.roots[0]);
    if (rootMaps.size() != 1 ||
        rootMaps[0].getAffineMap() != mlir::AffineMap::getMultiDimIdentityMap(
                                          rootMaps[0].getNumDims(), context))
      return subgraph.name + ": the root's map is not the identity";
    for (size_t i = 0; i < subgraph.instructions.size(); ++i) {
      const HloInstruction &inst = *subgraph.instructions[i];
      if (i && subgraph.instructions[i - 1]->index() >= inst.index())
        return subgraph.name + " is not in the computation's order";
      if (inst.opcode() == HloOpcode::Parameter || (&inst == root && tupleRoot))
        return subgraph.name + " contains %" + inst.name();
      bool inlinedConstant = inst.opcode() == HloOpcode::Constant &&
                             partition.subgraphOf(inst) == nullptr;
      if (!inlinedConstant && subgraph.maps[i].size() > 1)
        return subgraph.name + ": %" + inst.name() + " has several maps";
      if (!inlinedConstant && partition.subgraphOf(inst) != &subgraph)
        return "%" + inst.name() + " is in " + subgraph.name +
               " but subgraphOf names another";
      // Every operand outside is a parameter or an earlier function's root.
      for (const HloInstruction *operand : inst.operands()) {
        if (operand->opcode() == HloOpcode::Parameter ||
            subgraph.contains(*operand))
          continue;
        const Subgraph *callee = partition.subgraphOf(*operand);
        if (!callee || callee->roots[0] != operand)
          return "%" + inst.name() + " in " + subgraph.name + " reads %" +
                 operand->name() + ", which is no function's root";
        if (callee - partition.subgraphs.data() >= static_cast<long>(s))
          return subgraph.name + " calls " + callee->name +
                 ", which comes later";
      }
    }
  }
  for (const std::unique_ptr<HloInstruction> &inst :
       computation.instructions()) {
    int containing = 0;
    for (const Subgraph &subgraph : partition.subgraphs)
      containing += subgraph.contains(*inst);
    bool none = inst->opcode() == HloOpcode::Parameter ||
                (inst.get() == root && tupleRoot);
    bool inlinedConstant = inst->opcode() == HloOpcode::Constant &&
                           partition.subgraphOf(*inst) == nullptr;
    if (none              ? containing != 0
        : inlinedConstant ? containing < 1
                          : containing != 1)
      return "%" + inst->name() + " is in " + std::to_string(containing) +
             " functions";
  }
  return "";
}

class ComputationPartitionerTest : public ::testing::Test {
protected:
  /// Parses (and, unless told not to, verifies) a module and partitions its
  /// computation `computationName` (the entry when empty).
  Expected<PartitionedComputation>
  partition(const std::string &text, const std::string &computationName = "",
            const PartitionOptions &options = {}, bool verify = true) {
    Expected<std::unique_ptr<HloModule>> parsed = parseHloModule(text);
    if (!parsed)
      return Error("parse error: " + parsed.error().message);
    if (verify)
      if (Status problem = verifyHloModule(**parsed); !problem)
        return problem.takeError().prepend("verifier: ");
    module = std::move(*parsed);
    const HloComputation *computation =
        computationName.empty() ? module->entry()
                                : module->computation(computationName);
    if (!computation)
      return Error("no computation " + computationName);
    Expected<PartitionedComputation> result =
        partitionComputation(*computation, &context, options);
    if (result) {
      EXPECT_EQ(checkPartition(*result, &context), "") << result->toString();
    }
    return result;
  }

  /// The printed partition, or "error: ..." when it fails.
  std::string printed(const std::string &text,
                      const PartitionOptions &options = {},
                      bool verify = true) {
    Expected<PartitionedComputation> result =
        partition(text, "", options, verify);
    return result ? result->toString()
                  : "error: " + lineColumnText(result.error());
  }

  const HloInstruction *instruction(const std::string &name) const {
    return module->entry()->instruction(name);
  }

  /// Instruction names of each subgraph, "a b | c" in subgraph order.
  static std::string members(const PartitionedComputation &partition) {
    std::string text;
    for (const Subgraph &subgraph : partition.subgraphs) {
      if (!text.empty())
        text += " | ";
      for (size_t i = 0; i < subgraph.instructions.size(); ++i)
        text += (i ? " " : "") + subgraph.instructions[i]->name();
    }
    return text;
  }

  mlir::MLIRContext context;
  std::unique_ptr<HloModule> module;
};

// The seed's graph: %log is read at two indices and cut; %transpose has one
// user and goes with %add (XLA's test PartiallyMergable: two functions).
TEST_F(ComputationPartitionerTest, SeedLogTransposeAddIsTwoFunctions) {
  const char *text = R"(HloModule m
ENTRY fused {
  %param = f32[20,20] parameter(0)
  %log = f32[20,20] log(%param)
  %transpose = f32[20,20] transpose(%log), dimensions={1,0}
  ROOT %add = f32[20,20] add(%log, %transpose)
}
)";
  EXPECT_EQ(printed(text),
            "partition of %fused: 2 functions\n"
            "function @fused_log returns %log\n"
            "  why: %log is read at (d0, d1) -> (d1, d0) by %transpose and at "
            "(d0, d1) -> (d0, d1) by %add\n"
            "  ROOT %log = log(%param)  at (d0, d1) -> (d0, d1), domain: d0 in "
            "[0, 19], d1 in [0, 19]\n"
            "function @fused_add returns %add\n"
            "  why: root of the computation\n"
            "  %transpose = transpose(@fused_log)  at (d0, d1) -> (d0, d1), "
            "domain: d0 in [0, 19], d1 in [0, 19]\n"
            "  ROOT %add = add(@fused_log, %transpose)  at (d0, d1) -> (d0, "
            "d1), domain: d0 in [0, 19], d1 in [0, 19]\n");
  Expected<PartitionedComputation> result = partition(text);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(members(*result), "log | transpose add");
  EXPECT_EQ(result->subgraphOf(*instruction("param")), nullptr);
  EXPECT_EQ(result->subgraphOf(*instruction("log")), &result->subgraphs[0]);
  EXPECT_EQ(result->rootSubgraph(), &result->subgraphs[1]);
}

// The contract checker itself finds a broken partition.
TEST_F(ComputationPartitionerTest, CheckerFindsBrokenPartitions) {
  Expected<PartitionedComputation> result = partition(R"(HloModule m
ENTRY fused {
  %param = f32[20,20] parameter(0)
  %log = f32[20,20] log(%param)
  %transpose = f32[20,20] transpose(%log), dimensions={1,0}
  ROOT %add = f32[20,20] add(%log, %transpose)
}
)");
  ASSERT_TRUE(result.ok()) << result.error().message;
  PartitionedComputation swapped = *result;
  std::swap(swapped.subgraphs[0], swapped.subgraphs[1]);
  std::swap(swapped.subgraphIndex[1], swapped.subgraphIndex[3]);
  swapped.subgraphIndex[2] = 0;
  EXPECT_EQ(checkPartition(swapped, &context),
            "fused_add calls fused_log, which comes later");
  PartitionedComputation dropped = *result;
  dropped.subgraphs[1].instructions.erase(
      dropped.subgraphs[1].instructions.begin());
  dropped.subgraphs[1].maps.erase(dropped.subgraphs[1].maps.begin());
  EXPECT_EQ(checkPartition(dropped, &context),
            "%add in fused_add reads %transpose, which is no function's root");
}

// Read through two transposes, %log is read at the same index on both paths
// and joins.
TEST_F(ComputationPartitionerTest, DiamondWithEqualMapsIsOneFunction) {
  EXPECT_EQ(printed(R"(HloModule m
ENTRY fused {
  %param = f32[20,30] parameter(0)
  %log = f32[20,30] log(%param)
  %transpose = f32[30,20] transpose(%log), dimensions={1,0}
  %back = f32[20,30] transpose(%transpose), dimensions={1,0}
  ROOT %add = f32[20,30] add(%log, %back)
}
)"),
            "partition of %fused: 1 function\n"
            "function @fused_add returns %add\n"
            "  why: root of the computation\n"
            "  %log = log(%param)  at (d0, d1) -> (d0, d1), domain: d0 in [0, "
            "19], d1 in [0, 29]\n"
            "  %transpose = transpose(%log)  at (d0, d1) -> (d1, d0), domain: "
            "d0 in [0, 19], d1 in [0, 29]\n"
            "  %back = transpose(%transpose)  at (d0, d1) -> (d0, d1), domain: "
            "d0 in [0, 19], d1 in [0, 29]\n"
            "  ROOT %add = add(%log, %back)  at (d0, d1) -> (d0, d1), domain: "
            "d0 in [0, 19], d1 in [0, 29]\n");
}

// add(slice(x), pad(x)): the slice and the pad go with the add, x is cut.
TEST_F(ComputationPartitionerTest, SeedSliceAndPad) {
  const char *body = R"(
  %param = f32[8] parameter(0)
  %x = f32[8] exponential(%param)
  %zero = f32[] constant(0)
  %slice = f32[6] slice(%x), slice={[2:8]}
  %pad = f32[6] pad(%x, %zero), padding=1_-3
  ROOT %add = f32[6] add(%slice, %pad)
}
)";
  EXPECT_EQ(
      printed(std::string("HloModule m\nENTRY fused {") + body),
      "partition of %fused: 2 functions\n"
      "function @fused_x returns %x\n"
      "  why: %x is read at (d0) -> (d0 + 2) by %slice and at (d0) -> (d0 - 1) "
      "by %pad\n"
      "  ROOT %x = exponential(%param)  at (d0) -> (d0), domain: d0 in [0, 7]\n"
      "function @fused_add returns %add\n"
      "  why: root of the computation\n"
      "  %zero = constant(0)  at (d0) -> (), domain: d0 in [0, 5]\n"
      "  %slice = slice(@fused_x)  at (d0) -> (d0), domain: d0 in [0, 5]\n"
      "  %pad = pad(@fused_x, %zero)  at (d0) -> (d0), domain: d0 in [0, 5]\n"
      "  ROOT %add = add(%slice, %pad)  at (d0) -> (d0), domain: d0 in [0, "
      "5]\n");
  // With x a parameter there is nothing to cut: parameters are tensors.
  EXPECT_EQ(printed(R"(HloModule m
ENTRY fused {
  %x = f32[8] parameter(0)
  %zero = f32[] constant(0)
  %slice = f32[6] slice(%x), slice={[2:8]}
  %pad = f32[6] pad(%x, %zero), padding=1_-3
  ROOT %add = f32[6] add(%slice, %pad)
}
)"),
            "partition of %fused: 1 function\n"
            "function @fused_add returns %add\n"
            "  why: root of the computation\n"
            "  %zero = constant(0)  at (d0) -> (), domain: d0 in [0, 5]\n"
            "  %slice = slice(%x)  at (d0) -> (d0), domain: d0 in [0, 5]\n"
            "  %pad = pad(%x, %zero)  at (d0) -> (d0), domain: d0 in [0, 5]\n"
            "  ROOT %add = add(%slice, %pad)  at (d0) -> (d0), domain: d0 in "
            "[0, 5]\n");
}

const char *kAdd = R"(HloModule m
add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";

// The seed's GELU: elementwise ops, constants and broadcasts, every value read
// at the output index: one function.
TEST_F(ComputationPartitionerTest, GeluIsOneFunction) {
  Expected<std::string> text = readFileBytes(TESSEL_EXAMPLES "/gelu.hlo");
  ASSERT_TRUE(text.ok()) << text.error().message;
  Expected<PartitionedComputation> result = partition(*text, "gelu");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(members(*result),
            "constant_0 bcast_0 constant_1 bcast_1 constant_2 bcast_2 "
            "constant_3 bcast_3 square cube multiply_3 add_1 multiply_2 tanh_0 "
            "add_0 multiply_1 multiply_0");
  const Subgraph &gelu = result->subgraphs.front();
  EXPECT_EQ(gelu.name, "gelu_multiply_0");
  EXPECT_EQ(gelu.reason, "root of the computation");
  const HloComputation &body = *module->computation("gelu");
  EXPECT_EQ(gelu.mapsOf(*body.instruction("tanh_0"))->front().toString(),
            "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 5], d1 in [0, "
            "511], d2 in [0, 4095]");
  EXPECT_EQ(gelu.mapsOf(*body.instruction("constant_2"))->front().toString(),
            "(d0, d1, d2) -> (), domain: d0 in [0, 5], d1 in [0, 511], d2 in "
            "[0, 4095]");
  EXPECT_EQ(gelu.mapsOf(*body.instruction("param")), nullptr);
}

// A ROOT tuple is in no function; each output gets its own.
TEST_F(ComputationPartitionerTest, TupleRootGivesOneFunctionPerOutput) {
  EXPECT_EQ(
      printed(R"(HloModule m
ENTRY fused {
  %p0 = f32[6] parameter(0)
  %p1 = f32[6] parameter(1)
  %add = f32[6] add(%p0, %p1)
  %sub = f32[6] subtract(%p0, %p1)
  ROOT %root = (f32[6], f32[6]) tuple(%add, %sub)
}
)"),
      "partition of %fused: 2 functions\n"
      "ROOT tuple %root returns (@fused_add, @fused_sub)\n"
      "function @fused_add returns %add\n"
      "  why: output 0 of the ROOT tuple\n"
      "  ROOT %add = add(%p0, %p1)  at (d0) -> (d0), domain: d0 in [0, 5]\n"
      "function @fused_sub returns %sub\n"
      "  why: output 1 of the ROOT tuple\n"
      "  ROOT %sub = subtract(%p0, %p1)  at (d0) -> (d0), domain: d0 in [0, "
      "5]\n");
}

// Outputs that read each other call each other; an operand written twice is
// one function; a parameter output is no function.
TEST_F(ComputationPartitionerTest, TupleOutputsSharingWork) {
  const char *text = R"(
ENTRY fused {
  %p = f32[4,8] parameter(0)
  %e = f32[4,8] exponential(%p)
  %n = f32[4,8] negate(%e)
  %zero = f32[] constant(0)
  %r = f32[4] reduce(%e, %zero), dimensions={1}, to_apply=add
  ROOT %t = (f32[4,8], f32[4,8], f32[4], f32[4,8], f32[4,8]) tuple(%e, %n, %r, %p, %e)
}
)";
  EXPECT_EQ(
      printed(std::string(kAdd) + text),
      "partition of %fused: 3 functions\n"
      "ROOT tuple %t returns (@fused_e, @fused_n, @fused_r, %p, @fused_e)\n"
      "function @fused_e returns %e\n"
      "  why: outputs 0 and 4 of the ROOT tuple\n"
      "  ROOT %e = exponential(%p)  at (d0, d1) -> (d0, d1), domain: d0 in [0, "
      "3], d1 in [0, 7]\n"
      "function @fused_n returns %n\n"
      "  why: output 1 of the ROOT tuple\n"
      "  ROOT %n = negate(@fused_e)  at (d0, d1) -> (d0, d1), domain: d0 in "
      "[0, 3], d1 in [0, 7]\n"
      "function @fused_r returns %r\n"
      "  why: output 2 of the ROOT tuple\n"
      "  %zero = constant(0)  at (d0) -> (), domain: d0 in [0, 3]\n"
      "  ROOT %r = reduce(@fused_e, %zero)  at (d0) -> (d0), domain: d0 in [0, "
      "3]\n");
  Expected<PartitionedComputation> result = partition(std::string(kAdd) + text);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->subgraphOf(*instruction("t")), nullptr);
  EXPECT_EQ(result->rootSubgraph(), nullptr);
}

// A reduce reads its elementwise operand at one index (over the reduced
// dims): the operand joins.
TEST_F(ComputationPartitionerTest, ReduceOfElementwiseJoins) {
  EXPECT_EQ(
      printed(std::string(kAdd) + R"(
ENTRY fused {
  %p = f32[4,8] parameter(0)
  %e = f32[4,8] exponential(%p)
  %zero = f32[] constant(0)
  ROOT %r = f32[4] reduce(%e, %zero), dimensions={1}, to_apply=add
}
)"),
      "partition of %fused: 1 function\n"
      "function @fused_r returns %r\n"
      "  why: root of the computation\n"
      "  %e = exponential(%p)  at (d0)[s0] -> (d0, s0), domain: d0 in [0, 3], "
      "s0 in [0, 7]\n"
      "  %zero = constant(0)  at (d0) -> (), domain: d0 in [0, 3]\n"
      "  ROOT %r = reduce(%e, %zero)  at (d0) -> (d0), domain: d0 in [0, 3]\n");
}

// Softmax's shape: %x is read at (d0, d1) by %sub and at (d0, s0) by the
// reduce; the reduce and the broadcast go with %sub.
TEST_F(ComputationPartitionerTest, BroadcastOfAReductionOfASharedValue) {
  EXPECT_EQ(printed(std::string(kAdd) + R"(
ENTRY fused {
  %p = f32[4,8] parameter(0)
  %x = f32[4,8] exponential(%p)
  %zero = f32[] constant(0)
  %m = f32[4] reduce(%x, %zero), dimensions={1}, to_apply=add
  %b = f32[4,8] broadcast(%m), dimensions={0}
  ROOT %sub = f32[4,8] subtract(%x, %b)
}
)"),
            "partition of %fused: 2 functions\n"
            "function @fused_x returns %x\n"
            "  why: %x is read at (d0, d1)[s0] -> (d0, s0) by %m and at (d0, "
            "d1) -> (d0, d1) by %sub\n"
            "  ROOT %x = exponential(%p)  at (d0, d1) -> (d0, d1), domain: d0 "
            "in [0, 3], d1 in [0, 7]\n"
            "function @fused_sub returns %sub\n"
            "  why: root of the computation\n"
            "  %zero = constant(0)  at (d0, d1) -> (), domain: d0 in [0, 3], "
            "d1 in [0, 7]\n"
            "  %m = reduce(@fused_x, %zero)  at (d0, d1) -> (d0), domain: d0 "
            "in [0, 3], d1 in [0, 7]\n"
            "  %b = broadcast(%m)  at (d0, d1) -> (d0, d1), domain: d0 in [0, "
            "3], d1 in [0, 7]\n"
            "  ROOT %sub = subtract(@fused_x, %b)  at (d0, d1) -> (d0, d1), "
            "domain: d0 in [0, 3], d1 in [0, 7]\n");
}

TEST_F(ComputationPartitionerTest, BroadcastsReadingASharedValue) {
  // Both broadcasts read %s at (d0, d1) -> (d0): it joins.
  EXPECT_EQ(printed(R"(HloModule m
ENTRY fused {
  %p = f32[4] parameter(0)
  %s = f32[4] exponential(%p)
  %b0 = f32[4,8] broadcast(%s), dimensions={0}
  %b1 = f32[4,8] broadcast(%s), dimensions={0}
  ROOT %m = f32[4,8] multiply(%b0, %b1)
}
)"),
            "partition of %fused: 1 function\n"
            "function @fused_m returns %m\n"
            "  why: root of the computation\n"
            "  %s = exponential(%p)  at (d0, d1) -> (d0), domain: d0 in [0, "
            "3], d1 in [0, 7]\n"
            "  %b0 = broadcast(%s)  at (d0, d1) -> (d0, d1), domain: d0 in [0, "
            "3], d1 in [0, 7]\n"
            "  %b1 = broadcast(%s)  at (d0, d1) -> (d0, d1), domain: d0 in [0, "
            "3], d1 in [0, 7]\n"
            "  ROOT %m = multiply(%b0, %b1)  at (d0, d1) -> (d0, d1), domain: "
            "d0 in [0, 3], d1 in [0, 7]\n");
  // Along different dims: cut.
  EXPECT_EQ(
      printed(R"(HloModule m
ENTRY fused {
  %p = f32[8] parameter(0)
  %s = f32[8] exponential(%p)
  %b0 = f32[8,8] broadcast(%s), dimensions={0}
  %b1 = f32[8,8] broadcast(%s), dimensions={1}
  ROOT %m = f32[8,8] multiply(%b0, %b1)
}
)"),
      "partition of %fused: 2 functions\n"
      "function @fused_s returns %s\n"
      "  why: %s is read at (d0, d1) -> (d0) by %b0 and at (d0, d1) -> (d1) by "
      "%b1\n"
      "  ROOT %s = exponential(%p)  at (d0) -> (d0), domain: d0 in [0, 7]\n"
      "function @fused_m returns %m\n"
      "  why: root of the computation\n"
      "  %b0 = broadcast(@fused_s)  at (d0, d1) -> (d0, d1), domain: d0 in [0, "
      "7], d1 in [0, 7]\n"
      "  %b1 = broadcast(@fused_s)  at (d0, d1) -> (d0, d1), domain: d0 in [0, "
      "7], d1 in [0, 7]\n"
      "  ROOT %m = multiply(%b0, %b1)  at (d0, d1) -> (d0, d1), domain: d0 in "
      "[0, 7], d1 in [0, 7]\n");
}

// XLA's PartitionDiamonds: each add is read at d0 and d0 + 1 by the next.
TEST_F(ComputationPartitionerTest, ChainOfDiamonds) {
  Expected<PartitionedComputation> result = partition(R"(HloModule m
ENTRY fused {
  %param = f32[6] parameter(0)
  %slice0.1 = f32[5] slice(%param), slice={[0:5]}
  %slice0.2 = f32[5] slice(%param), slice={[1:6]}
  %add0 = f32[5] add(%slice0.1, %slice0.2)
  %slice1.1 = f32[4] slice(%add0), slice={[0:4]}
  %slice1.2 = f32[4] slice(%add0), slice={[1:5]}
  %add1 = f32[4] add(%slice1.1, %slice1.2)
  %slice2.1 = f32[3] slice(%add1), slice={[0:3]}
  %slice2.2 = f32[3] slice(%add1), slice={[1:4]}
  %add2 = f32[3] add(%slice2.1, %slice2.2)
  %slice3.1 = f32[2] slice(%add2), slice={[0:2]}
  %slice3.2 = f32[2] slice(%add2), slice={[1:3]}
  ROOT %add3 = f32[2] add(%slice3.1, %slice3.2)
}
)");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(members(*result), "slice0.1 slice0.2 add0 | slice1.1 slice1.2 add1 "
                              "| slice2.1 slice2.2 add2 | slice3.1 slice3.2 "
                              "add3");
  EXPECT_EQ(result->subgraphs[1].reason,
            "%add1 is read at (d0) -> (d0) by %slice2.1 and at (d0) -> (d0 + "
            "1) by %slice2.2");
  EXPECT_EQ(result->subgraphs[1].name, "fused_add1");
}

// A constant goes into every function that reads it, at its maps there.
TEST_F(ComputationPartitionerTest, ConstantsAreEmittedWhereRead) {
  const char *text = R"(HloModule m
ENTRY fused {
  %p = f32[4,4] parameter(0)
  %two = f32[] constant(2)
  %b1 = f32[4,4] broadcast(%two), dimensions={}
  %m = f32[4,4] multiply(%p, %b1)
  %t = f32[4,4] transpose(%m), dimensions={1,0}
  %b2 = f32[4,4] broadcast(%two), dimensions={}
  %a = f32[4,4] add(%m, %t)
  ROOT %r = f32[4,4] add(%a, %b2)
}
)";
  EXPECT_EQ(printed(text), "partition of %fused: 2 functions\n"
                           "function @fused_m returns %m\n"
                           "  why: %m is read at (d0, d1) -> (d1, d0) by %t "
                           "and at (d0, d1) -> (d0, d1) by %a\n"
                           "  %two = constant(2)  at (d0, d1) -> (), domain: "
                           "d0 in [0, 3], d1 in [0, 3]\n"
                           "  %b1 = broadcast(%two)  at (d0, d1) -> (d0, d1), "
                           "domain: d0 in [0, 3], d1 in [0, 3]\n"
                           "  ROOT %m = multiply(%p, %b1)  at (d0, d1) -> (d0, "
                           "d1), domain: d0 in [0, 3], d1 in [0, 3]\n"
                           "function @fused_r returns %r\n"
                           "  why: root of the computation\n"
                           "  %two = constant(2)  at (d0, d1) -> (), domain: "
                           "d0 in [0, 3], d1 in [0, 3]\n"
                           "  %t = transpose(@fused_m)  at (d0, d1) -> (d0, "
                           "d1), domain: d0 in [0, 3], d1 in [0, 3]\n"
                           "  %b2 = broadcast(%two)  at (d0, d1) -> (d0, d1), "
                           "domain: d0 in [0, 3], d1 in [0, 3]\n"
                           "  %a = add(@fused_m, %t)  at (d0, d1) -> (d0, d1), "
                           "domain: d0 in [0, 3], d1 in [0, 3]\n"
                           "  ROOT %r = add(%a, %b2)  at (d0, d1) -> (d0, d1), "
                           "domain: d0 in [0, 3], d1 in [0, 3]\n");
  Expected<PartitionedComputation> result = partition(text);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(members(*result), "two b1 m | two t b2 a r");
  const HloInstruction &two = *instruction("two");
  EXPECT_EQ(result->subgraphOf(two), nullptr);
  EXPECT_TRUE(result->subgraphs[0].contains(two));
  EXPECT_TRUE(result->subgraphs[1].contains(two));
  EXPECT_EQ(result->subgraphIndex[two.index()], -1);
}

TEST_F(ComputationPartitionerTest, ConstantReadAtSeveralIndices) {
  EXPECT_EQ(
      printed(R"(HloModule m
ENTRY fused {
  %c = f32[2] constant({1, 2})
  %rev = f32[2] reverse(%c), dimensions={0}
  ROOT %add = f32[2] add(%c, %rev)
}
)"),
      "partition of %fused: 1 function\n"
      "function @fused_add returns %add\n"
      "  why: root of the computation\n"
      "  %c = constant({1, 2})  at (d0) -> (-d0 + 1), domain: d0 in [0, 1]; at "
      "(d0) -> (d0), domain: d0 in [0, 1]\n"
      "  %rev = reverse(%c)  at (d0) -> (d0), domain: d0 in [0, 1]\n"
      "  ROOT %add = add(%c, %rev)  at (d0) -> (d0), domain: d0 in [0, 1]\n");
}

// A constant that is a root (here an output) is a function of its own that
// the others call.
TEST_F(ComputationPartitionerTest, ConstantAsRoot) {
  EXPECT_EQ(
      printed(R"(HloModule m
ENTRY fused {
  ROOT %c = f32[2] constant({1, 2})
}
)"),
      "partition of %fused: 1 function\n"
      "function @fused_c returns %c\n"
      "  why: root of the computation\n"
      "  ROOT %c = constant({1, 2})  at (d0) -> (d0), domain: d0 in [0, 1]\n");
  EXPECT_EQ(
      printed(R"(HloModule m
ENTRY fused {
  %c = f32[2] constant({1, 2})
  %n = f32[2] negate(%c)
  ROOT %t = (f32[2], f32[2]) tuple(%c, %n)
}
)"),
      "partition of %fused: 2 functions\n"
      "ROOT tuple %t returns (@fused_c, @fused_n)\n"
      "function @fused_c returns %c\n"
      "  why: output 0 of the ROOT tuple\n"
      "  ROOT %c = constant({1, 2})  at (d0) -> (d0), domain: d0 in [0, 1]\n"
      "function @fused_n returns %n\n"
      "  why: output 1 of the ROOT tuple\n"
      "  ROOT %n = negate(@fused_c)  at (d0) -> (d0), domain: d0 in [0, 1]\n");
}

// XLA's DiamondConcatenate and SimpleConcatenate.
TEST_F(ComputationPartitionerTest, Concatenate) {
  Expected<PartitionedComputation> diamond = partition(R"(HloModule m
ENTRY fused {
  %param1 = f32[6] parameter(0)
  %param2 = f32[6] parameter(1)
  %log = f32[6] log(%param1)
  %add = f32[6] add(%log, %param2)
  %neg = f32[6] negate(%log)
  %exp = f32[6] exponential(%add)
  ROOT %concat = f32[12] concatenate(%neg, %exp), dimensions={0}
}
)");
  ASSERT_TRUE(diamond.ok()) << diamond.error().message;
  EXPECT_EQ(members(*diamond), "log | add neg exp concat");
  EXPECT_EQ(diamond->subgraphs[0].reason,
            "%log is read at (d0) -> (d0 - 6) by %add and at (d0) -> (d0) by "
            "%neg");
  Expected<PartitionedComputation> simple = partition(R"(HloModule m
ENTRY fused {
  %param1 = f32[6] parameter(0)
  %param2 = f32[3] parameter(1)
  %neg = f32[6] negate(%param1)
  %exp = f32[3] exponential(%param2)
  ROOT %concat = f32[9] concatenate(%neg, %exp), dimensions={0}
}
)");
  ASSERT_TRUE(simple.ok()) << simple.error().message;
  EXPECT_EQ(members(*simple), "neg exp concat");
}

// A value read twice by one concatenate: two maps, cut.
TEST_F(ComputationPartitionerTest, ConcatenateReadingOneValueTwice) {
  Expected<PartitionedComputation> result = partition(R"(HloModule m
ENTRY fused {
  %p = f32[4] parameter(0)
  %e = f32[4] exponential(%p)
  ROOT %c = f32[8] concatenate(%e, %e), dimensions={0}
}
)");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(members(*result), "e | c");
  EXPECT_EQ(result->subgraphs[0].reason,
            "%e is read at (d0) -> (d0) by %c and at (d0) -> (d0 - 4) by %c");
}

// Reads that are known empty read nothing: the slice skips %e entirely.
TEST_F(ComputationPartitionerTest, ValueReadNowhereStays) {
  EXPECT_EQ(
      printed(R"(HloModule m
ENTRY fused {
  %p0 = f32[4] parameter(0)
  %p1 = f32[4] parameter(1)
  %n = f32[4] negate(%p0)
  %e = f32[4] exponential(%p1)
  %c = f32[8] concatenate(%n, %e), dimensions={0}
  ROOT %s = f32[4] slice(%c), slice={[0:4]}
}
)"),
      "partition of %fused: 1 function\n"
      "function @fused_s returns %s\n"
      "  why: root of the computation\n"
      "  %n = negate(%p0)  at (d0) -> (d0), domain: d0 in [0, 3]\n"
      "  %e = exponential(%p1)  read nowhere\n"
      "  %c = concatenate(%n, %e)  at (d0) -> (d0), domain: d0 in [0, 3]\n"
      "  ROOT %s = slice(%c)  at (d0) -> (d0), domain: d0 in [0, 3]\n");
}

// An op without maps reads its operands at indices tessel cannot name: cut.
TEST_F(ComputationPartitionerTest, UserWithoutMapsCutsItsOperands) {
  EXPECT_EQ(
      printed(R"(HloModule m
ENTRY fused {
  %p = f32[4] parameter(0)
  %e = f32[4] exponential(%p)
  ROOT %cc = f32[4] custom-call(%e), custom_call_target="foo"
}
)",
              {}, /*verify=*/false),
      "partition of %fused: 2 functions\n"
      "function @fused_e returns %e\n"
      "  why: %e is read by %cc, whose maps are unknown (custom-call %cc: no "
      "indexing maps for this op)\n"
      "  ROOT %e = exponential(%p)  at (d0) -> (d0), domain: d0 in [0, 3]\n"
      "function @fused_cc returns %cc\n"
      "  why: root of the computation\n"
      "  ROOT %cc = custom-call(@fused_e)  at (d0) -> (d0), domain: d0 in [0, "
      "3]\n");
}

TEST_F(ComputationPartitionerTest, DeadCodeIsAFunctionOfItsOwn) {
  EXPECT_EQ(
      printed(R"(HloModule m
ENTRY fused {
  %p = f32[4] parameter(0)
  %dead = f32[4] exponential(%p)
  ROOT %n = f32[4] negate(%p)
}
)"),
      "partition of %fused: 2 functions\n"
      "function @fused_dead returns %dead\n"
      "  why: %dead has no users\n"
      "  ROOT %dead = exponential(%p)  at (d0) -> (d0), domain: d0 in [0, 3]\n"
      "function @fused_n returns %n\n"
      "  why: root of the computation\n"
      "  ROOT %n = negate(%p)  at (d0) -> (d0), domain: d0 in [0, 3]\n");
}

// A parameter is no function, even as the ROOT or an output.
TEST_F(ComputationPartitionerTest, ParameterOutputs) {
  EXPECT_EQ(printed(R"(HloModule m
ENTRY fused {
  ROOT %p = f32[4] parameter(0)
}
)"),
            "partition of %fused: 0 functions\n");
  EXPECT_EQ(printed(R"(HloModule m
ENTRY fused {
  %p = f32[4] parameter(0)
  ROOT %t = (f32[4], f32[4]) tuple(%p, %p)
}
)"),
            "partition of %fused: 0 functions\n"
            "ROOT tuple %t returns (%p, %p)\n");
}

TEST_F(ComputationPartitionerTest, TuplesInsideAreRefused) {
  EXPECT_EQ(printed(R"(HloModule m
ENTRY fused {
  %p = f32[4] parameter(0)
  %t = (f32[4], f32[4]) tuple(%p, %p)
  %g = f32[4] get-tuple-element(%t), index=0
  ROOT %n = f32[4] negate(%g)
}
)"),
            "error: 4:3: tuple %t is not the ROOT; internal tuples are not "
            "supported");
  EXPECT_EQ(printed(R"(HloModule m
add2 {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = f32[] parameter(2)
  %d = f32[] parameter(3)
  %s = f32[] add(%a, %c)
  %u = f32[] add(%b, %d)
  ROOT %t = (f32[], f32[]) tuple(%s, %u)
}
ENTRY fused {
  %p = f32[4,8] parameter(0)
  %zero = f32[] constant(0)
  %r = (f32[4], f32[4]) reduce(%p, %p, %zero, %zero), dimensions={1}, to_apply=add2
  %n = f32[4,8] negate(%p)
  ROOT %t = ((f32[4], f32[4]), f32[4,8]) tuple(%r, %n)
}
)"),
            "error: 16:3: output 0 of the ROOT tuple %t is the tuple %r; "
            "nested tuple outputs are not supported");
}

// A variadic reduce is indexed by its output 0; get-tuple-element reads it
// at its own index.
TEST_F(ComputationPartitionerTest, VariadicReduce) {
  EXPECT_EQ(
      printed(R"(HloModule m
add2 {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = f32[] parameter(2)
  %d = f32[] parameter(3)
  %s = f32[] add(%a, %c)
  %u = f32[] add(%b, %d)
  ROOT %t = (f32[], f32[]) tuple(%s, %u)
}
ENTRY fused {
  %p = f32[4,8] parameter(0)
  %e = f32[4,8] exponential(%p)
  %zero = f32[] constant(0)
  %r = (f32[4], f32[4]) reduce(%p, %e, %zero, %zero), dimensions={1}, to_apply=add2
  %g0 = f32[4] get-tuple-element(%r), index=0
  %g1 = f32[4] get-tuple-element(%r), index=1
  ROOT %m = f32[4] multiply(%g0, %g1)
}
)"),
      "partition of %fused: 1 function\n"
      "function @fused_m returns %m\n"
      "  why: root of the computation\n"
      "  %e = exponential(%p)  at (d0)[s0] -> (d0, s0), domain: d0 in [0, 3], "
      "s0 in [0, 7]\n"
      "  %zero = constant(0)  at (d0) -> (), domain: d0 in [0, 3]\n"
      "  %r = reduce(%p, %e, %zero, %zero)  at (d0) -> (d0), domain: d0 in [0, "
      "3]\n"
      "  %g0 = get-tuple-element(%r)  at (d0) -> (d0), domain: d0 in [0, 3]\n"
      "  %g1 = get-tuple-element(%r)  at (d0) -> (d0), domain: d0 in [0, 3]\n"
      "  ROOT %m = multiply(%g0, %g1)  at (d0) -> (d0), domain: d0 in [0, "
      "3]\n");
}

// The caller can force roots (XLA's TransposeAsRoot).
TEST_F(ComputationPartitionerTest, CallerChosenRoots) {
  PartitionOptions options;
  options.isSubgraphRoot = [](const HloInstruction &instruction) {
    return instruction.opcode() == HloOpcode::Transpose;
  };
  EXPECT_EQ(printed(R"(HloModule m
ENTRY fused {
  %p0 = f32[64,32] parameter(0)
  %p1 = f32[64,32] parameter(1)
  %add = f32[64,32] add(%p0, %p1)
  %transpose = f32[32,64] transpose(%add), dimensions={1,0}
  %exp = f32[32,64] exponential(%transpose)
  ROOT %root = f32[32,64] tanh(%exp)
}
)",
                    options),
            "partition of %fused: 2 functions\n"
            "function @fused_transpose returns %transpose\n"
            "  why: a root by the caller's choice\n"
            "  %add = add(%p0, %p1)  at (d0, d1) -> (d1, d0), domain: d0 in "
            "[0, 31], d1 in [0, 63]\n"
            "  ROOT %transpose = transpose(%add)  at (d0, d1) -> (d0, d1), "
            "domain: d0 in [0, 31], d1 in [0, 63]\n"
            "function @fused_root returns %root\n"
            "  why: root of the computation\n"
            "  %exp = exponential(@fused_transpose)  at (d0, d1) -> (d0, d1), "
            "domain: d0 in [0, 31], d1 in [0, 63]\n"
            "  ROOT %root = tanh(%exp)  at (d0, d1) -> (d0, d1), domain: d0 in "
            "[0, 31], d1 in [0, 63]\n");
}

TEST_F(ComputationPartitionerTest, InstructionLimitPerFunction) {
  PartitionOptions options;
  options.maxInstructionsPerSubgraph = 2;
  Expected<PartitionedComputation> result = partition(R"(HloModule m
ENTRY fused {
  %p = f32[4] parameter(0)
  %one = f32[] constant(1)
  %b = f32[4] broadcast(%one), dimensions={}
  %n1 = f32[4] negate(%p)
  %n2 = f32[4] add(%n1, %b)
  %n3 = f32[4] negate(%n2)
  %n4 = f32[4] negate(%n3)
  ROOT %n5 = f32[4] negate(%n4)
}
)",
                                                      "", options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  // %n3 and %n1 would fill their users' functions; so would %b.
  EXPECT_EQ(members(*result), "one b | n1 | n2 n3 | n4 n5");
  EXPECT_EQ(result->subgraphs[1].reason,
            "@fused_n3 already has 2 instructions, the most per function");
}

TEST_F(ComputationPartitionerTest, NamesAreUniqueSymbols) {
  Expected<PartitionedComputation> result = partition(R"(HloModule m
ENTRY fused.1 {
  %p = f32[4] parameter(0)
  %x.1 = f32[4] exponential(%p)
  %x_1 = f32[4] negate(%x.1)
  ROOT %t = (f32[4], f32[4]) tuple(%x.1, %x_1)
}
)");
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result->subgraphs.size(), 2u);
  EXPECT_EQ(result->subgraphs[0].name, "fused_1_x_1_1");
  EXPECT_EQ(result->subgraphs[1].name, "fused_1_x_1");
}

// The @post of partitionComputation over every fusion of the jax corpus.
TEST_F(ComputationPartitionerTest, CorpusFusionsKeepTheContract) {
  std::vector<std::string> dirs;
  for (const auto &entry :
       std::filesystem::directory_iterator(TESSEL_HLO_CORPUS))
    if (entry.is_directory())
      dirs.push_back(entry.path().string());
  std::sort(dirs.begin(), dirs.end());
  int fusions = 0, functions = 0, cut = 0;
  for (const std::string &dir : dirs) {
    Expected<std::string> text = readFileBytes(dir + "/optimized.hlo");
    ASSERT_TRUE(text.ok()) << dir;
    Expected<std::unique_ptr<HloModule>> parsed = parseHloModule(*text);
    ASSERT_TRUE(parsed.ok()) << dir << ": " << parsed.error().message;
    for (const std::unique_ptr<HloInstruction> &inst :
         (*parsed)->entry()->instructions()) {
      if (inst->opcode() != HloOpcode::Fusion)
        continue;
      const HloComputation &body = *inst->calledComputation();
      Expected<PartitionedComputation> result =
          partitionComputation(body, &context);
      ASSERT_TRUE(result.ok())
          << dir << " %" << body.name() << ": " << result.error().message;
      EXPECT_EQ(checkPartition(*result, &context), "")
          << dir << "\n"
          << body.toString() << "\n"
          << result->toString();
      ++fusions;
      functions += result->subgraphs.size();
      cut += result->subgraphs.size() > 1;
    }
  }
  std::printf("%d fusions, %d functions, %d fusions cut\n", fusions, functions,
              cut);
  EXPECT_GT(fusions, 100);
}

// Whole computations cut more often: every computation of the corpus's
// modules before and after XLA's passes (those with internal tuples are
// refused).
TEST_F(ComputationPartitionerTest, CorpusComputationsKeepTheContract) {
  int computations = 0, refused = 0, functions = 0;
  for (const auto &entry :
       std::filesystem::directory_iterator(TESSEL_HLO_CORPUS)) {
    if (!entry.is_directory())
      continue;
    for (const char *file : {"/module.hlo", "/optimized.hlo"}) {
      std::string path = entry.path().string() + file;
      Expected<std::string> text = readFileBytes(path);
      ASSERT_TRUE(text.ok()) << path;
      Expected<std::unique_ptr<HloModule>> parsed = parseHloModule(*text);
      ASSERT_TRUE(parsed.ok()) << path << ": " << parsed.error().message;
      for (const std::unique_ptr<HloComputation> &computation :
           (*parsed)->computations()) {
        Expected<PartitionedComputation> result =
            partitionComputation(*computation, &context);
        ++computations;
        if (!result) {
          ++refused;
          EXPECT_NE(result.error().message.find("tuple"), std::string::npos)
              << path << ": " << result.error().message;
          continue;
        }
        functions += result->subgraphs.size();
        EXPECT_EQ(checkPartition(*result, &context), "")
            << path << " %" << computation->name() << "\n"
            << result->toString();
      }
    }
  }
  std::printf("%d computations (%d refused), %d functions\n", computations,
              refused, functions);
  EXPECT_GT(functions, computations);
}

} // namespace
