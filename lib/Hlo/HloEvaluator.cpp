//===- HloEvaluator.cpp - Exact reference evaluator for HLO ---------------===//
//
// Evaluates a computation instruction by instruction in definition order,
// keeping each value until its last user has run. Data-movement ops copy
// element bytes by index; elementwise ops live in HloEvaluatorOps.cpp.
//
//===----------------------------------------------------------------------===//
#include "tessel/Hlo/HloEvaluator.h"

#include "EvaluatorOps.h"
#include "RawAttributes.h"

#include "tessel/Support/Host.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

namespace tessel {
namespace {

using Value = std::shared_ptr<const Literal>;

/// Steps a row-major multi-index; returns false after the last one.
bool nextIndex(std::vector<int64_t> &index, const std::vector<int64_t> &dims) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d])
      return true;
    index[d] = 0;
  }
  return false;
}

void copyElement(const Literal &from, int64_t i, Literal &to, int64_t j) {
  int64_t width = to.elementBytes();
  std::memcpy(to.data() + j * width, from.data() + i * width, width);
}

/// If `computation` is `ROOT op(parameter(0), parameter(1))` for an
/// elementwise binary op, that op (the reduce fast path).
std::optional<HloOpcode> simpleBinary(const HloComputation &computation) {
  const HloInstruction *root = computation.root();
  if (computation.instructionCount() != 3 ||
      !isElementwiseBinary(root->opcode()) || root->operandCount() != 2)
    return std::nullopt;
  const HloInstruction *a = root->operand(0), *b = root->operand(1);
  if (a->opcode() != HloOpcode::Parameter ||
      b->opcode() != HloOpcode::Parameter || a->parameterNumber() != 0 ||
      b->parameterNumber() != 1)
    return std::nullopt;
  if (!eval::supportsBinary(root->opcode(), root->shape().elementType))
    return std::nullopt;
  return root->opcode();
}

/// The op of a reduce of one operand by a lone binary op of the result's
/// own type (the reduces whose order the compiler may choose), else none.
std::optional<HloOpcode> plainReduceOp(const HloInstruction &reduce) {
  if (reduce.opcode() != HloOpcode::Reduce || reduce.operandCount() != 2 ||
      reduce.shape().isTuple())
    return std::nullopt;
  std::optional<HloOpcode> op = simpleBinary(*reduce.calledComputation());
  if (!op || reduce.calledComputation()->root()->shape().elementType !=
                 reduce.shape().elementType)
    return std::nullopt;
  return op;
}

} // namespace

bool reducesInPartials(const HloInstruction &reduce) {
  std::optional<HloOpcode> op = plainReduceOp(reduce);
  if (!op)
    return false;
  PrimitiveType type = reduce.shape().elementType;
  bool wideAdd = *op == HloOpcode::Add &&
                 (type == PrimitiveType::F32 || type == PrimitiveType::F64);
  bool narrowMaxMin =
      (*op == HloOpcode::Maximum || *op == HloOpcode::Minimum) &&
      (type == PrimitiveType::BF16 || type == PrimitiveType::F16);
  if (!wideAdd && !narrowMaxMin)
    return false;
  const Shape &input = reduce.operand(0)->shape();
  const std::vector<int64_t> &reduced = reduce.dimensions();
  if (reduced.empty())
    return false;
  int64_t last = *std::max_element(reduced.begin(), reduced.end());
  Layout layout = input.layoutOrDefault();
  return layout.tiles.empty() && !layout.minorToMajor.empty() &&
         layout.minorToMajor.front() == last &&
         input.dims[last] >= 2 * kReductionPartials;
}

bool reducesInAnyOrder(const HloInstruction &reduce) {
  std::optional<HloOpcode> op = plainReduceOp(reduce);
  if (!op)
    return false;
  PrimitiveType type = reduce.shape().elementType;
  bool maxMin = *op == HloOpcode::Maximum || *op == HloOpcode::Minimum;
  bool bitwise =
      *op == HloOpcode::And || *op == HloOpcode::Or || *op == HloOpcode::Xor;
  switch (type) {
  case PrimitiveType::F16:
  case PrimitiveType::BF16:
  case PrimitiveType::F32:
  case PrimitiveType::F64:
    return maxMin;
  case PrimitiveType::Pred:
    return bitwise;
  case PrimitiveType::S8:
  case PrimitiveType::S16:
  case PrimitiveType::S32:
  case PrimitiveType::S64:
  case PrimitiveType::U8:
  case PrimitiveType::U16:
  case PrimitiveType::U32:
  case PrimitiveType::U64:
    return maxMin || bitwise || *op == HloOpcode::Add ||
           *op == HloOpcode::Multiply;
  default:
    return false;
  }
}

bool hasColumnSegments(const HloInstruction &reduce) {
  if (reduce.opcode() != HloOpcode::Reduce || reduce.operandCount() != 2)
    return false;
  const Shape &input = reduce.operand(0)->shape();
  if (!input.isArray())
    return false;
  Layout layout = input.layoutOrDefault();
  if (!layout.tiles.empty())
    return false;
  int64_t rank = input.rank();
  for (int64_t i = 0; i < rank; ++i)
    if (layout.minorToMajor[i] != rank - 1 - i)
      return false;
  std::vector<int64_t> reduced = reduce.dimensions();
  std::sort(reduced.begin(), reduced.end());
  int64_t m = static_cast<int64_t>(reduced.size());
  if (m == 0 || m >= rank)
    return false;
  int64_t rows = 1, columns = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < m && reduced[d] != d)
      return false;
    (d < m ? rows : columns) *= input.dims[d];
  }
  return rows >= 2 * kColumnSumSegmentRows && columns >= 16;
}

bool sumsColumnsInSegments(const HloInstruction &reduce) {
  PrimitiveType type = reduce.shape().elementType;
  return plainReduceOp(reduce) == HloOpcode::Add &&
         (type == PrimitiveType::F32 || type == PrimitiveType::F64) &&
         hasColumnSegments(reduce);
}

namespace {

/// How to get the values XLA left out of a printed constant.
constexpr const char *kElidedHint =
    ": XLA printed the module without the values of its large constants; "
    "dump it with them, e.g. XLA_FLAGS='--xla_dump_to=DIR "
    "--xla_dump_hlo_as_text --xla_dump_large_constants', or print it with "
    "HloPrintOptions::print_large_constants";

/// Ops whose attributes stay verbatim: the evaluator reads and checks them
/// again when it runs them, so that an unverified module gives an error,
/// never a crash (the verifier checks them first, ShapeInferenceOps.cpp).
bool hasVerbatimAttributes(HloOpcode op) {
  switch (op) {
  case HloOpcode::While:
  case HloOpcode::Conditional:
  case HloOpcode::Gather:
  case HloOpcode::Scatter:
  case HloOpcode::Sort:
  case HloOpcode::TopK:
  case HloOpcode::Real:
  case HloOpcode::Imag:
  case HloOpcode::Complex:
  case HloOpcode::ReducePrecision:
  case HloOpcode::Convolution:
  case HloOpcode::RngBitGenerator:
    return true;
  default:
    return false;
  }
}

bool isCall(const HloInstruction &inst) {
  return (inst.opcode() == HloOpcode::Call ||
          inst.opcode() == HloOpcode::Fusion) &&
         inst.calledComputation();
}

class Evaluator {
public:
  explicit Evaluator(const EvaluatorOptions &options)
      : options(options),
        maxBytes(options.maxBytes > 0 ? options.maxBytes
                                      : physicalMemoryBytes() / 2) {}
  Expected<Literal> run(const HloComputation &computation,
                        const std::vector<Value> &arguments, int depth = 0);
  /// One instruction on the values of its operands (evaluateInstruction).
  Expected<Literal> one(const HloInstruction &inst,
                        const std::vector<Value> &operands) {
    if (std::optional<std::string> problem = tooLarge(inst.shape()))
      return errorAt(inst.location(), "%" + inst.name() + ": " + *problem);
    Expected<Literal> result = evaluate(inst, operands, {}, 0);
    if (!result) {
      Error error = result.takeError();
      if (error.span)
        return std::move(error).prepend("%" + inst.name() + ": ");
      return errorAt(inst.location(), "%" + inst.name() + ": " + error.message);
    }
    return result;
  }

private:
  Expected<Literal> evaluate(const HloInstruction &inst,
                             const std::vector<Value> &operands,
                             const std::vector<Value> &arguments, int depth);
  /// What XLA:CPU computes differently (Numerics::XlaCpu): a divide by a
  /// constant, an add or subtract contracted with its multiply; an error
  /// with an empty message for every other instruction. `values` holds the
  /// computation's values so far.
  Expected<Literal> evaluateXlaCpu(const HloInstruction &inst,
                                   const std::vector<Value> &operands,
                                   const std::vector<Value> &values);
  /// Why a value of `shape` may not be created (too many elements,
  /// dynamic dims), or nullopt.
  std::optional<std::string> tooLarge(const Shape &shape) const {
    if (shape.isTuple()) {
      for (const Shape &element : shape.tupleShapes)
        if (std::optional<std::string> problem = tooLarge(element))
          return problem;
      return std::nullopt;
    }
    if (!shape.isArray())
      return std::nullopt;
    bool dynamic = false;
    for (bool d : shape.dynamicDims)
      dynamic |= d;
    std::optional<int64_t> count = shape.elementCount();
    if (dynamic || !count || *count > options.maxElements)
      return "cannot hold a value of shape " + shape.toString() +
             " (dynamic, or more than " + std::to_string(options.maxElements) +
             " elements)";
    double bytes =
        static_cast<double>(*count) * std::max(1, byteWidth(shape.elementType));
    auto what = [&] {
      return "cannot hold a value of shape " + shape.toString() + ": " +
             describeBytes(bytes) + ", more than the evaluator may allocate";
    };
    if (bytes > static_cast<double>(maxBytes))
      return what() + " (" + describeBytes(static_cast<double>(maxBytes)) +
             (options.maxBytes > 0 ? ")" : ", half of this machine's memory)");
    if (bytes > double(1 << 26) && !canAllocate(bytes))
      return what() + " now (the allocation fails)";
    return std::nullopt;
  }
  Expected<Literal> iota(const HloInstruction &inst);
  Expected<Literal> broadcast(const HloInstruction &inst, const Literal &x);
  Expected<Literal> transpose(const HloInstruction &inst, const Literal &x);
  Expected<Literal> slice(const HloInstruction &inst, const Literal &x);
  Expected<Literal> dynamicSlice(const HloInstruction &inst,
                                 const std::vector<Value> &operands);
  Expected<Literal> dynamicUpdateSlice(const HloInstruction &inst,
                                       const std::vector<Value> &operands);
  Expected<Literal> reverse(const HloInstruction &inst, const Literal &x);
  Expected<Literal> pad(const HloInstruction &inst, const Literal &x,
                        const Literal &value);
  Expected<Literal> concatenate(const HloInstruction &inst,
                                const std::vector<Value> &operands);
  Expected<Literal> reduce(const HloInstruction &inst,
                           const std::vector<Value> &operands, int depth);
  Expected<Literal> reduceWindow(const HloInstruction &inst,
                                 const std::vector<Value> &operands, int depth);
  /// The input of a one-operand reduce after XLA:CPU's tree reduction
  /// rewrite (xlaCpuTreeWindow, applied until no reduced dim is longer than
  /// its window): each window folded in row-major order from `init`.
  Expected<Value> xlaCpuTreeWindows(const HloInstruction &inst, Value input,
                                    const Value &init, const HloOpcode *fast,
                                    int depth);
  /// reduce-window when it is a prefix scan along `dim` (prefixScanDim).
  Expected<Literal> prefixScan(const std::vector<Value> &operands,
                               std::vector<Literal> results, int64_t dim,
                               const HloOpcode *fast,
                               const HloComputation &reducer, int depth);
  Expected<Literal> dot(const HloInstruction &inst, const Literal &lhs,
                        const Literal &rhs);
  Expected<Literal> map(const HloInstruction &inst,
                        const std::vector<Value> &operands, int depth);
  Expected<Literal> scatter(const HloInstruction &inst,
                            const std::vector<Value> &operands, int depth);
  Expected<Literal> sort(const HloInstruction &inst,
                         const std::vector<Value> &operands, int depth);
  Expected<Literal> whileLoop(const HloInstruction &inst, const Value &init,
                              int depth);
  Expected<Literal> conditional(const HloInstruction &inst,
                                const std::vector<Value> &operands, int depth);
  /// Applies `reducer` (reduce, reduce-window, scatter) to the
  /// accumulators `results[k]` at `o` and the elements of `inputs` at
  /// `inputIndex`, and stores its values (scalars of the results' types)
  /// back at `o`.
  Status combine(const HloComputation &reducer, std::vector<Literal> &results,
                 int64_t o, const std::vector<Value> &inputs,
                 int64_t inputIndex, int depth);

  const EvaluatorOptions &options;
  int64_t maxBytes;
  /// Loop iterations run so far (all loops), against options.maxSteps.
  int64_t steps = 0;
};

Expected<Literal> Evaluator::run(const HloComputation &computation,
                                 const std::vector<Value> &arguments,
                                 int depth) {
  if (depth > 256)
    return Error("calls nest more than 256 deep at %" + computation.name());
  const auto &instructions = computation.instructions();
  int64_t count = computation.instructionCount();
  // The last user of each value, to free it early.
  std::vector<int64_t> lastUse(count, -1);
  bool contract = options.numerics == Numerics::XlaCpu;
  for (int64_t i = 0; i < count; ++i) {
    for (HloInstruction *operand : instructions[i]->operands())
      lastUse[operand->index()] = i;
    // A contracted add reads its multiply's operands.
    if (std::optional<int> k =
            contract ? eval::contractedOperand(*instructions[i]) : std::nullopt)
      for (HloInstruction *operand : instructions[i]->operand(*k)->operands())
        lastUse[operand->index()] = std::max(lastUse[operand->index()], i);
  }
  // Calls of one computation on the same values give the same result: a
  // computation that calls another twice on its parameter evaluates it
  // once (else a chain of such computations takes exponential time).
  std::map<const HloComputation *, int> callsOf;
  for (const auto &inst : instructions)
    if (isCall(*inst))
      ++callsOf[inst->calledComputation()];
  std::map<std::pair<const HloComputation *, std::vector<const Literal *>>,
           std::pair<std::vector<Value>, Value>>
      calls;
  std::vector<Value> values(count);
  for (int64_t i = 0; i < count; ++i) {
    const HloInstruction &inst = *instructions[i];
    std::vector<Value> operands;
    std::vector<const Literal *> operandIds;
    for (HloInstruction *operand : inst.operands()) {
      if (operand->parent() != &computation || !values[operand->index()])
        return Error("%" + inst.name() + " uses %" + operand->name() +
                     " before it is defined");
      operands.push_back(values[operand->index()]);
      operandIds.push_back(operands.back().get());
    }
    bool shared = isCall(inst) && callsOf[inst.calledComputation()] > 1;
    auto key = std::make_pair(shared ? inst.calledComputation() : nullptr,
                              std::move(operandIds));
    if (inst.opcode() == HloOpcode::Parameter) {
      int64_t n = inst.parameterNumber();
      if (n < 0 || n >= static_cast<int64_t>(arguments.size()))
        return Error("%" + inst.name() + ": parameter " + std::to_string(n) +
                     " has no argument");
      values[i] = arguments[n];
    } else if (auto it = shared ? calls.find(key) : calls.end();
               it != calls.end()) {
      values[i] = it->second.second;
    } else {
      Expected<Literal> result = contract
                                     ? evaluateXlaCpu(inst, operands, values)
                                     : Expected<Literal>(Error(""));
      if (!contract || (!result && result.error().message.empty()))
        result = evaluate(inst, operands, arguments, depth);
      // In a module the verifier has not passed, a value of another shape
      // than declared would mislead its users.
      if (result && !inst.passesValueThrough() &&
          (hasVerbatimAttributes(inst.opcode()) ||
           inst.opcode() == HloOpcode::CustomCall) &&
          result->shape().toStringWithoutLayout() !=
              inst.shape().toStringWithoutLayout())
        result = Error(
            "the op gives " + result->shape().toStringWithoutLayout() +
            ", its declared shape is " + inst.shape().toStringWithoutLayout());
      if (!result) {
        // A called computation's error is about its own instruction.
        if (isCall(inst))
          return result.takeError();
        Error error = result.takeError();
        std::string what = "%" + inst.name() + ": ";
        if (error.span)
          return std::move(error).prepend(what);
        return errorAt(inst.location(), what + error.message);
      }
      values[i] = std::make_shared<const Literal>(std::move(*result));
      // The entry keeps the operands alive, so their addresses stay unique.
      if (shared)
        calls.emplace(key, std::make_pair(operands, values[i]));
    }
    for (HloInstruction *operand : inst.operands())
      if (lastUse[operand->index()] == i && operand != computation.root())
        values[operand->index()].reset();
  }
  const HloInstruction *root = computation.root();
  if (!root || root->parent() != &computation)
    return Error("%" + computation.name() + " has no root");
  Literal result = *values[root->index()];
  result.setLayout(root->shape().isTuple() ? std::nullopt
                                           : root->shape().layout);
  return result;
}

Expected<Literal> Evaluator::evaluateXlaCpu(const HloInstruction &inst,
                                            const std::vector<Value> &operands,
                                            const std::vector<Value> &values) {
  if (eval::dividesByConstant(inst)) {
    Expected<Literal> inverse = eval::reciprocal(*operands[1]);
    if (!inverse)
      return inverse.takeError();
    return eval::binary(HloOpcode::Multiply, *operands[0], *inverse,
                        inst.shape());
  }
  std::optional<int> k = eval::contractedOperand(inst);
  if (!k)
    return Error(""); // not XLA:CPU's own: evaluate as usual
  const HloInstruction &product = *inst.operand(*k);
  const Literal &a = *values[product.operand(0)->index()];
  const Literal &b = *values[product.operand(1)->index()];
  if (product.opcode() == HloOpcode::Multiply)
    return eval::fusedMultiplyAdd(inst.opcode(), *k, a, b, *operands[1 - *k],
                                  inst.shape());
  Expected<Literal> inverse = eval::reciprocal(b);
  if (!inverse)
    return inverse.takeError();
  return eval::fusedMultiplyAdd(inst.opcode(), *k, a, *inverse,
                                *operands[1 - *k], inst.shape());
}

Expected<Literal> Evaluator::evaluate(const HloInstruction &inst,
                                      const std::vector<Value> &operands,
                                      const std::vector<Value> &arguments,
                                      int depth) {
  (void)arguments;
  HloOpcode op = inst.opcode();
  const Shape &shape = inst.shape();
  if (inst.passesValueThrough()) {
    Literal value = *operands[0];
    value.setLayout(shape.isTuple() ? std::nullopt : shape.layout);
    return value;
  }
  const std::string *target = inst.rawAttribute("custom_call_target");
  bool isTopK = op == HloOpcode::CustomCall && target && *target == "\"TopK\"";
  if (op == HloOpcode::CustomCall && target && !isTopK)
    return Error("custom-call " + *target +
                 " is not supported by the evaluator (it runs TopK, "
                 "Sharding)");
  if (!isSupportedOpcode(op) && !isTopK)
    return Error("opcode " + std::string(hloOpcodeName(op)) +
                 " is not supported by the evaluator");
  for (const Value &operand : operands)
    if (operand->isElided())
      return Error("a constant has elided contents {...}" +
                   std::string(kElidedHint));
  if (std::optional<std::string> tooBig = tooLarge(shape))
    return Error(*tooBig);
  auto x = [&](size_t i) -> const Literal & { return *operands[i]; };
  if (isElementwiseUnary(op))
    return eval::unary(op, x(0), shape);
  if (isElementwiseBinary(op))
    return eval::binary(op, x(0), x(1), shape);
  switch (op) {
  case HloOpcode::Constant:
    if (inst.literal().isElided())
      return Error("the constant has elided contents {...}" +
                   std::string(kElidedHint));
    return inst.literal();
  case HloOpcode::Iota:
    return iota(inst);
  case HloOpcode::Broadcast:
    return broadcast(inst, x(0));
  case HloOpcode::Transpose:
    return transpose(inst, x(0));
  case HloOpcode::Reshape:
  case HloOpcode::Copy: {
    Literal out(Shape(shape.elementType, shape.dims));
    if (out.elementCount() > 0)
      std::memcpy(out.data(), x(0).data(),
                  out.elementCount() * out.elementBytes());
    return out;
  }
  case HloOpcode::Bitcast: {
    Expected<std::string> buffer = toPhysical(x(0), inst.operand(0)->shape());
    if (!buffer)
      return buffer.takeError();
    return fromPhysical(*buffer, shape);
  }
  case HloOpcode::Slice:
    return slice(inst, x(0));
  case HloOpcode::DynamicSlice:
    return dynamicSlice(inst, operands);
  case HloOpcode::DynamicUpdateSlice:
    return dynamicUpdateSlice(inst, operands);
  case HloOpcode::Reverse:
    return reverse(inst, x(0));
  case HloOpcode::Pad:
    return pad(inst, x(0), x(1));
  case HloOpcode::Concatenate:
    return concatenate(inst, operands);
  case HloOpcode::Reduce:
    return reduce(inst, operands, depth);
  case HloOpcode::ReduceWindow:
    return reduceWindow(inst, operands, depth);
  case HloOpcode::Select:
    return eval::select(x(0), x(1), x(2), shape);
  case HloOpcode::Clamp:
    return eval::clamp(x(0), x(1), x(2), shape);
  case HloOpcode::Compare:
    return eval::compare(inst.attributes(), x(0), x(1), shape);
  case HloOpcode::Convert:
    return eval::convert(x(0), shape);
  case HloOpcode::BitcastConvert:
    return eval::bitcastConvert(x(0), shape);
  case HloOpcode::Tuple: {
    std::vector<Literal> elements;
    for (const Value &operand : operands)
      elements.push_back(*operand);
    return Literal::makeTuple(std::move(elements));
  }
  case HloOpcode::GetTupleElement: {
    const std::vector<Literal> &elements = x(0).tupleElements();
    if (inst.tupleIndex() < 0 ||
        inst.tupleIndex() >= static_cast<int64_t>(elements.size()))
      return Error("tuple index out of range");
    return elements[inst.tupleIndex()];
  }
  case HloOpcode::Fusion:
  case HloOpcode::Call:
    return run(*inst.calledComputation(), operands, depth + 1);
  case HloOpcode::Dot:
    return dot(inst, x(0), x(1));
  case HloOpcode::Map:
    return map(inst, operands, depth);
  case HloOpcode::While:
    if (operands.size() != 1)
      return Error("while takes one operand, found " +
                   std::to_string(operands.size()));
    return whileLoop(inst, operands[0], depth);
  case HloOpcode::Conditional:
    return conditional(inst, operands, depth);
  case HloOpcode::Gather:
    if (operands.size() != 2)
      return Error("gather takes an operand and indices");
    return eval::gather(inst, x(0), x(1));
  case HloOpcode::Scatter:
    return scatter(inst, operands, depth);
  case HloOpcode::Sort:
  case HloOpcode::CustomCall:
    return sort(inst, operands, depth);
  case HloOpcode::Real:
  case HloOpcode::Imag:
  case HloOpcode::ReducePrecision:
    if (operands.size() != 1 || x(0).isTuple() || shape.isTuple() ||
        x(0).dims() != shape.dims)
      return Error(std::string(hloOpcodeName(op)) +
                   " takes one array of the result's dims");
    if (op == HloOpcode::ReducePrecision)
      return x(0).elementType() == shape.elementType
                 ? eval::reducePrecision(inst, x(0), shape)
                 : Error("reduce-precision keeps the element type");
    return eval::realOrImag(op, x(0), shape);
  case HloOpcode::RngBitGenerator:
    if (operands.size() != 1)
      return Error("rng-bit-generator takes the state");
    return eval::rngBitGenerator(inst, x(0));
  case HloOpcode::Convolution:
    if (operands.size() != 2)
      return Error("convolution takes an input and a kernel");
    return eval::convolution(inst, x(0), x(1));
  case HloOpcode::Complex:
    if (operands.size() != 2 || x(0).isTuple() || x(1).isTuple() ||
        shape.isTuple() || x(0).dims() != shape.dims ||
        x(1).dims() != shape.dims)
      return Error("complex takes two arrays of the result's dims");
    return eval::makeComplex(x(0), x(1), shape);
  case HloOpcode::TopK:
    if (operands.size() != 1)
      return Error("topk takes one operand");
    return eval::topKOp(inst, x(0));
  default:
    return Error("opcode " + std::string(hloOpcodeName(op)) +
                 " is not supported by the evaluator");
  }
}

Expected<Literal> Evaluator::iota(const HloInstruction &inst) {
  Literal out(Shape(inst.shape().elementType, inst.shape().dims));
  int64_t dim = inst.attributes().iotaDimension;
  eval::Kind kind = eval::kindOf(out.elementType());
  if (kind == eval::Kind::Complex || kind == eval::Kind::Other)
    return Error("iota of " +
                 std::string(primitiveTypeName(out.elementType())) +
                 " is not supported by the evaluator");
  std::vector<int64_t> index(out.rank(), 0);
  for (int64_t i = 0; i < out.elementCount(); ++i, nextIndex(index, out.dims()))
    if (kind == eval::Kind::Narrow || kind == eval::Kind::F64)
      out.setDouble(i, static_cast<double>(index[dim]));
    else
      out.setInt(i, index[dim]);
  return out;
}

Expected<Literal> Evaluator::broadcast(const HloInstruction &inst,
                                       const Literal &x) {
  Literal out(Shape(inst.shape().elementType, inst.shape().dims));
  const std::vector<int64_t> &dims = inst.dimensions();
  std::vector<int64_t> index(out.rank(), 0), from(x.rank(), 0);
  for (int64_t i = 0; i < out.elementCount();
       ++i, nextIndex(index, out.dims())) {
    for (size_t d = 0; d < dims.size(); ++d)
      from[d] = index[dims[d]];
    copyElement(x, x.linearIndex(from), out, i);
  }
  return out;
}

Expected<Literal> Evaluator::transpose(const HloInstruction &inst,
                                       const Literal &x) {
  Literal out(Shape(inst.shape().elementType, inst.shape().dims));
  const std::vector<int64_t> &dims = inst.dimensions();
  std::vector<int64_t> index(out.rank(), 0), from(x.rank(), 0);
  for (int64_t i = 0; i < out.elementCount();
       ++i, nextIndex(index, out.dims())) {
    for (size_t d = 0; d < dims.size(); ++d)
      from[dims[d]] = index[d];
    copyElement(x, x.linearIndex(from), out, i);
  }
  return out;
}

Expected<Literal> Evaluator::slice(const HloInstruction &inst,
                                   const Literal &x) {
  Literal out(Shape(inst.shape().elementType, inst.shape().dims));
  const std::vector<SliceDim> &s = inst.attributes().slice;
  std::vector<int64_t> index(out.rank(), 0), from(x.rank(), 0);
  for (int64_t i = 0; i < out.elementCount();
       ++i, nextIndex(index, out.dims())) {
    for (size_t d = 0; d < s.size(); ++d)
      from[d] = s[d].start + index[d] * s[d].stride;
    copyElement(x, x.linearIndex(from), out, i);
  }
  return out;
}

/// Start indices of dynamic-slice and dynamic-update-slice, clamped so the
/// slice stays inside the operand.
std::vector<int64_t> clampedStarts(const std::vector<Value> &operands,
                                   size_t first, const Literal &x,
                                   const std::vector<int64_t> &sizes) {
  std::vector<int64_t> starts;
  for (int64_t d = 0; d < x.rank(); ++d) {
    const Literal &s = *operands[first + d];
    int64_t start = isUnsignedInteger(s.elementType()) &&
                            static_cast<int64_t>(s.getBits(0)) < 0
                        ? INT64_MAX
                        : s.getInt(0);
    starts.push_back(std::clamp<int64_t>(start, 0, x.dims()[d] - sizes[d]));
  }
  return starts;
}

Expected<Literal> Evaluator::dynamicSlice(const HloInstruction &inst,
                                          const std::vector<Value> &operands) {
  const Literal &x = *operands[0];
  Literal out(Shape(inst.shape().elementType, inst.shape().dims));
  std::vector<int64_t> starts = clampedStarts(operands, 1, x, out.dims());
  std::vector<int64_t> index(out.rank(), 0), from(x.rank(), 0);
  for (int64_t i = 0; i < out.elementCount();
       ++i, nextIndex(index, out.dims())) {
    for (int64_t d = 0; d < x.rank(); ++d)
      from[d] = starts[d] + index[d];
    copyElement(x, x.linearIndex(from), out, i);
  }
  return out;
}

Expected<Literal>
Evaluator::dynamicUpdateSlice(const HloInstruction &inst,
                              const std::vector<Value> &operands) {
  (void)inst;
  Literal out = *operands[0];
  out.setLayout(std::nullopt);
  const Literal &update = *operands[1];
  std::vector<int64_t> starts = clampedStarts(operands, 2, out, update.dims());
  std::vector<int64_t> index(update.rank(), 0), to(out.rank(), 0);
  for (int64_t i = 0; i < update.elementCount();
       ++i, nextIndex(index, update.dims())) {
    for (int64_t d = 0; d < out.rank(); ++d)
      to[d] = starts[d] + index[d];
    copyElement(update, i, out, out.linearIndex(to));
  }
  return out;
}

Expected<Literal> Evaluator::reverse(const HloInstruction &inst,
                                     const Literal &x) {
  Literal out(Shape(x.elementType(), x.dims()));
  std::vector<bool> reversed(x.rank(), false);
  for (int64_t d : inst.dimensions())
    reversed[d] = true;
  std::vector<int64_t> index(out.rank(), 0), from(x.rank(), 0);
  for (int64_t i = 0; i < out.elementCount();
       ++i, nextIndex(index, out.dims())) {
    for (int64_t d = 0; d < x.rank(); ++d)
      from[d] = reversed[d] ? x.dims()[d] - 1 - index[d] : index[d];
    copyElement(x, x.linearIndex(from), out, i);
  }
  return out;
}

Expected<Literal> Evaluator::pad(const HloInstruction &inst, const Literal &x,
                                 const Literal &value) {
  Literal out(Shape(inst.shape().elementType, inst.shape().dims));
  for (int64_t i = 0; i < out.elementCount(); ++i)
    copyElement(value, 0, out, i);
  const std::vector<PadDim> &p = inst.attributes().padding;
  std::vector<int64_t> index(x.rank(), 0), to(out.rank(), 0);
  for (int64_t i = 0; i < x.elementCount(); ++i, nextIndex(index, x.dims())) {
    bool inside = true;
    for (int64_t d = 0; d < x.rank() && inside; ++d) {
      to[d] = p[d].low + index[d] * (p[d].interior + 1);
      inside = to[d] >= 0 && to[d] < out.dims()[d];
    }
    if (inside)
      copyElement(x, i, out, out.linearIndex(to));
  }
  return out;
}

Expected<Literal> Evaluator::concatenate(const HloInstruction &inst,
                                         const std::vector<Value> &operands) {
  Literal out(Shape(inst.shape().elementType, inst.shape().dims));
  int64_t dim = inst.dimensions()[0];
  int64_t offset = 0;
  for (const Value &operand : operands) {
    const Literal &x = *operand;
    std::vector<int64_t> index(x.rank(), 0);
    for (int64_t i = 0; i < x.elementCount(); ++i, nextIndex(index, x.dims())) {
      std::vector<int64_t> to = index;
      to[dim] += offset;
      copyElement(x, i, out, out.linearIndex(to));
    }
    offset += x.dims()[dim];
  }
  return out;
}

Status Evaluator::combine(const HloComputation &reducer,
                          std::vector<Literal> &results, int64_t o,
                          const std::vector<Value> &inputs, int64_t inputIndex,
                          int depth) {
  std::vector<Value> args;
  for (const Literal &accumulators : results) {
    Literal element(Shape(accumulators.elementType(), {}));
    copyElement(accumulators, o, element, 0);
    args.push_back(std::make_shared<const Literal>(std::move(element)));
  }
  for (const Value &input : inputs) {
    Literal element(Shape(input->elementType(), {}));
    copyElement(*input, inputIndex, element, 0);
    args.push_back(std::make_shared<const Literal>(std::move(element)));
  }
  Expected<Literal> result = run(reducer, args, depth + 1);
  if (!result)
    return result.takeError();
  std::vector<const Literal *> values;
  if (results.size() == 1 && !result->isTuple())
    values.push_back(&*result);
  else if (result->isTuple())
    for (const Literal &value : result->tupleElements())
      values.push_back(&value);
  if (values.size() != results.size())
    return Error("%" + reducer.name() + " returns the wrong number of values");
  for (size_t k = 0; k < results.size(); ++k) {
    if (values[k]->isTuple() ||
        values[k]->elementType() != results[k].elementType() ||
        values[k]->elementCount() != 1)
      return Error("%" + reducer.name() + " returns " +
                   values[k]->shape().toStringWithoutLayout() +
                   ", expected a scalar of the operand's type");
    copyElement(*values[k], 0, results[k], o);
  }
  return {};
}

Expected<Literal> Evaluator::reduce(const HloInstruction &inst,
                                    const std::vector<Value> &operands,
                                    int depth) {
  size_t n = operands.size() / 2;
  std::vector<Value> inputs(operands.begin(), operands.begin() + n);
  const HloComputation &reducer = *inst.calledComputation();
  std::optional<HloOpcode> fast = n == 1 ? simpleBinary(reducer) : std::nullopt;
  if (fast && reducer.root()->shape().elementType != inputs[0]->elementType())
    fast.reset();
  bool xlaCpu = options.numerics == Numerics::XlaCpu;
  if (xlaCpu && n == 1) {
    Expected<Value> windows = xlaCpuTreeWindows(inst, inputs[0], operands[1],
                                                fast ? &*fast : nullptr, depth);
    if (!windows)
      return windows.takeError();
    inputs[0] = *windows;
  }
  const Literal &first = *inputs[0];
  std::vector<bool> reduced(first.rank(), false);
  for (int64_t d : inst.dimensions())
    reduced[d] = true;
  std::vector<int64_t> outDims;
  for (int64_t d = 0; d < first.rank(); ++d)
    if (!reduced[d])
      outDims.push_back(first.dims()[d]);
  std::vector<Literal> results;
  for (size_t k = 0; k < n; ++k) {
    Literal r(Shape(inputs[k]->elementType(), outDims));
    for (int64_t o = 0; o < r.elementCount(); ++o)
      copyElement(*operands[n + k], 0, r, o);
    results.push_back(std::move(r));
  }
  std::vector<int64_t> index(first.rank(), 0), outIndex(outDims.size(), 0);
  if (fast && !xlaCpu && options.compilerReductionOrder &&
      reducesInPartials(inst)) {
    // The compiled kernels' order (reducesInPartials): per output element,
    // per index of the other reduced dims, 16 partial results over the
    // last reduced dim, folded in, then its tail.
    int64_t last =
        *std::max_element(inst.dimensions().begin(), inst.dimensions().end());
    int64_t size = first.dims()[last];
    int64_t chunks = size / kReductionPartials;
    std::vector<int64_t> outerDims;
    for (int64_t d = 0; d < last; ++d)
      if (reduced[d])
        outerDims.push_back(first.dims()[d]);
    int64_t outerCount = 1;
    for (int64_t d : outerDims)
      outerCount *= d;
    Literal partials(Shape(first.elementType(), {kReductionPartials}));
    Literal &result = results[0];
    std::vector<int64_t> outer(outerDims.size(), 0);
    for (int64_t count = 0; count < result.elementCount();
         ++count, nextIndex(outIndex, outDims)) {
      int64_t o = result.linearIndex(outIndex);
      std::fill(outer.begin(), outer.end(), 0);
      for (int64_t r = 0; r < outerCount; ++r, nextIndex(outer, outerDims)) {
        size_t k = 0, m = 0;
        for (int64_t d = 0; d < first.rank(); ++d)
          if (!reduced[d])
            index[d] = outIndex[k++];
          else if (d != last)
            index[d] = outer[m++];
        auto at = [&](int64_t t) {
          index[last] = t;
          return first.linearIndex(index);
        };
        for (int64_t j = 0; j < kReductionPartials; ++j)
          copyElement(first, at(j), partials, j);
        for (int64_t c = 1; c < chunks; ++c)
          for (int64_t j = 0; j < kReductionPartials; ++j)
            eval::binaryAt(*fast, partials, j, first,
                           at(c * kReductionPartials + j), partials, j);
        for (int64_t j = 0; j < kReductionPartials; ++j)
          eval::binaryAt(*fast, result, o, partials, j, result, o);
        for (int64_t t = chunks * kReductionPartials; t < size; ++t)
          eval::binaryAt(*fast, result, o, first, at(t), result, o);
      }
    }
    return std::move(results[0]);
  }
  if (fast && !xlaCpu && options.compilerReductionOrder &&
      sumsColumnsInSegments(inst)) {
    // The compiled kernels' order (sumsColumnsInSegments): per output
    // element, each segment of rows summed from +0 (the last one shorter
    // when 256 does not divide the rows), the segments' sums added to the
    // accumulator in order.
    Literal &result = results[0];
    int64_t columns = result.elementCount();
    int64_t rows = first.elementCount() / columns;
    Literal segment(Shape(first.elementType(), {columns}));
    for (int64_t r0 = 0; r0 < rows; r0 += kColumnSumSegmentRows) {
      for (int64_t c = 0; c < columns; ++c)
        segment.setDouble(c, 0.0);
      for (int64_t r = r0; r < std::min(rows, r0 + kColumnSumSegmentRows); ++r)
        for (int64_t c = 0; c < columns; ++c)
          eval::binaryAt(*fast, segment, c, first, r * columns + c, segment, c);
      for (int64_t c = 0; c < columns; ++c)
        eval::binaryAt(*fast, result, c, segment, c, result, c);
    }
    return std::move(results[0]);
  }
  for (int64_t i = 0; i < first.elementCount();
       ++i, nextIndex(index, first.dims())) {
    size_t k = 0;
    for (int64_t d = 0; d < first.rank(); ++d)
      if (!reduced[d])
        outIndex[k++] = index[d];
    int64_t o = results[0].linearIndex(outIndex);
    if (fast) {
      eval::binaryAt(*fast, results[0], o, first, i, results[0], o);
      continue;
    }
    Status ok = combine(reducer, results, o, inputs, i, depth);
    if (!ok)
      return ok.takeError();
  }
  if (n == 1)
    return std::move(results[0]);
  return Literal::makeTuple(std::move(results));
}

Expected<Value> Evaluator::xlaCpuTreeWindows(const HloInstruction &inst,
                                             Value input, const Value &init,
                                             const HloOpcode *fast, int depth) {
  const HloComputation &reducer = *inst.calledComputation();
  while (std::optional<eval::TreeWindow> w =
             eval::xlaCpuTreeWindow(input->dims(), inst.dimensions())) {
    const Literal &x = *input;
    std::vector<Literal> results;
    results.emplace_back(Shape(x.elementType(), w->outDims));
    Literal &out = results[0];
    int64_t windowCount = 1;
    for (int64_t size : w->size)
      windowCount *= size;
    std::vector<int64_t> o(x.rank(), 0), from(x.rank());
    std::vector<Value> inputs{input};
    for (int64_t k = 0; k < out.elementCount(); ++k, nextIndex(o, w->outDims)) {
      copyElement(*init, 0, out, k);
      std::vector<int64_t> at(x.rank(), 0);
      for (int64_t step = 0; step < windowCount;
           ++step, nextIndex(at, w->size)) {
        bool inside = true;
        for (int64_t d = 0; d < x.rank() && inside; ++d) {
          from[d] = o[d] * w->size[d] + at[d] - w->low[d];
          inside = from[d] >= 0 && from[d] < x.dims()[d];
        }
        if (!inside)
          continue; // padding adds nothing
        int64_t i = x.linearIndex(from);
        if (fast) {
          eval::binaryAt(*fast, out, k, x, i, out, k);
          continue;
        }
        Status ok = combine(reducer, results, k, inputs, i, depth);
        if (!ok)
          return ok.takeError();
      }
    }
    input = std::make_shared<const Literal>(std::move(results[0]));
  }
  return input;
}

/// The dim along which a reduce-window is a prefix scan (cumsum, cumprod,
/// cummax as jax lowers them): there the window spans the whole dim or more
/// with size-1 padding before and none after, every other dim has a window
/// of 1, strides and dilations are 1 and nothing is reversed. Then output i
/// covers input elements 0..i exactly.
std::optional<int64_t> prefixScanDim(const std::vector<WindowDim> &window,
                                     const std::vector<int64_t> &inDims,
                                     const std::vector<int64_t> &outDims) {
  if (window.size() != inDims.size() || inDims != outDims)
    return std::nullopt;
  std::optional<int64_t> scan;
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDim &w = window[d];
    if (w.stride != 1 || w.baseDilation != 1 || w.windowDilation != 1 ||
        w.reversal || w.paddingHigh != 0)
      return std::nullopt;
    if (w.size == 1 && w.paddingLow == 0)
      continue;
    if (scan || w.paddingLow != w.size - 1 || w.size < inDims[d])
      return std::nullopt;
    scan = static_cast<int64_t>(d);
  }
  return scan;
}

Expected<Literal> Evaluator::prefixScan(const std::vector<Value> &operands,
                                        std::vector<Literal> results,
                                        int64_t dim, const HloOpcode *fast,
                                        const HloComputation &reducer,
                                        int depth) {
  // Output i along dim folds elements 0..i in order: output i-1 folded with
  // element i. One pass per row, not one per output.
  size_t n = operands.size() / 2;
  std::vector<Value> inputs(operands.begin(), operands.begin() + n);
  const Literal &first = *inputs[0];
  int64_t stride = 1;
  for (int64_t k = dim + 1; k < first.rank(); ++k)
    stride *= first.dims()[k];
  int64_t length = first.dims()[dim];
  for (int64_t o = 0; o < results[0].elementCount(); ++o) {
    bool starts = (o / stride) % length == 0;
    for (size_t k = 0; k < n; ++k)
      copyElement(starts ? *operands[n + k] : results[k],
                  starts ? 0 : o - stride, results[k], o);
    if (fast) {
      eval::binaryAt(*fast, results[0], o, first, o, results[0], o);
      continue;
    }
    Status ok = combine(reducer, results, o, inputs, o, depth);
    if (!ok)
      return ok.takeError();
  }
  if (n == 1)
    return std::move(results[0]);
  return Literal::makeTuple(std::move(results));
}

Expected<Literal> Evaluator::reduceWindow(const HloInstruction &inst,
                                          const std::vector<Value> &operands,
                                          int depth) {
  size_t n = operands.size() / 2;
  std::vector<Value> inputs(operands.begin(), operands.begin() + n);
  const Literal &first = *inputs[0];
  const std::vector<WindowDim> &window = inst.attributes().window;
  const Shape &shape = inst.shape();
  std::vector<int64_t> outDims =
      shape.isTuple() ? shape.tupleShapes[0].dims : shape.dims;
  std::vector<int64_t> windowDims;
  for (const WindowDim &w : window)
    windowDims.push_back(w.size);
  std::vector<Literal> results;
  for (size_t k = 0; k < n; ++k)
    results.emplace_back(Shape(inputs[k]->elementType(), outDims));
  const HloComputation &reducer = *inst.calledComputation();
  std::optional<HloOpcode> fast = n == 1 ? simpleBinary(reducer) : std::nullopt;
  if (fast && reducer.root()->shape().elementType != first.elementType())
    fast.reset();
  if (std::optional<int64_t> d = prefixScanDim(window, first.dims(), outDims))
    return prefixScan(operands, std::move(results), *d, fast ? &*fast : nullptr,
                      reducer, depth);
  int64_t windowCount = 1;
  for (int64_t size : windowDims)
    windowCount *= size;
  std::vector<int64_t> outIndex(outDims.size(), 0), from(first.rank(), 0);
  for (int64_t o = 0; o < results[0].elementCount();
       ++o, nextIndex(outIndex, outDims)) {
    for (size_t k = 0; k < n; ++k)
      copyElement(*operands[n + k], 0, results[k], o);
    std::vector<int64_t> w(window.size(), 0);
    for (int64_t step = 0; step < windowCount;
         ++step, nextIndex(w, windowDims)) {
      bool inside = true;
      for (size_t d = 0; d < window.size() && inside; ++d) {
        const WindowDim &wd = window[d];
        int64_t offset = wd.reversal ? wd.size - 1 - w[d] : w[d];
        int64_t pos = outIndex[d] * wd.stride + offset * wd.windowDilation -
                      wd.paddingLow;
        inside = pos >= 0 && pos % wd.baseDilation == 0 &&
                 pos / wd.baseDilation < first.dims()[d];
        from[d] = inside ? pos / wd.baseDilation : 0;
      }
      if (!inside)
        continue;
      int64_t i = first.linearIndex(from);
      if (fast) {
        eval::binaryAt(*fast, results[0], o, first, i, results[0], o);
        continue;
      }
      Status ok = combine(reducer, results, o, inputs, i, depth);
      if (!ok)
        return ok.takeError();
    }
  }
  if (n == 1)
    return std::move(results[0]);
  return Literal::makeTuple(std::move(results));
}

Expected<Literal> Evaluator::dot(const HloInstruction &inst, const Literal &lhs,
                                 const Literal &rhs) {
  const DotDimensionNumbers &dn = inst.attributes().dotDimensionNumbers;
  Literal out(Shape(inst.shape().elementType, inst.shape().dims));
  eval::Kind kind = eval::kindOf(out.elementType());
  eval::Kind lk = eval::kindOf(lhs.elementType());
  eval::Kind rk = eval::kindOf(rhs.elementType());
  bool isFloatResult = kind == eval::Kind::Narrow || kind == eval::Kind::F64;
  for (eval::Kind k : {kind, lk, rk})
    if (k == eval::Kind::Complex || k == eval::Kind::Other ||
        k == eval::Kind::Pred)
      return Error("dot of these element types is not supported by the "
                   "evaluator");
  auto strides = [](const Literal &x) {
    std::vector<int64_t> s(x.rank(), 1);
    for (int64_t d = x.rank() - 2; d >= 0; --d)
      s[d] = s[d + 1] * x.dims()[d + 1];
    return s;
  };
  std::vector<int64_t> ls = strides(lhs), rs = strides(rhs);
  auto freeDims = [](const Literal &x, const std::vector<int64_t> &batch,
                     const std::vector<int64_t> &contracting) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < x.rank(); ++d)
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) ==
              contracting.end())
        dims.push_back(d);
    return dims;
  };
  std::vector<int64_t> lf =
      freeDims(lhs, dn.lhsBatchDims, dn.lhsContractingDims);
  std::vector<int64_t> rf =
      freeDims(rhs, dn.rhsBatchDims, dn.rhsContractingDims);
  // Offsets of every point of the contracting space, in lhs and rhs.
  std::vector<int64_t> cdims;
  for (int64_t d : dn.lhsContractingDims)
    cdims.push_back(lhs.dims()[d]);
  std::vector<int64_t> lOff, rOff, c(cdims.size(), 0);
  int64_t points = 1;
  for (int64_t size : cdims)
    points *= size;
  for (int64_t p = 0; p < points; ++p, nextIndex(c, cdims)) {
    int64_t lo = 0, ro = 0;
    for (size_t k = 0; k < cdims.size(); ++k) {
      lo += c[k] * ls[dn.lhsContractingDims[k]];
      ro += c[k] * rs[dn.rhsContractingDims[k]];
    }
    lOff.push_back(lo);
    rOff.push_back(ro);
  }
  // XLA:CPU: one accumulator of the result type, fused multiply-adds.
  auto fused = [&](PrimitiveType type) {
    return options.numerics == Numerics::XlaCpu && out.elementType() == type &&
           lhs.elementType() == type && rhs.elementType() == type;
  };
  bool fusedF32 = fused(PrimitiveType::F32),
       fusedF64 = fused(PrimitiveType::F64);
  eval::XlaCpuDot xlaDot = fusedF32
                               ? eval::xlaCpuDotKind(dn, lhs.dims(), rhs.dims())
                               : eval::XlaCpuDot::Fma;
  std::vector<int64_t> index(out.rank(), 0);
  for (int64_t i = 0; i < out.elementCount();
       ++i, nextIndex(index, out.dims())) {
    int64_t lBase = 0, rBase = 0;
    size_t r = 0;
    for (size_t k = 0; k < dn.lhsBatchDims.size(); ++k, ++r) {
      lBase += index[r] * ls[dn.lhsBatchDims[k]];
      rBase += index[r] * rs[dn.rhsBatchDims[k]];
    }
    for (int64_t d : lf)
      lBase += index[r++] * ls[d];
    for (int64_t d : rf)
      rBase += index[r++] * rs[d];
    if (fusedF32 && xlaDot != eval::XlaCpuDot::Fma) {
      std::vector<float> a(points), x(points);
      for (int64_t p = 0; p < points; ++p) {
        a[p] = static_cast<float>(lhs.getDouble(lBase + lOff[p]));
        x[p] = static_cast<float>(rhs.getDouble(rBase + rOff[p]));
      }
      if (xlaDot == eval::XlaCpuDot::RowGemv) {
        out.setDouble(i, eval::xlaCpuRowGemvDot(a, x));
      } else {
        for (int64_t p = 0; p < points; ++p)
          a[p] *= x[p];
        out.setDouble(i, eval::xlaCpuTreeSum(std::move(a)));
      }
    } else if (fusedF32) {
      float sum = 0;
      for (int64_t p = 0; p < points; ++p)
        sum =
            std::fmaf(static_cast<float>(lhs.getDouble(lBase + lOff[p])),
                      static_cast<float>(rhs.getDouble(rBase + rOff[p])), sum);
      out.setDouble(i, sum);
    } else if (isFloatResult) {
      double sum = 0;
      for (int64_t p = 0; p < points; ++p)
        sum = fusedF64 ? std::fma(lhs.getDouble(lBase + lOff[p]),
                                  rhs.getDouble(rBase + rOff[p]), sum)
                       : sum + lhs.getDouble(lBase + lOff[p]) *
                                   rhs.getDouble(rBase + rOff[p]);
      out.setDouble(i, sum);
    } else {
      uint64_t sum = 0;
      for (int64_t p = 0; p < points; ++p)
        sum += static_cast<uint64_t>(lhs.getInt(lBase + lOff[p])) *
               static_cast<uint64_t>(rhs.getInt(rBase + rOff[p]));
      out.setInt(i, static_cast<int64_t>(sum));
    }
  }
  return out;
}

Expected<Literal> Evaluator::map(const HloInstruction &inst,
                                 const std::vector<Value> &operands,
                                 int depth) {
  Literal out(Shape(inst.shape().elementType, inst.shape().dims));
  const HloComputation &callee = *inst.calledComputation();
  for (int64_t i = 0; i < out.elementCount(); ++i) {
    std::vector<Value> args;
    for (const Value &operand : operands) {
      Literal element(Shape(operand->elementType(), {}));
      copyElement(*operand, i, element, 0);
      args.push_back(std::make_shared<const Literal>(std::move(element)));
    }
    Expected<Literal> r = run(callee, args, depth + 1);
    if (!r)
      return r.takeError();
    copyElement(*r, 0, out, i);
  }
  return out;
}

Expected<Literal> Evaluator::scatter(const HloInstruction &inst,
                                     const std::vector<Value> &operands,
                                     int depth) {
  Expected<std::vector<const HloComputation *>> callees =
      eval::calleesAttribute(inst, "to_apply");
  if (!callees)
    return callees.takeError();
  if (callees->size() != 1)
    return Error("scatter needs one computation in to_apply=");
  const HloComputation &combiner = *callees->front();
  size_t n = operands.size() / 2;
  std::optional<HloOpcode> fast =
      n == 1 ? simpleBinary(combiner) : std::nullopt;
  if (fast &&
      (combiner.root()->shape().elementType != operands[0]->elementType() ||
       operands[2]->elementType() != operands[0]->elementType()))
    fast.reset();
  std::vector<const Literal *> literals;
  for (const Value &operand : operands)
    literals.push_back(operand.get());
  auto combineAt = [&](std::vector<Literal> &results, int64_t o,
                       const std::vector<const Literal *> &all,
                       size_t firstUpdate, int64_t u) -> Status {
    if (fast) {
      eval::binaryAt(*fast, results[0], o, *all[firstUpdate], u, results[0], o);
      return {};
    }
    std::vector<Value> updates;
    for (size_t k = 0; k < n; ++k)
      updates.push_back(std::shared_ptr<const Literal>(
          std::shared_ptr<const Literal>(), all[firstUpdate + k]));
    return this->combine(combiner, results, o, updates, u, depth);
  };
  return eval::scatter(inst, literals, combineAt);
}

Expected<Literal> Evaluator::sort(const HloInstruction &inst,
                                  const std::vector<Value> &operands,
                                  int depth) {
  bool isTopK = inst.opcode() == HloOpcode::CustomCall;
  Expected<std::vector<const HloComputation *>> callees =
      eval::calleesAttribute(inst, isTopK ? "called_computations" : "to_apply");
  if (!callees)
    return callees.takeError();
  if (callees->size() != 1)
    return Error(std::string(isTopK ? "TopK" : "sort") +
                 " needs one comparator computation");
  const HloComputation &comparator = *callees->front();
  auto less = [&](const std::vector<const Literal *> &arrays, int64_t i,
                  int64_t j) -> Expected<bool> {
    // A comparator of two parameters sees the first operand only (TopK's
    // may take just the values).
    size_t used = comparator.parameters().size() == 2 ? 1 : arrays.size();
    std::vector<Value> args;
    for (size_t k = 0; k < used; ++k)
      for (int64_t at : {i, j}) {
        Literal element(Shape(arrays[k]->elementType(), {}));
        copyElement(*arrays[k], at, element, 0);
        args.push_back(std::make_shared<const Literal>(std::move(element)));
      }
    Expected<Literal> r = run(comparator, args, depth + 1);
    if (!r)
      return r.takeError();
    if (r->isTuple() || r->elementType() != PrimitiveType::Pred ||
        r->elementCount() != 1)
      return Error("the comparator %" + comparator.name() + " returns " +
                   r->shape().toStringWithoutLayout() + ", expected pred[]");
    return r->getBits(0) != 0;
  };
  std::vector<const Literal *> literals;
  for (const Value &operand : operands)
    literals.push_back(operand.get());
  if (isTopK) {
    if (literals.size() != 1)
      return Error("TopK takes one operand");
    return eval::topK(inst, *literals[0], less);
  }
  return eval::sort(inst, literals, less);
}

/// The one computation `key=` names (while's condition and body).
Expected<const HloComputation *> oneCallee(const HloInstruction &inst,
                                           std::string_view key) {
  Expected<std::vector<const HloComputation *>> callees =
      eval::calleesAttribute(inst, key);
  if (!callees)
    return callees.takeError();
  if (callees->size() != 1)
    return Error(std::string(hloOpcodeName(inst.opcode())) +
                 " needs one computation in " + std::string(key) + "=");
  return callees->front();
}

Expected<Literal> Evaluator::whileLoop(const HloInstruction &inst,
                                       const Value &init, int depth) {
  Expected<const HloComputation *> condition = oneCallee(inst, "condition");
  if (!condition)
    return condition.takeError();
  Expected<const HloComputation *> body = oneCallee(inst, "body");
  if (!body)
    return body.takeError();
  Value state = init;
  for (;;) {
    Expected<Literal> go = run(**condition, {state}, depth + 1);
    if (!go)
      return go.takeError();
    if (go->isTuple() || go->elementType() != PrimitiveType::Pred ||
        go->elementCount() != 1)
      return Error("the condition %" + (*condition)->name() + " returns " +
                   go->shape().toStringWithoutLayout() + ", expected pred[]");
    if (go->getBits(0) == 0)
      break;
    if (steps >= options.maxSteps)
      return Error("the loops ran " + std::to_string(steps) +
                   " iterations, the most the evaluator may run "
                   "(--max-steps); this loop has not ended");
    ++steps;
    Expected<Literal> next = run(**body, {state}, depth + 1);
    if (!next)
      return next.takeError();
    if (next->shape().toStringWithoutLayout() !=
        state->shape().toStringWithoutLayout())
      return Error("the body %" + (*body)->name() + " returns " +
                   next->shape().toStringWithoutLayout() + ", expected " +
                   state->shape().toStringWithoutLayout());
    state = std::make_shared<const Literal>(std::move(*next));
  }
  Literal result = *state;
  result.setLayout(inst.shape().isTuple() ? std::nullopt : inst.shape().layout);
  return result;
}

Expected<Literal> Evaluator::conditional(const HloInstruction &inst,
                                         const std::vector<Value> &operands,
                                         int depth) {
  if (operands.empty())
    return Error("conditional needs a predicate or branch index");
  const Literal &selector = *operands[0];
  if (selector.isTuple() || selector.elementCount() != 1 ||
      (selector.elementType() != PrimitiveType::Pred &&
       selector.elementType() != PrimitiveType::S32))
    return Error("the branch selector is " +
                 selector.shape().toStringWithoutLayout() +
                 ", expected pred[] or s32[]");
  std::vector<const HloComputation *> branches;
  if (selector.elementType() == PrimitiveType::Pred &&
      !inst.rawAttribute("branch_computations")) {
    // true_computation=, false_computation=: branch 0 is the true one.
    for (const char *key : {"true_computation", "false_computation"}) {
      Expected<const HloComputation *> branch = oneCallee(inst, key);
      if (!branch)
        return branch.takeError();
      branches.push_back(*branch);
    }
  } else {
    Expected<std::vector<const HloComputation *>> all =
        eval::calleesAttribute(inst, "branch_computations");
    if (!all)
      return all.takeError();
    branches = std::move(*all);
  }
  if (branches.empty() || branches.size() + 1 != operands.size())
    return Error("conditional has " + std::to_string(branches.size()) +
                 " branches and " + std::to_string(operands.size() - 1) +
                 " branch operands, expected one operand per branch");
  // A pred selects branch 0 when true; an index out of range runs the last
  // branch (XLA's semantics).
  int64_t n = static_cast<int64_t>(branches.size());
  int64_t k;
  if (selector.elementType() == PrimitiveType::Pred) {
    k = selector.getBits(0) ? 0 : 1;
  } else {
    k = selector.getInt(0);
    if (k < 0 || k >= n)
      k = n - 1;
  }
  if (k >= n)
    return Error("a pred selector needs two branches");
  Expected<Literal> result = run(*branches[k], {operands[k + 1]}, depth + 1);
  if (!result)
    return result.takeError();
  result->setLayout(inst.shape().isTuple() ? std::nullopt
                                           : inst.shape().layout);
  return result;
}

} // namespace

Expected<Literal> evaluateInstruction(const HloInstruction &instruction,
                                      const std::vector<Literal> &operands,
                                      const EvaluatorOptions &options) {
  if (instruction.opcode() == HloOpcode::Parameter)
    return Error("%" + instruction.name() +
                 " is a parameter: it has no value "
                 "of its own");
  if (static_cast<int64_t>(operands.size()) != instruction.operandCount())
    return Error("%" + instruction.name() + " takes " +
                 std::to_string(instruction.operandCount()) +
                 " operands, given " + std::to_string(operands.size()));
  std::vector<Value> values;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Shape &want = instruction.operand(static_cast<int64_t>(i))->shape();
    if (want.toStringWithoutLayout() !=
        operands[i].shape().toStringWithoutLayout())
      return Error("operand " + std::to_string(i) + " is " +
                   operands[i].shape().toStringWithoutLayout() + ", expected " +
                   want.toStringWithoutLayout());
    values.push_back(std::make_shared<const Literal>(operands[i]));
  }
  return Evaluator(options).one(instruction, values);
}

Expected<Literal> evaluateComputation(const HloComputation &computation,
                                      const std::vector<Literal> &arguments,
                                      const EvaluatorOptions &options) {
  std::vector<HloInstruction *> params = computation.parameters();
  if (params.size() != arguments.size())
    return Error("%" + computation.name() + " takes " +
                 std::to_string(params.size()) + " arguments, given " +
                 std::to_string(arguments.size()));
  std::vector<Value> values;
  for (size_t i = 0; i < params.size(); ++i) {
    const Shape &want = params[i]->shape();
    const Shape &have = arguments[i].shape();
    bool ok = want.isTuple() == have.isTuple() &&
              want.elementType == have.elementType && want.dims == have.dims;
    if (!ok || (want.isTuple() &&
                want.toStringWithoutLayout() != have.toStringWithoutLayout()))
      return Error("argument " + std::to_string(i) + " is " +
                   have.toStringWithoutLayout() + ", expected " +
                   want.toStringWithoutLayout() + " for parameter %" +
                   params[i]->name());
    values.push_back(std::make_shared<const Literal>(arguments[i]));
  }
  Evaluator evaluator(options);
  return evaluator.run(computation, values);
}

Expected<Literal> evaluateHloModule(const HloModule &module,
                                    const std::vector<Literal> &arguments,
                                    const EvaluatorOptions &options) {
  if (!module.entry())
    return Error("the module has no ENTRY computation");
  return evaluateComputation(*module.entry(), arguments, options);
}

} // namespace tessel
