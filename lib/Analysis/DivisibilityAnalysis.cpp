//===- DivisibilityAnalysis.cpp - Divisibility as a dataflow analysis -----===//
#include "tessel/Analysis/DivisibilityAnalysis.h"

#include "tessel/Dialect/TesselDialect.h"
#include "tessel/Dialect/TpuDialect.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;

namespace tessel {

DivisibilityValue DivisibilityValue::join(const DivisibilityValue &a,
                                          const DivisibilityValue &b) {
  if (a.isUninitialized())
    return b;
  if (b.isUninitialized())
    return a;
  return Divisibility::join(a.get(), b.get());
}

void DivisibilityValue::print(llvm::raw_ostream &os) const {
  os << (value ? value->print() : "<uninitialized>");
}

std::optional<unsigned> divisibilityWidth(Type type) {
  if (type.isIndex())
    return 64;
  if (auto integer = dyn_cast<IntegerType>(type))
    if (integer.getWidth() <= 64)
      return integer.getWidth();
  return std::nullopt;
}

namespace {

/// True unless the op carries arith's nsw flag.
template <typename OpT> bool mayWrap(OpT op) {
  return !arith::bitEnumContainsAny(op.getOverflowFlags(),
                                    arith::IntegerOverflowFlags::nsw);
}

/// An affine expression over values known as `dims` and `symbols`, in
/// mathematical integers (affine maps do not wrap).
Divisibility evaluate(AffineExpr expr, ArrayRef<Divisibility> dims,
                      ArrayRef<Divisibility> symbols) {
  if (auto c = dyn_cast<AffineConstantExpr>(expr))
    return Divisibility::constant(c.getValue());
  if (auto d = dyn_cast<AffineDimExpr>(expr))
    return dims[d.getPosition()];
  if (auto s = dyn_cast<AffineSymbolExpr>(expr))
    return symbols[s.getPosition()];
  auto bin = cast<AffineBinaryOpExpr>(expr);
  Divisibility l = evaluate(bin.getLHS(), dims, symbols);
  Divisibility r = evaluate(bin.getRHS(), dims, symbols);
  switch (bin.getKind()) {
  case AffineExprKind::Add:
    return add(l, r, 64, false);
  case AffineExprKind::Mul:
    return mul(l, r, 64, false);
  case AffineExprKind::FloorDiv:
    return floorDivSigned(l, r, 64);
  case AffineExprKind::CeilDiv:
    return ceilDivSigned(l, r, 64);
  case AffineExprKind::Mod:
    return floorModSigned(l, r, 64);
  default:
    return Divisibility::unknown();
  }
}

/// A promise that a value is a multiple of n, combined with what is known.
Divisibility assumeMultiple(const Divisibility &known, uint64_t n) {
  if (known.isConstant())
    return known; // the value itself; a false promise cannot change it
  if (known.remainder() == 0) {
    unsigned __int128 l =
        (unsigned __int128)(known.modulus() / std::gcd(known.modulus(), n)) * n;
    if (l <= (uint64_t(1) << 62))
      return Divisibility::multipleOf(uint64_t(l));
  }
  return Divisibility::multipleOf(n);
}

/// The result of a one-result integer op, or nullopt for ops the analysis
/// does not read.
std::optional<Divisibility> transfer(Operation *op, ArrayRef<Divisibility> in,
                                     unsigned width) {
  auto operandWidth = [&](unsigned i) {
    return divisibilityWidth(op->getOperand(i).getType()).value_or(64);
  };
  return llvm::TypeSwitch<Operation *, std::optional<Divisibility>>(op)
      .Case([&](arith::ConstantOp c) -> std::optional<Divisibility> {
        if (auto attr = dyn_cast<IntegerAttr>(c.getValue()))
          return Divisibility::constant(
              wrapToWidth(attr.getValue().getSExtValue(), width));
        return std::nullopt;
      })
      .Case(
          [&](arith::AddIOp o) { return add(in[0], in[1], width, mayWrap(o)); })
      .Case(
          [&](arith::SubIOp o) { return sub(in[0], in[1], width, mayWrap(o)); })
      .Case(
          [&](arith::MulIOp o) { return mul(in[0], in[1], width, mayWrap(o)); })
      .Case([&](arith::ShLIOp o) {
        return shiftLeft(in[0], in[1], width, mayWrap(o));
      })
      .Case([&](arith::DivSIOp) { return divSigned(in[0], in[1], width); })
      .Case([&](arith::DivUIOp) { return divUnsigned(in[0], in[1], width); })
      .Case([&](arith::FloorDivSIOp) {
        return floorDivSigned(in[0], in[1], width);
      })
      .Case([&](arith::CeilDivSIOp) {
        return ceilDivSigned(in[0], in[1], width);
      })
      .Case([&](arith::RemSIOp) { return remSigned(in[0], in[1], width); })
      .Case([&](arith::RemUIOp) { return remUnsigned(in[0], in[1], width); })
      .Case(
          [&](arith::ShRSIOp) { return shiftRightSigned(in[0], in[1], width); })
      .Case([&](arith::ShRUIOp) {
        return shiftRightUnsigned(in[0], in[1], width);
      })
      .Case([&](arith::AndIOp) { return bitAnd(in[0], in[1], width); })
      .Case([&](arith::OrIOp) { return bitOr(in[0], in[1], width); })
      .Case([&](arith::XOrIOp) { return bitXor(in[0], in[1], width); })
      .Case<arith::MinSIOp, arith::MaxSIOp, arith::MinUIOp, arith::MaxUIOp>(
          [&](Operation *) { return minOrMax(in[0], in[1]); })
      .Case([&](arith::SelectOp) {
        if (std::optional<int64_t> c = in[0].constantValue())
          return *c != 0 ? in[1] : in[2];
        return Divisibility::join(in[1], in[2]);
      })
      .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(
          [&](Operation *) {
            return width < operandWidth(0) ? truncate(in[0], width)
                                           : extendSigned(in[0]);
          })
      .Case<arith::IndexCastUIOp, arith::ExtUIOp>([&](Operation *) {
        return width < operandWidth(0) ? truncate(in[0], width)
                                       : extendUnsigned(in[0], operandWidth(0));
      })
      .Case<gpu::ThreadIdOp, gpu::BlockIdOp>(
          [&](Operation *o) -> std::optional<Divisibility> {
            auto bound = o->getAttrOfType<IntegerAttr>("upper_bound");
            if (bound && bound.getValue().getZExtValue() == 1)
              return Divisibility::constant(0);
            return Divisibility::unknown();
          })
      .Case([&](tpu::AssumeMultipleOp o) {
        return assumeMultiple(in[0], uint64_t(o.getMultiple()));
      })
      .Case([&](affine::AffineApplyOp o) {
        AffineMap map = o.getAffineMap();
        return evaluate(map.getResult(0), in.take_front(map.getNumDims()),
                        in.drop_front(map.getNumDims()));
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace

void DivisibilityAnalysis::visitOperation(
    Operation *op, ArrayRef<const DivisibilityLattice *> operands,
    ArrayRef<DivisibilityLattice *> results) {
  SmallVector<Divisibility> in;
  for (const DivisibilityLattice *operand : operands) {
    if (operand->getValue().isUninitialized())
      return; // visited again once every operand is known
    in.push_back(operand->getValue().get());
  }
  auto update = [&](DivisibilityLattice *lattice, Divisibility d) {
    propagateIfChanged(lattice, lattice->join(DivisibilityValue(d)));
  };
  if (auto apply = dyn_cast<ApplyIndexingOp>(op)) {
    const IndexingMap &map = apply.getIndexingMap();
    ArrayRef<Divisibility> dims = ArrayRef(in).take_front(map.getNumDims());
    ArrayRef<Divisibility> symbols = ArrayRef(in).drop_front(map.getNumDims());
    for (auto [expr, lattice] :
         llvm::zip(map.getAffineMap().getResults(), results))
      update(lattice, evaluateAffineDivisibility(expr, dims, symbols));
    return;
  }
  std::optional<unsigned> width =
      op->getNumResults() == 1 ? divisibilityWidth(op->getResult(0).getType())
                               : std::nullopt;
  std::optional<Divisibility> out;
  if (width)
    out = transfer(op, in, *width);
  if (!out)
    return setAllToEntryStates(results);
  update(results[0], *out);
}

void DivisibilityAnalysis::visitNonControlFlowArguments(
    Operation *op, const RegionSuccessor &successor,
    ArrayRef<DivisibilityLattice *> argLattices, unsigned firstIndex) {
  auto loop = dyn_cast<scf::ForOp>(op);
  std::optional<unsigned> width =
      loop ? divisibilityWidth(loop.getInductionVar().getType()) : std::nullopt;
  if (!loop || !width || successor.isParent())
    return SparseForwardDataFlowAnalysis::visitNonControlFlowArguments(
        op, successor, argLattices, firstIndex);
  const DivisibilityLattice *lower =
      getLatticeElementFor(op, loop.getLowerBound());
  const DivisibilityLattice *step = getLatticeElementFor(op, loop.getStep());
  if (lower->getValue().isUninitialized() || step->getValue().isUninitialized())
    return;
  // The values taken are lb + k * step < ub, with k >= 0: no wrap.
  Divisibility iv =
      add(lower->getValue().get(),
          mul(step->getValue().get(), Divisibility::unknown(), *width, false),
          *width, false);
  DivisibilityLattice *ivLattice = argLattices[0];
  propagateIfChanged(ivLattice, ivLattice->join(DivisibilityValue(iv)));
}

void DivisibilityAnalysis::setToEntryState(DivisibilityLattice *lattice) {
  propagateIfChanged(lattice,
                     lattice->join(DivisibilityValue(Divisibility::unknown())));
}

void loadDivisibilityAnalysis(DataFlowSolver &solver) {
  solver.load<dataflow::DeadCodeAnalysis>();
  solver.load<dataflow::SparseConstantPropagation>();
  solver.load<DivisibilityAnalysis>();
}

Divisibility getDivisibility(const DataFlowSolver &solver, Value value) {
  const auto *lattice = solver.lookupState<DivisibilityLattice>(value);
  if (!lattice || lattice->getValue().isUninitialized())
    return Divisibility::unknown();
  return lattice->getValue().get();
}

Divisibility evaluateAffineDivisibility(AffineExpr expr,
                                        ArrayRef<Divisibility> dims,
                                        ArrayRef<Divisibility> symbols) {
  return evaluate(expr, dims, symbols);
}

} // namespace tessel
