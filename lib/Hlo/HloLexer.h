//===- HloLexer.h - Tokens of HLO text (private to lib/Hlo) -----*- C++ -*-===//
//
// The character-level layer of the HLO parser: whitespace and comments,
// words, integers, lists, verbatim attribute values, shapes (through the
// layout core's parseShapeAt) and literals, with the first error kept
// together with its offset.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_HLO_HLOLEXER_H
#define TESSEL_LIB_HLO_HLOLEXER_H

#include "tessel/Hlo/HloInstruction.h"
#include "tessel/Support/Expected.h"

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

class HloLexer {
public:
  explicit HloLexer(std::string_view text);

  bool failed() const { return hasError; }
  /// The first error, located in the text. @pre failed()
  Error takeError();
  size_t position() const { return pos; }

  /// Skips spaces, new lines, `/* */` and `//` comments.
  void skipSpace();
  bool atEnd() {
    skipSpace();
    return pos >= text.size();
  }
  char peek() {
    skipSpace();
    return pos < text.size() ? text[pos] : '\0';
  }
  bool consume(char c);
  bool expect(char c, const char *what);
  /// The next token for messages: `'abc'` or "the end of the input".
  std::string found();
  static std::string quoted(std::string_view s) {
    return "'" + std::string(s) + "'";
  }

  /// [A-Za-z0-9_.$-]+ (empty when none).
  std::string_view word();
  std::string_view peekWord();
  /// A name: an optional '%' and a word; the name without '%'.
  std::string name_();

  bool parseInt(int64_t &value, const char *what);
  bool parseSignedInt(int64_t &value, const char *what);
  /// `{1,2,3}` (possibly empty).
  bool parseIntList(std::vector<int64_t> &values);
  /// `{[0:2], [1:5:2]}`.
  bool parseSlice(std::vector<SliceDim> &slice);
  /// `0_0x1_-1_2`: dims joined by 'x', 2 or 3 numbers each.
  bool parsePadding(std::vector<PadDim> &padding);
  /// `AxBxC` (numbersPerDim 1) or `a_bxc_d` (2).
  bool parseDimGroups(std::vector<std::vector<int64_t>> &groups,
                      int numbersPerDim);
  /// `{size=2x2 stride=2x1 pad=0_1x0_0 lhs_dilate=.. rhs_dilate=..
  /// rhs_reversal=..}` (reduce-window's and convolution's window).
  bool parseWindow(std::vector<WindowDim> &window);
  /// The text of an attribute value up to the next ',' or new line outside
  /// brackets and strings.
  bool rawValue(std::string &value);

  /// Whether the next token starts a shape (`f32[`, `(`).
  bool startsShape();
  /// A shape through the layout core; `limit` bounds the text it may read.
  bool parseShapeHere(Shape &shape, size_t limit = std::string_view::npos);
  /// A literal of `shape` (constant contents).
  bool parseLiteralValue(const Shape &shape, Literal &literal);

  int lineOf(size_t offset) const;
  SourceLocation locationOf(size_t offset) const;
  bool fail(size_t at, std::string message);

protected:
  bool parseLiteralArray(const Shape &shape, Literal &literal);
  bool parseScalar(PrimitiveType type, Literal &literal, int64_t index);
  bool parseNumberToken(std::string &token);

  std::string_view text;
  size_t pos = 0;
  bool hasError = false;
  size_t errorPos = 0;
  std::string errorMessage;
  std::vector<size_t> lineStarts;
};

} // namespace tessel

#endif // TESSEL_LIB_HLO_HLOLEXER_H
