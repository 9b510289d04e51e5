//===- FusionEmitter.h - HLO fusions as MLIR functions ----------*- C++ -*-===//
//
// Emits one fusion (an HLO computation) as MLIR, in the design of XLA's
// emitters (spec/emitters.md):
//
//   1. the computation partitioner cuts the computation into subgraphs;
//   2. each subgraph becomes a function (param tensors..., indices...) ->
//      (elements...) whose body is the elemental code of its instructions;
//   3. the emitter of the fusion's hero writes the entry function: it takes
//      the parameter tensors and the output tensors, reads only thread and
//      block ids, and inserts every output element exactly once.
//
// The loop emitter (the default hero) walks the outputs with one map from
// (thread, block)[vector_index] to the output index. For the seed's GELU,
// bf16[6,512,4096] on a GPU:
//
//   (th_x, bl_x)[vector_index] -> (bl_x floordiv 4096,
//       (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 +
//       vector_index),
//   domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]
//
// 128 threads of 4 elements each, 24576 blocks. On the CPU a block is a task
// for a worker thread and its threads run as a loop; there the thread loop
// is made the contiguous, innermost one (one element per thread, a thread
// per element of the minor dims) so that LLVM vectorizes it:
//
//   (th_x, bl_x) -> (bl_x floordiv 512, bl_x mod 512, th_x),
//   domain: th_x in [0, 4095], bl_x in [0, 3071]
//
// The entry function carries its launch configuration as the attributes
// `tessel.num_threads` and `tessel.num_blocks`.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CODEGEN_FUSIONEMITTER_H
#define TESSEL_CODEGEN_FUSIONEMITTER_H

#include "tessel/Codegen/ComputationPartitioner.h"
#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Hlo/HloModule.h"
#include "tessel/Indexing/IndexingMap.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace tessel {

/// How many threads and blocks run a loop fusion, and how many consecutive
/// elements (vector_index) each thread handles.
struct LaunchConfig {
  int64_t numThreads = 1;
  int64_t numBlocks = 1;
  int64_t vectorSize = 1;
};

/// Elements read per output element by the heaviest reduction in
/// `computation` (a reduce's reduced elements; 64 for a reduce-window or a
/// dot), 1 without one.
int64_t getLoopWorkPerElement(const HloComputation &computation);

/// The loop emitter's launch configuration for an output shape.
/// GPU: 128 threads, up to 4 elements per thread (XLA's choice); when
/// each element reads more than 64 elements (a row reduction), one element
/// per thread and 32 to 128 threads per block, so that there are 256
/// blocks where the elements allow;
/// CPU: one element per thread, the minor dims' elements (at most 16384)
/// per block; when each element reads `workPerElement` > 1 elements (a row
/// reduction) and there are 64K reads in all, at most n/64 (a multiple of
/// 16, at least 16) per block, so that every worker gets blocks.
LaunchConfig getLoopLaunchConfig(const Shape &output, Target target,
                                 int64_t workPerElement = 1);

/// The map (th_x, bl_x)[vector_index] -> output index of the loop emitter:
/// threads walk the output in its layout's order (minor dim fastest).
/// @post every output index is hit by exactly one point of the domain
///       (FusionEmitterTest checks this by enumeration).
IndexingMap getLoopThreadToOutputMap(const Shape &output,
                                     const LaunchConfig &config,
                                     mlir::MLIRContext *context);

/// One array a computation produces: `instruction`'s value, or element
/// `element` of it when it is tuple-shaped (a variadic reduce).
struct FusionOutput {
  const HloInstruction *instruction = nullptr;
  int64_t element = -1;
  const Shape &shape() const {
    return element < 0 ? instruction->shape()
                       : instruction->shape().tupleShapes[element];
  }
};

/// The arrays a computation produces, in order: its ROOT, or the elements
/// of a ROOT tuple, with tuple-shaped values (variadic reduces) expanded.
std::vector<FusionOutput> getFusionOutputs(const HloComputation &computation);

/// The transpose emitter's launch. GPU: 128 threads per block (32 columns
/// by 4 rows, each thread 8 rows of a 32x32 tile), one block per tile of
/// the two swapped dims and per index of the others; the shared tile has
/// the normalized input's rank, 32 along the two swapped dims (33 along the
/// minor one: a column of padding against bank conflicts) and 1 elsewhere.
/// The seed's f32[20,160,170] -> [170,160,20]: 960 blocks,
/// tensor<32x1x33xf32>. CPU: tiles of 32 rows by 128 elements of the
/// input's minor dim (tensor<32x1x129xf32>), 512 threads, each 8 elements
/// per phase as on the GPU: the seed's gets 320 blocks. Elements of one
/// byte (s8, u8, pred, ...) get 64 rows by 256 elements on the CPU
/// (2048 threads, still 8 elements each), so that each output row of a
/// tile is a whole 64-byte line: s8[100,300] -> [300,100] is 2 by 2 tiles
/// of tensor<64x257xs8>. The tile depends on `hero`'s element type only.
struct TransposeLaunch {
  LaunchConfig config;
  std::vector<int64_t> tileShape;
};
TransposeLaunch getTransposeLaunch(const HloInstruction &hero,
                                   const NormalizedTranspose &transpose,
                                   Target target = Target::Cpu);

/// Whether the transpose emitter's kernel transposes its tile in registers
/// between the phases, into a second tile that phase 2 reads along its
/// rows (the CPU, elements of whole bytes; docs/codegen.md, "Heroes").
bool transposesInRegisters(const HloInstruction &hero, Target target);

/// Lanes per warp of the transpose kernel's thread loops on the CPU (the
/// GPU's warps are 32): 64 for elements of one byte that transpose in
/// registers, so that a lane loop's loads and stores are a zmm each, else
/// 32 (`tessel.cpu_lanes` on the entry, -tessel-lower-grid-to-cpu).
int64_t transposeCpuLanes(const HloInstruction &hero, Target target);

/// The side of the squares the CPU's transpose emitter transposes in
/// registers, for CPUs whose shuffles run `squareBits` (256 or 512) wide at
/// full rate: 16 for elements of 2 bytes (a ymm per row of bf16), and for
/// those of 1 and 4 bytes 16 and 8 at 256 bits (an xmm per row of s8, a
/// ymm per row of f32), 32 and 16 at 512 (a ymm of s8, a zmm of f32); 8
/// for 8 bytes (a zmm per row of f64). Tiles are multiples of it on both
/// sides. Zen 5 (AVX-512 whole), one thread, 64 MiB, CPU time: f32 negate
/// -> transpose -> abs 5.5 -> 5.0-5.1 ms with 16x16 squares; s8 7.6 ->
/// 6.9 ms with 32x32 (64x64, a zmm per row: 7.4); bf16 with 32x32 no
/// faster (5.5-5.6 against 5.5). On Zen 4, which runs 512-bit shuffles as
/// two 256-bit halves, f32 16x16 squares were 5-10% slower than 8x8 (older
/// 32x128 tiles), so squareBits is 256 there (CpuExecutable.cpp).
/// Without AVX-512 the 16 ymm registers cannot hold 16x16 squares of f32.
int64_t transposeSquareLanes(const HloInstruction &hero, Target target,
                             unsigned squareBits = 256);

/// How many of those squares lie side by side in one vector row: 2 for
/// elements of 2 bytes where shuffles run 512 bits wide at full rate (a zmm
/// holds a row of two 16x16 squares of bf16; four rounds of shuffles on 16
/// zmm rows instead of two squares' on 16 ymm rows each), else 1. Zen 5,
/// one thread, CPU time, 64 MiB, bf16 negate -> transpose -> abs: 5.72-5.79
/// -> 5.57-5.62 ms, five alternations; s8 with two 32x32 squares of bytes
/// or four 16x16 no faster (5.7-5.9 ms either way).
int64_t transposeSquaresAcross(const HloInstruction &hero, Target target,
                               unsigned squareBits);

/// The transpose emitter's first phase: (th_x, bl_x)[i] -> (the operand
/// index of `hero`..., the shared tile index...). Threads run along the
/// input's minor dim.
IndexingMap getTransposeReadMap(const HloInstruction &hero,
                                const NormalizedTranspose &transpose,
                                mlir::MLIRContext *context,
                                Target target = Target::Cpu);
/// The second phase: (th_x, bl_x)[i] -> (the index of `hero`'s result...,
/// the shared tile index...). Threads run along the output's minor dim.
/// @post with the read map, every element is read and written exactly once
///       and the tile index of a read equals that of the matching write
///       (FusionEmitterTest checks this by enumeration).
IndexingMap getTransposeWriteMap(const HloInstruction &hero,
                                 const NormalizedTranspose &transpose,
                                 mlir::MLIRContext *context,
                                 Target target = Target::Cpu);

/// The rows a step of the column reduction's row loop reads before it adds
/// them in order: the largest of 8, 4, 2 that divides the row count, or 1.
int64_t columnReductionRowsPerStep(const ColumnReduction &reduction);

/// The column-reduction emitter's launch: a thread per output element (up
/// to 256 per block, consecutive in memory), the block's accumulators in a
/// shared tile of one element per thread. On the CPU a batch of column
/// reductions (ColumnReduction::rowColumns < columns) gives a block a whole
/// row of up to 4096 elements instead, so that it reads its rows in one
/// contiguous sweep.
LaunchConfig getColumnReductionLaunch(const ColumnReduction &reduction,
                                      Target target = Target::Cpu);
/// (th_x, bl_x, row) -> (the reduce operand's index..., th_x): the element
/// thread th_x of block bl_x adds in at `row` (rows in the evaluator's
/// order).
IndexingMap getColumnReductionReadMap(const HloInstruction &reduce,
                                      const ColumnReduction &reduction,
                                      mlir::MLIRContext *context,
                                      Target target = Target::Cpu);
/// (th_x, bl_x) -> (the reduce's output index..., th_x).
IndexingMap getColumnReductionWriteMap(const HloInstruction &reduce,
                                       const ColumnReduction &reduction,
                                       mlir::MLIRContext *context,
                                       Target target = Target::Cpu);

/// The GPU's row-reduction emitter's launch: kRowReductionLanes (16)
/// threads per row (output element), up to 16 rows per block (256
/// threads; fewer rows when their partial results would take more than
/// kRowReductionTileBytes of shared memory, or the reduce has fewer rows).
/// f32[4096,4096] summed over dim 1: 256 blocks of 256 threads, a shared
/// tile tensor<16x1x16xf32> (row, outer run, lane).
struct RowReductionLaunch {
  LaunchConfig config;
  int64_t rowsPerBlock = 1;
  std::vector<int64_t> tileShape;
};
RowReductionLaunch getRowReductionLaunch(const RowReduction &reduction);
/// Phase 1: (th_x, bl_x, outer, chunk) -> (the reduce operand's index...,
/// the tile index: th_x floordiv 16, outer, th_x mod 16). Thread th_x of a
/// row (lane th_x mod 16) combines the operand elements of its partial
/// result, chunk after chunk: minor index chunk * 16 + lane.
IndexingMap getRowReductionReadMap(const HloInstruction &reduce,
                                   const RowReduction &reduction,
                                   mlir::MLIRContext *context);
/// Phase 2, the elements past the last whole chunk: (th_x, bl_x, outer, t)
/// -> the operand's index (minor index chunks * 16 + t), read by the row's
/// first thread (lane 0) only. @pre reduction.minor % 16 != 0.
IndexingMap getRowReductionTailMap(const HloInstruction &reduce,
                                   const RowReduction &reduction,
                                   mlir::MLIRContext *context);
/// Phase 2: (th_x, bl_x) -> (the reduce's output index..., the tile row
/// th_x floordiv 16), lane 0 of each row only: it folds the row's partial
/// results (tile[row, outer, 0..15] for each outer run, then that run's
/// tail), computes the epilogue and writes the output element.
/// @post with the read and tail maps, every operand element is read once,
///       each partial result takes the elements of the compiler's order
///       and the output is written by the row that read its elements
///       (ReductionEmitterTest checks this by enumeration).
IndexingMap getRowReductionWriteMap(const HloInstruction &reduce,
                                    const RowReduction &reduction,
                                    mlir::MLIRContext *context);

/// The concatenate emitter's launch: the loop emitter's for the largest
/// operand (one element per thread); every operand is walked by the same
/// threads and blocks, each in a loop of its own.
LaunchConfig getConcatenateLaunch(const HloInstruction &concatenate,
                                  Target target);
/// The index space operand `operand` of `concatenate` is walked in: its dims
/// in the output's layout order, so that writes run along the output's
/// minor dim.
Shape getConcatenateOperandWalk(const HloInstruction &concatenate,
                                const HloInstruction &operand);
/// (th_x, bl_x) -> operand `operand`'s index (its element goes to the same
/// index in the output, plus the operands before it along the dim).
/// @post with the launch of getConcatenateLaunch, every output element is
///       written by exactly one operand's loop, once (FusionEmitterTest).
IndexingMap getConcatenateOperandMap(const HloInstruction &concatenate,
                                     int64_t operand,
                                     const LaunchConfig &config,
                                     mlir::MLIRContext *context);

/// The sort emitter's launch (HeroAnalysis.h): on the CPU a block of one
/// thread per line, on the GPU a thread per line in blocks of up to 64.
LaunchConfig getSortLaunch(const HloInstruction &sort, Target target);
/// The map (th_x, bl_x) -> the index of the line a thread sorts: the
/// operand's index with 0 along the sorted dim.
IndexingMap getSortLineMap(const HloInstruction &sort,
                           const LaunchConfig &config,
                           mlir::MLIRContext *context);

/// The input-slices emitter's launch: the loop emitter's for the sliced
/// array `input`, one element per thread.
LaunchConfig getInputSlicesLaunch(const HloInstruction &input, Target target);
/// (th_x, bl_x) -> the index of `input` (the sliced array) that the thread
/// reads; it writes the element to every slice whose start, limit and
/// stride contain the index, at (index - start) / stride.
/// @post with the launch of getInputSlicesLaunch, every element of `input`
///       is read once, and so every slice element written once
///       (InputSlicesEmitterTest checks this by enumeration).
IndexingMap getInputSlicesMap(const HloInstruction &input,
                              const LaunchConfig &config,
                              mlir::MLIRContext *context);

/// The in-place dynamic-update-slice emitter's launch: the loop emitter's
/// for the update walked in the output's layout order, one element per
/// thread.
LaunchConfig getDynamicUpdateSliceLaunch(const HloInstruction &dus,
                                         Target target);
/// (th_x, bl_x) -> the index of the update that the thread writes, to the
/// output at the clamped start indices plus the index.
/// @post with the launch of getDynamicUpdateSliceLaunch, every element of
///       the update is written once, and nothing else
///       (DynamicUpdateSliceEmitterTest checks this by enumeration).
IndexingMap getDynamicUpdateSliceMap(const HloInstruction &dus,
                                     const LaunchConfig &config,
                                     mlir::MLIRContext *context);

/// The scatter emitter's launch: one thread of one block that walks every
/// update in the evaluator's order (colliding updates combine in that
/// order); with `uniqueIndices`, the loop emitter's launch for the updates
/// (in their layout's order), one element per thread.
LaunchConfig getScatterLaunch(const HloInstruction &scatter, bool uniqueIndices,
                              Target target);
/// (th_x, bl_x)[s...] -> the update index: row-major over range variables
/// (one per update dim, the first outermost) for the ordered walk, the
/// thread's element for `uniqueIndices`.
/// @post with the launch of getScatterLaunch, every update element is
///       visited once, in row-major order when not `uniqueIndices`
///       (ScatterEmitterTest checks this by enumeration).
IndexingMap getScatterUpdateMap(const HloInstruction &scatter,
                                bool uniqueIndices, const LaunchConfig &config,
                                mlir::MLIRContext *context);

/// How a fusion is partitioned for its emitter: a hero and its operand are
/// function roots (the entry reads and writes them through shared memory).
PartitionOptions getPartitionOptions(const FusionAnalysis &analysis);

/// Emits `computation` with the emitter analyzeFusion chooses for the
/// outputs `outputs` (see emitLoopFusion); `squareBits` as for
/// transposeSquareLanes.
mlir::FailureOr<mlir::func::FuncOp>
emitFusion(mlir::ModuleOp module, const HloComputation &computation,
           llvm::StringRef name, Target target,
           llvm::ArrayRef<int64_t> outputs = {}, unsigned squareBits = 256);

/// Emits `computation` as a loop fusion: its subgraph functions and the
/// entry function `name`, into `module`. The entry writes the outputs
/// listed in `outputs` (indices into getFusionOutputs; all when empty),
/// which must have the same dims. On failure, an error diagnostic at the
/// instruction's line and column names what the compiler cannot handle
/// (capture it with an ErrorCapture, Dialect/ErrorDiagnostics.h).
mlir::FailureOr<mlir::func::FuncOp>
emitLoopFusion(mlir::ModuleOp module, const HloComputation &computation,
               llvm::StringRef name, Target target,
               llvm::ArrayRef<int64_t> outputs = {});

} // namespace tessel

#endif // TESSEL_CODEGEN_FUSIONEMITTER_H
