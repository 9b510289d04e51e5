//===- HloInfluence.cpp - Which inputs of an HLO op reach which outputs ---===//
#include "HloInfluence.h"

#include <functional>
#include <sstream>

namespace tessel {
namespace testing {
namespace {

/// Row-major linear index, or -1 when outside the dims.
int64_t linearizeIndex(llvm::ArrayRef<int64_t> index,
                       const std::vector<int64_t> &dims) {
  if (index.size() != dims.size())
    return -1;
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (index[i] < 0 || index[i] >= dims[i])
      return -1;
    linear = linear * dims[i] + index[i];
  }
  return linear;
}

/// The perturbed copies of element i.
std::vector<Literal> perturbations(const Literal &base, int64_t i) {
  std::vector<Literal> copies;
  PrimitiveType type = base.elementType();
  if (type == PrimitiveType::Pred) {
    copies.push_back(base);
    copies.back().setBits(i, base.getBits(i) ^ 1);
  } else if (isFloat(type)) {
    for (double delta : {5.0, -5.0}) {
      copies.push_back(base);
      copies.back().setDouble(i, base.getDouble(i) + delta);
    }
  } else {
    int64_t x = base.getInt(i);
    for (int64_t value : {~x, x ^ 1, x + 1000}) {
      copies.push_back(base);
      copies.back().setInt(i, value);
    }
  }
  return copies;
}

bool sameElement(const Literal &a, const Literal &b, int64_t i) {
  return a.getBits(i) == b.getBits(i);
}

} // namespace

int64_t encodeOutput(size_t outputId, int64_t element) {
  return (static_cast<int64_t>(outputId) << 32) + element;
}

std::vector<const Literal *> outputArrays(const Literal &result) {
  std::vector<const Literal *> arrays;
  if (!result.isTuple())
    arrays.push_back(&result);
  else
    for (const Literal &element : result.tupleElements())
      arrays.push_back(&element);
  return arrays;
}

Literal makeBaseArgument(const Shape &shape, int64_t seed) {
  Literal literal(Shape(shape.elementType, shape.dims, shape.layout));
  for (int64_t i = 0; i < literal.elementCount(); ++i) {
    int64_t k = i + 13 * seed;
    if (shape.elementType == PrimitiveType::Pred)
      literal.setBits(i, k % 2);
    else if (isFloat(shape.elementType))
      literal.setDouble(i, -0.95 + double((k * 37) % 97) / 51.0);
    else
      literal.setInt(i, 1 + (k * 7) % 60);
  }
  return literal;
}

Expected<std::map<int64_t, Influence>>
computeInfluence(const HloModule &module,
                 const std::vector<Literal> &arguments) {
  Expected<Literal> base = evaluateHloModule(module, arguments);
  if (!base)
    return base.takeError();
  const HloInstruction *root = module.entry()->root();
  std::map<int64_t, Influence> result;
  for (int64_t k = 0; k < root->operandCount(); ++k) {
    const HloInstruction *operand = root->operand(k);
    if (operand->opcode() != HloOpcode::Parameter)
      continue;
    int64_t p = operand->parameterNumber();
    Influence &pairs = result[k];
    for (int64_t i = 0; i < arguments[p].elementCount(); ++i) {
      for (Literal &changed : perturbations(arguments[p], i)) {
        std::vector<Literal> args = arguments;
        args[p] = std::move(changed);
        Expected<Literal> out = evaluateHloModule(module, args);
        if (!out)
          return out.takeError();
        for (size_t j = 0; j < outputArrays(*out).size(); ++j) {
          const Literal &now = *outputArrays(*out)[j];
          const Literal &was = *outputArrays(*base)[j];
          for (int64_t o = 0; o < now.elementCount(); ++o)
            if (!sameElement(now, was, o))
              pairs.insert({i, encodeOutput(j, o)});
        }
      }
    }
  }
  return result;
}

Expected<Influence> pairsOfMaps(const std::vector<IndexingMap> &maps,
                                const std::vector<int64_t> &inDims,
                                const std::vector<int64_t> &outDims,
                                bool inputToOutput,
                                const std::vector<int64_t> &rtValues) {
  Influence pairs;
  const std::vector<int64_t> &domainDims = inputToOutput ? inDims : outDims;
  const std::vector<int64_t> &resultDims = inputToOutput ? outDims : inDims;
  for (const IndexingMap &map : maps) {
    Expected<std::vector<DomainPoint>> points =
        enumerateDomain(map, int64_t(1) << 22);
    if (!points)
      return points.takeError();
    for (const DomainPoint &point : *points) {
      bool skip = false;
      for (size_t r = 0; r < rtValues.size() && r < map.getNumRTVars(); ++r)
        skip = skip || point.symbols[map.getNumRangeVars() + r] != rtValues[r];
      if (skip)
        continue;
      int64_t from = linearizeIndex(point.dims, domainDims);
      int64_t to = linearizeIndex(point.results, resultDims);
      if (from < 0 || to < 0) {
        std::ostringstream os;
        os << map << " names an element outside the shapes at dims";
        for (int64_t d : point.dims)
          os << " " << d;
        return Error(os.str());
      }
      pairs.insert(inputToOutput ? std::make_pair(from, to)
                                 : std::make_pair(to, from));
    }
  }
  return pairs;
}

std::string compareInfluence(const Influence &fromMaps,
                             const Influence &measured, bool subset) {
  std::ostringstream os;
  int shown = 0;
  for (const auto &pair : measured)
    if (!fromMaps.count(pair) && shown++ < 5)
      os << "input " << pair.first << " influences output " << pair.second
         << " but no map names it; ";
  if (!subset)
    for (const auto &pair : fromMaps)
      if (!measured.count(pair) && shown++ < 5)
        os << "a map names input " << pair.first << " for output "
           << pair.second << " but it has no influence; ";
  return os.str();
}

namespace {

/// The pairs of all outputs' maps of operand k, outputs encoded. Sets
/// `unknown` when some of them are unknown indexing (which claims every
/// pair, so it holds whatever is measured).
Expected<Influence> namedPairs(const HloInstruction &root, int64_t k,
                               bool inputToOutput, const CheckOptions &options,
                               mlir::MLIRContext *context, bool &unknown) {
  const Shape &shape = root.shape();
  size_t outputs = shape.isTuple() ? shape.tupleShapes.size() : 1;
  const std::vector<int64_t> &in = root.operand(k)->shape().dims;
  Expected<HloInstructionIndexing> forward = HloInstructionIndexing();
  if (inputToOutput)
    forward = computeInputToOutputIndexing(root, k, context);
  if (!forward)
    return forward.takeError();
  Influence all;
  for (size_t j = 0; j < outputs; ++j) {
    const std::vector<int64_t> &out = getOutputShape(root, j)->dims;
    Expected<HloInstructionIndexing> backward = HloInstructionIndexing();
    if (!inputToOutput)
      backward = computeOutputToInputIndexing(root, j, context);
    if (!backward)
      return backward.takeError();
    if (inputToOutput ? forward->isUnknown(j)
                      : backward->isUnknown(static_cast<size_t>(k))) {
      unknown = true;
      continue;
    }
    const std::vector<IndexingMap> &set =
        inputToOutput ? forward->maps[j] : backward->maps[k];
    Expected<Influence> named =
        pairsOfMaps(set, in, out, inputToOutput, options.rtValues);
    if (!named)
      return named.takeError();
    for (const auto &[from, to] : *named)
      all.insert({from, encodeOutput(j, to)});
  }
  return all;
}

} // namespace

std::string checkRootMaps(const HloModule &module, const CheckOptions &options,
                          mlir::MLIRContext *context) {
  std::vector<Literal> args;
  for (const HloInstruction *param : module.entry()->parameters()) {
    int64_t p = param->parameterNumber();
    auto given = options.arguments.find(p);
    args.push_back(given != options.arguments.end()
                       ? given->second
                       : makeBaseArgument(param->shape(), p));
  }
  Expected<std::map<int64_t, Influence>> measured =
      computeInfluence(module, args);
  if (!measured)
    return "evaluator: " + measured.error().message;
  const HloInstruction &root = *module.entry()->root();
  std::string problems;
  if (measured->empty())
    problems += "no ROOT operand is a parameter; ";
  for (const auto &[k, influence] : *measured) {
    for (bool forward : {false, true}) {
      if (forward && !options.inputToOutput)
        continue;
      bool unknown = false;
      Expected<Influence> named =
          namedPairs(root, k, forward, options, context, unknown);
      const char *direction = forward ? "input-to-output" : "output-to-input";
      if (!named)
        return std::string(direction) + ", operand " + std::to_string(k) +
               ": " + named.error().message;
      if (unknown)
        continue;
      // A scalar operand (pad value, init value, start index) is read
      // everywhere by its maps but may matter only in places.
      bool scalar = root.operand(k)->shape().dims.empty() &&
                    !getOutputShape(root, 0)->dims.empty();
      bool subset = scalar || options.subsetAll || options.subset.count(k) != 0;
      std::string diff = compareInfluence(*named, influence, subset);
      if (!diff.empty())
        problems += std::string(direction) + ", operand " + std::to_string(k) +
                    ": " + diff + "\n";
    }
  }
  return problems;
}

} // namespace testing
} // namespace tessel
