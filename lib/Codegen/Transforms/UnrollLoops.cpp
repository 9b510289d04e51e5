//===- UnrollLoops.cpp - -tessel-unroll-loops -----------------------------===//
//
// Fully unrolls innermost scf.for loops with a constant trip count of at
// most 8 (the loop emitter's vector_index loop): the loop disappears and
// each element is computed in straight-line code, which LLVM schedules and
// vectorizes (SLP) across the copies.
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace tessel {
namespace {

struct UnrollLoopsPass
    : public mlir::PassWrapper<UnrollLoopsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(UnrollLoopsPass)
  llvm::StringRef getArgument() const final { return "tessel-unroll-loops"; }
  llvm::StringRef getDescription() const final {
    return "Fully unroll innermost scf.for loops of at most 8 iterations";
  }
  void runOnOperation() override {
    llvm::SmallVector<mlir::scf::ForOp> loops;
    getOperation().walk([&](mlir::scf::ForOp loop) {
      bool innermost = true;
      loop.getBody()->walk([&](mlir::scf::ForOp) { innermost = false; });
      std::optional<int64_t> trips = mlir::constantTripCount(
          loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
      if (innermost && trips && *trips <= kMaxUnrolledTrips)
        loops.push_back(loop);
    });
    // Unrolling by the trip count leaves one iteration, which
    // canonicalization folds away.
    for (mlir::scf::ForOp loop : loops) {
      std::optional<int64_t> trips = mlir::constantTripCount(
          loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
      if (*trips > 1)
        (void)mlir::loopUnrollByFactor(loop, *trips);
    }
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createUnrollLoopsPass() {
  return std::make_unique<UnrollLoopsPass>();
}

} // namespace tessel
