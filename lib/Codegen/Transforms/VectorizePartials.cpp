//===- VectorizePartials.cpp - -tessel-vectorize-partials -----------------===//
//
// The loop emitter reduces the minor dim of a row in 16 partial results
// (kReductionPartials, the compiler's reduction order): partial k combines
// the elements at k, 16 + k, 32 + k, ... of the row, in a loop that carries
// the 16 of them,
//
//   %p:16 = scf.for %i = 1 to 256 iter_args(%a0 = %x0, ..., %a15 = %x15) {
//     %o = arith.muli %i, %c16
//     %y0 = tensor.extract %in[apply_indexing #map(%row, %o)]
//     %b0 = <the reducer>(%a0, %y0)
//     %y1 = tensor.extract %in[apply_indexing #map(%row, %o + 1)]
//     %b1 = <the reducer>(%a1, %y1)
//     ...
//     scf.yield %b0, ..., %b15
//   }
//
// then folds them into the accumulator in order. Where lane k computes what
// lane 0 does one element on (LaneMatcher: the same ops on the same shared
// values, lane k's accumulator where lane 0 has its own, each read at lane
// 0's offset plus k), this pass makes the loop carry one vector<16xT>:
// vector reads at lane 0's offsets and lane 0's ops on vectors. Lane k of
// the vector is partial k, computed by the same ops from the same operands,
// so the bits do not change. The reducers it takes are those whose ops are
// exact per element and lowered alike for scalars and vectors: sums,
// differences, products, negations, absolute values, widenings; and the
// maximum and minimum of bf16
// and f16 values widened to f32, which the emitter spells out (compares,
// selects, the AND or OR of the bits for signed zeros), with the rounding
// back (bf16: integer code, Bf16Rounding.h; f16: LLVM's fptrunc). A maximum
// or minimum is always one of its operands, so a bf16 or f16 one of
// elements read as they are runs on their bits (minMaxOnBits, with
// MinMaxOnBits.h), and one of computed elements keeps its partials f32 in
// the loop and rounds once after it.
//
// LLVM's SLP vectorizer made one vector of one row's 16 f32 partial sums,
// but not of the 4 rows -tessel-jam-reduction-loops reads at once (which
// needs one carried value per row), and never of the bf16 or f16 maximum:
// 16 scalar chains of about 17 instructions per element, and for f16 a
// rounding per step (Zen 3, one thread: the row max of bf16[4096,4096]
// 8.6 ms, of f16 41 ms; a copy of their bytes 1.7 ms). The pass runs
// before -tessel-unroll-loops, which turns a loop of up to 8 chunks (a row
// shorter than 144 elements) into straight code. For a maximum or minimum
// on the bits it also folds the 16 partial results across the vector
// where none is a NaN (foldLanesOnBits): one by one, 17 dependent
// instructions each, they had cost more than a short row's loop; the
// elements after the last chunk go into the same reductions as one
// vector. A maximum or minimum of a row shorter than two chunks, which
// the emitter reduces one element a step, becomes at most two vector
// reads and the three reductions (shortRowOnBits). Loops of one trip,
// which the CPU's canonicalizers before this pass keep, go after it.
//
//===----------------------------------------------------------------------===//
#include "AffineCoefficients.h"
#include "LaneOps.h"
#include "MinMaxOnBits.h"
#include "RowReads.h"
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/bit.h"

#include <functional>

namespace tessel {
namespace {

using llvm::SmallVector;

/// Partial results a row loop may carry as lanes of one vector.
constexpr int64_t kMaxLanes = 16;
/// The steps a bf16 or f16 row maximum's loop on the bits keeps when it
/// takes two chunks a step (minMaxOnBits): as many as
/// -tessel-jam-reduction-loops asks of a row loop.
constexpr int64_t kMinPairedSteps = 16;

/// Lane k of `base` plus `k`: `base` itself for k = 0, `arith.addi base, k`
/// (either order) otherwise.
bool isLaneOffset(mlir::Value value, mlir::Value base, int64_t k) {
  if (k == 0)
    return value == base;
  auto add = value.getDefiningOp<mlir::arith::AddIOp>();
  if (!add)
    return false;
  for (int side = 0; side < 2; ++side)
    if (add->getOperand(side) == base)
      if (std::optional<int64_t> c =
              mlir::getConstantIntValue(add->getOperand(1 - side)))
        return *c == k;
  return false;
}

/// The position of `value` among `loop`'s iteration arguments, or -1.
int64_t iterArgNumber(mlir::scf::ForOp loop, mlir::Value value) {
  auto arg = llvm::dyn_cast<mlir::BlockArgument>(value);
  if (!arg || arg.getOwner() != loop.getBody() || arg.getArgNumber() == 0)
    return -1;
  return arg.getArgNumber() - 1;
}

/// Whether lane k's values in a loop body are lane 0's, one element on:
/// the two computations have the same ops on the same invariant values,
/// lane k's accumulator (iteration argument k) where lane 0 reads its own
/// (argument 0), and each read of lane k is at lane 0's offset plus k
/// (SLP's isomorphism, for the loop emitter's partial results).
class LaneMatcher {
public:
  explicit LaneMatcher(mlir::scf::ForOp loop) : loop(loop) {}

  /// Whether `vk` computes lane k of what `v0` computes for lane 0.
  bool matches(mlir::Value v0, mlir::Value vk, int64_t k) {
    int64_t arg0 = iterArgNumber(loop, v0);
    if (arg0 != -1 || iterArgNumber(loop, vk) != -1)
      return arg0 == 0 && iterArgNumber(loop, vk) == k;
    if (v0 == vk) // the same value in every lane: splat, where it is not
                  // computed from the lanes' reads
      return loop.isDefinedOutsideOfLoop(v0) ||
             mlir::matchPattern(v0, mlir::m_Constant());
    auto [it, inserted] = seen.try_emplace({v0, vk}, false);
    if (!inserted)
      return it->second;
    bool ok = compare(v0, vk, k);
    seen[{v0, vk}] = ok;
    if (ok && k == 1)
      lane0.insert(v0.getDefiningOp());
    return ok;
  }

  /// Lane 0's ops that become vector ops (not the values all lanes share).
  llvm::SmallPtrSet<mlir::Operation *, 16> lane0;

private:
  bool compare(mlir::Value v0, mlir::Value vk, int64_t k) {
    mlir::Operation *op0 = v0.getDefiningOp();
    mlir::Operation *opk = vk.getDefiningOp();
    if (!op0 || !opk || op0->getBlock() != loop.getBody() ||
        opk->getBlock() != loop.getBody() || op0->getName() != opk->getName() ||
        op0->getAttrDictionary() != opk->getAttrDictionary() ||
        op0->getNumOperands() != opk->getNumOperands() ||
        op0->getNumResults() != 1 || v0.getType() != vk.getType())
      return false;
    if (auto e0 = llvm::dyn_cast<mlir::tensor::ExtractOp>(op0))
      return consecutive(e0, llvm::cast<mlir::tensor::ExtractOp>(opk), k);
    if (!isLaneWise(op0))
      return false;
    for (auto [a, b] : llvm::zip(op0->getOperands(), opk->getOperands()))
      if (!matches(a, b, k))
        return false;
    return true;
  }

  /// Whether `ek` reads the element `k` past the one `e0` reads, in a
  /// tensor defined outside the loop.
  bool consecutive(mlir::tensor::ExtractOp e0, mlir::tensor::ExtractOp ek,
                   int64_t k) {
    if (e0.getTensor() != ek.getTensor() || e0.getIndices().size() != 1 ||
        !loop.isDefinedOutsideOfLoop(e0.getTensor()))
      return false;
    auto a0 = e0.getIndices()[0].getDefiningOp<ApplyIndexingOp>();
    auto ak = ek.getIndices()[0].getDefiningOp<ApplyIndexingOp>();
    if (!a0 || !ak || a0.getNumResults() != 1 ||
        a0.getIndexingMapAttr() != ak.getIndexingMapAttr())
      return false;
    int64_t position = -1;
    for (auto [i, operand] : llvm::enumerate(ak.getOperands())) {
      mlir::Value base = a0.getOperand(i);
      if (operand == base)
        continue;
      if (position != -1 || !isLaneOffset(operand, base, k))
        return false;
      position = i;
    }
    if (position == -1)
      return false;
    const IndexingMap &map = a0.getIndexingMap();
    return coefficientOf(map.getAffineMap().getResult(0),
                         operandVariable(map, position)) == 1;
  }

  mlir::scf::ForOp loop;
  llvm::DenseMap<std::pair<mlir::Value, mlir::Value>, bool> seen;
};

/// The ops of `loop`'s body that read its iteration arguments, directly or
/// through each other: the lanes' computations. Null where one of them is
/// read elsewhere than by another of them or the yield, or holds a region.
std::optional<llvm::SmallPtrSet<mlir::Operation *, 32>>
laneComputations(mlir::scf::ForOp loop) {
  llvm::SmallPtrSet<mlir::Operation *, 32> ops;
  for (mlir::Operation &op : loop.getBody()->without_terminator()) {
    bool reads = llvm::any_of(op.getOperands(), [&](mlir::Value v) {
      mlir::Operation *def = v.getDefiningOp();
      return iterArgNumber(loop, v) != -1 || (def && ops.contains(def));
    });
    if (!reads)
      continue;
    if (op.getNumRegions() != 0)
      return std::nullopt;
    ops.insert(&op);
  }
  mlir::Operation *yield = loop.getBody()->getTerminator();
  for (mlir::Operation *op : ops)
    for (mlir::Operation *user : op->getUsers())
      if (user != yield && !ops.contains(user))
        return std::nullopt;
  return ops;
}

/// In a new loop body at `b`: `loop`'s body but the lanes' computations
/// (`computed`), with `iv` for its induction variable. What is left of it
/// besides the index computations (lane k's reads) is dead.
mlir::IRMapping
cloneScalarBody(mlir::OpBuilder &b, mlir::scf::ForOp loop, mlir::Value iv,
                const llvm::SmallPtrSet<mlir::Operation *, 32> &computed) {
  mlir::IRMapping scalar;
  scalar.map(loop.getInductionVar(), iv);
  for (mlir::Operation &op : loop.getBody()->without_terminator())
    if (!computed.contains(&op))
      b.clone(op, scalar);
  return scalar;
}

/// The lanes' elements of lane 0's read `extract`, as one vector read at
/// its offset (`scalar` maps the offset into the new body).
mlir::Value readLanes(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::tensor::ExtractOp extract,
                      const mlir::IRMapping &scalar, mlir::VectorType type) {
  return readVector(b, loc, extract.getTensor(),
                    scalar.lookupOrDefault(extract.getIndices()[0]), type);
}

/// Replaces `loop` (at `b`) by the lanes of `partials`: lane k for its
/// result k.
void replaceByLanes(mlir::OpBuilder &b, mlir::scf::ForOp loop,
                    mlir::Value partials) {
  for (int64_t k = 0; k < loop.getNumResults(); ++k)
    loop.getResult(k).replaceAllUsesWith(b.create<mlir::vector::ExtractOp>(
        loop.getLoc(), partials, llvm::ArrayRef<int64_t>{k}));
  loop.erase();
}

/// The ops that compute `result` from `from` and `lane` in `block`: its
/// backward slice, stopping at those two values (and at values defined
/// outside `block`), less the ops that do not depend on `from` and are
/// also used elsewhere (the widening of an element or its NaN test, which
/// another reduction of the same row may share after CSE), and what those
/// are computed from. Empty where an op that depends on `from`, other than
/// `result`'s, is used outside it.
llvm::SmallPtrSet<mlir::Operation *, 32> stepOps(mlir::Block *block,
                                                 mlir::Value result,
                                                 mlir::Value from,
                                                 mlir::Value lane) {
  llvm::SmallPtrSet<mlir::Operation *, 32> ops;
  SmallVector<mlir::Value> work{result};
  while (!work.empty()) {
    mlir::Value v = work.pop_back_val();
    mlir::Operation *def = v.getDefiningOp();
    if (v == from || v == lane || !def || def->getBlock() != block ||
        mlir::matchPattern(v, mlir::m_Constant()) || !ops.insert(def).second)
      continue;
    if (def->getNumRegions() != 0)
      return {};
    for (mlir::Value operand : def->getOperands())
      work.push_back(operand);
  }
  // The ops that depend on `from`, in block order.
  llvm::SmallPtrSet<mlir::Operation *, 32> dependent;
  for (mlir::Operation &op : *block)
    if (ops.contains(&op) && llvm::any_of(op.getOperands(), [&](mlir::Value v) {
          mlir::Operation *def = v.getDefiningOp();
          return v == from || (def && dependent.contains(def));
        }))
      dependent.insert(&op);
  mlir::Operation *last = result.getDefiningOp();
  for (mlir::Operation *op : dependent)
    for (mlir::Operation *user : op->getUsers())
      if (op != last && !ops.contains(user))
        return {};
  // Those that do not, and are used elsewhere, stay where they are.
  for (bool changed = true; changed;) {
    changed = false;
    for (mlir::Operation *op : llvm::to_vector(ops)) {
      if (dependent.contains(op))
        continue;
      if (llvm::any_of(op->getUsers(), [&](mlir::Operation *user) {
            return !ops.contains(user);
          })) {
        ops.erase(op);
        changed = true;
      }
    }
  }
  return ops;
}

/// The position of the one operand in which `next`'s index (an
/// apply_indexing) is `previous`'s plus one, both constants, every other
/// operand the same; -1 where they are not so.
int64_t nextElement(mlir::tensor::ExtractOp previous,
                    mlir::tensor::ExtractOp next) {
  if (previous.getTensor() != next.getTensor() ||
      previous.getIndices().size() != 1 || next.getIndices().size() != 1)
    return -1;
  auto a = previous.getIndices()[0].getDefiningOp<ApplyIndexingOp>();
  auto b = next.getIndices()[0].getDefiningOp<ApplyIndexingOp>();
  if (!a || !b || a.getNumResults() != 1 ||
      a.getIndexingMapAttr() != b.getIndexingMapAttr())
    return -1;
  int64_t position = -1;
  for (auto [i, operand] : llvm::enumerate(b.getOperands())) {
    if (operand == a.getOperand(i))
      continue;
    std::optional<int64_t> x = mlir::getConstantIntValue(a.getOperand(i));
    std::optional<int64_t> y = mlir::getConstantIntValue(operand);
    if (position != -1 || !x || !y || *y != *x + 1)
      return -1;
    position = i;
  }
  if (position == -1)
    return -1;
  const IndexingMap &map = a.getIndexingMap();
  return coefficientOf(map.getAffineMap().getResult(0),
                       operandVariable(map, position)) == 1
             ? position
             : -1;
}

/// After minMaxOnBits: the loop emitter folds the 16 partial results into
/// the row's result one after the other, t_k = minMax(t_{k-1}, lane k),
/// each step the spelled-out widened maximum (minimum) and its rounding,
/// about 17 dependent instructions: for a short row more than the row's
/// loop (bf16 rows of 100: 12-20x a copy of their bytes). A row whose
/// length is not a multiple of 16 goes on the same way with its last
/// elements (the tail), t = minMax(t, x[32 + j]). Where no lane met a NaN
/// and neither t_0 nor the tail holds one, the result is the extreme of
/// t_0, lanes 1 to 15 and the tail, which the three reductions give
/// across the lanes (lane 0 left out: the first step, which may have been
/// folded with a constant accumulator, stays as it is), the tail read as
/// the row's last 16 elements (those read twice do not change an
/// extreme). Else the steps run as they were. The steps are left alone
/// where they are not that chain.
void foldLanesOnBits(mlir::OpBuilder &b, mlir::Value halves,
                     const BitExtremes &e, mlir::Value anyNaN,
                     const FloatBits &format, bool isMax) {
  namespace arith = mlir::arith;
  int64_t lanes = llvm::cast<mlir::VectorType>(halves.getType()).getDimSize(0);
  SmallVector<mlir::Value> lane(lanes, mlir::Value());
  for (mlir::Operation *user : halves.getUsers()) {
    auto extract = llvm::dyn_cast<mlir::vector::ExtractOp>(user);
    if (!extract || extract.getStaticPosition().size() != 1)
      return;
    int64_t k = extract.getStaticPosition()[0];
    if (k < 0 || k >= lanes || lane[k] || !extract.getResult().hasOneUse())
      return;
    lane[k] = extract.getResult();
  }
  for (mlir::Value l : lane)
    if (!l)
      return;
  mlir::Block *block = (*lane[0].getUsers().begin())->getBlock();
  // The step after `previous` whose other operand is an element of the
  // tail (then `element`, widened: the widening may be shared with another
  // reduction of the same row), or null.
  auto tailStep = [&](mlir::Value previous,
                      mlir::Value &element) -> mlir::Value {
    for (mlir::Operation *op = previous.getDefiningOp()->getNextNode(); op;
         op = op->getNextNode()) {
      auto trunc = llvm::dyn_cast<arith::TruncFOp>(op);
      if (!trunc || trunc.getType() != previous.getType())
        continue;
      std::optional<WidenedMinMax> m =
          matchWidenedMinMax(trunc.getIn(), previous);
      if (!m || !(isMax ? m->isMax : m->isMin))
        return nullptr;
      arith::ExtFOp wx = widenedHalf(m->x), wy = widenedHalf(m->y);
      if (wx.getIn() == previous && wy.getIn() == previous)
        return nullptr;
      element = wx.getIn() == previous ? m->y : m->x;
      return trunc.getResult();
    }
    return nullptr;
  };
  // Steps 1 to 15; t_0 is whatever the first step made of lane 0.
  SmallVector<mlir::Value> t{nullptr};
  llvm::SmallPtrSet<mlir::Operation *, 32> chain;
  auto addStep = [&](mlir::Value next, mlir::Value previous,
                     mlir::Value element) {
    llvm::SmallPtrSet<mlir::Operation *, 32> ops =
        stepOps(block, next, previous, element);
    if (ops.empty())
      return false;
    chain.insert(ops.begin(), ops.end());
    t.push_back(next);
    return true;
  };
  for (int64_t k = 1; k < lanes; ++k) {
    // Lane k's step, whose other operand is t_{k-1} (t_0: found here).
    mlir::Value previous, next;
    for (mlir::Operation *op = (*lane[k].getUsers().begin())->getNextNode();
         op && !next; op = op->getNextNode()) {
      auto trunc = llvm::dyn_cast<arith::TruncFOp>(op);
      if (!trunc || trunc.getType() != lane[k].getType())
        continue;
      std::optional<WidenedMinMax> m =
          matchWidenedMinMax(trunc.getIn(), lane[k]);
      if (!m || !(isMax ? m->isMax : m->isMin))
        return;
      arith::ExtFOp wx = widenedHalf(m->x), wy = widenedHalf(m->y);
      previous = wx.getIn() == lane[k] ? wy.getIn() : wx.getIn();
      next = trunc;
    }
    if (!next || previous == lane[k] || !previous.hasOneUse() ||
        (k > 1 && previous != t[k - 1]))
      return;
    t[0] = k == 1 ? previous : t[0];
    if (!addStep(next, previous, lane[k]))
      return;
  }
  // The tail: elements read one after the other, each the next one.
  llvm::SmallPtrSet<mlir::Operation *, 32> lanesChain = chain;
  size_t lanesSteps = t.size();
  SmallVector<mlir::tensor::ExtractOp> tail;
  int64_t position = -1;
  while (t.back().hasOneUse() && tail.size() < static_cast<size_t>(lanes)) {
    mlir::Value element;
    mlir::Value next = tailStep(t.back(), element);
    arith::ExtFOp widened = next ? widenedHalf(element) : nullptr;
    auto read = widened
                    ? widened.getIn().getDefiningOp<mlir::tensor::ExtractOp>()
                    : nullptr;
    if (!next || !read || read.getIndices().size() != 1 ||
        !read.getIndices()[0].getDefiningOp<ApplyIndexingOp>())
      break;
    if (!tail.empty()) {
      int64_t p = nextElement(tail.back(), read);
      if (p == -1 || (position != -1 && p != position))
        break;
      position = p;
    }
    if (!addStep(next, t.back(), element))
      break;
    tail.push_back(read);
  }
  // The tail's vector ends at its last element; it must not start before
  // the row (its offset in the row at least 15).
  std::optional<int64_t> lastOffset;
  if (tail.size() >= 2)
    lastOffset = mlir::getConstantIntValue(
        tail.back().getIndices()[0].getDefiningOp()->getOperand(position));
  bool tailAsVector = tail.size() >= 2 && lastOffset && *lastOffset >= 15;
  if (!tailAsVector) {
    // The tail's steps stay after the fold, as they were.
    chain = lanesChain;
    t.resize(lanesSteps);
    tail.clear();
  }

  mlir::Operation *last = t.back().getDefiningOp();
  mlir::Location loc = last->getLoc();
  b.setInsertionPoint(last);
  mlir::Type halfType = t[0].getType();
  mlir::Type bitsType = b.getIntegerType(format.width);
  auto lanesOfBits = mlir::VectorType::get({lanes}, bitsType);
  mlir::Value t0 = b.create<arith::BitcastOp>(loc, bitsType, t[0]);
  mlir::Value anyNaNLeft =
      b.create<arith::OrIOp>(loc, anyNaN, isNaNBits(b, loc, t0, format));
  mlir::Value tailBits;
  if (tailAsVector) {
    auto index = tail.back().getIndices()[0].getDefiningOp<ApplyIndexingOp>();
    mlir::IRMapping start;
    start.map(index.getOperand(position),
              b.create<arith::ConstantIndexOp>(loc, *lastOffset - (lanes - 1)));
    mlir::Operation *first = b.clone(*index, start);
    auto type = llvm::cast<mlir::VectorType>(halves.getType());
    mlir::Value padding =
        b.create<arith::ConstantOp>(loc, b.getZeroAttr(type.getElementType()));
    mlir::Value read = b.create<mlir::vector::TransferReadOp>(
        loc, type, tail.back().getTensor(),
        mlir::ValueRange{first->getResult(0)}, padding,
        llvm::ArrayRef<bool>{true});
    tailBits = b.create<arith::BitcastOp>(loc, lanesOfBits, read);
    anyNaNLeft =
        b.create<arith::OrIOp>(loc, anyNaNLeft,
                               b.create<mlir::vector::ReductionOp>(
                                   loc, mlir::vector::CombiningKind::OR,
                                   isNaNBits(b, loc, tailBits, format)));
  }
  auto choice =
      b.create<mlir::scf::IfOp>(loc, mlir::TypeRange{halfType}, anyNaNLeft,
                                /*withElseRegion=*/true);
  mlir::OpBuilder then = mlir::OpBuilder::atBlockBegin(choice.thenBlock());
  mlir::IRMapping map;
  for (mlir::Operation &op : *block)
    if (chain.contains(&op))
      then.clone(op, map);
  then.create<mlir::scf::YieldOp>(loc, map.lookup(t.back()));

  // Lanes 1 to 15 and the tail across: lane 0 made neutral, then reduced.
  mlir::OpBuilder otherwise = mlir::OpBuilder::atBlockBegin(choice.elseBlock());
  auto neutral = [&](mlir::Value v, uint64_t value) -> mlir::Value {
    return otherwise.create<mlir::vector::InsertOp>(
        loc, bitsConstant(otherwise, loc, bitsType, value), v,
        llvm::ArrayRef<int64_t>{0});
  };
  BitExtremes across{neutral(e.smax, format.sign()),
                     neutral(e.smin, format.sign() - 1), neutral(e.umax, 0)};
  if (tailBits)
    across = stepExtremes(otherwise, loc, across, tailBits);
  using Kind = mlir::vector::CombiningKind;
  BitExtremes h{otherwise.create<mlir::vector::ReductionOp>(loc, Kind::MAXSI,
                                                            across.smax),
                otherwise.create<mlir::vector::ReductionOp>(loc, Kind::MINSI,
                                                            across.smin),
                otherwise.create<mlir::vector::ReductionOp>(loc, Kind::MAXUI,
                                                            across.umax)};
  h = stepExtremes(otherwise, loc, h, t0);
  otherwise.create<mlir::scf::YieldOp>(
      loc, mlir::ValueRange{otherwise.create<arith::BitcastOp>(
               loc, halfType, extremeOf(otherwise, loc, h, format, isMax))});
  t.back().replaceAllUsesWith(choice.getResult(0));
  SmallVector<mlir::Operation *> dead;
  for (mlir::Operation &op : *block)
    if (chain.contains(&op))
      dead.push_back(&op);
  for (mlir::Operation *op : llvm::reverse(dead))
    op->erase();
}

/// The bf16 or f16 maximum or minimum `minMax` of a row loop (lane 0
/// above, every lane alike) as a loop on the bits themselves, 16 lanes per
/// 256 bits where f32 needs 512: each lane carries the three integer
/// reductions of MinMaxOnBits.h (vpmaxsw, vpminsw, vpmaxuw), which give
/// its maximum or minimum where it met no NaN. Where a lane met one, the
/// row runs again in the exact loop below (a row that holds a NaN is read
/// twice). Returns the new loop, which has replaced `loop`, or null where
/// the element is not read directly.
///
/// The exact loop orders the patterns by an integer key,
///
///   key(v) = v ^ ((v >>s 15) & 0x7fff)          (its own inverse)
///
/// as the floats (-0 below +0, as the emitter's AND and OR of the bits
/// have it) under a signed compare, so each lane carries the largest
/// (smallest) key and beside it the NaN that the emitter's selects let
/// win: once the accumulator (the first operand) is a NaN it stays, so the
/// first NaN of the lane; where the element is the first operand, the
/// last. After it a lane is its NaN made quiet (as the rounding back does)
/// where it met one, else the bits of its extreme key.
mlir::scf::ForOp
minMaxOnBits(mlir::scf::ForOp loop, const WidenedMinMax &minMax,
             const FloatBits &format, mlir::arith::ExtFOp widenedAcc,
             mlir::Value init, LaneMatcher &matcher,
             const llvm::SmallPtrSet<mlir::Operation *, 32> &computed) {
  namespace arith = mlir::arith;
  bool accFirst = minMax.x == widenedAcc.getResult();
  mlir::Value element = accFirst ? minMax.y : minMax.x;
  auto widened = element.getDefiningOp<arith::ExtFOp>();
  auto read = widened ? widened.getIn().getDefiningOp<mlir::tensor::ExtractOp>()
                      : nullptr;
  if (!read || !matcher.lane0.contains(read))
    return nullptr;
  int64_t lanes = loop.getNumRegionIterArgs();
  mlir::Location loc = loop.getLoc();
  mlir::OpBuilder b(loop);
  auto bits = mlir::VectorType::get({lanes}, b.getIntegerType(format.width));
  auto halves = llvm::cast<mlir::VectorType>(init.getType());
  auto constant = [&](mlir::OpBuilder &builder, uint64_t value) {
    return bitsConstant(builder, loc, bits, value);
  };
  auto isNaN = [&](mlir::OpBuilder &builder, mlir::Value v) {
    return isNaNBits(builder, loc, v, format);
  };
  auto key = [&](mlir::OpBuilder &builder, mlir::Value v) -> mlir::Value {
    mlir::Value sign = builder.create<arith::ShRSIOp>(
        loc, v, constant(builder, format.width - 1));
    return builder.create<arith::XOrIOp>(
        loc, v,
        builder.create<arith::AndIOp>(loc, sign,
                                      constant(builder, format.sign() - 1)));
  };
  auto readBits = [&](mlir::OpBuilder &nb, mlir::Location l, mlir::Value iv) {
    mlir::IRMapping scalar = cloneScalarBody(nb, loop, iv, computed);
    return nb.create<arith::BitcastOp>(l, bits,
                                       readLanes(nb, l, read, scalar, halves));
  };
  mlir::Value initBits = b.create<arith::BitcastOp>(loc, bits, init);

  // A long row takes two chunks a step, their 2 x 16 lanes one vector of
  // 512 bits (AVX-512: a zmm of 32 halves, three instructions per 64 bytes
  // where one chunk a step takes six; fewer lanes, as in tests, keep one
  // chunk a step), whose halves are then combined lane by lane:
  // lane k's extremes over its elements in either half, the same values,
  // since an extreme does not depend on the order its elements are met in.
  // A shorter row keeps one chunk a step: with two, its loop would have
  // fewer than the 16 steps -tessel-jam-reduction-loops asks of a row loop
  // before it reads 4 rows at once (Zen 5, bf16 rows of 512: 0.90x XLA:CPU
  // with two chunks a step, unjammed).
  //
  // Pairs start at even chunks of the row: each is the 64 bytes from an
  // even chunk on, one cache line where the row starts on one (Zen 5,
  // bf16[8192,4096]: 2.3 ms with every read across two lines, 2.05
  // without). So a loop that starts at an odd chunk (the emitter's starts
  // at 1: chunk 0 is its initial value) takes its first chunk alone, and
  // one whose chunks then leave one over its last.
  std::optional<int64_t> trips = mlir::constantTripCount(
      loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  std::optional<int64_t> first =
      mlir::getConstantIntValue(loop.getLowerBound());
  bool oddFirst = first && *first % 2 != 0;
  int64_t pairs = trips && mlir::getConstantIntValue(loop.getStep()) == 1 &&
                          2 * lanes * format.width == 512
                      ? (*trips - oddFirst) / 2
                      : 0;
  mlir::scf::ForOp fast;
  BitExtremes e;
  if (pairs >= kMinPairedSteps) {
    SmallVector<int64_t> both(2 * lanes), low(lanes), high(lanes);
    for (int64_t k = 0; k < 2 * lanes; ++k)
      both[k] = k;
    for (int64_t k = 0; k < lanes; ++k) {
      low[k] = k;
      high[k] = lanes + k;
    }
    BitExtremes start{initBits, initBits, initBits};
    mlir::Value lower = loop.getLowerBound();
    if (oddFirst) {
      start = stepExtremes(b, loc, start, readBits(b, loc, lower));
      lower = b.create<arith::AddIOp>(loc, lower, loop.getStep());
    }
    auto doubled = [&](mlir::Value v) -> mlir::Value {
      return b.create<mlir::vector::ShuffleOp>(loc, v, v, both);
    };
    mlir::Value pairedEnd = b.create<arith::AddIOp>(
        loc, lower, b.create<arith::ConstantIndexOp>(loc, 2 * pairs));
    fast = b.create<mlir::scf::ForOp>(
        loc, lower, pairedEnd, b.create<arith::ConstantIndexOp>(loc, 2),
        mlir::ValueRange{doubled(start.smax), doubled(start.smin),
                         doubled(start.umax)},
        [&](mlir::OpBuilder &nb, mlir::Location l, mlir::Value iv,
            mlir::ValueRange args) {
          mlir::Value next = nb.create<arith::AddIOp>(l, iv, loop.getStep());
          mlir::Value x = nb.create<mlir::vector::ShuffleOp>(
              l, readBits(nb, l, iv), readBits(nb, l, next), both);
          BitExtremes p = stepExtremes(nb, l, {args[0], args[1], args[2]}, x);
          nb.create<mlir::scf::YieldOp>(
              l, mlir::ValueRange{p.smax, p.smin, p.umax});
        });
    auto half = [&](mlir::Value v, llvm::ArrayRef<int64_t> lanesOf) {
      return b.create<mlir::vector::ShuffleOp>(loc, v, v, lanesOf);
    };
    auto halves = [&](unsigned r) {
      return std::pair<mlir::Value, mlir::Value>{half(fast.getResult(r), low),
                                                 half(fast.getResult(r), high)};
    };
    auto [smaxLow, smaxHigh] = halves(0);
    auto [sminLow, sminHigh] = halves(1);
    auto [umaxLow, umaxHigh] = halves(2);
    e = {b.create<arith::MaxSIOp>(loc, smaxLow, smaxHigh),
         b.create<arith::MinSIOp>(loc, sminLow, sminHigh),
         b.create<arith::MaxUIOp>(loc, umaxLow, umaxHigh)};
    if (oddFirst + 2 * pairs != *trips)
      e = stepExtremes(
          b, loc, e,
          readBits(b, loc,
                   b.create<arith::SubIOp>(loc, loop.getUpperBound(),
                                           loop.getStep())));
  } else {
    fast = b.create<mlir::scf::ForOp>(
        loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
        mlir::ValueRange{initBits, initBits, initBits},
        [&](mlir::OpBuilder &nb, mlir::Location l, mlir::Value iv,
            mlir::ValueRange args) {
          BitExtremes p = stepExtremes(nb, l, {args[0], args[1], args[2]},
                                       readBits(nb, l, iv));
          nb.create<mlir::scf::YieldOp>(
              l, mlir::ValueRange{p.smax, p.smin, p.umax});
        });
    e = {fast.getResult(0), fast.getResult(1), fast.getResult(2)};
  }
  mlir::Value anyNaN = b.create<mlir::vector::ReductionOp>(
      loc, mlir::vector::CombiningKind::OR, sawNaN(b, loc, e, format));
  auto choice = b.create<mlir::scf::IfOp>(loc, mlir::TypeRange{bits}, anyNaN,
                                          /*withElseRegion=*/true);

  mlir::OpBuilder then = mlir::OpBuilder::atBlockBegin(choice.thenBlock());
  auto exact = then.create<mlir::scf::ForOp>(
      loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
      mlir::ValueRange{key(then, initBits), initBits},
      [&](mlir::OpBuilder &nb, mlir::Location l, mlir::Value iv,
          mlir::ValueRange args) {
        mlir::Value x = readBits(nb, l, iv);
        mlir::Value extreme =
            minMax.isMax
                ? mlir::Value(nb.create<arith::MaxSIOp>(l, args[0], key(nb, x)))
                : mlir::Value(
                      nb.create<arith::MinSIOp>(l, args[0], key(nb, x)));
        mlir::Value nan = args[1];
        nan = accFirst ? nb.create<arith::SelectOp>(l, isNaN(nb, nan), nan, x)
                       : nb.create<arith::SelectOp>(l, isNaN(nb, x), x, nan);
        nb.create<mlir::scf::YieldOp>(l, mlir::ValueRange{extreme, nan});
      });
  mlir::Value nan = exact.getResult(1);
  mlir::Value quiet =
      then.create<arith::OrIOp>(loc, nan, constant(then, format.quiet));
  then.create<mlir::scf::YieldOp>(
      loc, mlir::ValueRange{then.create<arith::SelectOp>(
               loc, isNaN(then, nan), quiet, key(then, exact.getResult(0)))});

  mlir::OpBuilder otherwise = mlir::OpBuilder::atBlockBegin(choice.elseBlock());
  otherwise.create<mlir::scf::YieldOp>(
      loc, extremeOf(otherwise, loc, e, format, minMax.isMax));
  mlir::Value partials =
      b.create<arith::BitcastOp>(loc, halves, choice.getResult(0));
  replaceByLanes(b, loop, partials);
  foldLanesOnBits(b, partials, e, anyNaN, format, minMax.isMax);
  return fast;
}

/// A row's maximum or minimum one element a step: the loop emitter's row
/// shorter than two chunks of partial results (4 to 31 elements), whose
/// step is the maximum (minimum) of the accumulator and the element, in
/// either order (f32: arith.maximumf; bf16, f16: spelled out on widened
/// values and rounded back),
///
///   %m = scf.for %i = 0 to 24 iter_args(%acc = %init) {
///     %x = tensor.extract %in[apply_indexing #map(%row, %i)]
///     scf.yield <the maximum of %acc and %x>
///   }
///
/// as the three reductions of MinMaxOnBits.h over at most two vectors
/// that cover the row (the first and the last w elements, w the largest
/// power of two up to the row's length and 16; elements read twice do not
/// change an extreme), then the initial value: one vector read where there
/// had been a chain of 17 instructions per element (Zen 3, one thread,
/// 16 MiB: bf16 rows of 16 9.5 ms, a copy 0.9). A row with a NaN, or a NaN
/// initial value, runs the loop as it was. False where `loop` is not such
/// a loop.
bool shortRowOnBits(mlir::scf::ForOp loop) {
  namespace arith = mlir::arith;
  if (loop.getNumRegionIterArgs() != 1)
    return false;
  mlir::BlockArgument acc = loop.getRegionIterArgs()[0];
  std::optional<FloatBits> format = FloatBits::of(acc.getType());
  std::optional<int64_t> trips = mlir::constantTripCount(
      loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  std::optional<int64_t> step = mlir::getConstantIntValue(loop.getStep());
  if (!format || !trips || *trips < 4 || *trips >= 2 * kMaxLanes || step != 1 ||
      !acc.hasOneUse())
    return false;
  // f32 rows of up to 8 are unrolled, and LLVM vectorizes their threads
  // (Zen 3, one thread, 16 MiB of rows of 8: 1.09 ms so, 1.19 on the bits).
  if (format->width == 32 && *trips <= 8)
    return false;
  for (mlir::Operation &op : loop.getBody()->without_terminator())
    if (!mlir::isMemoryEffectFree(&op) || op.getNumRegions() != 0)
      return false;
  mlir::Value result =
      llvm::cast<mlir::scf::YieldOp>(loop.getBody()->getTerminator())
          .getOperand(0);
  // The element, and which of the two the step computes.
  mlir::Value element;
  bool isMax = false;
  if (format->width == 32) {
    std::optional<F32MinMaxStep> f32Step = matchF32MinMaxStep(loop);
    if (!f32Step)
      return false;
    isMax = f32Step->isMax;
    element = f32Step->element;
  } else {
    auto rounding = result.getDefiningOp<arith::TruncFOp>();
    if (!rounding || rounding.getType() != acc.getType() ||
        rounding.getRoundingmodeAttr())
      return false;
    std::optional<WidenedMinMax> m = matchWidenedMinMax(rounding.getIn(), acc);
    if (!m || !(m->isMax || m->isMin))
      return false;
    isMax = m->isMax;
    arith::ExtFOp wx = widenedHalf(m->x), wy = widenedHalf(m->y);
    element = wx.getIn() == acc ? wy.getIn() : wx.getIn();
  }
  // Read as it is, one element on per step.
  std::optional<RowRead> read = rowRead(loop, element);
  if (element == acc || !read)
    return false;

  mlir::Location loc = loop.getLoc();
  mlir::OpBuilder b(loop);
  int64_t n = *trips;
  int64_t width = std::min<int64_t>(
      kMaxLanes,
      static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(n))));
  auto halves = mlir::VectorType::get({width}, acc.getType());
  auto bits = mlir::VectorType::get({width}, b.getIntegerType(format->width));
  auto lanesAt = [&](int64_t offset) -> mlir::Value {
    mlir::Value iv =
        b.create<arith::AddIOp>(loc, loop.getLowerBound(),
                                b.create<arith::ConstantIndexOp>(loc, offset));
    return b.create<arith::BitcastOp>(
        loc, bits, readLanes(b, loc, loop, *read, halves, iv));
  };
  mlir::Value first = lanesAt(0);
  BitExtremes e{first, first, first};
  if (n > width)
    e = stepExtremes(b, loc, e, lanesAt(n - width));
  using Kind = mlir::vector::CombiningKind;
  BitExtremes h{b.create<mlir::vector::ReductionOp>(loc, Kind::MAXSI, e.smax),
                b.create<mlir::vector::ReductionOp>(loc, Kind::MINSI, e.smin),
                b.create<mlir::vector::ReductionOp>(loc, Kind::MAXUI, e.umax)};
  h = stepExtremes(b, loc, h,
                   b.create<arith::BitcastOp>(loc, bits.getElementType(),
                                              loop.getInitArgs()[0]));
  replaceByExtremeOrLoop(b, loop, h, *format, isMax);
  return true;
}

/// `loop` carrying one vector of its lanes' partial results, or null where
/// it is not such a loop (above).
mlir::scf::ForOp vectorizePartials(mlir::scf::ForOp loop) {
  int64_t lanes = loop.getNumRegionIterArgs();
  if (lanes < 4 || lanes > kMaxLanes || !llvm::isPowerOf2_64(lanes))
    return nullptr;
  // Short rows too: LLVM vectorizes the threads of an unrolled short row
  // where they are not guarded, but slower than a vector per row whose
  // maximum's lanes are folded on the bits (foldLanesOnBits; Zen 3, one
  // thread, 16 MiB: bf16 maxima of rows of 64 2.3 -> 0.34 ms, f16 11.1 ->
  // 0.44; f32 sums of rows of 64 1.5 -> 0.82, of 128 2.9 -> 0.74).
  mlir::Type element = loop.getRegionIterArgs()[0].getType();
  if (!llvm::isa<mlir::FloatType>(element))
    return nullptr;
  for (mlir::BlockArgument acc : loop.getRegionIterArgs())
    if (acc.getType() != element)
      return nullptr;
  auto yield = llvm::cast<mlir::scf::YieldOp>(loop.getBody()->getTerminator());
  std::optional<llvm::SmallPtrSet<mlir::Operation *, 32>> computed =
      laneComputations(loop);
  if (!computed)
    return nullptr;
  mlir::Value result0 = yield.getOperand(0);
  mlir::Operation *def0 = result0.getDefiningOp();
  if (!def0 || !computed->contains(def0))
    return nullptr;
  LaneMatcher matcher(loop);
  for (int64_t k = 1; k < lanes; ++k)
    if (yield.getOperand(k) == result0 ||
        !matcher.matches(result0, yield.getOperand(k), k))
      return nullptr;

  // A bf16 or f16 maximum or minimum, whose value is always one of its
  // operands, needs no rounding between the steps: lane 0's accumulator is
  // read only widened, and what it yields is a rounding of such a value.
  // One of elements read as they are runs on their bits (minMaxOnBits);
  // else the partials stay f32 in the loop, rounded once after it: the
  // same bits, since the rounding of a widened value gives it back, and of
  // a NaN its sign and payload made quiet, whether it is done once or at
  // every step (a NaN operand is passed through by selects only).
  mlir::BlockArgument acc0 = loop.getRegionIterArgs()[0];
  mlir::arith::ExtFOp widenedAcc =
      acc0.hasOneUse() ? widenedHalf((*acc0.getUsers().begin())->getResult(0))
                       : nullptr;
  auto rounding = result0.getDefiningOp<mlir::arith::TruncFOp>();
  std::optional<WidenedMinMax> minMax;
  if (widenedAcc && rounding && rounding.getType() == element)
    minMax = matchWidenedMinMax(rounding.getIn(), acc0);
  bool inF32 = minMax.has_value();

  mlir::Location loc = loop.getLoc();
  mlir::OpBuilder b(loop);
  auto vectorOf = [&](mlir::Type type) {
    return mlir::VectorType::get({lanes}, type);
  };
  mlir::Value init =
      b.create<mlir::arith::ConstantOp>(loc, b.getZeroAttr(vectorOf(element)));
  for (int64_t k = 0; k < lanes; ++k)
    init = b.create<mlir::vector::InsertOp>(loc, loop.getInitArgs()[k], init,
                                            llvm::ArrayRef<int64_t>{k});
  if (minMax && (minMax->isMax || minMax->isMin))
    if (mlir::scf::ForOp onBits =
            minMaxOnBits(loop, *minMax, *FloatBits::of(element), widenedAcc,
                         init, matcher, *computed))
      return onBits;
  if (inF32)
    init = b.create<mlir::arith::ExtFOp>(loc, vectorOf(b.getF32Type()), init);
  auto vectorized = b.create<mlir::scf::ForOp>(
      loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
      mlir::ValueRange{init},
      [&](mlir::OpBuilder &nb, mlir::Location l, mlir::Value iv,
          mlir::ValueRange args) {
        // The scalar body but the lanes' computations, then lane 0's
        // computation again on vectors.
        mlir::IRMapping scalar = cloneScalarBody(nb, loop, iv, *computed);
        llvm::DenseMap<mlir::Value, mlir::Value> vectors;
        std::function<mlir::Value(mlir::Value)> vector =
            [&](mlir::Value v) -> mlir::Value {
          if (iterArgNumber(loop, v) == 0 ||
              (inF32 && v == widenedAcc.getResult()))
            return args[0];
          if (mlir::Value done = vectors.lookup(v))
            return done;
          mlir::Operation *op = v.getDefiningOp();
          mlir::Value result;
          if (!op || !matcher.lane0.contains(op)) {
            result = nb.create<mlir::vector::SplatOp>(
                l, scalar.lookupOrDefault(v), vectorOf(v.getType()));
          } else if (auto extract =
                         llvm::dyn_cast<mlir::tensor::ExtractOp>(op)) {
            result = readLanes(nb, l, extract, scalar, vectorOf(v.getType()));
          } else {
            mlir::IRMapping operands;
            for (mlir::Value operand : op->getOperands())
              operands.map(operand, vector(operand));
            mlir::Operation *copy = nb.clone(*op, operands);
            copy->getResult(0).setType(vectorOf(v.getType()));
            result = copy->getResult(0);
          }
          vectors[v] = result;
          return result;
        };
        nb.create<mlir::scf::YieldOp>(
            l, vector(inF32 ? rounding.getIn() : result0));
      });
  mlir::Value partials = vectorized.getResult(0);
  if (inF32)
    partials = b.create<mlir::arith::TruncFOp>(loc, vectorOf(element), partials,
                                               nullptr, nullptr);
  replaceByLanes(b, loop, partials);
  return vectorized;
}

struct VectorizePartialsPass
    : public mlir::PassWrapper<VectorizePartialsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VectorizePartialsPass)
  llvm::StringRef getArgument() const final {
    return "tessel-vectorize-partials";
  }
  llvm::StringRef getDescription() const final {
    return "Carry a row loop's partial results (lane k: elements k, N + k, "
           "...) as one vector (the CPU)";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::arith::ArithDialect, mlir::scf::SCFDialect,
                    mlir::vector::VectorDialect>();
  }
  void runOnOperation() override {
    SmallVector<mlir::scf::ForOp> loops;
    getOperation().walk([&](mlir::scf::ForOp loop) { loops.push_back(loop); });
    for (mlir::scf::ForOp loop : loops)
      if (!vectorizePartials(loop))
        shortRowOnBits(loop);
    // The CPU pipeline's canonicalizers before this pass keep loops of one
    // trip (kOneTripLoopPattern in Pipeline.cpp), so that a row of two
    // chunks of partial results has its loop here; now they go, as the
    // canonicalizer would have them go, and so do loops of no trip.
    mlir::IRRewriter rewriter(&getContext());
    loops.clear();
    getOperation().walk([&](mlir::scf::ForOp loop) { loops.push_back(loop); });
    for (mlir::scf::ForOp loop : llvm::reverse(loops)) {
      std::optional<int64_t> trips = mlir::constantTripCount(
          loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
      if (trips == 0) {
        loop.replaceAllUsesWith(loop.getInitArgs());
        loop.erase();
      } else if (trips == 1) {
        rewriter.setInsertionPoint(loop);
        (void)loop.promoteIfSingleIteration(rewriter);
      }
    }
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createVectorizePartialsPass() {
  return std::make_unique<VectorizePartialsPass>();
}

} // namespace tessel
