//===- ComplexRuntime.cpp - The CPU kernels' complex functions ------------===//
#include "ComplexRuntime.h"

#include "tessel/Hlo/HloEvaluator.h"

#include <cstdint>

namespace {

/// Returned in two registers ({double, double} in LLVM: xmm0 and xmm1 on
/// x86-64, d0 and d1 on AArch64), as the kernels' declaration expects.
struct ComplexParts {
  double re, im;
};

extern "C" ComplexParts tessel_complex_unary(int32_t op, double re, double im) {
  std::optional<std::complex<double>> r = tessel::evaluateComplexUnary(
      static_cast<tessel::HloOpcode>(op), std::complex<double>(re, im));
  if (!r) // not emitted: complexRuntimeSupports said no
    return {std::nan(""), std::nan("")};
  return {r->real(), r->imag()};
}

extern "C" ComplexParts tessel_complex_power(double a, double b, double c,
                                             double d) {
  std::complex<double> r = tessel::evaluateComplexPower({a, b}, {c, d});
  return {r.real(), r.imag()};
}

} // namespace

namespace tessel {

bool complexRuntimeSupports(HloOpcode op) {
  return evaluateComplexUnary(op, {1, 0}).has_value();
}

std::vector<std::pair<const char *, void *>> complexRuntimeSymbols() {
  return {
      {kComplexUnaryFunction, reinterpret_cast<void *>(&tessel_complex_unary)},
      {kComplexPowerFunction, reinterpret_cast<void *>(&tessel_complex_power)}};
}

} // namespace tessel
