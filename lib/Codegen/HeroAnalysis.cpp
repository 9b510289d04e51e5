//===- HeroAnalysis.cpp - Which emitter writes a fusion, and why ----------===//
#include "tessel/Codegen/HeroAnalysis.h"

#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/ScatterDimensions.h"
#include "tessel/Hlo/SortDimensions.h"

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
  case EmitterKind::ColumnReduction:
    return "column reduction";
  case EmitterKind::RowReduction:
    return "row reduction";
  case EmitterKind::Concatenate:
    return "concatenate";
  case EmitterKind::InputSlices:
    return "input slices";
  case EmitterKind::DynamicUpdateSlice:
    return "dynamic-update-slice in place";
  case EmitterKind::Scatter:
    return "scatter";
  case EmitterKind::Sort:
    return "sort";
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

std::vector<int64_t> logicalPermutation(const HloInstruction &instruction) {
  if (instruction.opcode() == HloOpcode::Transpose)
    return instruction.dimensions();
  std::vector<int64_t> identity(instruction.shape().rank());
  std::iota(identity.begin(), identity.end(), 0);
  return identity;
}

/// Dims from major to minor in the layout's order.
static std::vector<int64_t> majorToMinor(const Shape &shape) {
  std::vector<int64_t> order = shape.layoutOrDefault().minorToMajor;
  return std::vector<int64_t>(order.rbegin(), order.rend());
}

NormalizedTranspose normalizeTranspose(const HloInstruction &transpose) {
  const Shape &operand = transpose.operand(0)->shape();
  const std::vector<int64_t> &in = operand.dims;
  std::vector<int64_t> perm = logicalPermutation(transpose);
  // Physical positions (major to minor) of the operand's dims.
  std::vector<int64_t> inOrder = majorToMinor(operand);
  std::vector<int64_t> inPosition(in.size());
  for (size_t p = 0; p < inOrder.size(); ++p)
    inPosition[inOrder[p]] = static_cast<int64_t>(p);
  // Runs of physical operand dims that stay adjacent, in the result's
  // physical order; size-1 dims are left out (their index is always 0) and
  // do not break a run.
  std::vector<std::vector<int64_t>> runs;
  for (int64_t outDim : majorToMinor(transpose.shape())) {
    int64_t p = inPosition[perm[outDim]];
    if (in[inOrder[p]] == 1)
      continue;
    bool extends = false;
    if (!runs.empty() && p > runs.back().back()) {
      extends = true;
      for (int64_t between = runs.back().back() + 1; between < p; ++between)
        extends &= in[inOrder[between]] == 1;
    }
    if (extends)
      runs.back().push_back(p);
    else
      runs.push_back({p});
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
    std::vector<int64_t> group;
    int64_t size = 1;
    for (int64_t p : runs[byInput[r]]) {
      group.push_back(inOrder[p]);
      size *= in[inOrder[p]];
    }
    n.dims.push_back(size);
    n.groups.push_back(group);
  }
  for (size_t o = 0; o < runs.size(); ++o)
    n.permutation.push_back(rank[o]);
  return n;
}

static bool isTiled(const Shape &shape) {
  return shape.layout && !shape.layout->tiles.empty();
}

/// Why `transpose` cannot be a tiled hero, or "" when it can.
static std::string transposeRejection(const HloInstruction &transpose) {
  if (isTiled(transpose.shape()) || isTiled(transpose.operand(0)->shape()))
    return "its operand or result has a tiled layout";
  NormalizedTranspose n = normalizeTranspose(transpose);
  std::string normalized = "normalized " + listString(n.dims, "[", "]") +
                           " by " + listString(n.permutation, "{", "}");
  if (n.dims.size() < 2 || n.toMinor() == n.minor())
    return "it does not move the minor physical dim (" + normalized +
           "), so the loop emitter reads and writes along it already";
  int64_t a = n.dims[n.minor()], b = n.dims[n.toMinor()];
  if (a < kMinTiledDim || b < kMinTiledDim)
    return "the dims it swaps have " + std::to_string(b) + " and " +
           std::to_string(a) + " elements (" + normalized +
           "); a 32x32 tile needs both to have at least " +
           std::to_string(kMinTiledDim);
  return "";
}

/// Why `reduce` cannot be a column-reduction hero, or "" when it can;
/// fills `out` when it can.
static std::string reductionRejection(const HloInstruction &reduce,
                                      ColumnReduction *out) {
  if (reduce.operandCount() != 2 || reduce.shape().isTuple())
    return "it reduces several operands together (a variadic reduce)";
  const Shape &operand = reduce.operand(0)->shape();
  if (isTiled(operand) || isTiled(reduce.shape()))
    return "its operand or result has a tiled layout";
  std::vector<bool> isReduced(operand.rank(), false);
  for (int64_t d : reduce.dimensions())
    isReduced[d] = true;
  // Physically major to minor: kept dims (a batch of column reductions),
  // the reduced dims, then the kept dims each row holds.
  ColumnReduction r;
  bool seenReduced = false, seenMinorKept = false;
  for (int64_t d : majorToMinor(operand)) {
    if (operand.dims[d] == 1)
      continue;
    if (isReduced[d] && seenMinorKept)
      return "it reduces a dim that is more minor than one it keeps (a row "
             "reduction): the loop emitter reads each row contiguously";
    seenReduced |= isReduced[d];
    if (!isReduced[d]) {
      seenMinorKept |= seenReduced;
      r.keptDims.push_back(d);
      r.columns *= operand.dims[d];
      if (seenReduced)
        r.rowColumns *= operand.dims[d];
    }
  }
  if (!seenMinorKept)
    return "it reduces a dim that is more minor than one it keeps (a row "
           "reduction): the loop emitter reads each row contiguously";
  for (int64_t d = 0; d < static_cast<int64_t>(operand.rank()); ++d)
    if (isReduced[d]) {
      r.reducedDims.push_back(d);
      r.rows *= operand.dims[d];
    }
  if (r.rowColumns < kMinTiledDim)
    return "it keeps " + std::to_string(r.rowColumns) +
           " elements per row; a column reduction needs at least " +
           std::to_string(kMinTiledDim);
  if (r.rows < 2)
    return "it reduces fewer than 2 elements per output";
  *out = r;
  return "";
}

/// Why `reduce` cannot be a row-reduction hero on the GPU, or "" when it
/// can; fills `out` when it can.
static std::string rowReductionRejection(const HloInstruction &reduce,
                                         RowReduction *out) {
  if (reduce.operandCount() != 2 || reduce.shape().isTuple())
    return "it reduces several operands together (a variadic reduce)";
  const Shape &operand = reduce.operand(0)->shape();
  if (isTiled(operand) || isTiled(reduce.shape()))
    return "its operand or result has a tiled layout";
  std::vector<int64_t> reduced = reduce.dimensions();
  std::sort(reduced.begin(), reduced.end());
  if (reduced.empty())
    return "it reduces no dim";
  RowReduction r;
  r.minorDim = reduced.back();
  if (operand.layoutOrDefault().minorToMajor.front() != r.minorDim)
    return "its last reduced dim is not its operand's minor dim in memory";
  r.minor = operand.dims[r.minorDim];
  if (r.minor < 2 * kRowReductionLanes)
    return "it reduces " + std::to_string(r.minor) +
           " contiguous elements at a time; 16 threads per row need at least " +
           std::to_string(2 * kRowReductionLanes);
  r.inPartials = reducesInPartials(reduce);
  if (!r.inPartials && !reducesInAnyOrder(reduce))
    return "its result depends on the order of the elements (not the "
           "compiler's partial order of an f32 or f64 sum, nor a max, min "
           "or integer op): the loop emitter keeps the evaluator's order";
  for (int64_t d : reduced)
    if (d != r.minorDim) {
      r.outerDims.push_back(d);
      r.outer *= operand.dims[d];
    }
  for (int64_t d : reduce.shape().dims)
    r.rows *= d;
  r.elementBytes = std::max(byteWidth(reduce.shape().elementType), 1);
  if (r.outer * kRowReductionLanes * r.elementBytes > kRowReductionTileBytes)
    return "the other reduced dims have " + std::to_string(r.outer) +
           " elements: 16 partial results for each do not fit " +
           std::to_string(kRowReductionTileBytes) +
           " bytes of shared memory per row";
  if (r.rows < 1)
    return "it has no output elements";
  *out = r;
  return "";
}

/// Why `output` does not read `hero` at its own index through elementwise
/// ops of the hero's dims that nothing else reads, or "".
static std::string epilogueRejection(const HloComputation &computation,
                                     const HloInstruction *hero,
                                     const FusionOutput &output) {
  if (output.element >= 0)
    return "the output is an element of a tuple-shaped value";
  std::set<const HloInstruction *> epilogue = {hero};
  std::vector<const HloInstruction *> work = {hero};
  while (!work.empty()) {
    const HloInstruction *x = work.back();
    work.pop_back();
    if (x == output.instruction)
      continue;
    if (x->users().empty() || x == computation.root())
      return "%" + x->name() +
             " (read from the hero) is an output other than the kernel's";
    for (const HloInstruction *user : x->users()) {
      if (user->opcode() == HloOpcode::Tuple && user == computation.root())
        return "%" + x->name() +
               " (read from the hero) is an output other than the kernel's";
      if (!isElementwise(user->opcode()) ||
          user->shape().dims != hero->shape().dims)
        return "%" + user->name() + " reads %" + x->name() +
               " but is not elementwise on the hero's dims, so the output "
               "does not read the hero at its own index";
      if (epilogue.insert(user).second)
        work.push_back(user);
    }
  }
  if (!epilogue.count(output.instruction))
    return "the output %" + output.instruction->name() + " does not read it";
  return "";
}

/// The concatenate hero, when there is one (see HeroAnalysis.h); else
/// `analysis` with the reasons added.
static FusionAnalysis
analyzeConcatenate(const HloComputation &computation,
                   const std::vector<FusionOutput> &outputs,
                   FusionAnalysis analysis) {
  std::vector<const HloInstruction *> concatenates;
  for (const auto &instruction : computation.instructions())
    if (instruction->opcode() == HloOpcode::Concatenate)
      concatenates.push_back(instruction.get());
  if (concatenates.empty())
    return analysis;
  std::string why;
  if (concatenates.size() > 1)
    why = "the fusion has " + std::to_string(concatenates.size()) +
          " concatenates; the emitter takes one";
  else if (outputs.size() != 1)
    why = "the kernel writes " + std::to_string(outputs.size()) +
          " outputs; the concatenate emitter writes one";
  else if (concatenates.front()->operandCount() > 64)
    why = "it has more than 64 operands (a loop each)";
  else
    why = epilogueRejection(computation, concatenates.front(), outputs.front());
  if (!why.empty()) {
    for (const HloInstruction *c : concatenates)
      analysis.rejected.push_back("%" + c->name() +
                                  " is not a concatenate hero: " + why);
    return analysis;
  }
  const HloInstruction *hero = concatenates.front();
  analysis.kind = EmitterKind::Concatenate;
  analysis.hero = hero;
  analysis.reason = "%" + hero->name() + " concatenates " +
                    std::to_string(hero->operandCount()) +
                    " operands along dim " +
                    std::to_string(hero->dimensions().front()) +
                    ": each operand is walked in a loop of its own and "
                    "written to its place in the output, with no choice "
                    "of operand per element";
  return analysis;
}

/// Why `outputs` are not input slices, or "" when they are (see
/// HeroAnalysis.h); `input` receives the array they slice.
static std::string
inputSlicesRejection(const std::vector<FusionOutput> &outputs,
                     const HloInstruction **input) {
  if (outputs.size() < 2)
    return "the kernel writes one output; the loop emitter reads only the "
           "slice's elements";
  for (const FusionOutput &output : outputs)
    if (output.element >= 0 || output.instruction->opcode() != HloOpcode::Slice)
      return "output %" + output.instruction->name() + " is not a slice";
  const HloInstruction *sliced = outputs.front().instruction->operand(0);
  for (const FusionOutput &output : outputs)
    if (output.instruction->operand(0) != sliced)
      return "%" + output.instruction->name() + " slices %" +
             output.instruction->operand(0)->name() + ", not %" +
             sliced->name();
  int64_t n = 1;
  for (int64_t d : sliced->shape().dims)
    n *= d;
  if (n == 0)
    return "%" + sliced->name() + " has no elements";
  *input = sliced;
  return "";
}

/// Why operand `k` of `dus` (a dynamic-update-slice or a scatter, whose
/// value, or element k of it, is a kernel output) cannot be updated in
/// place, or "" (see HeroAnalysis.h).
static std::string inPlaceRejection(const HloInstruction &dus, int64_t k = 0) {
  const HloInstruction *operand = dus.operand(k);
  const Shape &shape =
      dus.shape().isTuple() ? dus.shape().tupleShapes[k] : dus.shape();
  if (operand->opcode() != HloOpcode::Parameter)
    return "its operand %" + operand->name() +
           " is computed in the fusion, not a buffer it could reuse";
  if (operand->users().size() != 1)
    return "its operand %" + operand->name() +
           " has other users, which read the buffer it would update";
  if (!(operand->shape() == shape) ||
      operand->shape().layoutOrDefault().minorToMajor !=
          shape.layoutOrDefault().minorToMajor ||
      isTiled(operand->shape()) || isTiled(shape))
    return "its operand's shape or layout differs from its own, so the "
           "bytes of the buffer cannot be reused";
  if (dus.opcode() == HloOpcode::Scatter)
    return "";
  int64_t n = 1;
  for (int64_t d : dus.operand(1)->shape().dims)
    n *= d;
  if (n == 0)
    return "the update has no elements";
  return "";
}

/// The scatter hero when the kernel's one output is a scatter that can be
/// updated in place; else `analysis` with the reason added.
static FusionAnalysis analyzeScatter(const HloInstruction &scatter,
                                     FusionAnalysis analysis) {
  std::string why;
  Expected<ScatterDimensions> dims = getScatterDimensions(scatter);
  if (!dims)
    why = dims.error().message;
  for (int64_t k = 0; dims && why.empty() && k < dims->operands; ++k)
    why = inPlaceRejection(scatter, k);
  if (!why.empty()) {
    analysis.rejected.push_back("%" + scatter.name() +
                                " is not a scatter hero: " + why);
    return analysis;
  }
  analysis.kind = EmitterKind::Scatter;
  analysis.hero = &scatter;
  std::string operands =
      "its operand, parameter %" + scatter.operand(0)->name();
  std::string buffers = "the output buffer, which holds the operand";
  if (dims->operands > 1) {
    operands =
        "its " + std::to_string(dims->operands) + " operands, parameters ";
    for (int64_t k = 0; k < dims->operands; ++k)
      operands += (k ? ", %" : "%") + scatter.operand(k)->name();
    buffers = "the output buffers, which hold the operands";
  }
  analysis.reason =
      "%" + scatter.name() + " scatters into " + operands +
      ", which nothing else reads: a loop over the updates combines each "
      "element into " +
      buffers + " already, " +
      (dims->uniqueIndices
           ? std::string("a thread per element (unique_indices: no two "
                         "updates meet)")
           : std::string("one after the other in the evaluator's order (the "
                         "updates may collide)"));
  return analysis;
}

FusionAnalysis analyzeFusion(const HloComputation &computation,
                             const std::vector<int64_t> &selected,
                             Target target) {
  FusionAnalysis analysis;
  std::vector<FusionOutput> all = getFusionOutputs(computation);
  std::vector<FusionOutput> outputs;
  if (selected.empty())
    outputs = all;
  for (int64_t i : selected)
    outputs.push_back(all[i]);

  // Input slices: every output slices one array.
  bool allSlices = outputs.size() > 1;
  for (const FusionOutput &output : outputs)
    allSlices &= output.instruction->opcode() == HloOpcode::Slice;
  if (allSlices) {
    const HloInstruction *input = nullptr;
    std::string why = inputSlicesRejection(outputs, &input);
    if (why.empty()) {
      analysis.kind = EmitterKind::InputSlices;
      analysis.hero = input;
      analysis.reason =
          "the " + std::to_string(outputs.size()) + " outputs are slices of %" +
          input->name() +
          " (input slices): one loop walks it once and writes each element "
          "to every slice that contains it";
      return analysis;
    }
    analysis.rejected.push_back("not input slices: " + why);
  }

  // A sort (or TopK): the outputs are all of its results, in order.
  if (!outputs.empty() && isSortLike(*outputs.front().instruction)) {
    const HloInstruction &sort = *outputs.front().instruction;
    size_t results =
        sort.shape().isTuple() ? sort.shape().tupleShapes.size() : 1;
    bool all = outputs.size() == results;
    for (size_t k = 0; all && k < outputs.size(); ++k)
      all = outputs[k].instruction == &sort &&
            (sort.shape().isTuple()
                 ? outputs[k].element == static_cast<int64_t>(k)
                 : outputs[k].element < 0);
    Expected<SortDimensions> dims = getSortDimensions(sort);
    if (all && dims) {
      int64_t lines = 1;
      for (size_t d = 0; d < dims->dims.size(); ++d)
        if (static_cast<int64_t>(d) != dims->dim)
          lines *= dims->dims[d];
      analysis.kind = EmitterKind::Sort;
      analysis.hero = &sort;
      analysis.reason =
          "%" + sort.name() + (dims->topK ? " (top k)" : "") + " sorts " +
          std::to_string(lines) + " line(s) of " +
          std::to_string(dims->length) + " along dim " +
          std::to_string(dims->dim) +
          ": a thread per line runs the evaluator's stable merge sort (the "
          "same comparisons, so the same result for any comparator) on the "
          "line's positions in two scratch buffers, then moves " +
          (dims->operands > 1
               ? "all " + std::to_string(dims->operands) + " arrays"
               : std::string("the array")) +
          (dims->keep < dims->length
               ? " (the first " + std::to_string(dims->keep) + " of each line)"
               : std::string("")) +
          " into the outputs";
      return analysis;
    }
    analysis.rejected.push_back(
        "%" + sort.name() + " is not a sort hero: " +
        (dims ? std::string("the kernel does not write all of its results")
              : dims.error().message));
  }
  if (outputs.size() == 1 && outputs.front().element < 0 &&
      outputs.front().instruction->opcode() == HloOpcode::Scatter)
    return analyzeScatter(*outputs.front().instruction, analysis);
  // A variadic scatter: the outputs are its elements, in order.
  bool variadicScatter =
      !outputs.empty() &&
      outputs.front().instruction->opcode() == HloOpcode::Scatter &&
      outputs.front().instruction->shape().isTuple() &&
      outputs.size() == outputs.front().instruction->shape().tupleShapes.size();
  for (size_t k = 0; variadicScatter && k < outputs.size(); ++k)
    variadicScatter = outputs[k].instruction == outputs.front().instruction &&
                      outputs[k].element == static_cast<int64_t>(k);
  if (variadicScatter)
    return analyzeScatter(*outputs.front().instruction, analysis);
  // Dynamic-update-slice in place: the kernel's one output.
  if (outputs.size() == 1 && outputs.front().element < 0 &&
      outputs.front().instruction->opcode() == HloOpcode::DynamicUpdateSlice) {
    const HloInstruction *dus = outputs.front().instruction;
    std::string why = inPlaceRejection(*dus);
    if (why.empty()) {
      int64_t n = 1;
      for (int64_t d : dus->operand(1)->shape().dims)
        n *= d;
      analysis.kind = EmitterKind::DynamicUpdateSlice;
      analysis.hero = dus;
      analysis.reason =
          "%" + dus->name() + " updates its operand, parameter %" +
          dus->operand(0)->name() +
          ", which nothing else reads: the kernel writes only the " +
          std::to_string(n) +
          " elements of the update, at the clamped start indices, into the "
          "output buffer, which holds the operand already";
      return analysis;
    }
    analysis.rejected.push_back("%" + dus->name() +
                                " is not updated in place: " + why);
  }

  std::vector<const HloInstruction *> candidates;
  for (const auto &instruction : computation.instructions()) {
    // A transpose, or a copy that changes the layout (XLA's optimized HLO
    // writes a physical transpose as a logical transpose whose layout
    // makes it a bitcast, then a copy into the row-major layout).
    if (instruction->opcode() != HloOpcode::Transpose &&
        instruction->opcode() != HloOpcode::Copy)
      continue;
    if (instruction->opcode() == HloOpcode::Copy &&
        instruction->shape().layoutOrDefault().minorToMajor ==
            instruction->operand(0)->shape().layoutOrDefault().minorToMajor)
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
  if (candidates.empty()) {
    // Column reductions; on the GPU, row reductions too.
    std::vector<std::pair<const HloInstruction *, ColumnReduction>> reduces;
    std::vector<std::pair<const HloInstruction *, RowReduction>> rowReduces;
    for (const auto &instruction : computation.instructions()) {
      if (instruction->opcode() != HloOpcode::Reduce)
        continue;
      ColumnReduction r;
      std::string why = reductionRejection(*instruction, &r);
      RowReduction row;
      if (why.empty()) {
        reduces.push_back({instruction.get(), r});
        continue;
      }
      if (target == Target::Gpu) {
        std::string rowWhy = rowReductionRejection(*instruction, &row);
        if (rowWhy.empty()) {
          rowReduces.push_back({instruction.get(), row});
          continue;
        }
        why = why.find("(a row reduction)") != std::string::npos
                  ? "a row reduction, but " + rowWhy
                  : "not a column reduction (" + why +
                        "), nor a row reduction: " + rowWhy;
      }
      analysis.rejected.push_back("%" + instruction->name() +
                                  " is not a reduction hero: " + why);
    }
    if (reduces.empty() && rowReduces.empty())
      return analyzeConcatenate(computation, outputs, analysis);
    const HloInstruction *only =
        reduces.empty() ? rowReduces.front().first : reduces.front().first;
    std::string why;
    if (reduces.size() + rowReduces.size() > 1)
      why = "the fusion has " +
            std::to_string(reduces.size() + rowReduces.size()) +
            (rowReduces.empty() ? " column reductions" : " reductions") +
            "; the emitter takes one";
    else if (outputs.size() != 1)
      why = "the kernel writes " + std::to_string(outputs.size()) +
            " outputs; the " + (reduces.empty() ? "row" : "column") +
            "-reduction emitter writes one";
    else
      why = epilogueRejection(computation, only, outputs.front());
    if (!why.empty()) {
      for (const auto &[reduce, r] : reduces)
        analysis.rejected.push_back("%" + reduce->name() +
                                    " is not a reduction hero: " + why);
      for (const auto &[reduce, r] : rowReduces)
        analysis.rejected.push_back("%" + reduce->name() +
                                    " is not a reduction hero: " + why);
      return analysis;
    }
    if (reduces.empty()) {
      const RowReduction &r = rowReduces.front().second;
      analysis.kind = EmitterKind::RowReduction;
      analysis.hero = only;
      analysis.rowReduction = r;
      analysis.reason =
          "%" + only->name() + " reduces " + std::to_string(r.rows) +
          " rows of " +
          (r.outer > 1 ? std::to_string(r.outer) + " runs of " : "") +
          std::to_string(r.minor) + " contiguous elements (a row reduction" +
          (r.inPartials ? ", in the compiler's order of 16 partial results"
                        : ", whose bits do not depend on the order") +
          "): 16 threads share a row, thread j combining elements j, j + "
          "16, ... (the 16 read 16 consecutive elements at a time), and the "
          "row's first thread folds the 16 partial results from shared "
          "memory in order, then the tail";
      return analysis;
    }
    const auto &[reduce, r] = reduces.front();
    analysis.kind = EmitterKind::ColumnReduction;
    analysis.hero = reduce;
    analysis.reduction = r;
    analysis.reason =
        "%" + reduce->name() + " reduces " + std::to_string(r.rows) +
        " rows of " + std::to_string(r.rowColumns) + " contiguous elements" +
        (r.rowColumns < r.columns
             ? " in each of " + std::to_string(r.columns / r.rowColumns) +
                   " batches"
             : std::string()) +
        " (a column reduction): a block's accumulators "
        "stay in a shared tile while its threads walk the rows in the "
        "evaluator's order, so every read is contiguous and the sums are "
        "bit-exact";
    return analysis;
  }
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
  std::string why = epilogueRejection(computation, hero, output);
  if (!why.empty())
    return rejectAll(why);

  NormalizedTranspose n = normalizeTranspose(*hero);
  analysis.kind = EmitterKind::Transpose;
  analysis.hero = hero;
  analysis.transpose = n;
  analysis.reason =
      "%" + hero->name() + " transposes " +
      hero->operand(0)->shape().toString() + " to " + hero->shape().toString() +
      " (physical dims normalized " + listString(n.dims, "[", "]") + " by " +
      listString(n.permutation, "{", "}") + "), moving the minor dim: " +
      "tiles go through shared memory so that reads and writes " +
      "both run along a minor dim";
  return analysis;
}

} // namespace tessel
