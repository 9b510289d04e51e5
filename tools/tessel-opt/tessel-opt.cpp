//===- tessel-opt.cpp - mlir-opt with tessel's dialects and passes --------===//
//
// The driver for tessel's lit tests: parses MLIR, runs passes given on the
// command line, prints the result. It registers tessel's dialect, the tpu
// dialect of Mosaic kernels, only the upstream dialects tessel's code
// generator emits or lowers through, and, when tests are built, the test-only
// passes of test/lib.
//
//===----------------------------------------------------------------------===//
#include "tessel/Analysis/AlignmentVerifier.h"
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"
#include "tessel/Dialect/TpuDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#ifdef TESSEL_INCLUDE_TEST_PASSES
#include "TestPasses.h"
#endif

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  tessel::registerCodegenPasses();
  tessel::registerVerifyAlignmentPass();
  tessel::registerCheckAssumptionsPass();
#ifdef TESSEL_INCLUDE_TEST_PASSES
  tessel::test::registerTestPasses();
#endif
  mlir::DialectRegistry registry;
  registry.insert<mlir::affine::AffineDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                  mlir::NVVM::NVVMDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect, mlir::vector::VectorDialect,
                  tessel::TesselDialect, tessel::tpu::TpuDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tessel optimizer driver\n", registry));
}
