//===- TensorSpec.h - One-line descriptions of local tensors ----*- C++ -*-===//
//
// A tensor spec names a local tensor on one line, for the command line and
// for lists of tensors (`tessel npu fit`):
//
//   x=fp32[2,3,4,5]:aligned@2048          fp32 (2,3,4,5), aligned, at 2048
//   w=int8[6,5,4,5]:aligned:4n@0          int8 in 4N mode
//   m=fp32[2,40]:matrix(20)@4096          a 2 x 40 matrix with W = 20
//   m=fp32[2,40]:matrix                   W left to the advisor
//   s=fp32[2,5,3,4]:strides(120,56,16,2)  explicit N, C, H, W strides
//   fp32[2,3,4,5]                         aligned, no name, no address
//
// The grammar (spaces allowed between tokens, names and keywords in any
// case):
//
//   spec   := [name '='] type '[' dims ']' (':' item)* ['@' address]
//   dims   := int ',' int ',' int ',' int      (N, C, H, W; each >= 1)
//           | int ',' int                      (rows, cols for a matrix)
//   item   := 'aligned' | 'eu' | 'chip' | 'compact' | 'continuous'
//           | 'matrix' ['(' ['w' '='] int ')']
//           | 'strides' '(' int ',' int ',' int ',' int ')'
//           | '1n' | '4n' | '2n' | '2ic'
//   address := decimal | '0x' hex
//   list   := spec ((';' | newline) spec)*    ('#' starts a comment)
//
// Errors point at the offending token (column 14 of `x=fp32[2,3,4,5]:alinged`:
// "unknown layout 'alinged', expected aligned, eu, compact, continuous,
// matrix or strides").
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_NPU_TENSORSPEC_H
#define TESSEL_NPU_TENSORSPEC_H

#include "tessel/Npu/LocalTensor.h"

#include <string>
#include <string_view>
#include <vector>

namespace tessel {

struct TensorSpec {
  std::string name;
  /// For a matrix, shape is (rows, cols, 1, 1); matrixW 0 means "choose".
  TensorDesc desc;
  bool hasAddress = false;
  bool operator==(const TensorSpec &other) const {
    return name == other.name && desc == other.desc &&
           hasAddress == other.hasAddress;
  }
};

/// Parses one spec (the whole string). An error is located in `text`.
Expected<TensorSpec> parseTensorSpec(std::string_view text);
/// Parses specs separated by ';' or newlines; blank lines and '#' comments
/// are skipped. An error is located in `text` (line and column).
Expected<std::vector<TensorSpec>> parseTensorSpecList(std::string_view text);
/// The canonical text: "x=fp32[2,3,4,5]:aligned:4n@2048". Parses back to an
/// equal spec.
std::string printTensorSpec(const TensorSpec &spec);

} // namespace tessel

#endif // TESSEL_NPU_TENSORSPEC_H
