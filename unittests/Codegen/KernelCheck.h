//===- KernelCheck.h - Compiled kernels against the evaluator ---*- C++ -*-===//
//
// The test of every emitter: compile a module, run it on the CPU, evaluate it
// with the reference evaluator on the same arguments, and compare output by
// output within the compiler's bound (exact unless the module uses
// approximated functions).
//
// TESSEL_TEST_BACKEND=nvptx sends every check made with the GPU's launch
// (Target::Gpu) to a real GPU instead: the kernels are compiled to PTX, loaded
// by the CUDA driver and run on the device (docs/codegen.md, "On the GPU").
// Without the variable those checks run the GPU's launch on the CPU; with it
// and no usable GPU they fail with the driver's message.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_UNITTESTS_CODEGEN_KERNELCHECK_H
#define TESSEL_UNITTESTS_CODEGEN_KERNELCHECK_H

#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloParser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include <string>
#include <vector>

namespace tessel {

/// The module of `text`, or null after a test failure that shows the
/// parser's message and the text.
inline std::unique_ptr<HloModule> parseTestModule(const std::string &text) {
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  EXPECT_TRUE(module) << module.error().message << "\n" << text;
  return module ? std::move(*module) : nullptr;
}

/// HLO shape text: "f32[3,5]", with `layout` ("{0,1}") appended.
inline std::string shapeText(const std::string &type,
                             const std::vector<int64_t> &dims,
                             const std::string &layout = "") {
  std::string text = type + "[";
  for (size_t d = 0; d < dims.size(); ++d)
    text += (d ? "," : "") + std::to_string(dims[d]);
  return text + "]" + layout;
}

/// "a,b,...".
inline std::string joinText(const std::vector<int64_t> &values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? "," : "") + std::to_string(values[i]);
  return text;
}

/// "{a,b,...}", an HLO attribute's list.
inline std::string listText(const std::vector<int64_t> &values) {
  return "{" + joinText(values) + "}";
}

struct KernelCheckResult {
  /// Empty when the module compiled, ran and matched; otherwise what went
  /// wrong, for the test's message.
  std::string failure;
  /// The compiler refused the module (failure holds its message).
  bool refused = false;
  /// The outputs that differ from the evaluator's.
  std::vector<size_t> failingOutputs;
};

/// The arrays of a result: its elements for a tuple, itself otherwise.
inline std::vector<const Literal *> outputsOf(const Literal &result) {
  std::vector<const Literal *> outputs;
  if (result.isTuple())
    for (const Literal &element : result.tupleElements())
      outputs.push_back(&element);
  else
    outputs.push_back(&result);
  return outputs;
}

/// The options a check compiles with: `options`, sent to the GPU when
/// TESSEL_TEST_BACKEND=nvptx and they ask for the GPU's launch.
inline CompileOptions testBackendOptions(const CompileOptions &options) {
  CompileOptions effective = options;
  const char *backend = std::getenv("TESSEL_TEST_BACKEND");
  if (!backend || !*backend || std::strcmp(backend, "cpu") == 0)
    return effective;
  if (std::strcmp(backend, "nvptx") != 0) {
    ADD_FAILURE() << "TESSEL_TEST_BACKEND=" << backend
                  << ": expected cpu or nvptx";
    return effective;
  }
  if (options.target == Target::Gpu)
    effective.backend = Backend::Nvptx;
  return effective;
}

/// A module reducing a `type`[dims] parameter over dim `reduced` with the
/// scalar `op` (maximum, minimum, add, ...) from a scalar parameter.
inline std::string reduceModuleText(const std::string &type,
                                    const std::vector<int64_t> &dims,
                                    int64_t reduced, const std::string &op) {
  std::vector<int64_t> kept;
  for (size_t d = 0; d < dims.size(); ++d)
    if (static_cast<int64_t>(d) != reduced)
      kept.push_back(dims[d]);
  return "HloModule m\n%red {\n  %a = " + type +
         "[] parameter(0)\n  %b = " + type +
         "[] parameter(1)\n  ROOT %s = " + type + "[] " + op +
         "(%a, %b)\n}\nENTRY e {\n  %p = " + shapeText(type, dims) +
         " parameter(0)\n  %i = " + type +
         "[] parameter(1)\n  ROOT %r = " + shapeText(type, kept) +
         " reduce(%p, %i), dimensions={" + std::to_string(reduced) +
         "}, to_apply=%red\n}\n";
}

/// A NaN's bits in `type` (f32, bf16, f16): quiet or signaling,
/// `negative` or not, with `payload` (not zero) in the low mantissa bits.
inline uint64_t nanPattern(PrimitiveType type, bool quiet, bool negative,
                           uint64_t payload) {
  uint64_t infinity = 0x7f800000u, quietBit = 0x00400000u, sign = 0x80000000u;
  if (type == PrimitiveType::BF16)
    infinity = 0x7f80, quietBit = 0x0040, sign = 0x8000;
  if (type == PrimitiveType::F16)
    infinity = 0x7c00, quietBit = 0x0200, sign = 0x8000;
  return infinity | (quiet ? quietBit : 0) | payload | (negative ? sign : 0);
}

/// A scalar of `type` holding `value`; a NaN value as a positive quiet NaN
/// with payload 1.
inline Literal floatScalar(PrimitiveType type, float value) {
  Literal scalar(Shape(type, {}));
  if (value != value)
    scalar.setBits(0, nanPattern(type, true, false, 1));
  else
    scalar.setFloat(0, value);
  return scalar;
}

/// The first element (flat index) where `got` and `want` have different
/// bits, a NaN in both counting as the same (as compareLiterals: LLVM does
/// not say which of two NaNs a maximum returns, and the evaluator's f16
/// NaNs lose their payload); -1 where none does.
inline int64_t firstDifferentBits(const Literal &got, const Literal &want) {
  for (int64_t i = 0; i < want.elementCount(); ++i) {
    float g = got.getFloat(i), w = want.getFloat(i);
    if (g != g && w != w)
      continue;
    if (got.getBits(i) != want.getBits(i))
      return i;
  }
  return -1;
}

inline KernelCheckResult checkKernels(const HloModule &module,
                                      const std::vector<Literal> &arguments,
                                      const CompileOptions &options,
                                      int threads = 1) {
  KernelCheckResult check;
  Expected<std::shared_ptr<Executable>> exe =
      Executable::compile(module, testBackendOptions(options));
  if (!exe) {
    check.refused = true;
    check.failure = exe.error().message;
    return check;
  }
  RunOptions run;
  run.threads = threads;
  Expected<Literal> got = (*exe)->run(arguments, run);
  if (!got) {
    check.failure = "run failed: " + got.error().message;
    return check;
  }
  // Sums in the kernels' order (reducesInPartials): bit for bit.
  EvaluatorOptions evaluatorOptions;
  evaluatorOptions.compilerReductionOrder = true;
  Expected<Literal> want =
      evaluateHloModule(module, arguments, evaluatorOptions);
  if (!want) {
    check.failure = "the evaluator failed: " + want.error().message;
    return check;
  }
  std::vector<const Literal *> gotArrays = outputsOf(*got);
  std::vector<const Literal *> wantArrays = outputsOf(*want);
  if (gotArrays.size() != wantArrays.size()) {
    check.failure = std::to_string(gotArrays.size()) + " outputs, expected " +
                    std::to_string(wantArrays.size());
    return check;
  }
  bool approximate =
      usesApproximatedFunctions(module) || options.excessPrecision;
  for (size_t i = 0; i < wantArrays.size(); ++i) {
    const Literal &g = *gotArrays[i], &w = *wantArrays[i];
    if (g.elementType() != w.elementType() || g.dims() != w.dims()) {
      check.failure += "output " + std::to_string(i) + " is " +
                       g.shape().toStringWithoutLayout() + ", expected " +
                       w.shape().toStringWithoutLayout() + "\n";
      continue;
    }
    LiteralComparison c = compareLiterals(
        g, w, kernelComparisonBound(w.elementType(), approximate));
    if (c.failing)
      check.failingOutputs.push_back(i);
    if (c.failing)
      check.failure += "output " + std::to_string(i) + " " +
                       w.shape().toStringWithoutLayout() + ": " +
                       describeComparison(c, g, w) + "\n";
  }
  return check;
}

/// Reproducible random arguments, special values included, for every
/// parameter of the module's ENTRY (seed + parameter number each).
inline std::vector<Literal> randomArguments(const HloModule &module,
                                            uint64_t seed) {
  std::vector<Literal> arguments;
  for (HloInstruction *param : module.entry()->parameters())
    arguments.push_back(randomLiteral(param->shape(),
                                      seed + param->parameterNumber(),
                                      /*specials=*/true));
  return arguments;
}

/// checkKernels with the CPU's launch and with the GPU's (threads as a loop
/// on the CPU), two worker threads: "" when both match the evaluator.
inline std::string checkBothLaunches(const HloModule &module,
                                     const std::vector<Literal> &arguments) {
  std::string failures;
  for (Target target : {Target::Cpu, Target::Gpu}) {
    CompileOptions options;
    options.target = target;
    KernelCheckResult check = checkKernels(module, arguments, options, 2);
    if (!check.failure.empty())
      failures += (target == Target::Cpu ? "CPU launch: " : "GPU launch: ") +
                  check.failure;
  }
  return failures;
}

/// Sets the environment variable `name` to `value` for its lifetime, then
/// puts back what was there (or unsets it): the TESSEL_* switches that
/// tests turn on around one compile.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    const char *saved = std::getenv(name);
    had = saved != nullptr;
    if (had)
      previous = saved;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name, previous.c_str(), 1);
    else
      unsetenv(name);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name;
  bool had = false;
  std::string previous;
};

/// How many times `what` occurs in `text` (overlaps counted).
inline int countOccurrences(const std::string &text, const std::string &what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

} // namespace tessel

#endif // TESSEL_UNITTESTS_CODEGEN_KERNELCHECK_H
