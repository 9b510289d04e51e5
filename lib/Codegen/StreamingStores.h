//===- StreamingStores.h - Non-temporal stores into large outputs -*- C++ -*-=//
//
// Private to lib/Codegen. A kernel that writes an output larger than the
// caches reads every line it writes first (the store misses, the line comes
// from memory, then it is overwritten): a third more memory traffic than a
// copy, which streams its output with non-temporal stores. The transpose
// emitter's kernel writes whole 64-byte lines of its output (32-element
// runs of the output's rows from its tile), as vector stores after LLVM's
// loop vectorizer:
//
//   %p = getelementptr float, ptr %out, i64 %i    ; %i a multiple of 16
//   store <16 x float> %v, ptr %p, align 4
//
// becomes, in a copy of the kernel that may assume its outputs 64-byte
// aligned,
//
//   store <16 x float> %v, ptr %p, align 64, !nontemporal !{i32 1}
//   ...
//   call void @llvm.x86.sse.sfence()               ; before each return
//
// (`vmovntps`). Only stores that are provably aligned to their size on an
// aligned output are marked: an unaligned non-temporal store is no
// instruction x86 has. The executable runs the copy only when every
// output pointer is 64-byte aligned, the kernel otherwise: the same bits
// either way, only the cache hint differs.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_STREAMINGSTORES_H
#define TESSEL_LIB_CODEGEN_STREAMINGSTORES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace tessel {

/// The function attribute that asks markStreamingStores for non-temporal
/// stores: its value lists the argument numbers of the outputs, e.g. "1,2".
constexpr llvm::StringLiteral kStreamOutputsAttr = "tessel-stream-outputs";

/// Adds to `module` a copy of the function `name` named `name + suffix`
/// marked with kStreamOutputsAttr for the arguments `outputs`.
/// @pre  `name` is defined in `module`; `outputs` are pointer arguments
/// @post the original function is unchanged
void addStreamingCopy(llvm::Module &module, llvm::StringRef name,
                      llvm::StringRef suffix, llvm::ArrayRef<unsigned> outputs);

/// The suffix of a kernel's streaming copy.
constexpr llvm::StringLiteral kStreamSuffix = "_stream";

/// In every function of `module` marked with kStreamOutputsAttr: makes the
/// vector stores of a power of two of at least 16 bytes into the listed
/// arguments that are aligned to their size (to 64 bytes for wider ones,
/// which the code generator splits) when the arguments are 64-byte
/// aligned non-temporal (with that alignment), and fences them with an
/// sfence before each return. Returns how many stores it marked.
/// @pre  the module is optimized (the loop vectorizer made the vector
///       stores) and its target is x86
/// @post stores it cannot prove aligned stay as they were
int markStreamingStores(llvm::Module &module);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_STREAMINGSTORES_H
