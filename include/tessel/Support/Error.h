//===- Error.h - A failure for people, with where it happened ---*- C++ -*-===//
//
// An `Error` is what went wrong and what was expected, in lower case, plus,
// when the failure is about some text, where in that text:
//
//   - `source`: the file name or the label of the text ("model.hlo",
//     "--shape"); empty when the text has no name (yet).
//   - `span`: the byte range [begin, end) in the source text that the caret
//     and the `~` underline point at; once located in the text (`locate`),
//     also the 1-based line and column (columns count characters, not
//     bytes) and the offending line, or a window of it around the column.
//
// A parser knows byte offsets; whoever holds the whole text locates the
// error in it once, and whoever knows the text's name names it once:
//
//   return Error::at(pos, "expected ']' but found ','");   // a parser
//   return error.locate(text);                             // its entry point
//   cli::fail(error.inSource("--shape"));                  // a tool
//
// `renderError` prints it the way compilers do:
//
//   --shape:1:12: error: minor_to_major {1,1} is not a permutation of 0..1
//   f32[3,5]{1,1}
//              ^
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_ERROR_H
#define TESSEL_SUPPORT_ERROR_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tessel {

/// Where in a source text an error is.
struct SourceSpan {
  /// The byte range [begin, end) in the source text; end == begin is a
  /// point (a caret without underline).
  size_t begin = 0;
  size_t end = 0;
  /// 1-based line and column (in characters); 0 until located.
  int64_t line = 0;
  int64_t column = 0;
  /// The offending line without its newline, or a window of a long line
  /// around the column; `excerptOffset` is the byte offset of its first
  /// byte in the source text. `cutBefore`/`cutAfter`: the line goes on.
  std::string excerpt;
  size_t excerptOffset = 0;
  bool cutBefore = false;
  bool cutAfter = false;
  /// Whether `excerpt` holds the line: false for a span whose line and
  /// column are known without the text (an HLO instruction's location).
  bool hasExcerpt = false;

  bool located() const { return line > 0; }
};

/// A failure with a message meant for people and, optionally, its position.
class [[nodiscard]] Error {
public:
  explicit Error(std::string message) : message(std::move(message)) {}

  /// An error at byte `begin` (to `end`, exclusive) of the text being
  /// parsed; `locate` later turns the offsets into line and column.
  static Error at(size_t begin, std::string message) {
    return at(begin, begin, std::move(message));
  }
  static Error at(size_t begin, size_t end, std::string message) {
    Error error(std::move(message));
    SourceSpan span;
    span.begin = begin;
    span.end = end < begin ? begin : end;
    error.span = std::move(span);
    return error;
  }

  /// An error at a known line and column of a text that is not at hand
  /// (an HLO instruction's, an MLIR location's): printed without the
  /// offending line until `locate` is given the text.
  static Error atLine(int64_t line, int64_t column, std::string message) {
    Error error = at(0, std::move(message));
    error.span->line = line < 1 ? 1 : line;
    error.span->column = column < 1 ? 1 : column;
    return error;
  }

  /// Moves a not yet located span by `delta` bytes: for an error of a
  /// parser that was given a piece of a larger text starting at `delta`.
  Error &shift(size_t delta) &;
  Error &&shift(size_t delta) && { return std::move(shift(delta)); }

  /// Fills in line, column and the excerpt of the span from the whole
  /// source `text` its offsets count in (offsets past its end are clamped
  /// to it); a span made by `atLine` finds its offset from its line and
  /// column. An error without a span, or one whose excerpt is already
  /// there, is left as it is.
  Error &locate(std::string_view text) &;
  Error &&locate(std::string_view text) && { return std::move(locate(text)); }

  /// Names the source text (a file or a label such as "--shape") unless an
  /// inner reader already named it.
  Error &inSource(std::string name) & {
    if (source.empty())
      source = std::move(name);
    return *this;
  }
  Error &&inSource(std::string name) && {
    return std::move(inSource(std::move(name)));
  }

  /// "CONTEXT: MESSAGE", keeping the position: for a caller that adds what
  /// it was doing ("in computation %f: ...").
  Error &prepend(std::string_view context) & {
    message = std::string(context) + message;
    return *this;
  }
  Error &&prepend(std::string_view context) && {
    return std::move(prepend(context));
  }

  /// What went wrong and what was expected, without the position.
  std::string message;
  /// The file name or label of the source text; may be empty.
  std::string source;
  /// Where in the source text; absent for errors that are not about text.
  std::optional<SourceSpan> span;
};

/// The text of `error` for a terminal, as compilers print it:
///
///   SOURCE:LINE:COL: error: MESSAGE      (or "LINE:COL: error: MESSAGE")
///   the offending line (a window of a long line, tabs expanded)
///       ^~~~                             (caret at the column, `~` under
///                                         the rest of the byte range)
///
/// An error with a source but no located span prints
/// "SOURCE: error: MESSAGE"; one with neither prints "PROGRAM: error:
/// MESSAGE" ("error: MESSAGE" for an empty `program`). The message is
/// shortened (to 500 bytes with a position, 2000 without), so that a
/// megabyte of input never becomes a megabyte of error. No trailing
/// newline.
std::string renderError(const Error &error, std::string_view program = "");

} // namespace tessel

#endif // TESSEL_SUPPORT_ERROR_H
