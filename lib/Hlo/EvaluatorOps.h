//===- EvaluatorOps.h - Elementwise kernels of the evaluator ----*- C++ -*-===//
//
// Private to lib/Hlo. Whole-array elementwise ops with XLA's semantics (see
// HloEvaluator.h), and the element-level binary op the reduce fast path
// uses.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_HLO_EVALUATOROPS_H
#define TESSEL_LIB_HLO_EVALUATOROPS_H

#include "tessel/Hlo/HloInstruction.h"
#include "tessel/Support/Expected.h"

#include <functional>
#include <optional>

namespace tessel::eval {

/// How an element type computes.
enum class Kind { Pred, Signed, Unsigned, Narrow, F64, Complex, Other };
Kind kindOf(PrimitiveType type);

/// A key that orders the floats of x in XLA's total order (-NaN < -inf <
/// ... < -0 < +0 < ... < inf < NaN). @pre x holds floats.
int64_t totalOrderKeyAt(const Literal &x, int64_t i);

/// Whether `op` on elements of `type` is defined here (binaryAt may be
/// used).
bool supportsBinary(HloOpcode op, PrimitiveType type);

/// out[o] = op(a[i], b[j]) for elements of one type (the type of `out`).
/// @pre supportsBinary(op, out.elementType())
void binaryAt(HloOpcode op, const Literal &a, int64_t i, const Literal &b,
              int64_t j, Literal &out, int64_t o);

/// The elementwise ops on whole arrays; `result` has the shape to produce.
/// A rank-0 operand of select (pred) and clamp (bounds) is broadcast.
Expected<Literal> unary(HloOpcode op, const Literal &x, const Shape &result);
Expected<Literal> binary(HloOpcode op, const Literal &x, const Literal &y,
                         const Shape &result);
Expected<Literal> compare(const HloAttributes &attributes, const Literal &x,
                          const Literal &y, const Shape &result);
Expected<Literal> convert(const Literal &x, const Shape &result);
Expected<Literal> bitcastConvert(const Literal &x, const Shape &result);
Expected<Literal> select(const Literal &p, const Literal &t, const Literal &f,
                         const Shape &result);
Expected<Literal> clamp(const Literal &lo, const Literal &x, const Literal &hi,
                        const Shape &result);

/// c64/c128 (EvaluatorComplex.cpp): binary ops add, subtract, multiply,
/// divide, power; unary ops negate, abs (to the part type), sign and the
/// transcendental functions; real, imag and complex.
bool supportsComplexBinary(HloOpcode op);
void complexBinaryAt(HloOpcode op, const Literal &a, int64_t i,
                     const Literal &b, int64_t j, Literal &out, int64_t o);
Expected<Literal> complexUnary(HloOpcode op, const Literal &x,
                               const Shape &result);
Expected<Literal> realOrImag(HloOpcode op, const Literal &x,
                             const Shape &result);
Expected<Literal> makeComplex(const Literal &re, const Literal &im,
                              const Shape &result);

/// reduce-precision with `exponent_bits=` and `mantissa_bits=`, as XLA
/// computes it on the bits (round to nearest even, then overflow to
/// infinity and underflow to zero of the narrow format).
Expected<Literal> reducePrecision(const HloInstruction &inst, const Literal &x,
                                  const Shape &result);

/// Where each dim_labels letter sits in one operand's dims: the two special
/// dims and the spatial ones in order.
struct ConvolutionLabels {
  int64_t first = -1;  // b (lhs, output) or i (rhs)
  int64_t second = -1; // f (lhs, output) or o (rhs)
  std::vector<int64_t> spatial;
};

/// convolution's attributes, checked against the lhs and rhs shapes as
/// XLA's shape inference does, and the result dims they give.
struct ConvolutionDims {
  ConvolutionLabels lhs, rhs, out;
  std::vector<WindowDim> window;
  int64_t featureGroups = 1, batchGroups = 1;
  std::vector<int64_t> outDims;
};
Expected<ConvolutionDims> convolutionDims(const HloInstruction &inst,
                                          const Shape &lhs, const Shape &rhs);

/// convolution with dim_labels, window (strides, padding, lhs and rhs
/// dilation, reversal), feature_group_count and batch_group_count.
Expected<Literal> convolution(const HloInstruction &inst, const Literal &lhs,
                              const Literal &rhs);

/// rng-bit-generator with `algorithm=` rng_three_fry, rng_philox or
/// rng_default (Philox, as XLA:CPU), bit-exact with XLA's expansion.
Expected<Literal> rngBitGenerator(const HloInstruction &inst,
                                  const Literal &state);

/// gather's dimension numbers, checked against the operand and indices
/// shapes as XLA's shape inference does (dims in range and distinct,
/// offset_dims and collapsed_slice_dims sorted, slice sizes that fit, ...),
/// and the result dims they give.
struct GatherDims {
  std::vector<int64_t> offsetDims, startIndexMap, operandBatching,
      indicesBatching, sliceSizes;
  int64_t indexVectorDim = 0;
  /// The operand dims the offset dims walk, in order.
  std::vector<int64_t> windowDims;
  /// The result dims that are not offset dims (the batch dims).
  std::vector<int64_t> batchPositions;
  std::vector<int64_t> outDims;
};
Expected<GatherDims> gatherDims(const HloInstruction &inst,
                                const Shape &operand, const Shape &indices);

/// scatter's dimension numbers, checked against its operands' shapes (n
/// operands, the indices, n updates) as XLA's shape inference does.
struct ScatterDims {
  std::vector<int64_t> updateWindowDims, toOperand, inputBatching,
      indicesBatching;
  int64_t indexVectorDim = 0;
  /// The operand dims the update window dims walk, in order.
  std::vector<int64_t> windowDims;
  /// The update dims that are not window dims (the scatter dims).
  std::vector<int64_t> scatterPositions;
  /// The window's size in every operand dim (1 for inserted and batching).
  std::vector<int64_t> windowSizes;
};
Expected<ScatterDims> scatterDims(const HloInstruction &inst,
                                  const std::vector<const Shape *> &operands);

/// gather with XLA's dimension numbers (read from the verbatim attributes),
/// start indices clamped so each slice fits the operand.
Expected<Literal> gather(const HloInstruction &inst, const Literal &operand,
                         const Literal &indices);

/// Combines update element `u` of the updates (operands[firstUpdate..]) into
/// element `o` of every result, through scatter's to_apply.
using ScatterCombiner =
    std::function<Status(std::vector<Literal> &results, int64_t o,
                         const std::vector<const Literal *> &operands,
                         size_t firstUpdate, int64_t u)>;

/// scatter (variadic: n operands, the indices, n updates); updates whose
/// window does not fit the operand are skipped, the others are combined in
/// row-major order of the updates.
Expected<Literal> scatter(const HloInstruction &inst,
                          const std::vector<const Literal *> &operands,
                          const ScatterCombiner &combine);

/// Whether the element at linear index i of the operands goes before the
/// one at j (sort's comparator applied to lhs_0, rhs_0, lhs_1, rhs_1, ...).
using SortComparator = std::function<Expected<bool>(
    const std::vector<const Literal *> &operands, int64_t i, int64_t j)>;

/// sort along `dimensions={d}`, stable (which also serves is_stable=false).
Expected<Literal> sort(const HloInstruction &inst,
                       const std::vector<const Literal *> &operands,
                       const SortComparator &less);

/// The TopK custom-call: the first k (the result's last dim) of each line
/// along the last dim, sorted by the comparator on (x, iota), and their
/// positions.
Expected<Literal> topK(const HloInstruction &inst, const Literal &operand,
                       const SortComparator &less);

/// The topk op (`k=`, `largest=`): the k largest (or smallest) of each line
/// along the last dim in XLA's total order, ties by position, and their
/// positions.
Expected<Literal> topKOp(const HloInstruction &inst, const Literal &operand);

/// XLA:CPU's tree reduction rewrite of a reduce over `reduced` dims of an
/// operand of `dims` (EvaluatorXlaCpu.cpp): the window (size and low
/// padding per dim, stride = size) and the dims of its result, or nullopt
/// when every reduced dim is at most kXlaCpuReduceWindow long.
struct TreeWindow {
  std::vector<int64_t> size, low, outDims;
};
std::optional<TreeWindow> xlaCpuTreeWindow(const std::vector<int64_t> &dims,
                                           const std::vector<int64_t> &reduced);

/// Whether XLA:CPU turns `inst` into a multiply by the reciprocal of its
/// divisor (rounded to the type): a float divide of a non-constant by a
/// constant or a broadcast constant (XLA's algebraic simplifier).
bool dividesByConstant(const HloInstruction &inst);
/// 1 / divisor, elementwise, rounded to its type.
Expected<Literal> reciprocal(const Literal &divisor);

/// Which operand of an add or subtract of f32 or f64 XLA:CPU contracts
/// into a fused multiply-add: a multiply (or divide by a constant) whose
/// only user is `inst` (the first operand's when both are), or nullopt.
std::optional<int> contractedOperand(const HloInstruction &inst);

/// op(a * b, c) (k = 0) or op(c, a * b) (k = 1) for op add or subtract,
/// with one rounding, in the type of `shape` (f32 or f64).
Expected<Literal> fusedMultiplyAdd(HloOpcode op, int k, const Literal &a,
                                   const Literal &b, const Literal &c,
                                   const Shape &shape);

/// How XLA:CPU computes an f32 dot that it compiles itself (not one it
/// hands to YNNPACK):
enum class XlaCpuDot {
  /// one accumulator per output, fused multiply-adds over the contracting
  /// elements in row-major order (small dots, vector times matrix);
  Fma,
  /// a dot of two vectors (one contracting dim, every other dim 1): the
  /// products rounded, then summed in XLA's tree reduction order
  /// (xlaCpuTreeSum);
  MultiplyReduce,
  /// a row-major matrix times a vector (one contracting dim, the lhs's
  /// last; every rhs dim but it 1): xlaCpuRowGemvDot per output.
  RowGemv,
};
XlaCpuDot xlaCpuDotKind(const DotDimensionNumbers &dn,
                        const std::vector<int64_t> &lhsDims,
                        const std::vector<int64_t> &rhsDims);

/// The sum of `values` in XLA:CPU's tree reduction order, from +0.
float xlaCpuTreeSum(std::vector<float> values);

/// XLA:CPU's matrix-vector product of one row: 8 lanes of fused
/// multiply-adds over the whole groups of 8 (lane p % 8), the lanes summed
/// by halves (l + 4, l + 2, l + 1), plus the tail's fused multiply-adds
/// from 0.
float xlaCpuRowGemvDot(const std::vector<float> &a,
                       const std::vector<float> &x);

} // namespace tessel::eval

#endif // TESSEL_LIB_HLO_EVALUATOROPS_H
