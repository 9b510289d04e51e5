//===- HloIndexing.cpp - Indexing maps of HLO: helpers and fusions --------===//
#include "HloIndexingOps.h"

#include "tessel/Indexing/LayoutMap.h"
#include "tessel/Layout/TiledLayout.h"

#include "mlir/IR/AffineMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>
#include <tuple>

using mlir::AffineExpr;
using mlir::AffineMap;

namespace tessel {

bool HloInstructionIndexing::addMap(size_t id, IndexingMap map) {
  if (maps.size() <= id)
    maps.resize(id + 1);
  for (const IndexingMap &existing : maps[id])
    if (existing == map)
      return false;
  maps[id].push_back(std::move(map));
  return true;
}

void HloInstructionIndexing::markUnknown(size_t id) {
  if (maps.size() <= id)
    maps.resize(id + 1);
  if (unknown.size() < maps.size())
    unknown.resize(maps.size(), false);
  unknown[id] = true;
  maps[id].clear();
}

bool HloInstructionIndexing::hasUnknown() const {
  for (bool u : unknown)
    if (u)
      return true;
  return false;
}

void HloInstructionIndexing::simplify() {
  for (std::vector<IndexingMap> &set : maps) {
    std::vector<IndexingMap> old = std::move(set);
    set.clear();
    for (IndexingMap &map : old) {
      map.simplify();
      bool seen = false;
      for (const IndexingMap &existing : set)
        seen = seen || existing == map;
      if (!seen)
        set.push_back(std::move(map));
    }
  }
}

std::string HloInstructionIndexing::toString(const std::string &label) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (size_t id = 0; id < maps.size(); ++id) {
    if (id)
      os << "\n";
    os << label << " id = " << id << "\n";
    if (isUnknown(id))
      os << "unknown indexing\n";
    for (const IndexingMap &map : maps[id])
      os << map << "\n";
  }
  return text;
}

const Shape *getOutputShape(const HloInstruction &instruction,
                            int64_t outputId) {
  const Shape &shape = instruction.shape();
  if (shape.isTuple()) {
    if (outputId < 0 ||
        outputId >= static_cast<int64_t>(shape.tupleShapes.size()))
      return nullptr;
    const Shape &element = shape.tupleShapes[outputId];
    return element.isArray() ? &element : nullptr;
  }
  return outputId == 0 && shape.isArray() ? &shape : nullptr;
}

namespace hlo_indexing {

llvm::SmallVector<AffineExpr> dimExprs(size_t count,
                                       mlir::MLIRContext *context) {
  llvm::SmallVector<AffineExpr> exprs;
  for (size_t i = 0; i < count; ++i)
    exprs.push_back(dim(static_cast<unsigned>(i), context));
  return exprs;
}

Error unsupported(const HloInstruction &instruction, const std::string &why) {
  return Error(describe(instruction) + ": " + why);
}

std::string describe(const HloInstruction &instruction) {
  return std::string(hloOpcodeName(instruction.opcode())) + " %" +
         instruction.name();
}

Expected<std::vector<int64_t>> operandDims(const HloInstruction &instruction,
                                           int64_t operand) {
  const Shape &shape = instruction.operand(operand)->shape();
  if (!shape.isArray())
    return Error("operand " + std::to_string(operand) + " of " +
                 describe(instruction) + " is not an array");
  if (!shape.dynamicDims.empty())
    return Error("operand " + std::to_string(operand) + " of " +
                 describe(instruction) + " has a dynamic shape");
  return shape.dims;
}

IndexingMap makeMap(mlir::MLIRContext *context, llvm::ArrayRef<int64_t> dims,
                    llvm::ArrayRef<int64_t> symbols,
                    llvm::ArrayRef<AffineExpr> results) {
  return IndexingMap::fromTensorSizes(
      AffineMap::get(dims.size(), symbols.size(), results, context), dims,
      symbols);
}

IndexingMap scalarMap(mlir::MLIRContext *context,
                      llvm::ArrayRef<int64_t> dims) {
  return makeMap(context, dims, {}, {});
}

IndexingMap everyElementMap(mlir::MLIRContext *context,
                            llvm::ArrayRef<int64_t> dims) {
  llvm::SmallVector<AffineExpr> results;
  for (size_t i = 0; i < dims.size(); ++i)
    results.push_back(sym(i, context));
  return makeMap(context, {}, dims, results);
}

AffineExpr linearize(llvm::ArrayRef<AffineExpr> index,
                     llvm::ArrayRef<int64_t> dims, mlir::MLIRContext *context) {
  AffineExpr linear = cst(0, context);
  for (size_t i = 0; i < dims.size(); ++i)
    linear = linear * dims[i] + index[i];
  return linear;
}

llvm::SmallVector<AffineExpr> delinearize(AffineExpr linear,
                                          llvm::ArrayRef<int64_t> dims,
                                          mlir::MLIRContext *context) {
  llvm::SmallVector<AffineExpr> index(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] <= 1) {
      index[i] = cst(0, context);
      continue;
    }
    AffineExpr value = stride == 1 ? linear : linear.floorDiv(stride);
    // The most major dim needs no mod: the linear index is in range.
    bool outermost = true;
    for (size_t j = 0; j < i; ++j)
      outermost = outermost && dims[j] <= 1;
    index[i] = outermost ? value : value % dims[i];
    stride *= dims[i];
  }
  return index;
}

Expected<IndexingMap> bitcastMap(const Shape &from, const Shape &to,
                                 mlir::MLIRContext *context) {
  if (byteWidth(from.elementType) != byteWidth(to.elementType))
    return Error("bitcast from " + from.toString() + " to " + to.toString() +
                 " changes the element width");
  Expected<TiledLayout> fromLayout = TiledLayout::get(from);
  if (!fromLayout)
    return fromLayout.takeError();
  Expected<TiledLayout> toLayout = TiledLayout::get(to);
  if (!toLayout)
    return toLayout.takeError();
  if (fromLayout->layout().elementSizeInBits !=
      toLayout->layout().elementSizeInBits)
    return Error("bitcast from " + from.toString() + " to " + to.toString() +
                 " changes the element size in bits");
  return composeIndexingMaps(getLogicalToPhysicalMap(*fromLayout, context),
                             getPhysicalToLogicalMap(*toLayout, context));
}

namespace {

/// Past this many distinct maps for one value of a fusion, give up.
constexpr size_t kMaxMapsPerValue = 1024;

using MapSet = std::vector<IndexingMap>;

/// Adds a simplified map to a set unless it is there or reads nothing.
/// Returns false when the set grew too large.
bool addToSet(MapSet &set, IndexingMap map) {
  map.simplify();
  if (map.isKnownEmpty())
    return true;
  for (const IndexingMap &existing : set)
    if (existing == map)
      return true;
  set.push_back(std::move(map));
  return set.size() <= kMaxMapsPerValue;
}

Error tooManyMaps(const HloInstruction &fusion, const HloInstruction &value) {
  return Error("more than " + std::to_string(kMaxMapsPerValue) +
               " distinct maps reach %" + value.name() + " in " +
               describe(fusion));
}

/// The maps of one value of the fused computation back to its producers.
Status propagateBack(
    const HloInstruction &fusion, const HloInstruction &inst, int64_t outputId,
    const MapSet &maps,
    std::map<std::pair<const HloInstruction *, int64_t>, MapSet> &pending,
    std::set<const HloInstruction *> &unknownValues,
    mlir::MLIRContext *context) {
  auto add = [&](const HloInstruction *target, int64_t id,
                 IndexingMap map) -> bool {
    return addToSet(pending[{target, id}], std::move(map));
  };
  if (inst.opcode() == HloOpcode::GetTupleElement ||
      inst.opcode() == HloOpcode::Tuple) {
    bool gte = inst.opcode() == HloOpcode::GetTupleElement;
    const HloInstruction *target = inst.operand(gte ? 0 : outputId);
    for (const IndexingMap &map : maps)
      if (!add(target, gte ? inst.tupleIndex() : 0, map))
        return tooManyMaps(fusion, *target);
    return {};
  }
  // opt-barrier and the Sharding custom-call: output j is output j of the
  // operand.
  if (inst.passesValueThrough()) {
    for (const IndexingMap &map : maps)
      if (!add(inst.operand(0), outputId, map))
        return tooManyMaps(fusion, *inst.operand(0));
    return {};
  }
  Expected<HloInstructionIndexing> own =
      computeOutputToInputIndexing(inst, outputId, context);
  if (!own)
    return own.takeError();
  for (size_t k = 0; k < own->maps.size(); ++k) {
    if (own->isUnknown(k)) {
      unknownValues.insert(inst.operand(k));
      continue;
    }
    for (const IndexingMap &map : maps)
      for (const IndexingMap &operandMap : own->maps[k]) {
        Expected<IndexingMap> composed =
            composeIndexingMapsChecked(map, operandMap);
        if (!composed)
          return Error(describe(fusion) + ": at %" + inst.name() + ", " +
                       composed.error().message);
        if (!add(inst.operand(k), 0, std::move(*composed)))
          return tooManyMaps(fusion, *inst.operand(k));
      }
  }
  return {};
}

} // namespace

Expected<HloInstructionIndexing>
fusionOutputToInput(const HloInstruction &fusion, int64_t outputId,
                    mlir::MLIRContext *context) {
  const HloComputation &body = *fusion.calledComputation();
  const Shape *shape = getOutputShape(fusion, outputId);
  std::map<std::pair<const HloInstruction *, int64_t>, MapSet> pending;
  const HloInstruction *root = body.root();
  IndexingMap start = IndexingMap::identity(context, shape->dims);
  if (root->opcode() == HloOpcode::Tuple)
    addToSet(pending[{root->operand(outputId), 0}], start);
  else
    addToSet(pending[{root, outputId}], start);
  // Values some output element reads through an op without maps: every
  // value they are computed from is unknown too.
  std::set<const HloInstruction *> unknownValues;
  for (int64_t i = body.instructionCount(); i-- > 0;) {
    const HloInstruction &inst = *body.instructions()[i];
    if (inst.opcode() == HloOpcode::Parameter)
      continue;
    if (unknownValues.count(&inst))
      for (const HloInstruction *operand : inst.operands())
        unknownValues.insert(operand);
    auto first = pending.lower_bound({&inst, 0});
    for (auto it = first; it != pending.end() && it->first.first == &inst;
         ++it) {
      Status ok = propagateBack(fusion, inst, it->first.second, it->second,
                                pending, unknownValues, context);
      if (!ok)
        return ok.takeError();
    }
  }
  HloInstructionIndexing result;
  result.maps.resize(fusion.operandCount());
  for (const HloInstruction *param : body.parameters()) {
    if (!param || param->parameterNumber() >= fusion.operandCount())
      continue;
    if (unknownValues.count(param)) {
      result.markUnknown(param->parameterNumber());
      continue;
    }
    auto it = pending.find({param, 0});
    if (it != pending.end())
      result.maps[param->parameterNumber()] = it->second;
  }
  return result;
}

Expected<HloInstructionIndexing>
fusionInputToOutput(const HloInstruction &fusion, int64_t inputId,
                    mlir::MLIRContext *context) {
  const HloComputation &body = *fusion.calledComputation();
  const HloInstruction *param = nullptr;
  for (const HloInstruction *p : body.parameters())
    if (p && p->parameterNumber() == inputId)
      param = p;
  if (!param)
    return Error("the computation of " + describe(fusion) +
                 " has no parameter " + std::to_string(inputId));
  Expected<std::vector<int64_t>> dims = operandDims(fusion, inputId);
  if (!dims)
    return dims.takeError();
  // Keyed by (value, output): a variadic reduce has several outputs, which
  // get-tuple-element picks from.
  std::map<std::pair<const HloInstruction *, int64_t>, MapSet> sets;
  sets[{param, 0}].push_back(IndexingMap::identity(context, *dims));
  // Values the input reaches through an op without maps (all their
  // outputs), and every value computed from them.
  std::set<const HloInstruction *> unknownValues;
  for (const std::unique_ptr<HloInstruction> &owned : body.instructions()) {
    const HloInstruction &inst = *owned;
    for (int64_t k = 0; k < inst.operandCount(); ++k) {
      if (unknownValues.count(inst.operand(k))) {
        // A ROOT tuple passes each element on alone (checked below).
        if (&inst != body.root() || inst.opcode() != HloOpcode::Tuple)
          unknownValues.insert(&inst);
        continue;
      }
      bool gte = inst.opcode() == HloOpcode::GetTupleElement;
      auto from = sets.find({inst.operand(k), gte ? inst.tupleIndex() : 0});
      if (from == sets.end())
        continue;
      if (gte) {
        sets[{&inst, 0}] = from->second;
        continue;
      }
      Expected<HloInstructionIndexing> own =
          computeInputToOutputIndexing(inst, k, context);
      if (!own)
        return own.takeError();
      if (own->hasUnknown()) {
        unknownValues.insert(&inst);
        continue;
      }
      for (size_t j = 0; j < own->maps.size(); ++j)
        for (const IndexingMap &map : from->second)
          for (const IndexingMap &next : own->maps[j]) {
            Expected<IndexingMap> composed =
                composeIndexingMapsChecked(map, next);
            if (!composed)
              return Error(describe(fusion) + ": at %" + inst.name() + ", " +
                           composed.error().message);
            if (!addToSet(sets[{&inst, j}], std::move(*composed)))
              return tooManyMaps(fusion, inst);
          }
    }
  }
  const Shape &shape = fusion.shape();
  HloInstructionIndexing result;
  result.maps.resize(shape.isTuple() ? shape.tupleShapes.size() : 1);
  for (size_t j = 0; j < result.maps.size(); ++j) {
    const HloInstruction *root = body.root();
    // A ROOT tuple's element j is its operand j.
    const HloInstruction *value =
        root->opcode() == HloOpcode::Tuple && root->operandCount() > 0
            ? root->operand(static_cast<int64_t>(j))
            : root;
    if (unknownValues.count(value)) {
      result.markUnknown(j);
      continue;
    }
    auto it = sets.find({root, j});
    if (it != sets.end())
      result.maps[j] = it->second;
  }
  return result;
}

} // namespace hlo_indexing

namespace {

Status checkCalled(const HloInstruction &instruction) {
  HloOpcode op = instruction.opcode();
  if ((op == HloOpcode::Fusion || op == HloOpcode::Call) &&
      (instruction.calledComputations().size() != 1 ||
       !instruction.calledComputation()->root()))
    return Error(hlo_indexing::describe(instruction) +
                 " does not call exactly one computation");
  // Index arithmetic is 64-bit: refuse shapes whose element count is not.
  auto tooLarge = [](const Shape &shape) {
    if (shape.isTuple()) {
      for (const Shape &element : shape.tupleShapes)
        if (element.isArray() && !element.elementCount())
          return true;
      return false;
    }
    return shape.isArray() && !shape.elementCount();
  };
  if (tooLarge(instruction.shape()))
    return Error(hlo_indexing::describe(instruction) + ": shape " +
                 instruction.shape().toString() +
                 " is dynamic or has more than 2^63 elements");
  for (const HloInstruction *operand : instruction.operands())
    if (tooLarge(operand->shape()))
      return Error(hlo_indexing::describe(instruction) + ": operand shape " +
                   operand->shape().toString() +
                   " is dynamic or has more than 2^63 elements");
  return {};
}

/// How deep calls and fusions may nest in one query: each level recurses
/// through a fused computation, so the limit keeps the stack safe. The
/// evaluator has the same limit.
constexpr int kMaxCallNesting = 256;

/// The calls of one top-level query: how deep they nest now, and the maps of
/// each called computation already computed, so that a computation called
/// from many places is analysed once (a chain of computations that each call
/// the previous one twice is linear, not exponential). The memo is cleared
/// when the top-level query returns, so no pointer outlives its module.
struct CallQueries {
  int depth = 0;
  std::map<std::tuple<const HloComputation *, int64_t, int64_t, bool>,
           HloInstructionIndexing>
      memo;
};
thread_local CallQueries callQueries;

/// Analyses the computation called by `instruction` (a call or fusion)
/// through the memo, within the nesting limit.
template <typename Compute>
Expected<HloInstructionIndexing> analyseCall(const HloInstruction &instruction,
                                             int64_t id, bool outputToInput,
                                             Compute compute) {
  if (callQueries.depth >= kMaxCallNesting)
    return Error(hlo_indexing::describe(instruction) +
                 ": calls and fusions nest more than " +
                 std::to_string(kMaxCallNesting) + " deep");
  auto key = std::make_tuple(instruction.calledComputation(), id,
                             instruction.operandCount(), outputToInput);
  auto found = callQueries.memo.find(key);
  if (found != callQueries.memo.end())
    return found->second;
  ++callQueries.depth;
  Expected<HloInstructionIndexing> result = compute();
  if (--callQueries.depth == 0)
    callQueries.memo.clear();
  else if (result)
    callQueries.memo.emplace(key, *result);
  return result;
}

int64_t outputCount(const HloInstruction &instruction) {
  const Shape &shape = instruction.shape();
  return shape.isTuple() ? static_cast<int64_t>(shape.tupleShapes.size()) : 1;
}

} // namespace

Expected<HloInstructionIndexing>
computeOutputToInputIndexing(const HloInstruction &instruction,
                             int64_t outputId, mlir::MLIRContext *context) {
  if (!getOutputShape(instruction, outputId))
    return Error("output " + std::to_string(outputId) + " of " +
                 hlo_indexing::describe(instruction) +
                 " is not an array, expected an output id below " +
                 std::to_string(outputCount(instruction)));
  if (Status bad = checkCalled(instruction); !bad)
    return bad.takeError();
  Expected<HloInstructionIndexing> result =
      instruction.opcode() == HloOpcode::Fusion ||
              instruction.opcode() == HloOpcode::Call
          ? analyseCall(instruction, outputId, /*outputToInput=*/true,
                        [&] {
                          return hlo_indexing::fusionOutputToInput(
                              instruction, outputId, context);
                        })
          : hlo_indexing::outputToInput(instruction, outputId, context);
  if (result)
    result->simplify();
  return result;
}

Expected<HloInstructionIndexing>
computeInputToOutputIndexing(const HloInstruction &instruction, int64_t inputId,
                             mlir::MLIRContext *context) {
  if (inputId < 0 || inputId >= instruction.operandCount())
    return Error("operand " + std::to_string(inputId) + " of " +
                 hlo_indexing::describe(instruction) +
                 " does not exist, expected an operand id below " +
                 std::to_string(instruction.operandCount()));
  if (Status bad = checkCalled(instruction); !bad)
    return bad.takeError();
  Expected<HloInstructionIndexing> result =
      instruction.opcode() == HloOpcode::Fusion ||
              instruction.opcode() == HloOpcode::Call
          ? analyseCall(instruction, inputId, /*outputToInput=*/false,
                        [&] {
                          return hlo_indexing::fusionInputToOutput(
                              instruction, inputId, context);
                        })
          : hlo_indexing::inputToOutput(instruction, inputId, context);
  if (result)
    result->simplify();
  return result;
}

Expected<std::string> describeHloIndexing(const HloInstruction &instruction,
                                          std::optional<int64_t> inputId,
                                          mlir::MLIRContext *context) {
  if (inputId) {
    Expected<HloInstructionIndexing> indexing =
        computeInputToOutputIndexing(instruction, *inputId, context);
    if (!indexing)
      return indexing.takeError();
    return indexing->toString("output");
  }
  const Shape &shape = instruction.shape();
  int64_t outputs =
      shape.isTuple() ? static_cast<int64_t>(shape.tupleShapes.size()) : 1;
  std::string text;
  for (int64_t out = 0; out < outputs; ++out) {
    Expected<HloInstructionIndexing> indexing =
        computeOutputToInputIndexing(instruction, out, context);
    if (!indexing)
      return indexing.takeError();
    if (outputs > 1)
      text += (out ? "\n" : "") + std::string("output ") + std::to_string(out) +
              ":\n";
    text += indexing->toString("operand");
  }
  return text;
}

} // namespace tessel
