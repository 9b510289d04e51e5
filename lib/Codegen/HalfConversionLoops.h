//===- HalfConversionLoops.h - Vector width hints for f16 loops -*- C++ -*-===//
//
// Private to lib/Codegen. LLVM 19's cost model prices a conversion between
// f32 and f16 (fptrunc/fpext to and from `half`) as if it were split into
// pieces of four, so a thread loop that converts through f16 is vectorized
// 4 wide even where the CPU converts 8 (F16C, a ymm) or 16 (AVX-512, a zmm)
// at once: one `vcvtps2ph xmm` per 4 elements. The hint below gives such
// loops the vector width of the host's registers instead:
//
//   loop over i: x = load bf16; ... fptrunc float -> half; fpext ...
//     AVX-512 (512-bit registers, F16C): !llvm.loop {vectorize.width 16}
//     AVX2 + F16C:                       !llvm.loop {vectorize.width 8}
//     no F16C:                           no hint (the conversions are calls)
//
// The hint changes how many elements one iteration handles, never what an
// element becomes: the same instructions convert each lane.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_HALFCONVERSIONLOOPS_H
#define TESSEL_LIB_CODEGEN_HALFCONVERSIONLOOPS_H

#include "TableLookup.h"

#include "llvm/ADT/StringRef.h"

namespace llvm {
class Function;
class LLVMContext;
class Loop;
class MDNode;
class Module;
class TargetMachine;
} // namespace llvm

namespace tessel {

/// A distinct loop ID `!{self, !{hint, i32 value}}`, e.g. hint
/// "llvm.loop.vectorize.width" (here) or "llvm.loop.interleave.count"
/// (InterleavedLoops.h).
llvm::MDNode *loopIdWithHint(llvm::LLVMContext &context, llvm::StringRef hint,
                             unsigned value);

/// Whether a floating-point value flows from one iteration of `loop` to the
/// next (a reduction's accumulator). A width or interleave hint must not
/// reach such a loop: with an explicit width the loop vectorizer may
/// reorder floating-point reductions (LoopVectorizeHints::allowReordering)
/// as if they had `reassoc`, and it interleaves reductions by itself.
bool carriesFloat(const llvm::Loop &loop);

/// The widest floating-point type the instructions of `loop` compute, in
/// bits (32 where none is wider): the loop vectorizer's lanes are that wide.
unsigned widestFloatBits(const llvm::Loop &loop);

/// The vector registers of `machine`'s CPU as its loop vectorizer uses them
/// (256 bits where the CPU prefers ymm registers although it has zmm ones),
/// and whether it converts f16 in them (F16C).
/// With `preferredBits` (CompileOptions::vectorWidth) the vectorizers use
/// at most that many bits (at most the registers').
VectorUnit vectorUnitOf(llvm::TargetMachine &machine,
                        unsigned preferredBits = 0);

/// The vector width tessel asks LLVM's vectorizers for on `machine`'s CPU
/// when CompileOptions::vectorWidth is 0: 512 on a CPU with AVX-512 of Ice
/// Lake's generation or later (AVX512-VBMI2: Ice Lake, Sapphire and
/// Emerald Rapids, Zen 4 and 5), where LLVM prefers 256 bits on Intel's
/// (its tuning for Skylake-SP, whose clock drops with zmm registers); 0
/// (LLVM's own preference) elsewhere. On an Emerald Rapids Xeon 512 bits
/// made the f32 chain 1.2-1.3x and exp -> transpose -> abs 1.35x faster
/// at one thread (BENCHMARKS.md).
unsigned defaultVectorWidth(llvm::TargetMachine &machine);

/// Asks LLVM's vectorizers to use vectors of `bits` in `function` (the
/// "prefer-vector-width" attribute, as clang's -mprefer-vector-width), or
/// of defaultVectorWidth(machine) when `bits` is 0.
void preferVectorWidth(llvm::Function &function, llvm::TargetMachine &machine,
                       unsigned bits);

/// The bits of the vector registers the host's vectorizer uses when the
/// host converts between f32 and f16 in vector registers (F16C), 0 when it
/// cannot (the conversions are library calls: no hint pays).
unsigned halfConversionVectorBits(llvm::TargetMachine &machine,
                                  unsigned preferredBits = 0);

/// Marks every innermost loop of `module` that converts to or from `half`
/// and carries no floating-point value with `llvm.loop.vectorize.width` =
/// vectorBits / the widest floating-point type in the loop (at least 32 bits):
/// 16 lanes of f32 in 512 bits. Returns how many loops it marked; marks none
/// when vectorBits is 0.
/// @pre   the module is not yet optimized (the loop vectorizer reads the hint)
/// @post  loops that already carry a loop ID are left alone
int hintHalfConversionLoops(llvm::Module &module, unsigned vectorBits);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_HALFCONVERSIONLOOPS_H
