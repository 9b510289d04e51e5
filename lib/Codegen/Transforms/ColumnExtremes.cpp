//===- ColumnExtremes.cpp - -tessel-column-extremes -----------------------===//
//
// A column maximum or minimum of f32 (bf16, f16: below) keeps one
// accumulator per column in a shared tile. After -tessel-lower-grid-to-cpu
// a block is a loop over its rows (a few at a time) around a loop over the
// tile's threads:
//
//   %t = scf.for %r = 0 to 256 step 8 iter_args(%tile = %t0) {
//     %u = scf.for %th = 0 to 4096 iter_args(%acc = %tile) {
//       %x0..%x7 = <the column's elements of rows %r .. %r + 7>
//       %m = tensor.extract %acc[%th]
//       %m' = arith.maximumf(... arith.maximumf(%m, %x0) ..., %x7)
//       scf.yield (tensor.insert %m' into %acc[%th])
//     }
//   }
//
// (the work behind the threads' bounds check, an scf.if, or not). HLO's
// maximum, NaNs and signed zeros included, costs LLVM a vmaxps and about
// five compares and blends per vector on x86. This pass runs the block
// first on tiles of its own with one instruction per element for the
// maximum, a compare and select that may drop a NaN and keep either of two
// equal zeros (vmaxps), and one for a sum of each column (vaddps), which
// shows whether the column had a NaN and, where its maximum is a zero,
// that zero's sign:
//
//   %w, %s = <a copy of %t0; -0 where %t0 is not a zero, else %t0>
//   %f:2 = scf.for %r = 0 to 248 step 8 iter_args(%tile = %w, %sums = %s) {
//     scf.for %th ... {
//       %m' = <%x where %x > %m, else %m, for %x in %x0..%x7>
//       %sums[%th] = %sums[%th] + ((%x0 + %x1) + ...) fastmath<reassoc>
//     }
//   }
//   %last:3 = <the step of rows 248 .. 255, whose %m' is the sum where it
//              is a zero, and which also says whether a column's sum or
//              %m' was a NaN, or %m' a zero and the sum not one>
//   %t = scf.if %last#2 { <the loop as it was, on %t0> } else { %last#0 }
//
// A maximum that is a zero means no element was above it, so the sum is a
// zero where every element was one, and then +0 where one was (in any
// order of the additions), as HLO's maximum; where some element was below
// zero the sign is not known and the loop as it was runs. For a minimum
// the sums are of the negated elements and the zero is the negated sum.
// The loop as it was also runs where a sum is a NaN (a NaN element, or
// infinities of both signs) or a column's result is one (its initial value
// was a NaN: the select keeps it), so the bits are those of the loop as it
// was in every case; a ReLU's dead unit (a column of zeros) costs nothing
// more.
//
// bf16 and f16 tiles too: the emitter spells their step out on widened
// values (a compare, four selects, the AND of the bits for equal values)
// and rounds back, about 17 instructions (matchWidenedMinMax). Here the
// compare and select runs on the widened values in an f32 tile, as the
// sums do, and after the last step the extremes are narrowed into a tile
// of the element type (bf16: the upper half of the f32 bits; f16: a
// rounding, exact for a widened f16 value). A bf16 tile narrowed at every
// step cost a widening and a narrowing a step, and LLVM made the compare
// and select of two widened values (bitcasts of integers) an integer
// blend after the compare (bf16[8192,4096], one thread, alternated 4
// times: 2.79-3.04 ms, against 2.51-2.89 with the f32 tile).
//
// Zen 5, one thread, f32[8192,4096]: 5.3 ms as the loop was, 4.4 ms with
// the sums in a tile. A sum of the whole block (no tile; the loop as it was
// for every zero result) took 4.25 ms, but 7.3 ms where one column in 50
// was all zeros. bf16[8192,4096]: 5.6 ms as the loop was.
//
//===----------------------------------------------------------------------===//
#include "MinMaxOnBits.h"

#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"

namespace tessel {
namespace {

namespace arith = mlir::arith;
namespace scf = mlir::scf;
using llvm::SmallVector;

/// Blocks of fewer rows are left alone. Not measured below 72 rows, where
/// the pass still pays (f32[72,4096], Zen 5: 0.025 -> 0.013 ms); loops of
/// up to 8 steps are unrolled before it anyway.
constexpr int64_t kMinRows = 64;

/// A block's loop over its rows whose step is a chain of maxima (minima)
/// of one tile element and that column's elements.
struct ColumnSteps {
  scf::ForOp rows;
  /// The loop over the tile's threads, the only user of the tile.
  scf::ForOp threads;
  /// The threads' bounds check around the work, or null.
  scf::IfOp guard;
  /// The block the work is in: `threads`' body or `guard`'s then-block.
  mlir::Block *work = nullptr;
  mlir::tensor::ExtractOp read;
  mlir::tensor::InsertOp write;
  /// The steps from `read` to `write`: for f32 a maximumf (minimumf),
  /// for bf16 and f16 the rounding of the emitter's maximum (minimum) of
  /// widened values (matchWidenedMinMax); `element` the column's element
  /// (widened).
  struct Link {
    mlir::Operation *op;
    mlir::Value element;
  };
  SmallVector<Link> chain;
  bool isMax = false;
  /// The tile's element type: f32, bf16 or f16.
  mlir::Type element;
  /// `rows`' trip count.
  int64_t trips = 0;
};

/// Whether every op that uses `widened` (the accumulator widened) in a
/// step of the emitter's maximum of widened values, and every op that uses
/// those, is one of the step's compares, selects, bitcasts, ANDs or ORs,
/// up to `rounding`: nothing else reads the accumulator.
bool onlyTheStepReads(mlir::Value widened, mlir::Operation *rounding) {
  SmallVector<mlir::Value> work{widened};
  llvm::SmallPtrSet<mlir::Operation *, 16> seen;
  while (!work.empty()) {
    mlir::Value v = work.pop_back_val();
    for (mlir::Operation *user : v.getUsers()) {
      if (user == rounding || !seen.insert(user).second)
        continue;
      if (!llvm::isa<arith::CmpFOp, arith::SelectOp, arith::BitcastOp,
                     arith::AndIOp, arith::OrIOp>(user) ||
          seen.size() > 32)
        return false;
      for (mlir::Value result : user->getResults())
        work.push_back(result);
    }
  }
  return true;
}

/// The chain of a bf16 or f16 tile element (`s.read`) to `s.write`, or
/// false.
bool matchHalfChain(ColumnSteps &s) {
  mlir::Value v = s.read.getResult();
  while (v != s.write.getScalar()) {
    if (!v.hasOneUse() || s.chain.size() > 64)
      return false;
    std::optional<WidenedMinMax> step;
    mlir::Operation *rounding = nullptr;
    for (mlir::Operation &op : *s.work) {
      auto trunc = llvm::dyn_cast<arith::TruncFOp>(op);
      if (!trunc || trunc.getType() != s.element)
        continue;
      if ((step = matchWidenedMinMax(trunc.getIn(), v))) {
        rounding = trunc;
        break;
      }
    }
    if (!step || !(step->isMax || step->isMin) ||
        (!s.chain.empty() && step->isMax != s.isMax))
      return false;
    arith::ExtFOp wx = widenedHalf(step->x), wy = widenedHalf(step->y);
    bool accFirst = wx.getIn() == v;
    if (wx.getIn() == wy.getIn())
      return false;
    mlir::Value widenedAcc = accFirst ? step->x : step->y;
    if (!onlyTheStepReads(widenedAcc, rounding))
      return false;
    s.isMax = step->isMax;
    s.chain.push_back({rounding, accFirst ? step->y : step->x});
    v = rounding->getResult(0);
  }
  return !s.chain.empty();
}

/// The chain of an f32 tile element (`s.read`) to `s.write`: from the read
/// forward, one use at a time, maximumf (minimumf) ops without fast-math
/// flags; or false.
bool matchF32Chain(ColumnSteps &s) {
  mlir::Value v = s.read.getResult();
  while (v != s.write.getScalar()) {
    if (!v.hasOneUse())
      return false;
    mlir::Operation *user = *v.getUsers().begin();
    bool isMax = llvm::isa<arith::MaximumFOp>(user);
    if (!(isMax || llvm::isa<arith::MinimumFOp>(user)) ||
        user->getBlock() != s.work ||
        user->getOperand(0) == user->getOperand(1) ||
        (!s.chain.empty() && isMax != s.isMax) ||
        llvm::cast<arith::ArithFastMathInterface>(user)
                .getFastMathFlagsAttr()
                .getValue() != arith::FastMathFlags::none)
      return false;
    s.isMax = isMax;
    s.chain.push_back({user, user->getOperand(user->getOperand(0) == v)});
    v = user->getResult(0);
  }
  return !s.chain.empty();
}

std::optional<ColumnSteps> matchColumnSteps(scf::ForOp rows) {
  ColumnSteps s;
  s.rows = rows;
  if (rows.getNumRegionIterArgs() != 1)
    return std::nullopt;
  mlir::BlockArgument tile = rows.getRegionIterArgs()[0];
  auto tileType = llvm::dyn_cast<mlir::RankedTensorType>(tile.getType());
  if (!tileType || tileType.getRank() != 1 || !tile.hasOneUse())
    return std::nullopt;
  s.element = tileType.getElementType();
  if (!(s.element.isF32() || s.element.isBF16() || s.element.isF16()))
    return std::nullopt;
  s.threads = llvm::dyn_cast<scf::ForOp>(*tile.getUsers().begin());
  if (!s.threads || s.threads->getBlock() != rows.getBody() ||
      s.threads.getNumRegionIterArgs() != 1 ||
      s.threads.getInitArgs()[0] != tile ||
      !s.threads.getResult(0).hasOneUse() ||
      s.threads->getNextNode() != rows.getBody()->getTerminator() ||
      rows.getBody()->getTerminator()->getOperand(0) != s.threads.getResult(0))
    return std::nullopt;

  mlir::BlockArgument acc = s.threads.getRegionIterArgs()[0];
  mlir::Value yielded = s.threads.getBody()->getTerminator()->getOperand(0);
  s.work = s.threads.getBody();
  if (auto guard = yielded.getDefiningOp<scf::IfOp>()) {
    if (guard->getBlock() != s.threads.getBody() ||
        guard->getNextNode() != s.threads.getBody()->getTerminator() ||
        guard.getNumResults() != 1 || guard.getElseRegion().empty() ||
        guard.elseYield().getOperand(0) != acc)
      return std::nullopt;
    s.guard = guard;
    s.work = guard.thenBlock();
    yielded = guard.thenYield().getOperand(0);
  }
  s.write = yielded.getDefiningOp<mlir::tensor::InsertOp>();
  if (!s.write || s.write->getBlock() != s.work || s.write.getDest() != acc ||
      s.write.getIndices().size() != 1 || !s.write.getResult().hasOneUse())
    return std::nullopt;
  for (mlir::OpOperand &use : acc.getUses()) {
    mlir::Operation *user = use.getOwner();
    if (user == s.write || (s.guard && user == s.guard.elseYield()))
      continue;
    auto read = llvm::dyn_cast<mlir::tensor::ExtractOp>(user);
    if (!read || s.read || read->getBlock() != s.work ||
        read.getIndices() != s.write.getIndices())
      return std::nullopt;
    s.read = read;
  }
  if (!s.read || s.write.getScalar() == s.read.getResult())
    return std::nullopt;

  if (!(s.element.isF32() ? matchF32Chain(s) : matchHalfChain(s)))
    return std::nullopt;

  std::optional<int64_t> trips = mlir::constantTripCount(
      rows.getLowerBound(), rows.getUpperBound(), rows.getStep());
  if (!trips || *trips * static_cast<int64_t>(s.chain.size()) < kMinRows)
    return std::nullopt;
  s.trips = *trips;
  return s;
}

/// The sum of `xs` as a tree of pairs.
mlir::Value sumOf(mlir::OpBuilder &b, mlir::Location loc,
                  SmallVector<mlir::Value> xs) {
  auto reassoc = arith::FastMathFlagsAttr::get(b.getContext(),
                                               arith::FastMathFlags::reassoc);
  while (xs.size() > 1) {
    SmallVector<mlir::Value> pairs;
    for (size_t i = 0; i + 1 < xs.size(); i += 2)
      pairs.push_back(b.create<arith::AddFOp>(loc, xs[i], xs[i + 1], reassoc));
    if (xs.size() % 2)
      pairs.push_back(xs.back());
    xs = std::move(pairs);
  }
  return xs.front();
}

/// `v`, an f32 that is a widened `element` (bf16, f16) or a NaN, as that
/// type: bf16's upper half, f16 rounded (exact for such a value).
mlir::Value narrowTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Type element,
                     mlir::Value v) {
  if (element.isF32())
    return v;
  if (element.isF16())
    return b.create<arith::TruncFOp>(loc, element, v);
  mlir::Value bits = b.create<arith::BitcastOp>(loc, b.getI32Type(), v);
  bits = b.create<arith::ShRUIOp>(loc, bits,
                                  b.create<arith::ConstantIntOp>(loc, 16, 32));
  bits = b.create<arith::TruncIOp>(loc, b.getI16Type(), bits);
  return b.create<arith::BitcastOp>(loc, element, bits);
}

/// A loop over the `count` elements of a tile, carrying `tiles`: `body`
/// gives the values yielded for element `i`.
mlir::ValueRange forEachElement(
    mlir::OpBuilder &b, mlir::Location loc, int64_t count,
    mlir::ValueRange tiles,
    llvm::function_ref<SmallVector<mlir::Value>(
        mlir::OpBuilder &, mlir::Location, mlir::Value, mlir::ValueRange)>
        body) {
  return b
      .create<scf::ForOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0),
                          b.create<arith::ConstantIndexOp>(loc, count),
                          b.create<arith::ConstantIndexOp>(loc, 1), tiles,
                          [&](mlir::OpBuilder &nb, mlir::Location l,
                              mlir::Value i, mlir::ValueRange args) {
                            nb.create<scf::YieldOp>(l, body(nb, l, i, args));
                          })
      .getResults();
}

/// Clones `s.work`'s ops (not its terminator) at `b` with `map`: the
/// chain as compare-and-selects, and the column's sum in `sums` grown by
/// its elements (negated for a minimum). At the last step (`bad` given)
/// the sums are not written; a zero extreme takes the sign of the sum (its
/// negation for a minimum), and the result says whether a NaN, or a zero
/// extreme whose sum is not a zero, was seen. Returns the new tile, sums
/// and flag.
SmallVector<mlir::Value> cloneWork(mlir::OpBuilder &b, ColumnSteps &s,
                                   mlir::IRMapping &map, mlir::Value sums,
                                   mlir::Value bad) {
  mlir::Location loc = s.rows.getLoc();
  auto reassoc = arith::FastMathFlagsAttr::get(b.getContext(),
                                               arith::FastMathFlags::reassoc);
  SmallVector<mlir::Value> xs;
  mlir::Value extreme, sum;
  size_t next = 0;
  for (mlir::Operation &op : s.work->without_terminator()) {
    if (next < s.chain.size() && &op == s.chain[next].op) {
      mlir::Value x = map.lookupOrDefault(s.chain[next].element);
      extreme = selectBeyond(b, loc, s.isMax, x, extreme);
      map.map(op.getResult(0), narrowTo(b, loc, s.element, extreme));
      xs.push_back(s.isMax ? x : b.create<arith::NegFOp>(loc, x).getResult());
      ++next;
      continue;
    }
    if (&op == s.read.getOperation()) {
      // The tile is f32 here, whatever the element type.
      mlir::Value index = map.lookupOrDefault(s.read.getIndices()[0]);
      extreme = b.create<mlir::tensor::ExtractOp>(
          loc, map.lookup(s.read.getTensor()), index);
      map.map(s.read.getResult(), narrowTo(b, loc, s.element, extreme));
      sum = b.create<mlir::tensor::ExtractOp>(loc, sums, index);
      continue;
    }
    if (&op == s.write.getOperation()) {
      mlir::Value index = map.lookupOrDefault(s.write.getIndices()[0]);
      sum = b.create<arith::AddFOp>(loc, sum, sumOf(b, loc, xs), reassoc);
      if (!bad) {
        sums = b.create<mlir::tensor::InsertOp>(loc, sum, sums, index);
      } else {
        mlir::Value zero =
            b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0));
        mlir::Value isZero = b.create<arith::CmpFOp>(
            loc, arith::CmpFPredicate::OEQ, extreme, zero);
        mlir::Value sawNaN = b.create<arith::CmpFOp>(
            loc, arith::CmpFPredicate::UNO, sum, extreme);
        mlir::Value notAllZeros = b.create<arith::AndIOp>(
            loc, isZero,
            b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, sum, zero));
        bad = b.create<arith::OrIOp>(
            loc, bad, b.create<arith::OrIOp>(loc, sawNaN, notAllZeros));
        mlir::Value signed_ =
            s.isMax ? sum : b.create<arith::NegFOp>(loc, sum).getResult();
        extreme = b.create<arith::SelectOp>(loc, isZero, signed_, extreme);
      }
      map.map(s.write.getResult(),
              b.create<mlir::tensor::InsertOp>(
                  loc, extreme, map.lookup(s.write.getDest()), index));
      continue;
    }
    // Also the rest of a bf16 or f16 step, on the narrowed extreme: dead,
    // the canonicalizer removes it.
    b.clone(op, map);
  }
  SmallVector<mlir::Value> results{map.lookup(s.write.getResult()), sums};
  if (bad)
    results.push_back(bad);
  return results;
}

/// The row loop's step at `r` on the tile `extremes` and the sums `sums`,
/// cloned at `rb` with the work as cloneWork makes it; `bad` (the last
/// step) or null.
SmallVector<mlir::Value> cloneStep(mlir::OpBuilder &rb, ColumnSteps &s,
                                   mlir::Value r, mlir::Value extremes,
                                   mlir::Value sums, mlir::Value bad) {
  scf::ForOp rows = s.rows;
  mlir::Location loc = rows.getLoc();
  mlir::IRMapping map;
  map.map(rows.getInductionVar(), r);
  map.map(rows.getRegionIterArgs()[0], extremes);
  SmallVector<mlir::Value> carried{extremes, sums};
  if (bad)
    carried.push_back(bad);
  for (mlir::Operation &op : rows.getBody()->without_terminator()) {
    if (&op != s.threads.getOperation()) {
      rb.clone(op, map);
      continue;
    }
    auto inner = rb.create<scf::ForOp>(
        loc, map.lookupOrDefault(s.threads.getLowerBound()),
        map.lookupOrDefault(s.threads.getUpperBound()),
        map.lookupOrDefault(s.threads.getStep()), carried,
        [&](mlir::OpBuilder &tb, mlir::Location l, mlir::Value th,
            mlir::ValueRange args) {
          map.map(s.threads.getInductionVar(), th);
          map.map(s.threads.getRegionIterArgs()[0], args[0]);
          mlir::Value flag = bad ? args[2] : mlir::Value();
          if (!s.guard) {
            tb.create<scf::YieldOp>(l, cloneWork(tb, s, map, args[1], flag));
            return;
          }
          for (mlir::Operation &top :
               s.threads.getBody()->without_terminator()) {
            if (&top != s.guard.getOperation()) {
              tb.clone(top, map);
              continue;
            }
            auto guard = tb.create<scf::IfOp>(
                l, mlir::TypeRange{args.getTypes()},
                map.lookupOrDefault(s.guard.getCondition()),
                /*withElseRegion=*/true);
            mlir::OpBuilder then =
                mlir::OpBuilder::atBlockBegin(guard.thenBlock());
            then.create<scf::YieldOp>(l,
                                      cloneWork(then, s, map, args[1], flag));
            mlir::OpBuilder::atBlockBegin(guard.elseBlock())
                .create<scf::YieldOp>(l, args);
            tb.create<scf::YieldOp>(l, guard.getResults());
          }
        });
    inner->setDiscardableAttrs(s.threads->getDiscardableAttrDictionary());
    return SmallVector<mlir::Value>(inner.getResults());
  }
  llvm_unreachable("the row loop has its threads' loop");
}

/// Replaces `s.rows` as the file comment shows.
void runFastFirst(ColumnSteps &s) {
  scf::ForOp rows = s.rows;
  mlir::Location loc = rows.getLoc();
  auto tileType =
      llvm::cast<mlir::RankedTensorType>(rows.getResult(0).getType());
  mlir::Value initial = rows.getInitArgs()[0];

  // Tiles of their own, allocated once per call like the kernel's others.
  auto func = rows->getParentOfType<mlir::func::FuncOp>();
  mlir::OpBuilder entry =
      mlir::OpBuilder::atBlockBegin(&func.getBody().front());
  // The extremes and sums are f32 whatever the element type (bf16 and
  // f16 narrowed after the last step): a compare and select of f32 loads
  // stays one vmaxps, where LLVM makes that of two widened bf16 values an
  // integer blend after the compare.
  auto wideType =
      mlir::RankedTensorType::get(tileType.getShape(), entry.getF32Type());
  mlir::Value ownExtremes = entry.create<AllocateSharedOp>(loc, wideType);
  mlir::Value ownSums = entry.create<AllocateSharedOp>(loc, wideType);
  mlir::Value ownNarrow = s.element.isF32()
                              ? mlir::Value()
                              : entry.create<AllocateSharedOp>(loc, tileType);

  // The initial values, and sums from -0 or the initial value where it is
  // a zero (for a minimum negated).
  mlir::OpBuilder b(rows);
  int64_t count = tileType.getNumElements();
  mlir::ValueRange copy = forEachElement(
      b, loc, count, mlir::ValueRange{ownExtremes, ownSums},
      [&](mlir::OpBuilder &nb, mlir::Location l, mlir::Value i,
          mlir::ValueRange args) -> SmallVector<mlir::Value> {
        mlir::Value x = nb.create<mlir::tensor::ExtractOp>(l, initial, i);
        mlir::Value wide =
            s.element.isF32()
                ? x
                : nb.create<arith::ExtFOp>(l, nb.getF32Type(), x).getResult();
        mlir::Value isZero = nb.create<arith::CmpFOp>(
            l, arith::CmpFPredicate::OEQ, wide,
            nb.create<arith::ConstantOp>(l, nb.getF32FloatAttr(0)));
        mlir::Value sum = nb.create<arith::SelectOp>(
            l, isZero,
            s.isMax ? wide : nb.create<arith::NegFOp>(l, wide).getResult(),
            nb.create<arith::ConstantOp>(l, nb.getF32FloatAttr(-0.0f)));
        return {nb.create<mlir::tensor::InsertOp>(l, wide, args[0], i),
                nb.create<mlir::tensor::InsertOp>(l, sum, args[1], i)};
      });

  // All steps but the last, then the last with its checks.
  mlir::Value last = b.create<arith::AddIOp>(
      loc, rows.getLowerBound(),
      b.create<arith::MulIOp>(
          loc, rows.getStep(),
          b.create<arith::ConstantIndexOp>(loc, s.trips - 1)));
  auto fast = b.create<scf::ForOp>(
      loc, rows.getLowerBound(), last, rows.getStep(), copy,
      [&](mlir::OpBuilder &rb, mlir::Location l, mlir::Value r,
          mlir::ValueRange args) {
        rb.create<scf::YieldOp>(
            l, cloneStep(rb, s, r, args[0], args[1], mlir::Value()));
      });
  fast->setDiscardableAttrs(rows->getDiscardableAttrDictionary());
  SmallVector<mlir::Value> checked =
      cloneStep(b, s, last, fast.getResult(0), fast.getResult(1),
                b.create<arith::ConstantIntOp>(loc, 0, 1));

  mlir::Value result = checked[0];
  if (ownNarrow)
    result = forEachElement(
        b, loc, count, mlir::ValueRange{ownNarrow},
        [&](mlir::OpBuilder &nb, mlir::Location l, mlir::Value i,
            mlir::ValueRange args) -> SmallVector<mlir::Value> {
          mlir::Value x = nb.create<mlir::tensor::ExtractOp>(l, checked[0], i);
          return {nb.create<mlir::tensor::InsertOp>(
              l, narrowTo(nb, l, s.element, x), args[0], i)};
        })[0];
  auto choice = b.create<scf::IfOp>(loc, mlir::TypeRange{tileType}, checked[2],
                                    /*withElseRegion=*/true);
  rows.getResult(0).replaceAllUsesWith(choice.getResult(0));
  mlir::Block *exact = choice.thenBlock();
  rows->moveBefore(exact, exact->end());
  mlir::OpBuilder::atBlockEnd(exact).create<scf::YieldOp>(loc,
                                                          rows.getResults());
  mlir::OpBuilder::atBlockBegin(choice.elseBlock())
      .create<scf::YieldOp>(loc, result);
}

struct ColumnExtremesPass
    : public mlir::PassWrapper<ColumnExtremesPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ColumnExtremesPass)
  llvm::StringRef getArgument() const final { return "tessel-column-extremes"; }
  llvm::StringRef getDescription() const final {
    return "Run a block of an f32, bf16 or f16 column maximum or minimum as "
           "compare-and-selects and per-column sums that show NaNs and a zero "
           "result's sign, running its rows again as they were where those do "
           "not tell the bits (the CPU)";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::arith::ArithDialect, mlir::scf::SCFDialect,
                    mlir::tensor::TensorDialect, TesselDialect>();
  }
  void runOnOperation() override {
    SmallVector<ColumnSteps> found;
    getOperation().walk([&](scf::ForOp loop) {
      if (std::optional<ColumnSteps> s = matchColumnSteps(loop))
        found.push_back(*s);
    });
    for (ColumnSteps &s : found)
      runFastFirst(s);
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createColumnExtremesPass() {
  return std::make_unique<ColumnExtremesPass>();
}

} // namespace tessel
