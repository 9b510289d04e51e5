//===- InputPrefetch.h - Prefetching the next tile's input rows -*- C++ -*-===//
//
// Private to lib/Codegen. The transpose emitter's CPU kernel reads a tile
// of 32 rows (64 for bytes) of its input per block, each row's part a few
// hundred contiguous bytes, and the next block reads the tile just to the
// right: the same rows, the next `cols` elements. That is more rows at
// once than the hardware prefetchers follow. For large inputs the kernel
// asks for each of its vector loads from such an input to be preceded, in
// the optimized module, by a prefetch of the same address one tile width
// further:
//
//   %v = load <32 x i8>, ptr %p, align 1
//
// becomes
//
//   %n = getelementptr i8, ptr %p, i64 256       ; the tile's width in bytes
//   call void @llvm.prefetch.p0(ptr %n, i32 0, i32 2, i32 1)
//   %v = load <32 x i8>, ptr %p, align 1
//
// (into L2, for reading). A prefetch never faults, so the last tile's, past
// the row or the array, only costs a wasted line. Measured on the EPYC VM
// (Zen 4, thread CPU time, one thread, 64 MiB): s8 negate -> transpose ->
// abs 14.2 -> 11.6 ms, f32 exp -> transpose -> abs 10.2 -> 8.2 ms, the
// emitted bf16 transpose 9.8 -> 8.1 ms (BENCHMARKS.md, "The emitter's
// transposes prefetch the next tile").
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_INPUTPREFETCH_H
#define TESSEL_LIB_CODEGEN_INPUTPREFETCH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <utility>

namespace llvm {
class Module;
} // namespace llvm

namespace tessel {

/// The function attribute that asks addInputPrefetches for prefetches: its
/// value lists argument numbers and distances in bytes, e.g. "0:256,2:512".
constexpr llvm::StringLiteral kPrefetchInputsAttr = "tessel-prefetch-inputs";

/// Marks the function `name` of `module` with kPrefetchInputsAttr for
/// `inputs` (argument number, bytes ahead) and keeps it from being inlined
/// (so that its loads stay where the mark is). Nothing when `inputs` is
/// empty.
/// @pre `name` is defined in `module`; the arguments are pointers
void markInputPrefetches(llvm::Module &module, llvm::StringRef name,
                         llvm::ArrayRef<std::pair<unsigned, int64_t>> inputs);

/// In every function of `module` marked with kPrefetchInputsAttr: puts
/// before each vector load (plain or masked) whose address is an offset
/// from a listed argument a prefetch of that address plus the argument's
/// distance.
/// Returns how many prefetches it added.
/// @pre the module is optimized (the loop vectorizer made the vector loads)
/// @post the loads, and so the results, are unchanged
int addInputPrefetches(llvm::Module &module);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_INPUTPREFETCH_H
