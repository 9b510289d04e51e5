//===- TestDivisibility.cpp - --tessel-test-divisibility ------------------===//
//
// Asks the divisibility analysis about the operand of every
//
//   "test.divisible"(%v) {by = 128 : i64} : (index) -> ()
//
// and answers with one remark at the op, exactly one of
//
//   proven multiple of 128
//   proven not a multiple of 128
//   unknown whether a multiple of 128
//
// (lit tests run it with --allow-unregistered-dialect -verify-diagnostics).
//
//===----------------------------------------------------------------------===//
#include "TestPasses.h"
#include "tessel/Analysis/DivisibilityAnalysis.h"

#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace tessel::test {
namespace {

struct TestDivisibilityPass
    : public mlir::PassWrapper<TestDivisibilityPass, mlir::OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestDivisibilityPass)

  llvm::StringRef getArgument() const final {
    return "tessel-test-divisibility";
  }
  llvm::StringRef getDescription() const final {
    return "Remark, at every test.divisible op, whether its operand is "
           "proven a multiple of `by`, proven not, or unknown";
  }

  void runOnOperation() override {
    mlir::DataFlowSolver solver;
    loadDivisibilityAnalysis(solver);
    if (mlir::failed(solver.initializeAndRun(getOperation())))
      return signalPassFailure();
    getOperation()->walk([&](mlir::Operation *op) {
      if (op->getName().getStringRef() != "test.divisible")
        return;
      auto by = op->getAttrOfType<mlir::IntegerAttr>("by");
      if (op->getNumOperands() != 1 || !by || by.getInt() <= 0) {
        op->emitError("test.divisible needs one operand and a positive "
                      "integer `by`");
        return signalPassFailure();
      }
      int64_t n = by.getInt();
      Divisibility d = getDivisibility(solver, op->getOperand(0));
      switch (d.isMultipleOf(n).verdict) {
      case Verdict::Proven:
        op->emitRemark() << "proven multiple of " << n;
        break;
      case Verdict::ProvenNot:
        op->emitRemark() << "proven not a multiple of " << n;
        break;
      case Verdict::Unknown:
        op->emitRemark() << "unknown whether a multiple of " << n;
        break;
      }
    });
  }
};

} // namespace

void registerTestDivisibilityPass() {
  mlir::PassRegistration<TestDivisibilityPass>();
}

} // namespace tessel::test
