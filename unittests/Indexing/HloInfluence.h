//===- HloInfluence.h - Which inputs of an HLO op reach which outputs -----===//
//
// The brute-force reference for HloIndexing: evaluate the ENTRY of a module,
// then perturb every element of every parameter that feeds the ROOT and
// record which output elements change. An indexing map is right when the
// pairs (input element, output element) it enumerates are exactly those.
//
// Perturbations: floats get +5 and -5 (enough to move a max, flip a sign,
// leave the flat part of tanh), integers ~x, x ^ 1 and x + 1000, pred !x.
// An output changes when any perturbation changes its bits. Ops where a
// read element may leave the output unchanged (a compare for equality,
// max of equal values) are tested with inputs where it cannot.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_UNITTESTS_INDEXING_HLOINFLUENCE_H
#define TESSEL_UNITTESTS_INDEXING_HLOINFLUENCE_H

#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloModule.h"
#include "tessel/Indexing/BruteForce.h"
#include "tessel/Indexing/HloIndexing.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tessel {
namespace testing {

/// (input element, output element), both row-major linear indices (outputs
/// of a tuple result encoded by encodeOutput).
using Influence = std::set<std::pair<int64_t, int64_t>>;

/// An output element of output `outputId` (a tuple element) as one number:
/// outputId * 2^32 + element.
int64_t encodeOutput(size_t outputId, int64_t element);
/// The arrays of a result: itself, or its tuple elements.
std::vector<const Literal *> outputArrays(const Literal &result);

/// Distinct, nonzero base values: floats in [-1, 1], integers in [1, 60],
/// pred alternating.
Literal makeBaseArgument(const Shape &shape, int64_t seed);

/// Per ROOT operand that is a parameter of the entry: which output elements
/// each of its elements influences. `arguments` are the base values.
Expected<std::map<int64_t, Influence>>
computeInfluence(const HloModule &module,
                 const std::vector<Literal> &arguments);

/// The pairs a set of maps names. Output-to-input maps go from `outDims`
/// to `inDims`; with `inputToOutput` the maps go the other way (dims are
/// input indices). Runtime variables, when `rtValues` is not empty, are
/// fixed to those values. Fails when a map names an element outside the
/// shapes.
Expected<Influence> pairsOfMaps(const std::vector<IndexingMap> &maps,
                                const std::vector<int64_t> &inDims,
                                const std::vector<int64_t> &outDims,
                                bool inputToOutput,
                                const std::vector<int64_t> &rtValues);

/// "" when `expected` equals `actual` (or, with `subset`, contains it),
/// else a few of the differing pairs.
std::string compareInfluence(const Influence &fromMaps,
                             const Influence &measured, bool subset);

struct CheckOptions {
  /// ROOT operands whose maps may name more than is read (besides scalar
  /// operands, which always may).
  std::set<int64_t> subset;
  /// Every operand may be read less than its maps say (runtime variables
  /// whose values are not fixed, ops that can ignore a read value).
  bool subsetAll = false;
  /// Runtime variables fixed to these values (the clamped start indices).
  std::vector<int64_t> rtValues;
  /// Also check the input-to-output maps.
  bool inputToOutput = true;
  /// Base values for some parameters (others from makeBaseArgument).
  std::map<int64_t, Literal> arguments;
};

/// "" when the maps of the entry's ROOT name exactly the elements the
/// evaluator reads (both ways, every output of a tuple result), else what
/// differs. Only ROOT operands that are parameters are checked.
std::string checkRootMaps(const HloModule &module, const CheckOptions &options,
                          mlir::MLIRContext *context);

} // namespace testing
} // namespace tessel

#endif // TESSEL_UNITTESTS_INDEXING_HLOINFLUENCE_H
