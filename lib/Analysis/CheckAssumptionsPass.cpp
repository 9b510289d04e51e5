//===- CheckAssumptionsPass.cpp - --tessel-check-assumptions --------------===//
//
// The alignment proofs trust `tpu.assume_multiple`; a false promise gives
// wrong results. This debug pass checks every promise at run time:
//
//   %j = tpu.assume_multiple %b, 128 : index
//
// becomes
//
//   %c128 = arith.constant 128 : index
//   %r = arith.remsi %b, %c128 : index
//   %c0 = arith.constant 0 : index
//   %ok = arith.cmpi eq, %r, %c0 : index
//   cf.assert %ok, "tpu.assume_multiple: %b is not a multiple of 128 (at
//   k.mlir:7:8)" %j = tpu.assume_multiple %b, 128 : index
//
// so that a lowered kernel traps with a message naming the value and the
// multiple.
//
//===----------------------------------------------------------------------===//
#include "tessel/Analysis/AlignmentVerifier.h"
#include "tessel/Analysis/DivisibilityAnalysis.h"
#include "tessel/Dialect/TpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel {
namespace {

using namespace mlir;

std::string locationText(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file.getFilename().str() + ":" + std::to_string(file.getLine()) +
           ":" + std::to_string(file.getColumn());
  std::string s;
  llvm::raw_string_ostream os(s);
  os << loc;
  return s;
}

/// i1 that is true when `v` (of `width` bits) is a multiple of n > 0.
Value isMultiple(OpBuilder &b, Location loc, Value v, int64_t n,
                 unsigned width) {
  Type type = v.getType();
  auto constant = [&](int64_t c) {
    return b.create<arith::ConstantOp>(loc, type, b.getIntegerAttr(type, c));
  };
  Value zero = constant(0);
  Value rest;
  if (width == 64 || n < (int64_t(1) << (width - 1)))
    rest = b.create<arith::RemSIOp>(loc, v, constant(n));
  else if (n == (int64_t(1) << (width - 1)))
    rest = b.create<arith::AndIOp>(loc, v, constant(n - 1));
  else
    rest = v; // only 0 is a multiple of n among `width`-bit values
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rest, zero);
}

struct CheckAssumptionsPass
    : public PassWrapper<CheckAssumptionsPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckAssumptionsPass)

  StringRef getArgument() const final { return "tessel-check-assumptions"; }
  StringRef getDescription() const final {
    return "Check every tpu.assume_multiple at run time: trap with a message "
           "naming the value and the multiple when the promise is false";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, cf::ControlFlowDialect>();
  }

  void runOnOperation() override {
    SmallVector<std::pair<tpu::AssumeMultipleOp, std::string>> promises;
    {
      AsmState state(getOperation());
      getOperation()->walk([&](tpu::AssumeMultipleOp op) {
        std::string name;
        llvm::raw_string_ostream os(name);
        op.getValue().printAsOperand(os, state);
        promises.push_back({op, name});
      });
    }
    for (auto &[op, name] : promises) {
      std::optional<unsigned> width =
          divisibilityWidth(op.getValue().getType());
      int64_t n = op.getMultipleAttr().getValue().getSExtValue();
      if (!width || n <= 0)
        continue; // the verifier rejects these
      OpBuilder b(op);
      Value ok = isMultiple(b, op.getLoc(), op.getValue(), n, *width);
      b.create<cf::AssertOp>(op.getLoc(), ok,
                             "tpu.assume_multiple: " + name +
                                 " is not a multiple of " + std::to_string(n) +
                                 " (at " + locationText(op.getLoc()) + ")");
    }
  }
};

} // namespace

std::unique_ptr<Pass> createCheckAssumptionsPass() {
  return std::make_unique<CheckAssumptionsPass>();
}

void registerCheckAssumptionsPass() {
  PassRegistration<CheckAssumptionsPass>();
}

} // namespace tessel
