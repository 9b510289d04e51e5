//===- Shape.cpp - XLA shapes with (tiled) layouts ------------------------===//
#include "tessel/Layout/Shape.h"

#include "tessel/Support/MathExtras.h"

#include <functional>

namespace tessel {

static void appendJoined(std::string &out, const std::vector<int64_t> &values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      out += ',';
    out += std::to_string(values[i]);
  }
}

std::string Tile::toString() const {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      out += ',';
    out += dims[i] == kCombine ? std::string("*") : std::to_string(dims[i]);
  }
  return out + ")";
}

std::string SplitConfig::toString() const {
  std::string out = "(" + std::to_string(dimension) + ":";
  appendJoined(out, splitIndices);
  return out + ")";
}

Layout Layout::rowMajor(int64_t rank) {
  Layout layout;
  for (int64_t d = rank - 1; d >= 0; --d)
    layout.minorToMajor.push_back(d);
  return layout;
}

std::string Layout::toString() const {
  std::string out = "{";
  appendJoined(out, minorToMajor);
  bool colon = false;
  auto attribute = [&](const std::string &text) {
    if (!colon)
      out += ':';
    colon = true;
    out += text;
  };
  if (!tiles.empty()) {
    std::string text = "T";
    for (const Tile &tile : tiles)
      text += tile.toString();
    attribute(text);
  }
  if (tailPaddingAlignment != 1)
    attribute("L(" + std::to_string(tailPaddingAlignment) + ")");
  if (indexType != PrimitiveType::Invalid)
    attribute("#(" + std::string(primitiveTypeName(indexType)) + ")");
  if (pointerType != PrimitiveType::Invalid)
    attribute("*(" + std::string(primitiveTypeName(pointerType)) + ")");
  if (elementSizeInBits != 0)
    attribute("E(" + std::to_string(elementSizeInBits) + ")");
  if (memorySpace != 0)
    attribute("S(" + std::to_string(memorySpace) + ")");
  if (!splitConfigs.empty()) {
    std::string text = "SC";
    for (const SplitConfig &config : splitConfigs)
      text += config.toString();
    attribute(text);
  }
  if (physicalShape)
    attribute("P(" + physicalShape->toString() + ")");
  if (dynamicShapeMetadataPrefixBytes != 0)
    attribute("M(" + std::to_string(dynamicShapeMetadataPrefixBytes) + ")");
  return out + "}";
}

bool Layout::hasOnlyMinorToMajor() const {
  Layout plain;
  plain.minorToMajor = minorToMajor;
  return *this == plain;
}

bool Layout::operator==(const Layout &other) const {
  bool samePhysical = (!physicalShape && !other.physicalShape) ||
                      (physicalShape && other.physicalShape &&
                       *physicalShape == *other.physicalShape);
  return minorToMajor == other.minorToMajor && tiles == other.tiles &&
         tailPaddingAlignment == other.tailPaddingAlignment &&
         indexType == other.indexType && pointerType == other.pointerType &&
         elementSizeInBits == other.elementSizeInBits &&
         memorySpace == other.memorySpace &&
         splitConfigs == other.splitConfigs && samePhysical &&
         dynamicShapeMetadataPrefixBytes ==
             other.dynamicShapeMetadataPrefixBytes;
}

Shape Shape::makeTuple(std::vector<Shape> elements) {
  Shape shape;
  shape.tuple = true;
  shape.tupleShapes = std::move(elements);
  return shape;
}

std::optional<int64_t> Shape::elementCount() const {
  int64_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (isDynamicDim(static_cast<int64_t>(i)) || dims[i] < 0)
      return std::nullopt;
    std::optional<int64_t> product = checkedMul(count, dims[i]);
    if (!product)
      return std::nullopt;
    count = *product;
  }
  return count;
}

Layout Shape::layoutOrDefault() const {
  return layout ? *layout : Layout::rowMajor(rank());
}

std::string Shape::toStringWithoutLayout() const {
  if (tuple) {
    std::string out = "(";
    for (size_t i = 0; i < tupleShapes.size(); ++i) {
      if (i)
        out += i % 5 == 0 ? ", /*index=" + std::to_string(i) + "*/" : ", ";
      out += tupleShapes[i].toStringWithoutLayout();
    }
    return out + ")";
  }
  std::string out(primitiveTypeName(elementType));
  out += '[';
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      out += ',';
    if (isDynamicDim(static_cast<int64_t>(i)))
      out += dims[i] == kUnboundedSize ? std::string("?")
                                       : "<=" + std::to_string(dims[i]);
    else
      out += std::to_string(dims[i]);
  }
  return out + ']';
}

std::string Shape::toString() const {
  if (tuple) {
    std::string out = "(";
    for (size_t i = 0; i < tupleShapes.size(); ++i) {
      if (i)
        out += i % 5 == 0 ? ", /*index=" + std::to_string(i) + "*/" : ", ";
      out += tupleShapes[i].toString();
    }
    return out + ")";
  }
  std::string out = toStringWithoutLayout();
  if (!layout || isToken())
    return out;
  std::string layoutText = layout->toString();
  // XLA omits an empty layout on scalars.
  if (dims.empty() && layoutText == "{}")
    return out;
  return out + layoutText;
}

bool Shape::operator==(const Shape &other) const {
  if (tuple != other.tuple)
    return false;
  if (tuple)
    return tupleShapes == other.tupleShapes;
  auto dynamicOf = [](const Shape &s) {
    std::vector<bool> d = s.dynamicDims;
    d.resize(s.dims.size(), false);
    return d;
  };
  auto layoutOf = [](const Shape &s) -> std::optional<Layout> {
    // A scalar with an empty layout prints (and compares) like no layout.
    if (s.layout && s.dims.empty() && s.layout->toString() == "{}")
      return std::nullopt;
    return s.layout;
  };
  return elementType == other.elementType && dims == other.dims &&
         dynamicOf(*this) == dynamicOf(other) &&
         layoutOf(*this) == layoutOf(other);
}

size_t ShapeHash::operator()(const Shape &shape) const {
  return std::hash<std::string>()(shape.toString());
}

} // namespace tessel
