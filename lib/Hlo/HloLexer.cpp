//===- HloLexer.cpp - Tokens of HLO text ----------------------------------===//
#include "HloLexer.h"

#include "tessel/Layout/ShapeParser.h"
#include "tessel/Support/Utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>

namespace tessel {
namespace {

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '-' || c == '$';
}
bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

/// Constants above this many elements are refused (they would not fit in
/// memory anyway); elided `{...}` constants have no such limit.
constexpr int64_t kMaxConstantElements = int64_t(1) << 26;

} // namespace

HloLexer::HloLexer(std::string_view text) : text(text) {
  lineStarts.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      lineStarts.push_back(i + 1);
  // A UTF-8 byte order mark (editors on Windows write one) is not text.
  if (text.substr(0, 3) == "\xEF\xBB\xBF")
    pos = 3;
}

Error HloLexer::takeError() {
  return Error::at(errorPos, std::move(errorMessage)).locate(text);
}

bool HloLexer::fail(size_t at, std::string message) {
  if (!hasError) {
    hasError = true;
    errorPos = std::min(at, text.size());
    errorMessage = std::move(message);
  }
  return false;
}

int HloLexer::lineOf(size_t offset) const {
  return static_cast<int>(
      std::upper_bound(lineStarts.begin(), lineStarts.end(), offset) -
      lineStarts.begin());
}

SourceLocation HloLexer::locationOf(size_t offset) const {
  int line = lineOf(offset);
  // Columns count characters, as editors show them.
  size_t start = lineStarts[line - 1];
  return {line, static_cast<int>(characterColumn(
                    text.substr(start, offset - start), offset - start))};
}

void HloLexer::skipSpace() {
  for (;;) {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
    if (text.substr(pos, 2) == "/*") {
      size_t end = text.find("*/", pos + 2);
      pos = end == std::string_view::npos ? text.size() : end + 2;
    } else if (text.substr(pos, 2) == "//") {
      size_t end = text.find('\n', pos);
      pos = end == std::string_view::npos ? text.size() : end + 1;
    } else {
      return;
    }
  }
}

bool HloLexer::consume(char c) {
  if (peek() != c)
    return false;
  ++pos;
  return true;
}

bool HloLexer::expect(char c, const char *what) {
  if (consume(c))
    return true;
  return fail(pos, std::string("expected ") + what + " but found " + found());
}

std::string HloLexer::found() {
  skipSpace();
  if (pos >= text.size())
    return "the end of the input";
  size_t end = pos;
  while (end < text.size() && end < pos + 24 && isWordChar(text[end]))
    ++end;
  if (end == pos)
    return quoteCharacter(text, pos);
  return quoted(text.substr(pos, end - pos));
}

std::string_view HloLexer::word() {
  skipSpace();
  size_t start = pos;
  while (pos < text.size() && isWordChar(text[pos]))
    ++pos;
  return text.substr(start, pos - start);
}

std::string_view HloLexer::peekWord() {
  size_t save = pos;
  std::string_view w = word();
  pos = save;
  return w;
}

std::string HloLexer::name_() {
  skipSpace();
  size_t save = pos;
  bool percent = pos < text.size() && text[pos] == '%';
  if (percent)
    ++pos;
  if (pos >= text.size() || !isWordChar(text[pos])) {
    pos = save;
    return "";
  }
  return std::string(word());
}

bool HloLexer::parseInt(int64_t &value, const char *what) {
  skipSpace();
  size_t start = pos;
  if (pos >= text.size() || !isDigit(text[pos]))
    return fail(pos, std::string("expected ") + what + " but found " + found());
  value = 0;
  while (pos < text.size() && isDigit(text[pos])) {
    int digit = text[pos] - '0';
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
      return fail(start, std::string(what) + " is too large for 64 bits");
    value = value * 10 + digit;
    ++pos;
  }
  return true;
}

bool HloLexer::parseSignedInt(int64_t &value, const char *what) {
  skipSpace();
  bool negative = pos < text.size() && text[pos] == '-';
  if (negative)
    ++pos;
  if (!parseInt(value, what))
    return false;
  if (negative)
    value = -value;
  return true;
}

bool HloLexer::parseIntList(std::vector<int64_t> &values) {
  values.clear();
  if (!expect('{', "'{' to open a list of integers"))
    return false;
  if (consume('}'))
    return true;
  do {
    int64_t value = 0;
    if (!parseSignedInt(value, "an integer"))
      return false;
    values.push_back(value);
  } while (consume(','));
  return expect('}', "',' or '}' in a list of integers");
}

bool HloLexer::parseSlice(std::vector<SliceDim> &slice) {
  slice.clear();
  if (!expect('{', "'{' to open the slice"))
    return false;
  if (consume('}'))
    return true;
  do {
    SliceDim dim;
    if (!expect('[', "'[' to open a slice dim") ||
        !parseSignedInt(dim.start, "the slice start") ||
        !expect(':', "':' after the slice start") ||
        !parseSignedInt(dim.limit, "the slice limit"))
      return false;
    if (consume(':') && !parseSignedInt(dim.stride, "the slice stride"))
      return false;
    if (!expect(']', "']' or ':' after the slice limit"))
      return false;
    slice.push_back(dim);
  } while (consume(','));
  return expect('}', "',' or '}' in the slice");
}

bool HloLexer::parseWindow(std::vector<WindowDim> &window) {
  if (!expect('{', "'{' to open the window"))
    return false;
  std::set<std::string> seen;
  size_t rank = 0;
  bool haveRank = false;
  while (!consume('}')) {
    size_t keyPos = (skipSpace(), pos);
    std::string key(word());
    if (key != "size" && key != "stride" && key != "pad" &&
        key != "lhs_dilate" && key != "rhs_dilate" && key != "rhs_reversal")
      return fail(keyPos, "expected a window field (size, stride, pad, "
                          "lhs_dilate, rhs_dilate, rhs_reversal) or '}' but "
                          "found " +
                              found());
    if (!seen.insert(key).second)
      return fail(keyPos, "window field " + key + " is given twice");
    if (!expect('=', "'=' after the window field"))
      return false;
    size_t valuePos = (skipSpace(), pos);
    std::vector<std::vector<int64_t>> values;
    if (!parseDimGroups(values, key == "pad" ? 2 : 1))
      return false;
    if (!haveRank) {
      rank = values.size();
      haveRank = true;
      window.assign(rank, WindowDim());
    } else if (values.size() != rank) {
      return fail(valuePos, "window field " + key + " has " +
                                std::to_string(values.size()) +
                                " dims, expected " + std::to_string(rank));
    }
    for (size_t d = 0; d < rank; ++d) {
      WindowDim &dim = window[d];
      const std::vector<int64_t> &v = values[d];
      if (key == "size")
        dim.size = v[0];
      else if (key == "stride")
        dim.stride = v[0];
      else if (key == "pad")
        dim.paddingLow = v[0], dim.paddingHigh = v[1];
      else if (key == "lhs_dilate")
        dim.baseDilation = v[0];
      else if (key == "rhs_dilate")
        dim.windowDilation = v[0];
      else
        dim.reversal = v[0] != 0;
    }
  }
  if (haveRank && !seen.count("size"))
    return fail(pos, "the window has no size=");
  return true;
}

bool HloLexer::parseDimGroups(std::vector<std::vector<int64_t>> &groups,
                              int numbersPerDim) {
  groups.clear();
  skipSpace();
  auto number = [&](int64_t &value) {
    bool negative = pos < text.size() && text[pos] == '-';
    if (negative)
      ++pos;
    if (pos >= text.size() || !isDigit(text[pos]))
      return fail(pos, "expected a number but found " + found());
    value = 0;
    while (pos < text.size() && isDigit(text[pos])) {
      if (value > (std::numeric_limits<int64_t>::max() - 9) / 10)
        return fail(pos, "number is too large for 64 bits");
      value = value * 10 + (text[pos++] - '0');
    }
    value = negative ? -value : value;
    return true;
  };
  if (pos >= text.size() || (!isDigit(text[pos]) && text[pos] != '-'))
    return true; // rank 0
  for (;;) {
    std::vector<int64_t> group;
    for (;;) {
      int64_t value = 0;
      if (!number(value))
        return false;
      group.push_back(value);
      if (pos < text.size() && text[pos] == '_' &&
          static_cast<int>(group.size()) < 3) {
        ++pos;
        continue;
      }
      break;
    }
    if (static_cast<int>(group.size()) < numbersPerDim ||
        (numbersPerDim == 1 && group.size() != 1))
      return fail(pos, numbersPerDim == 1
                           ? "expected one number per dim, joined by 'x'"
                           : "expected low_high or low_high_interior per dim");
    groups.push_back(std::move(group));
    if (pos < text.size() && text[pos] == 'x') {
      ++pos;
      continue;
    }
    return true;
  }
}

bool HloLexer::parsePadding(std::vector<PadDim> &padding) {
  std::vector<std::vector<int64_t>> groups;
  if (!parseDimGroups(groups, 2))
    return false;
  padding.clear();
  for (const std::vector<int64_t> &g : groups)
    padding.push_back({g[0], g[1], g.size() > 2 ? g[2] : 0});
  return true;
}

bool HloLexer::rawValue(std::string &value) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t'))
    ++pos;
  size_t start = pos;
  std::vector<char> closers;
  while (pos < text.size()) {
    char c = text[pos];
    if (c == '"') {
      size_t open = pos++;
      while (pos < text.size() && text[pos] != '"')
        pos += text[pos] == '\\' ? 2 : 1;
      if (pos >= text.size())
        return fail(open, "unterminated string, expected a closing '\"'");
      ++pos;
      continue;
    }
    if (closers.empty() && (c == ',' || c == '\n'))
      break;
    if (c == '{' || c == '[' || c == '(') {
      closers.push_back(c == '{' ? '}' : c == '[' ? ']' : ')');
    } else if (c == '}' || c == ']' || c == ')') {
      if (closers.empty())
        break;
      if (closers.back() != c)
        return fail(pos, std::string("expected '") + closers.back() +
                             "' but found '" + c + "'");
      closers.pop_back();
    }
    ++pos;
  }
  if (!closers.empty())
    return fail(pos, std::string("expected '") + closers.back() +
                         "' before the end of the input");
  size_t end = pos;
  while (end > start && std::isspace(static_cast<unsigned char>(text[end - 1])))
    --end;
  if (end == start)
    return fail(start, "expected a value after '=' but found " + found());
  value = std::string(text.substr(start, end - start));
  return true;
}

bool HloLexer::startsShape() {
  skipSpace();
  if (pos < text.size() && text[pos] == '(')
    return true;
  size_t end = pos;
  while (end < text.size() &&
         std::isalnum(static_cast<unsigned char>(text[end])))
    ++end;
  return end < text.size() && text[end] == '[' &&
         parsePrimitiveType(text.substr(pos, end - pos)).has_value();
}

/// XLA's HLO parser gives an array shape written without a layout the
/// default one (`f32[6]` is `f32[6]{0}`), so that the module prints as
/// XLA prints it. Scalars print without a layout either way.
static void setDefaultLayouts(Shape &shape) {
  if (shape.isTuple()) {
    for (Shape &element : shape.tupleShapes)
      setDefaultLayouts(element);
    return;
  }
  if (shape.isArray() && shape.rank() > 0 && !shape.layout)
    shape.layout = Layout::rowMajor(shape.rank());
}

bool HloLexer::parseShapeHere(Shape &shape, size_t limit) {
  skipSpace();
  size_t at = pos;
  std::string_view view = text.substr(0, std::min(limit, text.size()));
  if (at > view.size())
    return fail(at, "expected a shape but found " + found());
  Expected<Shape> parsed = parseShapeAt(view, at);
  if (!parsed)
    return fail(at, parsed.error().message);
  pos = at;
  shape = std::move(*parsed);
  setDefaultLayouts(shape);
  return true;
}

bool HloLexer::parseLiteralValue(const Shape &shape, Literal &literal) {
  if (shape.isTuple()) {
    if (!expect('(', "'(' to open a tuple literal"))
      return false;
    std::vector<Literal> elements;
    for (size_t i = 0; i < shape.tupleShapes.size(); ++i) {
      if (i && !expect(',', "',' between tuple elements"))
        return false;
      Literal element;
      if (!parseLiteralValue(shape.tupleShapes[i], element))
        return false;
      elements.push_back(std::move(element));
    }
    if (!expect(')', "')' to close the tuple literal"))
      return false;
    literal = Literal::makeTuple(std::move(elements));
    return true;
  }
  size_t start = (skipSpace(), pos);
  if (!shape.isArray())
    return fail(start, "a constant of shape " + shape.toString() +
                           " is not supported, expected an array or a tuple");
  // `{...}`: XLA elided the contents.
  if (shape.rank() > 0 && text.substr(pos, 1) == "{") {
    size_t save = pos++;
    skipSpace();
    if (text.substr(pos, 3) == "...") {
      pos += 3;
      if (!expect('}', "'}' after '...'"))
        return false;
      literal = Literal::makeElided(shape);
      return true;
    }
    pos = save;
  }
  Expected<Literal> created = Literal::create(shape, kMaxConstantElements);
  if (!created)
    return fail(start, created.error().message);
  literal = std::move(*created);
  if (shape.rank() == 0)
    return parseScalar(shape.elementType, literal, 0);
  // XLA accepts a scalar for an array constant (`bf16[17,22] constant(1)`):
  // every element gets its value.
  if ((skipSpace(), pos < text.size() && text[pos] != '{')) {
    if (literal.elementCount() == 0) {
      // Nothing to fill (`f32[0] constant(-1)`): the value is still parsed
      // and checked, into a scalar of the type.
      Expected<Literal> scalar =
          Literal::create(Shape(shape.elementType, {}), 1);
      if (!scalar)
        return fail(start, scalar.error().message);
      return parseScalar(shape.elementType, *scalar, 0);
    }
    if (!parseScalar(shape.elementType, literal, 0))
      return false;
    int64_t width = literal.elementBytes();
    for (int64_t i = 1; i < literal.elementCount(); ++i)
      std::memcpy(literal.data() + i * width, literal.data(), width);
    return true;
  }
  return parseLiteralArray(shape, literal);
}

bool HloLexer::parseLiteralArray(const Shape &shape, Literal &literal) {
  int64_t next = 0;
  auto nested = [&](auto &&self, int64_t dim) -> bool {
    if (!expect('{', "'{' to open a dim of the literal"))
      return false;
    for (int64_t k = 0; k < shape.dims[dim]; ++k) {
      if (k && !consume(',')) {
        return fail(pos, "expected ',' and element " + std::to_string(k) +
                             " of " + std::to_string(shape.dims[dim]) +
                             " in dim " + std::to_string(dim) + " but found " +
                             found());
      }
      bool ok = dim + 1 == shape.rank()
                    ? parseScalar(shape.elementType, literal, next++)
                    : self(self, dim + 1);
      if (!ok)
        return false;
    }
    if (peek() == ',')
      return fail(pos, "too many elements in dim " + std::to_string(dim) +
                           ", expected " + std::to_string(shape.dims[dim]));
    return expect('}', "'}' to close a dim of the literal");
  };
  return nested(nested, 0);
}

bool HloLexer::parseNumberToken(std::string &token) {
  skipSpace();
  size_t start = pos;
  if (pos < text.size() && (text[pos] == '-' || text[pos] == '+'))
    ++pos;
  if (pos < text.size() &&
      std::isalpha(static_cast<unsigned char>(text[pos]))) {
    while (pos < text.size() &&
           std::isalnum(static_cast<unsigned char>(text[pos])))
      ++pos;
  } else {
    while (pos < text.size() && (isDigit(text[pos]) || text[pos] == '.'))
      ++pos;
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '-' || text[pos] == '+'))
        ++pos;
      while (pos < text.size() && isDigit(text[pos]))
        ++pos;
    }
  }
  token = std::string(text.substr(start, pos - start));
  return true;
}

bool HloLexer::parseScalar(PrimitiveType type, Literal &literal,
                           int64_t index) {
  skipSpace();
  size_t start = pos;
  std::string name(primitiveTypeName(type));
  if (type == PrimitiveType::Pred) {
    std::string_view w = word();
    if (w == "true" || w == "1")
      return (literal.setBits(index, 1), true);
    if (w == "false" || w == "0")
      return (literal.setBits(index, 0), true);
    return fail(start, "expected true or false for pred but found " +
                           (w.empty() ? found() : quoted(w)));
  }
  if (isInteger(type)) {
    bool negative = consume('-');
    size_t digits = pos;
    uint64_t magnitude = 0;
    while (pos < text.size() && isDigit(text[pos])) {
      int digit = text[pos++] - '0';
      if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10)
        return fail(start, "integer is too large for " + name);
      magnitude = magnitude * 10 + digit;
    }
    if (pos == digits)
      return fail(pos,
                  "expected an integer for " + name + " but found " + found());
    int bits = bitWidth(type);
    bool fits;
    if (isSignedInteger(type)) {
      uint64_t limit = uint64_t(1) << (bits - 1); // |min|
      fits = negative ? magnitude <= limit : magnitude < limit;
    } else {
      fits = (!negative || magnitude == 0) &&
             (bits == 64 || magnitude < (uint64_t(1) << bits));
    }
    if (!fits)
      return fail(start, "integer " +
                             std::string(text.substr(start, pos - start)) +
                             " is out of range for " + name);
    literal.setBits(index, negative ? uint64_t(0) - magnitude : magnitude);
    if (bits < 64)
      literal.setInt(index, literal.getInt(index)); // mask to the width
    return true;
  }
  auto parseFloat = [&](double &value) {
    size_t at = (skipSpace(), pos);
    std::string token;
    parseNumberToken(token);
    std::string lower = token;
    for (char &c : lower)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool negative = !lower.empty() && lower[0] == '-';
    std::string body =
        lower.substr(!lower.empty() && (lower[0] == '-' || lower[0] == '+'));
    if (body == "inf") {
      value = negative ? -HUGE_VAL : HUGE_VAL;
      return true;
    }
    if (body == "nan") {
      value = std::numeric_limits<double>::quiet_NaN();
      if (negative)
        value = -value;
      if (text.substr(pos, 1) == "(") { // nan(0x...) payload: not kept
        size_t close = text.find(')', pos);
        if (close == std::string_view::npos)
          return fail(pos, "expected ')' after the NaN payload");
        pos = close + 1;
      }
      return true;
    }
    char *end = nullptr;
    value = std::strtod(token.c_str(), &end);
    if (token.empty() || body.empty() || end != token.c_str() + token.size())
      return fail(at, "expected a number for " + name + " but found " +
                          (token.empty() ? found() : quoted(token)));
    return true;
  };
  if (isComplex(type)) {
    double re = 0, im = 0;
    if (!expect('(', "'(' to open a complex number") || !parseFloat(re) ||
        !expect(',', "',' between the real and imaginary parts") ||
        !parseFloat(im) || !expect(')', "')' to close a complex number"))
      return false;
    literal.setComplex(index, {re, im});
    return true;
  }
  double value = 0;
  if (!parseFloat(value))
    return false;
  literal.setDouble(index, value);
  return true;
}

} // namespace tessel
