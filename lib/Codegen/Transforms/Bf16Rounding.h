//===- Bf16Rounding.h - f32 -> bf16 rounding as integer code ----*- C++ -*-===//
//
// Private to lib/Codegen. Patterns that turn arith.truncf f32 -> bf16 into
// integer code with the evaluator's exact semantics (FloatTypes.h):
// round to nearest even, and a NaN keeps its sign and becomes quiet
// (`(bits >> 16) | 0x40`), so every bit pattern agrees. Every x86 CPU runs
// it and LLVM vectorizes it; the AVX-512 BF16 instruction would be one op,
// but it flushes subnormals to zero.
//
// The NaN case costs a compare and a select per rounding. On x86 it is left
// out where the plain rounding already gives the same answer: for a value
// computed by add, sub, mul or div (x86 quiets their NaN results and keeps
// an operand's payload) from operands whose NaNs have 16 zero low bits:
// values widened from bf16 and results of such ops. Only for the CPU: an
// NVIDIA GPU returns the canonical NaN 0x7fffffff from arithmetic, which
// the plain rounding would carry into -0; GPU kernels take the native
// conversion below instead.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_TRANSFORMS_BF16ROUNDING_H
#define TESSEL_LIB_CODEGEN_TRANSFORMS_BF16ROUNDING_H

#include "mlir/IR/PatternMatch.h"

namespace tessel {

/// The integer type of the same shape as a bf16 type (i16, or a vector of
/// i16), or null for other types: how bf16 values are stored and moved.
mlir::Type bf16AsInteger(mlir::Type type);

/// For CPU kernels: the integer code above.
void populateBf16RoundingPatterns(mlir::RewritePatternSet &patterns);

/// For GPU kernels: arith.truncf f32 -> bf16 as LLVM's own fptrunc, one
/// cvt.rn.bf16.f32 from sm_80 (the integer code above with its NaN test is
/// about eight instructions). The rounding and subnormals agree with the
/// evaluator; a NaN comes out as the canonical NaN rather than with its
/// sign and payload, as from any GPU arithmetic.
void populateNativeBf16RoundingPatterns(mlir::RewritePatternSet &patterns);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_TRANSFORMS_BF16ROUNDING_H
