//===- HloModule.cpp - HLO modules, computations and instructions ---------===//
#include "tessel/Hlo/HloModule.h"

#include <algorithm>
#include <map>

namespace tessel {

std::string_view comparisonDirectionName(ComparisonDirection direction) {
  switch (direction) {
  case ComparisonDirection::Eq:
    return "EQ";
  case ComparisonDirection::Ne:
    return "NE";
  case ComparisonDirection::Ge:
    return "GE";
  case ComparisonDirection::Gt:
    return "GT";
  case ComparisonDirection::Le:
    return "LE";
  case ComparisonDirection::Lt:
    return "LT";
  }
  return "EQ";
}

std::string_view comparisonTypeName(ComparisonType type) {
  switch (type) {
  case ComparisonType::Default:
    return "";
  case ComparisonType::Float:
    return "FLOAT";
  case ComparisonType::TotalOrder:
    return "TOTALORDER";
  case ComparisonType::Signed:
    return "SIGNED";
  case ComparisonType::Unsigned:
    return "UNSIGNED";
  }
  return "";
}

std::string_view fusionKindName(FusionKind kind) {
  switch (kind) {
  case FusionKind::Loop:
    return "kLoop";
  case FusionKind::Input:
    return "kInput";
  case FusionKind::Output:
    return "kOutput";
  case FusionKind::Custom:
    return "kCustom";
  }
  return "kLoop";
}

void HloInstruction::appendOperand(HloInstruction *operand) {
  theOperands.push_back(operand);
  std::vector<HloInstruction *> &users = operand->theUsers;
  if (std::find(users.begin(), users.end(), this) == users.end())
    users.push_back(this);
}

const std::string *HloInstruction::rawAttribute(std::string_view key) const {
  for (const RawAttribute &attribute : raw)
    if (attribute.key == key)
      return &attribute.value;
  return nullptr;
}

bool HloInstruction::passesValueThrough() const {
  if (theOpcode == HloOpcode::OptimizationBarrier)
    return operands().size() == 1;
  if (theOpcode != HloOpcode::CustomCall || operands().size() != 1)
    return false;
  const std::string *target = rawAttribute("custom_call_target");
  return target && *target == "\"Sharding\"";
}

bool HloInstruction::isRoot() const {
  return theParent && theParent->root() == this;
}

bool HloComputation::isEntry() const {
  return theParent && theParent->entry() == this;
}

HloInstruction *
HloComputation::addInstruction(std::unique_ptr<HloInstruction> instruction) {
  instruction->theParent = this;
  instruction->theIndex = instructionCount();
  theInstructions.push_back(std::move(instruction));
  return theInstructions.back().get();
}

HloInstruction *HloComputation::instruction(const std::string &name) const {
  for (const auto &instruction : theInstructions)
    if (instruction->name() == name)
      return instruction.get();
  return nullptr;
}

std::vector<HloInstruction *> HloComputation::parameters() const {
  std::vector<HloInstruction *> result;
  for (const auto &instruction : theInstructions) {
    if (instruction->opcode() != HloOpcode::Parameter)
      continue;
    int64_t number = instruction->parameterNumber();
    if (number < 0 || number > instructionCount())
      continue;
    if (static_cast<int64_t>(result.size()) <= number)
      result.resize(number + 1, nullptr);
    if (!result[number])
      result[number] = instruction.get();
  }
  return result;
}

HloComputation *
HloModule::addComputation(std::unique_ptr<HloComputation> computation) {
  computation->theParent = this;
  theComputations.push_back(std::move(computation));
  HloComputation *added = theComputations.back().get();
  byName.emplace(added->name(), added);
  return added;
}

HloComputation *HloModule::computation(const std::string &name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : it->second;
}

ProgramShape HloModule::entryProgramShape() const {
  if (entryLayout)
    return *entryLayout;
  ProgramShape shape;
  for (HloInstruction *parameter : theEntry->parameters())
    shape.parameters.push_back(parameter ? parameter->shape() : Shape());
  if (theEntry->root())
    shape.result = theEntry->root()->shape();
  return shape;
}

/// "%a, %b, ..." naming the first few instructions of a computation.
static std::string someNames(const HloComputation &computation) {
  std::string known;
  int shown = 0;
  for (const std::unique_ptr<HloInstruction> &inst : computation.instructions())
    if (shown++ < 8)
      known += (known.empty() ? "%" : ", %") + inst->name();
  if (computation.instructionCount() > 8)
    known += ", ...";
  return known;
}

Expected<const HloInstruction *> findInstruction(const HloModule &module,
                                                 std::string name,
                                                 std::string computationName) {
  if (!name.empty() && name[0] == '%')
    name = name.substr(1);
  if (!computationName.empty() && computationName[0] == '%')
    computationName = computationName.substr(1);
  const HloComputation *scope = module.entry();
  if (!scope)
    return Error("the module has no ENTRY computation");
  if (!computationName.empty()) {
    scope = module.computation(computationName);
    if (!scope) {
      std::string known;
      for (const std::unique_ptr<HloComputation> &c : module.computations())
        known += (known.empty() ? "%" : ", %") + c->name();
      return Error("no computation named %" + computationName +
                   ", expected one of " + known);
    }
  }
  if (name.empty())
    return scope->root();
  if (const HloInstruction *inst = scope->instruction(name))
    return inst;
  if (computationName.empty())
    for (const std::unique_ptr<HloComputation> &computation :
         module.computations())
      if (const HloInstruction *inst = computation->instruction(name))
        return inst;
  return Error(
      "no instruction named %" + name + " in %" + scope->name() +
      ", expected one of " + someNames(*scope) +
      (computationName.empty() ? " (or one of another computation)" : ""));
}

/// Instructions of `computation` with every call inlined, saturated at
/// `limit + 1`.
static int64_t inlinedSize(const HloComputation &computation, int64_t limit,
                           std::map<const HloComputation *, int64_t> &memo) {
  auto found = memo.find(&computation);
  if (found != memo.end())
    return found->second;
  int64_t size = 0;
  for (const auto &inst : computation.instructions()) {
    size = std::min(size + 1, limit + 1);
    for (const HloComputation *callee : inst->calledComputations())
      if (callee)
        size = std::min(size + inlinedSize(*callee, limit, memo), limit + 1);
  }
  memo[&computation] = size;
  return size;
}

Status checkInlinedSize(const HloModule &module, int64_t limit) {
  if (!module.entry())
    return {};
  std::map<const HloComputation *, int64_t> memo;
  if (inlinedSize(*module.entry(), limit, memo) <= limit)
    return {};
  return Error(
      "with every call inlined the module has more than " +
      std::to_string(limit) +
      " instructions, the most tessel compiles (a computation called from "
      "several places is compiled once per call)");
}

} // namespace tessel
