//===- HloParserFuzzer.cpp - libFuzzer target for the HLO parser ----------===//
//
// Any input must parse or fail with a message. A parsed module must print
// to text that parses and prints the same; a module that verifies and is
// small must evaluate on zero inputs to a value or an error, never crash,
// and never to an error about shapes: the evaluator's own shape checks
// (an op that gives another shape than declared, dimension numbers that do
// not fit) must be unreachable once the verifier has passed the module.
//
//===----------------------------------------------------------------------===//
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"

#include <cstdlib>
#include <string>

using namespace tessel;

namespace {

/// Elements of a shape (tuples summed), or a large number on overflow.
int64_t elements(const Shape &shape) {
  if (shape.isTuple()) {
    int64_t total = 0;
    for (const Shape &element : shape.tupleShapes)
      total += std::min<int64_t>(elements(element), 1 << 30);
    return total;
  }
  return shape.elementCount().value_or(int64_t(1) << 40);
}

/// Whether evaluating the module is cheap enough for a fuzz iteration.
bool smallEnough(const HloModule &module) {
  for (const auto &computation : module.computations())
    for (const auto &inst : computation->instructions()) {
      if (elements(inst->shape()) > 4096)
        return false;
      int64_t window = 1;
      for (const WindowDim &dim : inst->attributes().window) {
        window *= std::max<int64_t>(dim.size, 1);
        if (window > 4096)
          return false;
      }
    }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  if (!module) {
    if (module.error().message.empty())
      abort();
    return 0;
  }
  std::string printed = (*module)->toString();
  Expected<std::unique_ptr<HloModule>> again = parseHloModule(printed);
  if (!again || (*again)->toString() != printed)
    abort();
  if (!verifyHloModule(**module) || !smallEnough(**module))
    return 0;
  std::vector<Literal> arguments;
  for (HloInstruction *parameter : (*module)->entry()->parameters()) {
    Expected<Literal> zero = Literal::create(parameter->shape(), 4096);
    if (!zero)
      return 0;
    arguments.push_back(std::move(*zero));
  }
  EvaluatorOptions options;
  options.maxElements = 1 << 16;
  options.maxSteps = 10000; // while loops: a runaway one ends the iteration

  Expected<Literal> result = evaluateHloModule(**module, arguments, options);
  if (!result && result.error().message.empty())
    abort();
  if (!result && (result.error().message.find("its declared shape is") !=
                      std::string::npos ||
                  result.error().message.find("does not match the inferred") !=
                      std::string::npos))
    abort(); // the verifier let a shape through that the evaluator refuses
  return 0;
}
