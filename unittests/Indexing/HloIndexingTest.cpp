//===- HloIndexingTest.cpp - HLO indexing maps against the evaluator ------===//
#include "HloInfluence.h"

#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Indexing/HloIndexing.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::testing;

namespace {

const char *kHeader = "HloModule m\n"
                      "add {\n  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(a, b)\n}\n"
                      "max {\n  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT s = f32[] maximum(a, b)\n}\n";

/// A module with %add and %max and this ENTRY body.
std::string entry(const std::string &body) {
  return std::string(kHeader) + "ENTRY e {\n" + body + "}\n";
}

class HloIndexingTest : public ::testing::Test {
protected:
  std::unique_ptr<HloModule> parse(const std::string &text) {
    Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
    EXPECT_TRUE(module.ok()) << module.error().message << "\n" << text;
    if (!module)
      return nullptr;
    Status problem = verifyHloModule(**module);
    EXPECT_TRUE(problem) << problem.error().message << "\n" << text;
    return std::move(*module);
  }

  /// The printed output-to-input maps of the ROOT.
  std::string printed(const std::string &text) {
    std::unique_ptr<HloModule> module = parse(text);
    if (!module)
      return "parse error";
    Expected<HloInstructionIndexing> maps =
        computeOutputToInputIndexing(*module->entry()->root(), 0, &context);
    return maps ? maps->toString() : "error: " + maps.error().message;
  }

  /// "" when the ROOT's maps name exactly the elements the evaluator reads,
  /// both ways; else what differs.
  std::string bruteForce(const std::string &text,
                         const CheckOptions &options = {});

  mlir::MLIRContext context;
};

std::string HloIndexingTest::bruteForce(const std::string &text,
                                        const CheckOptions &options) {
  std::unique_ptr<HloModule> module = parse(text);
  if (!module)
    return "parse error";
  return checkRootMaps(*module, options, &context);
}

//===----------------------------------------------------------------------===//
// The spec's printed examples.
//===----------------------------------------------------------------------===//

TEST_F(HloIndexingTest, TransposePrintsSpecExample) {
  EXPECT_EQ(printed(entry("p = f32[20,40]{1,0} parameter(0)\n"
                          "ROOT t = f32[40,20]{1,0} transpose(p), "
                          "dimensions={1,0}\n")),
            "operand id = 0\n"
            "(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]\n");
}

TEST_F(HloIndexingTest, PadWithInteriorPrintsFloorDivAndMod) {
  EXPECT_EQ(printed(entry("p = f32[4]{0} parameter(0)\n"
                          "z = f32[] parameter(1)\n"
                          "ROOT q = f32[13]{0} pad(p, z), padding=1_2_2\n")),
            "operand id = 0\n"
            "(d0) -> ((d0 - 1) floordiv 3), domain: d0 in [1, 10], "
            "(d0 - 1) mod 3 in [0, 0]\n"
            "\n"
            "operand id = 1\n"
            "(d0) -> (), domain: d0 in [0, 12]\n");
}

TEST_F(HloIndexingTest, ReducePrintsRangeVariables) {
  EXPECT_EQ(printed(entry("p = f32[3,4,5]{2,1,0} parameter(0)\n"
                          "z = f32[] constant(0)\n"
                          "ROOT r = f32[4]{0} reduce(p, z), "
                          "dimensions={0,2}, to_apply=add\n")),
            "operand id = 0\n"
            "(d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 3], s0 in "
            "[0, 2], s1 in [0, 4]\n"
            "\n"
            "operand id = 1\n"
            "(d0) -> (), domain: d0 in [0, 3]\n");
}

//===----------------------------------------------------------------------===//
// Brute force, op by op.
//===----------------------------------------------------------------------===//

TEST_F(HloIndexingTest, UnaryOps) {
  for (const char *op : {"abs",
                         "negate",
                         "exponential",
                         "exponential-minus-one",
                         "log",
                         "log-plus-one",
                         "tanh",
                         "logistic",
                         "sqrt",
                         "rsqrt",
                         "cbrt",
                         "sine",
                         "cosine",
                         "tan",
                         "floor",
                         "ceil",
                         "sign",
                         "round-nearest-even",
                         "round-nearest-afz",
                         "erf"})
    EXPECT_EQ(bruteForce(entry(std::string("p = f32[2,3]{1,0} parameter(0)\n"
                                           "ROOT r = f32[2,3]{1,0} ") +
                               op + "(p)\n")),
              "")
        << op;
  for (const char *op : {"not", "popcnt", "count-leading-zeros", "abs"})
    EXPECT_EQ(bruteForce(entry(std::string("p = s32[3,2]{1,0} parameter(0)\n"
                                           "ROOT r = s32[3,2]{1,0} ") +
                               op + "(p)\n")),
              "")
        << op;
}

TEST_F(HloIndexingTest, BinaryOps) {
  for (const char *op :
       {"add", "subtract", "multiply", "divide", "maximum", "minimum", "atan2"})
    EXPECT_EQ(bruteForce(entry(std::string("p = f32[2,3]{1,0} parameter(0)\n"
                                           "q = f32[2,3]{1,0} parameter(1)\n"
                                           "ROOT r = f32[2,3]{1,0} ") +
                               op + "(p, q)\n")),
              "")
        << op;
  for (const char *op : {"and", "or", "xor", "add", "multiply"})
    EXPECT_EQ(bruteForce(entry(std::string("p = s32[4]{0} parameter(0)\n"
                                           "q = s32[4]{0} parameter(1)\n"
                                           "ROOT r = s32[4]{0} ") +
                               op + "(p, q)\n")),
              "")
        << op;
  // A shift past the width, a remainder smaller than the divisor or a power
  // of a negative base can leave the output unchanged: check that the maps
  // cover what is read.
  CheckOptions loose;
  loose.subset = {0, 1};
  for (const char *op : {"shift-left", "shift-right-logical",
                         "shift-right-arithmetic", "remainder"})
    EXPECT_EQ(bruteForce(entry(std::string("p = s32[4]{0} parameter(0)\n"
                                           "q = s32[4]{0} parameter(1)\n"
                                           "ROOT r = s32[4]{0} ") +
                               op + "(p, q)\n"),
                         loose),
              "")
        << op;
  EXPECT_EQ(bruteForce(entry("p = f32[4]{0} parameter(0)\n"
                             "q = f32[4]{0} parameter(1)\n"
                             "ROOT r = f32[4]{0} power(p, q)\n"),
                       loose),
            "");
}

TEST_F(HloIndexingTest, SelectClampCompareConvert) {
  CheckOptions branches;
  branches.subset = {1, 2};
  EXPECT_EQ(bruteForce(entry("c = pred[2,3]{1,0} parameter(0)\n"
                             "p = f32[2,3]{1,0} parameter(1)\n"
                             "q = f32[2,3]{1,0} parameter(2)\n"
                             "ROOT r = f32[2,3]{1,0} select(c, p, q)\n"),
                       branches),
            "");
  EXPECT_EQ(bruteForce(entry("lo = f32[] parameter(0)\n"
                             "p = f32[2,3]{1,0} parameter(1)\n"
                             "hi = f32[] parameter(2)\n"
                             "ROOT r = f32[2,3]{1,0} clamp(lo, p, hi)\n"),
                       branches),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[2,3]{1,0} parameter(0)\n"
                             "q = f32[2,3]{1,0} parameter(1)\n"
                             "ROOT r = pred[2,3]{1,0} compare(p, q), "
                             "direction=LT\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[2,3]{1,0} parameter(0)\n"
                             "ROOT r = s32[2,3]{1,0} convert(p)\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = s32[2,3]{1,0} parameter(0)\n"
                             "ROOT r = f32[2,3]{1,0} convert(p)\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[2,3]{1,0} parameter(0)\n"
                             "ROOT r = s32[2,3]{1,0} bitcast-convert(p)\n")),
            "");
}

TEST_F(HloIndexingTest, BitcastConvertChangingWidth) {
  // f32 -> 4 x u8: a new minor dim; 2 x u16 -> f32: the minor dim is read
  // whole.
  EXPECT_EQ(bruteForce(entry("p = f32[2,3]{1,0} parameter(0)\n"
                             "ROOT r = u8[2,3,4]{2,1,0} bitcast-convert(p)\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = u16[2,3,2]{2,1,0} parameter(0)\n"
                             "ROOT r = f32[2,3]{1,0} bitcast-convert(p)\n")),
            "");
  EXPECT_EQ(printed(entry("p = u16[2,3,2]{2,1,0} parameter(0)\n"
                          "ROOT r = f32[2,3]{1,0} bitcast-convert(p)\n")),
            "operand id = 0\n"
            "(d0, d1)[s0] -> (d0, d1, s0), domain: d0 in [0, 1], d1 in [0, "
            "2], s0 in [0, 1]\n");
}

TEST_F(HloIndexingTest, VariadicReduceEveryOutputReadsEveryInput) {
  std::string text = std::string(kHeader) + R"(
argmax {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  gt = pred[] compare(a, c), direction=GT
  v = f32[] select(gt, a, c)
  i = s32[] select(gt, b, d)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  p = f32[3,4]{1,0} parameter(0)
  q = s32[3,4]{1,0} parameter(1)
  z = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = (f32[3]{0}, s32[3]{0}) reduce(p, q, z, zi), dimensions={1}, to_apply=argmax
}
)";
  // Only the argmax's own index is read from q: its maps cover more.
  CheckOptions options;
  options.subset = {1};
  EXPECT_EQ(bruteForce(text, options), "");
  std::unique_ptr<HloModule> module = parse(text);
  const HloInstruction &root = *module->entry()->root();
  for (int64_t out = 0; out < 2; ++out) {
    Expected<HloInstructionIndexing> maps =
        computeOutputToInputIndexing(root, out, &context);
    ASSERT_TRUE(maps.ok()) << maps.error().message;
    ASSERT_EQ(maps->maps.size(), 4u);
    for (int64_t k = 0; k < 2; ++k)
      EXPECT_EQ(maps->maps[k].front().toString(),
                "(d0)[s0] -> (d0, s0), domain: d0 in [0, 2], s0 in [0, 3]");
  }
  Expected<HloInstructionIndexing> back =
      computeInputToOutputIndexing(root, 1, &context);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->toString("output"),
            "output id = 0\n(d0, d1) -> (d0), domain: d0 in [0, 2], d1 in [0, "
            "3]\n\noutput id = 1\n(d0, d1) -> (d0), domain: d0 in [0, 2], d1 "
            "in [0, 3]\n");
}

TEST_F(HloIndexingTest, Map) {
  EXPECT_EQ(bruteForce(entry("p = f32[2,3]{1,0} parameter(0)\n"
                             "q = f32[2,3]{1,0} parameter(1)\n"
                             "ROOT r = f32[2,3]{1,0} map(p, q), "
                             "dimensions={0,1}, to_apply=add\n")),
            "");
}

TEST_F(HloIndexingTest, Broadcast) {
  EXPECT_EQ(bruteForce(entry("p = f32[3]{0} parameter(0)\n"
                             "ROOT r = f32[2,3,4]{2,1,0} broadcast(p), "
                             "dimensions={1}\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[4,2]{1,0} parameter(0)\n"
                             "ROOT r = f32[2,3,4]{2,1,0} broadcast(p), "
                             "dimensions={2,0}\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[] parameter(0)\n"
                             "ROOT r = f32[2,3]{1,0} broadcast(p), "
                             "dimensions={}\n")),
            "");
}

TEST_F(HloIndexingTest, Transpose) {
  EXPECT_EQ(bruteForce(entry("p = f32[2,3,4]{2,1,0} parameter(0)\n"
                             "ROOT r = f32[4,2,3]{2,1,0} transpose(p), "
                             "dimensions={2,0,1}\n")),
            "");
}

TEST_F(HloIndexingTest, Reshape) {
  for (const char *shapes :
       {"f32[2,3,4]{2,1,0} -> f32[6,4]{1,0}", "f32[12]{0} -> f32[3,4]{1,0}",
        "f32[4,6]{1,0} -> f32[3,8]{1,0}",
        "f32[2,1,3]{2,1,0} -> f32[3,1,2]{2,1,0}",
        "f32[6,4]{1,0} -> f32[2,3,2,2]{3,2,1,0}"}) {
    std::string s = shapes;
    size_t arrow = s.find(" -> ");
    EXPECT_EQ(bruteForce(entry("p = " + s.substr(0, arrow) +
                               " parameter(0)\nROOT r = " +
                               s.substr(arrow + 4) + " reshape(p)\n")),
              "")
        << shapes;
  }
  EXPECT_EQ(printed(entry("p = f32[4,6]{1,0} parameter(0)\n"
                          "ROOT r = f32[24]{0} reshape(p)\n")),
            "operand id = 0\n"
            "(d0) -> (d0 floordiv 6, d0 mod 6), domain: d0 in [0, 23]\n");
}

TEST_F(HloIndexingTest, BitcastFollowsLayouts) {
  for (const char *shapes :
       {"f32[2,3]{1,0} -> f32[3,2]{0,1}", "f32[4,6]{1,0} -> f32[24]{0}",
        "f32[2,3,4]{0,2,1} -> f32[3,4,2]{2,1,0}",
        "f32[4,4]{1,0:T(2,2)} -> f32[16]{0}",
        "f32[3,3]{1,0:T(2,2)} -> f32[16]{0}",
        "f32[16]{0} -> f32[4,4]{1,0:T(2,2)}"}) {
    std::string s = shapes;
    size_t arrow = s.find(" -> ");
    EXPECT_EQ(bruteForce(entry("p = " + s.substr(0, arrow) +
                               " parameter(0)\nROOT r = " +
                               s.substr(arrow + 4) + " bitcast(p)\n")),
              "")
        << shapes;
  }
  EXPECT_EQ(printed(entry("p = f32[2,3]{1,0} parameter(0)\n"
                          "ROOT r = f32[3,2]{0,1} bitcast(p)\n")),
            "operand id = 0\n"
            "(d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in [0, 1]\n");
}

TEST_F(HloIndexingTest, CopySliceReverse) {
  EXPECT_EQ(bruteForce(entry("p = f32[2,3]{1,0} parameter(0)\n"
                             "ROOT r = f32[2,3]{0,1} copy(p)\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[7,9]{1,0} parameter(0)\n"
                             "ROOT r = f32[3,3]{1,0} slice(p), "
                             "slice={[1:6:2], [0:9:3]}\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[3,2,4]{2,1,0} parameter(0)\n"
                             "ROOT r = f32[3,2,4]{2,1,0} reverse(p), "
                             "dimensions={0,2}\n")),
            "");
}

TEST_F(HloIndexingTest, Pad) {
  EXPECT_EQ(bruteForce(entry("p = f32[4,3]{1,0} parameter(0)\n"
                             "z = f32[] parameter(1)\n"
                             "ROOT r = f32[13,3]{1,0} pad(p, z), "
                             "padding=1_2_2x-1_1_0\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[5]{0} parameter(0)\n"
                             "z = f32[] parameter(1)\n"
                             "ROOT r = f32[7]{0} pad(p, z), "
                             "padding=-2_0_1\n")),
            "");
}

TEST_F(HloIndexingTest, Concatenate) {
  EXPECT_EQ(bruteForce(entry("p = f32[2,3]{1,0} parameter(0)\n"
                             "q = f32[4,3]{1,0} parameter(1)\n"
                             "s = f32[1,3]{1,0} parameter(2)\n"
                             "ROOT r = f32[7,3]{1,0} concatenate(p, q, s), "
                             "dimensions={0}\n")),
            "");
  EXPECT_EQ(printed(entry("p = f32[2,3]{1,0} parameter(0)\n"
                          "q = f32[2,4]{1,0} parameter(1)\n"
                          "ROOT r = f32[2,7]{1,0} concatenate(p, q), "
                          "dimensions={1}\n")),
            "operand id = 0\n"
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]\n"
            "\n"
            "operand id = 1\n"
            "(d0, d1) -> (d0, d1 - 3), domain: d0 in [0, 1], d1 in [3, 6]\n");
}

TEST_F(HloIndexingTest, Reduce) {
  EXPECT_EQ(bruteForce(entry("p = f32[3,4,5]{2,1,0} parameter(0)\n"
                             "z = f32[] parameter(1)\n"
                             "ROOT r = f32[4]{0} reduce(p, z), "
                             "dimensions={0,2}, to_apply=add\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[3,4]{1,0} parameter(0)\n"
                             "z = f32[] parameter(1)\n"
                             "ROOT r = f32[] reduce(p, z), "
                             "dimensions={0,1}, to_apply=add\n")),
            "");
}

TEST_F(HloIndexingTest, ReduceWindow) {
  CheckOptions options;
  EXPECT_EQ(bruteForce(entry("p = f32[6,7]{1,0} parameter(0)\n"
                             "z = f32[] parameter(1)\n"
                             "ROOT r = f32[6,7]{1,0} reduce-window(p, z), "
                             "window={size=2x3 pad=0_1x1_1}, to_apply=add\n"),
                       options),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[5,4]{1,0} parameter(0)\n"
                             "z = f32[] parameter(1)\n"
                             "ROOT r = f32[5,2]{1,0} reduce-window(p, z), "
                             "window={size=2x2 stride=2x1 pad=1_0x0_0 "
                             "lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=add\n"),
                       options),
            "");
}

TEST_F(HloIndexingTest, IotaHasNoOperands) {
  EXPECT_EQ(printed(entry("ROOT r = s32[3,4]{1,0} iota(), iota_dimension=1\n")),
            "");
}

TEST_F(HloIndexingTest, DynamicSlice) {
  // Starts (2, 4) clamp to (2, 2) for a 3x3 slice of 6x5.
  CheckOptions options;
  options.rtValues = {2, 2};
  EXPECT_EQ(bruteForce(entry("p = f32[6,5]{1,0} parameter(0)\n"
                             "i = s32[] constant(2)\n"
                             "j = s32[] constant(4)\n"
                             "ROOT r = f32[3,3]{1,0} dynamic-slice(p, i, j), "
                             "dynamic_slice_sizes={3,3}\n"),
                       options),
            "");
  EXPECT_EQ(printed(entry("p = f32[6,5]{1,0} parameter(0)\n"
                          "i = s32[] parameter(1)\n"
                          "j = s32[] parameter(2)\n"
                          "ROOT r = f32[3,3]{1,0} dynamic-slice(p, i, j), "
                          "dynamic_slice_sizes={3,3}\n"))
                .substr(0, 124),
            "operand id = 0\n"
            "(d0, d1){rt0, rt1} -> (d0 + rt0, d1 + rt1), domain: d0 in [0, "
            "2], d1 in [0, 2], rt0 in [0, 3], rt1 in [0, 2]\n");
}

TEST_F(HloIndexingTest, GatherWithBatchingDims) {
  // Rows of p picked by i, per batch b (operand_batching_dims): output
  // (b, r, c) reads p[b, rt + r... no, p[b, rt, c] with rt the clamped start.
  // Every index of a batch is 5, which clamps to 4 for a 1x3 slice of 5x3;
  // the constant indices are not ROOT operands, so only p is checked.
  std::string text =
      entry("p = f32[2,5,3]{2,1,0} parameter(0)\n"
            "i = s32[2,4] constant({ {5, 5, 5, 5}, {5, 5, 5, 5} })\n"
            "ROOT g = f32[2,4,3]{2,1,0} gather(p, i), offset_dims={2}, "
            "collapsed_slice_dims={1}, start_index_map={1}, "
            "operand_batching_dims={0}, start_indices_batching_dims={0}, "
            "index_vector_dim=2, slice_sizes={1,1,3}\n");
  CheckOptions options;
  options.rtValues = {4};
  EXPECT_EQ(bruteForce(text, options), "");
  EXPECT_EQ(printed(entry("p = f32[2,5,3]{2,1,0} parameter(0)\n"
                          "i = s32[2,4] parameter(1)\n"
                          "ROOT g = f32[2,4,3]{2,1,0} gather(p, i), "
                          "offset_dims={2}, collapsed_slice_dims={1}, "
                          "start_index_map={1}, operand_batching_dims={0}, "
                          "start_indices_batching_dims={0}, "
                          "index_vector_dim=2, slice_sizes={1,1,3}\n")),
            "operand id = 0\n"
            "(d0, d1, d2){rt0} -> (d0, rt0, d2), domain: d0 in [0, 1], d1 in "
            "[0, 3], d2 in [0, 2], rt0 in [0, 4]\n\n"
            "operand id = 1\n"
            "(d0, d1, d2) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 3], d2 "
            "in [0, 2]\n");
  // Malformed dimension numbers are the verifier's to refuse.
  Expected<std::unique_ptr<HloModule>> bad =
      parseHloModule(entry("p = f32[5,3]{1,0} parameter(0)\n"
                           "i = s32[4,1] parameter(1)\n"
                           "ROOT g = f32[4,3]{1,0} gather(p, i), "
                           "offset_dims={1}, collapsed_slice_dims={9}, "
                           "start_index_map={0}, index_vector_dim=1, "
                           "slice_sizes={1,3}\n"));
  ASSERT_TRUE(bad.ok());
  Status problem = verifyHloModule(**bad);
  ASSERT_FALSE(problem);
  EXPECT_NE(problem.error().message.find(
                "%g: collapsed_slice_dims 9 is out of range, expected 0..1"),
            std::string::npos)
      << problem.error().message;
}

TEST_F(HloIndexingTest, ScatterUpdatesReachTheOutputThroughRuntimeVariables) {
  // Every index is 2: each update row lands on row 2, so the updates' map
  // with rt0 fixed to 2 names exactly the output elements each update
  // element changes; the operand maps by the identity both ways. The
  // indices are a constant, not a ROOT parameter, so only p and u are
  // checked.
  const char *scatter =
      "ROOT s = f32[6,5]{1,0} scatter(p, i, u), update_window_dims={1,2}, "
      "inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
      "index_vector_dim=1, to_apply=add\n";
  CheckOptions options;
  options.rtValues = {2};
  EXPECT_EQ(
      bruteForce(entry(std::string("p = f32[6,5]{1,0} parameter(0)\n"
                                   "i = s32[3,1] constant({ {2}, {2}, "
                                   "{2} })\n"
                                   "u = f32[3,2,5]{2,1,0} parameter(1)\n") +
                       scatter),
                 options),
      "");
  std::unique_ptr<HloModule> module =
      parse(entry(std::string("p = f32[6,5]{1,0} parameter(0)\n"
                              "i = s32[3,1] parameter(1)\n"
                              "u = f32[3,2,5]{2,1,0} parameter(2)\n") +
                  scatter));
  ASSERT_TRUE(module);
  const HloInstruction &root = *module->entry()->root();
  Expected<HloInstructionIndexing> updates =
      computeInputToOutputIndexing(root, 2, &context);
  ASSERT_TRUE(updates) << updates.error().message;
  EXPECT_EQ(updates->toString(),
            "operand id = 0\n"
            "(d0, d1, d2){rt0} -> (d1 + rt0, d2), domain: d0 in [0, 2], d1 in "
            "[0, 1], d2 in [0, 4], rt0 in [0, 4]\n");
  Expected<HloInstructionIndexing> indices =
      computeInputToOutputIndexing(root, 1, &context);
  ASSERT_TRUE(indices) << indices.error().message;
  EXPECT_EQ(indices->toString(), "operand id = 0\nunknown indexing\n");
  EXPECT_EQ(printed(entry(std::string("p = f32[6,5]{1,0} parameter(0)\n"
                                      "i = s32[3,1] parameter(1)\n"
                                      "u = f32[3,2,5]{2,1,0} parameter(2)\n") +
                          scatter)),
            "operand id = 0\n"
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 5], d1 in [0, 4]\n\n"
            "operand id = 1\nunknown indexing\n\n"
            "operand id = 2\nunknown indexing\n");
}

TEST_F(HloIndexingTest, ScatterWithBatchingAndInsertedDims) {
  // Per batch b (input_batching_dims), updates u[b, j, c] land on operand
  // row rt0 (every index 4) of batch b, column c: inserted dim 1 has a
  // window of 1.
  CheckOptions options;
  options.rtValues = {4};
  EXPECT_EQ(
      bruteForce(
          entry("p = f32[2,6,5]{2,1,0} parameter(0)\n"
                "i = s32[2,3,1] constant({ { {4}, {4}, {4} }, { {4}, {4}, "
                "{4} } })\n"
                "u = f32[2,3,5]{2,1,0} parameter(1)\n"
                "ROOT s = f32[2,6,5]{2,1,0} scatter(p, i, u), "
                "update_window_dims={2}, inserted_window_dims={1}, "
                "scatter_dims_to_operand_dims={1}, input_batching_dims={0}, "
                "scatter_indices_batching_dims={0}, index_vector_dim=2, "
                "to_apply=add\n"),
          options),
      "");
}

TEST_F(HloIndexingTest, SortReadsItsLine) {
  // Every output element may come from any element of its row, in both
  // operands; which ones it does depends on the values (subset check).
  CheckOptions options;
  options.subsetAll = true;
  std::string text =
      "HloModule m\n"
      "less {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
      "  ROOT r = pred[] compare(a, b), direction=LT\n}\n"
      "ENTRY e {\n  p = f32[2,4]{1,0} parameter(0)\n"
      "  q = s32[2,4]{1,0} parameter(1)\n"
      "  ROOT s = (f32[2,4]{1,0}, s32[2,4]{1,0}) sort(p, q), "
      "dimensions={1}, is_stable=true, to_apply=less\n}\n";
  EXPECT_EQ(bruteForce(text, options), "");
  std::unique_ptr<HloModule> module = parse(text);
  ASSERT_TRUE(module);
  Expected<HloInstructionIndexing> maps =
      computeOutputToInputIndexing(*module->entry()->root(), 1, &context);
  ASSERT_TRUE(maps.ok()) << maps.error().message;
  EXPECT_EQ(maps->toString(),
            "operand id = 0\n"
            "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 1], d1 in [0, 3], s0 "
            "in [0, 3]\n\n"
            "operand id = 1\n"
            "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 1], d1 in [0, 3], s0 "
            "in [0, 3]\n");
}

TEST_F(HloIndexingTest, ConvolutionWithEveryAttribute) {
  // Each case against the evaluator by brute force, both operands exact:
  // strides, padding (negative too), both dilations, reversal, feature and
  // batch groups, dims in any label order.
  const char *cases[][4] = {
      {"f32[1,6,2]", "f32[3,2,4]", "f32[1,4,4]",
       "window={size=3}, dim_labels=b0f_0io->b0f"},
      {"f32[2,5,3]", "f32[2,3,2]", "f32[2,5,2]",
       "window={size=2 stride=2 pad=2_1 lhs_dilate=2 rhs_dilate=2}, "
       "dim_labels=b0f_0io->b0f"},
      {"f32[1,4,5,2]", "f32[2,2,2,3]", "f32[1,3,2,3]",
       "window={size=2x2 stride=1x2 pad=0_0x-1_1 rhs_reversal=1x0}, "
       "dim_labels=b01f_01io->b01f"},
      {"f32[2,4,6]", "f32[3,4,2]", "f32[2,6,4]",
       "window={size=3 pad=1_1}, dim_labels=bf0_0oi->b0f, "
       "feature_group_count=2"},
      {"f32[2,5,4]", "f32[6,2,2]", "f32[2,6,4]",
       "window={size=2 stride=1}, dim_labels=f0b_oi0->bf0, "
       "batch_group_count=2"},
  };
  for (const auto &c : cases) {
    std::string text =
        entry(std::string("l = ") + c[0] + " parameter(0)\n" + "r = " + c[1] +
              " parameter(1)\n" + "ROOT c = " + c[2] + " convolution(l, r), " +
              c[3] + "\n");
    EXPECT_EQ(bruteForce(text), "") << text;
  }
  EXPECT_EQ(printed(entry("l = f32[2,6,2] parameter(0)\n"
                          "r = f32[3,2,4] parameter(1)\n"
                          "ROOT c = f32[2,5,4] convolution(l, r), "
                          "window={size=3 stride=2 lhs_dilate=2}, "
                          "dim_labels=b0f_0io->b0f\n")),
            "operand id = 0\n"
            "(d0, d1, d2)[s0, s1] -> (d0, d1 + s0 floordiv 2, s1), domain: "
            "d0 in [0, 1], d1 in [0, 4], d2 in [0, 3], s0 in [0, 2], s1 in "
            "[0, 1], s0 mod 2 in [0, 0]\n\n"
            "operand id = 1\n"
            "(d0, d1, d2)[s0, s1] -> (s0, s1, d2), domain: d0 in [0, 1], d1 "
            "in [0, 4], d2 in [0, 3], s0 in [0, 2], s1 in [0, 1], s0 mod 2 "
            "in [0, 0]\n");
}

TEST_F(HloIndexingTest, DynamicUpdateSlice) {
  // Starts (-1, 3) clamp to (0, 2) for a 2x3 update of 4x5.
  CheckOptions options;
  options.rtValues = {0, 2};
  options.subset = {0};
  EXPECT_EQ(
      bruteForce(entry("p = f32[4,5]{1,0} parameter(0)\n"
                       "u = f32[2,3]{1,0} parameter(1)\n"
                       "i = s32[] constant(-1)\n"
                       "j = s32[] constant(3)\n"
                       "ROOT r = f32[4,5]{1,0} dynamic-update-slice(p, u, i, "
                       "j)\n"),
                 options),
      "");
}

TEST_F(HloIndexingTest, Dot) {
  EXPECT_EQ(bruteForce(entry("p = f32[2,3,4]{2,1,0} parameter(0)\n"
                             "q = f32[2,4,5]{2,1,0} parameter(1)\n"
                             "ROOT r = f32[2,3,5]{2,1,0} dot(p, q), "
                             "lhs_batch_dims={0}, rhs_batch_dims={0}, "
                             "lhs_contracting_dims={2}, "
                             "rhs_contracting_dims={1}\n")),
            "");
  EXPECT_EQ(bruteForce(entry("p = f32[4,3]{1,0} parameter(0)\n"
                             "q = f32[5,4]{1,0} parameter(1)\n"
                             "ROOT r = f32[3,5]{1,0} dot(p, q), "
                             "lhs_contracting_dims={0}, "
                             "rhs_contracting_dims={1}\n")),
            "");
}

TEST_F(HloIndexingTest, TupleAndGetTupleElement) {
  std::unique_ptr<HloModule> module =
      parse(entry("p = f32[2]{0} parameter(0)\n"
                  "q = f32[3]{0} parameter(1)\n"
                  "t = (f32[2]{0}, f32[3]{0}) tuple(p, q)\n"
                  "ROOT g = f32[3]{0} get-tuple-element(t), index=1\n"));
  const HloInstruction *tuple = module->entry()->instruction("t");
  Expected<HloInstructionIndexing> maps =
      computeOutputToInputIndexing(*tuple, 1, &context);
  ASSERT_TRUE(maps.ok()) << maps.error().message;
  EXPECT_EQ(maps->toString(), "operand id = 0\n\noperand id = 1\n"
                              "(d0) -> (d0), domain: d0 in [0, 2]\n");
  EXPECT_EQ(printed(module->toString()),
            "operand id = 0\n(d0) -> (d0), domain: d0 in [0, 2]\n");
}

//===----------------------------------------------------------------------===//
// Fusions.
//===----------------------------------------------------------------------===//

TEST_F(HloIndexingTest, SoftmaxFusion) {
  std::string text = std::string(kHeader) + R"(
fused {
  x = f32[3,4]{1,0} parameter(0)
  minf = f32[] constant(-inf)
  m = f32[3]{0} reduce(x, minf), dimensions={1}, to_apply=max
  mb = f32[3,4]{1,0} broadcast(m), dimensions={0}
  d = f32[3,4]{1,0} subtract(x, mb)
  e = f32[3,4]{1,0} exponential(d)
  zero = f32[] constant(0)
  s = f32[3]{0} reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[3,4]{1,0} broadcast(s), dimensions={0}
  ROOT y = f32[3,4]{1,0} divide(e, sb)
}
ENTRY e {
  p = f32[3,4]{1,0} parameter(0)
  ROOT f = f32[3,4]{1,0} fusion(p), kind=kLoop, calls=fused
}
)";
  EXPECT_EQ(bruteForce(text), "");
  EXPECT_EQ(printed(text),
            "operand id = 0\n"
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 3]\n"
            "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 2], d1 in [0, 3], "
            "s0 in [0, 3]\n");
}

TEST_F(HloIndexingTest, GeluFusion) {
  std::string text = std::string(kHeader) + R"(
fused {
  x = f32[2,5]{1,0} parameter(0)
  x2 = f32[2,5]{1,0} multiply(x, x)
  x3 = f32[2,5]{1,0} multiply(x2, x)
  c0 = f32[] constant(0.044715)
  b0 = f32[2,5]{1,0} broadcast(c0), dimensions={}
  t0 = f32[2,5]{1,0} multiply(x3, b0)
  t1 = f32[2,5]{1,0} add(x, t0)
  c1 = f32[] constant(0.797884583)
  b1 = f32[2,5]{1,0} broadcast(c1), dimensions={}
  t2 = f32[2,5]{1,0} multiply(t1, b1)
  t3 = f32[2,5]{1,0} tanh(t2)
  c2 = f32[] constant(1)
  b2 = f32[2,5]{1,0} broadcast(c2), dimensions={}
  t4 = f32[2,5]{1,0} add(t3, b2)
  c3 = f32[] constant(0.5)
  b3 = f32[2,5]{1,0} broadcast(c3), dimensions={}
  t5 = f32[2,5]{1,0} multiply(t4, b3)
  ROOT y = f32[2,5]{1,0} multiply(x, t5)
}
ENTRY e {
  p = f32[2,5]{1,0} parameter(0)
  ROOT f = f32[2,5]{1,0} fusion(p), kind=kLoop, calls=fused
}
)";
  EXPECT_EQ(bruteForce(text), "");
  EXPECT_EQ(printed(text), "operand id = 0\n(d0, d1) -> (d0, d1), domain: d0 "
                           "in [0, 1], d1 in [0, 4]\n");
}

TEST_F(HloIndexingTest, FusionOfMovesComposes) {
  // transpose, reshape, slice, pad, reverse and concatenate in a row; one
  // operand read at two offsets.
  std::string text = std::string(kHeader) + R"(
fused {
  x = f32[4,6]{1,0} parameter(0)
  y = f32[3]{0} parameter(1)
  z = f32[] parameter(2)
  t = f32[6,4]{1,0} transpose(x), dimensions={1,0}
  r = f32[24]{0} reshape(t)
  a = f32[11]{0} slice(r), slice={[0:22:2]}
  b = f32[11]{0} slice(r), slice={[1:23:2]}
  ab = f32[11]{0} add(a, b)
  yp = f32[7]{0} pad(y, z), padding=1_1_1
  yr = f32[7]{0} reverse(yp), dimensions={0}
  ROOT c = f32[18]{0} concatenate(ab, yr), dimensions={0}
}
ENTRY e {
  p = f32[4,6]{1,0} parameter(0)
  q = f32[3]{0} parameter(1)
  w = f32[] parameter(2)
  ROOT f = f32[18]{0} fusion(p, q, w), kind=kLoop, calls=fused
}
)";
  EXPECT_EQ(bruteForce(text), "");
}

TEST_F(HloIndexingTest, FusionWithIotaDotAndReduceWindow) {
  std::string text = std::string(kHeader) + R"(
fused {
  x = f32[3,4]{1,0} parameter(0)
  w = f32[4,2]{1,0} parameter(1)
  i = f32[3,4]{1,0} iota(), iota_dimension=1
  xi = f32[3,4]{1,0} add(x, i)
  d = f32[3,2]{1,0} dot(xi, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  ROOT r = f32[2,2]{1,0} reduce-window(d, zero), window={size=2x1}, to_apply=add
}
ENTRY e {
  p = f32[3,4]{1,0} parameter(0)
  q = f32[4,2]{1,0} parameter(1)
  ROOT f = f32[2,2]{1,0} fusion(p, q), kind=kLoop, calls=fused
}
)";
  EXPECT_EQ(bruteForce(text), "");
}

TEST_F(HloIndexingTest, FusionThroughAVariadicReduce) {
  // get-tuple-element picks the output of the argmax reduce, both ways.
  std::string text = std::string(kHeader) + R"(
argmax {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  gt = pred[] compare(a, c), direction=GT
  v = f32[] select(gt, a, c)
  i = s32[] select(gt, b, d)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
fused {
  x = f32[3,4]{1,0} parameter(0)
  i = s32[3,4]{1,0} iota(), iota_dimension=1
  z = f32[] constant(-inf)
  zi = s32[] constant(0)
  r = (f32[3]{0}, s32[3]{0}) reduce(x, i, z, zi), dimensions={1}, to_apply=argmax
  m = f32[3]{0} get-tuple-element(r), index=0
  k = s32[3]{0} get-tuple-element(r), index=1
  kf = f32[3]{0} convert(k)
  ROOT y = f32[3]{0} add(m, kf)
}
ENTRY e {
  p = f32[3,4]{1,0} parameter(0)
  ROOT f = f32[3]{0} fusion(p), kind=kLoop, calls=fused
}
)";
  EXPECT_EQ(bruteForce(text), "");
  EXPECT_EQ(printed(text), "operand id = 0\n(d0)[s0] -> (d0, s0), domain: d0 "
                           "in [0, 2], s0 in [0, 3]\n");
}

TEST_F(HloIndexingTest, CallComposesLikeAFusion) {
  std::string text = std::string(kHeader) + R"(
body {
  x = f32[2,3]{1,0} parameter(0)
  y = f32[3]{0} parameter(1)
  t = f32[3,2]{1,0} transpose(x), dimensions={1,0}
  b = f32[3,2]{1,0} broadcast(y), dimensions={0}
  ROOT s = f32[3,2]{1,0} subtract(t, b)
}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  q = f32[3]{0} parameter(1)
  ROOT c = f32[3,2]{1,0} call(p, q), to_apply=body
}
)";
  EXPECT_EQ(bruteForce(text), "");
  EXPECT_EQ(printed(text),
            "operand id = 0\n(d0, d1) -> (d1, d0), domain: d0 in [0, 2], d1 in "
            "[0, 1]\n\noperand id = 1\n(d0, d1) -> (d0), domain: d0 in [0, "
            "2], d1 in [0, 1]\n");
}

TEST_F(HloIndexingTest, FusionInputToOutput) {
  std::string text = std::string(kHeader) + R"(
fused {
  x = f32[2,3]{1,0} parameter(0)
  t = f32[3,2]{1,0} transpose(x), dimensions={1,0}
  b = f32[3,2,4]{2,1,0} broadcast(t), dimensions={0,1}
  zero = f32[] constant(0)
  ROOT r = f32[3,4]{1,0} reduce(b, zero), dimensions={1}, to_apply=add
}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT f = f32[3,4]{1,0} fusion(p), kind=kLoop, calls=fused
}
)";
  EXPECT_EQ(bruteForce(text), "");
  std::unique_ptr<HloModule> module = parse(text);
  Expected<HloInstructionIndexing> maps =
      computeInputToOutputIndexing(*module->entry()->root(), 0, &context);
  ASSERT_TRUE(maps.ok()) << maps.error().message;
  EXPECT_EQ(maps->toString("output"),
            "output id = 0\n"
            "(d0, d1)[s0] -> (d1, s0), domain: d0 in [0, 1], d1 in [0, 2], "
            "s0 in [0, 3]\n");
}

TEST_F(HloIndexingTest, CheckerCatchesAWrongMap) {
  // The checker itself: a transpose's map with the results swapped back
  // names the wrong elements, and a map missing half the domain misses
  // influence.
  std::unique_ptr<HloModule> module =
      parse(entry("p = f32[2,3]{1,0} parameter(0)\n"
                  "ROOT t = f32[3,2]{1,0} transpose(p), dimensions={1,0}\n"));
  std::vector<Literal> args = {
      makeBaseArgument(module->entry()->parameters()[0]->shape(), 0)};
  Expected<std::map<int64_t, Influence>> measured =
      computeInfluence(*module, args);
  ASSERT_TRUE(measured.ok());
  EXPECT_EQ(measured->at(0).size(), 6u);
  Expected<IndexingMap> wrong = parseIndexingMap(
      "(d0, d1) -> (d1, d0 mod 2), domain: d0 in [0, 2], d1 in [0, 1]",
      &context);
  Expected<IndexingMap> partial = parseIndexingMap(
      "(d0, d1) -> (d1, d0), domain: d0 in [0, 1], d1 in [0, 1]", &context);
  ASSERT_TRUE(wrong.ok() && partial.ok());
  for (const IndexingMap &map : {*wrong, *partial}) {
    Expected<Influence> named = pairsOfMaps({map}, {2, 3}, {3, 2}, false, {});
    ASSERT_TRUE(named.ok());
    EXPECT_NE(compareInfluence(*named, measured->at(0), false), "") << map;
  }
}

//===----------------------------------------------------------------------===//
// Errors.
//===----------------------------------------------------------------------===//

TEST_F(HloIndexingTest, FusionOperandsReachingAnOpWithoutMapsAreUnknown) {
  // %i and %u reach the scatter's output only through the indices' values
  // (unknown), %x by the identity, %y only through the add (known): XLA's
  // analysis marks the operands one by one. In the other direction, %i
  // reaches the output through values alone.
  std::unique_ptr<HloModule> module =
      parse("HloModule m\n"
            "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(a, b)\n}\n"
            "f {\n"
            "  x = f32[4,3]{1,0} parameter(0)\n"
            "  i = s32[2,1]{1,0} parameter(1)\n"
            "  u = f32[2,3]{1,0} parameter(2)\n"
            "  y = f32[4,3]{1,0} parameter(3)\n"
            "  s = f32[4,3]{1,0} scatter(x, i, u), update_window_dims={1}, "
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
            "index_vector_dim=1, to_apply=add\n"
            "  ROOT a = f32[4,3]{1,0} add(s, y)\n"
            "}\n"
            "ENTRY e {\n"
            "  x = f32[4,3]{1,0} parameter(0)\n"
            "  i = s32[2,1]{1,0} parameter(1)\n"
            "  u = f32[2,3]{1,0} parameter(2)\n"
            "  y = f32[4,3]{1,0} parameter(3)\n"
            "  ROOT r = f32[4,3]{1,0} fusion(x, i, u, y), kind=kLoop, calls=f\n"
            "}\n");
  if (!module)
    return;
  const HloInstruction &fusion = *module->entry()->root();
  Expected<HloInstructionIndexing> maps =
      computeOutputToInputIndexing(fusion, 0, &context);
  ASSERT_TRUE(maps.ok()) << maps.error().message;
  EXPECT_EQ(maps->toString(),
            "operand id = 0\n(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 "
            "in [0, 2]\n\n"
            "operand id = 1\nunknown indexing\n\n"
            "operand id = 2\nunknown indexing\n\n"
            "operand id = 3\n(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 "
            "in [0, 2]\n");
  Expected<HloInstructionIndexing> forward =
      computeInputToOutputIndexing(fusion, 3, &context);
  ASSERT_TRUE(forward.ok()) << forward.error().message;
  EXPECT_FALSE(forward->isUnknown(0));
  forward = computeInputToOutputIndexing(fusion, 1, &context);
  ASSERT_TRUE(forward.ok()) << forward.error().message;
  EXPECT_TRUE(forward->isUnknown(0));
  // The brute-force check accepts unknown indexing (it claims every pair)
  // and still checks the known operands; the updates' runtime variables
  // are not fixed, so their map covers what is read.
  CheckOptions options;
  options.subsetAll = true;
  EXPECT_EQ(checkRootMaps(*module, options, &context), "");
}

TEST_F(HloIndexingTest, OpWithoutMapsHasUnknownIndexing) {
  std::unique_ptr<HloModule> module =
      parse(entry("p = f32[4]{0} parameter(0)\n"
                  "ROOT r = f32[4]{0} custom-call(p), "
                  "custom_call_target=\"foo\"\n"));
  if (!module)
    return;
  Expected<HloInstructionIndexing> maps =
      computeOutputToInputIndexing(*module->entry()->root(), 0, &context);
  ASSERT_TRUE(maps.ok()) << maps.error().message;
  EXPECT_TRUE(maps->isUnknown(0));
  EXPECT_EQ(maps->toString(), "operand id = 0\nunknown indexing\n");
  maps = computeInputToOutputIndexing(*module->entry()->root(), 0, &context);
  ASSERT_TRUE(maps.ok()) << maps.error().message;
  EXPECT_EQ(maps->toString("output"), "output id = 0\nunknown indexing\n");
  maps = computeOutputToInputIndexing(*module->entry()->root(), 1, &context);
  ASSERT_FALSE(maps.ok());
  EXPECT_EQ(maps.error().message,
            "output 1 of custom-call %r is not an array, expected an output "
            "id below 1");
  maps = computeInputToOutputIndexing(*module->entry()->root(), 3, &context);
  ASSERT_FALSE(maps.ok());
  EXPECT_EQ(maps.error().message, "operand 3 of custom-call %r does not "
                                  "exist, expected an operand id below 1");
}

TEST_F(HloIndexingTest, HugeShapesAreRefused) {
  // The parser refuses such shapes; built in code they reach the maps.
  int64_t big = int64_t(1) << 32;
  HloComputation computation("e");
  HloInstruction *p =
      computation.addInstruction(std::make_unique<HloInstruction>(
          HloOpcode::Parameter, "p", Shape(PrimitiveType::F32, {big, big, 4})));
  auto reshape = std::make_unique<HloInstruction>(
      HloOpcode::Reshape, "r", Shape(PrimitiveType::F32, {4, big, big}));
  reshape->appendOperand(p);
  HloInstruction *r = computation.addInstruction(std::move(reshape));
  Expected<HloInstructionIndexing> maps =
      computeOutputToInputIndexing(*r, 0, &context);
  ASSERT_FALSE(maps.ok());
  EXPECT_EQ(maps.error().message,
            "reshape %r: shape f32[4,4294967296,4294967296] is dynamic or has "
            "more than 2^63 elements");
  EXPECT_FALSE(computeInputToOutputIndexing(*r, 0, &context).ok());
}

} // namespace

namespace {

/// c_i calls c_{i-1} (or fuses it), `levels` deep below the entry; with
/// `twice`, each computation calls the previous one twice.
std::string callChain(int levels, bool twice) {
  std::string text = "HloModule m\nc0 {\n  p = f32[2] parameter(0)\n"
                     "  ROOT r = f32[2] negate(p)\n}\n";
  for (int i = 1; i < levels; ++i) {
    std::string callee = "c" + std::to_string(i - 1);
    text += "c" + std::to_string(i) + " {\n  p = f32[2] parameter(0)\n";
    if (twice)
      text += "  a = f32[2] call(p), to_apply=" + callee +
              "\n  b = f32[2] fusion(p), kind=kLoop, calls=" + callee +
              "\n  ROOT r = f32[2] add(a, b)\n}\n";
    else
      text += "  ROOT r = f32[2] call(p), to_apply=" + callee + "\n}\n";
  }
  return text +
         "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] "
         "call(x), to_apply=c" +
         std::to_string(levels - 1) + "\n}\n";
}

TEST(HloIndexingCalls, NestAtMost256DeepWithoutTheVerifier) {
  // The verifier refuses such modules; the analysis stops by itself too.
  mlir::MLIRContext context;
  Expected<std::unique_ptr<HloModule>> module =
      parseHloModule(callChain(5000, false));
  ASSERT_TRUE(module) << module.error().message;
  Expected<HloInstructionIndexing> maps =
      computeOutputToInputIndexing(*(*module)->entry()->root(), 0, &context);
  ASSERT_FALSE(maps);
  EXPECT_EQ(maps.error().message,
            "call %r: calls and fusions nest more than 256 deep");
}

TEST(HloIndexingCalls, EachCalledComputationIsAnalysedOncePerQuery) {
  // 2^100 paths through the calls; one analysis per computation.
  mlir::MLIRContext context;
  Expected<std::unique_ptr<HloModule>> module =
      parseHloModule(callChain(100, true));
  ASSERT_TRUE(module) << module.error().message;
  Expected<HloInstructionIndexing> maps =
      computeOutputToInputIndexing(*(*module)->entry()->root(), 0, &context);
  ASSERT_TRUE(maps) << maps.error().message;
  EXPECT_EQ(maps->toString("operand"),
            "operand id = 0\n(d0) -> (d0), domain: d0 in [0, 1]\n");
}

} // namespace
