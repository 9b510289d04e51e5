//===- RawAttributes.cpp - Typed reads of verbatim attributes -------------===//
#include "RawAttributes.h"

#include "HloLexer.h"

#include <set>

namespace tessel::eval {
Expected<std::vector<int64_t>> intListAttribute(const HloInstruction &inst,
                                                std::string_view key,
                                                bool required) {
  const std::string *value = inst.rawAttribute(key);
  if (!value) {
    if (required)
      return Error(std::string(hloOpcodeName(inst.opcode())) +
                   " needs the attribute " + std::string(key) + "=");
    return std::vector<int64_t>();
  }
  HloLexer lexer(*value);
  std::vector<int64_t> values;
  if (!lexer.parseIntList(values) || !lexer.atEnd())
    return Error("attribute " + std::string(key) + "=" + *value +
                 ", expected a list of integers such as {0,1}");
  return values;
}

Expected<int64_t> intAttribute(const HloInstruction &inst, std::string_view key,
                               std::optional<int64_t> fallback) {
  const std::string *value = inst.rawAttribute(key);
  if (!value) {
    if (fallback)
      return *fallback;
    return Error(std::string(hloOpcodeName(inst.opcode())) +
                 " needs the attribute " + std::string(key) + "=");
  }
  HloLexer lexer(*value);
  int64_t n = 0;
  if (!lexer.parseSignedInt(n, "an integer") || !lexer.atEnd())
    return Error("attribute " + std::string(key) + "=" + *value +
                 ", expected an integer");
  return n;
}

Expected<bool> boolAttribute(const HloInstruction &inst, std::string_view key) {
  const std::string *value = inst.rawAttribute(key);
  if (!value)
    return false;
  if (*value == "true" || *value == "false")
    return *value == "true";
  return Error("attribute " + std::string(key) + "=" + *value +
               ", expected true or false");
}

Expected<std::vector<WindowDim>> windowAttribute(const HloInstruction &inst,
                                                 int64_t rank) {
  const std::string *value = inst.rawAttribute("window");
  if (!value)
    return std::vector<WindowDim>(rank);
  HloLexer lexer(*value);
  std::vector<WindowDim> window;
  if (!lexer.parseWindow(window))
    return Error("attribute window=" + *value + ": " +
                 lexer.takeError().message);
  if (!lexer.atEnd())
    return Error("attribute window=" + *value + ", expected one window");
  if (static_cast<int64_t>(window.size()) != rank)
    return Error("the window has " + std::to_string(window.size()) +
                 " dims, expected " + std::to_string(rank));
  for (const WindowDim &w : window)
    if (w.size < 0 || w.stride < 1 || w.windowDilation < 1 ||
        w.baseDilation < 1)
      return Error("window " + *value +
                   " has a negative size or a stride or dilation below 1");
  return window;
}

Expected<std::vector<const HloComputation *>>
calleesAttribute(const HloInstruction &inst, std::string_view key) {
  std::vector<const HloComputation *> callees;
  const std::string *value = inst.rawAttribute(key);
  if (!value)
    return callees;
  const HloModule *module = inst.parent() ? inst.parent()->parent() : nullptr;
  HloLexer lexer(*value);
  bool braced = lexer.consume('{');
  if (braced && lexer.consume('}'))
    return callees;
  do {
    std::string name = lexer.name_();
    if (name.empty())
      return Error("attribute " + std::string(key) + "=" + *value +
                   ", expected computation names");
    const HloComputation *callee = module ? module->computation(name) : nullptr;
    if (!callee)
      return Error("use of undefined computation %" + name);
    callees.push_back(callee);
  } while (braced && lexer.consume(','));
  if ((braced && !lexer.consume('}')) || !lexer.atEnd())
    return Error("attribute " + std::string(key) + "=" + *value +
                 ", expected computation names");
  return callees;
}

Status checkDimList(const std::vector<int64_t> &dims, int64_t rank,
                    std::string_view what) {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return Error(std::string(what) + " " + std::to_string(d) +
                   " is out of range, expected 0.." + std::to_string(rank - 1));
    if (!seen.insert(d).second)
      return Error(std::string(what) + " " + std::to_string(d) +
                   " appears twice");
  }
  return {};
}

} // namespace tessel::eval
