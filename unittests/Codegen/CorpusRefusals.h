//===- CorpusRefusals.h - Corpus modules the compiler refuses ---*- C++ -*-===//
//
// The corpus modules (test/Hlo/corpus/NAME/{module,optimized}.hlo) that the
// compiler refuses, each with a piece of the message it must give: shared
// by the CPU corpus test and the PTX test, so that a new refusal is a
// failure in both and a module that starts to compile is noticed. Those
// that compile (and assemble as PTX) but that the GPU's executable refuses
// to run are listed apart, per backend (gpuRunRefusals).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_UNITTESTS_CODEGEN_CORPUSREFUSALS_H
#define TESSEL_UNITTESTS_CODEGEN_CORPUSREFUSALS_H

#include <map>
#include <string>

namespace tessel {

/// Modules the compiler refuses, and a piece of the message it must give.
/// None today: every corpus module compiles.
inline const std::map<std::string, std::string> &knownRefusals() {
  static const std::map<std::string, std::string> refusals = {};
  return refusals;
}

/// Modules the CPU compiles and runs but the GPU's executable refuses (its
/// PTX is written all the same), and a piece of the message it must give.
/// None today: control flow runs on the GPU too, its pred or index read on
/// the host between launches.
inline const std::map<std::string, std::string> &gpuRunRefusals() {
  static const std::map<std::string, std::string> refusals = {};
  return refusals;
}

/// The entry of `refusals` for the corpus module at `path` (any prefix), or
/// nullptr.
inline const std::string *
refusalIn(const std::map<std::string, std::string> &refusals,
          const std::string &path) {
  for (const auto &[name, message] : refusals)
    if (path.size() > name.size() &&
        path.compare(path.size() - name.size(), name.size(), name) == 0 &&
        path[path.size() - name.size() - 1] == '/')
      return &message;
  return nullptr;
}

/// The refusal message of the corpus module at `path` (any prefix), or
/// nullptr.
inline const std::string *knownRefusalOf(const std::string &path) {
  return refusalIn(knownRefusals(), path);
}

/// The GPU executable's refusal of the corpus module at `path`, or nullptr.
inline const std::string *gpuRunRefusalOf(const std::string &path) {
  return refusalIn(gpuRunRefusals(), path);
}

} // namespace tessel

#endif // TESSEL_UNITTESTS_CODEGEN_CORPUSREFUSALS_H
