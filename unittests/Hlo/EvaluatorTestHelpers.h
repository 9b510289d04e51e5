//===- EvaluatorTestHelpers.h - Run HLO text in evaluator tests -*- C++ -*-===//
#ifndef TESSEL_UNITTESTS_HLO_EVALUATORTESTHELPERS_H
#define TESSEL_UNITTESTS_HLO_EVALUATORTESTHELPERS_H

#include "../ErrorText.h"
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"

#include <string>
#include <vector>

namespace tessel::test {

/// Parses and verifies `text`, evaluates its ENTRY on `arguments`; the
/// result, or an error that says which stage failed.
inline Expected<Literal> evaluateText(const std::string &text,
                                      const std::vector<Literal> &arguments,
                                      const EvaluatorOptions &options = {}) {
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  if (!module)
    return Error("parse: " + lineColumnText(module.error()));
  if (Status problem = verifyHloModule(**module); !problem)
    return Error("verify: " + lineColumnText(problem.error()));
  return evaluateHloModule(**module, arguments, options);
}

/// Like evaluateText, with arguments given as literal texts of the entry's
/// parameter shapes; the printed result or "error: ...".
inline std::string evaluateToString(const std::string &text,
                                    const std::vector<std::string> &arguments,
                                    const EvaluatorOptions &options = {}) {
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(text);
  if (!module)
    return "parse: " + lineColumnText(module.error());
  std::vector<HloInstruction *> params = (*module)->entry()->parameters();
  std::vector<Literal> values;
  for (size_t i = 0; i < arguments.size() && i < params.size(); ++i) {
    Shape shape = params[i]->shape();
    shape.layout.reset();
    Expected<Literal> literal = parseLiteral(arguments[i], shape);
    if (!literal)
      return "argument: " + columnText(literal.error());
    values.push_back(std::move(*literal));
  }
  Expected<Literal> result = evaluateText(text, values, options);
  return result ? result->toString()
                : "error: " + lineColumnText(result.error());
}

} // namespace tessel::test

#endif // TESSEL_UNITTESTS_HLO_EVALUATORTESTHELPERS_H
