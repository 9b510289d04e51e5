//===- SplitRaggedBlocks.cpp - -tessel-split-ragged-blocks ----------------===//
//
// When the elements of a loop kernel are not a multiple of its threads per
// block, the last block has threads with nothing to do, and the emitter
// guards each thread's work by a bound on its element (`tessel.loop`'s
// domain). After -tessel-lower-grid-to-cpu every block runs that guard,
// once per thread:
//
//   scf.for %th = 0 to 4096 iter_args(%o = %out) {       // tessel.threads
//     %e = tessel.apply_indexing #map(%th, %bl)           // bl * 4096 + th
//     %in = arith.andi (cmpi sge %e, 0), (cmpi sle %e, 4194299)
//     %r = scf.if %in { <the thread's work on %o> } else { scf.yield %o }
//     scf.yield %r
//   }
//
// and LLVM's loop vectorizer, which would make SIMD lanes of the threads,
// gives up on the conditional stores: a bf16 exp-times-x of 4194300
// elements took 22.6 ms, of 4194304 elements 3.7. This pass versions the
// thread loop on whether the guard holds for every thread of the block:
//
//   %full = <the guard at th = 0> and <the guard at th = 4095>
//   scf.if %full { <the loop without the guard> } else { <the loop> }
//
// which is right when the guard holds on an interval of thread ids: it is
// a conjunction of comparisons of a value defined outside the loop with an
// apply_indexing of the thread id (once, as a dim or symbol) whose result
// is linear in it with a coefficient of 0 or more (not under mod or
// floordiv), so each comparison holds on an interval, and so does their
// conjunction. Only threads that read at most 16 elements and run no loop
// are split (below: a thread reducing a row is better left to LLVM's SLP
// vectorizer). Nothing else qualifies; the thread loops are the ones
// -tessel-lower-grid-to-cpu marks `tessel.threads` (a phase's threads, not
// split into warps and lanes), and the mark is removed.
//
//===----------------------------------------------------------------------===//
#include "AffineCoefficients.h"
#include "ThreadGuard.h"
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace tessel {
namespace {

using llvm::SmallVector;

/// The most elements a guarded thread may read for its loop to be split.
constexpr int kMaxReads = 16;

/// Whether an apply_indexing result rises with the thread id `th` (linear
/// in it with a coefficient of 0 or more), the other operands defined
/// outside `loop`.
bool risesWithThread(ApplyIndexingOp apply, mlir::Value th,
                     mlir::scf::ForOp loop) {
  if (apply.getNumResults() != 1)
    return false;
  const IndexingMap &map = apply.getIndexingMap();
  mlir::AffineExpr result = map.getAffineMap().getResult(0);
  int uses = 0;
  for (auto [i, operand] : llvm::enumerate(apply.getOperands())) {
    if (operand == th) {
      ++uses;
      std::optional<int64_t> c = coefficientOf(result, operandVariable(map, i));
      if (!c || *c < 0)
        return false;
    } else if (!loop.isDefinedOutsideOfLoop(operand)) {
      return false;
    }
  }
  return uses <= 1;
}

/// The ops in `loop` that compute the guard `cond` (in program order), when
/// the set of thread ids for which it holds is an interval (file comment);
/// failure otherwise.
mlir::FailureOr<SmallVector<mlir::Operation *>>
intervalGuard(mlir::Value cond, mlir::scf::ForOp loop) {
  mlir::Value th = loop.getInductionVar();
  llvm::SetVector<mlir::Operation *> slice;
  SmallVector<mlir::Value> pending = {cond};
  while (!pending.empty()) {
    mlir::Value v = pending.pop_back_val();
    if (loop.isDefinedOutsideOfLoop(v))
      continue;
    mlir::Operation *def = v.getDefiningOp();
    if (!def || def->getParentOp() != loop.getOperation())
      return mlir::failure();
    if (llvm::isa<mlir::arith::ConstantOp>(def)) {
      slice.insert(def);
      continue;
    }
    if (auto both = llvm::dyn_cast<mlir::arith::AndIOp>(def)) {
      slice.insert(def);
      pending.push_back(both.getLhs());
      pending.push_back(both.getRhs());
      continue;
    }
    auto cmp = llvm::dyn_cast<mlir::arith::CmpIOp>(def);
    if (!cmp || cmp.getPredicate() == mlir::arith::CmpIPredicate::eq ||
        cmp.getPredicate() == mlir::arith::CmpIPredicate::ne)
      return mlir::failure();
    // One side varies with the thread (rising), the other does not.
    mlir::Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
    bool lhsOutside = loop.isDefinedOutsideOfLoop(lhs);
    bool rhsOutside = loop.isDefinedOutsideOfLoop(rhs);
    if (lhsOutside == rhsOutside)
      return mlir::failure();
    mlir::Value varying = lhsOutside ? rhs : lhs;
    slice.insert(def);
    if (varying == th)
      continue;
    auto apply = varying.getDefiningOp<ApplyIndexingOp>();
    if (!apply || apply->getParentOp() != loop.getOperation() ||
        !risesWithThread(apply, th, loop))
      return mlir::failure();
    slice.insert(apply);
  }
  SmallVector<mlir::Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](mlir::Operation *a, mlir::Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return ordered;
}

/// Versions `loop` (file comment) when its body ends in the loop emitter's
/// bounds check (ThreadGuard.h) on an interval of threads.
void splitRaggedBlock(mlir::scf::ForOp loop) {
  std::optional<int64_t> lower =
      mlir::getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper =
      mlir::getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = mlir::getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step || *step != 1 || *upper - *lower < 2)
    return;
  mlir::Block *body = loop.getBody();
  mlir::scf::IfOp guard = threadGuard(loop);
  if (!guard)
    return;
  // Only threads of a few elements each (the loop emitter's elementwise
  // kernels): a thread that reduces a row unrolled (rows of 32 to 128)
  // was made vectors along its row by LLVM's SLP vectorizer; without the
  // guard the loop vectorizer took the threads instead, building each
  // vector from 8 rows with inserts (an f32 sum of rows of 100 twice as
  // slow). A row loop is jammed with one guard per 4 rows anyway.
  int reads = 0;
  bool loops = false;
  guard.getThenRegion().walk([&](mlir::Operation *op) {
    reads += llvm::isa<mlir::tensor::ExtractOp>(op);
    loops |= llvm::isa<mlir::scf::ForOp>(op);
  });
  if (loops || reads > kMaxReads)
    return;
  mlir::FailureOr<SmallVector<mlir::Operation *>> slice =
      intervalGuard(guard.getCondition(), loop);
  if (mlir::failed(slice))
    return;
  // Everything else in the body is the guard's own or pure (the index
  // values the then branch reads too).
  for (mlir::Operation &op : body->without_terminator())
    if (&op != guard.getOperation() && !mlir::isPure(&op))
      return;

  // The guard at the first and the last thread, before the loop.
  mlir::OpBuilder b(loop);
  mlir::Location loc = loop.getLoc();
  auto guardAt = [&](int64_t thread) {
    mlir::IRMapping map;
    map.map(loop.getInductionVar(),
            b.create<mlir::arith::ConstantIndexOp>(loc, thread).getResult());
    for (mlir::Operation *op : *slice)
      b.clone(*op, map);
    return map.lookup(guard.getCondition());
  };
  mlir::Value first = guardAt(*lower);
  mlir::Value last = guardAt(*upper - 1);
  mlir::Value full = b.create<mlir::arith::AndIOp>(loc, first, last);

  auto version = b.create<mlir::scf::IfOp>(loc, loop.getResultTypes(), full,
                                           /*withElseRegion=*/true);
  // Then: a copy of the loop whose guard is its then branch, inlined.
  b.setInsertionPointToStart(version.thenBlock());
  auto unguarded = llvm::cast<mlir::scf::ForOp>(b.clone(*loop));
  b.create<mlir::scf::YieldOp>(loc, unguarded.getResults());
  mlir::scf::IfOp copy = threadGuard(unguarded);
  mlir::Block *then = copy.thenBlock();
  auto thenYield = llvm::cast<mlir::scf::YieldOp>(then->getTerminator());
  SmallVector<mlir::Value> values(thenYield.getOperands());
  thenYield->erase();
  unguarded.getBody()->getOperations().splice(copy->getIterator(),
                                              then->getOperations());
  copy.replaceAllUsesWith(values);
  copy->erase();
  // Else: the loop as it was.
  b.setInsertionPointToStart(version.elseBlock());
  auto kept = b.create<mlir::scf::YieldOp>(loc, loop.getResults());
  loop->replaceUsesWithIf(version.getResults(), [&](mlir::OpOperand &use) {
    return use.getOwner() != kept.getOperation();
  });
  loop->moveBefore(kept);
}

struct SplitRaggedBlocksPass
    : public mlir::PassWrapper<SplitRaggedBlocksPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SplitRaggedBlocksPass)
  llvm::StringRef getArgument() const final {
    return "tessel-split-ragged-blocks";
  }
  llvm::StringRef getDescription() const final {
    return "Run a thread loop whose threads all pass their bounds guard "
           "without the guard";
  }
  void runOnOperation() override {
    SmallVector<mlir::scf::ForOp> loops;
    getOperation().walk([&](mlir::scf::ForOp loop) {
      if (loop->removeAttr(kThreadLoopAttr))
        loops.push_back(loop);
    });
    for (mlir::scf::ForOp loop : loops)
      splitRaggedBlock(loop);
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createSplitRaggedBlocksPass() {
  return std::make_unique<SplitRaggedBlocksPass>();
}

} // namespace tessel
