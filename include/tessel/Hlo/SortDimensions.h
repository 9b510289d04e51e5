//===- SortDimensions.h - A sort's or TopK's attributes ---------*- C++ -*-===//
//
// The attributes of a sort, or of XLA:CPU's TopK custom-call (both kept
// verbatim by the parser), read once, for the code generator. For jax's
// `jnp.argsort(x, axis=0)` on f32[7,7]:
//
//   sort(x, iota), dimensions={0}, is_stable=true, to_apply=%less
//
//   getSortDimensions(...) -> dim 0, length 7, operands 2, comparator
//     %less (of 4 parameters: lhs_0, rhs_0, lhs_1, rhs_1), keep 7
//
// A TopK custom-call sorts (x, iota of s32 along the last dim) along the
// last dim and keeps the first k of each line: `topK` is set, `operands`
// is 2 (the second is the iota, no operand of the instruction) and `keep`
// is k. A comparator of two parameters sees the first operand only (the
// evaluator's rule, HloEvaluator.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_SORTDIMENSIONS_H
#define TESSEL_HLO_SORTDIMENSIONS_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"

#include <vector>

namespace tessel {

struct SortDimensions {
  /// The dim every line runs along, and its length.
  int64_t dim = 0;
  int64_t length = 0;
  /// The arrays sorted together: the instruction's operands, or for TopK
  /// its operand and an iota of s32.
  int64_t operands = 1;
  /// The dims of every array sorted (the operands').
  std::vector<int64_t> dims;
  /// How many elements of each sorted line the results keep: the length,
  /// or TopK's k.
  int64_t keep = 0;
  bool topK = false;
  /// The instruction's one called computation when it has one (a copy
  /// made outside the module that defines it), else the one to_apply (or
  /// TopK's called_computations) names in the instruction's module.
  /// Null for the `topk` op, which compares its operand itself: by the
  /// total order of floats (-NaN < -inf < ... < -0 < +0 < ... < NaN) or
  /// the integers' values, the larger first when `largest`.
  const HloComputation *comparator = nullptr;
  bool largest = true;

  /// The type of a position in a line: s32 when every position fits,
  /// else s64 (the sort emitter's scratch buffers).
  PrimitiveType positionType() const {
    return length <= (int64_t(1) << 31) - 1 ? PrimitiveType::S32
                                            : PrimitiveType::S64;
  }
};

/// Whether `instruction` is a sort, a TopK custom-call or a topk op.
bool isSortLike(const HloInstruction &instruction);

/// The attributes of a sort or a TopK custom-call; an error names the
/// attribute that is missing or does not fit the shapes.
Expected<SortDimensions> getSortDimensions(const HloInstruction &sort);

} // namespace tessel

#endif // TESSEL_HLO_SORTDIMENSIONS_H
