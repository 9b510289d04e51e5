//===- ShapeInferenceOps.cpp - Shapes of the ops with verbatim attributes -===//
#include "ShapeInferenceOps.h"

#include "EvaluatorOps.h"
#include "RawAttributes.h"

#include "tessel/Hlo/HloVerifier.h"

namespace tessel::infer {
namespace {

std::string str(const Shape &shape) { return shape.toStringWithoutLayout(); }

std::string typeName(PrimitiveType type) {
  return std::string(primitiveTypeName(type));
}

Shape stripLayout(const Shape &shape) {
  if (shape.isTuple()) {
    std::vector<Shape> elements;
    for (const Shape &element : shape.tupleShapes)
      elements.push_back(stripLayout(element));
    return Shape::makeTuple(std::move(elements));
  }
  return Shape(shape.elementType, shape.dims);
}

Shape scalar(PrimitiveType type) { return Shape(type, {}); }

/// One shape, or a tuple of several (a variadic op's result).
Shape oneOrTuple(std::vector<Shape> shapes) {
  if (shapes.size() == 1)
    return shapes.front();
  return Shape::makeTuple(std::move(shapes));
}

bool isTopKCustomCall(const HloInstruction &inst) {
  const std::string *target = inst.rawAttribute("custom_call_target");
  return inst.opcode() == HloOpcode::CustomCall && target &&
         *target == "\"TopK\"";
}

/// Checks that `computation` (its `role` in messages: "the body") takes
/// parameters of `params` and returns `result`; `paramsWhy` and `resultWhy`
/// say where the expectations come from (may be empty).
Status checkSignature(const HloComputation &computation,
                      const std::string &role, const std::vector<Shape> &params,
                      const std::string &paramsWhy, const Shape &result,
                      const std::string &resultWhy) {
  std::string name = role + " %" + computation.name();
  auto because = [](const std::string &why) {
    return why.empty() ? std::string() : " (" + why + ")";
  };
  std::vector<HloInstruction *> have = computation.parameters();
  if (have.size() != params.size())
    return Error(name + " takes " + std::to_string(have.size()) +
                 " parameters, expected " + std::to_string(params.size()) +
                 because(paramsWhy));
  for (size_t i = 0; i < params.size(); ++i)
    if (!have[i] || !compatibleShapes(have[i]->shape(), params[i]))
      return Error("parameter " + std::to_string(i) + " of " + name + " is " +
                   (have[i] ? str(have[i]->shape()) : "missing") +
                   ", expected " + str(params[i]) + because(paramsWhy));
  const HloInstruction *root = computation.root();
  if (!root)
    return Error(name + " has no root");
  if (!compatibleShapes(root->shape(), result))
    return Error(name + " returns " + str(root->shape()) + ", expected " +
                 str(result) + because(resultWhy));
  return {};
}

/// The one computation `key=` names.
Expected<const HloComputation *> oneCallee(const HloInstruction &inst,
                                           std::string_view key) {
  Expected<std::vector<const HloComputation *>> callees =
      eval::calleesAttribute(inst, key);
  if (!callees)
    return callees.takeError();
  if (callees->size() != 1)
    return Error(std::string(hloOpcodeName(inst.opcode())) + " needs " +
                 std::string(key) + "= naming one computation, found " +
                 std::to_string(callees->size()));
  return callees->front();
}

class VerbatimInference {
public:
  explicit VerbatimInference(const HloInstruction &inst)
      : inst(inst), declared(inst.shape()) {}

  Expected<Shape> run();

private:
  const Shape &operand(int64_t i) const { return inst.operand(i)->shape(); }
  std::string name() const { return std::string(hloOpcodeName(inst.opcode())); }
  Status needOperands(int64_t count) const;
  Status needArrays() const;

  Expected<Shape> whileLoop();
  Expected<Shape> conditional();
  Expected<Shape> gather();
  Expected<Shape> scatter();
  Expected<Shape> sort();
  Expected<Shape> topK();
  Expected<Shape> topKCustomCall();
  Expected<Shape> convolution();
  Expected<Shape> rngBitGenerator();
  Expected<Shape> reducePrecision();
  Expected<Shape> complex();
  Expected<Shape> realOrImag();

  const HloInstruction &inst;
  const Shape &declared;
};

#define TRY(check)                                                             \
  if (Status problem = (check); !problem)                                      \
    return problem.takeError();
#define TRY_ASSIGN(var, expr)                                                  \
  auto var##OrError = (expr);                                                  \
  if (!var##OrError)                                                           \
    return var##OrError.takeError();                                           \
  auto &var = *var##OrError;

Status VerbatimInference::needOperands(int64_t count) const {
  if (inst.operandCount() != count)
    return Error(name() + " takes " + std::to_string(count) + " operand" +
                 (count == 1 ? "" : "s") + ", found " +
                 std::to_string(inst.operandCount()));
  return {};
}

Status VerbatimInference::needArrays() const {
  for (HloInstruction *op : inst.operands())
    if (!op->shape().isArray())
      return Error("operand %" + op->name() + " of shape " + str(op->shape()) +
                   " is not an array");
  return {};
}

Expected<Shape> VerbatimInference::run() {
  if (isTopKCustomCall(inst))
    return topKCustomCall();
  switch (inst.opcode()) {
  case HloOpcode::While:
    return whileLoop();
  case HloOpcode::Conditional:
    return conditional();
  case HloOpcode::Gather:
    return gather();
  case HloOpcode::Scatter:
    return scatter();
  case HloOpcode::Sort:
    return sort();
  case HloOpcode::TopK:
    return topK();
  case HloOpcode::Convolution:
    return convolution();
  case HloOpcode::RngBitGenerator:
    return rngBitGenerator();
  case HloOpcode::ReducePrecision:
    return reducePrecision();
  case HloOpcode::Complex:
    return complex();
  case HloOpcode::Real:
  case HloOpcode::Imag:
    return realOrImag();
  default:
    return Error("opcode " + name() + " has no shape rules here");
  }
}

Expected<Shape> VerbatimInference::whileLoop() {
  TRY(needOperands(1))
  TRY_ASSIGN(condition, oneCallee(inst, "condition"))
  TRY_ASSIGN(body, oneCallee(inst, "body"))
  Shape state = stripLayout(operand(0));
  TRY(checkSignature(*condition, "the condition", {state},
                     "the operand's shape", scalar(PrimitiveType::Pred), ""))
  TRY(checkSignature(*body, "the body", {state}, "the operand's shape", state,
                     "the operand's shape"))
  return state;
}

Expected<Shape> VerbatimInference::conditional() {
  if (inst.operandCount() < 2)
    return Error("conditional takes a branch selector and one operand per "
                 "branch, found " +
                 std::to_string(inst.operandCount()) + " operands");
  const Shape &selector = operand(0);
  bool isPred = selector.elementType == PrimitiveType::Pred;
  if (!selector.isArray() || selector.rank() != 0 ||
      (!isPred && selector.elementType != PrimitiveType::S32))
    return Error("the branch selector is " + str(selector) +
                 ", expected pred[] or s32[]");
  std::vector<const HloComputation *> branches;
  if (isPred && !inst.rawAttribute("branch_computations")) {
    for (const char *key : {"true_computation", "false_computation"}) {
      TRY_ASSIGN(branch, oneCallee(inst, key))
      branches.push_back(branch);
    }
  } else {
    TRY_ASSIGN(all, eval::calleesAttribute(inst, "branch_computations"))
    branches = all;
  }
  if (branches.empty() ||
      static_cast<int64_t>(branches.size()) + 1 != inst.operandCount())
    return Error("conditional has " + std::to_string(branches.size()) +
                 " branches and " + std::to_string(inst.operandCount() - 1) +
                 " branch operands, expected one operand per branch");
  if (isPred && branches.size() != 2)
    return Error("a pred[] selector chooses between 2 branches, found " +
                 std::to_string(branches.size()));
  const HloInstruction *firstRoot = branches[0]->root();
  if (!firstRoot)
    return Error("branch %" + branches[0]->name() + " has no root");
  Shape result = stripLayout(firstRoot->shape());
  for (size_t k = 0; k < branches.size(); ++k) {
    Shape param = stripLayout(operand(static_cast<int64_t>(k) + 1));
    TRY(checkSignature(*branches[k], "branch " + std::to_string(k), {param},
                       "operand " + std::to_string(k + 1) + "'s shape", result,
                       "branch 0's result"))
  }
  return result;
}

Expected<Shape> VerbatimInference::gather() {
  TRY(needOperands(2))
  TRY(needArrays())
  TRY_ASSIGN(dims, eval::gatherDims(inst, operand(0), operand(1)))
  return Shape(operand(0).elementType, dims.outDims);
}

Expected<Shape> VerbatimInference::scatter() {
  std::vector<const Shape *> shapes;
  for (HloInstruction *op : inst.operands())
    shapes.push_back(&op->shape());
  TRY(needArrays())
  TRY_ASSIGN(dims, eval::scatterDims(inst, shapes))
  (void)dims;
  size_t n = shapes.size() / 2;
  TRY_ASSIGN(combiner, oneCallee(inst, "to_apply"))
  std::vector<Shape> params, results;
  for (size_t k = 0; k < n; ++k)
    params.push_back(scalar(shapes[k]->elementType));
  for (size_t k = 0; k < n; ++k)
    params.push_back(scalar(shapes[n + 1 + k]->elementType));
  for (size_t k = 0; k < n; ++k)
    results.push_back(scalar(shapes[k]->elementType));
  TRY(checkSignature(*combiner, "the combiner", params,
                     "scalars of the operands' and then the updates' types",
                     oneOrTuple(results), "scalars of the operands' types"))
  std::vector<Shape> out;
  for (size_t k = 0; k < n; ++k)
    out.push_back(stripLayout(*shapes[k]));
  return oneOrTuple(std::move(out));
}

Expected<Shape> VerbatimInference::sort() {
  if (inst.operandCount() == 0)
    return Error("sort needs at least one operand");
  TRY(needArrays())
  const Shape &first = operand(0);
  for (HloInstruction *op : inst.operands())
    if (op->shape().dims != first.dims)
      return Error("sort operands " + str(first) + " and " + str(op->shape()) +
                   " differ in dims, expected one shape of dims");
  TRY_ASSIGN(dimensions,
             eval::intListAttribute(inst, "dimensions", /*required=*/true))
  if (dimensions.size() != 1 || dimensions[0] < 0 ||
      dimensions[0] >= first.rank())
    return Error("sort needs dimensions={d} with one d in 0.." +
                 std::to_string(first.rank() - 1));
  TRY_ASSIGN(stable, eval::boolAttribute(inst, "is_stable"))
  (void)stable;
  TRY_ASSIGN(comparator, oneCallee(inst, "to_apply"))
  std::vector<Shape> params, out;
  for (HloInstruction *op : inst.operands()) {
    params.push_back(scalar(op->shape().elementType));
    params.push_back(scalar(op->shape().elementType));
    out.push_back(stripLayout(op->shape()));
  }
  TRY(checkSignature(*comparator, "the comparator", params,
                     "two scalars of each operand's type",
                     scalar(PrimitiveType::Pred), ""))
  return oneOrTuple(std::move(out));
}

/// The values and s32 positions of the k first of each line along the last
/// dim of `in`.
Shape topKResult(const Shape &in, int64_t k) {
  std::vector<int64_t> dims = in.dims;
  dims.back() = k;
  return Shape::makeTuple(
      {Shape(in.elementType, dims), Shape(PrimitiveType::S32, dims)});
}

Expected<Shape> VerbatimInference::topK() {
  TRY(needOperands(1))
  TRY(needArrays())
  const Shape &in = operand(0);
  if (in.rank() == 0)
    return Error("topk of a scalar, expected an array of rank 1 or more");
  TRY_ASSIGN(k, eval::intAttribute(inst, "k"))
  if (k < 0 || k > in.dims.back())
    return Error("k=" + std::to_string(k) + " is out of range for " + str(in) +
                 ", expected 0.." + std::to_string(in.dims.back()));
  TRY_ASSIGN(largest, eval::boolAttribute(inst, "largest"))
  (void)largest;
  return topKResult(in, k);
}

Expected<Shape> VerbatimInference::topKCustomCall() {
  TRY(needOperands(1))
  TRY(needArrays())
  const Shape &in = operand(0);
  if (in.rank() == 0)
    return Error("TopK of a scalar, expected an array of rank 1 or more");
  if (!declared.isTuple() || declared.tupleShapes.size() != 2 ||
      !declared.tupleShapes[0].isArray() ||
      declared.tupleShapes[0].rank() != in.rank())
    return Error("TopK returns (values, s32 indices) of the operand's rank, "
                 "found " +
                 str(declared));
  int64_t k = declared.tupleShapes[0].dims.back();
  if (k > in.dims.back())
    return Error("TopK takes k=" + std::to_string(k) + " of " + str(in) +
                 ", expected at most " + std::to_string(in.dims.back()));
  TRY_ASSIGN(comparator, oneCallee(inst, "called_computations"))
  PrimitiveType t = in.elementType;
  std::vector<Shape> params = {scalar(t), scalar(t)};
  if (comparator->parameters().size() == 4) {
    params.push_back(scalar(PrimitiveType::S32));
    params.push_back(scalar(PrimitiveType::S32));
  }
  TRY(checkSignature(*comparator, "the comparator", params,
                     "two values, optionally two s32 positions",
                     scalar(PrimitiveType::Pred), ""))
  return topKResult(in, k);
}

Expected<Shape> VerbatimInference::convolution() {
  TRY(needOperands(2))
  TRY(needArrays())
  const Shape &lhs = operand(0), &rhs = operand(1);
  PrimitiveType l = lhs.elementType, r = rhs.elementType;
  if (l == PrimitiveType::Pred || r == PrimitiveType::Pred ||
      isFloat(l) != isFloat(r) || isComplex(l) != isComplex(r) ||
      (!isFloat(l) && !isComplex(l) && l != r))
    return Error("convolution of " + typeName(l) + " and " + typeName(r) +
                 ", expected one element type (floats may differ in "
                 "precision)");
  TRY_ASSIGN(dims, eval::convolutionDims(inst, lhs, rhs))
  // The result type may differ from the operands' (preferred_element_type).
  return Shape(declared.elementType, dims.outDims);
}

Expected<Shape> VerbatimInference::rngBitGenerator() {
  TRY(needOperands(1))
  const std::string *algorithm = inst.rawAttribute("algorithm");
  std::string which = algorithm ? *algorithm : "rng_default";
  bool isThreefry = which == "rng_three_fry";
  if (!isThreefry && which != "rng_philox" && which != "rng_default")
    return Error("algorithm=" + which +
                 ", expected rng_default, rng_three_fry or rng_philox");
  const Shape &state = operand(0);
  if (!state.isArray() || state.elementType != PrimitiveType::U64 ||
      state.rank() != 1 || state.dims[0] < 2 ||
      state.dims[0] > (isThreefry ? 2 : 3))
    return Error("the state is " + str(state) + ", expected u64[2]" +
                 (isThreefry ? "" : " or u64[3]"));
  if (!declared.isTuple() || declared.tupleShapes.size() != 2 ||
      !declared.tupleShapes[1].isArray())
    return Error("rng-bit-generator returns (state, bits), found " +
                 str(declared));
  const Shape &bits = declared.tupleShapes[1];
  int width = bitWidth(bits.elementType);
  if (!isInteger(bits.elementType) ||
      (width != 8 && width != 16 && width != 32 && width != 64))
    return Error("rng-bit-generator gives bits as " + str(bits) +
                 ", expected an integer type of 8, 16, 32 or 64 bits");
  return Shape::makeTuple({stripLayout(state), stripLayout(bits)});
}

Expected<Shape> VerbatimInference::reducePrecision() {
  TRY(needOperands(1))
  TRY(needArrays())
  const Shape &in = operand(0);
  if (!isFloat(in.elementType))
    return Error("reduce-precision of " + typeName(in.elementType) +
                 ", expected a floating-point type");
  TRY_ASSIGN(exponentBits, eval::intAttribute(inst, "exponent_bits"))
  TRY_ASSIGN(mantissaBits, eval::intAttribute(inst, "mantissa_bits"))
  if (exponentBits < 1 || mantissaBits < 0)
    return Error("exponent_bits=" + std::to_string(exponentBits) +
                 " mantissa_bits=" + std::to_string(mantissaBits) +
                 ", expected at least 1 exponent bit and 0 mantissa bits");
  return stripLayout(in);
}

Expected<Shape> VerbatimInference::complex() {
  TRY(needOperands(2))
  TRY(needArrays())
  const Shape &re = operand(0), &im = operand(1);
  if (re.elementType != im.elementType || re.dims != im.dims ||
      (re.elementType != PrimitiveType::F32 &&
       re.elementType != PrimitiveType::F64))
    return Error("complex of " + str(re) + " and " + str(im) +
                 ", expected two f32 or two f64 arrays of one shape");
  return Shape(re.elementType == PrimitiveType::F32 ? PrimitiveType::C64
                                                    : PrimitiveType::C128,
               re.dims);
}

Expected<Shape> VerbatimInference::realOrImag() {
  TRY(needOperands(1))
  TRY(needArrays())
  const Shape &in = operand(0);
  if (in.elementType == PrimitiveType::C64)
    return Shape(PrimitiveType::F32, in.dims);
  if (in.elementType == PrimitiveType::C128)
    return Shape(PrimitiveType::F64, in.dims);
  if (isFloat(in.elementType))
    return stripLayout(in);
  return Error(name() + " of " + typeName(in.elementType) +
               ", expected a complex or floating-point type");
}

#undef TRY
#undef TRY_ASSIGN

} // namespace

bool hasVerbatimRules(const HloInstruction &inst) {
  switch (inst.opcode()) {
  case HloOpcode::While:
  case HloOpcode::Conditional:
  case HloOpcode::Gather:
  case HloOpcode::Scatter:
  case HloOpcode::Sort:
  case HloOpcode::TopK:
  case HloOpcode::Convolution:
  case HloOpcode::RngBitGenerator:
  case HloOpcode::ReducePrecision:
  case HloOpcode::Complex:
  case HloOpcode::Real:
  case HloOpcode::Imag:
    return true;
  default:
    return isTopKCustomCall(inst);
  }
}

Expected<Shape> inferVerbatimShape(const HloInstruction &inst) {
  return VerbatimInference(inst).run();
}

} // namespace tessel::infer
