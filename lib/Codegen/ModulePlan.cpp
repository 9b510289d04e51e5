//===- ModulePlan.cpp - An HLO module as a sequence of kernels ------------===//
#include "ModulePlan.h"

#include "Pipeline.h"
#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/ScatterDimensions.h"
#include "tessel/Hlo/SortDimensions.h"
#include "tessel/Indexing/HloIndexing.h"

#include "tessel/Layout/TiledLayout.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace tessel {

static int64_t physicalBytes(const Shape &shape);

/// The computations `copy` of `original` calls: its called computations,
/// and a scatter's to_apply, which the parser keeps as text and which a
/// copy in the scratch module could not look up by name.
static void copyCallees(const HloInstruction &original, HloInstruction &copy) {
  for (HloComputation *called : original.calledComputations())
    copy.appendCalledComputation(called);
  if (original.opcode() == HloOpcode::Scatter &&
      original.calledComputations().empty()) {
    Expected<ScatterDimensions> dims = getScatterDimensions(original);
    if (dims)
      copy.appendCalledComputation(
          const_cast<HloComputation *>(dims->combiner));
  }
  // A sort's comparator (to_apply, or TopK's called_computations), kept as
  // text by the parser too.
  if (isSortLike(original) && original.calledComputations().empty()) {
    Expected<SortDimensions> dims = getSortDimensions(original);
    if (dims && dims->comparator)
      copy.appendCalledComputation(
          const_cast<HloComputation *>(dims->comparator));
  }
}

static bool isControlFlow(HloOpcode op) {
  return op == HloOpcode::Call || op == HloOpcode::While ||
         op == HloOpcode::Conditional;
}

/// The computations that `key=%c` or `key={%a, %b}` of `instruction`
/// names (while's condition and body, conditional's branches).
static Expected<std::vector<const HloComputation *>>
calleesNamed(const HloInstruction &instruction, const char *key) {
  std::vector<const HloComputation *> callees;
  const std::string *value = instruction.rawAttribute(key);
  const HloModule *module =
      instruction.parent() ? instruction.parent()->parent() : nullptr;
  if (!value || !module)
    return errorAt(instruction.location(),
                   "%" + instruction.name() + " (" +
                       std::string(hloOpcodeName(instruction.opcode())) +
                       ") has no " + key + "=");
  std::string name;
  auto add = [&]() -> Status {
    if (name.empty())
      return {};
    const HloComputation *callee = module->computation(name);
    if (!callee)
      return errorAt(instruction.location(),
                     "%" + instruction.name() + ": " + key +
                         "= names no computation %" + name);
    callees.push_back(callee);
    name.clear();
    return {};
  };
  for (char c : *value) {
    if (c == '{' || c == '}' || c == ',' || c == ' ') {
      if (Status added = add(); !added)
        return added.error();
    } else if (c != '%') {
      name += c;
    }
  }
  if (Status added = add(); !added)
    return added.error();
  return callees;
}

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
  copyCallees(instruction, *copy);
  for (HloInstruction *param : params)
    copy->appendOperand(param);
  HloInstruction *root = computation->addInstruction(std::move(copy));
  // rng-bit-generator's results are computed element by element, each
  // through its get-tuple-element (RngBits.h): the ROOT is their tuple.
  if (instruction.opcode() == HloOpcode::RngBitGenerator &&
      instruction.shape().isTuple()) {
    auto tuple = std::make_unique<HloInstruction>(
        HloOpcode::Tuple, instruction.name() + ".results", instruction.shape());
    tuple->setLocation(instruction.location());
    for (size_t k = 0; k < instruction.shape().tupleShapes.size(); ++k) {
      auto element = std::make_unique<HloInstruction>(
          HloOpcode::GetTupleElement,
          instruction.name() + "." + std::to_string(k),
          instruction.shape().tupleShapes[k]);
      element->mutableAttributes().tupleIndex = static_cast<int64_t>(k);
      element->setLocation(instruction.location());
      element->appendOperand(root);
      tuple->appendOperand(computation->addInstruction(std::move(element)));
    }
    root = computation->addInstruction(std::move(tuple));
  }
  computation->setRoot(root);
  return scratch.addComputation(std::move(computation));
}

/// Whether the compiler reduces the columns of `reduce` in segments: a
/// column sum of f32 or f64 (sumsColumnsInSegments, in the order the
/// evaluator reproduces), or a reduce whose bits do not depend on the
/// order (reducesInAnyOrder: max, min, integer sums and products, bitwise
/// ops), with column segments (hasColumnSegments).
static bool reducesColumnsInSegments(const HloInstruction &reduce) {
  return sumsColumnsInSegments(reduce) ||
         (reducesInAnyOrder(reduce) && hasColumnSegments(reduce));
}

/// The value a segment of `reduce` starts from: +0 for float sums (the
/// order of sumsColumnsInSegments), else the identity of the reduce's op
/// for its type, so that each segment combines its rows alone and the
/// reduce's own init is combined once, in the total.
static Literal segmentStart(const HloInstruction &reduce) {
  PrimitiveType type = reduce.shape().elementType;
  HloOpcode op = reduce.calledComputation()->root()->opcode();
  Literal start(Shape(type, {}));
  int bits = bitWidth(type);
  uint64_t ones = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  bool isSigned = isSignedInteger(type);
  if (isFloat(type)) {
    if (op == HloOpcode::Maximum || op == HloOpcode::Minimum)
      return Literal::scalar(type,
                             op == HloOpcode::Maximum
                                 ? -std::numeric_limits<double>::infinity()
                                 : std::numeric_limits<double>::infinity());
    return Literal::scalar(type, 0.0);
  }
  if (type == PrimitiveType::Pred) {
    start.setBits(0, op == HloOpcode::And ? 1 : 0);
    return start;
  }
  uint64_t signBit = uint64_t(1) << (bits - 1);
  switch (op) {
  case HloOpcode::Multiply:
    start.setBits(0, 1);
    break;
  case HloOpcode::And:
    start.setBits(0, ones);
    break;
  case HloOpcode::Maximum: // the lowest value
    start.setBits(0, isSigned ? signBit : 0);
    break;
  case HloOpcode::Minimum: // the highest value
    start.setBits(0, isSigned ? signBit - 1 : ones);
    break;
  default: // add, or, xor
    start.setBits(0, 0);
    break;
  }
  return start;
}

/// `computation` with each reduce the compiler reduces in segments
/// (reducesColumnsInSegments) split in two, a copy in `scratch`;
/// `computation` itself when it has none. Of an f32[8192,4096] summed
/// over dim 0:
///
///   r.rows = f32[32,256,4096] reshape(x)
///   r.segments = f32[32,4096] reduce(r.rows, +0), dimensions={1}
///   r = f32[4096] reduce(r.segments, init), dimensions={0}
///
/// (a column maximum starts its segments from -inf, segmentStart).
/// (then a reshape to the reduce's shape when it keeps several dims). The
/// segments' sums are read by a reduce, so they are materialized: a kernel
/// of their own, whose column reduction gives a block each segment's rows,
/// read in one contiguous sweep, where the plain column reduction walks all
/// rows of a strip of columns, a page apart.
static const HloComputation *
splitColumnSums(HloModule &scratch, const HloComputation &computation) {
  bool any = false;
  for (const auto &instruction : computation.instructions())
    any |= reducesColumnsInSegments(*instruction);
  if (!any)
    return &computation;
  auto copy =
      std::make_unique<HloComputation>(computation.name() + ".segmented");
  std::map<const HloInstruction *, HloInstruction *> copies;
  auto add = [&](HloOpcode opcode, const std::string &name, Shape shape,
                 const HloInstruction &from,
                 std::vector<HloInstruction *> operands) {
    auto instruction =
        std::make_unique<HloInstruction>(opcode, name, std::move(shape));
    instruction->setLocation(from.location());
    for (HloInstruction *operand : operands)
      instruction->appendOperand(operand);
    return instruction;
  };
  for (const auto &owned : computation.instructions()) {
    const HloInstruction &instruction = *owned;
    std::vector<HloInstruction *> operands;
    for (const HloInstruction *operand : instruction.operands())
      operands.push_back(copies.at(operand));
    if (!reducesColumnsInSegments(instruction)) {
      auto same = add(instruction.opcode(), instruction.name(),
                      instruction.shape(), instruction, operands);
      same->mutableAttributes() = instruction.attributes();
      same->mutableRawAttributes() = instruction.rawAttributes();
      copyCallees(instruction, *same);
      copies[&instruction] = copy->addInstruction(std::move(same));
      continue;
    }
    const Shape &input = instruction.operand(0)->shape();
    PrimitiveType type = instruction.shape().elementType;
    int64_t m = static_cast<int64_t>(instruction.dimensions().size());
    int64_t rows = 1, columns = 1;
    for (int64_t d = 0; d < input.rank(); ++d)
      (d < m ? rows : columns) *= input.dims[d];
    int64_t segments =
        (rows + kColumnSumSegmentRows - 1) / kColumnSumSegmentRows;
    const std::string &name = instruction.name();
    auto start = add(HloOpcode::Constant, name + ".start", Shape(type, {}),
                     instruction, {});
    start->mutableAttributes().literal = segmentStart(instruction);
    HloInstruction *startValue = copy->addInstruction(std::move(start));
    // Rows past a whole number of segments: the last segment is padded with
    // its start value, which leaves its result as it is (a sum from +0 is
    // never -0, and adding +0 keeps it; the others add the identity).
    HloInstruction *whole = operands[0];
    if (int64_t missing = segments * kColumnSumSegmentRows - rows) {
      HloInstruction *matrix = copy->addInstruction(
          add(HloOpcode::Reshape, name + ".matrix",
              Shape(type, {rows, columns}), instruction, {operands[0]}));
      auto pad = add(HloOpcode::Pad, name + ".padded",
                     Shape(type, {rows + missing, columns}), instruction,
                     {matrix, startValue});
      pad->mutableAttributes().padding = {PadDim{0, missing, 0},
                                          PadDim{0, 0, 0}};
      whole = copy->addInstruction(std::move(pad));
    }
    HloInstruction *grouped = copy->addInstruction(
        add(HloOpcode::Reshape, name + ".rows",
            Shape(type, {segments, kColumnSumSegmentRows, columns}),
            instruction, {whole}));
    auto partial = add(HloOpcode::Reduce, name + ".segments",
                       Shape(type, {segments, columns}), instruction,
                       {grouped, startValue});
    partial->mutableAttributes().dimensions = {1};
    copyCallees(instruction, *partial);
    HloInstruction *partialCopy = copy->addInstruction(std::move(partial));
    bool flat = instruction.shape().rank() == 1 &&
                instruction.shape().layoutOrDefault().tiles.empty();
    auto total = add(HloOpcode::Reduce, flat ? name : name + ".flat",
                     flat ? instruction.shape() : Shape(type, {columns}),
                     instruction, {partialCopy, operands[1]});
    total->mutableAttributes().dimensions = {0};
    copyCallees(instruction, *total);
    HloInstruction *result = copy->addInstruction(std::move(total));
    if (!flat)
      result =
          copy->addInstruction(add(HloOpcode::Reshape, name,
                                   instruction.shape(), instruction, {result}));
    copies[&instruction] = result;
  }
  copy->setRoot(copies.at(computation.root()));
  copy->setLocation(computation.location());
  return scratch.addComputation(std::move(copy));
}

/// `computation` with a copy of each rng-bit-generator for every
/// get-tuple-element that reads it, a copy in `scratch`; `computation`
/// itself when every one has a single user. The element emitter computes
/// each result element by element through its get-tuple-element
/// (RngBits.h), and a tuple-shaped value read by two functions of the
/// partition would be a function's root, which cannot return it.
static const HloComputation *
splitRngResults(HloModule &scratch, const HloComputation &computation) {
  bool any = false;
  for (const auto &instruction : computation.instructions())
    any |= instruction->opcode() == HloOpcode::RngBitGenerator &&
           instruction->users().size() > 1;
  if (!any)
    return &computation;
  auto copy = std::make_unique<HloComputation>(computation.name() + ".rng");
  std::map<const HloInstruction *, HloInstruction *> copies;
  auto same = [&](const HloInstruction &instruction, const std::string &name) {
    auto result = std::make_unique<HloInstruction>(instruction.opcode(), name,
                                                   instruction.shape());
    result->setLocation(instruction.location());
    result->mutableAttributes() = instruction.attributes();
    result->mutableRawAttributes() = instruction.rawAttributes();
    copyCallees(instruction, *result);
    for (const HloInstruction *operand : instruction.operands())
      result->appendOperand(copies.at(operand));
    return result;
  };
  for (const auto &owned : computation.instructions()) {
    const HloInstruction &instruction = *owned;
    const HloInstruction *rng =
        instruction.opcode() == HloOpcode::GetTupleElement &&
                instruction.operand(0)->opcode() == HloOpcode::RngBitGenerator
            ? instruction.operand(0)
            : nullptr;
    if (!rng) {
      bool onlyElements = instruction.opcode() == HloOpcode::RngBitGenerator;
      for (const HloInstruction *user : instruction.users())
        onlyElements &= user->opcode() == HloOpcode::GetTupleElement;
      if (onlyElements && &instruction != computation.root())
        continue; // each get-tuple-element gets a copy
      copies[&instruction] =
          copy->addInstruction(same(instruction, instruction.name()));
      continue;
    }
    // This element's own generator, of the same name (messages name the
    // instruction of the module).
    auto own = same(*rng, rng->name());
    HloInstruction *ownCopy = copy->addInstruction(std::move(own));
    auto element = std::make_unique<HloInstruction>(
        instruction.opcode(), instruction.name(), instruction.shape());
    element->setLocation(instruction.location());
    element->mutableAttributes() = instruction.attributes();
    element->mutableRawAttributes() = instruction.rawAttributes();
    element->appendOperand(ownCopy);
    copies[&instruction] = copy->addInstruction(std::move(element));
  }
  copy->setRoot(copies.at(computation.root()));
  copy->setLocation(computation.location());
  return scratch.addComputation(std::move(copy));
}

/// A value is *materialized* when a kernel of its own writes it to a buffer
/// that the rest of the computation reads. A kernel computes each element
/// where it writes it, so a reduce, reduce-window or dot read at other
/// indices than its own (through a broadcast, a reshape, another
/// reduction) would be computed again for every element that reads it (a
/// softmax in one fusion: each element would reduce its row twice). These
/// values, in definition order: the instruction itself, or for a variadic
/// reduce its get-tuple-elements. Empty when nothing needs it, or when a
/// variadic reduce is read otherwise than through get-tuple-element (the
/// computation is then compiled whole, as before). A scatter is the one
/// output of a kernel of its own (the scatter emitter's), so it is
/// materialized unless it is the ROOT (a variadic one through its
/// get-tuple-elements, all made by one kernel), and so are the operands it
/// updates in place unless they are parameters already. A sort (or TopK) is
/// the output of a kernel of its own too (the sort emitter's), materialized
/// the same way.
static std::vector<const HloInstruction *>
materializedValues(const HloComputation &computation) {
  // Whether every element of `value` is read once, at its own index: by
  // the ROOT tuple, or by elementwise ops of its dims whose values are read
  // so in turn (an epilogue: mean = sum / n).
  auto readByRootOnly = [&](const HloInstruction &value) {
    std::vector<const HloInstruction *> work{&value};
    std::set<const HloInstruction *> seen;
    while (!work.empty()) {
      const HloInstruction *v = work.back();
      work.pop_back();
      if (!seen.insert(v).second)
        continue;
      for (const HloInstruction *user : v->users()) {
        if (user == computation.root() && user->opcode() == HloOpcode::Tuple)
          continue;
        if (!isElementwise(user->opcode()) || !user->shape().isArray() ||
            user->shape().dims != value.shape().dims)
          return false;
        work.push_back(user);
      }
    }
    return true;
  };
  std::vector<const HloInstruction *> values;
  // The results of a kernel of its own (a sort, a scatter) unless it is the
  // ROOT: the instruction, or the get-tuple-elements of a tuple-shaped one
  // (a variadic one's elements all come from one kernel,
  // addSplitComputation); false when a user reads the tuple otherwise.
  auto addResults = [&](const HloInstruction &instruction) {
    if (&instruction == computation.root())
      return true;
    if (instruction.shape().isArray()) {
      values.push_back(&instruction);
      return true;
    }
    for (const HloInstruction *user : instruction.users()) {
      if (user->opcode() != HloOpcode::GetTupleElement)
        return false;
      if (std::find(values.begin(), values.end(), user) == values.end())
        values.push_back(user);
    }
    return true;
  };
  for (const auto &instruction : computation.instructions()) {
    HloOpcode op = instruction->opcode();
    if (isSortLike(*instruction)) {
      if (!addResults(*instruction))
        return {};
      continue;
    }
    // A scatter is the one output of a kernel of its own (the scatter
    // emitter's), and the operand it updates in place a buffer: the
    // kernel's parameter.
    if (op == HloOpcode::Scatter) {
      int64_t operands =
          std::max<int64_t>((instruction->operandCount() - 1) / 2, int64_t(1));
      for (int64_t k = 0; k < operands; ++k) {
        const HloInstruction *operand = instruction->operand(k);
        if (operand->opcode() != HloOpcode::Parameter &&
            std::find(values.begin(), values.end(), operand) == values.end())
          values.push_back(operand);
      }
      if (!addResults(*instruction))
        return {};
      continue;
    }
    if (op != HloOpcode::Reduce && op != HloOpcode::ReduceWindow &&
        op != HloOpcode::Dot)
      continue;
    if (instruction->shape().isArray()) {
      if (!readByRootOnly(*instruction))
        values.push_back(instruction.get());
      continue;
    }
    bool readElsewhere = false, onlyElements = true;
    for (const HloInstruction *user : instruction->users()) {
      if (user->opcode() != HloOpcode::GetTupleElement)
        onlyElements = false;
      else if (!readByRootOnly(*user))
        readElsewhere = true;
    }
    if (!readElsewhere)
      continue;
    if (!onlyElements)
      return {};
    for (const HloInstruction *user : instruction->users())
      values.push_back(user);
  }
  std::sort(values.begin(), values.end(),
            [](const HloInstruction *a, const HloInstruction *b) {
              return a->index() < b->index();
            });
  return values;
}

/// A computation of copies of `roots` and of what they read in `source`,
/// back to the values in `cut` (other than the roots) and to `source`'s
/// parameters, which become
/// its parameters (in the order they are first read). `sources` receives
/// the value of `source` that each parameter stands for. Several roots make
/// a ROOT tuple.
static HloComputation *
extractSubgraph(HloModule &scratch, const HloComputation &source,
                const std::vector<const HloInstruction *> &roots,
                const std::set<const HloInstruction *> &cut,
                const std::string &name,
                std::vector<const HloInstruction *> &sources) {
  std::set<const HloInstruction *> rootSet(roots.begin(), roots.end());
  auto isInput = [&](const HloInstruction *value) {
    return (cut.count(value) && !rootSet.count(value)) ||
           value->opcode() == HloOpcode::Parameter;
  };
  // What the roots read, back to the inputs (a worklist: no recursion
  // that follows the input's depth).
  std::set<const HloInstruction *> needed;
  std::vector<const HloInstruction *> work(roots.begin(), roots.end());
  while (!work.empty()) {
    const HloInstruction *value = work.back();
    work.pop_back();
    if (!needed.insert(value).second || isInput(value))
      continue;
    for (const HloInstruction *operand : value->operands())
      work.push_back(operand);
  }
  auto computation = std::make_unique<HloComputation>(name);
  std::map<const HloInstruction *, HloInstruction *> copies;
  auto copyOf = [&](const HloInstruction *value) -> HloInstruction * {
    auto it = copies.find(value);
    if (it != copies.end())
      return it->second;
    // An input: the next parameter.
    auto param = std::make_unique<HloInstruction>(
        HloOpcode::Parameter, value->name(), value->shape());
    param->mutableAttributes().parameterNumber =
        static_cast<int64_t>(sources.size());
    param->setLocation(value->location());
    sources.push_back(value);
    return copies[value] = computation->addInstruction(std::move(param));
  };
  for (const auto &owned : source.instructions()) {
    const HloInstruction *instruction = owned.get();
    if (!needed.count(instruction) || isInput(instruction))
      continue;
    auto copy = std::make_unique<HloInstruction>(
        instruction->opcode(), instruction->name(), instruction->shape());
    copy->mutableAttributes() = instruction->attributes();
    copy->mutableRawAttributes() = instruction->rawAttributes();
    copy->setLocation(instruction->location());
    copyCallees(*instruction, *copy);
    for (const HloInstruction *operand : instruction->operands())
      copy->appendOperand(copyOf(operand));
    copies[instruction] = computation->addInstruction(std::move(copy));
  }
  if (roots.size() == 1) {
    computation->setRoot(copyOf(roots.front()));
  } else {
    std::vector<Shape> shapes;
    for (const HloInstruction *root : roots)
      shapes.push_back(root->shape());
    auto tuple = std::make_unique<HloInstruction>(
        HloOpcode::Tuple, "outputs", Shape::makeTuple(std::move(shapes)));
    for (const HloInstruction *root : roots)
      tuple->appendOperand(copyOf(root));
    computation->setRoot(computation->addInstruction(std::move(tuple)));
  }
  return scratch.addComputation(std::move(computation));
}

/// Whether every map from an output of `part` to each parameter that
/// stands for a materialized value (`isMaterialized`) keeps the first
/// `rank` dims: (d0, ..., dn) -> (d0, ..., d{rank-1}, ...), an element of
/// the output's own row.
static bool readsAtLeadingDims(const HloComputation &part,
                               const std::vector<bool> &isMaterialized,
                               size_t rank, mlir::MLIRContext *context) {
  // computeOutputToInputIndexing composes the maps of a fusion: wrap the
  // part in one.
  HloComputation wrapper("wrapper");
  std::vector<HloInstruction *> params = part.parameters();
  auto fusion = std::make_unique<HloInstruction>(HloOpcode::Fusion, "part",
                                                 part.root()->shape());
  fusion->appendCalledComputation(const_cast<HloComputation *>(&part));
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i])
      return false;
    auto param = std::make_unique<HloInstruction>(
        HloOpcode::Parameter, "p" + std::to_string(i), params[i]->shape());
    param->mutableAttributes().parameterNumber = static_cast<int64_t>(i);
    fusion->appendOperand(wrapper.addInstruction(std::move(param)));
  }
  HloInstruction *call = wrapper.addInstruction(std::move(fusion));
  int64_t outputs =
      part.root()->shape().isTuple()
          ? static_cast<int64_t>(part.root()->shape().tupleShapes.size())
          : 1;
  for (int64_t output = 0; output < outputs; ++output) {
    Expected<HloInstructionIndexing> indexing =
        computeOutputToInputIndexing(*call, output, context);
    if (!indexing)
      return false;
    for (size_t i = 0; i < params.size(); ++i) {
      if (!isMaterialized[i])
        continue;
      if (i >= indexing->maps.size())
        return false;
      for (const IndexingMap &map : indexing->maps[i]) {
        mlir::AffineMap affine = map.getAffineMap();
        // Symbols (a reduction's walk over a row) may index the rest.
        if (affine.getNumResults() < rank)
          return false;
        for (size_t d = 0; d < rank; ++d)
          if (affine.getResult(d) != mlir::getAffineDimExpr(d, context))
            return false;
      }
    }
  }
  return true;
}

static bool isRowMajor(const Shape &shape) {
  Layout layout = shape.layoutOrDefault();
  if (!layout.tiles.empty())
    return false;
  for (size_t i = 0; i < layout.minorToMajor.size(); ++i)
    if (layout.minorToMajor[i] !=
        static_cast<int64_t>(layout.minorToMajor.size() - 1 - i))
      return false;
  return true;
}

/// Whether another output of `kernel` than `slot` is copied from `buffer`.
static bool copiedTwice(const PlannedKernel &kernel, size_t slot, int buffer) {
  for (size_t s = 0; s < kernel.inPlace.size(); ++s)
    if (s != slot && kernel.inPlace[s].copyBefore == buffer)
      return true;
  return false;
}

/// Calls `use(position, buffer)` for each buffer that a step other than a
/// kernel touches (a copy's source and destination, a selector read on the
/// host), `position` the number of kernels that run before it in plan
/// order.
template <typename Use>
static void forEachHostUse(std::vector<PlanStep> &steps, size_t &position,
                           Use &&use) {
  for (PlanStep &step : steps) {
    switch (step.kind) {
    case PlanStep::Kind::Kernels:
      position = step.last;
      break;
    case PlanStep::Kind::Copy:
      for (auto &[from, to] : step.copies) {
        use(position, from);
        use(position, to);
      }
      break;
    case PlanStep::Kind::While:
      forEachHostUse(step.condition, position, use);
      use(position, step.selector);
      forEachHostUse(step.body, position, use);
      break;
    case PlanStep::Kind::Conditional:
      use(position, step.selector);
      for (std::vector<PlanStep> &branch : step.branches)
        forEachHostUse(branch, position, use);
      break;
    }
  }
}

/// Renames buffer `from` to `to` in kernels `first` on, in the steps and in
/// the outputs; `from` is not used any more.
static void renameBuffer(ModulePlan &plan, size_t first, int from, int to) {
  auto rename = [&](std::vector<int> &buffers) {
    std::replace(buffers.begin(), buffers.end(), from, to);
  };
  for (size_t j = first; j < plan.kernels.size(); ++j) {
    rename(plan.kernels[j].inputs);
    rename(plan.kernels[j].outputs);
    // A later in-place kernel that updates a copy of `from`.
    for (InPlaceOutput &inPlace : plan.kernels[j].inPlace)
      if (inPlace.copyBefore == from)
        inPlace.copyBefore = to;
  }
  size_t position = 0;
  forEachHostUse(plan.steps, position, [&](size_t, int &buffer) {
    if (buffer == from)
      buffer = to;
  });
  rename(plan.outputs);
  plan.buffers[from] = Shape(plan.buffers[from].elementType, {0});
}

/// The first kernel or step after kernel `k` that reads or writes
/// `buffer`, or "".
static std::string laterUser(ModulePlan &plan, size_t k, int buffer) {
  for (size_t j = k + 1; j < plan.kernels.size(); ++j)
    if (std::count(plan.kernels[j].inputs.begin(), plan.kernels[j].inputs.end(),
                   buffer) ||
        std::count(plan.kernels[j].outputs.begin(),
                   plan.kernels[j].outputs.end(), buffer))
      return plan.kernels[j].name;
  std::string user;
  size_t position = 0;
  forEachHostUse(plan.steps, position, [&](size_t at, int b) {
    if (at > k && b == buffer && user.empty())
      user = "a copy or branch step";
  });
  return user;
}

/// In-place dynamic-update-slices and scatters whose operand buffer nothing
/// reads afterwards update that buffer: their output buffer is renamed to
/// it, and nothing is copied (see ModulePlan.h).
static void reuseUpdatedBuffers(ModulePlan &plan) {
  auto contains = [](const std::vector<int> &buffers, int b) {
    return std::count(buffers.begin(), buffers.end(), b);
  };
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    PlannedKernel &kernel = plan.kernels[k];
    for (size_t slot = 0; slot < kernel.inPlace.size(); ++slot) {
      int operand = kernel.inPlace[slot].copyBefore;
      if (operand < 0)
        continue;
      int output = kernel.outputs[slot];
      if (kernel.inLoop || contains(plan.inputs, operand) ||
          contains(plan.outputs, operand) ||
          contains(kernel.inputs, operand) != 1 ||
          kernel.inPlace[slot].operandRead ||
          copiedTwice(kernel, slot, operand) ||
          !(plan.buffers[operand] == plan.buffers[output]) ||
          !laterUser(plan, k, operand).empty())
        continue;
      renameBuffer(plan, k, output, operand);
      kernel.inPlace[slot].copyBefore = -1;
      kernel.inPlace[slot].reusesOperand = true;
    }
  }
}

/// The module's input_output_alias, where an in-place kernel (dynamic-
/// update-slice, scatter) updates the aliased ENTRY parameter into the
/// aliased output and no later kernel reads or writes the parameter: the
/// output buffer becomes the parameter's, which the caller donates, and the
/// copy before the kernel goes (see ModulePlan.h). Kernels before it read
/// the parameter before it changes, since kernels run in plan order. Any
/// other alias is left unused: the output gets a buffer of its own.
static void useInputOutputAliases(ModulePlan &plan, const HloModule &module) {
  plan.outputAliases.assign(plan.outputs.size(), -1);
  auto contains = [](const std::vector<int> &buffers, int b) {
    return std::count(buffers.begin(), buffers.end(), b);
  };
  for (const HloInputOutputAlias &alias : module.inputOutputAliases()) {
    size_t o = 0;
    if (plan.tupleResult) {
      if (alias.outputIndex.size() != 1)
        continue;
      o = static_cast<size_t>(alias.outputIndex.front());
    } else if (!alias.outputIndex.empty()) {
      continue;
    }
    int64_t p = alias.parameterNumber;
    if (!alias.parameterIndex.empty() || o >= plan.outputs.size() || p < 0 ||
        p >= static_cast<int64_t>(plan.inputs.size()))
      continue;
    int parameter = plan.inputs[p], output = plan.outputs[o];
    if (contains(plan.outputs, output) != 1 ||
        contains(plan.inputs, parameter) != 1 ||
        !(plan.buffers[parameter] == plan.buffers[output]))
      continue;
    // The kernel that writes the output must update the parameter in place
    // into it, and be the last to touch it; the parameter must not be an
    // output itself (it keeps its values there).
    size_t k = 0;
    while (k < plan.kernels.size() &&
           !contains(plan.kernels[k].outputs, output))
      ++k;
    if (k == plan.kernels.size())
      continue;
    PlannedKernel &kernel = plan.kernels[k];
    size_t slot = static_cast<size_t>(
        std::find(kernel.outputs.begin(), kernel.outputs.end(), output) -
        kernel.outputs.begin());
    if (slot >= kernel.inPlace.size() ||
        kernel.inPlace[slot].copyBefore != parameter)
      continue;
    if (kernel.inLoop) {
      kernel.inPlace[slot].aliasRejection =
          "input_output_alias gives it parameter " + std::to_string(p) +
          "'s buffer, but the kernel runs inside a loop";
      continue;
    }
    InPlaceOutput &inPlace = kernel.inPlace[slot];
    std::string why;
    if (contains(plan.outputs, parameter))
      why = "the parameter is an output too";
    else if (contains(kernel.inputs, parameter) != 1 || inPlace.operandRead ||
             copiedTwice(kernel, slot, parameter))
      why = "the kernel reads the parameter otherwise too";
    else if (std::string later = laterUser(plan, k, parameter); !later.empty())
      why = later + " reads the parameter afterwards";
    if (!why.empty()) {
      inPlace.aliasRejection = "input_output_alias gives it parameter " +
                               std::to_string(p) + "'s buffer, but " + why;
      continue;
    }
    renameBuffer(plan, k, output, parameter);
    plan.outputAliases[o] = p;
    inPlace.copyBefore = -1;
    inPlace.aliasedParameter = p;
  }
}

/// Values of a split computation worth computing once and keeping a chunk
/// of rows at a time (RowGroup::localBuffers): an exponential, log, tanh or
/// logistic that a materialized value (`values`) reads and something else
/// reads too. A softmax's `e = exp(x - max)` is read by the sum and by the
/// output: materialized, each exp is computed once instead of twice, and
/// the sum and the output read it from cache.
static std::vector<const HloInstruction *>
sharedValues(const std::vector<const HloInstruction *> &values) {
  std::set<const HloInstruction *> isValue(values.begin(), values.end());
  std::set<const HloInstruction *> shared;
  for (const HloInstruction *value : values) {
    if (value->opcode() != HloOpcode::Reduce)
      continue;
    for (const HloInstruction *operand : value->operands()) {
      HloOpcode op = operand->opcode();
      if ((op != HloOpcode::Exp && op != HloOpcode::Log &&
           op != HloOpcode::Tanh && op != HloOpcode::Logistic) ||
          !operand->shape().isArray() || isValue.count(operand))
        continue;
      bool readElsewhere = false;
      for (const HloInstruction *user : operand->users())
        readElsewhere |= !isValue.count(user);
      if (readElsewhere)
        shared.insert(operand);
    }
  }
  return {shared.begin(), shared.end()};
}

Expected<ModulePlan> planModule(const HloModule &module, bool rowChunks) {
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
      return errorAt(
          param->location(),
          "parameter %" + param->name() +
              " is not an array; tuple parameters are not supported");
    buffersOf[param] = {newBuffer(param->shape())};
  }
  plan.inputs.resize(entry->parameterCount());
  for (HloInstruction *param : entry->parameters())
    plan.inputs[param->parameterNumber()] = buffersOf[param].front();

  bool hasFusion = false;
  for (const auto &instruction : entry->instructions())
    hasFusion |= instruction->opcode() == HloOpcode::Fusion;
  // An ENTRY without fusions is compiled as one computation (split at its
  // materialized values, see materializedValues), unless it has tuples
  // other than its ROOT (around an opt-barrier, jax's checkpoints): those
  // only name buffers between kernels, so each instruction becomes a kernel.
  // So is one with control flow (call, while, conditional), whose called
  // computations are planned instruction by instruction in turn.
  bool kernelPerInstruction = hasFusion;
  for (const auto &instruction : entry->instructions())
    if ((instruction->opcode() == HloOpcode::Tuple &&
         instruction.get() != entry->root()) ||
        isControlFlow(instruction->opcode()))
      kernelPerInstruction = true;

  // Control flow: the step list that kernels and steps go to now, the
  // first kernel in no step yet, and where the kernels are (for their
  // origin).
  std::vector<PlanStep> *steps = &plan.steps;
  size_t unstepped = 0;
  std::string context;
  bool inLoop = false;

  // Where a kernel comes from, for --explain.
  auto originOf = [&](const HloInstruction &instruction,
                      const HloComputation *computation) -> std::string {
    if (computation == entry)
      return "the ENTRY computation (no fusions)";
    if (instruction.opcode() == HloOpcode::Fusion)
      return "fusion %" + instruction.name() + context;
    return "%" + instruction.name() + " (" +
           std::string(hloOpcodeName(instruction.opcode())) +
           ", not in a fusion)" + context;
  };

  // The kernels of `computation` (one per dims of its outputs), whose
  // parameters read `inputs`; returns its outputs' buffers, in order.
  auto addKernel =
      [&](const HloInstruction &instruction, const HloComputation *computation,
          std::vector<int> inputs,
          const std::string &origin) -> Expected<std::vector<int>> {
    std::vector<FusionOutput> outputs = getFusionOutputs(*computation);
    std::vector<int> buffers;
    for (const FusionOutput &output : outputs) {
      if (!output.shape().isArray())
        return errorAt(instruction.location(),
                       "%" + instruction.name() +
                           " has a nested tuple or token output, which the "
                           "compiler does not support");
      buffers.push_back(newBuffer(output.shape()));
    }
    std::vector<bool> done(outputs.size(), false);
    // Input slices (slices of one array, of any dims) are one kernel.
    bool together =
        analyzeFusion(*computation).kind == EmitterKind::InputSlices;
    for (size_t first = 0; first < outputs.size(); ++first) {
      if (done[first])
        continue;
      PlannedKernel kernel;
      kernel.name = "kernel_" + std::to_string(plan.kernels.size());
      kernel.origin = origin;
      kernel.inLoop = inLoop;
      kernel.computation = computation;
      kernel.inputs = inputs;
      for (size_t i = first; i < outputs.size(); ++i)
        if (!done[i] && (together || outputs[i].shape().dims ==
                                         outputs[first].shape().dims)) {
          done[i] = true;
          kernel.outputIndices.push_back(static_cast<int64_t>(i));
          kernel.outputs.push_back(buffers[i]);
        }
      FusionAnalysis analysis =
          analyzeFusion(*computation, kernel.outputIndices);
      // Each output of an in-place kernel starts as its operand (element k
      // of a variadic scatter as operand k).
      if (analysis.kind == EmitterKind::DynamicUpdateSlice ||
          analysis.kind == EmitterKind::Scatter)
        for (int64_t i : kernel.outputIndices) {
          int64_t k = std::max<int64_t>(outputs[i].element, 0);
          const HloInstruction *hero = analysis.hero;
          InPlaceOutput inPlace;
          inPlace.copyBefore = inputs[hero->operand(k)->parameterNumber()];
          for (int64_t j = 0; j < hero->operandCount(); ++j)
            inPlace.operandRead |=
                j != k && hero->operand(j) == hero->operand(k);
          kernel.inPlace.push_back(inPlace);
        }
      // The sort emitter's two buffers of positions (s32, or s64 for lines
      // longer than 2^31 - 1), one per element.
      if (analysis.kind == EmitterKind::Sort) {
        Expected<SortDimensions> dims = getSortDimensions(*analysis.hero);
        if (!dims)
          return errorAt(analysis.hero->location(),
                         "cannot compile %" + analysis.hero->name() + ": " +
                             dims.error().message);
        for (int k = 0; k < 2; ++k)
          kernel.scratch.push_back(
              newBuffer(Shape(dims->positionType(), dims->dims)));
      }
      plan.kernels.push_back(std::move(kernel));
    }
    return buffers;
  };

  // The kernels from `first` on of a split computation as a RowGroup, when
  // they qualify (see RowGroup).
  std::unique_ptr<mlir::MLIRContext> indexingContext;
  auto addRowGroup =
      [&](size_t first, const std::vector<const HloInstruction *> &values,
          const std::vector<
              std::pair<const HloComputation *, std::vector<bool>>> &parts) {
        if (plan.kernels.size() - first < 2)
          return;
        // The rows: the dims of the value of least rank.
        const Shape &rows =
            (*std::min_element(
                 values.begin(), values.end(),
                 [](const HloInstruction *a, const HloInstruction *b) {
                   return a->shape().rank() < b->shape().rank();
                 }))
                ->shape();
        if (!rows.isArray() || rows.dims.empty() || !isRowMajor(rows))
          return;
        size_t rank = rows.dims.size();
        // Every value starts with the rows' dims (a shared value has more).
        for (const HloInstruction *value : values)
          if (!value->shape().isArray() || !isRowMajor(value->shape()) ||
              value->shape().dims.size() < rank ||
              !std::equal(rows.dims.begin(), rows.dims.end(),
                          value->shape().dims.begin()))
            return;
        for (size_t k = first; k < plan.kernels.size(); ++k) {
          const PlannedKernel &kernel = plan.kernels[k];
          for (int b : kernel.outputs) {
            const Shape &shape = plan.buffers[b];
            if (shape.dims.size() < rank || !isRowMajor(shape) ||
                !std::equal(rows.dims.begin(), rows.dims.end(),
                            shape.dims.begin()))
              return;
          }
          if (analyzeFusion(*kernel.computation, kernel.outputIndices).kind !=
              EmitterKind::Loop)
            return;
        }
        if (!indexingContext)
          indexingContext = createCodegenContext();
        for (const auto &[part, isMaterialized] : parts)
          if (!readsAtLeadingDims(*part, isMaterialized, rank,
                                  indexingContext.get()))
            return;
        RowGroup group;
        group.first = first;
        group.last = plan.kernels.size() - 1;
        group.rowDims = rows.dims;
        plan.rowGroups.push_back(std::move(group));
      };

  // The kernels of `computation` split at `values`: a kernel for each of
  // them (with what it reads, back to the inputs and the values before
  // it), then one for the rest; `bufferOf` receives each value's buffer.
  auto addSplitComputation =
      [&](const HloInstruction &instruction, const HloComputation *computation,
          const std::vector<int> &inputs, const std::string &origin,
          const std::vector<const HloInstruction *> &values,
          std::map<const HloInstruction *, int> &bufferOf)
      -> Expected<std::vector<int>> {
    for (HloInstruction *param : computation->parameters())
      if (param)
        bufferOf[param] = inputs[param->parameterNumber()];
    std::set<const HloInstruction *> cut(values.begin(), values.end());
    size_t firstKernel = plan.kernels.size();
    // Each part, and which of its parameters are materialized values.
    std::vector<std::pair<const HloComputation *, std::vector<bool>>> parts;
    auto addPart = [&](const std::vector<const HloInstruction *> &roots,
                       const std::string &what) -> Expected<std::vector<int>> {
      std::vector<const HloInstruction *> sources;
      std::string name = computation->name() + ".part" +
                         std::to_string(plan.scratch->computations().size());
      HloComputation *part = extractSubgraph(*plan.scratch, *computation, roots,
                                             cut, name, sources);
      std::vector<bool> isMaterialized;
      for (const HloInstruction *value : sources)
        isMaterialized.push_back(cut.count(value) > 0);
      parts.emplace_back(part, std::move(isMaterialized));
      std::vector<int> partInputs;
      for (const HloInstruction *value : sources)
        partInputs.push_back(bufferOf.at(value));
      return addKernel(instruction, part, partInputs,
                       origin + ", the part that computes " + what);
    };
    for (const HloInstruction *value : values) {
      if (bufferOf.count(value))
        continue; // an element of a variadic scatter, made already
      // The elements of a variadic scatter come from one kernel, the
      // scatter's; those of a sort of several operands (or TopK) the sort's.
      const HloInstruction *scatter =
          value->opcode() == HloOpcode::GetTupleElement &&
                  (value->operand(0)->opcode() == HloOpcode::Scatter ||
                   isSortLike(*value->operand(0)))
              ? value->operand(0)
              : nullptr;
      Expected<std::vector<int>> buffers =
          addPart({scatter ? scatter : value},
                  "%" + (scatter ? scatter : value)->name() + " once");
      if (!buffers)
        return buffers.error();
      if (!scatter) {
        bufferOf[value] = buffers->front();
        continue;
      }
      for (const HloInstruction *element : scatter->users())
        if (element->opcode() == HloOpcode::GetTupleElement &&
            element->tupleIndex() < static_cast<int64_t>(buffers->size()))
          bufferOf[element] = (*buffers)[element->tupleIndex()];
    }
    // The rest. A parameter or a materialized value in the ROOT tuple only
    // names its buffer.
    const HloInstruction *root = computation->root();
    if (root->opcode() != HloOpcode::Tuple) {
      if (bufferOf.count(root))
        return std::vector<int>{bufferOf.at(root)};
      Expected<std::vector<int>> buffers = addPart({root}, "the ROOT");
      if (buffers)
        addRowGroup(firstKernel, values, parts);
      return buffers;
    }
    std::vector<const HloInstruction *> computed;
    for (const HloInstruction *element : root->operands())
      if (!bufferOf.count(element))
        computed.push_back(element);
    std::vector<int> computedBuffers;
    if (!computed.empty()) {
      Expected<std::vector<int>> buffers = addPart(computed, "the ROOT");
      if (!buffers)
        return buffers.error();
      computedBuffers = std::move(*buffers);
    }
    std::vector<int> buffers;
    size_t next = 0;
    for (const HloInstruction *element : root->operands())
      buffers.push_back(bufferOf.count(element) ? bufferOf.at(element)
                                                : computedBuffers[next++]);
    addRowGroup(firstKernel, values, parts);
    return buffers;
  };

  // The kernels of `computation`, split at its materialized values: a
  // kernel for each of them (with what it reads, back to the inputs and the
  // values before it), then one for the rest.
  auto addComputation =
      [&](const HloInstruction &instruction, const HloComputation *computation,
          const std::vector<int> &inputs) -> Expected<std::vector<int>> {
    std::string origin = originOf(instruction, computation);
    computation = splitRngResults(*plan.scratch, *computation);
    computation = splitColumnSums(*plan.scratch, *computation);
    std::vector<const HloInstruction *> values =
        materializedValues(*computation);
    if (values.empty())
      return addKernel(instruction, computation, inputs, origin);
    // Shared values are materialized only where the kernels run a chunk of
    // rows at a time (a chunk of them stays in cache): otherwise the
    // computation is split again without them.
    std::vector<const HloInstruction *> shared;
    if (rowChunks)
      shared = sharedValues(values);
    if (!shared.empty()) {
      size_t kernels = plan.kernels.size(), buffers = plan.buffers.size(),
             groups = plan.rowGroups.size();
      std::vector<const HloInstruction *> withShared = values;
      withShared.insert(withShared.end(), shared.begin(), shared.end());
      std::sort(withShared.begin(), withShared.end(),
                [](const HloInstruction *a, const HloInstruction *b) {
                  return a->index() < b->index();
                });
      std::map<const HloInstruction *, int> bufferOf;
      Expected<std::vector<int>> split = addSplitComputation(
          instruction, computation, inputs, origin, withShared, bufferOf);
      if (split && plan.rowGroups.size() > groups) {
        for (const HloInstruction *value : shared)
          plan.rowGroups.back().localBuffers.push_back(bufferOf.at(value));
        return split;
      }
      plan.kernels.resize(kernels);
      plan.buffers.resize(buffers);
      plan.rowGroups.resize(groups);
    }
    std::map<const HloInstruction *, int> bufferOf;
    return addSplitComputation(instruction, computation, inputs, origin, values,
                               bufferOf);
  };

  // The kernels planned since the last step become a Kernels step.
  auto flushKernels = [&] {
    if (plan.kernels.size() <= unstepped)
      return;
    PlanStep step;
    step.first = unstepped;
    step.last = plan.kernels.size();
    steps->push_back(std::move(step));
    unstepped = plan.kernels.size();
  };
  // A Copy step (each pair from -> to, in order), where any pair copies.
  auto addCopies =
      [&](const HloInstruction &instruction,
          const std::vector<std::pair<int, int>> &pairs) -> Status {
    PlanStep step;
    step.kind = PlanStep::Kind::Copy;
    for (const auto &[from, to] : pairs) {
      if (from == to)
        continue;
      const Shape &a = plan.buffers[from], &b = plan.buffers[to];
      if (a.elementType != b.elementType ||
          physicalBytes(a) != physicalBytes(b) ||
          (a.dims == b.dims && a.layoutOrDefault() != b.layoutOrDefault()))
        return errorAt(instruction.location(),
                       "cannot compile %" + instruction.name() + " (" +
                           std::string(hloOpcodeName(instruction.opcode())) +
                           "): a value of " + a.toString() +
                           " would be copied into a buffer of " + b.toString() +
                           ", which the compiler does not do");
      step.copies.emplace_back(from, to);
    }
    if (step.copies.empty())
      return {};
    flushKernels();
    steps->push_back(std::move(step));
    return {};
  };
  // `plan()` with its kernels and steps in `list`.
  auto inSteps = [&](std::vector<PlanStep> &list, auto &&planned) {
    flushKernels();
    std::vector<PlanStep> *outer = steps;
    steps = &list;
    auto result = planned();
    flushKernels();
    steps = outer;
    return result;
  };
  auto refuse = [](const HloInstruction &instruction, const std::string &why) {
    return errorAt(instruction.location(),
                   "cannot compile %" + instruction.name() + " (" +
                       std::string(hloOpcodeName(instruction.opcode())) +
                       "): " + why);
  };
  // The buffers' shapes of a value: one array, or a tuple of arrays.
  auto leavesOf = [&](const HloInstruction &instruction,
                      const Shape &shape) -> Expected<std::vector<Shape>> {
    if (shape.isArray())
      return std::vector<Shape>{shape};
    if (shape.isTuple()) {
      for (const Shape &element : shape.tupleShapes)
        if (!element.isArray())
          return refuse(instruction, "its value " + shape.toString() +
                                         " has a nested tuple or token, which "
                                         "the compiler does not support");
      return shape.tupleShapes;
    }
    return refuse(instruction, "its value " + shape.toString() +
                                   " is not an array or a tuple of arrays");
  };
  // Where it is safe, the one kernel at or after `first` that writes
  // `from` writes `to` instead, which saves copying `from` into `to` after
  // `list` (a loop body's value into its state, a branch's into the
  // conditional's): no kernel after it touches `to`, nor any step of `list`
  // after it, and it reads `to` only as the operand it updates in place
  // (then it updates `to` itself). `from` is touched by no step of `list`
  // and is in no row group.
  auto renameInto = [&](std::vector<PlanStep> &list, size_t first, int from,
                        int to) -> bool {
    auto contains = [](const std::vector<int> &buffers, int b) {
      return std::count(buffers.begin(), buffers.end(), b);
    };
    if (from == to || !(plan.buffers[from] == plan.buffers[to]))
      return false;
    size_t writer = plan.kernels.size();
    for (size_t k = first; k < plan.kernels.size(); ++k)
      if (contains(plan.kernels[k].outputs, from)) {
        if (writer != plan.kernels.size())
          return false;
        writer = k;
      }
    if (writer == plan.kernels.size())
      return false;
    for (const RowGroup &group : plan.rowGroups)
      if (group.first <= writer && writer <= group.last)
        return false;
    for (size_t k = writer + 1; k < plan.kernels.size(); ++k) {
      if (contains(plan.kernels[k].inputs, to) ||
          contains(plan.kernels[k].outputs, to))
        return false;
      for (const InPlaceOutput &inPlace : plan.kernels[k].inPlace)
        if (inPlace.copyBefore == to)
          return false;
    }
    bool used = false;
    size_t position = first;
    forEachHostUse(list, position, [&](size_t at, int b) {
      used |= b == from || (b == to && at > writer);
    });
    if (used)
      return false;
    PlannedKernel &kernel = plan.kernels[writer];
    size_t slot = static_cast<size_t>(
        std::find(kernel.outputs.begin(), kernel.outputs.end(), from) -
        kernel.outputs.begin());
    bool updatesTo =
        slot < kernel.inPlace.size() && kernel.inPlace[slot].copyBefore == to;
    bool readsTo = contains(kernel.inputs, to) > 0;
    for (const InPlaceOutput &inPlace : kernel.inPlace)
      readsTo |= inPlace.copyBefore == to;
    // A loop kernel of one output that reads `to` only at the element it
    // writes (x * 0.5, i + 1) may write over it: each element is read
    // before it is written, and by its own thread only.
    auto elementwise = [&] {
      if (!kernel.inPlace.empty() || kernel.outputs.size() != 1 ||
          getFusionOutputs(*kernel.computation).size() != 1 ||
          analyzeFusion(*kernel.computation, kernel.outputIndices).kind !=
              EmitterKind::Loop)
        return false;
      std::vector<bool> isTo;
      for (int b : kernel.inputs)
        isTo.push_back(b == to);
      if (!indexingContext)
        indexingContext = createCodegenContext();
      return readsAtLeadingDims(*kernel.computation, isTo,
                                plan.buffers[to].dims.size(),
                                indexingContext.get());
    };
    bool overwritesInput = false;
    if (contains(kernel.outputs, to))
      return false;
    if (readsTo && !updatesTo) {
      if (!elementwise())
        return false;
      overwritesInput = true;
    } else if (readsTo && (kernel.inPlace[slot].operandRead ||
                           contains(kernel.inputs, to) != 1 ||
                           copiedTwice(kernel, slot, to))) {
      return false;
    }
    for (size_t k = writer; k < plan.kernels.size(); ++k) {
      std::replace(plan.kernels[k].inputs.begin(), plan.kernels[k].inputs.end(),
                   from, to);
      std::replace(plan.kernels[k].outputs.begin(),
                   plan.kernels[k].outputs.end(), from, to);
      for (InPlaceOutput &inPlace : plan.kernels[k].inPlace)
        if (inPlace.copyBefore == from)
          inPlace.copyBefore = to;
    }
    if (updatesTo) {
      kernel.inPlace[slot].copyBefore = -1;
      kernel.inPlace[slot].reusesOperand = true;
    }
    kernel.overwritesInput |= overwritesInput;
    plan.buffers[from] = Shape(plan.buffers[from].elementType, {0});
    return true;
  };

  // The kernels and steps of `computation`, one kernel per instruction
  // (a fusion is one), its parameters naming `arguments` (the buffers of
  // each, one per tuple element); returns its ROOT's buffers.
  std::function<Expected<std::vector<int>>(
      const HloComputation &, const std::vector<std::vector<int>> &)>
      planInstructions;
  planInstructions = [&](const HloComputation &computation,
                         const std::vector<std::vector<int>> &arguments)
      -> Expected<std::vector<int>> {
    for (HloInstruction *param : computation.parameters()) {
      if (!param)
        continue;
      size_t n = static_cast<size_t>(param->parameterNumber());
      if (n >= arguments.size())
        return errorAt(param->location(), "parameter %" + param->name() +
                                              " of %" + computation.name() +
                                              " has no argument");
      Expected<std::vector<Shape>> leaves = leavesOf(*param, param->shape());
      if (!leaves)
        return leaves.error();
      if (leaves->size() != arguments[n].size())
        return errorAt(param->location(),
                       "parameter %" + param->name() + " of %" +
                           computation.name() + " is " +
                           param->shape().toString() + ", given " +
                           std::to_string(arguments[n].size()) + " arrays");
      buffersOf[param] = arguments[n];
    }
    for (const auto &owned : computation.instructions()) {
      const HloInstruction &instruction = *owned;
      auto operandBuffer = [&](int64_t i) -> Expected<int> {
        const std::vector<int> &buffers = buffersOf[instruction.operand(i)];
        if (buffers.size() != 1)
          return errorAt(instruction.location(),
                         "operand " + std::to_string(i) + " of %" +
                             instruction.name() +
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
        if (instruction.tupleIndex() < 0 ||
            instruction.tupleIndex() >= static_cast<int64_t>(buffers.size()))
          return errorAt(instruction.location(), "tuple index out of range");
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
          buffersOf[&instruction] = {*b};
          continue;
        }
        break;
      }
      case HloOpcode::Call: {
        // Planned in place: its parameters name the operands' buffers.
        const HloComputation *callee = instruction.calledComputation();
        if (!callee)
          return refuse(instruction, "it calls no computation");
        std::vector<std::vector<int>> operands;
        for (const HloInstruction *operand : instruction.operands())
          operands.push_back(buffersOf[operand]);
        std::string outer = context;
        context += ", called by %" + instruction.name();
        Expected<std::vector<int>> buffers =
            planInstructions(*callee, operands);
        context = outer;
        if (!buffers)
          return buffers.error();
        buffersOf[&instruction] = std::move(*buffers);
        continue;
      }
      case HloOpcode::While: {
        Expected<std::vector<const HloComputation *>> condition =
            calleesNamed(instruction, "condition");
        if (!condition)
          return condition.error();
        Expected<std::vector<const HloComputation *>> body =
            calleesNamed(instruction, "body");
        if (!body)
          return body.error();
        if (condition->size() != 1 || body->size() != 1 ||
            instruction.operandCount() != 1)
          return refuse(instruction, "a while needs one operand, one "
                                     "condition and one body");
        Expected<std::vector<Shape>> leaves =
            leavesOf(instruction, instruction.shape());
        if (!leaves)
          return leaves.error();
        const std::vector<int> init = buffersOf[instruction.operand(0)];
        if (init.size() != leaves->size())
          return refuse(instruction, "its operand has " +
                                         std::to_string(init.size()) +
                                         " arrays, its value " +
                                         std::to_string(leaves->size()));
        // The loop's state: buffers of its own, which the operand is
        // copied into (an ENTRY parameter or a constant is never written).
        std::vector<int> state;
        std::vector<std::pair<int, int>> copies;
        for (size_t i = 0; i < leaves->size(); ++i) {
          state.push_back(newBuffer((*leaves)[i]));
          copies.emplace_back(init[i], state.back());
        }
        if (Status copied = addCopies(instruction, copies); !copied)
          return copied.error();
        flushKernels();
        PlanStep step;
        step.kind = PlanStep::Kind::While;
        step.instruction = "%" + instruction.name() + " (condition %" +
                           condition->front()->name() + ", body %" +
                           body->front()->name() + ")";
        std::string outer = context;
        bool outerInLoop = inLoop;
        inLoop = true;
        context = outer + ", in the condition of %" + instruction.name();
        Expected<std::vector<int>> pred = inSteps(step.condition, [&] {
          return planInstructions(*condition->front(), {state});
        });
        if (!pred)
          return pred.error();
        if (pred->size() != 1 ||
            plan.buffers[pred->front()].elementType != PrimitiveType::Pred ||
            plan.buffers[pred->front()].elementCount() != 1)
          return refuse(instruction, "its condition %" +
                                         condition->front()->name() +
                                         " does not return one pred");
        step.selector = pred->front();
        context = outer + ", in the body of %" + instruction.name();
        size_t bodyFirst = plan.kernels.size();
        Expected<std::vector<int>> next = inSteps(step.body, [&] {
          Expected<std::vector<int>> result =
              planInstructions(*body->front(), {state});
          if (!result)
            return result;
          if (result->size() != state.size())
            return Expected<std::vector<int>>(refuse(
                instruction, "its body %" + body->front()->name() +
                                 " returns " + std::to_string(result->size()) +
                                 " arrays, the state has " +
                                 std::to_string(state.size())));
          // A value that its kernel may write into the state directly
          // (nothing reads the old element after it) is not copied.
          for (size_t i = 0; i < state.size() && i < result->size(); ++i) {
            int from = (*result)[i];
            if (std::count(result->begin(), result->end(), from) == 1 &&
                std::count(result->begin(), result->end(), state[i]) == 0 &&
                std::count(state.begin(), state.end(), from) == 0 &&
                renameInto(step.body, bodyFirst, from, state[i]))
              (*result)[i] = state[i];
          }
          // The body's values become the state after its last kernel. An
          // element passed through is not copied; one that is another
          // element's state buffer, which is overwritten itself (a swap),
          // goes through a temporary first.
          std::vector<std::pair<int, int>> first, then;
          for (size_t i = 0; i < state.size(); ++i) {
            int from = (*result)[i];
            if (from == state[i])
              continue;
            auto j = std::find(state.begin(), state.end(), from);
            if (j != state.end() && (*result)[j - state.begin()] != *j) {
              int temporary = newBuffer(plan.buffers[from]);
              first.emplace_back(from, temporary);
              then.emplace_back(temporary, state[i]);
            } else {
              then.emplace_back(from, state[i]);
            }
          }
          first.insert(first.end(), then.begin(), then.end());
          if (Status copied = addCopies(instruction, first); !copied)
            return Expected<std::vector<int>>(copied.error());
          return result;
        });
        context = outer;
        inLoop = outerInLoop;
        if (!next)
          return next.error();
        steps->push_back(std::move(step));
        buffersOf[&instruction] = state;
        continue;
      }
      case HloOpcode::Conditional: {
        if (instruction.operandCount() < 1)
          return refuse(instruction, "it has no branch selector");
        Expected<int> selector = operandBuffer(0);
        if (!selector)
          return selector.error();
        const Shape &selectorShape = plan.buffers[*selector];
        bool isPred = selectorShape.elementType == PrimitiveType::Pred;
        if ((!isPred && selectorShape.elementType != PrimitiveType::S32) ||
            selectorShape.elementCount() != 1)
          return refuse(instruction, "its branch selector is " +
                                         selectorShape.toString() +
                                         ", expected pred[] or s32[]");
        std::vector<const HloComputation *> branches;
        if (isPred && !instruction.rawAttribute("branch_computations")) {
          // true_computation=, false_computation=: branch 0 is the true one.
          for (const char *key : {"true_computation", "false_computation"}) {
            Expected<std::vector<const HloComputation *>> branch =
                calleesNamed(instruction, key);
            if (!branch)
              return branch.error();
            if (branch->size() != 1)
              return refuse(instruction, "it needs one computation in " +
                                             std::string(key) + "=");
            branches.push_back(branch->front());
          }
        } else {
          Expected<std::vector<const HloComputation *>> all =
              calleesNamed(instruction, "branch_computations");
          if (!all)
            return all.error();
          branches = std::move(*all);
        }
        if (branches.empty() ||
            static_cast<int64_t>(branches.size()) + 1 !=
                instruction.operandCount() ||
            (isPred && branches.size() != 2))
          return refuse(instruction,
                        "it has " + std::to_string(branches.size()) +
                            " branches and " +
                            std::to_string(instruction.operandCount() - 1) +
                            " branch operands, expected one operand per "
                            "branch (two for a pred)");
        Expected<std::vector<Shape>> leaves =
            leavesOf(instruction, instruction.shape());
        if (!leaves)
          return leaves.error();
        // The result: buffers of its own, which the branch that runs
        // copies its ROOT's values into.
        std::vector<int> result;
        for (const Shape &leaf : *leaves)
          result.push_back(newBuffer(leaf));
        flushKernels();
        PlanStep step;
        step.kind = PlanStep::Kind::Conditional;
        step.instruction = "%" + instruction.name();
        step.selector = *selector;
        step.branches.resize(branches.size());
        std::string outer = context;
        for (size_t b = 0; b < branches.size(); ++b) {
          step.instruction += (b ? ", %" : " (branches %") +
                              branches[b]->name() +
                              (b + 1 == branches.size() ? ")" : "");
          context = outer + ", in branch " + std::to_string(b) + " of %" +
                    instruction.name();
          std::vector<int> operand =
              buffersOf[instruction.operand(static_cast<int64_t>(b) + 1)];
          size_t branchFirst = plan.kernels.size();
          Expected<std::vector<int>> values = inSteps(step.branches[b], [&] {
            Expected<std::vector<int>> values =
                planInstructions(*branches[b], {operand});
            if (!values)
              return values;
            // A value its kernel may write into the result directly is not
            // copied.
            for (size_t i = 0; i < values->size() && i < result.size(); ++i)
              if (std::count(values->begin(), values->end(), (*values)[i]) ==
                      1 &&
                  renameInto(step.branches[b], branchFirst, (*values)[i],
                             result[i]))
                (*values)[i] = result[i];
            if (values->size() != result.size())
              return Expected<std::vector<int>>(refuse(
                  instruction, "branch %" + branches[b]->name() + " returns " +
                                   std::to_string(values->size()) +
                                   " arrays, expected " +
                                   std::to_string(result.size())));
            std::vector<std::pair<int, int>> copies;
            for (size_t i = 0; i < result.size(); ++i)
              copies.emplace_back((*values)[i], result[i]);
            if (Status copied = addCopies(instruction, copies); !copied)
              return Expected<std::vector<int>>(copied.error());
            return values;
          });
          if (!values) {
            context = outer;
            return values.error();
          }
        }
        context = outer;
        steps->push_back(std::move(step));
        buffersOf[&instruction] = std::move(result);
        continue;
      }
      default:
        break;
      }
      std::vector<int> inputs;
      for (int64_t i = 0; i < instruction.operandCount(); ++i) {
        // A kernel reads arrays: a tuple operand (of a sort, say) would
        // reach the emitters as a tensor of no type.
        if (!instruction.operand(i)->shape().isArray())
          return refuse(instruction,
                        "operand " + std::to_string(i) +
                            " is a tuple, which the compiler reads only "
                            "through get-tuple-element");
        Expected<int> b = operandBuffer(i);
        if (!b)
          return b.error();
        inputs.push_back(*b);
      }
      const HloComputation *called =
          instruction.opcode() == HloOpcode::Fusion
              ? instruction.calledComputation()
              : wrapInstruction(*plan.scratch, instruction);
      Expected<std::vector<int>> buffers =
          addComputation(instruction, called, inputs);
      if (!buffers)
        return buffers.error();
      buffersOf[&instruction] = std::move(*buffers);
    }
    return buffersOf[computation.root()];
  };

  if (!kernelPerInstruction) {
    Expected<std::vector<int>> buffers =
        addComputation(*entry->root(), entry, plan.inputs);
    if (!buffers)
      return buffers.error();
    buffersOf[entry->root()] = std::move(*buffers);
  } else {
    std::vector<std::vector<int>> arguments;
    for (int b : plan.inputs)
      arguments.push_back({b});
    Expected<std::vector<int>> buffers = planInstructions(*entry, arguments);
    if (!buffers)
      return buffers.error();
  }
  flushKernels();
  const HloInstruction *root = entry->root();
  plan.tupleResult = root->shape().isTuple();
  plan.outputs = buffersOf[root];
  if (!kernelPerInstruction && plan.tupleResult == false &&
      plan.outputs.size() != 1)
    return Error("internal error: the ROOT has no buffer");
  reuseUpdatedBuffers(plan);
  useInputOutputAliases(plan, module);
  return plan;
}

/// describeSteps' lines for `steps`, indented by `indent`.
static void describeStepList(const ModulePlan &plan,
                             const std::vector<PlanStep> &steps,
                             const std::string &indent, std::string &text) {
  auto buffer = [&](int b) {
    return "buffer " + std::to_string(b) + " " +
           plan.buffers[b].toStringWithoutLayout();
  };
  for (const PlanStep &step : steps) {
    switch (step.kind) {
    case PlanStep::Kind::Kernels:
      text += indent + plan.kernels[step.first].name;
      if (step.last - step.first > 1)
        text += (step.last - step.first > 2 ? " to " : ", ") +
                plan.kernels[step.last - 1].name;
      text += "\n";
      break;
    case PlanStep::Kind::Copy:
      for (const auto &[from, to] : step.copies)
        text += indent + "copy " + buffer(from) + " into buffer " +
                std::to_string(to) + "\n";
      break;
    case PlanStep::Kind::While:
      text += indent + "while " + step.instruction + ":\n";
      text += indent + "  condition:\n";
      describeStepList(plan, step.condition, indent + "    ", text);
      text += indent + "    read " + buffer(step.selector) +
              " on the host: the body runs while it is true\n";
      text += indent + "  body:\n";
      describeStepList(plan, step.body, indent + "    ", text);
      if (step.body.empty())
        text += indent + "    (nothing)\n";
      break;
    case PlanStep::Kind::Conditional: {
      bool isPred =
          plan.buffers[step.selector].elementType == PrimitiveType::Pred;
      size_t n = step.branches.size();
      text += indent + "conditional " + step.instruction + ": read " +
              buffer(step.selector) + " on the host, " +
              (isPred ? std::string("true runs branch 0, false branch 1")
                      : "an index outside [0, " + std::to_string(n) +
                            ") runs branch " + std::to_string(n - 1)) +
              "\n";
      for (size_t b = 0; b < n; ++b) {
        text += indent + "  branch " + std::to_string(b) + ":\n";
        describeStepList(plan, step.branches[b], indent + "    ", text);
        if (step.branches[b].empty())
          text += indent + "    (nothing)\n";
      }
      break;
    }
    }
  }
}

Status runSteps(const ModulePlan &plan, const std::vector<PlanStep> &steps,
                const StepActions &actions) {
  for (const PlanStep &step : steps) {
    switch (step.kind) {
    case PlanStep::Kind::Kernels:
      if (Status ran = actions.kernels(step.first, step.last); !ran)
        return ran;
      break;
    case PlanStep::Kind::Copy:
      for (const auto &[from, to] : step.copies)
        if (Status copied = actions.copy(from, to); !copied)
          return copied;
      break;
    case PlanStep::Kind::While:
      for (;;) {
        if (Status ran = runSteps(plan, step.condition, actions); !ran)
          return ran;
        Expected<int64_t> more = actions.readSelector(step);
        if (!more)
          return more.error();
        if (*more == 0)
          break;
        if (Status ran = runSteps(plan, step.body, actions); !ran)
          return ran;
      }
      break;
    case PlanStep::Kind::Conditional: {
      Expected<int64_t> value = actions.readSelector(step);
      if (!value)
        return value.error();
      int64_t n = static_cast<int64_t>(step.branches.size()), branch;
      if (plan.buffers[step.selector].elementType == PrimitiveType::Pred)
        branch = *value != 0 ? 0 : 1;
      else
        branch = *value < 0 || *value >= n ? n - 1 : *value;
      if (Status ran = runSteps(plan, step.branches[branch], actions); !ran)
        return ran;
      break;
    }
    }
  }
  return {};
}

std::string describeSteps(const ModulePlan &plan) {
  if (plan.steps.size() <= 1 &&
      (plan.steps.empty() || plan.steps[0].kind == PlanStep::Kind::Kernels))
    return "";
  std::string text = "steps (the kernels in the order they run):\n";
  describeStepList(plan, plan.steps, "  ", text);
  std::string outputs;
  for (int b : plan.outputs)
    outputs += " " + std::to_string(b);
  return text + "  outputs: buffers" + outputs + "\n";
}

static int64_t physicalBytes(const Shape &shape) {
  Expected<TiledLayout> layout = TiledLayout::get(shape);
  return layout ? layout->physicalBytes() : -1;
}

} // namespace tessel
