//===- Decomposition.cpp - A tiling as pad, reshape and transpose ---------===//
#include "tessel/Layout/Decomposition.h"

#include "tessel/Support/MathExtras.h"

namespace tessel {
namespace {

std::string dimsText(const std::vector<int64_t> &dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

DecompositionStep reshape(const std::vector<int64_t> &from,
                          const std::vector<int64_t> &to, std::string purpose) {
  DecompositionStep step;
  step.kind = DecompositionStep::Kind::Reshape;
  step.inputDims = from;
  step.outputDims = to;
  step.purpose = std::move(purpose);
  return step;
}

/// Appends the steps of one tile; `dims` is the shape before it.
void appendTileSteps(const TilingStep &tile, std::vector<int64_t> &dims,
                     std::vector<DecompositionStep> &steps) {
  const std::string name = "tile " + tile.tile.toString();
  if (tile.leadingOnes > 0) {
    steps.push_back(reshape(dims, tile.inputDims,
                            name + ": add " + std::to_string(tile.leadingOnes) +
                                " leading size-1 dim(s), the tile has more "
                                "dims than the shape"));
    dims = tile.inputDims;
  }
  if (tile.combinedDims.size() != tile.inputDims.size()) {
    steps.push_back(reshape(dims, tile.combinedDims,
                            name + ": combine the dims marked '*' into the "
                                   "next more minor dim"));
    dims = tile.combinedDims;
  }
  size_t tiled = tile.tileSizes.size();
  size_t prefix = dims.size() - tiled;
  DecompositionStep pad;
  pad.kind = DecompositionStep::Kind::Pad;
  pad.inputDims = dims;
  pad.padHigh.assign(dims.size(), 0);
  bool padding = false;
  for (size_t i = 0; i < tiled; ++i) {
    int64_t size = dims[prefix + i], t = tile.tileSizes[i];
    pad.padHigh[prefix + i] = ceilDiv(size, t) * t - size;
    padding |= pad.padHigh[prefix + i] != 0;
  }
  if (padding) {
    for (size_t i = 0; i < dims.size(); ++i)
      pad.outputDims.push_back(dims[i] + pad.padHigh[i]);
    pad.purpose = name + ": pad the tiled dims to multiples of the tile";
    steps.push_back(pad);
    dims = pad.outputDims;
  }
  std::vector<int64_t> split(dims.begin(), dims.begin() + prefix);
  for (size_t i = 0; i < tiled; ++i) {
    split.push_back(dims[prefix + i] / tile.tileSizes[i]);
    split.push_back(tile.tileSizes[i]);
  }
  steps.push_back(
      reshape(dims, split, name + ": split each tiled dim into (tiles, tile)"));
  DecompositionStep transpose;
  transpose.kind = DecompositionStep::Kind::Transpose;
  transpose.inputDims = split;
  for (size_t i = 0; i < prefix; ++i)
    transpose.permutation.push_back(i);
  for (size_t i = 0; i < tiled; ++i)
    transpose.permutation.push_back(prefix + 2 * i);
  for (size_t i = 0; i < tiled; ++i)
    transpose.permutation.push_back(prefix + 2 * i + 1);
  for (int64_t p : transpose.permutation)
    transpose.outputDims.push_back(split[p]);
  transpose.purpose = name + ": move the tile dims to the minor end";
  dims = transpose.outputDims;
  steps.push_back(transpose);
}

} // namespace

std::vector<DecompositionStep> decompose(const TiledLayout &layout) {
  std::vector<DecompositionStep> steps;
  std::vector<int64_t> dims = layout.logicalDims();
  const std::vector<int64_t> &order = layout.physicalOrder();
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i)
    identity &= order[i] == static_cast<int64_t>(i);
  if (!identity) {
    DecompositionStep transpose;
    transpose.kind = DecompositionStep::Kind::Transpose;
    transpose.inputDims = dims;
    transpose.permutation = order;
    for (int64_t p : order)
      transpose.outputDims.push_back(dims[p]);
    transpose.purpose = "put the dims in physical order (major to minor)";
    dims = transpose.outputDims;
    steps.push_back(transpose);
  }
  for (const TilingStep &tile : layout.steps())
    appendTileSteps(tile, dims, steps);
  if (layout.physicalElements() != layout.tiledElements()) {
    std::vector<int64_t> flat = {layout.tiledElements()};
    steps.push_back(reshape(dims, flat, "flatten"));
    DecompositionStep pad;
    pad.kind = DecompositionStep::Kind::Pad;
    pad.inputDims = flat;
    pad.padHigh = {layout.physicalElements() - layout.tiledElements()};
    pad.outputDims = {layout.physicalElements()};
    pad.purpose = "L(" + std::to_string(layout.layout().tailPaddingAlignment) +
                  "): pad the buffer to a multiple of the alignment";
    steps.push_back(pad);
  }
  return steps;
}

std::string printDecomposition(const std::vector<DecompositionStep> &steps) {
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const DecompositionStep &step = steps[i];
    std::string line = std::to_string(i + 1) + ". ";
    switch (step.kind) {
    case DecompositionStep::Kind::Transpose: {
      line += "transpose  " + dimsText(step.inputDims) + " -> " +
              dimsText(step.outputDims) + "  permutation {";
      for (size_t j = 0; j < step.permutation.size(); ++j)
        line += (j ? "," : "") + std::to_string(step.permutation[j]);
      line += "}";
      break;
    }
    case DecompositionStep::Kind::Reshape:
      line += "reshape    " + dimsText(step.inputDims) + " -> " +
              dimsText(step.outputDims) + "  (a bitcast)";
      break;
    case DecompositionStep::Kind::Pad: {
      line += "pad        " + dimsText(step.inputDims) + " -> " +
              dimsText(step.outputDims) + "  high padding " +
              dimsText(step.padHigh);
      break;
    }
    }
    out += line + "\n     " + step.purpose + "\n";
  }
  return out;
}

std::string describeDecomposition(const TiledLayout &layout) {
  std::vector<DecompositionStep> steps = decompose(layout);
  std::string out = layout.shape().toString() + "\n";
  if (steps.empty())
    out += "row major without tiles: the buffer is the array itself, no "
           "steps\n";
  out += printDecomposition(steps);
  const std::vector<int64_t> &dims =
      steps.empty() ? layout.logicalDims() : steps.back().outputDims;
  out += "the buffer is the row-major order of [";
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]\n";
}

} // namespace tessel
