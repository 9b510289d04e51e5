//===- LowerTensors.cpp - -tessel-lower-tensors ---------------------------===//
//
// Tensors become pointers to their (1-D, flattened) buffers; there is no
// bufferization: a kernel writes its outputs in place, so a tensor value
// and every tensor.insert into it name the same buffer.
//
//   %x = tensor.extract %t[%i] : tensor<12582912xbf16>
//     -> %p = llvm.getelementptr %t[%i] : (!llvm.ptr, i64) -> !llvm.ptr, bf16
//        %x = llvm.load %p : !llvm.ptr -> bf16
//   %u = tensor.insert %x into %t[%i]   -> llvm.store %x, %p; %u is %t
//
// A c64/c128 element is loaded and stored as a struct of two f32/f64 (its
// interleaved parts), cast to the complex value -tessel-lower-to-llvm
// converts the same way. Constant tensors become internal LLVM globals.
// Remaining tessel.pure_calls (functions called more than once) become
// func.calls. A kernel's entry function (with `tessel.num_threads`) returns
// nothing afterwards: its outputs are the buffers it was given.
//
// In a GPU kernel (`tessel.gpu_kernel`, -tessel-lower-grid-to-nvvm) a shared
// tile is a global of the block's shared memory, address space 3, used
// through a generic pointer (LLVM infers the address space back):
//
//   %tile = tessel.allocate_shared : tensor<1056xf32>
//     -> llvm.mlir.global internal @k_shared_0() {addr_space = 3 : i32}
//        %s = llvm.mlir.addressof @k_shared_0 : !llvm.ptr<3>
//        %tile = llvm.addrspacecast %s : !llvm.ptr<3> to !llvm.ptr
//
// `tessel.sync_threads` becomes `nvvm.barrier0` (its results are its
// operands' buffers), loads from the kernel's inputs are `invariant` (the
// kernel never writes them: XLA's `!invariant.load`, which lets the GPU read
// them through its read-only cache), and a vector load or store is aligned
// to its size: -tessel-vectorize-loads-stores proved its offset a multiple
// of the vector size, and GPU buffers are aligned to at least 256 bytes
// (shared tiles and constant globals to 16).
//
//===----------------------------------------------------------------------===//
#include "Bf16Rounding.h"
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tessel {
namespace {

mlir::Value toI64(mlir::OpBuilder &b, mlir::Location loc, mlir::Value index) {
  return b.create<mlir::arith::IndexCastOp>(loc, b.getI64Type(), index);
}

mlir::Type memoryType(mlir::Type type);

/// The address of element `indices` (one index, of a flattened tensor) of
/// `base`. With `split`, an index `x + iv` (iv a loop's induction variable)
/// is two steps, by x then by iv: see inGuardOfLoop.
mlir::Value elementPointer(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value base, mlir::Type element,
                           mlir::ValueRange indices, bool split = false) {
  auto ptr = mlir::LLVM::LLVMPointerType::get(b.getContext());
  auto add = split ? indices.front().getDefiningOp<mlir::arith::AddIOp>()
                   : mlir::arith::AddIOp();
  if (add) {
    mlir::Value first = b.create<mlir::LLVM::GEPOp>(
        loc, ptr, element, base, mlir::ValueRange{toI64(b, loc, add.getLhs())},
        /*inbounds=*/true);
    return b.create<mlir::LLVM::GEPOp>(
        loc, ptr, element, first, mlir::ValueRange{toI64(b, loc, add.getRhs())},
        /*inbounds=*/true);
  }
  mlir::Value offset =
      indices.empty()
          ? mlir::Value(b.create<mlir::arith::ConstantIntOp>(loc, 0, 64))
          : toI64(b, loc, indices.front());
  return b.create<mlir::LLVM::GEPOp>(
      loc, ptr,
      // A complex element steps by its struct (LLVM has no complex type).
      llvm::isa<mlir::ComplexType>(element) ? memoryType(element) : element,
      base, mlir::ValueRange{offset}, /*inbounds=*/true);
}

/// The type an element (or a vector of them) is loaded and stored as: bf16
/// moves as i16. LLVM has no bf16 registers on most x86 CPUs, so it would
/// carry a bf16 value that is only copied (a select, a phi) through f32 and
/// back, and the way back (vcvtneps2bf16 where the CPU has it) flushes
/// subnormals to zero. As an integer it is copied bit for bit; arithmetic
/// widens it with integer code (Bf16Rounding.h) anyway.
mlir::Type memoryType(mlir::Type type) {
  // c64/c128 are (re, im) pairs: LLVM structs, as -tessel-lower-to-llvm
  // converts complex values.
  if (auto complex = llvm::dyn_cast<mlir::ComplexType>(type))
    return mlir::LLVM::LLVMStructType::getLiteral(
        type.getContext(),
        {complex.getElementType(), complex.getElementType()});
  mlir::Type bits = bf16AsInteger(type);
  return bits ? bits : type;
}

/// `value` as `type`: a bitcast, or for a complex value and its struct a
/// cast that -tessel-lower-to-llvm's conversion resolves.
mlir::Value castTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                   mlir::Value value) {
  if (llvm::isa<mlir::ComplexType>(type) ||
      llvm::isa<mlir::ComplexType>(value.getType()))
    return b.create<mlir::UnrealizedConversionCastOp>(loc, type, value)
        .getResult(0);
  return b.create<mlir::arith::BitcastOp>(loc, type, value);
}

/// A load of `type` through `ptr`, as memoryType(type).
mlir::Value load(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                 mlir::Value ptr, unsigned align = 0) {
  mlir::Type stored = memoryType(type);
  mlir::Value value = b.create<mlir::LLVM::LoadOp>(loc, stored, ptr, align);
  if (stored != type)
    value = castTo(b, loc, type, value);
  return value;
}

void store(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
           mlir::Value ptr, unsigned align = 0) {
  mlir::Type stored = memoryType(value.getType());
  if (stored != value.getType())
    value = castTo(b, loc, stored, value);
  b.create<mlir::LLVM::StoreOp>(loc, value, ptr, align);
}

/// Whether `op` is inside a GPU kernel's entry function.
bool inGpuKernel(mlir::Operation *op) {
  auto func = op->getParentOfType<mlir::func::FuncOp>();
  return func && func->hasAttr(kGpuKernelAttr);
}

/// The alignment of a vector access: its element's size on the CPU, the
/// vector's size (at most 16 bytes, the GPU's widest access) in a GPU
/// kernel.
unsigned vectorAlignment(mlir::Operation *op, mlir::VectorType type) {
  unsigned element = (type.getElementTypeBitWidth() + 7) / 8;
  if (!inGpuKernel(op))
    return element;
  uint64_t bytes = element * type.getNumElements();
  if (!llvm::isPowerOf2_64(bytes))
    return element;
  return static_cast<unsigned>(std::min<uint64_t>(bytes, 16));
}

/// The mark of a tensor.extract that inGuardOfLoop holds for (set before
/// the conversion, which moves loop bodies out of their loops).
constexpr llvm::StringLiteral kSplitAddress = "tessel.split_address";

/// Whether `op` reads at `x + iv`, iv the induction variable of an
/// enclosing scf.for, from inside an scf.if within that loop: a guarded
/// read of a thread loop (a map with fewer threads than the launch, such as
/// the transpose emitter's reading phase). Its address is then two steps,
/// by x and then by iv (elementPointer with `split`). As one index, LLVM
/// turned `x + iv` into an `or` (x's low bits are zero), then hoisted it out
/// of the guard, which drops the `or`'s disjoint flag, and its loop
/// vectorizer, no longer seeing consecutive addresses in iv, gathered
/// (vgatherqps): the 3-D transpose f32[64,512,512] -> [512,512,64] after a
/// negate took 7.1-7.5 ms of CPU time at one thread on Zen 5, 4.5-4.6 split
/// (after an exp 10.6-11.2 against 5.0-5.3); 2-D transposes and the column
/// reductions, whose reads change too, measured the same.
bool inGuardOfLoop(mlir::Operation *op, mlir::Type element,
                   mlir::ValueRange indices) {
  if (indices.size() != 1 || llvm::isa<mlir::ComplexType>(element))
    return false;
  auto add = indices.front().getDefiningOp<mlir::arith::AddIOp>();
  auto step = add ? llvm::dyn_cast<mlir::BlockArgument>(add.getRhs())
                  : mlir::BlockArgument();
  if (!step)
    return false;
  auto loop = llvm::dyn_cast_if_present<mlir::scf::ForOp>(
      step.getOwner()->getParentOp());
  if (!loop || step != loop.getInductionVar())
    return false;
  for (mlir::Operation *p = op->getParentOp(); p && p != loop;
       p = p->getParentOp())
    if (llvm::isa<mlir::scf::IfOp>(p))
      return true;
  return false;
}

struct ExtractLowering : mlir::OpConversionPattern<mlir::tensor::ExtractOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult
  matchAndRewrite(mlir::tensor::ExtractOp op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    mlir::Type element = op.getType();
    mlir::Value ptr =
        elementPointer(rewriter, op.getLoc(), adaptor.getTensor(), element,
                       adaptor.getIndices(), op->hasAttr(kSplitAddress));
    rewriter.replaceOp(op, load(rewriter, op.getLoc(), element, ptr));
    return mlir::success();
  }
};

struct InsertLowering : mlir::OpConversionPattern<mlir::tensor::InsertOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult
  matchAndRewrite(mlir::tensor::InsertOp op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    mlir::Value ptr =
        elementPointer(rewriter, op.getLoc(), adaptor.getDest(),
                       op.getScalar().getType(), adaptor.getIndices());
    store(rewriter, op.getLoc(), adaptor.getScalar(), ptr);
    rewriter.replaceOp(op, adaptor.getDest());
    return mlir::success();
  }
};

/// A vector of consecutive elements from a 1-D tensor: one vector load.
struct TransferReadLowering
    : mlir::OpConversionPattern<mlir::vector::TransferReadOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult
  matchAndRewrite(mlir::vector::TransferReadOp op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    if (!llvm::isa<mlir::RankedTensorType>(op.getSource().getType()) ||
        op.getVectorType().getRank() != 1 || op.getIndices().size() != 1)
      return rewriter.notifyMatchFailure(op, "not a 1-D tensor read");
    mlir::VectorType type = op.getVectorType();
    mlir::Value ptr =
        elementPointer(rewriter, op.getLoc(), adaptor.getSource(),
                       type.getElementType(), adaptor.getIndices());
    unsigned align = vectorAlignment(op, type);
    rewriter.replaceOp(op, load(rewriter, op.getLoc(), type, ptr, align));
    return mlir::success();
  }
};

/// The vector store of a vector.transfer_write into a 1-D tensor.
struct TransferWriteLowering
    : mlir::OpConversionPattern<mlir::vector::TransferWriteOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult
  matchAndRewrite(mlir::vector::TransferWriteOp op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    if (!llvm::isa<mlir::RankedTensorType>(op.getSource().getType()) ||
        op.getVectorType().getRank() != 1 || op.getIndices().size() != 1)
      return rewriter.notifyMatchFailure(op, "not a 1-D tensor write");
    mlir::VectorType type = op.getVectorType();
    mlir::Value ptr =
        elementPointer(rewriter, op.getLoc(), adaptor.getSource(),
                       type.getElementType(), adaptor.getIndices());
    unsigned align = vectorAlignment(op, type);
    store(rewriter, op.getLoc(), adaptor.getVector(), ptr, align);
    rewriter.replaceOp(op, adaptor.getSource());
    return mlir::success();
  }
};

/// A shared tile is scratch memory of the worker running the kernel: a
/// stack buffer, allocated once per call (the grid lowering keeps it out
/// of the block and thread loops). In a GPU kernel it is the block's shared
/// memory: a global in address space 3.
struct AllocateSharedLowering : mlir::OpConversionPattern<AllocateSharedOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult
  matchAndRewrite(AllocateSharedOp op, OpAdaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    if (inGpuKernel(op)) {
      auto func = op->getParentOfType<mlir::func::FuncOp>();
      auto module = op->getParentOfType<mlir::ModuleOp>();
      std::string name;
      for (int i = 0;; ++i) {
        name = (func.getName() + "_shared_" + llvm::Twine(i)).str();
        if (!module.lookupSymbol(name))
          break;
      }
      auto arrayType = mlir::LLVM::LLVMArrayType::get(
          memoryType(type.getElementType()), type.getNumElements());
      {
        mlir::OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(module.getBody());
        rewriter.create<mlir::LLVM::GlobalOp>(
            op.getLoc(), arrayType, /*isConstant=*/false,
            mlir::LLVM::Linkage::Internal, name, mlir::Attribute(),
            /*alignment=*/16, /*addrSpace=*/3);
      }
      mlir::Value shared = rewriter.create<mlir::LLVM::AddressOfOp>(
          op.getLoc(), mlir::LLVM::LLVMPointerType::get(op.getContext(), 3),
          name);
      rewriter.replaceOpWithNewOp<mlir::LLVM::AddrSpaceCastOp>(
          op, mlir::LLVM::LLVMPointerType::get(op.getContext()), shared);
      return mlir::success();
    }
    mlir::Value count = rewriter.create<mlir::LLVM::ConstantOp>(
        op.getLoc(), rewriter.getI64Type(),
        rewriter.getI64IntegerAttr(type.getNumElements()));
    rewriter.replaceOpWithNewOp<mlir::LLVM::AllocaOp>(
        op, mlir::LLVM::LLVMPointerType::get(op.getContext()),
        memoryType(type.getElementType()), count, /*alignment=*/64);
    return mlir::success();
  }
};

/// A barrier of the block's threads; the tiles it hands on are the same
/// buffers. Only GPU kernels keep barriers this far (the CPU's grid
/// lowering turns them into separate thread loops).
struct SyncThreadsLowering : mlir::OpConversionPattern<SyncThreadsOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult
  matchAndRewrite(SyncThreadsOp op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    if (!inGpuKernel(op))
      return rewriter.notifyMatchFailure(op, "not in a GPU kernel");
    rewriter.create<mlir::NVVM::Barrier0Op>(op.getLoc());
    rewriter.replaceOp(op, adaptor.getOperands());
    return mlir::success();
  }
};

struct ConstantLowering : mlir::OpConversionPattern<mlir::arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult
  matchAndRewrite(mlir::arith::ConstantOp op, OpAdaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(op.getValue());
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(op.getType());
    if (!dense || !type)
      return rewriter.notifyMatchFailure(op, "not a constant tensor");
    auto module = op->getParentOfType<mlir::ModuleOp>();
    auto arrayType = mlir::LLVM::LLVMArrayType::get(type.getElementType(),
                                                    type.getNumElements());
    std::string name;
    for (int i = 0;; ++i) {
      name = "tessel_constant_" + std::to_string(i);
      if (!module.lookupSymbol(name))
        break;
    }
    {
      mlir::OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      // Aligned like a GPU's buffers: a vector load from it may assume 16.
      rewriter.create<mlir::LLVM::GlobalOp>(
          op.getLoc(), arrayType,
          /*isConstant=*/true, mlir::LLVM::Linkage::Internal, name, dense,
          /*alignment=*/16);
    }
    rewriter.replaceOpWithNewOp<mlir::LLVM::AddressOfOp>(
        op, mlir::LLVM::LLVMPointerType::get(op.getContext()), name);
    return mlir::success();
  }
};

/// Loads through a GEP from one of a GPU kernel's inputs (the arguments
/// before its outputs) read memory the kernel never writes.
void markInputLoadsInvariant(mlir::func::FuncOp kernel) {
  unsigned numInputs = kernel.getNumArguments() - kernel.getNumResults();
  mlir::Block &entry = kernel.getBody().front();
  kernel.walk([&](mlir::LLVM::LoadOp load) {
    auto gep = load.getAddr().getDefiningOp<mlir::LLVM::GEPOp>();
    mlir::Value base = gep ? gep.getBase() : load.getAddr();
    auto arg = llvm::dyn_cast<mlir::BlockArgument>(base);
    if (arg && arg.getOwner() == &entry && arg.getArgNumber() < numInputs)
      load.setInvariant(true);
  });
}

struct LowerTensorsPass
    : public mlir::PassWrapper<LowerTensorsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerTensorsPass)
  llvm::StringRef getArgument() const final { return "tessel-lower-tensors"; }
  llvm::StringRef getDescription() const final {
    return "Lower tensors to LLVM pointers, extract/insert to load/store";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                    mlir::arith::ArithDialect>();
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *context = &getContext();
    // Calls that survived inlining become ordinary calls.
    module.walk([](PureCallOp call) {
      mlir::OpBuilder b(call);
      auto replacement = b.create<mlir::func::CallOp>(
          call.getLoc(), call.getCallee(), call.getResultTypes(),
          call.getOperands());
      call.replaceAllUsesWith(replacement.getResults());
      call.erase();
    });
    // Marked before the conversion, which moves loop bodies.
    module.walk([](mlir::tensor::ExtractOp op) {
      if (inGuardOfLoop(op, op.getType(), op.getIndices()))
        op->setAttr(kSplitAddress, mlir::UnitAttr::get(op.getContext()));
    });

    mlir::TypeConverter converter;
    converter.addConversion([](mlir::Type type) { return type; });
    converter.addConversion([&](mlir::RankedTensorType) -> mlir::Type {
      return mlir::LLVM::LLVMPointerType::get(context);
    });
    auto cast = [](mlir::OpBuilder &b, mlir::Type type, mlir::ValueRange in,
                   mlir::Location loc) -> std::optional<mlir::Value> {
      return b.create<mlir::UnrealizedConversionCastOp>(loc, type, in)
          .getResult(0);
    };
    converter.addSourceMaterialization(cast);
    converter.addTargetMaterialization(cast);

    mlir::ConversionTarget target(*context);
    target.addLegalDialect<mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                           mlir::arith::ArithDialect>();
    target.addLegalOp<mlir::UnrealizedConversionCastOp>();
    target.addIllegalOp<mlir::tensor::ExtractOp, mlir::tensor::InsertOp,
                        AllocateSharedOp, SyncThreadsOp>();
    target.addDynamicallyLegalOp<mlir::vector::TransferReadOp>(
        [](mlir::vector::TransferReadOp op) {
          return !llvm::isa<mlir::RankedTensorType>(op.getSource().getType());
        });
    target.addDynamicallyLegalOp<mlir::vector::TransferWriteOp>(
        [](mlir::vector::TransferWriteOp op) {
          return !llvm::isa<mlir::RankedTensorType>(op.getSource().getType());
        });
    target.addDynamicallyLegalOp<mlir::arith::ConstantOp>(
        [](mlir::arith::ConstantOp op) {
          return !llvm::isa<mlir::RankedTensorType>(op.getType());
        });
    target.addDynamicallyLegalOp<mlir::func::FuncOp>([&](mlir::func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType()) &&
             converter.isLegal(&f.getBody());
    });
    target.addDynamicallyLegalOp<mlir::func::ReturnOp, mlir::func::CallOp>(
        [&](mlir::Operation *op) { return converter.isLegal(op); });

    mlir::RewritePatternSet patterns(context);
    patterns.add<ExtractLowering, InsertLowering, ConstantLowering,
                 TransferReadLowering, TransferWriteLowering,
                 AllocateSharedLowering, SyncThreadsLowering>(converter,
                                                              context);
    mlir::populateFunctionOpInterfaceTypeConversionPattern<mlir::func::FuncOp>(
        patterns, converter);
    mlir::populateReturnOpTypeConversionPattern(patterns, converter);
    mlir::populateCallOpTypeConversionPattern(patterns, converter);
    mlir::scf::populateSCFStructuralTypeConversionsAndLegality(
        converter, patterns, target);
    if (mlir::failed(
            mlir::applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    // Entry functions write their outputs in place and return nothing.
    for (auto func : module.getOps<mlir::func::FuncOp>()) {
      if (!func->hasAttr("tessel.num_threads") || func.isExternal())
        continue;
      if (func->hasAttr(kGpuKernelAttr))
        markInputLoadsInvariant(func);
      func.walk(
          [](mlir::func::ReturnOp ret) { ret.getOperandsMutable().clear(); });
      func.setFunctionType(mlir::FunctionType::get(
          context, func.getFunctionType().getInputs(), {}));
    }
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createLowerTensorsPass() {
  return std::make_unique<LowerTensorsPass>();
}

} // namespace tessel
