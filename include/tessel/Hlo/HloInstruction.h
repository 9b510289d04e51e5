//===- HloInstruction.h - One HLO instruction and its attributes -*- C++
//-*-===//
//
// An instruction is one line of a computation:
//
//   %slice.3 = f32[2,4]{1,0} slice(f32[4,8]{1,0} %p), slice={[0:4:2], [2:6]}
//    ^name     ^shape        ^opcode  ^operands       ^typed attribute
//
// It holds its opcode, result shape (with the layout as written), operand
// pointers (into the same computation), its users, and the typed attributes
// of `HloAttributes`: which ones an opcode uses is listed on each field.
// Attributes tessel gives no meaning to (metadata, backend_config, sharding,
// frontend_attributes, control-predecessors, and every attribute of an
// unsupported opcode) are kept verbatim in `rawAttributes()` so that the
// printer writes them back unchanged.
//
// Instructions are owned by their HloComputation (HloModule.h); create them
// with HloComputation::addInstruction.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_HLOINSTRUCTION_H
#define TESSEL_HLO_HLOINSTRUCTION_H

#include "tessel/Hlo/HloOpcode.h"
#include "tessel/Hlo/Literal.h"
#include "tessel/Layout/Shape.h"
#include "tessel/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

class HloComputation;

/// One dim of a slice: elements start, start+stride, ... below limit.
/// Printed `[start:limit]` or `[start:limit:stride]`.
struct SliceDim {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDim &o) const {
    return start == o.start && limit == o.limit && stride == o.stride;
  }
};

/// One dim of a pad: `low` elements before, `high` after (either may be
/// negative: it then removes elements), `interior` between neighbours.
/// Printed `low_high` or `low_high_interior`, dims joined by `x`.
struct PadDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PadDim &o) const {
    return low == o.low && high == o.high && interior == o.interior;
  }
};

/// One dim of a reduce-window window, printed inside
/// `window={size=2x2 stride=2x1 pad=0_1x0_0 lhs_dilate=1x1 rhs_dilate=1x1}`.
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t paddingLow = 0;
  int64_t paddingHigh = 0;
  /// rhs_dilate: gap between window elements.
  int64_t windowDilation = 1;
  /// lhs_dilate: gap inserted between input elements.
  int64_t baseDilation = 1;
  /// rhs_reversal: window read backwards.
  bool reversal = false;
  bool operator==(const WindowDim &o) const {
    return size == o.size && stride == o.stride && paddingLow == o.paddingLow &&
           paddingHigh == o.paddingHigh && windowDilation == o.windowDilation &&
           baseDilation == o.baseDilation && reversal == o.reversal;
  }
};

/// dot's dimension numbers. The result dims are: batch dims (in the order
/// given), then the lhs dims that are neither batch nor contracting, then
/// those of the rhs.
struct DotDimensionNumbers {
  std::vector<int64_t> lhsBatchDims;
  std::vector<int64_t> rhsBatchDims;
  std::vector<int64_t> lhsContractingDims;
  std::vector<int64_t> rhsContractingDims;
  bool operator==(const DotDimensionNumbers &o) const {
    return lhsBatchDims == o.lhsBatchDims && rhsBatchDims == o.rhsBatchDims &&
           lhsContractingDims == o.lhsContractingDims &&
           rhsContractingDims == o.rhsContractingDims;
  }
};

enum class ComparisonDirection { Eq, Ne, Ge, Gt, Le, Lt };
/// compare's `type=`: how floats and integers are ordered. Default means
/// "not written": FLOAT for floats, SIGNED/UNSIGNED for integers.
enum class ComparisonType { Default, Float, TotalOrder, Signed, Unsigned };
enum class FusionKind { Loop, Input, Output, Custom };

std::string_view comparisonDirectionName(ComparisonDirection direction);
std::string_view comparisonTypeName(ComparisonType type);
std::string_view fusionKindName(FusionKind kind);

/// An attribute kept as written: `key=value` with the value's exact text.
struct RawAttribute {
  std::string key;
  std::string value;
};

/// The typed attributes. Each opcode reads only the fields listed for it.
struct HloAttributes {
  /// parameter: the parameter number.
  int64_t parameterNumber = 0;
  /// constant: the value.
  Literal literal;
  /// iota: the dim that counts.
  int64_t iotaDimension = 0;
  /// broadcast: result dim of each operand dim; transpose: operand dim of
  /// each result dim; reverse: reversed dims; reduce: reduced dims;
  /// concatenate: the one concatenated dim; map: all dims.
  std::vector<int64_t> dimensions;
  /// slice.
  std::vector<SliceDim> slice;
  /// dynamic-slice: the size of the slice in every dim.
  std::vector<int64_t> dynamicSliceSizes;
  /// pad.
  std::vector<PadDim> padding;
  /// reduce-window.
  std::vector<WindowDim> window;
  /// dot.
  DotDimensionNumbers dotDimensionNumbers;
  /// compare.
  ComparisonDirection comparisonDirection = ComparisonDirection::Eq;
  ComparisonType comparisonType = ComparisonType::Default;
  /// fusion.
  FusionKind fusionKind = FusionKind::Loop;
  /// get-tuple-element: the element.
  int64_t tupleIndex = 0;
};

/// Where an instruction was written (1-based, columns in characters; 0
/// when built in code).
struct SourceLocation {
  int line = 0;
  int column = 0;
};

/// An error about what was written at `location` (Support/Error.h): it
/// prints the line and column, and the line itself once located in the text.
inline Error errorAt(SourceLocation location, std::string message) {
  if (location.line == 0)
    return Error(std::move(message));
  return Error::atLine(location.line, location.column, std::move(message));
}

class HloInstruction {
public:
  HloInstruction(HloOpcode opcode, std::string name, Shape shape)
      : theOpcode(opcode), theName(std::move(name)),
        theShape(std::move(shape)) {}
  HloInstruction(const HloInstruction &) = delete;
  HloInstruction &operator=(const HloInstruction &) = delete;

  HloOpcode opcode() const { return theOpcode; }
  /// The name without `%`.
  const std::string &name() const { return theName; }
  const Shape &shape() const { return theShape; }
  void setShape(Shape shape) { theShape = std::move(shape); }

  int64_t operandCount() const {
    return static_cast<int64_t>(theOperands.size());
  }
  HloInstruction *operand(int64_t i) const { return theOperands[i]; }
  const std::vector<HloInstruction *> &operands() const { return theOperands; }
  /// Appends an operand and registers this instruction as its user.
  void appendOperand(HloInstruction *operand);
  /// Instructions that use this one, each once, in the order they were
  /// added.
  const std::vector<HloInstruction *> &users() const { return theUsers; }

  /// fusion and call: `calls=`/`to_apply=`; reduce, reduce-window, map:
  /// `to_apply=`.
  const std::vector<HloComputation *> &calledComputations() const {
    return called;
  }
  void appendCalledComputation(HloComputation *computation) {
    called.push_back(computation);
  }
  /// The one called computation of fusion, call, reduce, reduce-window and
  /// map. @pre calledComputations().size() == 1
  HloComputation *calledComputation() const { return called.front(); }

  const HloAttributes &attributes() const { return attrs; }
  HloAttributes &mutableAttributes() { return attrs; }
  // Shorthands for the attributes most code reads.
  const std::vector<int64_t> &dimensions() const { return attrs.dimensions; }
  int64_t parameterNumber() const { return attrs.parameterNumber; }
  int64_t tupleIndex() const { return attrs.tupleIndex; }
  const Literal &literal() const { return attrs.literal; }

  const std::vector<RawAttribute> &rawAttributes() const { return raw; }
  std::vector<RawAttribute> &mutableRawAttributes() { return raw; }
  /// The value of a raw attribute, nullptr when absent.
  const std::string *rawAttribute(std::string_view key) const;
  /// True for the ops that return their operand unchanged: opt-barrier (a
  /// scheduling barrier, from jax.checkpoint) and the custom-call
  /// "Sharding" (an annotation, from with_sharding_constraint). The
  /// verifier checks that the shapes agree; the evaluator passes the value.
  bool passesValueThrough() const;

  HloComputation *parent() const { return theParent; }
  /// Position in the parent's instruction list.
  int64_t index() const { return theIndex; }
  bool isRoot() const;

  SourceLocation location() const { return loc; }
  void setLocation(SourceLocation location) { loc = location; }

  /// `%name = shape opcode(operands), attributes` as XLA prints it
  /// (without ROOT).
  std::string toString() const;

private:
  friend class HloComputation;
  HloOpcode theOpcode;
  std::string theName;
  Shape theShape;
  std::vector<HloInstruction *> theOperands;
  std::vector<HloInstruction *> theUsers;
  std::vector<HloComputation *> called;
  HloAttributes attrs;
  std::vector<RawAttribute> raw;
  HloComputation *theParent = nullptr;
  int64_t theIndex = -1;
  SourceLocation loc;
};

} // namespace tessel

#endif // TESSEL_HLO_HLOINSTRUCTION_H
