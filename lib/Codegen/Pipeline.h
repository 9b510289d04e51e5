//===- Pipeline.h - From HLO to the llvm dialect ----------------*- C++ -*-===//
//
// Private to lib/Codegen. The pipeline as a short script:
//
//   emit every kernel of the plan (FusionEmitter.h)
//   tessel-inline-subgraphs, canonicalize, cse
//   tessel-lower-loops, tessel-flatten-tensors, canonicalize, cse
//   tessel-unroll-loops, canonicalize
//   tessel-lower-grid-to-cpu (tessel-lower-grid-to-nvvm for the GPU),
//   tessel-lower-indexing, canonicalize, cse
//   tessel-lower-tensors, tessel-lower-to-llvm
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_PIPELINE_H
#define TESSEL_LIB_CODEGEN_PIPELINE_H

#include "ModulePlan.h"
#include "tessel/Codegen/Compiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace tessel {

/// A context with every dialect and translation the code generator uses.
std::unique_ptr<mlir::MLIRContext> createCodegenContext();

/// The launch configuration the kernels get: the GPU's for Backend::Nvptx,
/// `options.target` otherwise.
Target launchTarget(const CompileOptions &options);

/// Emits the kernels of `plan` into a new module (verified);
/// `squareBits` as for transposeSquareLanes.
Expected<mlir::OwningOpRef<mlir::ModuleOp>>
emitKernels(const ModulePlan &plan, const CompileOptions &options,
            mlir::MLIRContext *context, unsigned squareBits = 256);

/// Runs the pass pipeline on `module`, down to the llvm dialect, writing
/// the dumps the options ask for.
Status lowerToLlvmDialect(mlir::ModuleOp module, const CompileOptions &options);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_PIPELINE_H
