//===- ThreadGuard.h - The loop emitter's bounds check on the CPU -*- C++
//-*-===//
//
// Private to lib/Codegen: after -tessel-lower-grid-to-cpu, a thread loop of
// the loop emitter whose elements are not a multiple of its threads reads
//
//   scf.for %th = ... iter_args(%o = %out) {
//     <ops computing the bound>
//     %r = scf.if %in_bounds { <the thread's work on %o> } else { yield %o }
//     scf.yield %r
//   }
//
// -tessel-jam-reduction-loops and -tessel-split-ragged-blocks both look for
// it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_TRANSFORMS_THREADGUARD_H
#define TESSEL_LIB_CODEGEN_TRANSFORMS_THREADGUARD_H

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessel {

/// The bounds check of `loop`'s body (file comment): the scf.if just before
/// its yield, whose results the loop yields and whose else branch yields
/// the loop's iteration arguments; null otherwise. What the ops before it
/// may do is for the caller to check.
mlir::scf::IfOp threadGuard(mlir::scf::ForOp loop);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_TRANSFORMS_THREADGUARD_H
