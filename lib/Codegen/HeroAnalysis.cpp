//===- HeroAnalysis.cpp - Which emitter writes a fusion, and why ----------===//
#include "tessel/Codegen/HeroAnalysis.h"

#include "tessel/Codegen/FusionEmitter.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace tessel {

/// XLA's kMinDimensionToTransposeTiled: below this, a tile would be mostly
/// empty and the loop emitter is as good.
static constexpr int64_t kMinTiledDim = 16;

const char *emitterKindName(EmitterKind kind) {
  switch (kind) {
  case EmitterKind::Loop:
    return "loop";
  case EmitterKind::Transpose:
    return "transpose";
  }
  return "?";
}

static std::string listString(const std::vector<int64_t> &values,
                              const char *open, const char *close) {
  std::string text = open;
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? "," : "") + std::to_string(values[i]);
  return text + close;
}

NormalizedTranspose normalizeTranspose(const HloInstruction &transpose) {
  const std::vector<int64_t> &in = transpose.operand(0)->shape().dims;
  const std::vector<int64_t> &perm = transpose.dimensions();
  // Runs of input dims that stay adjacent, in output order; size-1 dims
  // are left out (their index is always 0) and do not break a run.
  std::vector<std::vector<int64_t>> runs;
  for (int64_t d : perm) {
    if (in[d] == 1)
      continue;
    bool extends = false;
    if (!runs.empty() && d > runs.back().back()) {
      extends = true;
      for (int64_t between = runs.back().back() + 1; between < d; ++between)
        extends &= in[between] == 1;
    }
    if (extends)
      runs.back().push_back(d);
    else
      runs.push_back({d});
  }
  std::vector<size_t> byInput(runs.size());
  std::iota(byInput.begin(), byInput.end(), 0);
  std::sort(byInput.begin(), byInput.end(), [&](size_t a, size_t b) {
    return runs[a].front() < runs[b].front();
  });
  NormalizedTranspose n;
  std::vector<int64_t> rank(runs.size());
  for (size_t r = 0; r < byInput.size(); ++r) {
    rank[byInput[r]] = static_cast<int64_t>(r);
    const std::vector<int64_t> &group = runs[byInput[r]];
    int64_t size = 1;
    for (int64_t d : group)
      size *= in[d];
    n.dims.push_back(size);
    n.groups.push_back(group);
  }
  for (size_t o = 0; o < runs.size(); ++o)
    n.permutation.push_back(rank[o]);
  return n;
}

static bool hasDefaultLayout(const Shape &shape) {
  if (!shape.layout)
    return true;
  const Layout &layout = *shape.layout;
  if (!layout.tiles.empty())
    return false;
  for (size_t k = 0; k < layout.minorToMajor.size(); ++k)
    if (layout.minorToMajor[k] !=
        static_cast<int64_t>(layout.minorToMajor.size() - 1 - k))
      return false;
  return true;
}

/// Why `transpose` cannot be a tiled hero, or "" when it can.
static std::string transposeRejection(const HloInstruction &transpose) {
  if (!hasDefaultLayout(transpose.shape()) ||
      !hasDefaultLayout(transpose.operand(0)->shape()))
    return "its operand or result has a layout other than the default "
           "row-major one";
  NormalizedTranspose n = normalizeTranspose(transpose);
  std::string normalized = "normalized " + listString(n.dims, "[", "]") +
                           " by " + listString(n.permutation, "{", "}");
  if (n.dims.size() < 2 || n.toMinor() == n.minor())
    return "it does not move the minor dim (" + normalized +
           "), so the loop emitter reads and writes along it already";
  int64_t a = n.dims[n.minor()], b = n.dims[n.toMinor()];
  if (a < kMinTiledDim || b < kMinTiledDim)
    return "the dims it swaps have " + std::to_string(b) + " and " +
           std::to_string(a) + " elements (" + normalized +
           "); a 32x32 tile needs both to have at least " +
           std::to_string(kMinTiledDim);
  return "";
}

FusionAnalysis analyzeFusion(const HloComputation &computation,
                             const std::vector<int64_t> &selected) {
  FusionAnalysis analysis;
  std::vector<FusionOutput> all = getFusionOutputs(computation);
  std::vector<FusionOutput> outputs;
  if (selected.empty())
    outputs = all;
  for (int64_t i : selected)
    outputs.push_back(all[i]);

  std::vector<const HloInstruction *> candidates;
  for (const auto &instruction : computation.instructions()) {
    if (instruction->opcode() != HloOpcode::Transpose)
      continue;
    std::string why = transposeRejection(*instruction);
    if (why.empty())
      candidates.push_back(instruction.get());
    else
      analysis.rejected.push_back("%" + instruction->name() +
                                  " is not a transpose hero: " + why);
  }
  analysis.reason = "no instruction calls for another emitter: each output "
                    "element is computed where it is written";
  if (candidates.empty())
    return analysis;
  auto rejectAll = [&](const std::string &why) {
    for (const HloInstruction *candidate : candidates)
      analysis.rejected.push_back("%" + candidate->name() +
                                  " is not a transpose hero: " + why);
    return analysis;
  };
  if (candidates.size() > 1)
    return rejectAll("the fusion has " + std::to_string(candidates.size()) +
                     " transposes that move the minor dim; the transpose "
                     "emitter takes one");
  if (outputs.size() != 1)
    return rejectAll("the kernel writes " + std::to_string(outputs.size()) +
                     " outputs; the transpose emitter writes one");
  const HloInstruction *hero = candidates.front();
  const FusionOutput &output = outputs.front();
  if (output.element >= 0)
    return rejectAll("the output is an element of a tuple-shaped value");

  // The epilogue: from the hero to the output through elementwise ops of
  // the hero's dims, read by nothing else.
  std::set<const HloInstruction *> epilogue = {hero};
  std::vector<const HloInstruction *> work = {hero};
  while (!work.empty()) {
    const HloInstruction *x = work.back();
    work.pop_back();
    if (x == output.instruction)
      continue;
    if (x->users().empty() || x == computation.root())
      return rejectAll("%" + x->name() +
                       " (read from the hero) is an output other than the "
                       "kernel's");
    for (const HloInstruction *user : x->users()) {
      if (user->opcode() == HloOpcode::Tuple && user == computation.root())
        return rejectAll("%" + x->name() +
                         " (read from the hero) is an output other than the "
                         "kernel's");
      if (!isElementwise(user->opcode()) ||
          user->shape().dims != hero->shape().dims)
        return rejectAll("%" + user->name() + " reads %" + x->name() +
                         " but is not elementwise on the hero's dims, so the "
                         "output does not read the hero at its own index");
      if (epilogue.insert(user).second)
        work.push_back(user);
    }
  }
  if (!epilogue.count(output.instruction))
    return rejectAll("the output %" + output.instruction->name() +
                     " does not read it");

  NormalizedTranspose n = normalizeTranspose(*hero);
  analysis.kind = EmitterKind::Transpose;
  analysis.hero = hero;
  analysis.transpose = n;
  analysis.reason =
      "%" + hero->name() + " transposes " +
      hero->operand(0)->shape().toStringWithoutLayout() + " to " +
      hero->shape().toStringWithoutLayout() + " (normalized " +
      listString(n.dims, "[", "]") + " by " +
      listString(n.permutation, "{", "}") + "), moving the minor dim: " +
      "tiles of 32x32 go through shared memory so that reads and writes " +
      "both run along a minor dim";
  return analysis;
}

} // namespace tessel
