//===- Npy.h - Read and write NumPy .npy files ------------------*- C++ -*-===//
//
// tessel's tools take and give arrays as .npy files (format versions 1.0 to
// 3.0): a magic string, a Python-literal header, then the raw data.
//
//   NpyArray a{"<f4", {2, 3}, false, bytes};
//   std::string file = writeNpy(a);           // 128-byte header + 24 bytes
//   Expected<NpyArray> b = parseNpy(file);    // b->shape == {2, 3}
//
// No packaged C++ library reads .npy without exceptions, and the format is
// small enough to parse exactly here; tests check it against files numpy
// wrote. bf16 and f8 arrays (ml_dtypes) are stored by numpy with a
// void descr such as "<V2"; readers that know the element type accept it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_NPY_H
#define TESSEL_SUPPORT_NPY_H

#include "tessel/Support/Expected.h"
#include "tessel/Support/FileIO.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

struct NpyArray {
  /// NumPy's type descr: "<f4", "|b1", "<i8", "<V2", ...
  std::string descr;
  std::vector<int64_t> shape;
  /// True when the data is in column-major (Fortran) order.
  bool fortranOrder = false;
  /// The raw element bytes.
  std::string data;

  /// Bytes per element from the descr ("<f4" -> 4), 0 when unknown.
  int64_t itemSize() const;
  /// Product of the shape.
  int64_t elementCount() const;
};

/// Parses the bytes of a .npy file. Errors say what is wrong and where
/// ("header: expected 'descr' key", "data holds 20 bytes, expected 24").
Expected<NpyArray> parseNpy(std::string_view bytes);

/// Reads a .npy file from disk ("-": standard input), refusing files of
/// more than `maxBytes` bytes (see readFileBytes).
Expected<NpyArray> readNpyFile(const std::string &path,
                               int64_t maxBytes = kMaxInputBytes,
                               const std::string &why = "");

/// The bytes of a version 1.0 .npy file for `array` (C order unless
/// array.fortranOrder). @pre array.data.size() == itemSize * elementCount.
std::string writeNpy(const NpyArray &array);

} // namespace tessel

#endif // TESSEL_SUPPORT_NPY_H
