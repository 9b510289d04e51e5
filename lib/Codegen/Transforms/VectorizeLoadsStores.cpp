//===- VectorizeLoadsStores.cpp - -tessel-vectorize-loads-stores ----------===//
//
// In a loop over the vector index (scf.for from 0 to V, step 1), an access
// whose offset is `base + v` with `base` a multiple of V reads or writes V
// consecutive, aligned elements: one vector access outside the loop
// replaces the V scalar ones (the seed's vectorization):
//
//   scf.for %v = 0 to 4 iter_args(%acc = %out) {
//     %o = tessel.apply_indexing #map(%th, %bl)[%v]     // bl*512 + th*4 + v
//     %x = tensor.extract %in[%o]
//     ...
//     %u = tensor.insert %y into %acc[%o]
//   }
//
// becomes
//
//   %b = tessel.apply_indexing #map(%th, %bl)[%c0]
//   %vin = vector.transfer_read %in[%b] : tensor<Nxbf16>, vector<4xbf16>
//   %r:2 = scf.for %v = 0 to 4 iter_args(%acc = %out, %vout = %zero) {
//     %x = vector.extract %vin[%v]
//     ...
//     %w = vector.insert %y, %vout[%v]
//     scf.yield %acc, %w
//   }
//   %u = vector.transfer_write %r#1, %out[%b]
//
// "A multiple of V" is proven on the map when every term of the offset
// other than v has a coefficient that is a multiple of V, and so has the
// constant; otherwise the divisibility analysis of the alignment verifier
// (tessel/Analysis/DivisibilityAnalysis.h, spec/alignment.md) is asked
// about the offset at v = 0, from what it knows of the map's operands (a
// `%d = arith.muli %x, %c4 overflow<nsw>` operand is a multiple of 4 even
// though the map sees only `d0`). Runs after -tessel-flatten-tensors, on
// 1-D tensors.
//
// -tessel-vectorize-lane-loops does the same, after
// -tessel-lower-grid-to-cpu, in the loops over a warp's 32 lanes that it
// made (marked `tessel.lanes`): the transpose emitter's writing phase,
// whose accesses are contiguous in the lane only once the thread id is
// split into warp and lane.
//
//===----------------------------------------------------------------------===//
#include "AffineCoefficients.h"
#include "tessel/Analysis/DivisibilityAnalysis.h"
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Analysis/DataFlowFramework.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessel {

namespace {

/// Whether every term of `expr` other than `variable` is a multiple of
/// `factor`: constants are multiples, products by a multiple are, sums of
/// multiples are.
bool isMultipleExcept(mlir::AffineExpr expr, mlir::AffineExpr variable,
                      int64_t factor) {
  if (expr == variable)
    return true;
  switch (expr.getKind()) {
  case mlir::AffineExprKind::Constant:
    return llvm::cast<mlir::AffineConstantExpr>(expr).getValue() % factor == 0;
  case mlir::AffineExprKind::Add: {
    auto add = llvm::cast<mlir::AffineBinaryOpExpr>(expr);
    return isMultipleExcept(add.getLHS(), variable, factor) &&
           isMultipleExcept(add.getRHS(), variable, factor);
  }
  case mlir::AffineExprKind::Mul: {
    auto mul = llvm::cast<mlir::AffineBinaryOpExpr>(expr);
    if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(mul.getRHS()))
      if (c.getValue() % factor == 0)
        return true;
    return false;
  }
  default:
    return false;
  }
}

/// The base offset (the offset at v = 0) of an access at `index` in a loop
/// over `iv` of `size` iterations when the access is contiguous in `iv`
/// and aligned to `size`; the apply_indexing that computes it at v = 0 is
/// created before `loop`.
mlir::FailureOr<mlir::Value> vectorBase(mlir::scf::ForOp loop, mlir::Value iv,
                                        int64_t size, mlir::Value index,
                                        const mlir::DataFlowSolver &solver) {
  auto apply = index.getDefiningOp<ApplyIndexingOp>();
  if (!apply || apply.getNumResults() != 1 || !loop->isProperAncestor(apply))
    return mlir::failure();
  const IndexingMap &map = apply.getIndexingMap();
  mlir::AffineExpr result = map.getAffineMap().getResult(0);
  mlir::AffineExpr variable;
  int ivUses = 0;
  for (auto [i, operand] : llvm::enumerate(apply.getOperands())) {
    if (operand == iv) {
      ++ivUses;
      variable = operandVariable(map, i);
    } else if (!loop.isDefinedOutsideOfLoop(operand)) {
      return mlir::failure();
    }
  }
  if (ivUses != 1 || coefficientOf(result, variable) != 1)
    return mlir::failure();
  if (!isMultipleExcept(result, variable, size)) {
    // Ask the divisibility analysis about the offset at v = 0.
    llvm::SmallVector<Divisibility> known;
    for (mlir::Value operand : apply.getOperands())
      known.push_back(operand == iv ? Divisibility::constant(0)
                                    : getDivisibility(solver, operand));
    llvm::ArrayRef<Divisibility> all(known);
    Divisibility offset =
        evaluateAffineDivisibility(result, all.take_front(map.getNumDims()),
                                   all.drop_front(map.getNumDims()));
    if (offset.isMultipleOf(size).verdict != Verdict::Proven)
      return mlir::failure();
  }
  mlir::OpBuilder b(loop);
  llvm::SmallVector<mlir::Value> operands(apply.getOperands());
  for (mlir::Value &operand : operands)
    if (operand == iv)
      operand = b.create<mlir::arith::ConstantIndexOp>(loop.getLoc(), 0);
  auto base = b.create<ApplyIndexingOp>(
      loop.getLoc(), mlir::ValueRange(operands).take_front(map.getNumDims()),
      mlir::ValueRange(operands).drop_front(map.getNumDims()), map);
  return base.getResult(0);
}

/// Whether vectors of `type` have one element per memory slot: LLVM packs
/// vector<N x i1> into bits, while a pred tensor holds one byte per
/// element.
bool hasByteElements(mlir::Type type) {
  // Complex elements (structs in the end) stay scalar accesses.
  return type.isIntOrFloat() && type.getIntOrFloatBitWidth() % 8 == 0;
}

/// Rewrites the accesses of `loop` that can be vectors; returns the loop
/// (a new one when a store was vectorized) and whether anything changed.
std::pair<mlir::scf::ForOp, bool>
vectorizeLoop(mlir::scf::ForOp loop, const mlir::DataFlowSolver &solver) {
  bool changed = false;
  std::optional<int64_t> lower =
      mlir::getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper =
      mlir::getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = mlir::getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step || *lower != 0 || *step != 1 || *upper < 2 ||
      *upper > 64)
    return {loop, false};
  int64_t size = *upper;
  // A loop that carries a scalar (a reduction's accumulator: the loop
  // emitter's row loop over a short row) stays a loop: its reads would
  // become extracts at a variable position of one long vector, which LLVM
  // does through memory, one element at a time. Only the vector loops
  // that -tessel-unroll-loops unrolls read a vector for it.
  if (size > kMaxUnrolledTrips &&
      llvm::any_of(loop.getInitArgs(), [](mlir::Value init) {
        return !llvm::isa<mlir::ShapedType>(init.getType());
      }))
    return {loop, false};
  mlir::Value iv = loop.getInductionVar();
  mlir::Location loc = loop.getLoc();

  // Loads: hoisted vector reads.
  llvm::SmallVector<mlir::tensor::ExtractOp> extracts;
  loop.getBody()->walk([&](mlir::tensor::ExtractOp op) {
    if (op->getParentOp() == loop.getOperation() &&
        hasByteElements(op.getType()) &&
        loop.isDefinedOutsideOfLoop(op.getTensor()) &&
        op.getIndices().size() == 1)
      extracts.push_back(op);
  });
  for (mlir::tensor::ExtractOp op : extracts) {
    auto base = vectorBase(loop, iv, size, op.getIndices()[0], solver);
    if (mlir::failed(base))
      continue;
    mlir::OpBuilder b(loop);
    auto type = mlir::VectorType::get({size}, op.getType());
    mlir::Value padding =
        b.create<mlir::arith::ConstantOp>(loc, b.getZeroAttr(op.getType()));
    mlir::Value vector = b.create<mlir::vector::TransferReadOp>(
        loc, type, op.getTensor(), mlir::ValueRange{*base}, padding,
        llvm::ArrayRef<bool>{true});
    mlir::OpBuilder inside(op);
    mlir::Value element = inside.create<mlir::vector::ExtractOp>(
        loc, vector, llvm::ArrayRef<mlir::OpFoldResult>{iv});
    op.replaceAllUsesWith(element);
    op.erase();
    changed = true;
  }

  // Stores into an iteration argument: a vector carried through the loop,
  // written once after it.
  auto yield = llvm::cast<mlir::scf::YieldOp>(loop.getBody()->getTerminator());
  for (unsigned k = 0; k < loop.getNumRegionIterArgs(); ++k) {
    auto insert = yield.getOperand(k).getDefiningOp<mlir::tensor::InsertOp>();
    mlir::BlockArgument acc = loop.getRegionIterArgs()[k];
    if (!insert || insert.getDest() != acc || !insert->hasOneUse() ||
        insert->getParentOp() != loop.getOperation() ||
        insert.getIndices().size() != 1 || !acc.hasOneUse() ||
        !hasByteElements(insert.getScalar().getType()))
      continue;
    auto base = vectorBase(loop, iv, size, insert.getIndices()[0], solver);
    if (mlir::failed(base))
      continue;
    mlir::OpBuilder b(loop);
    mlir::Type element = insert.getScalar().getType();
    auto type = mlir::VectorType::get({size}, element);
    mlir::Value zero = b.create<mlir::arith::ConstantOp>(
        loc, mlir::DenseElementsAttr::get(type, b.getZeroAttr(element)));
    // A new loop with one more iteration argument: the vector.
    llvm::SmallVector<mlir::Value> inits(loop.getInitArgs());
    inits.push_back(zero);
    auto newLoop = b.create<mlir::scf::ForOp>(
        loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(), inits);
    newLoop.getBody()->getOperations().splice(newLoop.getBody()->begin(),
                                              loop.getBody()->getOperations());
    for (auto [from, to] : llvm::zip(loop.getBody()->getArguments(),
                                     newLoop.getBody()->getArguments()))
      from.replaceAllUsesWith(to);
    auto newYield =
        llvm::cast<mlir::scf::YieldOp>(newLoop.getBody()->getTerminator());
    mlir::OpBuilder inside(insert);
    mlir::Value updated = inside.create<mlir::vector::InsertOp>(
        loc, insert.getScalar(), newLoop.getRegionIterArgs().back(),
        llvm::ArrayRef<mlir::OpFoldResult>{newLoop.getInductionVar()});
    llvm::SmallVector<mlir::Value> yielded(newYield.getOperands());
    yielded[k] = newLoop.getRegionIterArgs()[k];
    yielded.push_back(updated);
    newYield->setOperands(yielded);
    insert.erase();
    b.setInsertionPointAfter(newLoop);
    mlir::Value written =
        b.create<mlir::vector::TransferWriteOp>(
             loc, newLoop.getResults().back(), newLoop.getResult(k),
             mlir::ValueRange{*base}, llvm::ArrayRef<bool>{true})
            .getResult();
    for (unsigned i = 0; i < loop.getNumResults(); ++i)
      loop.getResult(i).replaceAllUsesWith(i == k ? written
                                                  : newLoop.getResult(i));
    loop.erase();
    loop = newLoop;
    iv = loop.getInductionVar();
    changed = true;
  }
  return {loop, changed};
}

/// Both passes: the innermost loops, or (`LaneLoops`) only those marked
/// kLaneLoopAttr by -tessel-lower-grid-to-cpu.
template <bool LaneLoops>
struct VectorizeLoadsStoresPass
    : public mlir::PassWrapper<VectorizeLoadsStoresPass<LaneLoops>,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VectorizeLoadsStoresPass)
  llvm::StringRef getArgument() const final {
    return LaneLoops ? "tessel-vectorize-lane-loops"
                     : "tessel-vectorize-loads-stores";
  }
  llvm::StringRef getDescription() const final {
    return LaneLoops ? "Turn aligned accesses contiguous in a lane loop of "
                       "the CPU's grid into vector transfers"
                     : "Turn aligned accesses contiguous in a vector loop "
                       "into vector transfers";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::vector::VectorDialect>();
  }
  void runOnOperation() override {
    llvm::SmallVector<mlir::scf::ForOp> loops;
    this->getOperation().walk([&](mlir::scf::ForOp loop) {
      if (LaneLoops) {
        if (loop->removeAttr(kLaneLoopAttr))
          loops.push_back(loop);
        return;
      }
      bool innermost = true;
      loop.getBody()->walk([&](mlir::scf::ForOp) { innermost = false; });
      if (innermost)
        loops.push_back(loop);
    });
    if (loops.empty())
      return;
    // What is known of every index value before any rewriting: the
    // operands vectorBase asks about are defined outside the loops and
    // stay as they are.
    mlir::DataFlowSolver solver;
    loadDivisibilityAnalysis(solver);
    if (mlir::failed(solver.initializeAndRun(this->getOperation())))
      return this->signalPassFailure();
    for (mlir::scf::ForOp loop : loops) {
      auto [result, changed] = vectorizeLoop(loop, solver);
      // A lane loop is unrolled whole, as -tessel-unroll-loops does the
      // vector loops before the grid is lowered: LLVM then makes vector
      // ops of the 32 copies (SLP). Left a loop, an s8 transpose's lanes
      // extracted and inserted one byte at a time through memory (20x
      // slower); LLVM unrolled the f32 ones itself.
      std::optional<int64_t> trips = mlir::constantTripCount(
          result.getLowerBound(), result.getUpperBound(), result.getStep());
      if (LaneLoops && changed && trips && *trips > 1)
        (void)mlir::loopUnrollByFactor(result, *trips);
    }
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createVectorizeLoadsStoresPass() {
  return std::make_unique<VectorizeLoadsStoresPass<false>>();
}

std::unique_ptr<mlir::Pass> createVectorizeLaneLoopsPass() {
  return std::make_unique<VectorizeLoadsStoresPass<true>>();
}

} // namespace tessel
