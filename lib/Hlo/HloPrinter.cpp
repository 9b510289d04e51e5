//===- HloPrinter.cpp - HLO text in XLA's format --------------------------===//
//
// Prints instructions, computations and modules the way XLA's default
// HloPrintOptions do: `%` before names, operand shapes with their layouts,
// the program shape of every computation, typed attributes in XLA's order
// and then the verbatim ones in the order they were read.
//
//===----------------------------------------------------------------------===//
#include "tessel/Hlo/HloModule.h"

namespace tessel {
namespace {

std::string joinInts(const std::vector<int64_t> &values,
                     const char *separator = ",") {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? separator : "") + std::to_string(values[i]);
  return out;
}

std::string braced(const std::vector<int64_t> &values) {
  return "{" + joinInts(values) + "}";
}

std::string windowToString(const std::vector<WindowDim> &window) {
  auto field = [&](const char *name, auto get, int64_t neutral,
                   bool always) -> std::string {
    bool any = always;
    std::vector<int64_t> values;
    for (const WindowDim &dim : window) {
      values.push_back(get(dim));
      any |= values.back() != neutral;
    }
    if (!any || window.empty())
      return "";
    return std::string(name) + "=" + joinInts(values, "x");
  };
  std::vector<std::string> parts;
  parts.push_back(
      field("size", [](const WindowDim &d) { return d.size; }, 1, true));
  parts.push_back(
      field("stride", [](const WindowDim &d) { return d.stride; }, 1, false));
  bool padded = false;
  std::string pad = "pad=";
  for (size_t i = 0; i < window.size(); ++i) {
    padded |= window[i].paddingLow != 0 || window[i].paddingHigh != 0;
    pad += (i ? "x" : "") + std::to_string(window[i].paddingLow) + "_" +
           std::to_string(window[i].paddingHigh);
  }
  parts.push_back(padded ? pad : "");
  parts.push_back(field(
      "lhs_dilate", [](const WindowDim &d) { return d.baseDilation; }, 1,
      false));
  parts.push_back(field(
      "rhs_dilate", [](const WindowDim &d) { return d.windowDilation; }, 1,
      false));
  parts.push_back(field(
      "rhs_reversal",
      [](const WindowDim &d) { return static_cast<int64_t>(d.reversal); }, 0,
      false));
  std::string out;
  for (const std::string &part : parts)
    if (!part.empty())
      out += (out.empty() ? "" : " ") + part;
  return "{" + out + "}";
}

std::string paddingToString(const std::vector<PadDim> &padding) {
  std::string out;
  for (size_t i = 0; i < padding.size(); ++i) {
    out += (i ? "x" : "") + std::to_string(padding[i].low) + "_" +
           std::to_string(padding[i].high);
    if (padding[i].interior != 0)
      out += "_" + std::to_string(padding[i].interior);
  }
  return out;
}

std::string sliceToString(const std::vector<SliceDim> &slice) {
  std::string out = "{";
  for (size_t i = 0; i < slice.size(); ++i) {
    out += (i ? ", [" : "[") + std::to_string(slice[i].start) + ":" +
           std::to_string(slice[i].limit);
    if (slice[i].stride != 1)
      out += ":" + std::to_string(slice[i].stride);
    out += "]";
  }
  return out + "}";
}

/// The typed attributes of an instruction as `key=value` strings.
std::vector<std::string> typedAttributes(const HloInstruction &inst) {
  const HloAttributes &a = inst.attributes();
  std::vector<std::string> out;
  auto calledName = [&]() -> std::string {
    return inst.calledComputations().empty()
               ? std::string("%")
               : "%" + inst.calledComputation()->name();
  };
  switch (inst.opcode()) {
  case HloOpcode::Broadcast:
  case HloOpcode::Transpose:
  case HloOpcode::Reverse:
  case HloOpcode::Concatenate:
    out.push_back("dimensions=" + braced(a.dimensions));
    break;
  case HloOpcode::Reduce:
  case HloOpcode::Map:
    out.push_back("dimensions=" + braced(a.dimensions));
    out.push_back("to_apply=" + calledName());
    break;
  case HloOpcode::ReduceWindow:
    out.push_back("window=" + windowToString(a.window));
    out.push_back("to_apply=" + calledName());
    break;
  case HloOpcode::Call:
    out.push_back("to_apply=" + calledName());
    break;
  case HloOpcode::Fusion:
    out.push_back("kind=" + std::string(fusionKindName(a.fusionKind)));
    out.push_back("calls=" + calledName());
    break;
  case HloOpcode::Slice:
    out.push_back("slice=" + sliceToString(a.slice));
    break;
  case HloOpcode::DynamicSlice:
    out.push_back("dynamic_slice_sizes=" + braced(a.dynamicSliceSizes));
    break;
  case HloOpcode::Pad:
    out.push_back("padding=" + paddingToString(a.padding));
    break;
  case HloOpcode::Dot: {
    const DotDimensionNumbers &d = a.dotDimensionNumbers;
    if (!d.lhsBatchDims.empty())
      out.push_back("lhs_batch_dims=" + braced(d.lhsBatchDims));
    out.push_back("lhs_contracting_dims=" + braced(d.lhsContractingDims));
    if (!d.rhsBatchDims.empty())
      out.push_back("rhs_batch_dims=" + braced(d.rhsBatchDims));
    out.push_back("rhs_contracting_dims=" + braced(d.rhsContractingDims));
    break;
  }
  case HloOpcode::Compare:
    out.push_back("direction=" +
                  std::string(comparisonDirectionName(a.comparisonDirection)));
    if (a.comparisonType != ComparisonType::Default)
      out.push_back("type=" +
                    std::string(comparisonTypeName(a.comparisonType)));
    break;
  case HloOpcode::GetTupleElement:
    out.push_back("index=" + std::to_string(a.tupleIndex));
    break;
  case HloOpcode::Iota:
    out.push_back("iota_dimension=" + std::to_string(a.iotaDimension));
    break;
  default:
    break;
  }
  return out;
}

} // namespace

std::string HloInstruction::toString() const {
  std::string out = "%" + theName + " = " + theShape.toString() + " " +
                    std::string(hloOpcodeName(theOpcode)) + "(";
  if (theOpcode == HloOpcode::Parameter) {
    out += std::to_string(attrs.parameterNumber);
  } else if (theOpcode == HloOpcode::Constant) {
    out += attrs.literal.toString();
  } else {
    for (size_t i = 0; i < theOperands.size(); ++i)
      out += (i ? ", " : "") + theOperands[i]->shape().toString() + " %" +
             theOperands[i]->name();
  }
  out += ")";
  for (const std::string &attribute : typedAttributes(*this))
    out += ", " + attribute;
  for (const RawAttribute &attribute : raw)
    out += ", " + attribute.key + "=" + attribute.value;
  return out;
}

std::string HloComputation::toString() const {
  std::string out = isEntry() ? "ENTRY %" : "%";
  out += theName + " (";
  std::vector<HloInstruction *> params = parameters();
  bool first = true;
  for (HloInstruction *param : params) {
    if (!param)
      continue; // a missing number; the verifier reports it
    out += (first ? "" : ", ") + param->name() + ": " +
           param->shape().toStringWithoutLayout();
    first = false;
  }
  out += ") -> " + (theRoot ? theRoot->shape().toStringWithoutLayout() : "()") +
         " {\n";
  for (const auto &instruction : theInstructions)
    out += std::string(instruction.get() == theRoot ? "  ROOT " : "  ") +
           instruction->toString() + "\n";
  out += "}";
  for (const RawAttribute &attribute : raw)
    out += ", " + attribute.key + "=" + attribute.value;
  return out;
}

std::string ProgramShape::toString() const {
  std::string out = "(";
  for (size_t i = 0; i < parameters.size(); ++i)
    out += (i ? ", " : "") + parameters[i].toString();
  return out + ")->" + result.toString();
}

static std::string shapeIndexString(const std::vector<int64_t> &index) {
  std::string out = "{";
  for (size_t i = 0; i < index.size(); ++i)
    out += (i ? "," : "") + std::to_string(index[i]);
  return out + "}";
}

std::string HloInputOutputAlias::toString() const {
  return shapeIndexString(outputIndex) + ": (" +
         std::to_string(parameterNumber) + ", " +
         shapeIndexString(parameterIndex) + ", " +
         (kind == Kind::MustAlias ? "must-alias" : "may-alias") + ")";
}

std::string HloModule::toString() const {
  std::string out = "HloModule " + theName;
  if (!aliases.empty()) {
    out += ", input_output_alias={ ";
    for (size_t i = 0; i < aliases.size(); ++i)
      out += (i ? ", " : "") + aliases[i].toString();
    out += " }";
  }
  if (entryLayout)
    out += ", entry_computation_layout={" + entryLayout->toString() + "}";
  for (const RawAttribute &attribute : raw)
    out += ", " + attribute.key + "=" + attribute.value;
  out += "\n\n";
  for (const HloStackFrameSection &section : frames) {
    out += section.name + "\n";
    for (const auto &[id, value] : section.entries)
      out += std::to_string(id) + " " + value + "\n";
    out += "\n";
  }
  for (const auto &computation : theComputations)
    out += computation->toString() + "\n\n";
  return out;
}

} // namespace tessel
