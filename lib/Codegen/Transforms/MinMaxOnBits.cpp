//===- MinMaxOnBits.cpp - -tessel-min-max-on-bits -------------------------===//
//
// A row maximum or minimum of f32 is a loop that carries one value,
//
//   %m = scf.for %i = 0 to 4099 iter_args(%acc = %init) -> (f32) {
//     %x = tensor.extract %in[...]
//     scf.yield (arith.maximumf %acc, %x)
//   }
//
// which LLVM vectorizes with llvm.maximum: on x86 a vmaxps and four blends
// and compares for HLO's NaN and signed-zero rules per vector. This pass
// computes the same value from two reductions of one instruction each per
// vector: a maximum that may drop a NaN and keep either of two equal zeros
// (x86: vmaxps), and a sum of the same elements that is a NaN where an
// element was (vaddps). The loop as it was runs again for a row where the
// sum or the initial value is a NaN, or the result a zero:
//
//   %r:2 = scf.for ... iter_args(%m = <init>, %s = <zeros>) {
//     %x = <vector.transfer_read of 16 elements, or tensor.extract>
//     %m' = <%x where %x > %m, else %m>
//     %s' = arith.addf %s, %x fastmath<reassoc>
//   }
//   %m = scf.if <a NaN in the sum or the initial value, or a zero result> {
//     <the loop as it was>
//   } else {
//     <the maximum of %r#0 (across its lanes)>
//   }
//
// so the bits are those of the loop as it was in every case. A row read as
// it is (RowReads.h), or computed from such reads by ops that run alike on
// lanes (LaneOps.h), runs on vectors of 16 written here, its last 16
// elements read once more where it is not a multiple of 16; a row of
// elements computed otherwise stays scalar for LLVM's loop vectorizer. An
// earlier form took three integer reductions of the bits (MinMaxOnBits.h),
// three instructions per vector, and read at 33 GB/s where the sum reads at 50
// (Zen 5, one thread). Those helpers serve -tessel-vectorize-partials,
// which runs the maxima and minima of bf16 and f16 on their bits.
//
//===----------------------------------------------------------------------===//
#include "MinMaxOnBits.h"
#include "LaneOps.h"
#include "RowReads.h"
#include "SplatConstant.h"

#include "tessel/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Pass/Pass.h"

namespace tessel {

std::optional<FloatBits> FloatBits::of(mlir::Type type) {
  if (type.isBF16())
    return FloatBits{16, 0x7f80, 0x0040};
  if (type.isF16())
    return FloatBits{16, 0x7c00, 0x0200};
  if (type.isF32())
    return FloatBits{32, 0x7f800000, 0x00400000};
  return std::nullopt;
}

mlir::Value bitsConstant(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Type type, uint64_t value) {
  return splatConstant(
      b, loc, type, b.getIntegerAttr(mlir::getElementTypeOrSelf(type), value));
}

BitExtremes stepExtremes(mlir::OpBuilder &b, mlir::Location loc,
                         const BitExtremes &acc, mlir::Value bits) {
  namespace arith = mlir::arith;
  return {b.create<arith::MaxSIOp>(loc, acc.smax, bits),
          b.create<arith::MinSIOp>(loc, acc.smin, bits),
          b.create<arith::MaxUIOp>(loc, acc.umax, bits)};
}

mlir::Value isNaNBits(mlir::OpBuilder &b, mlir::Location loc, mlir::Value bits,
                      const FloatBits &format) {
  namespace arith = mlir::arith;
  mlir::Type type = bits.getType();
  mlir::Value magnitude = b.create<arith::AndIOp>(
      loc, bits, bitsConstant(b, loc, type, format.sign() - 1));
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, magnitude,
                                 bitsConstant(b, loc, type, format.infinity));
}

mlir::Value sawNaN(mlir::OpBuilder &b, mlir::Location loc, const BitExtremes &e,
                   const FloatBits &format) {
  namespace arith = mlir::arith;
  mlir::Type type = e.smax.getType();
  mlir::Value positive =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, e.smax,
                              bitsConstant(b, loc, type, format.infinity));
  mlir::Value negative = b.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::ugt, e.umax,
      bitsConstant(b, loc, type, format.sign() | format.infinity));
  return b.create<arith::OrIOp>(loc, positive, negative);
}

mlir::Value extremeOf(mlir::OpBuilder &b, mlir::Location loc,
                      const BitExtremes &e, const FloatBits &format,
                      bool isMax) {
  namespace arith = mlir::arith;
  mlir::Type type = e.smax.getType();
  if (isMax) {
    mlir::Value someNonNegative = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::sge, e.smax, bitsConstant(b, loc, type, 0));
    return b.create<arith::SelectOp>(loc, someNonNegative, e.smax, e.smin);
  }
  mlir::Value someNegative =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, e.umax,
                              bitsConstant(b, loc, type, format.sign()));
  return b.create<arith::SelectOp>(loc, someNegative, e.umax, e.smin);
}

std::optional<F32MinMaxStep> matchF32MinMaxStep(mlir::scf::ForOp loop) {
  namespace arith = mlir::arith;
  if (loop.getNumRegionIterArgs() != 1)
    return std::nullopt;
  mlir::BlockArgument acc = loop.getRegionIterArgs()[0];
  if (!acc.getType().isF32() || !acc.hasOneUse())
    return std::nullopt;
  auto yield = llvm::cast<mlir::scf::YieldOp>(loop.getBody()->getTerminator());
  mlir::Operation *reducer = *acc.getUsers().begin();
  bool isMax = llvm::isa<arith::MaximumFOp>(reducer);
  if (!(isMax || llvm::isa<arith::MinimumFOp>(reducer)) ||
      yield.getOperand(0) != reducer->getResult(0) ||
      !reducer->getResult(0).hasOneUse())
    return std::nullopt;
  auto fmf = llvm::cast<arith::ArithFastMathInterface>(reducer);
  if (fmf.getFastMathFlagsAttr().getValue() != arith::FastMathFlags::none)
    return std::nullopt;
  mlir::Value element = reducer->getOperand(reducer->getOperand(0) == acc);
  if (element == acc)
    return std::nullopt;
  return F32MinMaxStep{reducer, element, isMax};
}

void replaceByExtremeOrLoop(mlir::OpBuilder &b, mlir::scf::ForOp loop,
                            const BitExtremes &e, const FloatBits &format,
                            bool isMax) {
  mlir::Location loc = loop.getLoc();
  mlir::Type type = loop.getResult(0).getType();
  auto choice = b.create<mlir::scf::IfOp>(loc, mlir::TypeRange{type},
                                          sawNaN(b, loc, e, format),
                                          /*withElseRegion=*/true);
  mlir::OpBuilder then = mlir::OpBuilder::atBlockBegin(choice.thenBlock());
  mlir::Operation *exact = then.clone(*loop);
  then.create<mlir::scf::YieldOp>(loc, exact->getResults());
  mlir::OpBuilder otherwise = mlir::OpBuilder::atBlockBegin(choice.elseBlock());
  otherwise.create<mlir::scf::YieldOp>(
      loc, mlir::ValueRange{otherwise.create<mlir::arith::BitcastOp>(
               loc, type, extremeOf(otherwise, loc, e, format, isMax))});
  loop.getResult(0).replaceAllUsesWith(choice.getResult(0));
  loop.erase();
}

mlir::Value selectBeyond(mlir::OpBuilder &b, mlir::Location loc, bool isMax,
                         mlir::Value x, mlir::Value extreme) {
  namespace arith = mlir::arith;
  mlir::Value beyond = b.create<arith::CmpFOp>(
      loc, isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, x,
      extreme);
  return b.create<arith::SelectOp>(loc, beyond, x, extreme);
}

/// `value` as the arith.extf of a bf16 or f16 value to f32, or null.
mlir::arith::ExtFOp widenedHalf(mlir::Value value) {
  auto ext = value.getDefiningOp<mlir::arith::ExtFOp>();
  if (!ext || !ext.getType().isF32() ||
      !(ext.getIn().getType().isBF16() || ext.getIn().getType().isF16()))
    return nullptr;
  return ext;
}

/// `v` as the emitter's maximum or minimum of two bf16 (or f16) values
/// widened to f32 (ScalarOpEmitter::floatBinary, `widened`), one of them
/// `acc`, or nothing:
///
///   select(uno(x), x, select(uno(y), y, select(oeq(x, y),
///          bitcast(andi|ori(bitcast x, bitcast y)),
///          select(ogt|olt(x, y), x, y))))
///
/// Its value is always x, y or (when they are equal) x's or y's bits
/// merged: a bf16 (f16) value widened, or a NaN of one of them.

std::optional<WidenedMinMax> matchWidenedMinMax(mlir::Value v,
                                                mlir::Value acc) {
  namespace arith = mlir::arith;
  using P = arith::CmpFPredicate;
  // select(cmpf(pred, a, b), t, f), returning a, b, t, f.
  auto select = [](mlir::Value s, P pred, mlir::Value &a, mlir::Value &b,
                   mlir::Value &t, mlir::Value &f) {
    auto op = s.getDefiningOp<arith::SelectOp>();
    if (!op)
      return false;
    auto cmp = op.getCondition().getDefiningOp<arith::CmpFOp>();
    if (!cmp || cmp.getPredicate() != pred)
      return false;
    a = cmp.getLhs(), b = cmp.getRhs();
    t = op.getTrueValue(), f = op.getFalseValue();
    return true;
  };
  mlir::Value x, x2, y, y2, r1, r2, r3, merged, a, b, t, f;
  if (!select(v, P::UNO, x, x2, t, r1) || x2 != x || t != x)
    return std::nullopt;
  if (!select(r1, P::UNO, y, y2, t, r2) || y2 != y || t != y)
    return std::nullopt;
  if (!select(r2, P::OEQ, a, b, merged, r3) || a != x || b != y)
    return std::nullopt;
  bool greater = select(r3, P::OGT, a, b, t, f);
  if (!(greater || select(r3, P::OLT, a, b, t, f)) || a != x || b != y ||
      t != x || f != y)
    return std::nullopt;
  auto toFloat = merged.getDefiningOp<arith::BitcastOp>();
  if (!toFloat)
    return std::nullopt;
  mlir::Operation *bits = toFloat.getIn().getDefiningOp();
  if (!bits || !llvm::isa<arith::AndIOp, arith::OrIOp>(bits))
    return std::nullopt;
  auto bitsOf = [](mlir::Value operand) -> mlir::Value {
    auto cast = operand.getDefiningOp<arith::BitcastOp>();
    return cast ? cast.getIn() : nullptr;
  };
  mlir::Value p = bitsOf(bits->getOperand(0)), q = bitsOf(bits->getOperand(1));
  if (!((p == x && q == y) || (p == y && q == x)))
    return std::nullopt;
  mlir::arith::ExtFOp wx = widenedHalf(x), wy = widenedHalf(y);
  if (!wx || !wy || (wx.getIn() != acc && wy.getIn() != acc))
    return std::nullopt;
  bool anded = llvm::isa<arith::AndIOp>(bits);
  return WidenedMinMax{x, y, greater && anded, !greater && !anded};
}

namespace {

/// Rows of computed elements shorter than this are left alone: horizontal
/// reductions and a branch per row cost more than the blends save, as
/// measured for the three integer reductions of the bits (Zen 3, one
/// thread, 16 MiB of f32, five alternations: rows of 64 0.43 ms as they
/// were, 0.9-1.1 on the bits; rows of 128 0.46-0.75 -> 0.79-1.05, though the
/// Intel Xeon of a GPU host gained, 0.73-0.91 -> 0.63-0.65; rows of 256
/// 1.21-1.28 -> 1.01-1.24; rows of 512 alike; rows of 4099 (64 MiB) alike
/// on Zen 3, 5.1-5.6 -> 4.1-5.1 on the Xeon).
constexpr int64_t kMinTrips = 256;

/// Replaces `loop`, a row maximum or minimum of f32 with initial value
/// `init`, by `extreme` (which may have dropped NaNs and kept either of two
/// equal zeros; poison where a NaN met fast-math flags: `mayBePoison`)
/// where `sum` (of the same elements) and `init` are not NaNs and
/// `extreme` is not a zero, else by the loop as it was.
void replaceByExtremeOrExactLoop(mlir::OpBuilder &b, mlir::scf::ForOp loop,
                                 mlir::Value extreme, mlir::Value sum,
                                 mlir::Value init, bool mayBePoison) {
  namespace arith = mlir::arith;
  mlir::Location loc = loop.getLoc();
  mlir::Value sawNaN =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, sum, init);
  mlir::Value zero = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0));
  mlir::Value isZero =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, extreme, zero);
  // Where a NaN may have made the extreme poison (fast-math flags), the
  // comparison with zero is poison too and must not decide the branch: a
  // select, not an OR. (An OR keeps both reductions ahead of the branch;
  // LLVM moves an extreme that only one side of it uses into that side,
  // away from the other rows of a jam.)
  mlir::Value again =
      mayBePoison
          ? b.create<arith::SelectOp>(
                 loc, sawNaN, b.create<arith::ConstantIntOp>(loc, 1, 1), isZero)
                .getResult()
          : b.create<arith::OrIOp>(loc, sawNaN, isZero).getResult();
  auto choice = b.create<mlir::scf::IfOp>(loc, mlir::TypeRange{b.getF32Type()},
                                          again, /*withElseRegion=*/true);
  mlir::OpBuilder then = mlir::OpBuilder::atBlockBegin(choice.thenBlock());
  mlir::Operation *exact = then.clone(*loop);
  then.create<mlir::scf::YieldOp>(loc, exact->getResults());
  mlir::OpBuilder otherwise = mlir::OpBuilder::atBlockBegin(choice.elseBlock());
  otherwise.create<mlir::scf::YieldOp>(loc, mlir::ValueRange{extreme});
  loop.getResult(0).replaceAllUsesWith(choice.getResult(0));
  loop.erase();
}

/// The step of the two reductions: the extreme of `x` and `extreme`, the
/// sum of `sum` and `x` (scalars or vectors).
std::pair<mlir::Value, mlir::Value>
reductionStep(mlir::OpBuilder &b, mlir::Location loc, bool isMax, mlir::Value x,
              mlir::Value extreme, mlir::Value sum) {
  namespace arith = mlir::arith;
  mlir::MLIRContext *context = b.getContext();
  auto extremeFlags = arith::FastMathFlagsAttr::get(
      context, arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
  auto sumFlags =
      arith::FastMathFlagsAttr::get(context, arith::FastMathFlags::reassoc);
  mlir::Value next =
      isMax ? b.create<arith::MaxNumFOp>(loc, x, extreme, extremeFlags)
                  .getResult()
            : b.create<arith::MinNumFOp>(loc, x, extreme, extremeFlags)
                  .getResult();
  return {next, b.create<arith::AddFOp>(loc, sum, x, sumFlags)};
}

/// The same step without fast-math flags, for vectors written here: the
/// extreme by selectBeyond.
std::pair<mlir::Value, mlir::Value>
selectStep(mlir::OpBuilder &b, mlir::Location loc, bool isMax, mlir::Value x,
           mlir::Value extreme, mlir::Value sum) {
  auto sumFlags = mlir::arith::FastMathFlagsAttr::get(
      b.getContext(), mlir::arith::FastMathFlags::reassoc);
  return {selectBeyond(b, loc, isMax, x, extreme),
          b.create<mlir::arith::AddFOp>(loc, sum, x, sumFlags)};
}

/// The extreme of `lanes`' elements, none of them a NaN, by halves with
/// selectBeyond (vector.reduction's maxnumf, not allowed to ignore NaNs,
/// costs a compare and blend more per halving).
mlir::Value selectAcross(mlir::OpBuilder &b, mlir::Location loc, bool isMax,
                         mlir::Value lanes) {
  for (int64_t width =
           llvm::cast<mlir::VectorType>(lanes.getType()).getNumElements();
       width > 1; width /= 2) {
    llvm::SmallVector<int64_t> low, high;
    for (int64_t i = 0; i < width / 2; ++i) {
      low.push_back(i);
      high.push_back(width / 2 + i);
    }
    mlir::Value l = b.create<mlir::vector::ShuffleOp>(loc, lanes, lanes, low);
    mlir::Value h = b.create<mlir::vector::ShuffleOp>(loc, lanes, lanes, high);
    lanes = selectBeyond(b, loc, isMax, h, l);
  }
  return b.create<mlir::vector::ExtractOp>(loc, lanes, int64_t{0});
}

/// Lanes of the vectors a row read as it is runs on.
constexpr int64_t kLanes = 16;

/// Whether `v`, computed in `loop`'s body for a step, can be computed for
/// kLanes consecutive steps as a vector: values from outside the loop and
/// constants (splat), elements read as they are (RowReads.h), and ops that
/// run alike on lanes (LaneOps.h) of such values; not the induction
/// variable or the accumulator themselves.
bool onLanes(mlir::scf::ForOp loop, mlir::Value v) {
  if (loop.isDefinedOutsideOfLoop(v))
    return true;
  mlir::Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (mlir::matchPattern(v, mlir::m_Constant()))
    return true;
  if (llvm::isa<mlir::tensor::ExtractOp>(op))
    return rowRead(loop, v).has_value();
  if (!isLaneWise(op) || op->getNumResults() != 1 || op->getNumRegions() != 0)
    return false;
  return llvm::all_of(op->getOperands(), [&](mlir::Value operand) {
    return onLanes(loop, operand);
  });
}

/// `v` (onLanes) for the kLanes steps from `iv` on, built at `b`.
mlir::Value lanesOf(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::scf::ForOp loop, mlir::Value v, mlir::Value iv,
                    llvm::DenseMap<mlir::Value, mlir::Value> &done) {
  if (mlir::Value known = done.lookup(v))
    return known;
  auto lanes = mlir::VectorType::get({kLanes}, v.getType());
  mlir::Value result;
  mlir::Operation *op = v.getDefiningOp();
  if (loop.isDefinedOutsideOfLoop(v)) {
    result = b.create<mlir::vector::SplatOp>(loc, lanes, v);
  } else if (mlir::matchPattern(v, mlir::m_Constant())) {
    result =
        b.create<mlir::vector::SplatOp>(loc, lanes, b.clone(*op)->getResult(0));
  } else if (llvm::isa<mlir::tensor::ExtractOp>(op)) {
    result = readLanes(b, loc, loop, *rowRead(loop, v), lanes, iv);
  } else {
    mlir::IRMapping operands;
    for (mlir::Value operand : op->getOperands())
      operands.map(operand, lanesOf(b, loc, loop, operand, iv, done));
    mlir::Operation *copy = b.clone(*op, operands);
    copy->getResult(0).setType(lanes);
    result = copy->getResult(0);
  }
  done[v] = result;
  return result;
}

/// `step`'s row read as it is or computed on lanes (onLanes), of at least
/// two vectors of kLanes: the two reductions on vectors, the last kLanes
/// elements once more where the row is not a multiple of kLanes (an
/// element met twice changes neither the extreme nor whether the sum is a
/// NaN), then across the lanes. LLVM's loop vectorizer leaves the last
/// elements of the scalar form to a scalar loop of up to 63 (Zen 5, one
/// thread, rows of 300: 4.8 ms with 512-bit vectors, 2.9 with 256-bit
/// ones). False where the row is not such a row.
bool vectorRow(mlir::scf::ForOp loop, const F32MinMaxStep &step,
               int64_t trips) {
  namespace arith = mlir::arith;
  if (trips < 2 * kLanes || !onLanes(loop, step.element))
    return false;
  mlir::Location loc = loop.getLoc();
  mlir::OpBuilder b(loop);
  auto lanes = mlir::VectorType::get({kLanes}, b.getF32Type());
  mlir::Value init = loop.getInitArgs()[0];
  mlir::Value zeros = b.create<arith::ConstantOp>(
      loc, mlir::DenseElementsAttr::get(lanes, b.getF32FloatAttr(0)));
  mlir::Value inits = b.create<mlir::vector::SplatOp>(loc, lanes, init);
  mlir::Value lower = loop.getLowerBound();
  mlir::Value width = b.create<arith::ConstantIndexOp>(loc, kLanes);
  auto chunks = b.create<mlir::scf::ForOp>(
      loc, b.create<arith::ConstantIndexOp>(loc, 0),
      b.create<arith::ConstantIndexOp>(loc, trips / kLanes),
      b.create<arith::ConstantIndexOp>(loc, 1), mlir::ValueRange{inits, zeros},
      [&](mlir::OpBuilder &nb, mlir::Location l, mlir::Value chunk,
          mlir::ValueRange args) {
        mlir::Value iv = nb.create<arith::AddIOp>(
            l, lower, nb.create<arith::MulIOp>(l, chunk, width));
        llvm::DenseMap<mlir::Value, mlir::Value> done;
        auto [extreme, sum] = selectStep(
            nb, l, step.isMax, lanesOf(nb, l, loop, step.element, iv, done),
            args[0], args[1]);
        nb.create<mlir::scf::YieldOp>(l, mlir::ValueRange{extreme, sum});
      });
  mlir::Value extreme = chunks.getResult(0), sum = chunks.getResult(1);
  if (trips % kLanes != 0) {
    mlir::Value iv = b.create<arith::AddIOp>(
        loc, lower, b.create<arith::ConstantIndexOp>(loc, trips - kLanes));
    llvm::DenseMap<mlir::Value, mlir::Value> done;
    std::tie(extreme, sum) =
        selectStep(b, loc, step.isMax,
                   lanesOf(b, loc, loop, step.element, iv, done), extreme, sum);
  }
  using Kind = mlir::vector::CombiningKind;
  extreme = selectAcross(b, loc, step.isMax, extreme);
  sum = b.create<mlir::vector::ReductionOp>(loc, Kind::ADD, sum, mlir::Value(),
                                            arith::FastMathFlags::reassoc);
  replaceByExtremeOrExactLoop(b, loop, extreme, sum, init,
                              /*mayBePoison=*/false);
  return true;
}

/// `loop` as a row maximum or minimum of f32 (above) made to run as two
/// reductions that LLVM vectorizes to one instruction each per vector: the
/// maximum (minimum) with fast-math flags that leave NaNs and the sign of
/// a zero to it (x86: vmaxps, vminps), and a sum whose only use is whether
/// it is a NaN (vaddps). The loop as it was runs again for a row where the
/// sum is a NaN (a NaN element or initial value, or infinities of both
/// signs) or the extreme is a zero (either sign: vmaxps keeps the first of
/// two equal zeros), so the bits are the loop's in every case. A row read
/// as it is runs on vectors of its own (vectorRow); another one of fewer
/// than kMinTrips elements is left alone. False where `loop` is not such a
/// row.
bool minMaxWithNaNSum(mlir::scf::ForOp loop) {
  std::optional<F32MinMaxStep> step = matchF32MinMaxStep(loop);
  if (!step)
    return false;
  std::optional<int64_t> trips = mlir::constantTripCount(
      loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  if (!trips)
    return false;
  if (vectorRow(loop, *step, *trips))
    return true;
  if (*trips < kMinTrips)
    return false;
  mlir::Operation *reducer = step->reducer;
  mlir::Value element = step->element;
  mlir::Location loc = loop.getLoc();
  mlir::OpBuilder b(loop);
  mlir::Value init = loop.getInitArgs()[0];
  mlir::Value zero =
      b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(0));
  auto fast = b.create<mlir::scf::ForOp>(
      loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
      mlir::ValueRange{init, zero},
      [&](mlir::OpBuilder &nb, mlir::Location l, mlir::Value iv,
          mlir::ValueRange args) {
        mlir::IRMapping map;
        map.map(loop.getInductionVar(), iv);
        for (mlir::Operation &op : loop.getBody()->without_terminator())
          if (&op != reducer)
            nb.clone(op, map);
        auto [extreme, sum] = reductionStep(
            nb, l, step->isMax, map.lookupOrDefault(element), args[0], args[1]);
        nb.create<mlir::scf::YieldOp>(l, mlir::ValueRange{extreme, sum});
      });
  replaceByExtremeOrExactLoop(b, loop, fast.getResult(0), fast.getResult(1),
                              init, /*mayBePoison=*/true);
  return true;
}

struct MinMaxOnBitsPass
    : public mlir::PassWrapper<MinMaxOnBitsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MinMaxOnBitsPass)
  llvm::StringRef getArgument() const final { return "tessel-min-max-on-bits"; }
  llvm::StringRef getDescription() const final {
    return "Compute a row maximum or minimum of f32 as a compare and select "
           "and a sum that shows NaNs, running the loop as it was for rows "
           "with a NaN or a zero result (the CPU)";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::arith::ArithDialect, mlir::scf::SCFDialect,
                    mlir::vector::VectorDialect>();
  }
  void runOnOperation() override {
    llvm::SmallVector<mlir::scf::ForOp> loops;
    getOperation().walk([&](mlir::scf::ForOp loop) { loops.push_back(loop); });
    for (mlir::scf::ForOp loop : loops)
      minMaxWithNaNSum(loop);
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createMinMaxOnBitsPass() {
  return std::make_unique<MinMaxOnBitsPass>();
}

} // namespace tessel
