//===- Npy.cpp - Read and write NumPy .npy files --------------------------===//
#include "tessel/Support/Npy.h"

#include "tessel/Support/MathExtras.h"

#include <cctype>

namespace tessel {

int64_t NpyArray::itemSize() const {
  size_t i = 0;
  while (i < descr.size() &&
         !std::isdigit(static_cast<unsigned char>(descr[i])))
    ++i;
  if (i == descr.size())
    return 0;
  int64_t size = 0;
  for (; i < descr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(descr[i])) || size > 1 << 20)
      return 0;
    size = size * 10 + (descr[i] - '0');
  }
  return size;
}

int64_t NpyArray::elementCount() const {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

namespace {

/// A cursor over the header's Python dict literal.
struct HeaderParser {
  std::string_view text;
  size_t pos = 0;

  void skip() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool consume(char c) {
    skip();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool string(std::string &out) {
    skip();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string_view::npos)
      return false;
    out = std::string(text.substr(pos, end - pos));
    pos = end + 1;
    return true;
  }
  bool word(std::string_view w) {
    skip();
    if (text.substr(pos, w.size()) != w)
      return false;
    pos += w.size();
    return true;
  }
  bool integer(int64_t &value) {
    skip();
    size_t start = pos;
    value = 0;
    while (pos < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[pos]))) {
      if (value > (INT64_MAX - 9) / 10)
        return false;
      value = value * 10 + (text[pos++] - '0');
    }
    return pos > start;
  }
};

/// An error in the header at byte `byte` of the file. A .npy file is
/// binary: the position is the byte, as line 1 and column byte + 1, and no
/// line of it is shown.
Error headerError(const std::string &what, size_t byte) {
  return Error::atLine(1, static_cast<int64_t>(byte) + 1,
                       "npy header: " + what);
}

} // namespace

Expected<NpyArray> parseNpy(std::string_view bytes) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view(kMagic, 6))
    return Error("not a .npy file: it does not start with \\x93NUMPY");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(bytes[8]) |
                   static_cast<unsigned char>(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return Error("npy file ends inside its header length");
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength =
          headerLength << 8 | static_cast<unsigned char>(bytes[8 + i]);
    headerStart = 12;
  } else {
    return Error("npy format version " + std::to_string(major) +
                 " is not supported, expected 1, 2 or 3");
  }
  if (bytes.size() < headerStart + headerLength)
    return Error("npy file ends inside its header");
  HeaderParser p{bytes.substr(headerStart, headerLength)};
  NpyArray array;
  bool haveDescr = false, haveOrder = false, haveShape = false;
  if (!p.consume('{'))
    return headerError("expected '{'", headerStart + p.pos);
  while (!p.consume('}')) {
    std::string key;
    if (!p.string(key) || !p.consume(':'))
      return headerError("expected a quoted key and ':'", headerStart + p.pos);
    if (key == "descr") {
      if (!p.string(array.descr))
        return headerError("expected a string for 'descr'",
                           headerStart + p.pos);
      haveDescr = true;
    } else if (key == "fortran_order") {
      if (p.word("True"))
        array.fortranOrder = true;
      else if (p.word("False"))
        array.fortranOrder = false;
      else
        return headerError("expected True or False for 'fortran_order'",
                           headerStart + p.pos);
      haveOrder = true;
    } else if (key == "shape") {
      if (!p.consume('('))
        return headerError("expected '(' for 'shape'", headerStart + p.pos);
      while (!p.consume(')')) {
        int64_t dim;
        if (!p.integer(dim))
          return headerError("expected a non-negative integer in 'shape'",
                             headerStart + p.pos);
        array.shape.push_back(dim);
        if (!p.consume(',') &&
            !(p.skip(), p.pos < p.text.size() && p.text[p.pos] == ')'))
          return headerError("expected ',' or ')' in 'shape'",
                             headerStart + p.pos);
      }
      haveShape = true;
    } else {
      return headerError("unknown key '" + key + "'", headerStart + p.pos);
    }
    p.consume(',');
  }
  if (!haveDescr || !haveOrder || !haveShape)
    return headerError("expected the keys 'descr', 'fortran_order' and "
                       "'shape'",
                       headerStart + p.pos);
  int64_t itemSize = array.itemSize();
  if (itemSize == 0)
    return headerError("cannot tell the element size of descr '" + array.descr +
                           "'",
                       headerStart + p.pos);
  int64_t count = 1;
  for (int64_t d : array.shape) {
    std::optional<int64_t> product = checkedMul(count, d);
    if (!product)
      return headerError("the shape's element count overflows",
                         headerStart + p.pos);
    count = *product;
  }
  std::optional<int64_t> expected = checkedMul(count, itemSize);
  if (!expected)
    return headerError("the data size overflows", headerStart + p.pos);
  size_t dataStart = headerStart + headerLength;
  if (bytes.size() - dataStart != static_cast<uint64_t>(*expected))
    return Error("npy data holds " + std::to_string(bytes.size() - dataStart) +
                 " bytes, expected " + std::to_string(*expected) + " for " +
                 std::to_string(count) + " elements of '" + array.descr + "'");
  array.data = std::string(bytes.substr(dataStart));
  return array;
}

Expected<NpyArray> readNpyFile(const std::string &path, int64_t maxBytes,
                               const std::string &why) {
  Expected<std::string> bytes = readFileBytes(path, maxBytes, why);
  if (!bytes)
    return bytes.takeError();
  Expected<NpyArray> array = parseNpy(*bytes);
  if (!array)
    return array.takeError().inSource(path == "-" ? "<stdin>" : path);
  return array;
}

std::string writeNpy(const NpyArray &array) {
  std::string header = "{'descr': '" + array.descr + "', 'fortran_order': " +
                       (array.fortranOrder ? "True" : "False") + ", 'shape': (";
  for (size_t i = 0; i < array.shape.size(); ++i)
    header += std::to_string(array.shape[i]) + ", ";
  if (array.shape.size() > 1)
    header.resize(header.size() - 2);
  else if (array.shape.size() == 1)
    header.resize(header.size() - 1);
  header += "), }";
  // Pad with spaces to a multiple of 64 bytes, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out += array.data;
  return out;
}

} // namespace tessel
