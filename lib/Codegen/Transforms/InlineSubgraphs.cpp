//===- InlineSubgraphs.cpp - -tessel-inline-subgraphs ---------------------===//
//
// Inlines every tessel.pure_call whose callee has exactly one call site in
// the module, and erases the callee. A function called from several places
// stays a function (inlining it everywhere would grow the code with every
// split of the partitioner). Subgraph functions have one block; their
// bodies are cloned in front of the call.
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringMap.h"

namespace tessel {
namespace {

struct InlineSubgraphsPass
    : public mlir::PassWrapper<InlineSubgraphsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(InlineSubgraphsPass)
  llvm::StringRef getArgument() const final {
    return "tessel-inline-subgraphs";
  }
  llvm::StringRef getDescription() const final {
    return "Inline pure_calls of functions that are called exactly once";
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    // Inlining a call can expose calls that are now the only ones of their
    // callee; repeat until nothing changes.
    for (bool changed = true; changed;) {
      changed = false;
      llvm::StringMap<llvm::SmallVector<PureCallOp>> calls;
      module.walk(
          [&](PureCallOp call) { calls[call.getCallee()].push_back(call); });
      for (auto &entry : calls) {
        if (entry.second.size() != 1)
          continue;
        auto callee = module.lookupSymbol<mlir::func::FuncOp>(entry.first());
        if (!callee || !callee.isPrivate() || !callee.getBody().hasOneBlock())
          continue;
        inlineCall(entry.second.front(), callee);
        callee.erase();
        // Inlining moved and erased calls: collect them again.
        changed = true;
        break;
      }
    }
  }

  static void inlineCall(PureCallOp call, mlir::func::FuncOp callee) {
    mlir::IRMapping mapping;
    mlir::Block &body = callee.getBody().front();
    mapping.map(body.getArguments(), call.getOperands());
    mlir::OpBuilder b(call);
    for (mlir::Operation &op : body.without_terminator())
      b.clone(op, mapping);
    auto ret = llvm::cast<mlir::func::ReturnOp>(body.getTerminator());
    for (auto [result, value] : llvm::zip(call.getResults(), ret.getOperands()))
      result.replaceAllUsesWith(mapping.lookup(value));
    call.erase();
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createInlineSubgraphsPass() {
  return std::make_unique<InlineSubgraphsPass>();
}

} // namespace tessel
