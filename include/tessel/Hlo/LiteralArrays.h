//===- LiteralArrays.h - Literals to and from numpy arrays ------*- C++ -*-===//
//
// Arguments and results of HLO modules travel as numpy arrays: in .npy
// files for `tessel hlo eval` and `tessel run`, in memory for the Python
// binding. Both check an array against the parameter it is for in the same
// words:
//
//   parameter f32[2,3]{1,0}, array '<f4' (3,2)
//   -> "x.npy: shape (3,2), expected (2,3) for f32[2,3]{1,0}"
//
// Arrays are logical (row-major, whatever the layout), or with `logical`
// false the physical buffer of the shape's layout: dims in physical order
// (major to minor) for another permutation, the flat buffer, padding
// included, for tiles and L(n).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_LITERALARRAYS_H
#define TESSEL_HLO_LITERALARRAYS_H

#include "tessel/Hlo/Literal.h"
#include "tessel/Support/Expected.h"
#include "tessel/Support/Npy.h"

#include <string>
#include <vector>

namespace tessel {

/// Whether arguments and results of `shape` are read as its physical
/// buffer: not `logical`, and a layout other than row-major.
bool readsPhysical(const Shape &shape, bool logical);

/// The dims of the array that holds `shape` as a physical buffer: the
/// logical dims for row-major, the dims in physical order for another
/// permutation, the flat buffer for tiles and L(n).
Expected<std::vector<int64_t>> physicalArrayDims(const Shape &shape);

/// The argument for `parameter` held by `array` (C or Fortran order). Errors
/// start with `name` (a file name, "argument 0"): the element type or the
/// shape differs from the parameter's.
Expected<Literal> literalFromArray(const NpyArray &array,
                                   const Shape &parameter, bool logical,
                                   const std::string &name);

/// The array of a result `value` of `shape` (logical, or its physical
/// buffer as literalFromArray reads them).
Expected<NpyArray> arrayFromLiteral(const Literal &value, const Shape &shape,
                                    bool logical);

} // namespace tessel

#endif // TESSEL_HLO_LITERALARRAYS_H
