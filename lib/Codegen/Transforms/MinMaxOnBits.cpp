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
// and compares for HLO's NaN and signed-zero rules, per 8 elements (Zen 3,
// one thread: f32[4096,4099] in 2.8 ms, XLA:CPU 2.5). This pass computes
// the same value from three integer reductions of the bits (MinMaxOnBits.h),
// three instructions per vector, and runs the loop as it was only for a row
// that holds a NaN, which it then reads again:
//
//   %b:3 = scf.for ... iter_args(%smax = %i, %smin = %i, %umax = %i) {
//     %x = tensor.extract %in[...]
//     <arith.maxsi, arith.minsi, arith.maxui of the bits of %x>
//   }
//   %m = scf.if <a NaN among them> { <the loop as it was> } else {
//     <the maximum of the bits>
//   }
//
// so the bits are those of the loop as it was in every case. Helpers for
// -tessel-vectorize-partials, which does the same for bf16 and f16 partial
// results in vectors, are here too.
//
//===----------------------------------------------------------------------===//
#include "MinMaxOnBits.h"

#include "tessel/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
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
  mlir::Type element = mlir::getElementTypeOrSelf(type);
  mlir::TypedAttr attr = b.getIntegerAttr(element, value);
  if (auto vector = llvm::dyn_cast<mlir::VectorType>(type))
    attr = mlir::DenseElementsAttr::get(vector, attr);
  return b.create<mlir::arith::ConstantOp>(loc, attr);
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

namespace {

/// Rows shorter than this are left alone: three horizontal reductions and
/// a branch per row cost more than the blends save (Zen 3, one thread,
/// 16 MiB of f32, five alternations: rows of 64 0.43 ms as they were,
/// 0.9-1.1 on the bits; rows of 128 0.46-0.75 -> 0.79-1.05, though the
/// Intel Xeon of a GPU host gained, 0.73-0.91 -> 0.63-0.65; rows of 256
/// 1.21-1.28 -> 1.01-1.24; rows of 512 alike; rows of 4099 (64 MiB) alike
/// on Zen 3, 5.1-5.6 -> 4.1-5.1 on the Xeon).
constexpr int64_t kMinTrips = 256;

/// `loop` as a row maximum or minimum of f32 (above) made to run on the
/// bits; false where it is not one.
bool minMaxOnBits(mlir::scf::ForOp loop) {
  namespace arith = mlir::arith;
  std::optional<F32MinMaxStep> step = matchF32MinMaxStep(loop);
  if (!step)
    return false;
  std::optional<int64_t> trips = mlir::constantTripCount(
      loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  if (!trips || *trips < kMinTrips)
    return false;
  mlir::Operation *reducer = step->reducer;
  mlir::Value element = step->element;

  mlir::Location loc = loop.getLoc();
  mlir::OpBuilder b(loop);
  mlir::Type bitsType = b.getI32Type();
  mlir::Value init =
      b.create<arith::BitcastOp>(loc, bitsType, loop.getInitArgs()[0]);
  auto onBits = b.create<mlir::scf::ForOp>(
      loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
      mlir::ValueRange{init, init, init},
      [&](mlir::OpBuilder &nb, mlir::Location l, mlir::Value iv,
          mlir::ValueRange args) {
        mlir::IRMapping map;
        map.map(loop.getInductionVar(), iv);
        for (mlir::Operation &op : loop.getBody()->without_terminator())
          if (&op != reducer)
            nb.clone(op, map);
        mlir::Value bits = nb.create<arith::BitcastOp>(
            l, bitsType, map.lookupOrDefault(element));
        BitExtremes e = stepExtremes(nb, l, {args[0], args[1], args[2]}, bits);
        nb.create<mlir::scf::YieldOp>(l,
                                      mlir::ValueRange{e.smax, e.smin, e.umax});
      });
  replaceByExtremeOrLoop(
      b, loop, {onBits.getResult(0), onBits.getResult(1), onBits.getResult(2)},
      *FloatBits::of(b.getF32Type()), step->isMax);
  return true;
}

struct MinMaxOnBitsPass
    : public mlir::PassWrapper<MinMaxOnBitsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MinMaxOnBitsPass)
  llvm::StringRef getArgument() const final { return "tessel-min-max-on-bits"; }
  llvm::StringRef getDescription() const final {
    return "Compute a row maximum or minimum of f32 from integer reductions "
           "of its bits, running the loop as it was for rows with a NaN (the "
           "CPU)";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::arith::ArithDialect, mlir::scf::SCFDialect>();
  }
  void runOnOperation() override {
    llvm::SmallVector<mlir::scf::ForOp> loops;
    getOperation().walk([&](mlir::scf::ForOp loop) { loops.push_back(loop); });
    for (mlir::scf::ForOp loop : loops)
      minMaxOnBits(loop);
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createMinMaxOnBitsPass() {
  return std::make_unique<MinMaxOnBitsPass>();
}

} // namespace tessel
