//===- NvptxBackend.h - The llvm dialect to PTX -----------------*- C++ -*-===//
//
// Private to lib/Codegen: the last step of Backend::Nvptx (Nvptx.h).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_NVPTXBACKEND_H
#define TESSEL_LIB_CODEGEN_NVPTXBACKEND_H

#include "tessel/Codegen/Compiler.h"
#include "tessel/Support/Expected.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace tessel {

/// The llvm-dialect `module` of GPU kernels as LLVM IR for
/// nvptx64-nvidia-cuda (optimized at -O3, libdevice linked in where a
/// kernel calls it) when `ptx` is false, or as PTX for sm_`smVersion`.
Expected<std::string> translateToNvptx(mlir::ModuleOp module, int smVersion,
                                       bool ptx);

/// Backend::Nvptx's Executable::compile: opens the CUDA driver (the error
/// says "no CUDA driver found" without one), compiles the module to PTX for
/// `options.smVersion` (the device's compute capability when 0) and loads
/// it.
Expected<std::shared_ptr<Executable>>
compileGpuExecutable(const HloModule &module, const CompileOptions &options);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_NVPTXBACKEND_H
