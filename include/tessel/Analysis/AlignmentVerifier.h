//===- AlignmentVerifier.h - Mosaic's alignment rule, explained -*- C++ -*-===//
//
// A vector access into a tiled memref must start at a multiple of the tile in
// every tiled dim (spec/alignment.md): for each vector.load/store,
// vector.transfer_read/write and tpu.load/store whose memref is tiled, and for
// each dim with a tile extent T > 1,
//
//   - a static index (one the divisibility analysis knows exactly) is exempt;
//   - the second-minor dim of 32-bit elements is exempt when the access
//     touches one row there;
//   - any other index must be proven a multiple of T.
//
// A memref is tiled by its #tpu.tiled layout, or, without one, when it lives
// in a #tpu.memory_space (Mosaic's default tiling: (8 * 32/bits, 128) for
// rank >= 2, (1024 * 32/bits) for rank 1). For
//
//   %v = vector.load %m[%a, %b] : memref<4x256xf32, #tpu.memory_space<vmem>>,
//                                 vector<1x32xf32>
//
// dim 0 touches one row (exempt) and dim 1 fails with Mosaic's message,
//
//   cannot statically prove that index in dimension 1 is a multiple of 128
//
// and tessel's notes: where 128 comes from, which term of the index breaks
// the proof and what is known of it, unknown or proven not (with a value),
// and the smallest fix (`tpu.assume_multiple %b, 128`, or padding).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_ANALYSIS_ALIGNMENTVERIFIER_H
#define TESSEL_ANALYSIS_ALIGNMENTVERIFIER_H

#include "tessel/Support/Divisibility.h"

#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tessel {

/// One index that is not proven aligned.
struct AlignmentFailure {
  mlir::Operation *op;
  unsigned dim;
  int64_t multiple;
  /// ProvenNot or Unknown.
  Verdict verdict;
  /// Mosaic's message: "cannot statically prove that index in dimension D is
  /// a multiple of T".
  std::string message;
  /// Where the multiple comes from (the tile, the element type).
  std::string source;
  /// The term of the index that breaks the proof, and what is known of it.
  std::string term;
  /// Unknown or proven not, with a value that is not a multiple.
  std::string status;
  /// The smallest change that makes the proof go through.
  std::string fix;
};

/// What the verifier found under an op.
struct AlignmentReport {
  /// Accesses into tiled memrefs, and tiled dims with a dynamic index.
  unsigned accessesChecked = 0;
  unsigned indicesChecked = 0;
  std::vector<AlignmentFailure> failures;
};

/// How the messages name a value; by default as the printer would (%arg2,
/// %0). `tessel align` passes the names of the source file.
using ValueNamer = std::function<std::string(mlir::Value)>;

/// Checks every access under `root`. @pre `solver` ran the divisibility
/// analysis (loadDivisibilityAnalysis) on `root`.
AlignmentReport verifyAlignment(mlir::Operation *root,
                                const mlir::DataFlowSolver &solver,
                                const ValueNamer &name = {});

/// Runs the analysis and the check on `root`.
AlignmentReport verifyAlignment(mlir::Operation *root,
                                const ValueNamer &name = {});

/// Emits a failure as an error at its op with four notes.
void emitAlignmentError(const AlignmentFailure &failure);

/// --tessel-verify-alignment: every failure as an error; the pass fails when
/// there is one.
std::unique_ptr<mlir::Pass> createVerifyAlignmentPass();
void registerVerifyAlignmentPass();

/// --tessel-check-assumptions: a run-time check (cf.assert naming the value
/// and the multiple) before every tpu.assume_multiple, for debugging false
/// promises.
std::unique_ptr<mlir::Pass> createCheckAssumptionsPass();
void registerCheckAssumptionsPass();

} // namespace tessel

#endif // TESSEL_ANALYSIS_ALIGNMENTVERIFIER_H
