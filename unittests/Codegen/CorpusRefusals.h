//===- CorpusRefusals.h - Corpus modules the compiler refuses ---*- C++ -*-===//
//
// The corpus modules (test/Hlo/corpus/NAME/{module,optimized}.hlo) that the
// compiler refuses, each with a piece of the message it must give: shared
// by the CPU corpus test and the PTX test, so that a new refusal is a
// failure in both and a module that starts to compile is noticed.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_UNITTESTS_CODEGEN_CORPUSREFUSALS_H
#define TESSEL_UNITTESTS_CODEGEN_CORPUSREFUSALS_H

#include <map>
#include <string>

namespace tessel {

/// Modules the compiler refuses, and a piece of the message it must give.
inline const std::map<std::string, std::string> &knownRefusals() {
  static const std::map<std::string, std::string> refusals = {
      // The ops of issue 14 that the evaluator runs and the compiler not.
      {"complex_c64/module.hlo", "element type c64 is not supported"},
      {"complex_c64/optimized.hlo", "element type c64 is not supported"},
      {"conditionals_f32/module.hlo",
       "%cond.3 (conditional): this op is not supported"},
      {"conditionals_f32/optimized.hlo",
       "%cond.3.clone (conditional): operand 1 is a tuple"},
      {"random_u32/module.hlo", "(while): tuple-shaped values inside a fusion"},
      {"random_u32/optimized.hlo", "%call (call): operand 0 is a tuple"},
      {"rng_bit_generator_u32/module.hlo",
       "(rng-bit-generator): tuple-shaped values inside a fusion"},
      {"rng_bit_generator_u32/optimized.hlo",
       "%bitcast_concatenate_fusion (fusion): this op is not supported"},
      {"sort_f32/module.hlo", "(sort): this op is not supported"},
      {"sort_f32/optimized.hlo", "(sort): this op is not supported"},
      {"while_loops_f32/module.hlo", "%while.15 (while): operand 0 is a tuple"},
      {"while_loops_f32/optimized.hlo", "%call.2 (call): operand 0 is a tuple"},
  };
  return refusals;
}

/// The refusal message of the corpus module at `path` (any prefix), or
/// nullptr.
inline const std::string *knownRefusalOf(const std::string &path) {
  for (const auto &[name, message] : knownRefusals())
    if (path.size() > name.size() &&
        path.compare(path.size() - name.size(), name.size(), name) == 0 &&
        path[path.size() - name.size() - 1] == '/')
      return &message;
  return nullptr;
}

} // namespace tessel

#endif // TESSEL_UNITTESTS_CODEGEN_CORPUSREFUSALS_H
