//===- HloIndexing.h - Indexing maps of HLO instructions --------*- C++ -*-===//
//
// Which elements of its operands does an HLO instruction read to compute one
// element of its output? The answer, per operand, is a set of indexing maps
// from the output index (the dims) to the operand index (the results):
//
//   %t = f32[40,20]{1,0} transpose(f32[20,40]{1,0} %p), dimensions={1,0}
//
//   operand id = 0
//   (d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]
//
// In code (`tessel indexing M.hlo --instruction t` prints the same):
//
//   mlir::MLIRContext context;
//   Expected<HloInstructionIndexing> reads =
//       computeOutputToInputIndexing(*t, /*outputId=*/0, &context);
//   reads->maps[0][0].evaluate({3, 7}, {})   -> {7, 3}
//   reads->toString()                        -> the text above
//
// Range variables name the elements one output reads together (the reduced
// dims of a reduce, the contracting dims of a dot, the window of a
// reduce-window); runtime variables stand for values read at run time (the
// clamped start indices of a dynamic-slice); constraints restrict the domain
// (a pad with interior padding 2 reads its operand at every third index):
//
//   %q = f32[13]{0} pad(f32[4]{0} %p, f32[] %z), padding=1_2_2
//
//   operand id = 0
//   (d0) -> ((d0 - 1) floordiv 3), domain: d0 in [1, 10],
//       (d0 - 1) mod 3 in [0, 0]
//   operand id = 1
//   (d0) -> (), domain: d0 in [0, 12]
//
// A scalar operand that every output may read (a pad value, an init value
// of a reduce, a start index of a dynamic-slice) maps to `()`. Such maps, and
// the base of a dynamic-update-slice and the branches of a select, name a
// superset of what is read at a given point; every other map is exact.
//
// Fusions compose the maps of the fused computation from its root back to
// its parameters and keep, per fusion operand, the distinct simplified maps
// (one operand read at two different indices, as x[i] * x[i+1], gives two).
//
// The reverse direction, input-to-output, maps an operand index to the
// output elements it contributes to (one map set per output).
//
// Every map is verified by brute force in HloIndexingTest: evaluate the op on
// small shapes, perturb each input element, record which output elements
// change, and compare with the sets the maps enumerate.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INDEXING_HLOINDEXING_H
#define TESSEL_INDEXING_HLOINDEXING_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Indexing/IndexingMap.h"
#include "tessel/Support/Expected.h"

#include <string>
#include <vector>

namespace tessel {

/// Per operand (output-to-input) or per output (input-to-output), the
/// distinct maps, in the order they were found.
struct HloInstructionIndexing {
  std::vector<std::vector<IndexingMap>> maps;
  /// Ids whose indexing is unknown (an op without maps here: gather,
  /// scatter, sort, convolution, ...; or a fusion operand that reaches one);
  /// their map sets are empty and mean "any element may be read", not
  /// "nothing is read". Printed as XLA prints it: `unknown indexing`.
  std::vector<bool> unknown;

  /// Marks `id` unknown (and drops its maps). Grows `maps` as needed.
  void markUnknown(size_t id);
  bool isUnknown(size_t id) const { return id < unknown.size() && unknown[id]; }
  /// Whether any id is unknown.
  bool hasUnknown() const;

  /// Adds `map` to the set of `id` unless an equal map is there. Returns true
  /// when it was added. Grows `maps` as needed.
  bool addMap(size_t id, IndexingMap map);
  /// Simplifies every map and removes the duplicates that result.
  void simplify();
  /// `operand id = 0` (or `LABEL id = 0`) then the maps, one per line, a
  /// blank line between ids.
  std::string toString(const std::string &label = "operand") const;
};

/// The maps from output `outputId` of `instruction` (0 unless the result is
/// a tuple) to each of its operands, simplified. An op without maps here
/// (custom-call, sort, gather, ...) gives every operand unknown indexing, as
/// XLA's analysis does; inside a fusion only the operands that reach such an
/// op are unknown. Fails with a readable message for dynamic shapes or an
/// output id out of range.
Expected<HloInstructionIndexing>
computeOutputToInputIndexing(const HloInstruction &instruction,
                             int64_t outputId, mlir::MLIRContext *context);

/// The maps from operand `inputId` of `instruction` to each of its outputs,
/// simplified; outputs it reaches through an op without maps are unknown.
Expected<HloInstructionIndexing>
computeInputToOutputIndexing(const HloInstruction &instruction, int64_t inputId,
                             mlir::MLIRContext *context);

/// The text `tessel indexing maps` prints: the output-to-input maps of
/// every output ("output N:" before each when the result is a tuple), or
/// with `inputId` the input-to-output maps of that operand.
Expected<std::string> describeHloIndexing(const HloInstruction &instruction,
                                          std::optional<int64_t> inputId,
                                          mlir::MLIRContext *context);

/// The array shape of output `outputId` (a tuple element or the shape
/// itself), or nullptr when there is none.
const Shape *getOutputShape(const HloInstruction &instruction,
                            int64_t outputId);

} // namespace tessel

#endif // TESSEL_INDEXING_HLOINDEXING_H
