//===- HloModule.h - HLO modules and computations ---------------*- C++ -*-===//
//
// An HloModule is a list of computations, one of them the ENTRY; a
// computation is a list of instructions in definition order (every operand
// is defined before its users), one of them the ROOT:
//
//   HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}
//
//   %add (x: f32[], y: f32[]) -> f32[] {        <- called by the reduce
//     %x = f32[] parameter(0)
//     %y = f32[] parameter(1)
//     ROOT %sum = f32[] add(f32[] %x, f32[] %y)
//   }
//
//   ENTRY %main (p: f32[4]) -> f32[] {
//     %p = f32[4]{0} parameter(0)
//     %zero = f32[] constant(0)
//     ROOT %r = f32[] reduce(f32[4]{0} %p, f32[] %zero), dimensions={0},
//     to_apply=%add
//   }
//
// Parse with parseHloModule (HloParser.h), print with HloModule::toString,
// check with verifyHloModule (HloVerifier.h), run with evaluateHloModule
// (HloEvaluator.h).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_HLOMODULE_H
#define TESSEL_HLO_HLOMODULE_H

#include "tessel/Hlo/HloInstruction.h"
#include "tessel/Support/Expected.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessel {

class HloModule;

class HloComputation {
public:
  explicit HloComputation(std::string name) : theName(std::move(name)) {}
  HloComputation(const HloComputation &) = delete;
  HloComputation &operator=(const HloComputation &) = delete;

  /// The name without `%`.
  const std::string &name() const { return theName; }
  HloModule *parent() const { return theParent; }
  bool isEntry() const;

  /// Takes ownership; the instruction gets this parent and the next index.
  /// @pre its operands already belong to this computation.
  HloInstruction *addInstruction(std::unique_ptr<HloInstruction> instruction);
  /// Instructions in definition order.
  const std::vector<std::unique_ptr<HloInstruction>> &instructions() const {
    return theInstructions;
  }
  int64_t instructionCount() const {
    return static_cast<int64_t>(theInstructions.size());
  }
  HloInstruction *instruction(const std::string &name) const;

  /// The ROOT: the one marked ROOT, else the last instruction.
  HloInstruction *root() const { return theRoot; }
  void setRoot(HloInstruction *root) { theRoot = root; }

  /// The parameter instructions ordered by parameter number (entries are
  /// null where a number is missing; the verifier reports that).
  std::vector<HloInstruction *> parameters() const;
  int64_t parameterCount() const {
    return static_cast<int64_t>(parameters().size());
  }

  /// Attributes written after the closing brace (execution_thread=...).
  std::vector<RawAttribute> &mutableRawAttributes() { return raw; }
  const std::vector<RawAttribute> &rawAttributes() const { return raw; }

  SourceLocation location() const { return loc; }
  void setLocation(SourceLocation location) { loc = location; }

  /// `%name (p: f32[4]) -> f32[] {\n  ...\n}` with ENTRY when it is the
  /// entry.
  std::string toString() const;

private:
  friend class HloModule;
  std::string theName;
  HloModule *theParent = nullptr;
  std::vector<std::unique_ptr<HloInstruction>> theInstructions;
  HloInstruction *theRoot = nullptr;
  std::vector<RawAttribute> raw;
  SourceLocation loc;
};

/// `(params)->result` of entry_computation_layout={...}.
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
  std::string toString() const;
};

/// One entry of the module attribute `input_output_alias`: the ENTRY's
/// output at `outputIndex` (a shape index into the result: `{}` for an
/// array result, `{1}` for element 1 of a tuple) may live in the buffer of
/// parameter `parameterNumber` at `parameterIndex`, which the caller then
/// donates:
///
///   HloModule m, input_output_alias={ {0}: (0, {}, may-alias),
///                                     {1}: (2, {}, must-alias) }
///
/// `may-alias` (XLA's default when the kind is left out): the caller may
/// donate the buffer; `must-alias`: it must. Values do not change either
/// way (the evaluator ignores it); the compiler may update the parameter's
/// buffer in place (docs/codegen.md, "Dynamic-update-slice in place").
struct HloInputOutputAlias {
  enum class Kind { MayAlias, MustAlias };
  std::vector<int64_t> outputIndex;
  int64_t parameterNumber = 0;
  std::vector<int64_t> parameterIndex;
  Kind kind = Kind::MayAlias;
  /// Where the entry starts (its output index), for the verifier.
  SourceLocation location;
  /// `{1}: (2, {}, must-alias)`.
  std::string toString() const;
  bool operator==(const HloInputOutputAlias &other) const {
    return outputIndex == other.outputIndex &&
           parameterNumber == other.parameterNumber &&
           parameterIndex == other.parameterIndex && kind == other.kind;
  }
};

/// One section of XLA's stack-frame index (FileNames, FunctionNames,
/// FileLocations, StackFrames), kept verbatim.
struct HloStackFrameSection {
  std::string name;
  /// (id, value text) per line: `1 "/tmp/f.py"`, `2 {file_location_id=1 ...}`.
  std::vector<std::pair<int64_t, std::string>> entries;
};

class HloModule {
public:
  explicit HloModule(std::string name) : theName(std::move(name)) {}
  HloModule(const HloModule &) = delete;
  HloModule &operator=(const HloModule &) = delete;

  const std::string &name() const { return theName; }
  void setName(std::string name) { theName = std::move(name); }

  /// Takes ownership and appends.
  HloComputation *addComputation(std::unique_ptr<HloComputation> computation);
  const std::vector<std::unique_ptr<HloComputation>> &computations() const {
    return theComputations;
  }
  /// The first computation called `name`, or nullptr.
  HloComputation *computation(const std::string &name) const;
  HloComputation *entry() const { return theEntry; }
  void setEntry(HloComputation *entry) { theEntry = entry; }

  /// entry_computation_layout when the header has one.
  const std::optional<ProgramShape> &entryComputationLayout() const {
    return entryLayout;
  }
  void setEntryComputationLayout(std::optional<ProgramShape> layout,
                                 SourceLocation location = {}) {
    entryLayout = std::move(layout);
    entryLayoutLocation = location;
  }
  /// Where entry_computation_layout was read (line 0 when not parsed).
  SourceLocation entryComputationLayoutLocation() const {
    return entryLayoutLocation;
  }
  /// The parameter and result shapes of the entry with their physical
  /// layouts: entry_computation_layout when present, else the shapes of the
  /// entry's parameters and root. @pre entry() is set.
  ProgramShape entryProgramShape() const;

  /// input_output_alias, in the order written (empty when the header has
  /// none; verifyHloModule checks it against the entry).
  const std::vector<HloInputOutputAlias> &inputOutputAliases() const {
    return aliases;
  }
  void setInputOutputAliases(std::vector<HloInputOutputAlias> entries) {
    aliases = std::move(entries);
  }

  /// Header attributes other than entry_computation_layout and
  /// input_output_alias, verbatim.
  std::vector<RawAttribute> &mutableRawAttributes() { return raw; }
  const std::vector<RawAttribute> &rawAttributes() const { return raw; }
  std::vector<HloStackFrameSection> &mutableStackFrames() { return frames; }
  const std::vector<HloStackFrameSection> &stackFrames() const {
    return frames;
  }

  /// The module in XLA's text format; parseHloModule reads it back to an
  /// equal module.
  std::string toString() const;

private:
  std::string theName;
  std::vector<std::unique_ptr<HloComputation>> theComputations;
  /// The first computation of each name: lookups stay constant-time in
  /// modules of many computations.
  std::unordered_map<std::string, HloComputation *> byName;
  HloComputation *theEntry = nullptr;
  std::optional<ProgramShape> entryLayout;
  SourceLocation entryLayoutLocation;
  std::vector<HloInputOutputAlias> aliases;
  std::vector<RawAttribute> raw;
  std::vector<HloStackFrameSection> frames;
};

/// The instruction called `name` (with or without `%`) in the computation
/// called `computationName`, or else in the entry first and then in the
/// other computations in order; the ROOT when `name` is empty. Fails with
/// the names it knows (`tessel indexing --instruction`).
Expected<const HloInstruction *> findInstruction(const HloModule &module,
                                                 std::string name,
                                                 std::string computationName);

/// Refuses a module the compiler, which inlines every call and fusion,
/// would see as more than `limit` instructions: a computation that calls
/// another twice doubles it (a chain of 60 such computations inlines to
/// 2^60 instructions). @pre the module verifies (calls nest at most 256
/// deep).
Status checkInlinedSize(const HloModule &module, int64_t limit = int64_t(1)
                                                                 << 22);

} // namespace tessel

#endif // TESSEL_HLO_HLOMODULE_H
