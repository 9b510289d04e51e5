//===- ComplexRuntime.h - The CPU kernels' complex functions ----*- C++ -*-===//
//
// Private to lib/Codegen. The c64/c128 ops that have no formula in the
// kernels (exp, log, sqrt, ... and power: ScalarOpsComplex.cpp) are calls
// of two C functions that run the evaluator's own code (HloEvaluator.h's
// evaluateComplexUnary and evaluateComplexPower) in double:
//
//   {re, im} tessel_complex_unary(i32 opcode, f64 re, f64 im)
//   {re, im} tessel_complex_power(f64 a, f64 b, f64 c, f64 d)   //
//   (a+bi)^(c+di)
//
// The CPU JIT (CpuExecutable.cpp) defines them; the GPU has no such
// library, and -tessel-lower-to-llvm refuses a GPU kernel that calls them,
// naming the op (the call's `tessel.complex_op`, "exponential of c64").
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_COMPLEXRUNTIME_H
#define TESSEL_LIB_CODEGEN_COMPLEXRUNTIME_H

#include "tessel/Hlo/HloOpcode.h"

#include <utility>
#include <vector>

namespace tessel {

inline constexpr const char kComplexUnaryFunction[] = "tessel_complex_unary";
inline constexpr const char kComplexPowerFunction[] = "tessel_complex_power";
/// On a call of an external function from a complex op: the op and type.
inline constexpr const char kComplexOpAttr[] = "tessel.complex_op";

/// Whether tessel_complex_unary computes `op`.
bool complexRuntimeSupports(HloOpcode op);

/// The runtime's functions, by name and address, for the JIT.
std::vector<std::pair<const char *, void *>> complexRuntimeSymbols();

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_COMPLEXRUNTIME_H
