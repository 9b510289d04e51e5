//===- ThreadGuard.cpp - The loop emitter's bounds check on the CPU -------===//
#include "ThreadGuard.h"

namespace tessel {

mlir::scf::IfOp threadGuard(mlir::scf::ForOp loop) {
  auto yield = llvm::cast<mlir::scf::YieldOp>(loop.getBody()->getTerminator());
  auto guard = llvm::dyn_cast_or_null<mlir::scf::IfOp>(yield->getPrevNode());
  if (!guard || guard.getElseRegion().empty() ||
      !llvm::equal(yield.getOperands(), guard.getResults()) ||
      !llvm::equal(guard.elseYield().getOperands(), loop.getRegionIterArgs()))
    return nullptr;
  return guard;
}

} // namespace tessel
