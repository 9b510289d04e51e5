//===- RelayoutKernel.cpp - Kernels that only move data, as relayouts ----===//
#include "RelayoutKernel.h"

#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Relayout/Relayout.h"

namespace tessel {

std::optional<RelayoutKernel> findRelayoutKernel(const ModulePlan &plan,
                                                 size_t k) {
  const PlannedKernel &kernel = plan.kernels[k];
  if (kernel.outputIndices.size() != 1 || kernel.outputs.size() != 1)
    return std::nullopt;
  std::vector<FusionOutput> outputs = getFusionOutputs(*kernel.computation);
  const FusionOutput &output = outputs[kernel.outputIndices.front()];
  const HloInstruction *root = output.instruction;
  if (output.element >= 0 ||
      (root->opcode() != HloOpcode::Transpose &&
       root->opcode() != HloOpcode::Copy) ||
      root->operand(0)->opcode() != HloOpcode::Parameter)
    return std::nullopt;
  RelayoutKernel move;
  move.parameter = root->operand(0)->parameterNumber();
  if (move.parameter >= static_cast<int64_t>(kernel.inputs.size()))
    return std::nullopt;
  // The buffers' shapes: what the kernel really reads and writes.
  const Shape &in = plan.buffers[kernel.inputs[move.parameter]];
  const Shape &out = plan.buffers[kernel.outputs.front()];
  if (!in.isArray() || !out.isArray() || in.elementType != out.elementType ||
      in.rank() != out.rank())
    return std::nullopt;
  // Output dim d is input dim perm[d]: the output's physical order, in
  // input dims.
  std::vector<int64_t> perm = logicalPermutation(*root);
  for (int64_t d = 0; d < out.rank(); ++d)
    if (out.dims[d] != in.dims[perm[d]])
      return std::nullopt;
  move.source = in;
  move.destination = out.layoutOrDefault();
  for (int64_t &dim : move.destination.minorToMajor)
    dim = perm[dim];
  if (!RelayoutPlan::create(move.source, move.source.layoutOrDefault(),
                            move.destination))
    return std::nullopt;
  return move;
}

} // namespace tessel
