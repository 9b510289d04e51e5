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
// Legality: the ops before the row loop and the row loop itself have no
// memory effects (tensors are values) and do not read the thread loop's
// iteration arguments, so moving the next threads' copies of them ahead
// of this thread's ops after the row loop changes nothing; the ops after
// the row loop (the inserts) are cloned in thread order, each copy
// reading what the previous one yielded. A row loop qualifies when its
// trip count is a constant of at least 32 (shorter ones are unrolled or
// cheap), it has no loop inside, and it carries no tensor (so it is a
// reduction, not a thread's writes).
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tessel {
namespace {

using llvm::SmallVector;

/// Rows read at once, where the thread loop's trip count allows.
constexpr int64_t kJamFactor = 4;
/// Shorter row loops are left alone.
constexpr int64_t kMinRowTrips = 32;
/// Values a row loop may carry: one accumulator, or an argmax's two. The
/// loop emitter's f32 sums carry 16 partial sums, which LLVM's SLP
/// vectorizer makes one vector of; 4 rows' 64 (or 2 rows' 32) it left
/// scalar, 2x slower.
constexpr int64_t kMaxCarried = 2;

/// Whether `op` or an op nested in it reads one of `values`.
bool readsAny(mlir::Operation *op, mlir::ValueRange values) {
  bool found = false;
  op->walk([&](mlir::Operation *nested) {
    for (mlir::Value operand : nested->getOperands())
      if (llvm::is_contained(values, operand))
        found = true;
  });
  return found;
}

struct Candidate {
  mlir::scf::ForOp threads;
  mlir::scf::ForOp row;
  int64_t factor = 1;
};

/// `loop` as a thread loop whose body computes a row loop, or nothing.
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
  for (mlir::Operation &op : loop.getBody()->without_terminator()) {
    auto inner = llvm::dyn_cast<mlir::scf::ForOp>(op);
    if (inner && inner.getNumResults() > 0) {
      c.row = inner;
      break;
    }
    if (!mlir::isMemoryEffectFree(&op) || readsAny(&op, carried))
      return std::nullopt;
  }
  if (!c.row)
    return std::nullopt;
  mlir::scf::ForOp row = c.row;
  std::optional<int64_t> rowTrips = mlir::constantTripCount(
      row.getLowerBound(), row.getUpperBound(), row.getStep());
  if (!rowTrips || *rowTrips < kMinRowTrips)
    return std::nullopt;
  if (!mlir::isMemoryEffectFree(row.getOperation()) || readsAny(row, carried))
    return std::nullopt;
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

void jam(const Candidate &c) {
  mlir::scf::ForOp threads = c.threads;
  mlir::scf::ForOp row = c.row;
  mlir::Location loc = row.getLoc();
  int64_t step = *mlir::getConstantIntValue(threads.getStep());
  mlir::OpBuilder b(threads);
  threads.getStepMutable().assign(
      b.create<mlir::arith::ConstantIndexOp>(loc, step * c.factor));

  SmallVector<mlir::Operation *> before, after;
  bool seenRow = false;
  for (mlir::Operation &op : threads.getBody()->without_terminator()) {
    if (&op == row.getOperation())
      seenRow = true;
    else
      (seenRow ? after : before).push_back(&op);
  }

  // Threads th + 1, ..., th + factor - 1: their index computations.
  SmallVector<mlir::IRMapping> maps(c.factor);
  b.setInsertionPoint(row);
  mlir::Value th = threads.getInductionVar();
  for (int64_t j = 1; j < c.factor; ++j) {
    mlir::Value offset = b.create<mlir::arith::ConstantIndexOp>(loc, j * step);
    maps[j].map(th, b.create<mlir::arith::AddIOp>(loc, th, offset));
    for (mlir::Operation *op : before)
      b.clone(*op, maps[j]);
  }

  // One row loop for all of them.
  size_t n = row.getNumResults();
  SmallVector<mlir::Value> inits;
  for (int64_t j = 0; j < c.factor; ++j)
    for (mlir::Value init : row.getInitArgs())
      inits.push_back(maps[j].lookupOrDefault(init));
  auto jammed = b.create<mlir::scf::ForOp>(
      loc, row.getLowerBound(), row.getUpperBound(), row.getStep(), inits,
      [&](mlir::OpBuilder &nb, mlir::Location, mlir::Value iv,
          mlir::ValueRange args) {
        SmallVector<mlir::Value> yields;
        auto yield = llvm::cast<mlir::scf::YieldOp>(row.getBody()->back());
        for (int64_t j = 0; j < c.factor; ++j) {
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
  row.replaceAllUsesWith(jammed.getResults().take_front(n));
  row.erase();
  for (int64_t j = 1; j < c.factor; ++j)
    maps[j].map(jammed.getResults().take_front(n),
                jammed.getResults().slice(j * n, n));

  // The ops after the row loop, thread by thread, each copy reading what
  // the previous one yields.
  auto yield = llvm::cast<mlir::scf::YieldOp>(threads.getBody()->back());
  SmallVector<mlir::Value> carried(yield.getOperands());
  b.setInsertionPoint(yield);
  for (int64_t j = 1; j < c.factor; ++j) {
    maps[j].map(threads.getRegionIterArgs(), carried);
    for (mlir::Operation *op : after)
      b.clone(*op, maps[j]);
    for (size_t k = 0; k < carried.size(); ++k)
      carried[k] = maps[j].lookupOrDefault(yield.getOperand(k));
  }
  yield->setOperands(carried);
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
    registry.insert<mlir::arith::ArithDialect, mlir::scf::SCFDialect>();
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
