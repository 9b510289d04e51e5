//===- LowerGridToCpu.cpp - -tessel-lower-grid-to-cpu ---------------------===//
//
// A kernel's entry function (one with `tessel.num_threads`) reads
// gpu.thread_id and gpu.block_id. On the CPU a worker runs a range of
// blocks and, in each, the block's threads one after the other:
//
//   func.func @k(%p, %out, %block_begin: index, %block_end: index) {
//     %r = scf.for %bl = %block_begin to %block_end iter_args(%o = %out) {
//       %s = scf.for %th = 0 to num_threads iter_args(%o2 = %o) {
//         <the body, with %th and %bl for the ids and %o2 for %out>
//       }
//     }
//     return %r
//   }
//
// The thread loop is innermost, so consecutive threads (consecutive output
// elements, for the loop emitter on the CPU) are consecutive iterations:
// LLVM's loop vectorizer turns them into SIMD lanes.
//
// A `tessel.sync_threads` splits the body into phases: every thread runs
// the first phase, then every thread the second, so the block gets one
// thread loop per phase. A shared tile (`tessel.allocate_shared`) stays
// outside the loops: one scratch buffer per worker, reused by each block.
// The transpose emitter's body
//
//   %tile = tessel.allocate_shared : tensor<1056xf32>
//   %r1 = <phase 1: writes %tile>
//   %s = tessel.sync_threads %r1
//   %r2 = <phase 2: reads %s, writes %out>
//   return %r2
//
// becomes
//
//   %tile = tessel.allocate_shared : tensor<1056xf32>
//   scf.for %bl = ... iter_args(%o = %out) {
//     %t = scf.for %th = 0 to 128 iter_args(%t0 = %tile) { <phase 1> }
//     %u = scf.for %th = 0 to 128 iter_args(%o2 = %o) { <phase 2, %t> }
//     scf.yield %u
//   }
//
// Index values one phase computes from the thread id and another reuses
// (after CSE) are recomputed in each phase.
//
// A kernel of several phases with a multiple of 32 threads whose maps
// divide the thread id (the transpose emitter: warps of 32 on the GPU, a
// tile row per warp) runs each phase's threads as two loops, warps and
// their lanes, th = w * 32 + l, and the thread id is substituted into the
// indexing maps that read it, which the simplifier turns into w and l:
//
//   (th)[i] -> (th floordiv 32 + i * 4, th mod 32)
//   becomes (w, l)[i] -> (w + i * 4, l),   w in [0, 3], l in [0, 31]
//
// so that addresses are linear in the innermost loop (l); with one loop
// over th the tile rows of the transpose emitter were moved one element at
// a time. The lane loop is marked `tessel.lanes`, and
// -tessel-vectorize-lane-loops makes its contiguous accesses vectors:
// left to LLVM, a lane loop of 32 was unrolled whole and, on CPUs with
// AVX-512, the loop over warps vectorized instead, with gathers from the
// tile and scatters into the output (the transpose emitter's writing
// phase, 4-5x slower on an Intel Xeon).
//
// A phase of `scf.if`s whose conditions bound the thread id (`th <= K`: a
// map with fewer threads than the launch, such as the transpose emitter's
// squares, 64 of 4096 threads, or its reading phase, 512 threads whose 8
// unrolled passes each have their guard) loops over threads 0..K only
// (the largest K; whole warps when split): the others would only test the
// conditions.
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace tessel {
namespace {

using llvm::SmallVector;

/// The tensor that `value` (computed inside a phase) was derived from by
/// inserts, transfer writes, loops and ifs: the buffer the phase writes,
/// defined before the phase (`inside` says which ops are in it), or an
/// argument of `stop`. Null when it cannot be traced.
mlir::Value traceBuffer(mlir::Value value, mlir::Block *stop,
                        llvm::function_ref<bool(mlir::Operation *)> inside) {
  for (int steps = 0; steps < 100000; ++steps) {
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(value)) {
      auto loop = llvm::dyn_cast_or_null<mlir::scf::ForOp>(
          arg.getOwner()->getParentOp());
      if (arg.getOwner() == stop || !loop || arg.getArgNumber() == 0)
        return value; // a function argument or the phase's own
      value = loop.getInitArgs()[arg.getArgNumber() - 1];
      continue;
    }
    mlir::Operation *def = value.getDefiningOp();
    if (!inside(def))
      return value;
    unsigned k = llvm::cast<mlir::OpResult>(value).getResultNumber();
    if (auto insert = llvm::dyn_cast<mlir::tensor::InsertOp>(def))
      value = insert.getDest();
    else if (auto write = llvm::dyn_cast<mlir::vector::TransferWriteOp>(def))
      value = write.getSource();
    else if (auto loop = llvm::dyn_cast<mlir::scf::ForOp>(def))
      value = loop.getInitArgs()[k];
    else if (auto branch = llvm::dyn_cast<mlir::scf::IfOp>(def))
      value = branch.thenYield().getOperand(k);
    else
      return nullptr;
  }
  return nullptr;
}

/// Threads per warp on the GPU: the inner loop of a split thread loop.
constexpr int64_t kLanes = 32;
/// An entry's lanes per warp on the CPU where it says otherwise (the
/// transpose emitter's kernels of one-byte elements: 64, a zmm of bytes).
constexpr llvm::StringLiteral kCpuLanesAttr = "tessel.cpu_lanes";

/// A phase's thread loop and the thread id inside it.
struct ThreadLoop {
  mlir::scf::ForOp loop; ///< the outer loop (warps, when split)
  mlir::Value threadId;
};

/// The last thread that does any work in a phase, where the phase is
/// `scf.if`s, each on a condition that bounds the thread id (`th <= K`
/// among the conditions it ands) with an else branch that only yields, and
/// the conditions themselves: a map whose domain has fewer threads than
/// the launch (the transpose emitter's squares: 64 of 4096 threads; its
/// reading phase, 512 threads in 8 unrolled passes). The thread loop then
/// stops after the largest K instead of testing the conditions for every
/// other thread (3584 empty iterations a tile for the reading phase).
std::optional<int64_t>
lastWorkingThread(llvm::ArrayRef<mlir::Operation *> ops) {
  // The guards: one per pass of a map whose symbol loop was unrolled.
  SmallVector<mlir::scf::IfOp> guards;
  for (mlir::Operation *op : ops) {
    if (auto ifOp = llvm::dyn_cast<mlir::scf::IfOp>(op))
      guards.push_back(ifOp);
    else if (!llvm::isa<mlir::arith::CmpIOp, mlir::arith::AndIOp>(op) &&
             !op->hasTrait<mlir::OpTrait::ConstantLike>())
      return std::nullopt;
  }
  if (guards.empty())
    return std::nullopt;
  std::optional<int64_t> lastOfAll;
  for (mlir::scf::IfOp guard : guards) {
    if (!guard.getElseRegion().empty() &&
        !llvm::isa<mlir::scf::YieldOp>(guard.elseBlock()->front()))
      return std::nullopt;
    std::optional<int64_t> last;
    SmallVector<mlir::Value> pending = {guard.getCondition()};
    while (!pending.empty()) {
      mlir::Value v = pending.pop_back_val();
      if (auto both = v.getDefiningOp<mlir::arith::AndIOp>()) {
        pending.push_back(both.getLhs());
        pending.push_back(both.getRhs());
        continue;
      }
      auto cmp = v.getDefiningOp<mlir::arith::CmpIOp>();
      if (!cmp || !cmp.getLhs().getDefiningOp<mlir::gpu::ThreadIdOp>())
        continue;
      auto bound = cmp.getRhs().getDefiningOp<mlir::arith::ConstantIndexOp>();
      if (!bound)
        continue;
      int64_t k = bound.value();
      using P = mlir::arith::CmpIPredicate;
      std::optional<int64_t> limit;
      if (cmp.getPredicate() == P::sle || cmp.getPredicate() == P::ule)
        limit = k;
      else if (cmp.getPredicate() == P::slt || cmp.getPredicate() == P::ult)
        limit = k - 1;
      if (limit && (!last || *limit < *last))
        last = limit;
    }
    if (!last)
      return std::nullopt;
    lastOfAll = lastOfAll ? std::max(*lastOfAll, *last) : *last;
  }
  return lastOfAll;
}

/// Moves `ops` into a new thread loop in front of `before`. The loop starts
/// from `loopInits` and yields `carried`; inside it, uses of `inits` (the
/// buffers `carried` were written into) read its iteration arguments;
/// outside it, uses of `carried` read its results. The loop runs
/// `outerCount` (a constant) times; with `laneCount` (a constant: kLanes,
/// or the entry's kCpuLanesAttr) it is a loop over warps around one over
/// their lanes, and the thread id is `w * lanes + l` (an apply_indexing).
ThreadLoop wrapInThreadLoop(mlir::Operation *before,
                            llvm::ArrayRef<mlir::Operation *> ops,
                            llvm::ArrayRef<mlir::Value> carried,
                            llvm::ArrayRef<mlir::Value> inits,
                            llvm::ArrayRef<mlir::Value> loopInits,
                            mlir::Value zero, mlir::Value one,
                            mlir::Value outerCount, mlir::Value laneCount) {
  mlir::Location loc = before->getLoc();
  mlir::OpBuilder b(before);
  auto threadLoop = b.create<mlir::scf::ForOp>(loc, zero, outerCount, one,
                                               llvm::to_vector(loopInits));
  b.setInsertionPointToStart(threadLoop.getBody());
  mlir::Value threadId = threadLoop.getInductionVar();
  // For -tessel-split-ragged-blocks.
  if (!laneCount)
    threadLoop->setAttr(kThreadLoopAttr, b.getUnitAttr());
  if (laneCount) {
    int64_t warps =
        outerCount.getDefiningOp<mlir::arith::ConstantIndexOp>().value();
    int64_t laneTrips =
        laneCount.getDefiningOp<mlir::arith::ConstantIndexOp>().value();
    auto lanes = b.create<mlir::scf::ForOp>(
        loc, zero, laneCount, one,
        mlir::ValueRange(threadLoop.getRegionIterArgs()));
    // For -tessel-vectorize-lane-loops.
    lanes->setAttr(kLaneLoopAttr, b.getUnitAttr());
    b.create<mlir::scf::YieldOp>(loc, mlir::ValueRange(lanes.getResults()));
    b.setInsertionPointToStart(lanes.getBody());
    mlir::MLIRContext *context = b.getContext();
    mlir::AffineExpr w = mlir::getAffineDimExpr(0, context);
    mlir::AffineExpr l = mlir::getAffineDimExpr(1, context);
    IndexingMap map(
        mlir::AffineMap::get(2, 0, {w * laneTrips + l}, context),
        {IndexingVariable(0, warps - 1), IndexingVariable(0, laneTrips - 1)},
        {}, {});
    threadId =
        b.create<ApplyIndexingOp>(loc,
                                  mlir::ValueRange{threadLoop.getInductionVar(),
                                                   lanes.getInductionVar()},
                                  mlir::ValueRange{}, map)
            .getResult(0);
  }
  auto yield = b.create<mlir::scf::YieldOp>(loc, llvm::to_vector(carried));
  for (mlir::Operation *op : ops)
    op->moveBefore(yield);
  auto innermost = llvm::cast<mlir::scf::ForOp>(yield->getParentOp());
  for (auto [init, iter] : llvm::zip(inits, innermost.getRegionIterArgs())) {
    mlir::Value buffer = init;
    buffer.replaceUsesWithIf(iter, [&](mlir::OpOperand &use) {
      return innermost->isProperAncestor(use.getOwner());
    });
  }
  for (auto [v, result] : llvm::zip(carried, threadLoop.getResults())) {
    mlir::Value value = v;
    // A buffer the phase returns untouched (a kernel of no elements) is
    // defined before the loop, which starts from it: only the uses after
    // the loop read its result.
    bool fromOutside = !threadLoop->isAncestor(
        value.getParentBlock() ? value.getParentBlock()->getParentOp()
                               : nullptr);
    value.replaceUsesWithIf(result, [&](mlir::OpOperand &use) {
      mlir::Operation *owner = use.getOwner();
      if (threadLoop->isAncestor(owner))
        return false;
      if (!fromOutside)
        return true;
      mlir::Operation *at =
          threadLoop->getBlock()->findAncestorOpInBlock(*owner);
      return at && threadLoop->isBeforeInBlock(at);
    });
  }
  return {threadLoop, threadId};
}

/// Substitutes the split thread id `split` (w * lanes + l) into the
/// indexing maps that read it as a dim, so that they read w and l.
void substituteSplitThreadId(ApplyIndexingOp split, int64_t lanes) {
  mlir::Value threadId = split.getResult(0);
  mlir::Value w = split.getOperand(0), l = split.getOperand(1);
  const IndexingMap &splitMap = split.getIndexingMap();
  for (mlir::OpOperand &use : llvm::make_early_inc_range(threadId.getUses())) {
    auto user = llvm::dyn_cast<ApplyIndexingOp>(use.getOwner());
    if (!user)
      continue;
    const IndexingMap &map = user.getIndexingMap();
    unsigned j = use.getOperandNumber();
    if (j >= map.getNumDims())
      continue;
    // (d_0, ..., w, l, ..., d_n) -> (d_0, ..., w * lanes + l, ..., d_n).
    mlir::MLIRContext *context = user.getContext();
    unsigned n = map.getNumDims();
    SmallVector<mlir::AffineExpr> results;
    std::vector<IndexingVariable> dims;
    for (unsigned k = 0; k < n; ++k) {
      unsigned at = k < j ? k : k + 1;
      if (k == j) {
        results.push_back(mlir::getAffineDimExpr(j, context) * lanes +
                          mlir::getAffineDimExpr(j + 1, context));
        dims.push_back(splitMap.getDimVars()[0]);
        dims.push_back(splitMap.getDimVars()[1]);
      } else {
        results.push_back(mlir::getAffineDimExpr(at, context));
        dims.push_back(map.getDimVars()[k]);
      }
    }
    IndexingMap first(mlir::AffineMap::get(n + 1, 0, results, context), dims,
                      {}, {});
    IndexingMap composed = composeIndexingMaps(first, map);
    // simplify() drops the symbols nothing uses (a vector index the
    // unroller made constant); keep the operands of those it keeps.
    SmallVector<mlir::Value> symbols;
    for (unsigned k = 0; k < composed.getNumSymbols(); ++k) {
      bool used = false;
      for (mlir::AffineExpr result : composed.getAffineMap().getResults())
        used |= result.isFunctionOfSymbol(k);
      for (const IndexingConstraint &constraint : composed.getConstraints())
        used |= constraint.expr.isFunctionOfSymbol(k);
      if (used)
        symbols.push_back(user.getSymbols()[k]);
    }
    composed.simplify();
    if (composed.getNumSymbols() != symbols.size())
      continue; // the simplifier removed more: leave this map as it is
    SmallVector<mlir::Value> operands(user.getDims());
    operands[j] = w;
    operands.insert(operands.begin() + j + 1, l);
    mlir::OpBuilder b(user);
    auto replacement =
        b.create<ApplyIndexingOp>(user.getLoc(), operands, symbols, composed);
    user->replaceAllUsesWith(replacement->getResults());
    user->erase();
  }
  if (threadId.use_empty())
    split->erase();
}

/// Whether an indexing map divides the thread id (floordiv or mod): then
/// consecutive threads are not consecutive addresses, and splitting the
/// thread loop into warps and lanes makes them so. Where every map reads
/// the thread id linearly (the column reduction's accumulators), one loop
/// vectorizes as well and costs less.
bool dividesThreadId(mlir::func::FuncOp func) {
  bool divides = false;
  func.walk([&](mlir::gpu::ThreadIdOp op) {
    for (mlir::OpOperand &use : op->getUses()) {
      auto user = llvm::dyn_cast<ApplyIndexingOp>(use.getOwner());
      if (!user || use.getOperandNumber() >= user.getIndexingMap().getNumDims())
        continue;
      unsigned j = use.getOperandNumber();
      for (mlir::AffineExpr result :
           user.getIndexingMap().getAffineMap().getResults())
        result.walk([&](mlir::AffineExpr e) {
          auto binary = llvm::dyn_cast<mlir::AffineBinaryOpExpr>(e);
          if (binary &&
              (e.getKind() == mlir::AffineExprKind::FloorDiv ||
               e.getKind() == mlir::AffineExprKind::Mod) &&
              binary.getLHS().isFunctionOfDim(j))
            divides = true;
        });
    }
  });
  return divides;
}

mlir::LogicalResult lowerEntry(mlir::func::FuncOp func) {
  auto threadsAttr =
      func->getAttrOfType<mlir::IntegerAttr>("tessel.num_threads");
  mlir::Block &body = func.getBody().front();
  auto ret = llvm::cast<mlir::func::ReturnOp>(body.getTerminator());
  mlir::MLIRContext *context = func.getContext();
  mlir::Location loc = func.getLoc();
  mlir::Type index = mlir::IndexType::get(context);
  unsigned numOutputs = func.getNumResults();
  unsigned numArgs = func.getNumArguments();

  // The phases: the body's ops between barriers. Ids, tiles and constants
  // stay in front of the loops.
  SmallVector<SmallVector<mlir::Operation *>> phases(1);
  SmallVector<SyncThreadsOp> barriers;
  for (mlir::Operation &op : body.without_terminator()) {
    if (auto sync = llvm::dyn_cast<SyncThreadsOp>(op)) {
      barriers.push_back(sync);
      phases.emplace_back();
    } else if (!llvm::isa<mlir::gpu::ThreadIdOp, mlir::gpu::BlockIdOp,
                          AllocateSharedOp>(op) &&
               !op.hasTrait<mlir::OpTrait::ConstantLike>()) {
      phases.back().push_back(&op);
    }
  }
  mlir::WalkResult nested = func.walk([&](SyncThreadsOp sync) {
    if (sync->getParentOp() != func.getOperation()) {
      sync.emitOpError() << "inside a loop or branch is not supported on the "
                            "CPU: every thread must reach the same barriers";
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  if (nested.wasInterrupted())
    return mlir::failure();

  // Index values computed in one phase and used in a later one are cloned
  // into the later phase (each phase has its own thread loop).
  llvm::DenseMap<mlir::Operation *, size_t> phaseOf, position;
  size_t counter = 0;
  for (mlir::Operation &op : body)
    position[&op] = counter++;
  for (size_t k = 0; k < phases.size(); ++k)
    for (mlir::Operation *op : phases[k])
      phaseOf[op] = k;
  for (size_t k = 1; k < phases.size(); ++k) {
    llvm::SetVector<mlir::Operation *> needed;
    SmallVector<mlir::Value> work;
    for (mlir::Operation *op : phases[k])
      op->walk([&](mlir::Operation *inner) {
        for (mlir::Value operand : inner->getOperands())
          work.push_back(operand);
      });
    while (!work.empty()) {
      mlir::Value v = work.pop_back_val();
      mlir::Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != &body)
        continue;
      auto it = phaseOf.find(def);
      if (it == phaseOf.end() || it->second >= k || needed.count(def))
        continue;
      if (llvm::isa<mlir::TensorType>(v.getType()))
        return def->emitOpError()
               << "a tensor this phase computes is read after a barrier that "
                  "does not take it";
      needed.insert(def);
      def->walk([&](mlir::Operation *inner) {
        for (mlir::Value operand : inner->getOperands())
          work.push_back(operand);
      });
    }
    SmallVector<mlir::Operation *> ordered(needed.begin(), needed.end());
    llvm::sort(ordered, [&](mlir::Operation *a, mlir::Operation *b) {
      return position[a] < position[b];
    });
    mlir::IRMapping mapping;
    mlir::OpBuilder cb(phases[k].empty() ? ret.getOperation()
                                         : phases[k].front());
    SmallVector<mlir::Operation *> clones;
    for (mlir::Operation *op : ordered) {
      clones.push_back(cb.clone(*op, mapping));
      // A later phase that needs the clone (through an op of this phase
      // that now reads it) clones it again, in the original's order.
      phaseOf[clones.back()] = k;
      position[clones.back()] = position[op];
    }
    for (mlir::Operation *op : phases[k])
      op->walk([&](mlir::Operation *inner) {
        for (mlir::OpOperand &operand : inner->getOpOperands())
          if (mlir::Value mapped = mapping.lookupOrNull(operand.get()))
            operand.set(mapped);
      });
    phases[k].insert(phases[k].begin(), clones.begin(), clones.end());
  }

  mlir::BlockArgument begin = body.addArgument(index, loc);
  mlir::BlockArgument end = body.addArgument(index, loc);
  llvm::SmallVector<mlir::Type> inputs(body.getArgumentTypes());
  func.setFunctionType(mlir::FunctionType::get(
      context, inputs, func.getFunctionType().getResults()));
  auto outputs = body.getArguments().slice(numArgs - numOutputs, numOutputs);

  mlir::OpBuilder b(ret);
  mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  int64_t threads = threadsAttr.getInt();
  int64_t lanes = kLanes;
  if (auto attr = func->getAttrOfType<mlir::IntegerAttr>(kCpuLanesAttr))
    lanes = attr.getInt();
  bool split = !barriers.empty() && lanes > 0 && threads > lanes &&
               threads % lanes == 0 && dividesThreadId(func);
  mlir::Value outerCount = b.create<mlir::arith::ConstantIndexOp>(
      loc, split ? threads / lanes : threads);
  mlir::Value laneCount;
  if (split)
    laneCount = b.create<mlir::arith::ConstantIndexOp>(loc, lanes);
  llvm::SmallVector<mlir::Value> outputInits(outputs.begin(), outputs.end());
  auto blockLoop =
      b.create<mlir::scf::ForOp>(loc, begin, end, one, outputInits);
  b.setInsertionPointToStart(blockLoop.getBody());
  auto blockYield = b.create<mlir::scf::YieldOp>(loc);
  b.setInsertionPoint(blockYield);

  SmallVector<ThreadLoop> threadLoops;
  for (size_t k = 0; k < phases.size(); ++k) {
    bool last = k + 1 == phases.size();
    SmallVector<mlir::Value> carried =
        last ? SmallVector<mlir::Value>(ret.getOperands())
             : SmallVector<mlir::Value>(barriers[k].getOperands());

    // A loop every thread runs alike (`tessel.uniform`, e.g. the rows of a
    // column reduction) stays outside: the threads loop inside it.
    mlir::scf::ForOp uniform;
    for (mlir::Operation *op : phases[k])
      if (auto loop = llvm::dyn_cast<mlir::scf::ForOp>(op))
        if (loop->hasAttr("tessel.uniform"))
          uniform = loop;
    if (uniform) {
      if (last || carried.size() != uniform.getNumResults() ||
          !llvm::equal(carried, uniform.getResults()))
        return uniform.emitOpError()
               << "a uniform loop must be alone between two barriers and "
                  "hand its results to the second";
      mlir::Block *loopBody = uniform.getBody();
      for (mlir::Operation *op : phases[k])
        if (op != uniform.getOperation())
          op->moveBefore(&loopBody->front());
      uniform->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
      SmallVector<mlir::Operation *> ops;
      for (mlir::Operation &op : loopBody->without_terminator())
        ops.push_back(&op);
      SmallVector<mlir::Value> inner(loopBody->getTerminator()->getOperands());
      SmallVector<mlir::Value> innerInits;
      for (mlir::Value v : inner) {
        mlir::Value buffer = traceBuffer(v, loopBody, [&](mlir::Operation *op) {
          return uniform->isProperAncestor(op);
        });
        if (!buffer)
          return uniform.emitOpError()
                 << "cannot tell which buffer the uniform loop writes";
        innerInits.push_back(buffer);
      }
      threadLoops.push_back(wrapInThreadLoop(loopBody->getTerminator(), ops,
                                             inner, innerInits, innerInits,
                                             zero, one, outerCount, laneCount));
      for (auto [synced, result] :
           llvm::zip(barriers[k].getResults(), uniform.getResults()))
        synced.replaceAllUsesWith(result);
      barriers[k].erase();
      b.setInsertionPointAfter(uniform);
      continue;
    }

    // The buffers each carried tensor was written into.
    SmallVector<mlir::Value> inits;
    if (last && phases.size() == 1) {
      inits.assign(outputs.begin(), outputs.end());
    } else {
      llvm::DenseSet<mlir::Operation *> phaseSet(phases[k].begin(),
                                                 phases[k].end());
      for (mlir::Value v : carried) {
        mlir::Value buffer = traceBuffer(v, &body, [&](mlir::Operation *op) {
          mlir::Operation *top = body.findAncestorOpInBlock(*op);
          return top && phaseSet.count(top);
        });
        if (!buffer)
          return func.emitOpError()
                 << "cannot tell which buffer phase " << k
                 << " writes (a value crosses a barrier through an op the "
                    "CPU lowering does not follow)";
        inits.push_back(buffer);
      }
    }
    // Outputs are carried by the block loop.
    SmallVector<mlir::Value> loopInits;
    for (mlir::Value init : inits) {
      auto arg = llvm::dyn_cast<mlir::BlockArgument>(init);
      if (arg && arg.getOwner() == &body &&
          arg.getArgNumber() >= numArgs - numOutputs &&
          arg.getArgNumber() < numArgs)
        loopInits.push_back(
            blockLoop.getRegionIterArgs()[arg.getArgNumber() -
                                          (numArgs - numOutputs)]);
      else
        loopInits.push_back(init);
    }
    // A phase whose threads past K do nothing loops over threads 0..K
    // only (whole warps when split).
    mlir::Value phaseCount = outerCount;
    if (std::optional<int64_t> lastThread = lastWorkingThread(phases[k]);
        lastThread && *lastThread + 1 < threads) {
      int64_t count = std::max<int64_t>(*lastThread + 1, 0);
      if (split)
        count = (count + lanes - 1) / lanes;
      phaseCount = b.create<mlir::arith::ConstantIndexOp>(loc, count);
    }
    // The thread loop goes where the builder is; a placeholder marks it.
    auto marker = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
    ThreadLoop threadLoop =
        wrapInThreadLoop(marker, phases[k], carried, inits, loopInits, zero,
                         one, phaseCount, laneCount);
    marker.erase();
    if (!last) {
      for (auto [synced, result] :
           llvm::zip(barriers[k].getResults(), threadLoop.loop.getResults()))
        synced.replaceAllUsesWith(result);
      barriers[k].erase();
    }
    threadLoops.push_back(threadLoop);
    b.setInsertionPointAfter(threadLoop.loop);
  }
  // The block loop carries the outputs: the last phase writes them.
  blockYield.getResultsMutable().assign(threadLoops.back().loop.getResults());

  func.walk([&](mlir::gpu::ThreadIdOp op) {
    for (mlir::OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
      for (const ThreadLoop &loop : threadLoops)
        if (loop.loop->isProperAncestor(use.getOwner()))
          use.set(loop.threadId);
    }
    if (op->use_empty())
      op.erase();
  });
  if (split)
    for (const ThreadLoop &loop : threadLoops)
      substituteSplitThreadId(loop.threadId.getDefiningOp<ApplyIndexingOp>(),
                              lanes);
  func.walk([&](mlir::gpu::BlockIdOp op) {
    op.replaceAllUsesWith(blockLoop.getInductionVar());
    op.erase();
  });
  ret.getOperandsMutable().assign(blockLoop.getResults());
  return mlir::success();
}

struct LowerGridToCpuPass
    : public mlir::PassWrapper<LowerGridToCpuPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerGridToCpuPass)
  llvm::StringRef getArgument() const final {
    return "tessel-lower-grid-to-cpu";
  }
  llvm::StringRef getDescription() const final {
    return "Run thread and block ids as loops over a range of blocks";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::scf::SCFDialect, mlir::arith::ArithDialect>();
  }
  void runOnOperation() override {
    for (auto func : getOperation().getOps<mlir::func::FuncOp>())
      if (func->hasAttr("tessel.num_threads") && !func.isExternal())
        if (mlir::failed(lowerEntry(func)))
          return signalPassFailure();
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createLowerGridToCpuPass() {
  return std::make_unique<LowerGridToCpuPass>();
}

} // namespace tessel
