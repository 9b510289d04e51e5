//===- TiledLayout.cpp - Logical index <-> physical offset ----------------===//
#include "tessel/Layout/TiledLayout.h"

#include "tessel/Support/MathExtras.h"

#include <algorithm>

namespace tessel {

static std::string joined(const std::vector<int64_t> &values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

std::optional<LayoutProblem> verifyLayout(const Shape &shape) {
  using Part = LayoutProblem::Part;
  auto problem = [](std::string message, Part part, int64_t index = 0,
                    int64_t subIndex = 0) {
    return LayoutProblem{std::move(message), part, index, subIndex};
  };
  if (!shape.layout)
    return std::nullopt;
  const Layout &layout = *shape.layout;
  int64_t rank = shape.rank();
  std::string m2m = "{" + joined(layout.minorToMajor) + "}";
  if (static_cast<int64_t>(layout.minorToMajor.size()) != rank)
    return problem("layout " + m2m + " has " +
                       std::to_string(layout.minorToMajor.size()) +
                       " dims but the shape has rank " + std::to_string(rank),
                   Part::Layout);
  std::vector<bool> seen(rank, false);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t dim = layout.minorToMajor[i];
    if (dim < 0 || dim >= rank || seen[dim])
      return problem(
          "minor_to_major " + m2m +
              (dim < 0 || dim >= rank ? " names dim " : " repeats dim ") +
              std::to_string(dim) + ", expected a permutation of 0.." +
              std::to_string(rank - 1),
          Part::MinorToMajor, i);
    seen[dim] = true;
  }
  for (size_t t = 0; t < layout.tiles.size(); ++t) {
    const Tile &tile = layout.tiles[t];
    if (tile.dims.empty())
      return problem("empty tile (), expected at least one tile dim",
                     Part::Tile, t);
    for (size_t i = 0; i < tile.dims.size(); ++i) {
      int64_t d = tile.dims[i];
      if (d != Tile::kCombine && d < 1)
        return problem("tile dim " + std::to_string(d) +
                           " is invalid, expected a positive size or '*'" +
                           (d == -1 ? " (write '*' to combine dims)" : ""),
                       Part::Tile, t, i);
    }
    if (tile.dims.back() == Tile::kCombine)
      return problem("'*' cannot be the last dim of tile " + tile.toString() +
                         ": the most minor dim has no more minor dim to "
                         "combine into",
                     Part::Tile, t, tile.dims.size() - 1);
  }
  if (layout.tailPaddingAlignment < 1)
    return problem("L(" + std::to_string(layout.tailPaddingAlignment) +
                       ") is invalid, expected a tail padding alignment of at "
                       "least 1",
                   Part::L);
  if (layout.elementSizeInBits != 0) {
    int64_t natural = bitWidth(shape.elementType);
    // XLA stores pred in up to 32 bits (E(32), as TPUs keep predicates).
    int64_t storage = shape.elementType == PrimitiveType::Pred
                          ? 32
                          : 8 * byteWidth(shape.elementType);
    if (layout.elementSizeInBits < natural ||
        layout.elementSizeInBits > storage)
      return problem(
          "E(" + std::to_string(layout.elementSizeInBits) + ") does not fit " +
              std::string(primitiveTypeName(shape.elementType)) +
              ", expected an element size from " + std::to_string(natural) +
              " to " + std::to_string(storage) + " bits",
          Part::E);
  }
  if (layout.memorySpace < 0)
    return problem("S(" + std::to_string(layout.memorySpace) +
                       ") is invalid, expected a memory space of at least 0",
                   Part::S);
  if (layout.dynamicShapeMetadataPrefixBytes < 0)
    return problem("M(" +
                       std::to_string(layout.dynamicShapeMetadataPrefixBytes) +
                       ") is invalid, expected a byte count of at least 0",
                   Part::M);
  for (size_t i = 0; i < layout.splitConfigs.size(); ++i) {
    const SplitConfig &config = layout.splitConfigs[i];
    if (config.dimension < 0 || config.dimension >= rank)
      return problem("split config " + config.toString() + " names dim " +
                         std::to_string(config.dimension) + " of a rank-" +
                         std::to_string(rank) + " shape",
                     Part::SplitConfig, i);
  }
  return std::nullopt;
}

static Error overflow(const Shape &shape) {
  return Error("the physical size of " + shape.toString() +
               " overflows 64 bits");
}

Expected<TiledLayout> TiledLayout::get(const Shape &shape) {
  if (shape.isTuple())
    return Error("expected an array shape, got the tuple " + shape.toString());
  if (!shape.isArray())
    return Error("expected an array shape, got " + shape.toString());
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.isDynamicDim(i))
      return Error("dim " + std::to_string(i) + " of " + shape.toString() +
                   " is dynamic; offsets need static sizes");
    if (shape.dims[i] < 0)
      return Error("dim " + std::to_string(i) + " of " + shape.toString() +
                   " is negative");
  }
  if (std::optional<LayoutProblem> problem = verifyLayout(shape))
    return Error(problem->message);

  TiledLayout result;
  result.theShape = shape;
  result.theLayout = shape.layoutOrDefault();
  result.dims = shape.dims;
  std::optional<int64_t> logical = shape.elementCount();
  if (!logical)
    return overflow(shape);
  result.numLogical = *logical;

  const std::vector<int64_t> &m2m = result.theLayout.minorToMajor;
  std::vector<int64_t> current;
  for (auto it = m2m.rbegin(); it != m2m.rend(); ++it) {
    result.order.push_back(*it);
    current.push_back(shape.dims[*it]);
  }

  for (const Tile &tile : result.theLayout.tiles) {
    TilingStep step;
    step.tile = tile;
    int64_t k = static_cast<int64_t>(tile.dims.size());
    int64_t n = static_cast<int64_t>(current.size());
    step.leadingOnes = std::max<int64_t>(0, k - n);
    step.inputDims.assign(step.leadingOnes, 1);
    step.inputDims.insert(step.inputDims.end(), current.begin(), current.end());
    n = static_cast<int64_t>(step.inputDims.size());
    step.combineIntoNext.assign(n, false);
    // Combine: walk the tiled suffix major to minor.
    int64_t carry = 0;
    bool carrying = false;
    for (int64_t j = 0; j < n; ++j) {
      int64_t bound = step.inputDims[j];
      if (carrying) {
        std::optional<int64_t> merged = checkedMul(carry, bound);
        if (!merged)
          return overflow(shape);
        bound = *merged;
      }
      int64_t tileIndex = j - (n - k);
      bool combine = tileIndex >= 0 && tile.dims[tileIndex] == Tile::kCombine;
      step.combineIntoNext[j] = combine;
      if (combine) {
        carry = bound;
        carrying = true;
        continue;
      }
      carrying = false;
      step.combinedDims.push_back(bound);
      if (tileIndex >= 0)
        step.tileSizes.push_back(tile.dims[tileIndex]);
    }
    int64_t tiled = static_cast<int64_t>(step.tileSizes.size());
    int64_t prefix = static_cast<int64_t>(step.combinedDims.size()) - tiled;
    step.outputDims.assign(step.combinedDims.begin(),
                           step.combinedDims.begin() + prefix);
    for (int64_t i = 0; i < tiled; ++i)
      step.outputDims.push_back(
          ceilDiv(step.combinedDims[prefix + i], step.tileSizes[i]));
    for (int64_t i = 0; i < tiled; ++i)
      step.outputDims.push_back(step.tileSizes[i]);
    // Every intermediate shape must have a representable element count.
    int64_t count = 1;
    for (int64_t d : step.outputDims) {
      std::optional<int64_t> product = checkedMul(count, d);
      if (!product)
        return overflow(shape);
      count = *product;
    }
    current = step.outputDims;
    result.tilingSteps.push_back(std::move(step));
  }
  result.final = current;
  int64_t count = 1;
  for (int64_t d : current) {
    std::optional<int64_t> product = checkedMul(count, d);
    if (!product)
      return overflow(shape);
    count = *product;
  }
  result.numTiled = count;
  std::optional<int64_t> physical =
      checkedRoundUp(count, result.theLayout.tailPaddingAlignment);
  if (!physical)
    return overflow(shape);
  result.numPhysical = *physical;
  result.bits = result.theLayout.elementSizeInBits != 0
                    ? result.theLayout.elementSizeInBits
                    : 8 * byteWidth(shape.elementType);
  std::optional<int64_t> totalBits =
      checkedMul(result.numPhysical, result.bits);
  if (!totalBits || !checkedAdd(*totalBits, 7))
    return overflow(shape);
  return result;
}

int64_t TiledLayout::physicalBytes() const {
  return (numPhysical * bits + 7) / 8;
}

void TiledLayout::applySteps(std::vector<int64_t> &coords, size_t count) const {
  std::vector<int64_t> next;
  for (size_t s = 0; s < count; ++s) {
    const TilingStep &step = tilingSteps[s];
    coords.insert(coords.begin(), step.leadingOnes, 0);
    // Combine.
    next.clear();
    int64_t carry = 0;
    bool carrying = false;
    for (size_t j = 0; j < coords.size(); ++j) {
      int64_t value = coords[j];
      if (carrying)
        value += carry * step.inputDims[j];
      if (step.combineIntoNext[j]) {
        carry = value;
        carrying = true;
        continue;
      }
      carrying = false;
      next.push_back(value);
    }
    // Tile.
    size_t tiled = step.tileSizes.size();
    size_t prefix = next.size() - tiled;
    coords.assign(next.begin(), next.begin() + prefix);
    for (size_t i = 0; i < tiled; ++i)
      coords.push_back(next[prefix + i] / step.tileSizes[i]);
    for (size_t i = 0; i < tiled; ++i)
      coords.push_back(next[prefix + i] % step.tileSizes[i]);
  }
}

static int64_t linearize(const std::vector<int64_t> &coords,
                         const std::vector<int64_t> &bounds, size_t count) {
  int64_t linear = 0;
  for (size_t i = 0; i < count; ++i)
    linear = linear * bounds[i] + coords[i];
  return linear;
}

int64_t TiledLayout::offset(const int64_t *index) const {
  std::vector<int64_t> coords(order.size());
  for (size_t j = 0; j < order.size(); ++j)
    coords[j] = index[order[j]];
  applySteps(coords, tilingSteps.size());
  return linearize(coords, final, final.size());
}

int64_t TiledLayout::offset(const std::vector<int64_t> &index) const {
  return offset(index.data());
}

int64_t TiledLayout::paddedOffset(const std::vector<int64_t> &index) const {
  return offset(index.data());
}

std::optional<std::vector<int64_t>>
TiledLayout::logicalIndex(int64_t offsetValue) const {
  if (offsetValue < 0 || offsetValue >= numTiled)
    return std::nullopt;
  std::vector<int64_t> coords(final.size());
  for (size_t i = final.size(); i-- > 0;) {
    coords[i] = offsetValue % final[i];
    offsetValue /= final[i];
  }
  for (size_t s = tilingSteps.size(); s-- > 0;) {
    const TilingStep &step = tilingSteps[s];
    size_t tiled = step.tileSizes.size();
    size_t combinedRank = step.combinedDims.size();
    size_t prefix = combinedRank - tiled;
    // Untile.
    std::vector<int64_t> combined(coords.begin(), coords.begin() + prefix);
    for (size_t i = 0; i < tiled; ++i) {
      int64_t value =
          coords[prefix + i] * step.tileSizes[i] + coords[combinedRank + i];
      if (value >= step.combinedDims[prefix + i])
        return std::nullopt;
      combined.push_back(value);
    }
    // Uncombine: each combined dim is a run of input dims ending at one that
    // does not combine into the next.
    std::vector<int64_t> input(step.inputDims.size());
    size_t c = combinedRank;
    for (size_t j = step.inputDims.size(); j-- > 0;) {
      if (!step.combineIntoNext[j])
        --c;
      int64_t &value = combined[c];
      input[j] = value % step.inputDims[j];
      value /= step.inputDims[j];
    }
    for (int64_t i = 0; i < step.leadingOnes; ++i)
      if (input[i] != 0)
        return std::nullopt;
    coords.assign(input.begin() + step.leadingOnes, input.end());
  }
  std::vector<int64_t> index(dims.size());
  for (size_t j = 0; j < order.size(); ++j) {
    if (coords[j] >= dims[order[j]])
      return std::nullopt;
    index[order[j]] = coords[j];
  }
  return index;
}

int64_t TiledLayout::paddedExtent(int64_t dim) const {
  if (tilingSteps.empty())
    return dims[dim];
  const TilingStep &step = tilingSteps.front();
  size_t position = 0;
  while (order[position] != dim)
    ++position;
  size_t input = position + step.leadingOnes;
  if (step.combineIntoNext[input] ||
      (input > 0 && step.combineIntoNext[input - 1]))
    return dims[dim];
  // Position among the combined dims.
  size_t combined = 0;
  for (size_t j = 0; j < input; ++j)
    combined += step.combineIntoNext[j] ? 0 : 1;
  size_t prefix = step.combinedDims.size() - step.tileSizes.size();
  if (combined < prefix)
    return dims[dim];
  int64_t tile = step.tileSizes[combined - prefix];
  return ceilDiv(dims[dim], tile) * tile;
}

std::vector<int64_t>
TiledLayout::coordinatesAfterStep(const std::vector<int64_t> &index,
                                  size_t level) const {
  std::vector<int64_t> coords(order.size());
  for (size_t j = 0; j < order.size(); ++j)
    coords[j] = index[order[j]];
  applySteps(coords, std::min(level + 1, tilingSteps.size()));
  return coords;
}

int64_t TiledLayout::tileId(const std::vector<int64_t> &index,
                            size_t level) const {
  std::vector<int64_t> coords = coordinatesAfterStep(index, level);
  const TilingStep &step = tilingSteps[level];
  return linearize(coords, step.outputDims,
                   step.outputDims.size() - step.tileSizes.size());
}

static std::string joinIndex(const std::vector<int64_t> &index) {
  std::string out;
  for (size_t i = 0; i < index.size(); ++i)
    out += (i ? "," : "") + std::to_string(index[i]);
  return out;
}

Expected<int64_t>
TiledLayout::checkedOffset(const std::vector<int64_t> &index) const {
  if (static_cast<int64_t>(index.size()) != rank())
    return Error("index " + joinIndex(index) + " has " +
                 std::to_string(index.size()) + " entries, expected " +
                 std::to_string(rank()) + " for " + theShape.toString());
  for (int64_t i = 0; i < rank(); ++i) {
    int64_t size = dims[i];
    if (size == 0)
      return Error("dim " + std::to_string(i) + " of " + theShape.toString() +
                   " has size 0: the array has no element to index");
    if (index[i] < 0 || index[i] >= size)
      return Error("index " + std::to_string(index[i]) + " of dim " +
                   std::to_string(i) + " is out of range, expected 0.." +
                   std::to_string(size - 1));
  }
  return offset(index);
}

Expected<std::optional<std::vector<int64_t>>>
TiledLayout::checkedLogicalIndex(int64_t offset) const {
  if (numPhysical == 0)
    return Error(theShape.toString() +
                 " has an empty buffer: there is no offset to look up");
  if (offset < 0 || offset >= numPhysical)
    return Error("offset " + std::to_string(offset) +
                 " is outside the buffer of " + std::to_string(numPhysical) +
                 " elements, expected 0.." + std::to_string(numPhysical - 1));
  return logicalIndex(offset);
}

} // namespace tessel
