//===- InterleavedLoops.h - Interleaving latency-bound loops -*- C++ -*-===//
//
// Private to lib/Codegen. LLVM 19's loop vectorizer interleaves a loop (runs
// IC vector iterations side by side, each instruction IC times in a row)
// only where the loop body is small or carries a reduction. A thread loop
// of the loop emitter that computes an exp or a tanh is neither: its body
// is one long chain of dependent instructions per vector (the polynomials
// of MLIR's math approximations, ~50 floating-point operations for
// `tanh(x * exp(-x*x) + y)`), so the core waits on latencies while its
// ports stay idle, and the out-of-order window holds only two or three
// vectors' chains. Interleaving puts independent chains next to each
// other:
//
//   loop over i: 16 to 31 floating-point operations per element, no
//                floating-point value carried from one i to the next
//                                    -> !llvm.loop {interleave.count 2}
//   32 to 128                         -> !llvm.loop {interleave.count 4}
//   129 to 256                        -> !llvm.loop {interleave.count 2}
//   fewer than 16 (memory-bound), more than 256, reductions, loops
//   already of vectors, loops without a constant trip count, loops whose
//   loads or stores are not consecutive (gathers: one scalar access per
//   lane)
//                                     -> no hint (the vectorizer decides)
//
// and the count is halved until IC vectors of the host's width fit the trip
// count, so that the vector loop still runs. On a Zen 3 core (AVX2) the f32
// chain above went from 23.7 to 14.7 ms (one thread, f32[6,512,4096]), a
// softmax's exp kernel 34 to 30 ms; a loop of negations and copies (s8)
// got slower when interleaved, hence the threshold.
//
// Like the f16 width hint (HalfConversionLoops.h), this changes how many
// elements one iteration handles, never what an element becomes.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_INTERLEAVEDLOOPS_H
#define TESSEL_LIB_CODEGEN_INTERLEAVEDLOOPS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

namespace llvm {
class Loop;
class Module;
} // namespace llvm

namespace tessel {

/// The floating-point operations below which a loop is left to the
/// vectorizer, and from which it is interleaved 4 times instead of 2.
constexpr int kInterleaveTwoFrom = 16;
constexpr int kInterleaveFourFrom = 32;
/// The most floating-point operations an interleaved body may have (count
/// times the loop's): bigger bodies cost compile time and registers and
/// gain nothing more.
constexpr int kMaxInterleavedOps = 512;

/// Marks the innermost loops of `module` that are latency-bound as above
/// with `llvm.loop.interleave.count`, for vectors of `vectorBits` bits;
/// leaves the functions named in `skip` alone (kernels run as a table
/// lookup, called once per entry). Returns how many loops it marked.
/// @pre   the module is not yet optimized (the loop vectorizer reads the hint)
/// @post  loops that already carry a loop ID are left alone
int hintInterleavedLoops(llvm::Module &module, unsigned vectorBits,
                         const llvm::StringSet<> &skip = {});

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_INTERLEAVEDLOOPS_H
