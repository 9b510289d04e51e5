//===- VerifyAlignmentPass.cpp - --tessel-verify-alignment ----------------===//
//
// Mosaic's alignment check as a pass: an error, with notes, for every
// dynamic index into a tiled dim that is not proven a multiple of the tile
// (AlignmentVerifier.h says the rule). The IR is left unchanged.
//
//===----------------------------------------------------------------------===//
#include "tessel/Analysis/AlignmentVerifier.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel {
namespace {

struct VerifyAlignmentPass
    : public mlir::PassWrapper<VerifyAlignmentPass, mlir::OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyAlignmentPass)

  llvm::StringRef getArgument() const final {
    return "tessel-verify-alignment";
  }
  llvm::StringRef getDescription() const final {
    return "Prove that every dynamic index into a tiled memref dim is a "
           "multiple of the tile, or say why not and how to fix it";
  }

  void runOnOperation() override {
    // One numbering of the values for every message (printAsOperand without
    // a state numbers the whole function again for each value).
    mlir::AsmState state(getOperation());
    AlignmentReport report =
        verifyAlignment(getOperation(), [&](mlir::Value v) {
          std::string s;
          llvm::raw_string_ostream os(s);
          v.printAsOperand(os, state);
          return s;
        });
    for (const AlignmentFailure &failure : report.failures)
      emitAlignmentError(failure);
    if (!report.failures.empty())
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createVerifyAlignmentPass() {
  return std::make_unique<VerifyAlignmentPass>();
}

void registerVerifyAlignmentPass() {
  mlir::PassRegistration<VerifyAlignmentPass>();
}

} // namespace tessel
