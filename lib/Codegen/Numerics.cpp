//===- Numerics.cpp - How close compiled kernels are to the evaluator -----===//
#include "tessel/Codegen/Compiler.h"

namespace tessel {

bool usesApproximatedFunctions(const HloModule &module) {
  for (const auto &computation : module.computations())
    for (const auto &instruction : computation->instructions())
      switch (instruction->opcode()) {
      case HloOpcode::Exp:
      case HloOpcode::ExponentialMinusOne:
      case HloOpcode::Log:
      case HloOpcode::LogPlusOne:
      case HloOpcode::Logistic:
      case HloOpcode::Tanh:
      case HloOpcode::Cbrt:
      case HloOpcode::Sine:
      case HloOpcode::Cosine:
      case HloOpcode::Tan:
      case HloOpcode::Erf:
      case HloOpcode::Power:
      case HloOpcode::Atan2:
        return true;
      default:
        break;
      }
  return false;
}

ComparisonBound kernelComparisonBound(PrimitiveType type, bool approximate) {
  if (!approximate || !isFloat(type))
    return {};
  // Measured bounds of MLIR's polynomial approximations against the C
  // library, after rounding to the type (docs/codegen.md).
  ComparisonBound bound;
  bound.ulps = bitWidth(type) <= 16 ? 1 : 8;
  bound.relativeToMax = type == PrimitiveType::BF16  ? 1.0 / 128
                        : type == PrimitiveType::F16 ? 1.0 / 1024
                        : type == PrimitiveType::F32 ? 1e-6
                                                     : 1e-14;
  return bound;
}

} // namespace tessel
