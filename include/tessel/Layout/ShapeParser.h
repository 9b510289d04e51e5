//===- ShapeParser.h - Parse XLA shape-with-layout strings ------*- C++ -*-===//
//
// Parses shapes as XLA prints them, validating as it goes:
//
//   parseShape("f32[3,5]{1,0:T(2,2)}")   -> the shape; toString() gives it back
//   parseShape("F32[3, 5]{1,0}")         -> f32[3,5]{1,0} (upper-case types and
//                                           spaces are accepted)
//   parseShape("f32[3,5]{1,1}")          -> error at column 12
//     "minor_to_major {1,1} repeats dim 1, expected a permutation of 0..1"
//
// Errors point at the offending token (Support/Error.h). The grammar:
//
//   shape  := array | '(' [shape (',' shape)*] ')'
//   array  := type '[' [dim (',' dim)*] ']' [layout]
//   dim    := int | '<=' int | '?'
//   layout := '{' [int (',' int)*] [':' attr*] '}'
//   attr   := 'T' tile+ | 'L(' int ')' | '#(' type ')' | '*(' type ')'
//           | 'E(' int ')' | 'S(' int ')' | 'SC' ('(' int ':' ints ')')+
//           | 'P(' shape ')' | 'M(' int ')'
//   tile   := '(' (int | '*') (',' (int | '*'))* ')'
//
// Attributes may come in any order on input; they print in XLA's order.
// `/* ... */` comments (XLA's tuple index annotations) are skipped.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LAYOUT_SHAPEPARSER_H
#define TESSEL_LAYOUT_SHAPEPARSER_H

#include "tessel/Layout/Shape.h"
#include "tessel/Support/Expected.h"

#include <string_view>

namespace tessel {

/// Parses a whole string as one shape (surrounding spaces allowed). An
/// error is located in `text`: name it with `Error::inSource`.
Expected<Shape> parseShape(std::string_view text);

/// Parses a layout alone, `{1,0:T(8,128)}`, for a shape given separately.
/// The layout is validated against `shape` (rank, element type, size).
Expected<Layout> parseLayoutFor(std::string_view text, const Shape &shape);

/// For parsers that embed shapes (HLO): parses one shape starting at
/// text[pos] and leaves `pos` just after it. On failure the error's span
/// holds byte offsets in `text`, not yet located, and `pos` is the offset
/// of the offending token.
Expected<Shape> parseShapeAt(std::string_view text, size_t &pos);

} // namespace tessel

#endif // TESSEL_LAYOUT_SHAPEPARSER_H
