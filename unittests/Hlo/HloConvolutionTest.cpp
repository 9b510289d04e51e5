//===- HloConvolutionTest.cpp - convolution against a naive loop nest -----===//
//
// Random convolutions (1 or 2 spatial dims, any dim_labels order, strides,
// negative and positive padding, lhs and rhs dilation, reversal, feature or
// batch groups) on integers, against a reference that materializes the
// padded, dilated input and slides the kernel over it in canonical
// (batch, feature, spatial...) order.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorTestHelpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

using namespace tessel;
using namespace tessel::test;

namespace {

std::string shapeText(const std::vector<int64_t> &dims) {
  std::string s = "s32[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

/// A canonical array (dims in canonical order) stored under a label order:
/// `order[d]` is the canonical dim stored at position d.
struct Permuted {
  std::vector<int64_t> canonicalDims;
  std::vector<int> order;
  std::vector<int64_t> dims() const {
    std::vector<int64_t> d;
    for (int c : order)
      d.push_back(canonicalDims[c]);
    return d;
  }
  int64_t linear(const std::vector<int64_t> &canonical) const {
    int64_t index = 0;
    for (int c : order)
      index = index * canonicalDims[c] + canonical[c];
    return index;
  }
};

bool next(std::vector<int64_t> &index, const std::vector<int64_t> &dims) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d])
      return true;
    index[d] = 0;
  }
  return false;
}

int64_t product(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

TEST(HloConvolution, RandomAttributesMatchANaiveLoopNest) {
  std::mt19937 rng(2026);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  int tested = 0;
  for (int trial = 0; trial < 400 && tested < 150; ++trial) {
    int spatial = pick(1, 2);
    int64_t g = 1, bg = 1;
    if (pick(0, 2) == 0)
      g = pick(2, 3);
    else if (pick(0, 2) == 0)
      bg = pick(2, 3);
    int64_t batch = bg * pick(1, 2), ci = pick(1, 3), co = g * bg * pick(1, 2);
    std::vector<int64_t> in(spatial), k(spatial), stride(spatial), lo(spatial),
        hi(spatial), ld(spatial), rd(spatial), rev(spatial), outSize(spatial);
    bool empty = false;
    for (int s = 0; s < spatial; ++s) {
      in[s] = pick(1, 5);
      k[s] = pick(1, 3);
      stride[s] = pick(1, 3);
      lo[s] = pick(-1, 2);
      hi[s] = pick(-1, 2);
      ld[s] = pick(1, 2);
      rd[s] = pick(1, 2);
      rev[s] = pick(0, 3) == 0;
      int64_t padded = (in[s] - 1) * ld[s] + 1 + lo[s] + hi[s];
      int64_t dilatedK = (k[s] - 1) * rd[s] + 1;
      outSize[s] = padded < dilatedK ? 0 : (padded - dilatedK) / stride[s] + 1;
      empty |= outSize[s] == 0 || padded <= 0;
    }
    if (empty)
      continue;
    ++tested;
    // Canonical orders: lhs (b, f, s...), rhs (o, i, s...), out (b, f, s...).
    auto shuffled = [&](int rank) {
      std::vector<int> order(rank);
      for (int d = 0; d < rank; ++d)
        order[d] = d;
      std::shuffle(order.begin(), order.end(), rng);
      return order;
    };
    Permuted lhs{{batch, ci * g}, shuffled(spatial + 2)};
    Permuted rhs{{co, ci}, shuffled(spatial + 2)};
    Permuted out{{batch / bg, co}, shuffled(spatial + 2)};
    for (int s = 0; s < spatial; ++s) {
      lhs.canonicalDims.push_back(in[s]);
      rhs.canonicalDims.push_back(k[s]);
      out.canonicalDims.push_back(outSize[s]);
    }
    auto labels = [&](const Permuted &p, char a, char b) {
      std::string text;
      for (int c : p.order)
        text += c == 0 ? a : c == 1 ? b : static_cast<char>('0' + c - 2);
      return text;
    };
    std::string window = "size=", strides = "stride=", pad = "pad=",
                lhsDilate = "lhs_dilate=", rhsDilate = "rhs_dilate=",
                reversal = "rhs_reversal=";
    for (int s = 0; s < spatial; ++s) {
      std::string x = s ? "x" : "";
      window += x + std::to_string(k[s]);
      strides += x + std::to_string(stride[s]);
      pad += x + std::to_string(lo[s]) + "_" + std::to_string(hi[s]);
      lhsDilate += x + std::to_string(ld[s]);
      rhsDilate += x + std::to_string(rd[s]);
      reversal += x + std::to_string(rev[s]);
    }
    std::string text =
        "HloModule m\nENTRY e {\n  l = " + shapeText(lhs.dims()) +
        " parameter(0)\n  r = " + shapeText(rhs.dims()) +
        " parameter(1)\n  ROOT c = " + shapeText(out.dims()) +
        " convolution(l, r), window={" + window + " " + strides + " " + pad +
        " " + lhsDilate + " " + rhsDilate + " " + reversal +
        "}, dim_labels=" + labels(lhs, 'b', 'f') + "_" + labels(rhs, 'o', 'i') +
        "->" + labels(out, 'b', 'f') +
        ", feature_group_count=" + std::to_string(g) +
        ", batch_group_count=" + std::to_string(bg) + "\n}\n";
    SCOPED_TRACE(text);
    Literal lv(Shape(PrimitiveType::S32, lhs.dims()));
    Literal rv(Shape(PrimitiveType::S32, rhs.dims()));
    for (int64_t i = 0; i < lv.elementCount(); ++i)
      lv.setInt(i, pick(-9, 9));
    for (int64_t i = 0; i < rv.elementCount(); ++i)
      rv.setInt(i, pick(-9, 9));
    Expected<Literal> got = evaluateText(text, {lv, rv});
    ASSERT_TRUE(got) << got.error().message;

    // The padded, dilated input in canonical order: (batch, feature, s...).
    std::vector<int64_t> paddedDims = {batch, ci * g};
    for (int s = 0; s < spatial; ++s)
      paddedDims.push_back((in[s] - 1) * ld[s] + 1 + lo[s] + hi[s]);
    std::vector<int64_t> padded(product(paddedDims), 0);
    std::vector<int64_t> q(paddedDims.size(), 0);
    for (int64_t p = 0; p < product(paddedDims); ++p, next(q, paddedDims)) {
      std::vector<int64_t> from = {q[0], q[1]};
      bool inside = true;
      for (int s = 0; s < spatial; ++s) {
        int64_t t = q[2 + s] - lo[s];
        inside &= t >= 0 && t % ld[s] == 0 && t / ld[s] < in[s];
        from.push_back(inside ? t / ld[s] : 0);
      }
      padded[p] = inside ? lv.getInt(lhs.linear(from)) : 0;
    }
    std::vector<int64_t> paddedStrides(paddedDims.size(), 1);
    for (int d = static_cast<int>(paddedDims.size()) - 2; d >= 0; --d)
      paddedStrides[d] = paddedStrides[d + 1] * paddedDims[d + 1];
    // Slide the kernel.
    std::vector<int64_t> y(out.canonicalDims.size(), 0);
    for (int64_t p = 0; p < product(out.canonicalDims);
         ++p, next(y, out.canonicalDims)) {
      int64_t n = y[0], o = y[1];
      int64_t sourceBatch = n + (o / (co / bg)) * (batch / bg);
      int64_t group = o / (co / g);
      int64_t sum = 0;
      std::vector<int64_t> kk(spatial, 0);
      for (int64_t kp = 0; kp < product(k); ++kp, next(kk, k)) {
        for (int64_t c = 0; c < ci; ++c) {
          int64_t at = sourceBatch * paddedStrides[0] +
                       (group * ci + c) * paddedStrides[1];
          std::vector<int64_t> kernelIndex = {o, c};
          for (int s = 0; s < spatial; ++s) {
            at += (y[2 + s] * stride[s] + kk[s] * rd[s]) * paddedStrides[2 + s];
            kernelIndex.push_back(rev[s] ? k[s] - 1 - kk[s] : kk[s]);
          }
          sum += padded[at] * rv.getInt(rhs.linear(kernelIndex));
        }
      }
      ASSERT_EQ(got->getInt(out.linear(y)), sum) << "output " << p;
    }
  }
  EXPECT_GE(tested, 100);
}

TEST(HloConvolution, BadAttributesAreErrors) {
  auto run = [](const std::string &attributes) {
    return evaluateToString("HloModule m\nENTRY e {\n  l = f32[1,4,2] "
                            "parameter(0)\n  r = f32[3,2,5] parameter(1)\n  "
                            "ROOT c = f32[1,2,5] convolution(l, r), " +
                                attributes + "\n}\n",
                            {"{ { {1,2}, {3,4}, {5,6}, {7,8} } }",
                             "{ { {1,1,1,1,1}, {0,0,0,0,0} }, { "
                             "{1,1,1,1,1}, {0,0,0,0,0} }, { {1,1,1,1,1}, "
                             "{0,0,0,0,0} } }"});
  };
  // Each output feature sums three consecutive inputs' feature 0.
  EXPECT_EQ(run("window={size=3}, dim_labels=b0f_0io->b0f"),
            "{ { { 9, 9, 9, 9, 9 }, { 15, 15, 15, 15, 15 } } }");
  EXPECT_NE(run("window={size=3}, dim_labels=b0f_0io->bf0")
                .find("declared shape f32[1,2,5] does not match the inferred "
                      "f32[1,5,2]"),
            std::string::npos);
  EXPECT_NE(run("window={size=2}, dim_labels=b0f_0io->b0f")
                .find("window size 2 of spatial dim 0 differs from the "
                      "kernel's 3"),
            std::string::npos);
  EXPECT_NE(run("window={size=3}, dim_labels=b0f_0ix->b0f")
                .find("dim_labels part '0ix' has 'x' at 2"),
            std::string::npos);
  EXPECT_NE(run("window={size=3}, dim_labels=b0f_0io->b0f, "
                "feature_group_count=2")
                .find("feature_group_count (2)"),
            std::string::npos);
}

} // namespace
