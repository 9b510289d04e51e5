//===- HloParser.cpp - Read HLO text as XLA and JAX print it --------------===//
#include "tessel/Hlo/HloParser.h"

#include "HloLexer.h"

#include <algorithm>
#include <map>
#include <set>

namespace tessel {
namespace {

/// A computation name used before the computations are all known.
struct PendingCall {
  HloInstruction *instruction;
  std::string name;
  size_t pos;
};

/// Which typed attributes an opcode reads; anything else is kept verbatim.
bool isTypedAttribute(HloOpcode op, std::string_view key) {
  switch (op) {
  case HloOpcode::Broadcast:
  case HloOpcode::Transpose:
  case HloOpcode::Reverse:
  case HloOpcode::Concatenate:
    return key == "dimensions";
  case HloOpcode::Reduce:
  case HloOpcode::Map:
    return key == "dimensions" || key == "to_apply";
  case HloOpcode::ReduceWindow:
    return key == "window" || key == "to_apply";
  case HloOpcode::Call:
    return key == "to_apply";
  case HloOpcode::Fusion:
    return key == "kind" || key == "calls";
  case HloOpcode::Slice:
    return key == "slice";
  case HloOpcode::DynamicSlice:
    return key == "dynamic_slice_sizes";
  case HloOpcode::Pad:
    return key == "padding";
  case HloOpcode::Dot:
    return key == "lhs_batch_dims" || key == "rhs_batch_dims" ||
           key == "lhs_contracting_dims" || key == "rhs_contracting_dims";
  case HloOpcode::Compare:
    return key == "direction" || key == "type";
  case HloOpcode::GetTupleElement:
    return key == "index";
  case HloOpcode::Iota:
    return key == "iota_dimension";
  default:
    return false;
  }
}

/// The attributes an opcode cannot do without.
std::vector<std::string_view> requiredAttributes(HloOpcode op) {
  switch (op) {
  case HloOpcode::Broadcast:
  case HloOpcode::Transpose:
  case HloOpcode::Reverse:
  case HloOpcode::Concatenate:
    return {"dimensions"};
  case HloOpcode::Reduce:
    return {"dimensions", "to_apply"};
  case HloOpcode::Map:
  case HloOpcode::Call:
    return {"to_apply"};
  case HloOpcode::ReduceWindow:
    return {"window", "to_apply"};
  case HloOpcode::Fusion:
    return {"kind", "calls"};
  case HloOpcode::Slice:
    return {"slice"};
  case HloOpcode::DynamicSlice:
    return {"dynamic_slice_sizes"};
  case HloOpcode::Pad:
    return {"padding"};
  case HloOpcode::Compare:
    return {"direction"};
  case HloOpcode::GetTupleElement:
    return {"index"};
  case HloOpcode::Iota:
    return {"iota_dimension"};
  default:
    return {};
  }
}

class HloTextParser : public HloLexer {
public:
  using HloLexer::HloLexer;
  Expected<std::unique_ptr<HloModule>> parseModule();

private:
  bool parseHeader(HloModule &module);
  bool parseProgramShape(ProgramShape &shape);
  bool parseInputOutputAliases(std::vector<HloInputOutputAlias> &aliases);
  bool parseShapeIndex(std::vector<int64_t> &index, const char *what);
  bool parseStackFrames(HloModule &module);
  bool parseComputation(HloModule &module, bool &sawEntry);
  bool parseSignature(size_t bodyOpen);
  bool parseInstruction(HloComputation &computation,
                        std::map<std::string, HloInstruction *> &names,
                        bool &sawRoot);
  bool parseOperands(HloInstruction &inst,
                     const std::map<std::string, HloInstruction *> &names);
  bool parseAttribute(HloInstruction &inst, std::string_view key,
                      size_t keyPos);
  bool parseCalledNames(HloInstruction &inst);
  bool resolveCalls(HloModule &module);

  std::vector<PendingCall> pendingCalls;
  /// Computations named by attributes kept verbatim (while's condition and
  /// body, conditional's branches, ...), with where each name is.
  std::vector<std::pair<std::string, size_t>> referencedNames;
};

Expected<std::unique_ptr<HloModule>> HloTextParser::parseModule() {
  auto module = std::make_unique<HloModule>("module");
  bool sawEntry = false;
  bool ok = parseHeader(*module) && parseStackFrames(*module);
  while (ok && !atEnd()) {
    if (peekWord() == "HloModule") {
      ok = fail(pos, "a second HloModule: tessel reads one module per file, "
                     "expected a computation (split the file in two)");
      break;
    }
    ok = parseComputation(*module, sawEntry);
  }
  if (ok && module->computations().empty())
    ok = fail(pos, "expected a computation but found " + found());
  if (ok)
    ok = resolveCalls(*module);
  if (!ok)
    return takeError();
  if (!module->entry())
    module->setEntry(module->computations().back().get());
  return module;
}

bool HloTextParser::parseHeader(HloModule &module) {
  if (peekWord() != "HloModule")
    return true; // XLA's parser also reads a module without the header
  size_t headerPos = pos;
  word();
  size_t namePos = pos;
  std::string name = name_();
  if (name.empty())
    return fail(namePos, "expected the module name after HloModule but found " +
                             found());
  module.setName(name);
  bool sawAliases = false;
  // XLA's parser accepts a colon after the name (`HloModule m:`).
  if (peek() == ':')
    consume(':');
  while (consume(',')) {
    size_t keyPos = (skipSpace(), pos);
    std::string key(word());
    if (key.empty())
      return fail(keyPos, "expected an attribute name but found " + found());
    if (!expect('=', "'=' after the attribute name"))
      return false;
    if (key == "entry_computation_layout") {
      SourceLocation location = locationOf(keyPos);
      ProgramShape shape;
      if (!expect('{', "'{' before the entry computation layout") ||
          !parseProgramShape(shape) ||
          !expect('}', "'}' after the entry computation layout"))
        return false;
      module.setEntryComputationLayout(std::move(shape), location);
      continue;
    }
    if (key == "input_output_alias") {
      if (sawAliases)
        return fail(keyPos, "input_output_alias is given twice");
      sawAliases = true;
      std::vector<HloInputOutputAlias> aliases;
      if (!parseInputOutputAliases(aliases))
        return false;
      module.setInputOutputAliases(std::move(aliases));
      continue;
    }
    std::string value;
    if (!rawValue(value))
      return false;
    module.mutableRawAttributes().push_back({key, value});
  }
  skipSpace();
  if (!atEnd() && lineOf(pos) == lineOf(headerPos))
    return fail(pos, "expected ',' and an attribute or a new line after the "
                     "module header but found " +
                         found());
  return true;
}

/// `{ {0}: (0, {}, may-alias), {1}: (2, {1}) }`: output shape index,
/// parameter number, parameter shape index and an optional kind. The
/// verifier checks the numbers against the entry (HloVerifier.cpp).
bool HloTextParser::parseInputOutputAliases(
    std::vector<HloInputOutputAlias> &aliases) {
  if (!expect('{', "'{' to open input_output_alias"))
    return false;
  while (peek() != '}') {
    HloInputOutputAlias alias;
    alias.location = locationOf((skipSpace(), pos));
    if (!parseShapeIndex(alias.outputIndex, "an output shape index") ||
        !expect(':', "':' after the output shape index") ||
        !expect('(', "'(' before the aliased parameter") ||
        !parseInt(alias.parameterNumber, "a parameter number") ||
        !expect(',', "',' after the parameter number") ||
        !parseShapeIndex(alias.parameterIndex, "a parameter shape index"))
      return false;
    if (consume(',')) {
      size_t kindPos = (skipSpace(), pos);
      std::string_view kind = word();
      if (kind == "may-alias")
        alias.kind = HloInputOutputAlias::Kind::MayAlias;
      else if (kind == "must-alias")
        alias.kind = HloInputOutputAlias::Kind::MustAlias;
      else
        return fail(kindPos, "expected may-alias or must-alias but found " +
                                 (kind.empty() ? found() : quoted(kind)));
    }
    if (!expect(')', "')' after the aliased parameter"))
      return false;
    aliases.push_back(std::move(alias));
    if (!consume(','))
      break;
  }
  return expect('}', "',' or '}' in input_output_alias");
}

/// `{}`, `{1}`, `{0,2}`: indices into nested tuples.
bool HloTextParser::parseShapeIndex(std::vector<int64_t> &index,
                                    const char *what) {
  index.clear();
  if (!expect('{', (std::string("'{' to open ") + what).c_str()))
    return false;
  if (consume('}'))
    return true;
  do {
    int64_t i = 0;
    if (!parseInt(i, "a tuple index"))
      return false;
    index.push_back(i);
  } while (consume(','));
  return expect('}', "',' or '}' in a shape index");
}

bool HloTextParser::parseProgramShape(ProgramShape &shape) {
  if (!expect('(', "'(' before the parameter shapes"))
    return false;
  if (!consume(')')) {
    do {
      Shape parameter;
      if (!parseShapeHere(parameter))
        return false;
      shape.parameters.push_back(std::move(parameter));
    } while (consume(','));
    if (!expect(')', "',' or ')' after a parameter shape"))
      return false;
  }
  if (!expect('-', "'->' before the result shape") ||
      !expect('>', "'->' before the result shape"))
    return false;
  return parseShapeHere(shape.result);
}

bool HloTextParser::parseStackFrames(HloModule &module) {
  static const std::set<std::string_view> kSections = {
      "FileNames", "FunctionNames", "FileLocations", "StackFrames"};
  for (;;) {
    std::string_view section = peekWord();
    if (!kSections.count(section))
      return true;
    size_t save = pos;
    word();
    char next = peek();
    if (next == '{' || next == '(') { // a computation of that name
      pos = save;
      return true;
    }
    HloStackFrameSection frames;
    frames.name = std::string(section);
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      int64_t id = 0;
      if (!parseInt(id, "an entry number"))
        return false;
      std::string value;
      if (!rawValue(value))
        return false;
      if (value.empty())
        return fail(pos, "expected the value of entry " + std::to_string(id) +
                             " of " + frames.name + " but found " + found());
      frames.entries.emplace_back(id, value);
    }
    module.mutableStackFrames().push_back(std::move(frames));
  }
}

bool HloTextParser::parseComputation(HloModule &module, bool &sawEntry) {
  skipSpace();
  size_t start = pos;
  bool isEntry = false;
  if (peekWord() == "ENTRY") {
    word();
    isEntry = true;
  }
  size_t namePos = (skipSpace(), pos);
  std::string name = name_();
  if (name.empty())
    return fail(namePos,
                "expected a computation name or ENTRY but found " + found());
  if (module.computation(name))
    return fail(namePos, "computation %" + name + " is defined twice");
  // The body opens with the last '{' of the header line.
  size_t lineEnd = text.find('\n', pos);
  if (lineEnd == std::string_view::npos)
    lineEnd = text.size();
  size_t bodyOpen = text.rfind('{', lineEnd);
  if (bodyOpen == std::string_view::npos || bodyOpen < pos)
    return fail(pos, "expected '{' to open computation %" + name +
                         " but found " + found());
  if (peek() == '(' && !parseSignature(bodyOpen))
    return false;
  if (!expect('{', "'{' to open the computation"))
    return false;
  auto owned = std::make_unique<HloComputation>(name);
  owned->setLocation(locationOf(start));
  HloComputation *computation = module.addComputation(std::move(owned));
  if (isEntry) {
    if (sawEntry)
      return fail(start, "a second ENTRY computation, expected only one");
    sawEntry = true;
    module.setEntry(computation);
  }
  std::map<std::string, HloInstruction *> names;
  bool sawRoot = false;
  while (!consume('}')) {
    if (atEnd())
      return fail(pos, "expected '}' to close computation %" + name +
                           " but found the end of the input");
    if (!parseInstruction(*computation, names, sawRoot))
      return false;
  }
  if (computation->instructions().empty())
    return fail(start, "computation %" + name + " has no instructions");
  if (!computation->root())
    computation->setRoot(computation->instructions().back().get());
  while (consume(',')) {
    size_t keyPos = (skipSpace(), pos);
    std::string key(word());
    if (key.empty())
      return fail(keyPos, "expected an attribute name but found " + found());
    std::string value;
    if (!expect('=', "'=' after the attribute name") || !rawValue(value))
      return false;
    computation->mutableRawAttributes().push_back({key, value});
  }
  return true;
}

bool HloTextParser::parseSignature(size_t bodyOpen) {
  // The program shape is redundant with the parameters; it is checked for
  // syntax only (the printer writes it from the instructions).
  expect('(', "'('");
  if (!consume(')')) {
    do {
      size_t namePos = (skipSpace(), pos);
      if (name_().empty())
        return fail(namePos, "expected a parameter name but found " + found());
      Shape shape;
      if (!expect(':', "':' after the parameter name") ||
          !parseShapeHere(shape, bodyOpen))
        return false;
    } while (consume(','));
    if (!expect(')', "',' or ')' in the parameter list"))
      return false;
  }
  Shape result;
  if (!expect('-', "'->' before the result shape") ||
      !expect('>', "'->' before the result shape"))
    return false;
  return parseShapeHere(result, bodyOpen);
}

bool HloTextParser::parseInstruction(
    HloComputation &computation, std::map<std::string, HloInstruction *> &names,
    bool &sawRoot) {
  size_t start = (skipSpace(), pos);
  bool isRoot = false;
  if (peekWord() == "ROOT") {
    size_t save = pos;
    word();
    if (peek() == '=')
      pos = save; // an instruction named ROOT
    else
      isRoot = true;
  }
  size_t namePos = (skipSpace(), pos);
  std::string name = name_();
  if (name.empty())
    return fail(namePos,
                "expected an instruction name, ROOT or '}' but found " +
                    found());
  if (names.count(name))
    return fail(namePos, "instruction %" + name + " is defined twice in %" +
                             computation.name());
  Shape shape;
  if (!expect('=', "'=' after the instruction name") || !parseShapeHere(shape))
    return false;
  size_t opcodePos = (skipSpace(), pos);
  std::string_view opcodeName = word();
  std::optional<HloOpcode> opcode = parseHloOpcode(opcodeName);
  if (!opcode)
    return fail(opcodePos,
                opcodeName.empty()
                    ? "expected an opcode but found " + found()
                    : "unknown opcode '" + std::string(opcodeName) + "'");
  auto owned = std::make_unique<HloInstruction>(*opcode, name, shape);
  owned->setLocation(locationOf(isRoot ? start : namePos));
  HloInstruction &inst = *owned;
  if (!expect('(', "'(' after the opcode") || !parseOperands(inst, names))
    return false;
  std::set<std::string> seen;
  while (consume(',')) {
    size_t keyPos = (skipSpace(), pos);
    std::string key(word());
    if (key.empty())
      return fail(keyPos, "expected an attribute name but found " + found());
    if (!expect('=', "'=' after the attribute name"))
      return false;
    if (isTypedAttribute(*opcode, key) && !seen.insert(key).second)
      return fail(keyPos, "attribute " + key + " is given twice");
    if (!parseAttribute(inst, key, keyPos))
      return false;
  }
  for (std::string_view required : requiredAttributes(*opcode))
    if (!seen.count(std::string(required)))
      return fail(opcodePos, std::string(opcodeName) + " needs the attribute " +
                                 std::string(required) + "=");
  HloInstruction *added = computation.addInstruction(std::move(owned));
  names[name] = added;
  if (isRoot) {
    if (sawRoot)
      return fail(start, "a second ROOT in %" + computation.name() +
                             ", expected only one");
    sawRoot = true;
    computation.setRoot(added);
  }
  return true;
}

bool HloTextParser::parseOperands(
    HloInstruction &inst,
    const std::map<std::string, HloInstruction *> &names) {
  HloOpcode op = inst.opcode();
  if (op == HloOpcode::Parameter) {
    int64_t number = 0;
    return parseInt(number, "a parameter number") &&
           expect(')', "')' after the parameter number") &&
           (inst.mutableAttributes().parameterNumber = number, true);
  }
  if (op == HloOpcode::Constant) {
    Literal literal;
    if (!parseLiteralValue(inst.shape(), literal))
      return false;
    inst.mutableAttributes().literal = std::move(literal);
    return expect(')', "')' after the constant");
  }
  if (consume(')'))
    return true;
  do {
    skipSpace();
    if (startsShape()) {
      Shape ignored; // operand shapes are checked by the verifier
      if (!parseShapeHere(ignored))
        return false;
    }
    size_t namePos = (skipSpace(), pos);
    std::string name = name_();
    if (name.empty())
      return fail(namePos, "expected an operand name but found " + found());
    auto it = names.find(name);
    if (it == names.end())
      return fail(namePos, "use of undefined instruction %" + name);
    inst.appendOperand(it->second);
  } while (consume(','));
  return expect(')', "',' or ')' after an operand");
}

bool HloTextParser::parseAttribute(HloInstruction &inst, std::string_view key,
                                   size_t keyPos) {
  (void)keyPos;
  HloAttributes &a = inst.mutableAttributes();
  if (!isTypedAttribute(inst.opcode(), key)) {
    size_t valuePos = (skipSpace(), pos);
    std::string value;
    if (!rawValue(value))
      return false;
    // The computations an op tessel does not model calls must exist all
    // the same: an undefined name is a parse error, as in XLA.
    static const std::set<std::string_view> kCalling = {"condition",
                                                        "body",
                                                        "to_apply",
                                                        "calls",
                                                        "true_computation",
                                                        "false_computation",
                                                        "branch_computations",
                                                        "called_computations"};
    if (kCalling.count(key)) {
      size_t i = 0;
      while (i < value.size()) {
        while (i < value.size() &&
               (value[i] == '{' || value[i] == '}' || value[i] == ',' ||
                value[i] == ' ' || value[i] == '%'))
          ++i;
        size_t start = i;
        while (i < value.size() && value[i] != ',' && value[i] != '}' &&
               value[i] != ' ')
          ++i;
        if (i > start)
          referencedNames.push_back(
              {value.substr(start, i - start), valuePos + start});
      }
    }
    inst.mutableRawAttributes().push_back({std::string(key), value});
    return true;
  }
  if (key == "dimensions")
    return parseIntList(a.dimensions);
  if (key == "dynamic_slice_sizes")
    return parseIntList(a.dynamicSliceSizes);
  if (key == "lhs_batch_dims")
    return parseIntList(a.dotDimensionNumbers.lhsBatchDims);
  if (key == "rhs_batch_dims")
    return parseIntList(a.dotDimensionNumbers.rhsBatchDims);
  if (key == "lhs_contracting_dims")
    return parseIntList(a.dotDimensionNumbers.lhsContractingDims);
  if (key == "rhs_contracting_dims")
    return parseIntList(a.dotDimensionNumbers.rhsContractingDims);
  if (key == "index")
    return parseSignedInt(a.tupleIndex, "a tuple index");
  if (key == "iota_dimension")
    return parseSignedInt(a.iotaDimension, "a dimension number");
  if (key == "slice")
    return parseSlice(a.slice);
  if (key == "padding")
    return parsePadding(a.padding);
  if (key == "window")
    return parseWindow(a.window);
  if (key == "to_apply" || key == "calls")
    return parseCalledNames(inst);
  size_t valuePos = (skipSpace(), pos);
  std::string_view value = word();
  if (key == "direction") {
    static const std::pair<std::string_view, ComparisonDirection> kDirs[] = {
        {"EQ", ComparisonDirection::Eq}, {"NE", ComparisonDirection::Ne},
        {"GE", ComparisonDirection::Ge}, {"GT", ComparisonDirection::Gt},
        {"LE", ComparisonDirection::Le}, {"LT", ComparisonDirection::Lt}};
    for (const auto &[name, direction] : kDirs)
      if (value == name)
        return (a.comparisonDirection = direction, true);
    return fail(valuePos, "expected a comparison direction (EQ, NE, GE, GT, "
                          "LE, LT) but found " +
                              quoted(value));
  }
  if (key == "type") {
    static const std::pair<std::string_view, ComparisonType> kTypes[] = {
        {"FLOAT", ComparisonType::Float},
        {"TOTALORDER", ComparisonType::TotalOrder},
        {"SIGNED", ComparisonType::Signed},
        {"UNSIGNED", ComparisonType::Unsigned}};
    for (const auto &[name, type] : kTypes)
      if (value == name)
        return (a.comparisonType = type, true);
    return fail(valuePos, "expected a comparison type (FLOAT, TOTALORDER, "
                          "SIGNED, UNSIGNED) but found " +
                              quoted(value));
  }
  // key == "kind"
  static const std::pair<std::string_view, FusionKind> kKinds[] = {
      {"kLoop", FusionKind::Loop},
      {"kInput", FusionKind::Input},
      {"kOutput", FusionKind::Output},
      {"kCustom", FusionKind::Custom}};
  for (const auto &[name, kind] : kKinds)
    if (value == name)
      return (a.fusionKind = kind, true);
  return fail(valuePos,
              "expected a fusion kind (kLoop, kInput, kOutput, kCustom) but "
              "found " +
                  quoted(value));
}

bool HloTextParser::parseCalledNames(HloInstruction &inst) {
  bool braced = consume('{');
  do {
    size_t namePos = (skipSpace(), pos);
    std::string name = name_();
    if (name.empty())
      return fail(namePos, "expected a computation name but found " + found());
    pendingCalls.push_back({&inst, name, namePos});
  } while (braced && consume(','));
  return !braced || expect('}', "',' or '}' after a computation name");
}

bool HloTextParser::resolveCalls(HloModule &module) {
  for (const auto &[name, namePos] : referencedNames)
    if (!module.computation(name))
      return fail(namePos, "use of undefined computation %" + name);
  for (const PendingCall &call : pendingCalls) {
    HloComputation *callee = module.computation(call.name);
    if (!callee)
      return fail(call.pos, "use of undefined computation %" + call.name);
    if (callee == call.instruction->parent())
      return fail(call.pos, "computation %" + call.name + " calls itself");
    call.instruction->appendCalledComputation(callee);
  }
  return true;
}

} // namespace

Expected<std::unique_ptr<HloModule>> parseHloModule(std::string_view text) {
  HloTextParser parser(text);
  return parser.parseModule();
}

Expected<Literal> parseLiteral(std::string_view text, const Shape &shape) {
  HloLexer lexer(text);
  Literal literal;
  if (!lexer.parseLiteralValue(shape, literal))
    return lexer.takeError();
  if (!lexer.atEnd())
    return Error::at(lexer.position(),
                     "expected the end of the literal but found " +
                         lexer.found())
        .locate(text);
  return literal;
}

Expected<std::vector<WindowDim>> parseWindow(std::string_view text) {
  HloLexer lexer(text);
  std::vector<WindowDim> window;
  if (!lexer.parseWindow(window))
    return lexer.takeError();
  if (!lexer.atEnd())
    return Error::at(lexer.position(),
                     "expected the end of the window but found " +
                         lexer.found())
        .locate(text);
  return window;
}

} // namespace tessel
