//===- Literal.cpp - Typed arrays: HLO constants and evaluator values -----===//
#include "tessel/Hlo/Literal.h"

#include "tessel/Hlo/FloatTypes.h"
#include "tessel/Layout/TiledLayout.h"
#include "tessel/Support/MathExtras.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace tessel {
namespace {

int64_t storageWidth(PrimitiveType type) {
  return isArrayType(type) ? byteWidth(type) : 0;
}

uint64_t loadLE(const uint8_t *p, int64_t width) {
  uint64_t v = 0;
  for (int64_t b = 0; b < width && b < 8; ++b)
    v |= static_cast<uint64_t>(p[b]) << (8 * b);
  return v;
}

void storeLE(uint8_t *p, int64_t width, uint64_t v) {
  for (int64_t b = 0; b < width && b < 8; ++b)
    p[b] = static_cast<uint8_t>(v >> (8 * b));
}

float floatFromBits(uint64_t bits) {
  uint32_t b = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint64_t bitsOfFloat(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
double doubleFromBits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}
uint64_t bitsOfDouble(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

/// Saturating float -> integer of `bits` bits, NaN -> 0 (XLA's convert).
int64_t saturateSigned(double v, int bits) {
  if (std::isnan(v))
    return 0;
  double hi = std::ldexp(1.0, bits - 1); // 2^(bits-1), exclusive bound
  if (v >= hi)
    return bits == 64 ? std::numeric_limits<int64_t>::max()
                      : (int64_t(1) << (bits - 1)) - 1;
  if (v <= -hi)
    return bits == 64 ? std::numeric_limits<int64_t>::min()
                      : -(int64_t(1) << (bits - 1));
  return static_cast<int64_t>(std::trunc(v));
}
uint64_t saturateUnsigned(double v, int bits) {
  if (std::isnan(v) || v <= 0)
    return 0;
  double hi = std::ldexp(1.0, bits);
  if (v >= hi)
    return bits == 64 ? std::numeric_limits<uint64_t>::max()
                      : (uint64_t(1) << bits) - 1;
  return static_cast<uint64_t>(std::trunc(v));
}

int64_t signExtend(uint64_t bits, int width) {
  if (width >= 64)
    return static_cast<int64_t>(bits);
  uint64_t signBit = uint64_t(1) << (width - 1);
  bits &= (uint64_t(1) << width) - 1;
  return static_cast<int64_t>((bits ^ signBit) - signBit);
}

uint64_t maskTo(uint64_t bits, int width) {
  return width >= 64 ? bits : bits & ((uint64_t(1) << width) - 1);
}

} // namespace

Literal::Literal(const Shape &shape) : theShape(shape) {
  if (shape.isTuple()) {
    for (const Shape &element : shape.tupleShapes)
      elements.emplace_back(element);
    return;
  }
  width = storageWidth(shape.elementType);
  count = 1;
  for (int64_t d : shape.dims)
    count *= d;
  bytes.assign(static_cast<size_t>(count * width), 0);
}

Expected<Literal> Literal::create(const Shape &shape, int64_t maxElements) {
  if (shape.isTuple()) {
    std::vector<Literal> parts;
    for (const Shape &element : shape.tupleShapes) {
      Expected<Literal> part = create(element, maxElements);
      if (!part)
        return part.takeError();
      parts.push_back(std::move(*part));
    }
    Literal result = makeTuple(std::move(parts));
    result.theShape = shape;
    return result;
  }
  if (!shape.isArray())
    return Error("cannot hold a value of shape " + shape.toString());
  if (!shape.dynamicDims.empty())
    for (bool dynamic : shape.dynamicDims)
      if (dynamic)
        return Error("cannot hold a value of dynamic shape " +
                     shape.toString());
  std::optional<int64_t> n = shape.elementCount();
  if (!n || *n > maxElements)
    return Error("shape " + shape.toString() + " has more than " +
                 std::to_string(maxElements) + " elements");
  return Literal(shape);
}

Literal Literal::makeTuple(std::vector<Literal> parts) {
  std::vector<Shape> shapes;
  for (const Literal &part : parts)
    shapes.push_back(part.shape());
  Literal result;
  result.theShape = Shape::makeTuple(std::move(shapes));
  result.elements = std::move(parts);
  return result;
}

Literal Literal::makeElided(const Shape &shape) {
  Literal result;
  result.theShape = shape;
  result.width = storageWidth(shape.elementType);
  result.count = shape.elementCount().value_or(0);
  result.elided = true;
  return result;
}

float Literal::getFloat(int64_t i) const {
  switch (elementType()) {
  case PrimitiveType::F32:
    return floatFromBits(getBits(i));
  case PrimitiveType::BF16:
    return bf16ToFloat(static_cast<uint16_t>(getBits(i)));
  default:
    return static_cast<float>(getDouble(i));
  }
}

void Literal::setFloat(int64_t i, float value) {
  switch (elementType()) {
  case PrimitiveType::F32:
    return setBits(i, bitsOfFloat(value));
  case PrimitiveType::BF16:
    return setBits(i, floatToBf16(value));
  default:
    return setDouble(i, value);
  }
}

Literal Literal::scalar(PrimitiveType type, double value) {
  Literal result(Shape(type, {}));
  result.setDouble(0, value);
  return result;
}

int64_t Literal::linearIndex(const int64_t *index) const {
  int64_t linear = 0;
  for (int64_t d = 0; d < rank(); ++d) {
    assert(index[d] >= 0 && index[d] < theShape.dims[d]);
    linear = linear * theShape.dims[d] + index[d];
  }
  return linear;
}

int64_t Literal::linearIndex(const std::vector<int64_t> &index) const {
  assert(static_cast<int64_t>(index.size()) == rank());
  return linearIndex(index.data());
}

uint64_t Literal::getBits(int64_t i) const {
  assert(i >= 0 && i < count);
  return loadLE(bytes.data() + i * width, width);
}

void Literal::setBits(int64_t i, uint64_t bits) {
  assert(i >= 0 && i < count);
  storeLE(bytes.data() + i * width, width, bits);
}

double Literal::getDouble(int64_t i) const {
  PrimitiveType type = elementType();
  uint64_t bits = getBits(i);
  switch (type) {
  case PrimitiveType::Pred:
    return bits ? 1.0 : 0.0;
  case PrimitiveType::F32:
    return floatFromBits(bits);
  case PrimitiveType::F64:
    return doubleFromBits(bits);
  case PrimitiveType::BF16:
    return bf16ToFloat(static_cast<uint16_t>(bits));
  case PrimitiveType::C64:
  case PrimitiveType::C128:
    return getComplex(i).real();
  default:
    break;
  }
  if (isFloat(type))
    return decodeFloat(type, bits);
  if (isSignedInteger(type))
    return static_cast<double>(signExtend(bits, bitWidth(type)));
  return static_cast<double>(bits);
}

void Literal::setDouble(int64_t i, double value) {
  PrimitiveType type = elementType();
  switch (type) {
  case PrimitiveType::Pred:
    return setBits(i, value != 0 ? 1 : 0);
  case PrimitiveType::F32:
    return setBits(i, bitsOfFloat(static_cast<float>(value)));
  case PrimitiveType::F64:
    return setBits(i, bitsOfDouble(value));
  case PrimitiveType::C64:
  case PrimitiveType::C128:
    return setComplex(i, {value, 0.0});
  default:
    break;
  }
  if (isFloat(type))
    return setBits(i, encodeFloat(type, value));
  int bits = bitWidth(type);
  if (isSignedInteger(type))
    return setBits(
        i, maskTo(static_cast<uint64_t>(saturateSigned(value, bits)), bits));
  setBits(i, saturateUnsigned(value, bits));
}

int64_t Literal::getInt(int64_t i) const {
  PrimitiveType type = elementType();
  if (isSignedInteger(type))
    return signExtend(getBits(i), bitWidth(type));
  if (isUnsignedInteger(type) || type == PrimitiveType::Pred)
    return static_cast<int64_t>(getBits(i));
  return saturateSigned(getDouble(i), 64);
}

void Literal::setInt(int64_t i, int64_t value) {
  PrimitiveType type = elementType();
  if (isInteger(type))
    return setBits(i, maskTo(static_cast<uint64_t>(value), bitWidth(type)));
  if (type == PrimitiveType::Pred)
    return setBits(i, value != 0);
  if (type == PrimitiveType::F64 || isComplex(type))
    return setDouble(i, static_cast<double>(value));
  // Integers convert to f32 first, as XLA's float normalization does.
  setDouble(i, static_cast<double>(static_cast<float>(value)));
}

std::complex<double> Literal::getComplex(int64_t i) const {
  const uint8_t *p = bytes.data() + i * width;
  if (elementType() == PrimitiveType::C64) {
    float re, im;
    std::memcpy(&re, p, 4);
    std::memcpy(&im, p + 4, 4);
    return {re, im};
  }
  if (elementType() == PrimitiveType::C128) {
    double re, im;
    std::memcpy(&re, p, 8);
    std::memcpy(&im, p + 8, 8);
    return {re, im};
  }
  return {getDouble(i), 0.0};
}

void Literal::setComplex(int64_t i, std::complex<double> value) {
  uint8_t *p = bytes.data() + i * width;
  if (elementType() == PrimitiveType::C64) {
    float re = static_cast<float>(value.real());
    float im = static_cast<float>(value.imag());
    std::memcpy(p, &re, 4);
    std::memcpy(p + 4, &im, 4);
    return;
  }
  if (elementType() == PrimitiveType::C128) {
    double re = value.real(), im = value.imag();
    std::memcpy(p, &re, 8);
    std::memcpy(p + 8, &im, 8);
    return;
  }
  setDouble(i, value.real());
}

std::string formatFloat(PrimitiveType type, double value) {
  if (std::isnan(value))
    return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    bool same;
    if (type == PrimitiveType::F32) {
      float back = std::strtof(buffer, nullptr);
      same = bitsOfFloat(back) == bitsOfFloat(static_cast<float>(value));
    } else if (floatFormat(type)) {
      same = encodeFloat(type, std::strtod(buffer, nullptr)) ==
             encodeFloat(type, value);
    } else {
      same = bitsOfDouble(std::strtod(buffer, nullptr)) == bitsOfDouble(value);
    }
    if (same)
      break;
  }
  return buffer;
}

std::string Literal::elementToString(int64_t i) const {
  PrimitiveType type = elementType();
  if (type == PrimitiveType::Pred)
    return getBits(i) ? "true" : "false";
  if (isSignedInteger(type))
    return std::to_string(getInt(i));
  if (isUnsignedInteger(type))
    return std::to_string(getBits(i));
  if (isComplex(type)) {
    PrimitiveType part =
        type == PrimitiveType::C64 ? PrimitiveType::F32 : PrimitiveType::F64;
    std::complex<double> c = getComplex(i);
    return "(" + formatFloat(part, c.real()) + ", " +
           formatFloat(part, c.imag()) + ")";
  }
  return formatFloat(type, getDouble(i));
}

std::string Literal::toString() const {
  if (isTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < elements.size(); ++i)
      out += (i ? ", " : "") + elements[i].toString();
    return out + ")";
  }
  if (elided)
    return "{...}";
  if (rank() == 0)
    return elementToString(0);
  std::string out;
  int64_t next = 0;
  // Nested braces; rank 1 prints {1, 2}, higher ranks { { 1, 2 }, ... }.
  bool spaced = rank() > 1;
  auto emit = [&](auto &&self, int64_t dim) -> void {
    out += spaced ? "{ " : "{";
    for (int64_t k = 0; k < theShape.dims[dim]; ++k) {
      if (k)
        out += ", ";
      if (dim + 1 == rank())
        out += elementToString(next++);
      else
        self(self, dim + 1);
    }
    out += spaced ? " }" : "}";
  };
  emit(emit, 0);
  return out;
}

bool Literal::operator==(const Literal &other) const {
  return theShape == other.theShape && bytes == other.bytes &&
         elements == other.elements && elided == other.elided;
}

/// Calls copy(literalElement, bufferElement) for every element of an array
/// of `shape` stored in `layout`, in the literal's row-major order: at
/// once for the row-major layout without tiles or padding (one run), by
/// strides for other layouts without tiles, else through layout.offset.
template <typename Copy>
static void forEachPhysical(const Shape &shape, const TiledLayout &layout,
                            int64_t elements, Copy copy) {
  // (No elements: nothing to copy, and an empty literal's data may be null.)
  if (elements == 0)
    return;
  int64_t rank = static_cast<int64_t>(shape.dims.size());
  Layout l = shape.layoutOrDefault();
  if (l.hasOnlyMinorToMajor() && layout.physicalElements() == elements) {
    // Each dim's stride in elements, from the most minor.
    std::vector<int64_t> stride(rank, 1);
    int64_t size = 1;
    bool rowMajor = true;
    for (int64_t k = 0; k < rank; ++k) {
      int64_t d = l.minorToMajor[k];
      rowMajor = rowMajor && d == rank - 1 - k;
      stride[d] = size;
      size *= shape.dims[d];
    }
    if (rowMajor) {
      copy(0, 0, elements);
      return;
    }
    std::vector<int64_t> index(rank, 0);
    int64_t offset = 0;
    for (int64_t i = 0; i < elements; ++i) {
      copy(i, offset, 1);
      for (int64_t d = rank - 1; d >= 0; --d) {
        offset += stride[d];
        if (++index[d] < shape.dims[d])
          break;
        offset -= stride[d] * index[d];
        index[d] = 0;
      }
    }
    return;
  }
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < elements; ++i) {
    copy(i, layout.offset(index), 1);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape.dims[d])
        break;
      index[d] = 0;
    }
  }
}

Expected<std::string> toPhysical(const Literal &literal, const Shape &shape) {
  if (literal.isTuple() || !shape.isArray() || shape.dims != literal.dims() ||
      shape.elementType != literal.elementType())
    return Error("cannot write a value of shape " +
                 literal.shape().toStringWithoutLayout() + " as " +
                 shape.toString());
  Expected<TiledLayout> layout = TiledLayout::get(shape);
  if (!layout)
    return layout.takeError();
  int64_t width = literal.elementBytes();
  if (layout->elementBits() != 8 * width)
    return Error("packed layout " + shape.toString() +
                 " is not supported for buffers, expected whole bytes");
  std::string buffer(static_cast<size_t>(layout->physicalElements() * width),
                     '\0');
  forEachPhysical(shape, *layout, literal.elementCount(),
                  [&](int64_t i, int64_t offset, int64_t count) {
                    std::memcpy(&buffer[offset * width],
                                literal.data() + i * width, count * width);
                  });
  return buffer;
}

Expected<Literal> fromPhysical(const std::string &buffer, const Shape &shape) {
  Expected<Literal> literal = Literal::create(shape);
  if (!literal)
    return literal.takeError();
  Expected<TiledLayout> layout = TiledLayout::get(shape);
  if (!layout)
    return layout.takeError();
  int64_t width = literal->elementBytes();
  if (layout->elementBits() != 8 * width)
    return Error("packed layout " + shape.toString() +
                 " is not supported for buffers, expected whole bytes");
  if (static_cast<int64_t>(buffer.size()) != layout->physicalElements() * width)
    return Error("buffer holds " + std::to_string(buffer.size()) +
                 " bytes, expected " +
                 std::to_string(layout->physicalElements() * width) + " for " +
                 shape.toString());
  forEachPhysical(shape, *layout, literal->elementCount(),
                  [&](int64_t i, int64_t offset, int64_t count) {
                    std::memcpy(literal->data() + i * width,
                                &buffer[offset * width], count * width);
                  });
  return literal;
}

} // namespace tessel
