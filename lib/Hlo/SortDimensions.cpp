//===- SortDimensions.cpp - A sort's or TopK's attributes -----------------===//
#include "tessel/Hlo/SortDimensions.h"

#include "EvaluatorOps.h"
#include "RawAttributes.h"

namespace tessel {

static bool isTopKCall(const HloInstruction &instruction) {
  if (instruction.opcode() != HloOpcode::CustomCall)
    return false;
  const std::string *target = instruction.rawAttribute("custom_call_target");
  return target && *target == "\"TopK\"";
}

bool isSortLike(const HloInstruction &instruction) {
  return instruction.opcode() == HloOpcode::Sort ||
         instruction.opcode() == HloOpcode::TopK || isTopKCall(instruction);
}

Expected<SortDimensions> getSortDimensions(const HloInstruction &sort) {
  SortDimensions s;
  bool topKOp = sort.opcode() == HloOpcode::TopK;
  s.topK = topKOp || isTopKCall(sort);
  if (!s.topK && sort.opcode() != HloOpcode::Sort)
    return Error("not a sort or a TopK custom-call");
  if (sort.operandCount() < 1 || (s.topK && sort.operandCount() != 1))
    return Error(s.topK ? "TopK takes one operand" : "sort needs an operand");
  const Shape &first = sort.operand(0)->shape();
  for (const HloInstruction *operand : sort.operands())
    if (!operand->shape().isArray() || operand->shape().dims != first.dims)
      return Error("sort operands must be arrays of one shape, found " +
                   operand->shape().toStringWithoutLayout() + " and " +
                   first.toStringWithoutLayout());
  s.dims = first.dims;
  const Shape &shape = sort.shape();
  if (s.topK) {
    // The evaluator's checks (EvaluatorSort.cpp, topK).
    if (first.rank() == 0 || !shape.isTuple() ||
        shape.tupleShapes.size() != 2 ||
        shape.tupleShapes[1].elementType != PrimitiveType::S32 ||
        shape.tupleShapes[0].dims != shape.tupleShapes[1].dims ||
        shape.tupleShapes[0].elementType != first.elementType)
      return Error("TopK returns (values, s32 indices) of the operand's type");
    s.dim = first.rank() - 1;
    s.operands = 2;
    std::vector<int64_t> expected = first.dims;
    s.keep = shape.tupleShapes[0].dims.back();
    expected.back() = s.keep;
    if (shape.tupleShapes[0].dims != expected || s.keep > first.dims.back())
      return Error("TopK's result " + shape.toStringWithoutLayout() +
                   " must keep the operand's dims but the last, at most " +
                   std::to_string(first.dims.back()));
  } else {
    Expected<std::vector<int64_t>> dimensions =
        eval::intListAttribute(sort, "dimensions", /*required=*/true);
    if (!dimensions)
      return dimensions.error();
    if (dimensions->size() != 1 || (*dimensions)[0] < 0 ||
        (*dimensions)[0] >= first.rank())
      return Error("sort needs one dimension in 0.." +
                   std::to_string(first.rank() - 1));
    s.dim = (*dimensions)[0];
    s.operands = sort.operandCount();
    size_t results = shape.isTuple() ? shape.tupleShapes.size() : 1;
    if (static_cast<int64_t>(results) != s.operands)
      return Error("sort of " + std::to_string(s.operands) +
                   " operands returns " + shape.toStringWithoutLayout());
    s.keep = first.dims[s.dim];
  }
  s.length = first.dims[s.dim];
  if (topKOp) {
    // The evaluator's checks (EvaluatorSort.cpp, topKOp).
    Expected<int64_t> k = eval::intAttribute(sort, "k");
    if (!k)
      return k.error();
    if (*k != s.keep)
      return Error("topk's result " + shape.toStringWithoutLayout() +
                   " must end in k=" + std::to_string(*k));
    Expected<bool> largest = eval::boolAttribute(sort, "largest");
    if (!largest)
      return largest.error();
    s.largest = !sort.rawAttribute("largest") || *largest;
    PrimitiveType type = first.elementType;
    if (isComplex(type))
      return Error("topk of " + std::string(primitiveTypeName(type)) +
                   " is not supported");
    return s;
  }
  if (sort.calledComputations().size() == 1) {
    s.comparator = sort.calledComputations().front();
  } else {
    const char *key = s.topK ? "called_computations" : "to_apply";
    Expected<std::vector<const HloComputation *>> callees =
        eval::calleesAttribute(sort, key);
    if (!callees)
      return callees.error();
    if (callees->size() != 1)
      return Error(std::string(s.topK ? "TopK" : "sort") +
                   " needs one comparator computation");
    s.comparator = callees->front();
  }
  size_t params = s.comparator->parameters().size();
  if (params != 2 && params != 2 * static_cast<size_t>(s.operands))
    return Error("the comparator %" + s.comparator->name() + " takes " +
                 std::to_string(params) + " parameters, expected 2 or " +
                 std::to_string(2 * s.operands));
  const HloInstruction *root = s.comparator->root();
  if (!root->shape().isArray() ||
      root->shape().elementType != PrimitiveType::Pred ||
      root->shape().rank() != 0)
    return Error("the comparator %" + s.comparator->name() + " returns " +
                 root->shape().toStringWithoutLayout() + ", expected pred[]");
  return s;
}

} // namespace tessel
