//===- LiteralArrays.cpp - Literals to and from numpy arrays --------------===//
#include "tessel/Hlo/LiteralArrays.h"

#include "tessel/Layout/TiledLayout.h"

#include <cstring>

namespace tessel {

bool readsPhysical(const Shape &shape, bool logical) {
  return !logical && shape.layout &&
         *shape.layout != Layout::rowMajor(shape.rank());
}

/// The dims of the .npy that holds an array of `shape` (with its layout) as
/// a physical buffer: the logical dims for row-major, the dims in physical
/// order for another permutation, the flat buffer for tiles and L(n).
Expected<std::vector<int64_t>> physicalArrayDims(const Shape &shape) {
  Expected<TiledLayout> layout = TiledLayout::get(shape);
  if (!layout)
    return layout.takeError();
  Layout l = shape.layoutOrDefault();
  if (!l.tiles.empty() || l.tailPaddingAlignment != 1)
    return std::vector<int64_t>{layout->physicalElements()};
  std::vector<int64_t> dims;
  for (int64_t d : layout->physicalOrder())
    dims.push_back(shape.dims[d]);
  return dims;
}

static std::string joinDims(const std::vector<int64_t> &dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? "," : "") + std::to_string(dims[i]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

/// The data of an .npy in C order.
static std::string cOrderData(const NpyArray &array) {
  if (!array.fortranOrder || array.shape.size() < 2)
    return array.data;
  int64_t width = array.itemSize(), rank = array.shape.size();
  std::string out(array.data.size(), '\0');
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < array.elementCount(); ++i) {
    int64_t f = 0, stride = 1;
    for (int64_t d = 0; d < rank; ++d) {
      f += index[d] * stride;
      stride *= array.shape[d];
    }
    std::memcpy(&out[i * width], &array.data[f * width], width);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < array.shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

Expected<Literal> literalFromArray(const NpyArray &array, const Shape &param,
                                   bool logical, const std::string &path) {
  if (!param.isArray())
    return Error(path + ": parameter shape " + param.toString() +
                 " is not an array");
  bool physical = readsPhysical(param, logical);
  std::vector<int64_t> want = param.dims;
  if (physical) {
    Expected<std::vector<int64_t>> dims = physicalArrayDims(param);
    if (!dims)
      return Error(path + ": " + dims.error().message);
    want = *dims;
  }
  if (!npyDescrMatches(array.descr, param.elementType))
    return Error(path + ": holds '" + array.descr + "' elements, expected " +
                 npyDescr(param.elementType) + " for " +
                 std::string(primitiveTypeName(param.elementType)));
  if (array.shape != want)
    return Error(path + ": shape " + joinDims(array.shape) + ", expected " +
                 joinDims(want) + " for " + param.toString() +
                 (physical ? " (its physical buffer, as --physical reads "
                             "it; without --physical, the logical array)"
                           : ""));
  std::string data = cOrderData(array);
  if (physical) {
    Expected<Literal> literal = fromPhysical(data, param);
    if (!literal)
      return Error(path + ": " + literal.error().message);
    return std::move(*literal);
  }
  Expected<Literal> literal =
      Literal::create(Shape(param.elementType, param.dims));
  if (!literal)
    return Error(path + ": " + literal.error().message);
  if (!data.empty())
    std::memcpy(literal->data(), data.data(), data.size());
  return std::move(*literal);
}

Expected<NpyArray> arrayFromLiteral(const Literal &value, const Shape &shape,
                                    bool logical) {
  NpyArray array;
  array.descr = npyDescr(value.elementType());
  bool physical = readsPhysical(shape, logical);
  if (!physical) {
    array.shape = value.dims();
    array.data.assign(reinterpret_cast<const char *>(value.data()),
                      value.elementCount() * value.elementBytes());
    return array;
  }
  Expected<std::vector<int64_t>> dims = physicalArrayDims(shape);
  if (!dims)
    return dims.takeError();
  Expected<std::string> buffer = toPhysical(value, shape);
  if (!buffer)
    return buffer.takeError();
  array.shape = *dims;
  array.data = std::move(*buffer);
  return array;
}

} // namespace tessel
