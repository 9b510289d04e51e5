//===- ModulePlan.cpp - An HLO module as a sequence of kernels ------------===//
#include "ModulePlan.h"

#include "tessel/Codegen/FusionEmitter.h"

#include "tessel/Layout/TiledLayout.h"

#include <unordered_map>

namespace tessel {

static std::string where(const HloInstruction &instruction) {
  SourceLocation loc = instruction.location();
  if (loc.line == 0)
    return "";
  return std::to_string(loc.line) + ":" + std::to_string(loc.column) + ": ";
}

static int64_t physicalBytes(const Shape &shape);

/// A computation holding a copy of `instruction` whose operands are
/// parameters.
static HloComputation *wrapInstruction(HloModule &scratch,
                                       const HloInstruction &instruction) {
  auto computation =
      std::make_unique<HloComputation>("wrapped_" + instruction.name());
  std::vector<HloInstruction *> params;
  for (int64_t i = 0; i < instruction.operandCount(); ++i) {
    auto param = std::make_unique<HloInstruction>(
        HloOpcode::Parameter, "p" + std::to_string(i),
        instruction.operand(i)->shape());
    param->mutableAttributes().parameterNumber = i;
    params.push_back(computation->addInstruction(std::move(param)));
  }
  auto copy = std::make_unique<HloInstruction>(
      instruction.opcode(), instruction.name(), instruction.shape());
  copy->mutableAttributes() = instruction.attributes();
  copy->mutableRawAttributes() = instruction.rawAttributes();
  copy->setLocation(instruction.location());
  for (HloComputation *called : instruction.calledComputations())
    copy->appendCalledComputation(called);
  for (HloInstruction *param : params)
    copy->appendOperand(param);
  HloInstruction *root = computation->addInstruction(std::move(copy));
  computation->setRoot(root);
  return scratch.addComputation(std::move(computation));
}

Expected<ModulePlan> planModule(const HloModule &module) {
  const HloComputation *entry = module.entry();
  if (!entry)
    return Error("the module has no ENTRY computation");
  ModulePlan plan;
  plan.scratch = std::make_unique<HloModule>("scratch");
  // Buffers of each instruction: one per array (tuple element).
  std::unordered_map<const HloInstruction *, std::vector<int>> buffersOf;
  auto newBuffer = [&](const Shape &shape) {
    plan.buffers.push_back(shape);
    return static_cast<int>(plan.buffers.size()) - 1;
  };

  for (HloInstruction *param : entry->parameters()) {
    if (!param->shape().isArray())
      return Error(where(*param) + "parameter %" + param->name() +
                   " is not an array; tuple parameters are not supported");
    buffersOf[param] = {newBuffer(param->shape())};
  }
  plan.inputs.resize(entry->parameterCount());
  for (HloInstruction *param : entry->parameters())
    plan.inputs[param->parameterNumber()] = buffersOf[param].front();

  bool hasFusion = false;
  for (const auto &instruction : entry->instructions())
    hasFusion |= instruction->opcode() == HloOpcode::Fusion;
  // An ENTRY without fusions is compiled whole, as one kernel, unless a
  // reduction's value feeds more computation (softmax: x - max(x)): one
  // kernel computes every element where it is written, so each output
  // element would reduce a row again (and a reduction of such values a row
  // of rows). Then each instruction becomes a kernel of its own, and every
  // reduction is computed once.
  bool kernelPerInstruction = hasFusion;
  for (const auto &instruction : entry->instructions()) {
    HloOpcode op = instruction->opcode();
    // Tuples inside the computation (around an opt-barrier, jax's
    // checkpoints) only name buffers between kernels.
    if (op == HloOpcode::Tuple && instruction.get() != entry->root())
      kernelPerInstruction = true;
    if (op != HloOpcode::Reduce && op != HloOpcode::ReduceWindow &&
        op != HloOpcode::Dot)
      continue;
    for (const HloInstruction *user : instruction->users())
      if (user->opcode() != HloOpcode::Tuple &&
          user->opcode() != HloOpcode::GetTupleElement)
        kernelPerInstruction = true;
  }

  // The kernels of `computation` (one per dims of its outputs); the
  // instruction's buffers are its outputs' buffers, in order.
  auto addKernel = [&](const HloInstruction &instruction,
                       const HloComputation *computation,
                       std::vector<int> inputs) -> Expected<bool> {
    std::vector<FusionOutput> outputs = getFusionOutputs(*computation);
    std::vector<int> buffers;
    for (const FusionOutput &output : outputs) {
      if (!output.shape().isArray())
        return Error(where(instruction) + "%" + instruction.name() +
                     " has a nested tuple or token output, which the "
                     "compiler does not support");
      buffers.push_back(newBuffer(output.shape()));
    }
    std::vector<bool> done(outputs.size(), false);
    for (size_t first = 0; first < outputs.size(); ++first) {
      if (done[first])
        continue;
      PlannedKernel kernel;
      kernel.name = "kernel_" + std::to_string(plan.kernels.size());
      kernel.origin =
          computation == entry ? "the ENTRY computation (no fusions)"
          : instruction.opcode() == HloOpcode::Fusion
              ? "fusion %" + instruction.name()
              : "%" + instruction.name() + " (" +
                    std::string(hloOpcodeName(instruction.opcode())) +
                    ", not in a fusion)";
      kernel.computation = computation;
      kernel.inputs = inputs;
      for (size_t i = first; i < outputs.size(); ++i)
        if (!done[i] &&
            outputs[i].shape().dims == outputs[first].shape().dims) {
          done[i] = true;
          kernel.outputIndices.push_back(static_cast<int64_t>(i));
          kernel.outputs.push_back(buffers[i]);
        }
      plan.kernels.push_back(std::move(kernel));
    }
    buffersOf[&instruction] = buffers;
    return true;
  };

  if (!kernelPerInstruction) {
    std::vector<int> inputs = plan.inputs;
    Expected<bool> added = addKernel(*entry->root(), entry, inputs);
    if (!added)
      return added.error();
  } else {
    for (const auto &owned : entry->instructions()) {
      const HloInstruction &instruction = *owned;
      auto operandBuffer = [&](int64_t i) -> Expected<int> {
        const std::vector<int> &buffers = buffersOf[instruction.operand(i)];
        if (buffers.size() != 1)
          return Error(where(instruction) + "operand " + std::to_string(i) +
                       " of %" + instruction.name() +
                       " is a tuple; only get-tuple-element of it is "
                       "supported");
        return buffers.front();
      };
      switch (instruction.opcode()) {
      case HloOpcode::Parameter:
        continue;
      case HloOpcode::OptimizationBarrier:
      case HloOpcode::CustomCall:
        // opt-barrier and the Sharding custom-call only name their
        // operand's buffers.
        if (instruction.passesValueThrough()) {
          buffersOf[&instruction] = buffersOf[instruction.operand(0)];
          continue;
        }
        break;
      case HloOpcode::GetTupleElement: {
        const std::vector<int> &buffers = buffersOf[instruction.operand(0)];
        if (instruction.tupleIndex() >= static_cast<int64_t>(buffers.size()))
          return Error(where(instruction) + "tuple index out of range");
        buffersOf[&instruction] = {buffers[instruction.tupleIndex()]};
        continue;
      }
      case HloOpcode::Tuple: {
        std::vector<int> buffers;
        for (int64_t i = 0; i < instruction.operandCount(); ++i) {
          Expected<int> b = operandBuffer(i);
          if (!b)
            return b.error();
          buffers.push_back(*b);
        }
        buffersOf[&instruction] = buffers;
        continue;
      }
      case HloOpcode::Bitcast: {
        Expected<int> b = operandBuffer(0);
        if (!b)
          return b.error();
        if (physicalBytes(plan.buffers[*b]) ==
            physicalBytes(instruction.shape())) {
          // The same bytes, seen with another shape.
          plan.buffers.push_back(instruction.shape());
          buffersOf[&instruction] = {*b};
          plan.buffers.pop_back();
          continue;
        }
        break;
      }
      default:
        break;
      }
      std::vector<int> inputs;
      for (int64_t i = 0; i < instruction.operandCount(); ++i) {
        // A kernel reads arrays: a tuple operand (of a conditional, a
        // while, a call) would reach the emitters as a tensor of no type.
        if (!instruction.operand(i)->shape().isArray())
          return Error(where(instruction) + "cannot compile %" +
                       instruction.name() + " (" +
                       std::string(hloOpcodeName(instruction.opcode())) +
                       "): operand " + std::to_string(i) +
                       " is a tuple, which the compiler reads only through "
                       "get-tuple-element");
        Expected<int> b = operandBuffer(i);
        if (!b)
          return b.error();
        inputs.push_back(*b);
      }
      const HloComputation *computation =
          instruction.opcode() == HloOpcode::Fusion
              ? instruction.calledComputation()
              : wrapInstruction(*plan.scratch, instruction);
      Expected<bool> added = addKernel(instruction, computation, inputs);
      if (!added)
        return added.error();
    }
  }
  const HloInstruction *root = entry->root();
  plan.tupleResult = root->shape().isTuple();
  plan.outputs = buffersOf[root];
  if (!kernelPerInstruction && plan.tupleResult == false &&
      plan.outputs.size() != 1)
    return Error("internal error: the ROOT has no buffer");
  return plan;
}

static int64_t physicalBytes(const Shape &shape) {
  Expected<TiledLayout> layout = TiledLayout::get(shape);
  return layout ? layout->physicalBytes() : -1;
}

} // namespace tessel
