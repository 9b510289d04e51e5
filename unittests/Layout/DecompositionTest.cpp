//===- DecompositionTest.cpp - Pad, reshape, transpose on real arrays -----===//
#include "tessel/Layout/Decomposition.h"
#include "tessel/Layout/ShapeParser.h"

#include "RandomLayouts.h"

#include <gtest/gtest.h>

using namespace tessel;
using tessel::testing::forEachIndex;

namespace {

/// A dense row-major array of element ids; -1 marks padding.
struct Array {
  std::vector<int64_t> dims;
  std::vector<int64_t> data;
};

int64_t product(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

int64_t linear(const std::vector<int64_t> &index,
               const std::vector<int64_t> &dims) {
  int64_t l = 0;
  for (size_t i = 0; i < dims.size(); ++i)
    l = l * dims[i] + index[i];
  return l;
}

/// Applies one step the way numpy would (pad / reshape / transpose).
Array apply(const Array &in, const DecompositionStep &step) {
  EXPECT_EQ(in.dims, step.inputDims);
  Array out{step.outputDims,
            std::vector<int64_t>(product(step.outputDims), -1)};
  switch (step.kind) {
  case DecompositionStep::Kind::Reshape:
    EXPECT_EQ(product(in.dims), product(out.dims));
    out.data = in.data;
    break;
  case DecompositionStep::Kind::Pad:
    forEachIndex(in.dims, [&](const std::vector<int64_t> &i) {
      out.data[linear(i, out.dims)] = in.data[linear(i, in.dims)];
    });
    break;
  case DecompositionStep::Kind::Transpose:
    forEachIndex(out.dims, [&](const std::vector<int64_t> &o) {
      std::vector<int64_t> i(o.size());
      for (size_t k = 0; k < o.size(); ++k)
        i[step.permutation[k]] = o[k];
      out.data[linear(o, out.dims)] = in.data[linear(i, in.dims)];
    });
    break;
  }
  return out;
}

/// Runs the decomposition on the array of logical ids and checks that every
/// element lands at its offset and every other slot is padding.
void checkAgainstOffsets(const TiledLayout &layout) {
  Array array{layout.logicalDims(),
              std::vector<int64_t>(layout.logicalElements())};
  for (int64_t k = 0; k < layout.logicalElements(); ++k)
    array.data[k] = k;
  for (const DecompositionStep &step : decompose(layout))
    array = apply(array, step);
  ASSERT_EQ(static_cast<int64_t>(array.data.size()), layout.physicalElements());
  int64_t k = 0, placed = 0;
  forEachIndex(layout.logicalDims(), [&](const std::vector<int64_t> &i) {
    ASSERT_EQ(array.data[layout.offset(i)], k++);
    ++placed;
  });
  int64_t padding = 0;
  for (int64_t v : array.data)
    padding += v == -1;
  ASSERT_EQ(padding + placed, layout.physicalElements());
}

TEST(Decomposition, FigureOne) {
  Expected<Shape> shape = parseShape("f32[3,5]{1,0:T(2,2)}");
  TiledLayout layout = *TiledLayout::get(*shape);
  EXPECT_EQ(printDecomposition(decompose(layout)),
            "1. pad        [3,5] -> [4,6]  high padding [1,1]\n"
            "     tile (2,2): pad the tiled dims to multiples of the tile\n"
            "2. reshape    [4,6] -> [2,2,3,2]  (a bitcast)\n"
            "     tile (2,2): split each tiled dim into (tiles, tile)\n"
            "3. transpose  [2,2,3,2] -> [2,3,2,2]  permutation {0,2,1,3}\n"
            "     tile (2,2): move the tile dims to the minor end\n");
  checkAgainstOffsets(layout);
}

TEST(Decomposition, CombinedDimsAndLeadingOnes) {
  for (const char *text :
       {"f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", "f32[5]{0:T(8,128)}",
        "bf16[8,8]{1,0:T(2,4)(2,1,1,1)}", "f32[3,5]{0,1:T(2,2)L(7)}"}) {
    SCOPED_TRACE(text);
    checkAgainstOffsets(*TiledLayout::get(*parseShape(text)));
  }
}

TEST(Decomposition, AgreesWithOffsetsOnGeneratedLayouts) {
  tessel::testing::RandomLayouts random(4242);
  for (int n = 0; n < 1500; ++n) {
    Shape shape = random.next(2048);
    SCOPED_TRACE(shape.toString());
    checkAgainstOffsets(*TiledLayout::get(shape));
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

} // namespace
