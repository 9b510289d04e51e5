//===- LowerGridToCpu.cpp - -tessel-lower-grid-to-cpu ---------------------===//
//
// A kernel's entry function (one with `tessel.num_threads`) reads
// gpu.thread_id and gpu.block_id. On the CPU a worker runs a range of
// blocks and, in each, the block's threads one after the other:
//
//   func.func @k(%p, %out, %block_begin: index, %block_end: index) {
//     %r = scf.for %bl = %block_begin to %block_end iter_args(%o = %out) {
//       %s = scf.for %th = 0 to num_threads iter_args(%o2 = %o) {
//         <the body, with %th and %bl for the ids and %o2 for %out>
//       }
//     }
//     return %r
//   }
//
// The thread loop is innermost, so consecutive threads (consecutive output
// elements, for the loop emitter on the CPU) are consecutive iterations:
// LLVM's loop vectorizer turns them into SIMD lanes.
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessel {
namespace {

mlir::LogicalResult lowerEntry(mlir::func::FuncOp func) {
  auto threadsAttr =
      func->getAttrOfType<mlir::IntegerAttr>("tessel.num_threads");
  mlir::Block &body = func.getBody().front();
  auto ret = llvm::cast<mlir::func::ReturnOp>(body.getTerminator());
  bool hasBarrier = false;
  func.walk([&](SyncThreadsOp) { hasBarrier = true; });
  if (hasBarrier)
    return func.emitOpError()
           << "sync_threads on the CPU is not supported yet (TODO(#12))";

  mlir::MLIRContext *context = func.getContext();
  mlir::Location loc = func.getLoc();
  mlir::Type index = mlir::IndexType::get(context);
  unsigned numOutputs = func.getNumResults();
  unsigned numArgs = func.getNumArguments();
  mlir::BlockArgument begin = body.addArgument(index, loc);
  mlir::BlockArgument end = body.addArgument(index, loc);
  llvm::SmallVector<mlir::Type> inputs(body.getArgumentTypes());
  func.setFunctionType(mlir::FunctionType::get(
      context, inputs, func.getFunctionType().getResults()));
  auto outputs = body.getArguments().slice(numArgs - numOutputs, numOutputs);

  llvm::SmallVector<mlir::Operation *> ops;
  for (mlir::Operation &op : body.without_terminator())
    ops.push_back(&op);

  mlir::OpBuilder b(ret);
  mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  mlir::Value numThreads =
      b.create<mlir::arith::ConstantIndexOp>(loc, threadsAttr.getInt());
  llvm::SmallVector<mlir::Value> inits(outputs.begin(), outputs.end());
  auto blockLoop = b.create<mlir::scf::ForOp>(loc, begin, end, one, inits);
  b.setInsertionPointToStart(blockLoop.getBody());
  auto threadLoop = b.create<mlir::scf::ForOp>(loc, zero, numThreads, one,
                                               blockLoop.getRegionIterArgs());
  b.create<mlir::scf::YieldOp>(loc, threadLoop.getResults());
  b.setInsertionPointToStart(threadLoop.getBody());
  auto yield = b.create<mlir::scf::YieldOp>(loc, ret.getOperands());
  for (mlir::Operation *op : ops)
    op->moveBefore(yield);
  for (auto [output, iter] : llvm::zip(outputs, threadLoop.getRegionIterArgs()))
    output.replaceUsesWithIf(iter, [&](mlir::OpOperand &use) {
      return threadLoop->isProperAncestor(use.getOwner());
    });
  threadLoop.walk([&](mlir::gpu::ThreadIdOp op) {
    op.replaceAllUsesWith(threadLoop.getInductionVar());
    op.erase();
  });
  threadLoop.walk([&](mlir::gpu::BlockIdOp op) {
    op.replaceAllUsesWith(blockLoop.getInductionVar());
    op.erase();
  });
  ret.getOperandsMutable().assign(blockLoop.getResults());
  return mlir::success();
}

struct LowerGridToCpuPass
    : public mlir::PassWrapper<LowerGridToCpuPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerGridToCpuPass)
  llvm::StringRef getArgument() const final {
    return "tessel-lower-grid-to-cpu";
  }
  llvm::StringRef getDescription() const final {
    return "Run thread and block ids as loops over a range of blocks";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::scf::SCFDialect, mlir::arith::ArithDialect>();
  }
  void runOnOperation() override {
    for (auto func : getOperation().getOps<mlir::func::FuncOp>())
      if (func->hasAttr("tessel.num_threads") && !func.isExternal())
        if (mlir::failed(lowerEntry(func)))
          return signalPassFailure();
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createLowerGridToCpuPass() {
  return std::make_unique<LowerGridToCpuPass>();
}

} // namespace tessel
