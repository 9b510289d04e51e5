//===- LayoutSizes.cpp - Bytes, padding and cheaper layouts ---------------===//
#include "tessel/Layout/LayoutSizes.h"

#include "tessel/Layout/TpuLayout.h"
#include "tessel/Support/MathExtras.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace tessel {

std::optional<int64_t> xlaArrayBytes(const TiledLayout &layout) {
  const Layout &l = layout.layout();
  const std::vector<int64_t> &dims = layout.logicalDims();
  int64_t elements = 1;
  auto multiply = [&](int64_t value) {
    std::optional<int64_t> product = checkedMul(elements, value);
    elements = product ? *product : -1;
    return product.has_value();
  };
  if (l.tiles.empty()) {
    elements = layout.logicalElements();
  } else {
    const std::vector<int64_t> &tile = l.tiles.front().dims;
    for (int64_t d : tile)
      if (d == Tile::kCombine)
        return std::nullopt;
    int64_t rank = layout.rank();
    int64_t tileRank = static_cast<int64_t>(tile.size());
    int64_t dim = 0;
    for (; dim < tileRank; ++dim) {
      int64_t size = dim < rank ? dims[l.minorToMajor[dim]] : 1;
      std::optional<int64_t> rounded =
          checkedRoundUp(size, tile[tileRank - dim - 1]);
      if (!rounded || !multiply(*rounded))
        return std::nullopt;
    }
    for (; dim < rank; ++dim)
      if (!multiply(dims[l.minorToMajor[dim]]))
        return std::nullopt;
  }
  std::optional<int64_t> aligned =
      checkedRoundUp(elements, l.tailPaddingAlignment);
  if (!aligned)
    return std::nullopt;
  std::optional<int64_t> bits = checkedMul(*aligned, layout.elementBits());
  if (!bits)
    return std::nullopt;
  return (*bits + 7) / 8;
}

/// Per dim of the combined shape that the first tile covers, its padding.
static std::vector<DimPadding> firstTilePadding(const TiledLayout &layout) {
  std::vector<DimPadding> result;
  if (layout.steps().empty())
    return result;
  const TilingStep &step = layout.steps().front();
  size_t tiled = step.tileSizes.size();
  size_t prefix = step.combinedDims.size() - tiled;
  // Walk the input dims, grouping those that combine into the next.
  size_t combined = 0;
  std::vector<int64_t> group;
  for (size_t j = 0; j < step.inputDims.size(); ++j) {
    if (j >= static_cast<size_t>(step.leadingOnes))
      group.push_back(layout.physicalOrder()[j - step.leadingOnes]);
    if (step.combineIntoNext[j])
      continue;
    if (combined >= prefix) {
      DimPadding pad;
      pad.logicalDims = group;
      pad.size = step.combinedDims[combined];
      pad.tileSize = step.tileSizes[combined - prefix];
      pad.paddedSize = ceilDiv(pad.size, pad.tileSize) * pad.tileSize;
      result.push_back(pad);
    }
    group.clear();
    ++combined;
  }
  return result;
}

LayoutSizes computeSizes(const TiledLayout &layout) {
  LayoutSizes sizes;
  sizes.logicalElements = layout.logicalElements();
  sizes.physicalElements = layout.physicalElements();
  sizes.elementBits = layout.elementBits();
  sizes.physicalBytes = layout.physicalBytes();
  sizes.dataBytes = (sizes.logicalElements * sizes.elementBits + 7) / 8;
  sizes.paddingBytes = sizes.physicalBytes - sizes.dataBytes;
  sizes.utilization = sizes.physicalBytes == 0
                          ? 1.0
                          : static_cast<double>(sizes.dataBytes) /
                                static_cast<double>(sizes.physicalBytes);
  sizes.firstTilePadding = firstTilePadding(layout);
  sizes.tailPaddingElements =
      layout.physicalElements() - layout.tiledElements();
  if (!layout.steps().empty()) {
    int64_t firstLevel = 1;
    for (int64_t d : layout.steps().front().outputDims)
      firstLevel *= d;
    sizes.laterTilePaddingElements = layout.tiledElements() - firstLevel;
  }
  double worst = 1.0;
  for (size_t i = 0; i < sizes.firstTilePadding.size(); ++i) {
    const DimPadding &pad = sizes.firstTilePadding[i];
    if (pad.size == 0 || pad.paddedSize == pad.size)
      continue;
    double ratio = static_cast<double>(pad.paddedSize) / pad.size;
    if (ratio > worst) {
      worst = ratio;
      sizes.worstDim = i;
    }
  }
  sizes.xlaBytes = xlaArrayBytes(layout);
  if (!sizes.xlaBytes) {
    sizes.xlaNote = "XLA's size function does not handle a first tile that "
                    "combines dims ('*')";
  } else if (*sizes.xlaBytes != sizes.physicalBytes) {
    sizes.xlaNote = "XLA counts only the first tile's padding; the later "
                    "tiles add " +
                    std::to_string(sizes.laterTilePaddingElements) +
                    " padding elements";
  }
  return sizes;
}

std::string describeWorstPadding(const LayoutSizes &sizes) {
  if (!sizes.worstDim)
    return "";
  const DimPadding &pad = sizes.firstTilePadding[*sizes.worstDim];
  std::string what;
  if (pad.logicalDims.empty()) {
    what = "a size-1 dim the tile adds (the tile has more dims than the "
           "shape)";
  } else if (pad.logicalDims.size() == 1) {
    what = "dim " + std::to_string(pad.logicalDims[0]) + " (size " +
           std::to_string(pad.size) + ")";
  } else {
    what = "dims ";
    for (size_t i = 0; i < pad.logicalDims.size(); ++i)
      what += (i ? "," : "") + std::to_string(pad.logicalDims[i]);
    what += " combined (size " + std::to_string(pad.size) + ")";
  }
  return what + " is padded to " + std::to_string(pad.paddedSize) +
         " by the tile's " + std::to_string(pad.tileSize);
}

/// Names what changes between two layouts of the same shape.
static std::string describeChange(const Layout &from, const Layout &to) {
  std::vector<std::string> parts;
  if (from.minorToMajor != to.minorToMajor) {
    std::string order;
    for (size_t i = 0; i < to.minorToMajor.size(); ++i)
      order += (i ? "," : "") + std::to_string(to.minorToMajor[i]);
    parts.push_back("dim " + std::to_string(to.minorToMajor[0]) +
                    " becomes the most minor dim (dim order {" + order +
                    "}: a transpose of the data)");
  }
  if (from.tiles != to.tiles) {
    std::string tiles;
    for (const Tile &tile : to.tiles)
      tiles += tile.toString();
    parts.push_back("the tiles become " + (tiles.empty() ? "none" : tiles));
  }
  if (from.elementSizeInBits != to.elementSizeInBits)
    parts.push_back("each element is stored in " +
                    std::to_string(to.elementSizeInBits) + " bits (E(" +
                    std::to_string(to.elementSizeInBits) + "))");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? " and " : "") + parts[i];
  return out;
}

std::optional<CheaperLayout> suggestCheaperLayout(const TiledLayout &layout) {
  const Shape &shape = layout.shape();
  int64_t rank = shape.rank();
  if (rank > 6)
    return std::nullopt;
  std::vector<int64_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::optional<CheaperLayout> best;
  int64_t limit = layout.physicalBytes() - layout.physicalBytes() / 10;
  auto consider = [&](const Shape &candidate) {
    Expected<TiledLayout> compiled = TiledLayout::get(candidate);
    if (!compiled || compiled->physicalBytes() > limit)
      return;
    int64_t bytes = compiled->physicalBytes();
    bool changesOrder = candidate.layoutOrDefault().minorToMajor !=
                        layout.layout().minorToMajor;
    // Prefer the smallest; among near ties (within 10%), keep the order.
    if (best) {
      bool bestChangesOrder = best->shape.layoutOrDefault().minorToMajor !=
                              layout.layout().minorToMajor;
      bool nearTie = bytes * 10 > best->physicalBytes * 9 &&
                     best->physicalBytes * 10 > bytes * 9;
      if (nearTie ? (changesOrder && !bestChangesOrder) ||
                        (changesOrder == bestChangesOrder &&
                         bytes >= best->physicalBytes)
                  : bytes >= best->physicalBytes)
        return;
    }
    best = CheaperLayout{
        candidate, bytes,
        describeChange(layout.layout(), candidate.layoutOrDefault())};
  };
  do {
    Shape candidate = shape;
    Layout l = layout.layout();
    l.minorToMajor.assign(order.rbegin(), order.rend());
    candidate.layout = l;
    consider(candidate);
    if (!layout.layout().tiles.empty()) {
      Expected<TpuLayoutChoice> tpu = chooseTpuLayout(candidate);
      if (tpu) {
        Layout tiled = tpu->shape.layoutOrDefault();
        // Keep the user's other attributes; take the TPU tiles.
        l.tiles = tiled.tiles;
        if (l.elementSizeInBits == 0)
          l.elementSizeInBits = tiled.elementSizeInBits;
        candidate.layout = l;
        consider(candidate);
      }
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

std::string describeByteCount(int64_t bytes) {
  std::string out = std::to_string(bytes) + " bytes";
  const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  if (unit >= 0) {
    char text[32];
    std::snprintf(text, sizeof text, " (%.1f %s)", value, units[unit]);
    out += text;
  }
  return out;
}

std::string describePercent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * fraction);
  return text;
}

static std::string joinDims(const std::vector<int64_t> &dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

/// "{1,0}: dim 1 is the most minor (row major)".
static std::string describeOrder(const TiledLayout &layout) {
  const std::vector<int64_t> &m2m = layout.layout().minorToMajor;
  if (m2m.empty())
    return "{} (a scalar)";
  std::string text = "{";
  for (size_t i = 0; i < m2m.size(); ++i)
    text += (i ? "," : "") + std::to_string(m2m[i]);
  text += "}: dim " + std::to_string(m2m.front()) + " is the most minor";
  bool rowMajor = true;
  for (size_t i = 0; i < m2m.size(); ++i)
    rowMajor &= m2m[i] == static_cast<int64_t>(m2m.size() - 1 - i);
  if (rowMajor && m2m.size() > 1)
    text += " (row major)";
  return text;
}

std::string explainLayout(const TiledLayout &layout) {
  LayoutSizes sizes = computeSizes(layout);
  std::optional<CheaperLayout> cheaper = suggestCheaperLayout(layout);
  std::string out = layout.shape().toString() + "\n";
  auto row = [&](const std::string &key, const std::string &value) {
    out += "  " + key +
           std::string(key.size() < 15 ? 15 - key.size() : 0, ' ') + value +
           "\n";
  };
  PrimitiveType type = layout.shape().elementType;
  int64_t e = layout.layout().elementSizeInBits;
  row("element type", std::string(primitiveTypeName(type)) + ", " +
                          std::to_string(layout.elementBits()) +
                          " bits per element" +
                          (e ? " (E(" + std::to_string(e) + "))" : ""));
  row("dim order",
      describeOrder(layout) +
          (layout.shape().layout ? "" : "; no layout given, row major"));
  for (const TilingStep &step : layout.steps())
    row("tile", step.tile.toString() + " over the " +
                    std::to_string(step.tile.dims.size()) +
                    " most minor dims -> " + joinDims(step.outputDims));
  row("physical shape", joinDims(layout.finalDims()));
  row("physical size", std::to_string(sizes.physicalElements) + " elements, " +
                           describeByteCount(sizes.physicalBytes));
  row("data", std::to_string(sizes.logicalElements) + " elements, " +
                  describeByteCount(sizes.dataBytes));
  row("padding", describeByteCount(sizes.paddingBytes) + ", " +
                     describePercent(1 - sizes.utilization) +
                     " of the buffer; utilization " +
                     describePercent(sizes.utilization));
  std::string worst = describeWorstPadding(sizes);
  if (!worst.empty())
    row("why padding", worst);
  if (sizes.laterTilePaddingElements)
    row("", "later tiles add " +
                std::to_string(sizes.laterTilePaddingElements) +
                " padding elements");
  if (sizes.tailPaddingElements)
    row("", "L(" + std::to_string(layout.layout().tailPaddingAlignment) +
                ") adds " + std::to_string(sizes.tailPaddingElements) +
                " padding elements at the end");
  if (!sizes.xlaNote.empty())
    row("xla's figure",
        (sizes.xlaBytes ? describeByteCount(*sizes.xlaBytes) + ": "
                        : std::string("none: ")) +
            sizes.xlaNote);
  if (cheaper) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.1fx",
                  static_cast<double>(sizes.physicalBytes) /
                      std::max<int64_t>(1, cheaper->physicalBytes));
    row("instead", cheaper->shape.toString() + " takes " +
                       describeByteCount(cheaper->physicalBytes) + ", " +
                       ratio + " less:");
    row("", cheaper->why);
  }
  return out;
}

} // namespace tessel
