//===- HeroAnalysis.h - Which emitter writes a fusion, and why --*- C++ -*-===//
//
// A fusion's *hero* is the instruction that decides how the whole kernel
// walks memory (spec/emitters.md, section 2). The loop emitter is the
// default; a transpose that moves the minor dimension goes to the transpose
// emitter, which stages tiles through shared memory so that both the reads
// and the writes run along the minor dimension.
//
// The seed's transpose example:
//
//   %e = f32[20,160,170] exponential(%p)
//   %t = f32[170,160,20] transpose(%e), dimensions={2,1,0}
//   ROOT %a = f32[170,160,20] abs(%t)
//
//   analyzeFusion(...) -> kind Transpose, hero %t, tiled dims:
//     normalized input [20,160,170], permutation {2,1,0}; input dim 2 (the
//     minor one) becomes output dim 0; dim 0 becomes the output's minor.
//     Tiles of 32x32 over (dim 0, dim 2): 1 x 160 x 6 = 960 blocks of 128
//     threads, each thread 8 rows; shared tile tensor<32x1x33xf32>.
//
// The rules, in order (each rejection is kept for `tessel compile
// --explain`):
//   1. The kernel writes one output (several outputs: loop).
//   2. Exactly one transpose (or copy that changes the layout, XLA's
//      physical transpose) in the fusion is a candidate: its operand and
//      result are not tiled, and on physical dims, after normalization
//      (size-1 dims dropped, dims that stay adjacent merged), it moves the
//      minor dim, and the two swapped dims both have at least 16 elements
//      (XLA's kMinDimensionToTransposeTiled).
//   3. Between the hero and the output there are only elementwise ops of
//      the hero's dims, and nothing else reads the hero or those ops: the
//      output reads the hero at its own index, so the second phase can
//      compute the epilogue from the shared tile.
// A reduce is a column-reduction hero when it has one operand, the dims it
// keeps are the minor physical dims of its operand (at least 16 elements of
// them) and it reduces at least 2 elements each, with rules 1 and 3 as for
// transposes. Its emitter keeps a block's accumulators in a shared tile and
// runs over the rows in the evaluator's order, a row at a time for all of
// the block's threads, so reads are contiguous and the result is bit-exact.
// On the CPU, row reductions (the loop emitter reads each row contiguously
// already, and vectorizes it) stay with the loop emitter. On the GPU a
// reduce is a row-reduction hero when its last reduced dim is its operand's
// minor physical dim with at least 32 elements, it combines them in the
// compiler's partial order (reducesInPartials) or its bits do not depend
// on the order (reducesInAnyOrder), with rules 1 and 3: 16 threads share
// each row, thread j taking partial result j, and the first thread of the
// row folds the 16 from shared memory in order (the evaluator's
// compilerReductionOrder, bit for bit).
// A concatenate is a hero when it is the only one in the fusion, with rules
// 1 and 3: its emitter walks each operand in a loop of its own and writes
// the operand's elements (through the epilogue) to their place in the
// output, instead of choosing an operand per output element.
// The outputs are input slices (XLA's input-slices fusion) when there are
// at least two, all slices of one array of at least one element: its
// emitter walks that array once and writes each element to every slice
// that contains it, instead of reading the array once per slice.
// A dynamic-update-slice is updated in place when it is the kernel's one
// output and its operand is a parameter of the computation that only it
// reads, of the output's shape and layout (XLA's rule for a fusion
// parameter): the kernel writes only the update's elements, at the start
// indices clamped as XLA clamps them, into an output buffer that holds the
// operand already (the plan reuses the operand's buffer when nothing reads
// it afterwards, and copies it there once otherwise).
// A scatter of one operand is a hero when it is the kernel's one output and
// its operand is such a parameter too: its emitter walks the updates,
// computes each one's place from the indices, skips updates whose window
// does not fit, and combines each element into the output buffer (which
// holds the operand already) with the scatter's computation. The updates
// run one after the other in the evaluator's (row-major) order, so that
// colliding updates combine in the same order and the result is bit-exact;
// with unique_indices no two updates meet and a thread takes each element.
// A variadic scatter (n operands, n updates, a combiner of 2n parameters
// returning n values) is a hero the same way when the kernel's outputs are
// its n elements in order and each operand is such a parameter: the kernel
// writes n outputs, combining the n elements at a place in one call.
// A sort (or XLA:CPU's TopK custom-call) is a hero when the kernel's
// outputs are all of its results, in order (the plan gives each sort a
// kernel of its own): a thread per line (the dims but the sorted one) runs
// the evaluator's bottom-up stable merge sort on the line's positions, in
// two scratch buffers of positions (s32; s64 for lines past 2^31 - 1) that the
// plan adds to the kernel (PlannedKernel::scratch), calling the comparator
// (emitted elementwise, inline) exactly where the evaluator calls it, so that
// the result is the same bit for bit even for a comparator that is not a strict
// weak order; then it writes every array at the sorted positions (TopK: the
// first k, and the positions as s32 indices). Otherwise the loop emitter writes
// the fusion.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CODEGEN_HEROANALYSIS_H
#define TESSEL_CODEGEN_HEROANALYSIS_H

#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloModule.h"

#include <string>
#include <vector>

namespace tessel {

/// What the kernel runs on: decides the launch configuration (and, for
/// row reductions, the emitter).
enum class Target { Cpu, Gpu };

enum class EmitterKind {
  Loop,
  Transpose,
  ColumnReduction,
  RowReduction,
  Concatenate,
  InputSlices,
  DynamicUpdateSlice,
  Scatter,
  Sort,
};

const char *emitterKindName(EmitterKind kind);

/// The logical permutation of a transpose hero: result dim o is operand dim
/// permutation[o] (the identity for a copy, which transposes through its
/// layouts).
std::vector<int64_t> logicalPermutation(const HloInstruction &instruction);

/// A transpose (or layout-changing copy) in normalized form: its operand's
/// physical dims (major to minor) with size-1 dims dropped and dims that
/// stay adjacent merged. Output dim o of the normalized result is input dim
/// permutation[o].
struct NormalizedTranspose {
  /// Sizes of the normalized input dims.
  std::vector<int64_t> dims;
  std::vector<int64_t> permutation;
  /// For each normalized input dim, the logical operand dims it merges
  /// (physically consecutive, major to minor).
  std::vector<std::vector<int64_t>> groups;
  /// The normalized input dim that the minor output dim reads.
  int64_t toMinor() const { return permutation.back(); }
  int64_t minor() const { return static_cast<int64_t>(dims.size()) - 1; }
};

/// Normalizes `transpose` (@pre a transpose or a copy).
NormalizedTranspose normalizeTranspose(const HloInstruction &transpose);

/// A reduce whose reduced dims are physically major to the minor kept dims
/// of its operand (a column reduction): `rows` reduced elements per output
/// element, `columns` output elements. Kept dims may also be major to the
/// reduced ones (a batch of column reductions: the segments of a column
/// sum, ModulePlan.cpp); a row holds `rowColumns` contiguous elements.
struct ColumnReduction {
  int64_t rows = 1;
  int64_t columns = 1;
  int64_t rowColumns = 1;
  /// The operand's kept dims, physically major to minor (threads run along
  /// them); the reduced dims in increasing order (the evaluator's order).
  std::vector<int64_t> keptDims;
  std::vector<int64_t> reducedDims;
};

/// Threads per row of the GPU's row reduction: one per partial result of
/// the compiler's order (kReductionPartials, HloEvaluator.h).
inline constexpr int64_t kRowReductionLanes = kReductionPartials;
/// The most shared memory the row reduction's partial results of one row
/// may take (the block has fewer rows when they would take more than this
/// together; a reduce whose one row needs more stays with the loop
/// emitter).
inline constexpr int64_t kRowReductionTileBytes = 16384;

/// A reduce whose last reduced dim is the minor physical dim of its operand
/// (a row reduction), on the GPU: each of `rows` output elements combines
/// `outer` runs (the other reduced dims, in increasing order, row-major) of
/// `minor` contiguous elements.
struct RowReduction {
  int64_t rows = 1;
  int64_t outer = 1;
  int64_t minor = 1;
  /// The operand's reduced dims but the last, in increasing order (the
  /// evaluator's order); the last reduced dim, the operand's minor one.
  std::vector<int64_t> outerDims;
  int64_t minorDim = 0;
  /// Bytes of one element of the result (of its shared partial results).
  int64_t elementBytes = 4;
  /// The compiler's partial order (reducesInPartials), else any order
  /// (reducesInAnyOrder).
  bool inPartials = false;
};

struct FusionAnalysis {
  EmitterKind kind = EmitterKind::Loop;
  /// The hero (the transpose, the reduce, the concatenate; the array the
  /// slices read for input slices), nullptr for the loop emitter.
  const HloInstruction *hero = nullptr;
  NormalizedTranspose transpose;
  ColumnReduction reduction;
  RowReduction rowReduction;
  /// One line: the rule that chose the emitter.
  std::string reason;
  /// Why each other candidate was not taken, one line each.
  std::vector<std::string> rejected;
};

/// Chooses the emitter for the outputs `outputs` (indices into
/// getFusionOutputs; all when empty) of `computation` on `target`.
FusionAnalysis analyzeFusion(const HloComputation &computation,
                             const std::vector<int64_t> &outputs = {},
                             Target target = Target::Cpu);

} // namespace tessel

#endif // TESSEL_CODEGEN_HEROANALYSIS_H
