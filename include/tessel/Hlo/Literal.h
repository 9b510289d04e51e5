//===- Literal.h - Typed arrays: HLO constants and evaluator values -*- C++
//-*-===//
//
// A Literal is an array of one element type (or a tuple of literals) with its
// elements stored densely in logical row-major order, one element per
// `byteWidth(type)` bytes, little-endian. The layout of the shape (if any) is
// kept but does not change the storage: physical layouts only matter when a
// literal is read from or written to a buffer (see toPhysical/fromPhysical).
//
//   Literal a(parseShape("bf16[2,3]").value());   // six zeros
//   a.setDouble({1, 2}, 0.79785);                  // rounds to bf16: 0.796875
//   a.getDouble({1, 2})                            -> 0.796875
//   a.toString()                                   -> "{ { 0, 0, 0 }, { 0, 0,
//   0.797 } }"
//
// Element access:
//   - getBits/setBits: the raw bit pattern, zero-extended (any type);
//   - getDouble/setDouble: the value as a double; floats are decoded exactly,
//     setDouble rounds to the element type (ties to even), integers convert
//     as XLA's `convert` does (saturating, NaN -> 0), pred is 0 or 1;
//   - getInt/setInt: integers (sign-extended for signed types; u64 values
//     above INT64_MAX come back as their two's complement), setInt wraps to
//     the type's width like XLA's integer arithmetic;
//   - getComplex/setComplex for c64 and c128.
// Indices are linear (row-major) or multi-indices; a multi-index is checked
// with `assert` only, callers validate user input first.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_LITERAL_H
#define TESSEL_HLO_LITERAL_H

#include "tessel/Layout/Shape.h"
#include "tessel/Support/Expected.h"

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

class Literal {
public:
  /// An empty tuple `()`.
  Literal() : theShape(Shape::makeTuple({})) {}
  /// Zeros of an array shape, or a tuple of zero literals.
  /// @pre the shape has no dynamic dims and fits in memory (see
  ///      Literal::create for a checked version).
  explicit Literal(const Shape &shape);
  /// Like the constructor, but fails for dynamic shapes, tokens and element
  /// counts above `maxElements`.
  static Expected<Literal> create(const Shape &shape,
                                  int64_t maxElements = int64_t(1) << 32);
  static Literal makeTuple(std::vector<Literal> elements);
  /// A constant XLA printed as `{...}`: the shape without storage. Only
  /// shape(), isElided() and toString() may be used on it.
  static Literal makeElided(const Shape &shape);
  /// A scalar of `type` holding `value` (rounded to the type).
  static Literal scalar(PrimitiveType type, double value);

  const Shape &shape() const { return theShape; }
  PrimitiveType elementType() const { return theShape.elementType; }
  bool isTuple() const { return theShape.isTuple(); }
  int64_t rank() const { return theShape.rank(); }
  const std::vector<int64_t> &dims() const { return theShape.dims; }
  int64_t elementCount() const { return count; }
  /// Bytes per element in storage (byteWidth of the type).
  int64_t elementBytes() const { return width; }

  /// Replaces the layout of the shape (storage does not change).
  void setLayout(std::optional<Layout> layout) { theShape.layout = layout; }

  std::vector<Literal> &tupleElements() { return elements; }
  const std::vector<Literal> &tupleElements() const { return elements; }

  /// Raw storage, elementCount() * elementBytes() bytes.
  uint8_t *data() { return bytes.data(); }
  const uint8_t *data() const { return bytes.data(); }

  /// Row-major linear index of a multi-index.
  int64_t linearIndex(const std::vector<int64_t> &index) const;
  int64_t linearIndex(const int64_t *index) const;

  uint64_t getBits(int64_t i) const;
  void setBits(int64_t i, uint64_t bits);
  double getDouble(int64_t i) const;
  void setDouble(int64_t i, double value);
  int64_t getInt(int64_t i) const;
  void setInt(int64_t i, int64_t value);
  /// Float fast paths: the element as a float (exact for f32 and narrower
  /// floats), and set from a float rounding to the type.
  float getFloat(int64_t i) const;
  void setFloat(int64_t i, float value);
  std::complex<double> getComplex(int64_t i) const;
  void setComplex(int64_t i, std::complex<double> value);

  double getDouble(const std::vector<int64_t> &index) const {
    return getDouble(linearIndex(index));
  }
  void setDouble(const std::vector<int64_t> &index, double value) {
    setDouble(linearIndex(index), value);
  }
  int64_t getInt(const std::vector<int64_t> &index) const {
    return getInt(linearIndex(index));
  }
  void setInt(const std::vector<int64_t> &index, int64_t value) {
    setInt(linearIndex(index), value);
  }

  /// True when a constant was printed as `{...}` (contents elided by XLA):
  /// the literal holds zeros and cannot be evaluated.
  bool isElided() const { return elided; }
  void setElided(bool value) { elided = value; }

  /// XLA's text for the contents: `42`, `{1, 2}`, `{ { 1, 2 }, { 3, 4 } }`,
  /// `(1, {2, 3})` for tuples. Floats print with the fewest digits that
  /// read back to the same bits.
  std::string toString() const;
  /// The text of one element.
  std::string elementToString(int64_t i) const;

  /// Same shape (layout included) and the same bits.
  bool operator==(const Literal &other) const;
  bool operator!=(const Literal &other) const { return !(*this == other); }

private:
  Shape theShape;
  std::vector<uint8_t> bytes;
  std::vector<Literal> elements;
  int64_t count = 0;
  int64_t width = 0;
  bool elided = false;
};

/// The buffer of an array literal in the physical layout of `shape` (its
/// layout, row-major when it has none): `physicalElements()` elements of
/// `byteWidth` bytes each, padding slots zero. Fails for packed layouts
/// (E(n) below the type's byte width) and dims that differ from the literal.
Expected<std::string> toPhysical(const Literal &literal, const Shape &shape);
/// The inverse: reads an array of `shape` from a physical buffer.
Expected<Literal> fromPhysical(const std::string &buffer, const Shape &shape);

/// Text of one float value with the fewest significant digits that round
/// back to the same value in `type` ("0.797" for bf16 0.796875, "inf",
/// "-nan").
std::string formatFloat(PrimitiveType type, double value);

} // namespace tessel

#endif // TESSEL_HLO_LITERAL_H
