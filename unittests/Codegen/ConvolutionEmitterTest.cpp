//===- ConvolutionEmitterTest.cpp - Convolution in the loop emitter -------===//
//
// Random convolutions (1 or 2 spatial dims; any dim_labels order; strides,
// negative and positive padding, lhs and rhs dilation, reversal; feature or
// batch groups; f32, bf16, f16, s32 and s8) with a producer and a consumer,
// against the evaluator bit for bit with the CPU's and the GPU's launch:
// the kernel sums in the evaluator's order, floats in f64.
//
//===----------------------------------------------------------------------===//
#include "KernelCheck.h"

#include "tessel/Hlo/HloVerifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace tessel;

namespace {

/// Dims given in canonical order (two special dims, then the spatial ones)
/// stored in the order `order` (order[d]: the canonical dim at position d),
/// and the dim_labels letters for that order.
struct Stored {
  std::vector<int64_t> canonical;
  std::vector<int> order;
  std::vector<int64_t> dims() const {
    std::vector<int64_t> d;
    for (int c : order)
      d.push_back(canonical[c]);
    return d;
  }
  std::string labels(char first, char second) const {
    std::string text;
    for (int c : order)
      text += c == 0 ? first : c == 1 ? second : static_cast<char>('0' + c - 2);
    return text;
  }
};

/// A random convolution module, or "" when its output would be empty.
std::string randomConvolution(std::mt19937 &rng, const std::string &type) {
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  int spatial = pick(1, 2);
  int64_t g = 1, bg = 1;
  if (pick(0, 2) == 0)
    g = pick(2, 3);
  else if (pick(0, 2) == 0)
    bg = pick(2, 3);
  int64_t batch = bg * pick(1, 2), ci = pick(1, 3), co = g * bg * pick(1, 2);
  auto shuffled = [&](int rank) {
    std::vector<int> order(rank);
    for (int d = 0; d < rank; ++d)
      order[d] = d;
    std::shuffle(order.begin(), order.end(), rng);
    return order;
  };
  Stored lhs{{batch, ci * g}, shuffled(spatial + 2)};
  Stored rhs{{ci, co}, shuffled(spatial + 2)};
  Stored out{{batch / bg, co}, shuffled(spatial + 2)};
  std::string size = "size=", stride = "stride=", pad = "pad=",
              lhsDilate = "lhs_dilate=", rhsDilate = "rhs_dilate=",
              reversal = "rhs_reversal=";
  for (int s = 0; s < spatial; ++s) {
    int64_t in = pick(1, 6), k = pick(1, 3), st = pick(1, 3);
    int64_t lo = pick(-1, 2), hi = pick(-1, 2), ld = pick(1, 2),
            rd = pick(1, 2), rev = pick(0, 3) == 0;
    int64_t padded = (in - 1) * ld + 1 + lo + hi;
    int64_t dilatedK = (k - 1) * rd + 1;
    if (padded < dilatedK)
      return "";
    lhs.canonical.push_back(in);
    rhs.canonical.push_back(k);
    out.canonical.push_back((padded - dilatedK) / st + 1);
    std::string x = s ? "x" : "";
    size += x + std::to_string(k);
    stride += x + std::to_string(st);
    pad += x + std::to_string(lo) + "_" + std::to_string(hi);
    lhsDilate += x + std::to_string(ld);
    rhsDilate += x + std::to_string(rd);
    reversal += x + std::to_string(rev);
  }
  std::string body = "  %l = " + type + shapeText("", lhs.dims()) +
                     " parameter(0)\n  %r = " + type +
                     shapeText("", rhs.dims()) + " parameter(1)\n";
  std::string input = "%l";
  if (pick(0, 2) == 0) {
    body += "  %n = " + type + shapeText("", lhs.dims()) + " negate(%l)\n";
    input = "%n";
  }
  bool epilogue = pick(0, 2) == 0;
  body += std::string(epilogue ? "  %c = " : "  ROOT %c = ") + type +
          shapeText("", out.dims()) + " convolution(" + input +
          ", %r), window={" + size + " " + stride + " " + pad + " " +
          lhsDilate + " " + rhsDilate + " " + reversal +
          "}, dim_labels=" + lhs.labels('b', 'f') + "_" + rhs.labels('i', 'o') +
          "->" + out.labels('b', 'f') +
          ", feature_group_count=" + std::to_string(g) +
          ", batch_group_count=" + std::to_string(bg) + "\n";
  if (epilogue)
    body += "  ROOT %a = " + type + shapeText("", out.dims()) + " abs(%c)\n";
  return "HloModule m\nENTRY e {\n" + body + "}\n";
}

TEST(ConvolutionEmitterTest, RandomConvolutionsMatchTheEvaluatorBitForBit) {
  std::mt19937 rng(83);
  const char *types[] = {"f32", "bf16", "s32", "f16", "s8"};
  int checked = 0;
  for (int trial = 0; trial < 200 && checked < 60; ++trial) {
    std::string text = randomConvolution(rng, types[checked % 5]);
    if (text.empty())
      continue;
    SCOPED_TRACE(text);
    auto module = parseTestModule(text);
    ASSERT_TRUE(module);
    Status problem = verifyHloModule(*module);
    ASSERT_TRUE(problem) << problem.error().message;
    std::vector<Literal> arguments = randomArguments(*module, 1500 + trial);
    EXPECT_EQ(checkBothLaunches(*module, arguments), "");
    ++checked;
  }
  EXPECT_EQ(checked, 60);
}

TEST(ConvolutionEmitterTest, MixedFloatAndIntegerIsRefusedByName) {
  auto module = parseTestModule(
      "HloModule m\nENTRY e {\n  %l = s32[1,4,1] parameter(0)\n"
      "  %r = s32[2,1,1] parameter(1)\n"
      "  ROOT %c = f32[1,3,1] convolution(%l, %r), window={size=2}, "
      "dim_labels=b0f_0io->b0f\n}\n");
  ASSERT_TRUE(module);
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(*module, CompileOptions());
  ASSERT_FALSE(exe);
  EXPECT_NE(exe.error().message.find("cannot compile %c (convolution)"),
            std::string::npos)
      << exe.error().message;
  EXPECT_NE(exe.error().message.find("all float or all integer"),
            std::string::npos)
      << exe.error().message;
}

} // namespace
