//===- HloOpcode.cpp - The opcodes of HLO ---------------------------------===//
#include "tessel/Hlo/HloOpcode.h"

namespace tessel {
namespace {

struct OpcodeInfo {
  HloOpcode opcode;
  std::string_view name;
  bool supported;
};

constexpr OpcodeInfo kOpcodes[] = {
#define TESSEL_HLO_OPCODE_INFO(name, spelling, supported)                      \
  {HloOpcode::name, spelling, supported},
    TESSEL_HLO_OPCODES(TESSEL_HLO_OPCODE_INFO)
#undef TESSEL_HLO_OPCODE_INFO
};

} // namespace

std::string_view hloOpcodeName(HloOpcode opcode) {
  return kOpcodes[static_cast<int>(opcode)].name;
}

std::optional<HloOpcode> parseHloOpcode(std::string_view name) {
  for (const OpcodeInfo &info : kOpcodes)
    if (info.name == name)
      return info.opcode;
  // Older spellings XLA still reads.
  if (name == "clz")
    return HloOpcode::CountLeadingZeros;
  if (name == "optimization-barrier")
    return HloOpcode::OptimizationBarrier;
  return std::nullopt;
}

bool isSupportedOpcode(HloOpcode opcode) {
  return kOpcodes[static_cast<int>(opcode)].supported;
}

bool isElementwiseUnary(HloOpcode opcode) {
  switch (opcode) {
  case HloOpcode::Abs:
  case HloOpcode::Negate:
  case HloOpcode::Exp:
  case HloOpcode::ExponentialMinusOne:
  case HloOpcode::Log:
  case HloOpcode::LogPlusOne:
  case HloOpcode::Tanh:
  case HloOpcode::Logistic:
  case HloOpcode::Sqrt:
  case HloOpcode::Rsqrt:
  case HloOpcode::Cbrt:
  case HloOpcode::Sine:
  case HloOpcode::Cosine:
  case HloOpcode::Tan:
  case HloOpcode::Floor:
  case HloOpcode::Ceil:
  case HloOpcode::RoundNearestAfz:
  case HloOpcode::RoundNearestEven:
  case HloOpcode::Sign:
  case HloOpcode::Not:
  case HloOpcode::IsFinite:
  case HloOpcode::PopulationCount:
  case HloOpcode::CountLeadingZeros:
  case HloOpcode::Erf:
    return true;
  default:
    return false;
  }
}

bool isElementwiseBinary(HloOpcode opcode) {
  switch (opcode) {
  case HloOpcode::Add:
  case HloOpcode::Subtract:
  case HloOpcode::Multiply:
  case HloOpcode::Divide:
  case HloOpcode::Remainder:
  case HloOpcode::Power:
  case HloOpcode::Maximum:
  case HloOpcode::Minimum:
  case HloOpcode::Atan2:
  case HloOpcode::And:
  case HloOpcode::Or:
  case HloOpcode::Xor:
  case HloOpcode::ShiftLeft:
  case HloOpcode::ShiftRightLogical:
  case HloOpcode::ShiftRightArithmetic:
    return true;
  default:
    return false;
  }
}

bool isElementwise(HloOpcode opcode) {
  switch (opcode) {
  case HloOpcode::Select:
  case HloOpcode::Clamp:
  case HloOpcode::Compare:
  case HloOpcode::Convert:
  case HloOpcode::BitcastConvert:
  case HloOpcode::ReducePrecision:
  case HloOpcode::Map:
    return true;
  default:
    return isElementwiseUnary(opcode) || isElementwiseBinary(opcode);
  }
}

} // namespace tessel
