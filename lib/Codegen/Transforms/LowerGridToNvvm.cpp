//===- LowerGridToNvvm.cpp - -tessel-lower-grid-to-nvvm -------------------===//
//
// The GPU's counterpart of -tessel-lower-grid-to-cpu: a kernel's entry
// function (one with `tessel.num_threads`) becomes an NVVM kernel whose
// threads are the GPU's own. Thread and block ids read the PTX special
// registers:
//
//   %th = gpu.thread_id x upper_bound 128
//     -> %0 = nvvm.read.ptx.sreg.tid.x : i32
//        %th = arith.index_castui %0 : i32 to index
//   %bl = gpu.block_id x upper_bound 24576
//     -> nvvm.read.ptx.sreg.ctaid.x, the same way
//
// and the function gets `tessel.gpu_kernel`: -tessel-lower-to-llvm makes it
// an NVVM kernel (`nvvm.kernel`, `nvvm.maxntid = array<i32: 128, 1, 1>`,
// the launch's block size, which LLVM uses to bound the thread id).
// Shared tiles and barriers stay: -tessel-lower-tensors turns them into a
// global in address space 3 and `nvvm.barrier0` once tensors are pointers,
// so that no load or store can move across a barrier.
//
// A barrier must be reached by every thread of a block: a
// `tessel.sync_threads` inside a loop or a branch is refused, as are launches
// the GPU cannot run (more than 1024 threads per block, more than 2^31 - 1
// blocks).
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace tessel {
namespace {

/// Whether the GPU can run `func`'s launch, and every thread reaches its
/// barriers.
mlir::LogicalResult checkLaunch(mlir::func::FuncOp func) {
  auto threads = func->getAttrOfType<mlir::IntegerAttr>("tessel.num_threads");
  auto blocks = func->getAttrOfType<mlir::IntegerAttr>("tessel.num_blocks");
  if (!threads || !blocks)
    return func.emitOpError()
           << "needs integer tessel.num_threads and tessel.num_blocks";
  if (threads.getInt() < 1 || threads.getInt() > 1024)
    return func.emitOpError()
           << "runs " << threads.getInt()
           << " threads per block; a GPU block has 1 to 1024 threads";
  if (blocks.getInt() < 1 || blocks.getInt() > (int64_t(1) << 31) - 1)
    return func.emitOpError() << "runs " << blocks.getInt()
                              << " blocks; a GPU grid has 1 to 2^31 - 1 "
                                 "blocks along x";
  mlir::WalkResult result = func.walk([&](mlir::Operation *op) {
    if (llvm::isa<SyncThreadsOp>(op) && op->getParentOp() != func) {
      op->emitOpError() << "inside a loop or branch is not supported on the "
                           "GPU: every thread must reach the same barriers";
      return mlir::WalkResult::interrupt();
    }
    auto thread = llvm::dyn_cast<mlir::gpu::ThreadIdOp>(op);
    auto block = llvm::dyn_cast<mlir::gpu::BlockIdOp>(op);
    if ((thread && thread.getDimension() != mlir::gpu::Dimension::x) ||
        (block && block.getDimension() != mlir::gpu::Dimension::x)) {
      op->emitOpError() << "only the x dimension of the grid is used by "
                           "tessel's emitters";
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return mlir::failure(result.wasInterrupted());
}

/// Replaces the id `op` by the special register `SregOp`, as an index.
template <typename SregOp> void replaceBySreg(mlir::Operation *op) {
  mlir::OpBuilder b(op);
  mlir::Value id = b.create<SregOp>(op->getLoc(), b.getI32Type());
  mlir::Value index =
      b.create<mlir::arith::IndexCastUIOp>(op->getLoc(), b.getIndexType(), id);
  op->getResult(0).replaceAllUsesWith(index);
  op->erase();
}

mlir::LogicalResult lowerEntry(mlir::func::FuncOp func) {
  if (mlir::failed(checkLaunch(func)))
    return mlir::failure();
  func.walk([](mlir::gpu::ThreadIdOp op) {
    replaceBySreg<mlir::NVVM::ThreadIdXOp>(op);
  });
  func.walk([](mlir::gpu::BlockIdOp op) {
    replaceBySreg<mlir::NVVM::BlockIdXOp>(op);
  });
  func->setAttr(kGpuKernelAttr, mlir::UnitAttr::get(func.getContext()));
  return mlir::success();
}

struct LowerGridToNvvmPass
    : public mlir::PassWrapper<LowerGridToNvvmPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerGridToNvvmPass)
  llvm::StringRef getArgument() const final {
    return "tessel-lower-grid-to-nvvm";
  }
  llvm::StringRef getDescription() const final {
    return "Make kernel entries NVVM kernels reading the PTX thread and "
           "block ids";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::NVVM::NVVMDialect, mlir::arith::ArithDialect>();
  }
  void runOnOperation() override {
    for (auto func : getOperation().getOps<mlir::func::FuncOp>())
      if (func->hasAttr("tessel.num_threads") && !func.isExternal())
        if (mlir::failed(lowerEntry(func)))
          return signalPassFailure();
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createLowerGridToNvvmPass() {
  return std::make_unique<LowerGridToNvvmPass>();
}

} // namespace tessel
