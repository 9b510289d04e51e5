//===- HloGatherScatterTest.cpp - gather/scatter against a direct loop ----===//
//
// Random dimension numbers (batching dims, index vector dim anywhere or
// implicit, collapsed/inserted dims, out-of-range indices) evaluated by
// tessel and by a reference that walks the other way: over the points of
// the indices' batch space and the positions of each slice or window,
// rather than over the output (gather) or the updates in order (scatter).
//
//===----------------------------------------------------------------------===//
#include "EvaluatorTestHelpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace tessel;
using namespace tessel::test;

namespace {

std::string list(const std::vector<int64_t> &v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}

std::string shape(const char *type, const std::vector<int64_t> &dims) {
  std::string s = std::string(type) + "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

bool contains(const std::vector<int64_t> &v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool next(std::vector<int64_t> &index, const std::vector<int64_t> &dims) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d])
      return true;
    index[d] = 0;
  }
  return false;
}

int64_t count(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// The random parts both ops share: an operand, the dims addressed through
/// the indices, batching dims and the indices array.
struct Case {
  std::vector<int64_t> operandDims;
  std::vector<int64_t> operandBatching, indicesBatching;
  std::vector<int64_t> startMap;    // operand dims the index vector addresses
  std::vector<int64_t> dropped;     // collapsed (gather) / inserted (scatter)
  std::vector<int64_t> windowSizes; // per operand dim
  std::vector<int64_t> indicesDims;
  int64_t indexVectorDim = 0;
  std::vector<int64_t> batchSizes; // indices dims without the vector dim
  Literal indices;
  Literal operand;

  void generate(std::mt19937 &rng) {
    auto pick = [&](int lo, int hi) {
      return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    int rank = pick(1, 3);
    operandDims.clear();
    for (int d = 0; d < rank; ++d)
      operandDims.push_back(pick(1, 4));
    std::vector<int64_t> order(rank);
    for (int d = 0; d < rank; ++d)
      order[d] = d;
    std::shuffle(order.begin(), order.end(), rng);
    size_t at = 0;
    operandBatching.clear();
    if (rank >= 2 && pick(0, 1))
      operandBatching.push_back(order[at++]);
    startMap.clear();
    int mapped = pick(1, static_cast<int>(rank - at));
    for (int k = 0; k < mapped; ++k)
      startMap.push_back(order[at++]);
    windowSizes.assign(rank, 1);
    dropped.clear();
    for (int d = 0; d < rank; ++d) {
      if (contains(operandBatching, d))
        continue;
      if (pick(0, 2) == 0)
        dropped.push_back(d); // size 1
      else
        windowSizes[d] = pick(1, static_cast<int>(operandDims[d]));
    }
    // The indices: some batch dims, the batching dims, the vector dim.
    std::vector<int64_t> batch;
    int scatterDims = pick(0, 2);
    for (int k = 0; k < scatterDims; ++k)
      batch.push_back(pick(1, 3));
    indicesBatching.clear();
    std::vector<int64_t> batchingPositions;
    for (int64_t d : operandBatching) {
      size_t position = pick(0, static_cast<int>(batch.size()));
      batch.insert(batch.begin() + position, operandDims[d]);
      for (int64_t &p : batchingPositions)
        if (p >= static_cast<int64_t>(position))
          ++p;
      batchingPositions.push_back(position);
    }
    batchSizes = batch;
    bool implicit = startMap.size() == 1 && pick(0, 1);
    indexVectorDim = implicit ? static_cast<int64_t>(batch.size())
                              : pick(0, static_cast<int>(batch.size()));
    indicesDims = batch;
    if (!implicit)
      indicesDims.insert(indicesDims.begin() + indexVectorDim,
                         static_cast<int64_t>(startMap.size()));
    for (int64_t p : batchingPositions)
      indicesBatching.push_back(p < indexVectorDim || implicit ? p : p + 1);
    indices = Literal(Shape(PrimitiveType::S32, indicesDims));
    for (int64_t i = 0; i < indices.elementCount(); ++i)
      indices.setInt(i, pick(-2, 5));
    operand = Literal(Shape(PrimitiveType::S32, operandDims));
    for (int64_t i = 0; i < operand.elementCount(); ++i)
      operand.setInt(i, pick(-1000, 1000));
  }

  /// Start vector component k at batch point `b` (indices without the
  /// vector dim).
  int64_t component(const std::vector<int64_t> &b, int64_t k) const {
    std::vector<int64_t> at;
    size_t j = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(indicesDims.size()); ++d)
      at.push_back(d == indexVectorDim ? k : b[j++]);
    if (static_cast<int64_t>(indicesDims.size()) == indexVectorDim &&
        indicesDims.size() == batchSizes.size())
      at = b; // implicit vector dim
    return indices.getInt(indices.linearIndex(at));
  }

  /// The operand start for batch point `b`, before clamping.
  std::vector<int64_t> start(const std::vector<int64_t> &b) const {
    std::vector<int64_t> s(operandDims.size(), 0);
    for (size_t k = 0; k < startMap.size(); ++k)
      s[startMap[k]] = component(b, k);
    for (size_t k = 0; k < operandBatching.size(); ++k) {
      int64_t dim = indicesBatching[k];
      s[operandBatching[k]] = b[dim < indexVectorDim ? dim : dim - 1];
    }
    return s;
  }

  /// Operand dims a slice or window spans, in order.
  std::vector<int64_t> windowDims() const {
    std::vector<int64_t> w;
    for (int64_t d = 0; d < static_cast<int64_t>(operandDims.size()); ++d)
      if (!contains(dropped, d) && !contains(operandBatching, d))
        w.push_back(d);
    return w;
  }

  /// Random sorted positions for the window dims among `rank` dims.
  static std::vector<int64_t> positions(std::mt19937 &rng, size_t n,
                                        size_t rank) {
    std::vector<int64_t> all(rank);
    for (size_t i = 0; i < rank; ++i)
      all[i] = static_cast<int64_t>(i);
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(n);
    std::sort(all.begin(), all.end());
    return all;
  }
};

TEST(HloGather, RandomDimensionNumbersMatchADirectLoop) {
  std::mt19937 rng(14);
  for (int trial = 0; trial < 300; ++trial) {
    Case c;
    c.generate(rng);
    std::vector<int64_t> window = c.windowDims();
    size_t outRank = c.batchSizes.size() + window.size();
    std::vector<int64_t> offsetDims =
        Case::positions(rng, window.size(), outRank);
    std::vector<int64_t> outDims(outRank);
    for (size_t d = 0, b = 0, w = 0; d < outRank; ++d)
      outDims[d] = contains(offsetDims, d) ? c.windowSizes[window[w++]]
                                           : c.batchSizes[b++];
    std::string text =
        "HloModule m\nENTRY e {\n  x = " + shape("s32", c.operandDims) +
        " parameter(0)\n  i = " + shape("s32", c.indicesDims) +
        " parameter(1)\n  ROOT g = " + shape("s32", outDims) +
        " gather(x, i), offset_dims=" + list(offsetDims) +
        ", collapsed_slice_dims=" + list(c.dropped) +
        ", start_index_map=" + list(c.startMap) +
        ", operand_batching_dims=" + list(c.operandBatching) +
        ", start_indices_batching_dims=" + list(c.indicesBatching) +
        ", index_vector_dim=" + std::to_string(c.indexVectorDim) +
        ", slice_sizes=" + list(c.windowSizes) + "\n}\n";
    SCOPED_TRACE(text + "indices " + c.indices.toString());
    Expected<Literal> got = evaluateText(text, {c.operand, c.indices});
    ASSERT_TRUE(got) << got.error().message;
    // Reference: every batch point copies its clamped slice.
    Literal want(Shape(PrimitiveType::S32, outDims));
    std::vector<int64_t> b(c.batchSizes.size(), 0);
    for (int64_t p = 0; p < count(c.batchSizes); ++p, next(b, c.batchSizes)) {
      std::vector<int64_t> s = c.start(b);
      for (int64_t d : c.startMap)
        s[d] = std::min(std::max<int64_t>(s[d], 0),
                        c.operandDims[d] - c.windowSizes[d]);
      std::vector<int64_t> w(c.operandDims.size(), 0);
      for (int64_t q = 0; q < count(c.windowSizes);
           ++q, next(w, c.windowSizes)) {
        std::vector<int64_t> from(c.operandDims.size()), to(outRank);
        for (size_t d = 0; d < from.size(); ++d)
          from[d] = s[d] + w[d];
        for (size_t d = 0, bi = 0, wi = 0; d < outRank; ++d)
          to[d] = contains(offsetDims, d) ? w[window[wi++]] : b[bi++];
        want.setInt(want.linearIndex(to),
                    c.operand.getInt(c.operand.linearIndex(from)));
      }
    }
    EXPECT_EQ(got->toString(), want.toString());
  }
}

TEST(HloScatter, RandomDimensionNumbersMatchADirectLoop) {
  std::mt19937 rng(41);
  for (int trial = 0; trial < 300; ++trial) {
    Case c;
    c.generate(rng);
    std::vector<int64_t> window = c.windowDims();
    size_t updateRank = c.batchSizes.size() + window.size();
    std::vector<int64_t> updateWindowDims =
        Case::positions(rng, window.size(), updateRank);
    std::vector<int64_t> updateDims(updateRank);
    for (size_t d = 0, b = 0, w = 0; d < updateRank; ++d)
      updateDims[d] = contains(updateWindowDims, d) ? c.windowSizes[window[w++]]
                                                    : c.batchSizes[b++];
    Literal updates(Shape(PrimitiveType::S32, updateDims));
    for (int64_t i = 0; i < updates.elementCount(); ++i)
      updates.setInt(i, std::uniform_int_distribution<int>(-50, 50)(rng));
    std::string text =
        "HloModule m\nadd {\n  a = s32[] parameter(0)\n  b = s32[] "
        "parameter(1)\n  ROOT s = s32[] add(a, b)\n}\nENTRY e {\n  x = " +
        shape("s32", c.operandDims) +
        " parameter(0)\n  i = " + shape("s32", c.indicesDims) +
        " parameter(1)\n  u = " + shape("s32", updateDims) +
        " parameter(2)\n  ROOT s = " + shape("s32", c.operandDims) +
        " scatter(x, i, u), update_window_dims=" + list(updateWindowDims) +
        ", inserted_window_dims=" + list(c.dropped) +
        ", scatter_dims_to_operand_dims=" + list(c.startMap) +
        ", input_batching_dims=" + list(c.operandBatching) +
        ", scatter_indices_batching_dims=" + list(c.indicesBatching) +
        ", index_vector_dim=" + std::to_string(c.indexVectorDim) +
        ", to_apply=add\n}\n";
    SCOPED_TRACE(text + "indices " + c.indices.toString());
    Expected<Literal> got = evaluateText(text, {c.operand, c.indices, updates});
    ASSERT_TRUE(got) << got.error().message;
    // Reference: every batch point adds its window where it fits whole.
    Literal want = c.operand;
    std::vector<int64_t> b(c.batchSizes.size(), 0);
    for (int64_t p = 0; p < count(c.batchSizes); ++p, next(b, c.batchSizes)) {
      std::vector<int64_t> s = c.start(b);
      bool fits = true;
      for (size_t d = 0; d < s.size(); ++d)
        fits &= s[d] >= 0 && s[d] + c.windowSizes[d] <= c.operandDims[d];
      if (!fits)
        continue;
      std::vector<int64_t> w(c.operandDims.size(), 0);
      for (int64_t q = 0; q < count(c.windowSizes);
           ++q, next(w, c.windowSizes)) {
        std::vector<int64_t> to(c.operandDims.size()), from(updateRank);
        for (size_t d = 0; d < to.size(); ++d)
          to[d] = s[d] + w[d];
        for (size_t d = 0, bi = 0, wi = 0; d < updateRank; ++d)
          from[d] = contains(updateWindowDims, d) ? w[window[wi++]] : b[bi++];
        int64_t o = want.linearIndex(to);
        want.setInt(o,
                    want.getInt(o) + updates.getInt(updates.linearIndex(from)));
      }
    }
    EXPECT_EQ(got->toString(), want.toString());
  }
}

TEST(HloScatter, CombinerOrderAndVariadicOperands) {
  // Two operands scattered together; the combiner keeps the larger key and
  // its payload. Index 3 is out of range: that update is skipped.
  const char *text = R"(HloModule m
keep_max {
  k = s32[] parameter(0)
  v = f32[] parameter(1)
  k2 = s32[] parameter(2)
  v2 = f32[] parameter(3)
  gt = pred[] compare(k2, k), direction=GT
  mk = s32[] select(gt, k2, k)
  mv = f32[] select(gt, v2, v)
  ROOT r = (s32[], f32[]) tuple(mk, mv)
}
ENTRY e {
  k = s32[3] parameter(0)
  v = f32[3] parameter(1)
  i = s32[4,1] parameter(2)
  uk = s32[4] parameter(3)
  uv = f32[4] parameter(4)
  ROOT s = (s32[3], f32[3]) scatter(k, v, i, uk, uv), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=keep_max
}
)";
  EXPECT_EQ(evaluateToString(text, {"{0, 0, 0}", "{0, 0, 0}",
                                    "{ {2}, {0}, {2}, {3} }", "{5, 1, 9, 7}",
                                    "{0.5, 1.5, 2.5, 3.5}"}),
            "({1, 0, 9}, {1.5, 0, 2.5})");
  // A combiner that keeps the update (set) makes the last update win.
  const char *set = R"(HloModule m
second {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  x = f32[3] parameter(0)
  i = s32[4] parameter(1)
  u = f32[4] parameter(2)
  ROOT s = f32[3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=second
}
)";
  EXPECT_EQ(evaluateToString(
                set, {"{0, 0, 0}", "{1, 1, 5, 2}", "{0.5, 1.5, 2.5, 3.5}"}),
            "{0, 1.5, 3.5}");
}

TEST(HloGather, BadDimensionNumbersAreErrors) {
  auto run = [](const std::string &attributes) {
    return evaluateToString("HloModule m\nENTRY e {\n  x = f32[3,4] "
                            "parameter(0)\n  i = s32[2] parameter(1)\n  "
                            "ROOT g = f32[2,4] gather(x, i), " +
                                attributes + "\n}\n",
                            {"{ {1,2,3,4}, {5,6,7,8}, {9,8,7,6} }", "{2, 7}"});
  };
  EXPECT_EQ(run("offset_dims={1}, collapsed_slice_dims={0}, "
                "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"),
            "{ { 9, 8, 7, 6 }, { 9, 8, 7, 6 } }");
  EXPECT_NE(run("offset_dims={1}, collapsed_slice_dims={0}, "
                "start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}")
                .find("slice size 5 of dim 1 does not fit size 4"),
            std::string::npos);
  EXPECT_NE(run("offset_dims={1}, collapsed_slice_dims={0}, "
                "start_index_map={3}, index_vector_dim=1, slice_sizes={1,4}")
                .find("start_index_map 3 is out of range"),
            std::string::npos);
  EXPECT_NE(run("offset_dims={1}, collapsed_slice_dims={0}, "
                "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}")
                .find("declared shape f32[2,4] does not match the inferred "
                      "f32[2,2]"),
            std::string::npos);
  EXPECT_NE(run("offset_dims={1}, collapsed_slice_dims={0}, "
                "start_index_map={0}, index_vector_dim=1")
                .find("gather needs the attribute slice_sizes="),
            std::string::npos);
}

} // namespace
