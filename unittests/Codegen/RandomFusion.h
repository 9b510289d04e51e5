//===- RandomFusion.h - Random HLO fusions for differential tests -*- C++ -*-=//
//
// Grows random loop fusions as HLO text: a DAG over a pool of values that
// starts with parameters and gains one instruction per step, of every kind
// the loop emitter handles: elementwise unary and binary ops of every type
// (with compare, select, clamp), converts and bitcast-converts, broadcast,
// reshape, transpose, slice, pad, reverse, concatenate, iota, constants,
// dynamic-slice and dynamic-update-slice, reduces over any dims; the
// outputs are sometimes slices of one value (input slices). A module
// holds several such
// fusions, each called from ENTRY, whose ROOT is the tuple of all their
// outputs:
//
//   RandomFusionGenerator generator(/*seed=*/1);
//   RandomModule m = generator.module(/*fusions=*/16);
//   m.text        -> "HloModule random\n\nfused_0 {\n  p0 = bf16[3,7] ..."
//   m.parameters  -> the ENTRY's parameter shapes, for random arguments
//
// Every op is exact (no transcendental function) unless the options allow
// approximated functions; those are only placed last, at a root, so that
// no later op amplifies their few ulps.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_UNITTESTS_CODEGEN_RANDOMFUSION_H
#define TESSEL_UNITTESTS_CODEGEN_RANDOMFUSION_H

#include "tessel/Layout/Shape.h"

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace tessel {

struct RandomFusionOptions {
  /// Instructions grown per fusion (besides parameters): 1..maxSteps.
  int maxSteps = 10;
  /// Elements of the largest value, most of the time; sometimes a fusion
  /// is 8x larger, so that long vectorized loops and their remainders run.
  int64_t maxElements = 2048;
  /// Allow exp, log, tanh, ... at the roots.
  bool approximateFunctions = false;
  /// Grow reduces too (over any set of dims, with add, multiply, maximum,
  /// minimum, or and/or for pred), which later ops may broadcast again.
  bool reductions = true;
};

struct RandomModule {
  std::string text;
  std::vector<Shape> parameters;
  /// The text of each fusion computation, to print the one that fails.
  std::vector<std::string> fusions;
  /// The fusion (index into `fusions`) of each output of the module.
  std::vector<size_t> fusionOfOutput;
};

class RandomFusionGenerator {
public:
  explicit RandomFusionGenerator(uint64_t seed,
                                 RandomFusionOptions options = {})
      : rng(seed), options(options) {}

  /// A module with `fusions` random fusions.
  RandomModule module(int fusions);

private:
  struct Value {
    std::string name;
    PrimitiveType type;
    std::vector<int64_t> dims;
  };
  struct Fusion {
    std::string text;
    std::vector<Value> parameters;
    std::vector<Value> roots;
  };

  Fusion fusion(const std::string &name);
  /// Adds one instruction to the pool; false when the chosen kind did not
  /// apply (nothing is added then).
  bool grow();
  bool growUnary(const Value &x);
  bool growBinary(const Value &x);
  bool growCompareOrSelect(const Value &x);
  bool growConvert(const Value &x);
  /// x with every NaN replaced by one NaN (floats), as a new value's name.
  std::string canonicalNaNs(const Value &x);
  bool growBroadcast(const Value &x);
  bool growReshape(const Value &x);
  bool growTranspose(const Value &x);
  bool growSlice(const Value &x);
  bool growPad(const Value &x);
  bool growReverse(const Value &x);
  bool growConcatenate(const Value &x);
  bool growDynamicSlice(const Value &x);
  bool growReduce(const Value &x);
  bool growIota();
  bool growApproximate(const Value &x);

  /// A value of this type and dims: one of the pool, a converted one, a
  /// broadcast constant or a new parameter.
  Value operandLike(PrimitiveType type, const std::vector<int64_t> &dims);
  Value scalarConstant(PrimitiveType type);
  Value newParameter(PrimitiveType type, std::vector<int64_t> dims);
  const Value &add(PrimitiveType type, std::vector<int64_t> dims,
                   const std::string &rhs);
  const Value &pick();
  std::vector<int64_t> randomDims();
  PrimitiveType randomType();
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chance(int percent) { return uniform(0, 99) < percent; }

  std::mt19937_64 rng;
  RandomFusionOptions options;
  int64_t elementBudget = 0;
  std::vector<Value> pool;
  std::vector<Value> params;
  std::set<std::string> used;
  /// The reducer computations the module's reduces call.
  std::set<std::string> reducers;
  std::string body;
  int counter = 0;
};

} // namespace tessel

#endif // TESSEL_UNITTESTS_CODEGEN_RANDOMFUSION_H
