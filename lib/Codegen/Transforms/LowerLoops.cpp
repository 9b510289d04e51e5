//===- LowerLoops.cpp - -tessel-lower-loops -------------------------------===//
//
// tessel.loop becomes one scf.for per range variable (innermost last),
// threading the iteration arguments, and an scf.if that runs the body only
// where (dims)[symbols] lies in the map's domain:
//
//   scf.for %v = 0 to 4 iter_args(%acc = %out) {
//     %in = <dims in range and constraints hold>
//     %r = scf.if %in {
//       %i, %j = tessel.apply_indexing #map(%th, %bl)[%v]
//       <body>
//       scf.yield %next
//     } else { scf.yield %acc }
//     scf.yield %r
//   }
//
// The check is left out where it always holds: a dim that is a
// gpu.thread_id or gpu.block_id whose upper_bound equals the dim's range,
// and a map without constraints.
//
//===----------------------------------------------------------------------===//
#include "../ElementalEmitter.h"
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace tessel {
namespace {

/// Whether `v` is known to lie in `bounds`: a thread or block id whose
/// upper bound is the range's end, or a constant inside it.
bool isKnownInRange(mlir::Value v, Interval bounds) {
  mlir::Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  std::optional<llvm::APInt> upper;
  if (auto op = llvm::dyn_cast<mlir::gpu::ThreadIdOp>(def))
    if (auto ub = op.getUpperBound())
      upper = *ub;
  if (auto op = llvm::dyn_cast<mlir::gpu::BlockIdOp>(def))
    if (auto ub = op.getUpperBound())
      upper = *ub;
  if (upper)
    return bounds.lower <= 0 &&
           static_cast<int64_t>(upper->getZExtValue()) - 1 <= bounds.upper;
  if (auto c = llvm::dyn_cast<mlir::arith::ConstantIndexOp>(def))
    return bounds.lower <= c.value() && c.value() <= bounds.upper;
  return false;
}

void lowerLoop(LoopOp loop) {
  mlir::OpBuilder b(loop);
  mlir::Location loc = loop.getLoc();
  const IndexingMap map = loop.getIndexingMap();
  bool dimsInRange = true;
  for (auto [i, dim] : llvm::enumerate(loop.getDims()))
    dimsInRange &= isKnownInRange(dim, map.getDimVar(i).bounds);
  bool needsCheck = !dimsInRange || !map.getConstraints().empty();
  if (map.isKnownEmpty()) {
    loop.replaceAllUsesWith(loop.getInits());
    loop.erase();
    return;
  }

  llvm::SmallVector<mlir::Value> symbols;
  std::function<llvm::SmallVector<mlir::Value>(mlir::ValueRange)> nest =
      [&](mlir::ValueRange iters) -> llvm::SmallVector<mlir::Value> {
    size_t level = symbols.size();
    if (level < map.getNumRangeVars()) {
      Interval range = map.getRangeVars()[level].bounds;
      mlir::Value lo = b.create<mlir::arith::ConstantIndexOp>(loc, range.lower);
      mlir::Value hi =
          b.create<mlir::arith::ConstantIndexOp>(loc, range.upper + 1);
      mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
      auto forOp = b.create<mlir::scf::ForOp>(loc, lo, hi, one, iters);
      mlir::OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forOp.getBody());
      symbols.push_back(forOp.getInductionVar());
      auto next = nest(forOp.getRegionIterArgs());
      symbols.pop_back();
      b.create<mlir::scf::YieldOp>(loc, next);
      return llvm::SmallVector<mlir::Value>(forOp.getResults());
    }
    // The body at one point: the map's results, then the cloned body.
    auto emitBody = [&]() -> llvm::SmallVector<mlir::Value> {
      llvm::SmallVector<mlir::Value> indices =
          emitApplyIndexing(b, loc, map, loop.getDims(), symbols);
      mlir::IRMapping mapping;
      mapping.map(loop.getSymbolArgs(), symbols);
      mapping.map(loop.getIndexArgs(), indices);
      mapping.map(loop.getRegionIterArgs(), iters);
      for (mlir::Operation &op : loop.getBody()->without_terminator())
        b.clone(op, mapping);
      auto yield = llvm::cast<YieldOp>(loop.getBody()->getTerminator());
      llvm::SmallVector<mlir::Value> next;
      for (mlir::Value v : yield.getValues())
        next.push_back(mapping.lookupOrDefault(v));
      return next;
    };
    if (!needsCheck)
      return emitBody();
    mlir::Value inDomain =
        emitInDomain(b, loc, map, loop.getDims(), symbols, dimsInRange);
    auto ifOp =
        b.create<mlir::scf::IfOp>(loc, loop.getResultTypes(), inDomain,
                                  /*withElseRegion=*/!loop.getInits().empty());
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto next = emitBody();
    if (!next.empty() || ifOp.thenBlock()->empty() ||
        !ifOp.thenBlock()->back().hasTrait<mlir::OpTrait::IsTerminator>())
      b.create<mlir::scf::YieldOp>(loc, next);
    if (!loop.getInits().empty()) {
      b.setInsertionPointToStart(ifOp.elseBlock());
      b.create<mlir::scf::YieldOp>(loc, iters);
    }
    return llvm::SmallVector<mlir::Value>(ifOp.getResults());
  };
  auto results = nest(loop.getInits());
  loop.replaceAllUsesWith(results);
  loop.erase();
}

struct LowerLoopsPass
    : public mlir::PassWrapper<LowerLoopsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerLoopsPass)
  llvm::StringRef getArgument() const final { return "tessel-lower-loops"; }
  llvm::StringRef getDescription() const final {
    return "Lower tessel.loop to scf.for nests with domain checks";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::scf::SCFDialect, mlir::arith::ArithDialect>();
  }
  void runOnOperation() override {
    // Innermost loops first, so that a cloned body holds no tessel.loop.
    llvm::SmallVector<LoopOp> loops;
    getOperation().walk<mlir::WalkOrder::PostOrder>(
        [&](LoopOp loop) { loops.push_back(loop); });
    for (LoopOp loop : loops)
      lowerLoop(loop);
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createLowerLoopsPass() {
  return std::make_unique<LowerLoopsPass>();
}

} // namespace tessel
