//===- Nvptx.h - Kernels as PTX for NVIDIA GPUs -----------------*- C++ -*-===//
//
// The GPU end of the code generator. The pipeline's llvm dialect (with
// -tessel-lower-grid-to-nvvm: NVVM kernels, shared tiles in address space
// 3, barriers) is translated to LLVM IR for `nvptx64-nvidia-cuda`, linked
// with CUDA's libdevice when a kernel calls one of its functions
// (`__nv_sinf`, ...), optimized at -O3 and written as PTX by LLVM's NVPTX
// backend for a chosen `sm_XX`:
//
//   tessel compile examples/gelu.hlo --target=nvptx --sm 90 --emit=ptx
//     .version 7.8
//     .target sm_90
//     .visible .entry kernel_0(.param .u64 ...)
//     ...  mov.u32 %r1, %tid.x;  ...  ld.global.nc.v4.u16 ...
//
// No GPU and no CUDA driver are needed to compile; ptxas (CUDA's PTX
// assembler) checks the result in the tests where the toolkit is installed.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CODEGEN_NVPTX_H
#define TESSEL_CODEGEN_NVPTX_H

#include "tessel/Support/Expected.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace tessel {

/// The path of `relative` (e.g. "bin/ptxas", "nvvm/libdevice/libdevice.10.bc")
/// in the CUDA toolkit: under $CUDA_HOME, $CUDA_PATH, the directory above a
/// `ptxas` found on PATH, or /usr/local/cuda, the first that has it. The
/// error says where it looked.
Expected<std::string> findCudaToolkitFile(llvm::StringRef relative);

/// The PTX ISA version tessel asks LLVM to write for sm_`smVersion` (78 for
/// sm_89 and sm_90, 70 for sm_80 to sm_87, ...): the oldest that has the
/// GPU, so that older drivers can still load it.
int ptxVersionFor(int smVersion);

/// Whether LLVM's NVPTX backend knows sm_`smVersion`.
bool isSupportedSm(int smVersion);

} // namespace tessel

#endif // TESSEL_CODEGEN_NVPTX_H
