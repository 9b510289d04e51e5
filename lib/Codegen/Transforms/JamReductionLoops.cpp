//===- JamReductionLoops.cpp - -tessel-jam-reduction-loops ----------------===//
//
// On the CPU the loop emitter computes a row reduction one output element
// per thread, and each thread's element is a loop over its row. After
// -tessel-lower-grid-to-cpu the threads are a loop too:
//
//   scf.for %th = 0 to 64 iter_args(%o = %out) {
//     %row = <index of %th>
//     %m = scf.for %i = 0 to 4099 iter_args(%acc = -inf) {
//       %x = tensor.extract %in[%row * 4099 + %i]
//       scf.yield (maximumf %acc, %x)
//     }
//     scf.yield (tensor.insert %m into %o[%row])
//   }
//
// so a core reads one row at a time: one stream of addresses, which on a
// Zen 3 core reads 17-18 GB/s where four rows read at once reach 26-28
// (XLA:CPU's row reductions do that). This pass unrolls the thread loop by
// 4 (2 where 4 does not divide its trip count) and jams the copies' row
// loops into one loop that carries the 4 rows' accumulators:
//
//   scf.for %th = 0 to 64 step 4 iter_args(%o = %out) {
//     %row0..%row3 = <index of %th, %th + 1, %th + 2, %th + 3>
//     %m:4 = scf.for %i = 0 to 4099 iter_args(%a0..%a3 = -inf) { ... }
//     <insert %m#0, then %m#1 into the result, ...>
//   }
//
// Each row's elements are combined in the same order as before, so the
// results are the same bits.
//
// The loop emitter's row sums (and bf16 maxima, ...) carry 16 partial
// results, one per lane, which -tessel-vectorize-partials has made one
// vector (LLVM's SLP vectorizer did that for one row's f32 sums, but not
// for 4 rows jammed), so that such rows are jammed too: one row at a time
// a Zen 3 core summed f32[4096,4096] in 3.1-3.6 ms, 4 rows 2.4-2.6; layer
// norm's sums (of widened bf16, of squares) gained 8-15%.
//
// A short row loop that carries one float and rounds to bf16 or f16 at
// every step is jammed 8 rows at a time with the rows as the lanes of one
// vector (emitRowsAsLanes): its steps are long latency-bound chains of
// integer code, which one vector runs for 8 rows.
//
// Where the launch has more threads than rows, each thread's work is
// behind the loop emitter's bounds check,
//
//   %r = scf.if %in_bounds { <the work> } else { scf.yield %o }
//
// and the step tests the 4 threads, runs the jammed work when all 4 are
// in bounds (every step but those at the end of the last block), and the
// 4 original checks and works one after the other otherwise.
//
// Legality: the ops before the row loop (and the bounds check) and the
// row loop itself have no memory effects (tensors are values) and do not
// read the thread loop's iteration arguments, so moving the next threads'
// copies of them ahead of this thread's ops after the row loop changes nothing;
// the ops after the row loop (the inserts) are cloned in thread order, each
// copy reading what the previous one yielded. A row loop qualifies when its
// trip count is a constant of at least 16 (17 for a sum or product, which
// LLVM vectorizes across the threads when it unrolls a row of 16; shorter
// rows are unrolled or cheap), it has no loop inside, and it carries no
// tensor (so it is a reduction, not a thread's writes).
//
//===----------------------------------------------------------------------===//
#include "AffineCoefficients.h"
#include "LaneOps.h"
#include "ThreadGuard.h"
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tessel {
namespace {

using llvm::SmallVector;

/// Rows read at once, where the thread loop's trip count allows.
constexpr int64_t kJamFactor = 4;
/// Rows as the lanes of one vector (emitRowsAsLanes), where the trip count
/// allows.
constexpr int64_t kLanesJamFactor = 8;
/// Rows shorter than kMinRowTrips are jammed from kMinShortRowTrips on,
/// sums and products from one more (below). On Zen 3, one thread, rows of
/// 20-28 bf16 sums 7.1-9.5 -> 3.4-4.0 ms for 8 MiB, rows of 16-24 bf16
/// maxima 14-21 -> 4.8-6.0; f32 rows within the noise. Shorter rows are
/// left alone.
constexpr int64_t kMinRowTrips = 32;
constexpr int64_t kMinShortRowTrips = 16;
/// Values a row loop may carry: one accumulator, or an argmax's two, or
/// one vector of partial results (-tessel-vectorize-partials), or the
/// three integer reductions of a maximum or minimum on the bits
/// (-tessel-vectorize-partials), or an f32 maximum or minimum and its sum
/// (-tessel-min-max-on-bits). LLVM's SLP
/// vectorizer makes one vector of a row's 16 scalar partial sums, but left 4
/// rows' 64 (or 2 rows' 32) scalar, 2x slower.
constexpr int64_t kMaxCarried = 3;
/// Whether `op` may move ahead of the ops that come after it in a thread's
/// work: it has no memory effects, and neither it nor an op nested in it
/// reads `carried` (what the previous thread passes on).
bool movable(mlir::Operation *op, mlir::ValueRange carried) {
  if (!mlir::isMemoryEffectFree(op))
    return false;
  bool reads = false;
  op->walk([&](mlir::Operation *nested) {
    for (mlir::Value operand : nested->getOperands())
      if (llvm::is_contained(carried, operand))
        reads = true;
  });
  return !reads;
}

/// The ops of `row`'s body that can run with the rows as the lanes of one
/// vector (below): those that depend on its one float accumulator or on a
/// read, all lane-wise (LaneOps.h), one of them a rounding to bf16 or
/// f16; the rest (index computations, reads) read none of them. Nothing
/// where `row` is not such a loop.
std::optional<llvm::SmallPtrSet<mlir::Operation *, 32>>
laneOpsOf(mlir::scf::ForOp row) {
  if (row.getNumRegionIterArgs() != 1)
    return std::nullopt;
  mlir::BlockArgument acc = row.getRegionIterArgs()[0];
  mlir::Type accType = acc.getType();
  if (!llvm::isa<mlir::FloatType>(accType))
    return std::nullopt;
  mlir::Block *body = row.getBody();
  // The ops on lanes: those that depend on the accumulator or on a read.
  llvm::SmallPtrSet<mlir::Operation *, 32> lanes;
  bool rounds = false;
  auto onLanes = [&](mlir::Value v) {
    mlir::Operation *def = v.getDefiningOp();
    return v == acc ||
           (def &&
            (lanes.contains(def) || llvm::isa<mlir::tensor::ExtractOp>(def)) &&
            def->getBlock() == body);
  };
  for (mlir::Operation &op : body->without_terminator()) {
    if (llvm::isa<mlir::tensor::ExtractOp>(op) ||
        !llvm::any_of(op.getOperands(), onLanes))
      continue;
    if (!isLaneWise(&op) || op.getNumResults() != 1 ||
        llvm::isa<mlir::VectorType>(op.getResult(0).getType()))
      return std::nullopt;
    rounds |= llvm::isa<mlir::arith::TruncFOp>(op);
    lanes.insert(&op);
  }
  mlir::Value result = body->getTerminator()->getOperand(0);
  if (!rounds || !onLanes(result))
    return std::nullopt;
  // The ops off lanes (index computations, reads) read no lane's value,
  // and a read's value is used on lanes only.
  for (mlir::Operation &op : body->without_terminator()) {
    if (lanes.contains(&op))
      continue;
    for (mlir::Value operand : op.getOperands()) {
      mlir::Operation *def = operand.getDefiningOp();
      if (operand == acc || (def && lanes.contains(def)))
        return std::nullopt;
    }
    if (llvm::isa<mlir::tensor::ExtractOp>(op))
      for (mlir::Operation *user : op.getUsers())
        if (!lanes.contains(user) && !llvm::isa<mlir::scf::YieldOp>(user))
          return std::nullopt;
  }
  return lanes;
}

struct Candidate {
  mlir::scf::ForOp threads;
  /// The bounds check around the thread's work, or null: an scf.if that
  /// yields the thread loop's iteration arguments unchanged when false.
  mlir::scf::IfOp guard;
  mlir::scf::ForOp row;
  int64_t factor = 1;
};

/// The first loop with results in `block`, where every op before it has no
/// memory effects and does not read `carried`; null otherwise.
mlir::scf::ForOp rowLoopOf(mlir::Block &block, mlir::ValueRange carried) {
  for (mlir::Operation &op : block.without_terminator()) {
    auto inner = llvm::dyn_cast<mlir::scf::ForOp>(op);
    if (inner && inner.getNumResults() > 0)
      return inner;
    if (!movable(&op, carried))
      return nullptr;
  }
  return nullptr;
}

/// `loop` as a thread loop whose body computes a row loop, directly or
/// inside a bounds check, or nothing.
std::optional<Candidate> match(mlir::scf::ForOp loop) {
  std::optional<int64_t> trips = mlir::constantTripCount(
      loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  if (!trips || !mlir::getConstantIntValue(loop.getStep()))
    return std::nullopt;
  Candidate c;
  c.threads = loop;
  c.factor = *trips % kJamFactor == 0 ? kJamFactor : *trips % 2 == 0 ? 2 : 1;
  if (c.factor == 1 || *trips < c.factor * 2)
    return std::nullopt;
  mlir::ValueRange carried = loop.getRegionIterArgs();
  c.row = rowLoopOf(*loop.getBody(), carried);
  if (!c.row) {
    // The loop emitter's bounds check (ThreadGuard.h) after ops that can
    // move.
    mlir::Block &body = *loop.getBody();
    c.guard = threadGuard(loop);
    if (!c.guard)
      return std::nullopt;
    for (mlir::Operation &op : body.without_terminator())
      if (&op != c.guard.getOperation() && !movable(&op, carried))
        return std::nullopt;
    c.row = rowLoopOf(*c.guard.thenBlock(), carried);
    if (!c.row)
      return std::nullopt;
  }
  mlir::scf::ForOp row = c.row;
  std::optional<int64_t> rowTrips = mlir::constantTripCount(
      row.getLowerBound(), row.getUpperBound(), row.getStep());
  if (!rowTrips || *rowTrips < kMinShortRowTrips)
    return std::nullopt;
  if (*rowTrips <= kMinShortRowTrips) {
    // Rows of 16 sums or products are left alone: LLVM unrolls them and
    // vectorizes the threads (Zen 3, bf16[262144,16]: 1.2 ms alone, 2.1
    // jammed), which it does not for a max or min of bf16 (14 ms alone,
    // 4.8 jammed).
    bool arithmetic = false;
    row.getBody()->walk([&](mlir::Operation *op) {
      arithmetic |= llvm::isa<mlir::arith::AddFOp, mlir::arith::SubFOp,
                              mlir::arith::MulFOp>(op);
    });
    if (arithmetic)
      return std::nullopt;
  }
  if (!movable(row, carried))
    return std::nullopt;
  // Rows as lanes: one vector of 8 rows, whose steps' latency 4 rows'
  // lanes could not hide.
  if (*trips % kLanesJamFactor == 0 && *trips >= 2 * kLanesJamFactor &&
      laneOpsOf(row))
    c.factor = kLanesJamFactor;
  if (int64_t(row.getNumResults()) > kMaxCarried)
    return std::nullopt;
  for (mlir::Type type : row.getResultTypes())
    if (llvm::isa<mlir::TensorType>(type))
      return std::nullopt;
  bool nested = false;
  row.getBody()->walk([&](mlir::LoopLikeOpInterface) { nested = true; });
  if (nested)
    return std::nullopt;
  for (mlir::Value bound :
       {row.getLowerBound(), row.getUpperBound(), row.getStep()})
    if (!loop.isDefinedOutsideOfLoop(bound))
      return std::nullopt;
  return c;
}

/// The jammed row loop with the rows as the lanes of one vector, where
/// laneOpsOf(`row`) says it can be: a step is 10-15 scalar instructions
/// per row (bf16's rounding is integer code), one vector of them for all
/// the rows (Zen 3, one thread, 16 MiB of bf16 sums of rows of 24: 7.3 ms
/// with 4 rows' scalar chains jammed). The reads stay one per row,
/// gathered into a vector; each lane runs its row's steps in the row's
/// order, so the bits are the same. Returns the rows' results, or nothing
/// where `row` is not such a loop.
std::optional<SmallVector<mlir::Value>>
emitRowsAsLanes(mlir::OpBuilder &b, mlir::scf::ForOp row,
                llvm::ArrayRef<mlir::IRMapping> maps) {
  int64_t factor = static_cast<int64_t>(maps.size());
  std::optional<llvm::SmallPtrSet<mlir::Operation *, 32>> laneOps =
      laneOpsOf(row);
  if (!laneOps)
    return std::nullopt;
  const llvm::SmallPtrSet<mlir::Operation *, 32> &lanes = *laneOps;
  mlir::BlockArgument acc = row.getRegionIterArgs()[0];
  mlir::Block *body = row.getBody();
  mlir::Value result = body->getTerminator()->getOperand(0);
  mlir::Location loc = row.getLoc();
  auto vectorOf = [&](mlir::Type type) {
    return mlir::VectorType::get({factor}, type);
  };
  auto gather = [&](mlir::OpBuilder &nb,
                    llvm::ArrayRef<mlir::Value> values) -> mlir::Value {
    if (llvm::all_equal(values))
      return nb.create<mlir::vector::SplatOp>(loc, values[0],
                                              vectorOf(values[0].getType()));
    return nb.create<mlir::vector::FromElementsOp>(
        loc, vectorOf(values[0].getType()), values);
  };
  SmallVector<mlir::Value> inits;
  for (int64_t j = 0; j < factor; ++j)
    inits.push_back(maps[j].lookupOrDefault(row.getInitArgs()[0]));
  mlir::Value init = gather(b, inits);
  auto jammed = b.create<mlir::scf::ForOp>(
      loc, row.getLowerBound(), row.getUpperBound(), row.getStep(),
      mlir::ValueRange{init},
      [&](mlir::OpBuilder &nb, mlir::Location, mlir::Value iv,
          mlir::ValueRange args) {
        SmallVector<mlir::IRMapping> rows(maps.begin(), maps.end());
        mlir::IRMapping vectors;
        vectors.map(acc, args[0]);
        auto vectorFor = [&](mlir::Value v) -> mlir::Value {
          if (mlir::Value done = vectors.lookupOrNull(v))
            return done;
          SmallVector<mlir::Value> perRow;
          for (mlir::IRMapping &map : rows)
            perRow.push_back(map.lookupOrDefault(v));
          return gather(nb, perRow);
        };
        for (mlir::IRMapping &map : rows)
          map.map(row.getInductionVar(), iv);
        for (mlir::Operation &op : body->without_terminator()) {
          if (!lanes.contains(&op)) {
            // Index computations and reads: one per row.
            for (mlir::IRMapping &map : rows)
              nb.clone(op, map);
            continue;
          }
          mlir::IRMapping operands;
          for (mlir::Value operand : op.getOperands())
            operands.map(operand, vectorFor(operand));
          mlir::Operation *copy = nb.clone(op, operands);
          copy->getResult(0).setType(vectorOf(op.getResult(0).getType()));
          vectors.map(op.getResult(0), copy->getResult(0));
        }
        nb.create<mlir::scf::YieldOp>(loc, vectorFor(result));
      });
  SmallVector<mlir::Value> results;
  for (int64_t j = 0; j < factor; ++j)
    results.push_back(b.create<mlir::vector::ExtractOp>(
        loc, jammed.getResult(0), llvm::ArrayRef<int64_t>{j}));
  return results;
}

/// Clones, at `b`'s insertion point, the ops of `block` (a thread's work,
/// ending in a yield of what the thread passes on) for each thread j:
/// first every thread's ops before `row`, then one row loop for all, then
/// every thread's ops after it in thread order, thread j reading `init`
/// for j = 0 and what thread j - 1 yields otherwise where `block` reads
/// `carried`. maps[j] takes thread 0's values to thread j's (its thread
/// id at least) and is extended. Returns what the last thread yields.
SmallVector<mlir::Value>
emitJammed(mlir::OpBuilder &b, mlir::Block &block, mlir::scf::ForOp row,
           mlir::ValueRange carried, mlir::ValueRange init,
           llvm::MutableArrayRef<mlir::IRMapping> maps) {
  int64_t factor = static_cast<int64_t>(maps.size());
  mlir::Location loc = row.getLoc();
  SmallVector<mlir::Operation *> before, after;
  bool seenRow = false;
  for (mlir::Operation &op : block.without_terminator()) {
    if (&op == row.getOperation())
      seenRow = true;
    else
      (seenRow ? after : before).push_back(&op);
  }
  for (int64_t j = 0; j < factor; ++j)
    for (mlir::Operation *op : before)
      b.clone(*op, maps[j]);

  size_t n = row.getNumResults();
  if (std::optional<SmallVector<mlir::Value>> lanes =
          emitRowsAsLanes(b, row, maps)) {
    for (int64_t j = 0; j < factor; ++j)
      maps[j].map(row.getResult(0), (*lanes)[j]);
  } else {
    SmallVector<mlir::Value> inits;
    for (int64_t j = 0; j < factor; ++j)
      for (mlir::Value v : row.getInitArgs())
        inits.push_back(maps[j].lookupOrDefault(v));
    auto jammed = b.create<mlir::scf::ForOp>(
        loc, row.getLowerBound(), row.getUpperBound(), row.getStep(), inits,
        [&](mlir::OpBuilder &nb, mlir::Location, mlir::Value iv,
            mlir::ValueRange args) {
          SmallVector<mlir::Value> yields;
          auto yield = llvm::cast<mlir::scf::YieldOp>(row.getBody()->back());
          for (int64_t j = 0; j < factor; ++j) {
            mlir::IRMapping map = maps[j];
            map.map(row.getInductionVar(), iv);
            map.map(row.getRegionIterArgs(), args.slice(j * n, n));
            for (mlir::Operation &op : row.getBody()->without_terminator())
              nb.clone(op, map);
            for (mlir::Value v : yield.getOperands())
              yields.push_back(map.lookupOrDefault(v));
          }
          nb.create<mlir::scf::YieldOp>(loc, yields);
        });
    for (int64_t j = 0; j < factor; ++j)
      maps[j].map(row.getResults(), jammed.getResults().slice(j * n, n));
  }

  auto yield = llvm::cast<mlir::scf::YieldOp>(block.getTerminator());
  SmallVector<mlir::Value> passed(init);
  for (int64_t j = 0; j < factor; ++j) {
    maps[j].map(carried, passed);
    for (mlir::Operation *op : after)
      b.clone(*op, maps[j]);
    for (size_t k = 0; k < passed.size(); ++k)
      passed[k] = maps[j].lookupOrDefault(yield.getOperand(k));
  }
  return passed;
}

void jam(Candidate c) {
  mlir::scf::ForOp threads = c.threads;
  mlir::Location loc = c.row.getLoc();
  int64_t step = *mlir::getConstantIntValue(threads.getStep());
  mlir::OpBuilder b(threads);
  threads.getStepMutable().assign(
      b.create<mlir::arith::ConstantIndexOp>(loc, step * c.factor));
  mlir::Block &body = *threads.getBody();
  auto yield = llvm::cast<mlir::scf::YieldOp>(body.getTerminator());
  mlir::ValueRange carried = threads.getRegionIterArgs();
  mlir::Value th = threads.getInductionVar();
  SmallVector<mlir::Operation *> old;
  for (mlir::Operation &op : body.without_terminator())
    old.push_back(&op);

  // maps[j]: thread 0's values to thread j's, from th + j on.
  SmallVector<mlir::IRMapping> maps(c.factor);
  b.setInsertionPointToStart(&body);
  for (int64_t j = 1; j < c.factor; ++j) {
    mlir::Value offset = b.create<mlir::arith::ConstantIndexOp>(loc, j * step);
    maps[j].map(th, b.create<mlir::arith::AddIOp>(loc, th, offset));
  }

  if (!c.guard) {
    // Every thread's work cloned in the jammed order; the originals go.
    b.setInsertionPoint(yield);
    SmallVector<mlir::Value> passed =
        emitJammed(b, body, c.row, carried, carried, maps);
    yield->setOperands(passed);
    for (mlir::Operation *op : llvm::reverse(old))
      op->erase();
    return;
  }

  // With a bounds check: each thread's test, then the jammed work where
  // all of them are in bounds, the threads one by one otherwise (the last
  // block of a ragged launch).
  mlir::scf::IfOp guard = c.guard;
  b.setInsertionPoint(guard);
  for (int64_t j = 1; j < c.factor; ++j)
    for (mlir::Operation *op : old)
      if (op != guard.getOperation())
        b.clone(*op, maps[j]);
  mlir::Value all = guard.getCondition();
  for (int64_t j = 1; j < c.factor; ++j)
    all = b.create<mlir::arith::AndIOp>(
        loc, all, maps[j].lookupOrDefault(guard.getCondition()));
  SmallVector<mlir::IRMapping> oneByOne(maps.begin(), maps.end());
  auto inBounds = b.create<mlir::scf::IfOp>(loc, guard.getResultTypes(), all,
                                            /*withElseRegion=*/true);
  mlir::OpBuilder thenBuilder =
      mlir::OpBuilder::atBlockBegin(inBounds.thenBlock());
  SmallVector<mlir::Value> passed = emitJammed(thenBuilder, *guard.thenBlock(),
                                               c.row, carried, carried, maps);
  thenBuilder.create<mlir::scf::YieldOp>(loc, passed);
  mlir::OpBuilder elseBuilder =
      mlir::OpBuilder::atBlockBegin(inBounds.elseBlock());
  passed.assign(carried.begin(), carried.end());
  for (int64_t j = 0; j < c.factor; ++j) {
    oneByOne[j].map(carried, passed);
    mlir::Operation *copy = elseBuilder.clone(*guard, oneByOne[j]);
    passed.assign(copy->result_begin(), copy->result_end());
  }
  elseBuilder.create<mlir::scf::YieldOp>(loc, passed);
  guard.replaceAllUsesWith(inBounds.getResults());
  guard.erase();
}

struct JamReductionLoopsPass
    : public mlir::PassWrapper<JamReductionLoopsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(JamReductionLoopsPass)
  llvm::StringRef getArgument() const final {
    return "tessel-jam-reduction-loops";
  }
  llvm::StringRef getDescription() const final {
    return "Unroll a thread loop whose threads each reduce a row by 4 and "
           "jam the row loops (the CPU: four rows read at once)";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::arith::ArithDialect, mlir::scf::SCFDialect,
                    mlir::vector::VectorDialect>();
  }
  void runOnOperation() override {
    SmallVector<Candidate> candidates;
    getOperation().walk([&](mlir::scf::ForOp loop) {
      if (std::optional<Candidate> c = match(loop))
        candidates.push_back(*c);
    });
    for (const Candidate &c : candidates)
      jam(c);
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createJamReductionLoopsPass() {
  return std::make_unique<JamReductionLoopsPass>();
}

} // namespace tessel
