//===- Passes.h - The passes of tessel's code generator ---------*- C++ -*-===//
//
// One pass per file in lib/Codegen/Transforms, each with a lit test in
// test/Codegen named after its flag. In pipeline order (Pipeline.h):
//
//   -tessel-inline-subgraphs   inline pure_calls of functions called once
//   -tessel-fold-nan-constants float arithmetic of constants with a NaN
//                              result folded as the CPU computes it
//   -tessel-simplify-fp-conversions
//                              (optional) keep f32 across bf16/f16 round
//                              trips: XLA's excess precision
//   -tessel-lower-loops        tessel.loop -> scf.for + scf.if on the domain
//   -tessel-flatten-tensors    N-d tensors -> 1-D buffers through the layout
//                              maps; chains of apply_indexing composed
//   -tessel-vectorize-loads-stores
//                              aligned accesses contiguous in the vector
//                              loop -> vector.transfer_read/write
//   -tessel-unroll-loops       unroll small constant-trip scf.for loops
//   -tessel-lower-grid-to-cpu  thread and block ids -> loops over a block
//                              range given as two new arguments
//   -tessel-split-ragged-blocks
//                              (CPU) a thread loop whose every thread
//                              passes its bounds guard runs without it
//   -tessel-vectorize-lane-loops
//                              (CPU) the same in the lane loops (0 to 32)
//                              the grid lowering made, marked tessel.lanes
//   -tessel-jam-reduction-loops
//                              (CPU) a thread loop whose threads reduce
//                              rows: 4 rows read in one loop; a row's
//                              partial sums as one vector first
//   -tessel-lower-grid-to-nvvm (GPU, instead) thread and block ids -> PTX
//                              special registers; entries -> NVVM kernels
//   -tessel-lower-indexing     apply_indexing -> arith
//   -tessel-lower-tensors      tensors -> !llvm.ptr, extract/insert ->
//                              load/store; in an NVVM kernel, shared tiles
//                              -> address space 3, sync_threads -> barrier
//   -tessel-lower-to-llvm      math approximations, bf16 expansion, and
//                              the upstream conversions to the llvm dialect
//                              (with NVVM kernels: libdevice, not libm)
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CODEGEN_PASSES_H
#define TESSEL_CODEGEN_PASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace tessel {

/// On an arith.truncf to bf16/f16: the rounding after an op, which
/// -tessel-simplify-fp-conversions may skip. A convert's rounding, which
/// the HLO asks for, does not carry it.
inline constexpr const char kExcessPrecisionAttr[] = "tessel.excess_precision";

/// The longest constant loop -tessel-unroll-loops unrolls (the loop
/// emitter's vector loop); -tessel-vectorize-loads-stores reads a vector
/// for a loop that carries a scalar only up to this length.
inline constexpr int64_t kMaxUnrolledTrips = 8;

/// On an scf.for that -tessel-lower-grid-to-cpu made: the loop over a
/// warp's lanes, which -tessel-vectorize-lane-loops vectorizes.
inline constexpr const char kLaneLoopAttr[] = "tessel.lanes";

/// On an scf.for that -tessel-lower-grid-to-cpu made: a phase's loop over
/// its threads (not split into warps and lanes), which
/// -tessel-split-ragged-blocks may version.
inline constexpr const char kThreadLoopAttr[] = "tessel.threads";

std::unique_ptr<mlir::Pass> createInlineSubgraphsPass();
std::unique_ptr<mlir::Pass> createFoldNanConstantsPass();
std::unique_ptr<mlir::Pass> createSimplifyFpConversionsPass();
std::unique_ptr<mlir::Pass> createLowerLoopsPass();
std::unique_ptr<mlir::Pass> createFlattenTensorsPass();
std::unique_ptr<mlir::Pass> createMinMaxOnBitsPass();
std::unique_ptr<mlir::Pass> createVectorizePartialsPass();
std::unique_ptr<mlir::Pass> createVectorizeLoadsStoresPass();
std::unique_ptr<mlir::Pass> createVectorizeLaneLoopsPass();
std::unique_ptr<mlir::Pass> createSplitRaggedBlocksPass();
std::unique_ptr<mlir::Pass> createUnrollLoopsPass();
std::unique_ptr<mlir::Pass> createLowerGridToCpuPass();
std::unique_ptr<mlir::Pass> createJamReductionLoopsPass();
std::unique_ptr<mlir::Pass> createColumnExtremesPass();
std::unique_ptr<mlir::Pass> createLowerGridToNvvmPass();
std::unique_ptr<mlir::Pass> createLowerIndexingPass();
std::unique_ptr<mlir::Pass> createLowerTensorsPass();
std::unique_ptr<mlir::Pass> createLowerToLlvmPass();

/// On a kernel's entry function lowered for the GPU
/// (-tessel-lower-grid-to-nvvm): -tessel-lower-tensors puts its shared
/// tiles in shared memory, -tessel-lower-to-llvm makes it an NVVM kernel
/// (`nvvm.kernel`, `nvvm.maxntid`: NVVM accepts them on llvm.func only).
inline constexpr const char kGpuKernelAttr[] = "tessel.gpu_kernel";

/// Registers every pass above with the global registry (for tessel-opt).
void registerCodegenPasses();

} // namespace tessel

#endif // TESSEL_CODEGEN_PASSES_H
