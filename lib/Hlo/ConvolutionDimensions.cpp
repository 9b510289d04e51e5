//===- ConvolutionDimensions.cpp - A convolution's dimension numbers ------===//
#include "tessel/Hlo/ConvolutionDimensions.h"

#include "EvaluatorOps.h"

namespace tessel {

Expected<ConvolutionDimensions>
getConvolutionDimensions(const HloInstruction &convolution) {
  if (convolution.opcode() != HloOpcode::Convolution ||
      convolution.operandCount() != 2)
    return Error("a convolution has 2 operands, the input and the kernel");
  // The evaluator's reading, so that both agree.
  Expected<eval::ConvolutionDims> dims =
      eval::convolutionDims(convolution, convolution.operand(0)->shape(),
                            convolution.operand(1)->shape());
  if (!dims)
    return dims.error();
  auto labels = [](const eval::ConvolutionLabels &l) {
    ConvolutionDimensions::Labels out;
    out.first = l.first;
    out.second = l.second;
    out.spatial = l.spatial;
    return out;
  };
  ConvolutionDimensions c;
  c.lhs = labels(dims->lhs);
  c.rhs = labels(dims->rhs);
  c.out = labels(dims->out);
  c.window = dims->window;
  c.featureGroups = dims->featureGroups;
  c.batchGroups = dims->batchGroups;
  c.outDims = dims->outDims;
  return c;
}

} // namespace tessel
