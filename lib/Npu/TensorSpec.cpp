//===- TensorSpec.cpp - One-line descriptions of local tensors ------------===//
#include "tessel/Npu/TensorSpec.h"
#include "tessel/Support/Utf8.h"

#include <cctype>

namespace tessel {
namespace {

bool isNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '-';
}

class SpecParser {
public:
  /// Errors hold byte offsets in `text`, not yet located.
  explicit SpecParser(std::string_view text) : text(text) {}

  Expected<TensorSpec> parse();

private:
  bool fail(size_t at, std::string message) {
    if (error.empty()) {
      errorPos = at;
      error = std::move(message);
    }
    return false;
  }
  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool expect(char c, const char *what) {
    if (consume(c))
      return true;
    return fail(pos, std::string("expected '") + c + "' " + what + ", found " +
                         found());
  }
  std::string found() const {
    if (pos >= text.size())
      return "the end";
    return quoteCharacter(text, pos);
  }
  std::string word() {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && isNameChar(text[pos]))
      ++pos;
    std::string out(text.substr(start, pos - start));
    for (char &c : out)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  }
  bool integer(int64_t &value, const char *what);
  bool parseName(TensorSpec &spec);
  bool parseDims(std::vector<int64_t> &dims, std::vector<size_t> &at);
  bool parseItem(TensorSpec &spec, bool &haveLayout, bool &haveMode);
  bool parseMatrixW(TensorSpec &spec);
  bool parseStrides(TensorSpec &spec);
  bool finishShape(TensorSpec &spec, const std::vector<int64_t> &dims,
                   const std::vector<size_t> &at, size_t open);

  std::string_view text;
  size_t pos = 0;
  size_t errorPos = 0;
  std::string error;
};

bool SpecParser::integer(int64_t &value, const char *what) {
  skipSpace();
  size_t start = pos;
  int base = 10;
  if (text.substr(pos, 2) == "0x" || text.substr(pos, 2) == "0X") {
    base = 16;
    pos += 2;
  }
  value = 0;
  size_t digits = pos;
  while (pos < text.size() &&
         (base == 16 ? std::isxdigit(static_cast<unsigned char>(text[pos]))
                     : std::isdigit(static_cast<unsigned char>(text[pos])))) {
    int digit =
        std::isdigit(static_cast<unsigned char>(text[pos]))
            ? text[pos] - '0'
            : std::tolower(static_cast<unsigned char>(text[pos])) - 'a' + 10;
    if (value > (INT64_MAX - digit) / base)
      return fail(start, std::string(what) + " is too large");
    value = value * base + digit;
    ++pos;
  }
  if (pos == digits)
    return fail(start, std::string("expected ") + what + ", found " + found());
  return true;
}

bool SpecParser::parseName(TensorSpec &spec) {
  skipSpace();
  size_t start = pos;
  if (pos >= text.size() || !isNameStart(text[pos]))
    return true;
  while (pos < text.size() && isNameChar(text[pos]))
    ++pos;
  size_t end = pos;
  if (consume('=')) {
    spec.name = std::string(text.substr(start, end - start));
    return true;
  }
  pos = start; // it was the element type
  return true;
}

bool SpecParser::parseDims(std::vector<int64_t> &dims,
                           std::vector<size_t> &at) {
  do {
    skipSpace();
    at.push_back(pos);
    int64_t v;
    if (!integer(v, "a dimension"))
      return false;
    if (v < 1)
      return fail(at.back(), "dimension " + std::to_string(dims.size()) +
                                 " is 0, expected at least 1");
    dims.push_back(v);
  } while (consume(','));
  return expect(']', "after the dimensions");
}

bool SpecParser::parseMatrixW(TensorSpec &spec) {
  if (!consume('('))
    return true; // W left to the advisor
  skipSpace();
  size_t save = pos;
  if (word() != "w" || !consume('='))
    pos = save;
  skipSpace();
  size_t at = pos;
  if (!integer(spec.desc.matrixW, "W"))
    return false;
  if (spec.desc.matrixW < 1)
    return fail(at, "matrix W is 0, expected at least 1");
  return expect(')', "after matrix W");
}

bool SpecParser::parseStrides(TensorSpec &spec) {
  if (!expect('(', "before the strides"))
    return false;
  for (int d = 0; d < 4; ++d) {
    if (d > 0 && !expect(',', "between the 4 strides n,c,h,w"))
      return false;
    if (!integer(spec.desc.strides[d], "a stride"))
      return false;
  }
  return expect(')', "after the 4 strides n,c,h,w");
}

bool SpecParser::parseItem(TensorSpec &spec, bool &haveLayout, bool &haveMode) {
  skipSpace();
  size_t at = pos;
  std::string item = word();
  if (std::optional<StorageMode> mode = parseModeName(item)) {
    if (haveMode)
      return fail(at, "a second storage mode '" + item + "'");
    haveMode = true;
    spec.desc.mode = *mode;
    return true;
  }
  std::optional<NpuLayout> layout =
      item == "strides" ? NpuLayout::Strided : parseLayoutName(item);
  if (!layout)
    return fail(at, (item.empty()
                         ? "expected a layout or mode, found " + found()
                         : "unknown layout or storage mode '" + item + "'") +
                        ", expected aligned, eu, compact, continuous, "
                        "matrix(W), strides(n,c,h,w), 4n, 2n or 2ic");
  if (haveLayout)
    return fail(at, "a second layout '" + item + "'");
  haveLayout = true;
  spec.desc.layout = *layout;
  if (*layout == NpuLayout::Matrix)
    return parseMatrixW(spec);
  if (*layout == NpuLayout::Strided)
    return parseStrides(spec);
  return true;
}

bool SpecParser::finishShape(TensorSpec &spec, const std::vector<int64_t> &dims,
                             const std::vector<size_t> &at, size_t open) {
  bool matrix = spec.desc.layout == NpuLayout::Matrix;
  size_t want = matrix ? 2 : 4;
  if (dims.size() != want)
    return fail(
        dims.size() > want ? at[want] : open,
        std::to_string(dims.size()) + " dimensions, expected " +
            (matrix ? "2 (rows, cols) for a matrix" : "4 (N, C, H, W)"));
  if (matrix) {
    spec.desc.shape = {dims[0], dims[1], 1, 1};
    if (spec.desc.matrixW > dims[1])
      return fail(open, "matrix W is " + std::to_string(spec.desc.matrixW) +
                            ", expected 1.." + std::to_string(dims[1]) +
                            " (the number of columns)");
  } else {
    spec.desc.shape = {dims[0], dims[1], dims[2], dims[3]};
  }
  return true;
}

Expected<TensorSpec> SpecParser::parse() {
  TensorSpec spec;
  auto failed = [&]() { return Error::at(errorPos, error); };
  parseName(spec);
  skipSpace();
  size_t typeAt = pos;
  std::string typeName = word();
  if (typeName.empty()) {
    fail(pos, "expected an element type such as fp32, found " + found());
    return failed();
  }
  Expected<PrimitiveType> type = parseNpuType(typeName);
  if (!type) {
    fail(typeAt, type.error().message);
    return failed();
  }
  spec.desc.type = *type;
  skipSpace();
  size_t open = pos;
  std::vector<int64_t> dims;
  std::vector<size_t> at;
  if (!expect('[', "after the element type") || !parseDims(dims, at))
    return failed();
  bool haveLayout = false, haveMode = false;
  while (consume(':'))
    if (!parseItem(spec, haveLayout, haveMode))
      return failed();
  if (!finishShape(spec, dims, at, open))
    return failed();
  if (consume('@')) {
    spec.hasAddress = true;
    if (!integer(spec.desc.address, "an address"))
      return failed();
  }
  skipSpace();
  if (pos < text.size()) {
    fail(pos, "unexpected " + found() + ", expected ':' or '@' or the end");
    return failed();
  }
  return spec;
}

} // namespace

Expected<TensorSpec> parseTensorSpec(std::string_view text) {
  Expected<TensorSpec> spec = SpecParser(text).parse();
  if (!spec)
    return spec.takeError().locate(text);
  return spec;
}

Expected<std::vector<TensorSpec>> parseTensorSpecList(std::string_view text) {
  std::vector<TensorSpec> specs;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of(";\n", start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view part = text.substr(start, end - start);
    size_t hash = part.find('#');
    if (hash != std::string_view::npos)
      part = part.substr(0, hash);
    if (part.find_first_not_of(" \t\r") != std::string_view::npos) {
      Expected<TensorSpec> spec = SpecParser(part).parse();
      if (!spec)
        return spec.takeError().shift(start).locate(text);
      specs.push_back(std::move(*spec));
    }
    start = end + 1;
  }
  return specs;
}

std::string printTensorSpec(const TensorSpec &spec) {
  const TensorDesc &d = spec.desc;
  std::string out = spec.name.empty() ? "" : spec.name + "=";
  out += npuTypeName(d.type) + "[";
  int rank = d.layout == NpuLayout::Matrix ? 2 : 4;
  for (int i = 0; i < rank; ++i)
    out += (i ? "," : "") + std::to_string(d.shape[i]);
  out +=
      "]:" + std::string(d.layout == NpuLayout::Strided ? "strides"
                                                        : layoutName(d.layout));
  if (d.layout == NpuLayout::Matrix && d.matrixW > 0)
    out += "(" + std::to_string(d.matrixW) + ")";
  if (d.layout == NpuLayout::Strided)
    out += "(" + std::to_string(d.strides[0]) + "," +
           std::to_string(d.strides[1]) + "," + std::to_string(d.strides[2]) +
           "," + std::to_string(d.strides[3]) + ")";
  if (d.mode != StorageMode::Normal)
    out += ":" + std::string(modeName(d.mode));
  if (spec.hasAddress)
    out += "@" + std::to_string(d.address);
  return out;
}

} // namespace tessel
