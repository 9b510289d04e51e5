//===- Error.cpp - Locating and rendering errors --------------------------===//
#include "tessel/Support/Error.h"
#include "tessel/Support/Messages.h"
#include "tessel/Support/Utf8.h"

#include <algorithm>

namespace tessel {

namespace {

/// Characters of context shown on each side of the column of a long line.
constexpr size_t kContextCharacters = 60;
/// Tab stops of the rendered line, as terminals and compilers use them.
constexpr size_t kTabStop = 8;
/// The most bytes of a message that are printed: a parser's message (one
/// with a position) quotes its input, so it gets less room.
constexpr size_t kMessageLimit = 2000;
constexpr size_t kPositionedMessageLimit = 500;

/// The byte offset `count` characters before `offset`, not before `floor`.
size_t backCharacters(std::string_view text, size_t offset, size_t floor,
                      size_t count) {
  while (offset > floor && count > 0) {
    --offset;
    while (offset > floor &&
           (static_cast<unsigned char>(text[offset]) & 0xc0) == 0x80)
      --offset;
    --count;
  }
  return offset;
}

/// The byte offset `count` characters after `offset`, not after `ceiling`.
size_t forwardCharacters(std::string_view text, size_t offset, size_t ceiling,
                         size_t count) {
  while (offset < ceiling && count > 0) {
    ++offset;
    while (offset < ceiling &&
           (static_cast<unsigned char>(text[offset]) & 0xc0) == 0x80)
      ++offset;
    --count;
  }
  return offset;
}

} // namespace

Error &Error::shift(size_t delta) & {
  if (span && !span->located()) {
    span->begin += delta;
    span->end += delta;
  }
  return *this;
}

Error &Error::locate(std::string_view text) & {
  if (!span || span->hasExcerpt)
    return *this;
  SourceSpan &s = *span;
  if (s.located()) {
    // Known line and column: find the offset they name.
    size_t offset = 0;
    for (int64_t line = 1; line < s.line && offset < text.size(); ++line) {
      size_t newline = text.find('\n', offset);
      offset = newline == std::string_view::npos ? text.size() : newline + 1;
    }
    size_t lineEnd = text.find('\n', offset);
    if (lineEnd == std::string_view::npos)
      lineEnd = text.size();
    s.begin = s.end = forwardCharacters(text, offset, lineEnd,
                                        static_cast<size_t>(s.column - 1));
  }
  s.begin = std::min(s.begin, text.size());
  s.end = std::clamp(s.end, s.begin, text.size());
  // The line that holds `begin` (an error at a newline is at the end of the
  // line that the newline ends).
  size_t lineStart = 0;
  if (s.begin > 0) {
    size_t newline = text.rfind('\n', s.begin - 1);
    lineStart = newline == std::string_view::npos ? 0 : newline + 1;
  }
  size_t lineEnd = text.find('\n', s.begin);
  if (lineEnd == std::string_view::npos)
    lineEnd = text.size();
  if (lineEnd > lineStart && text[lineEnd - 1] == '\r')
    --lineEnd;
  s.line = static_cast<int64_t>(
               std::count(text.begin(), text.begin() + lineStart, '\n')) +
           1;
  std::string_view line = text.substr(lineStart, lineEnd - lineStart);
  size_t inLine = std::min(s.begin - lineStart, line.size());
  s.column = static_cast<int64_t>(characterColumn(line, inLine));
  // A window of a long line: so many characters on each side of the column.
  size_t from = backCharacters(line, inLine, 0, kContextCharacters);
  size_t before = characterColumn(line.substr(from), inLine - from) - 1;
  size_t to = forwardCharacters(line, inLine, line.size(),
                                2 * kContextCharacters - before);
  s.cutBefore = from > 0;
  s.cutAfter = to < line.size();
  s.excerpt = std::string(line.substr(from, to - from));
  s.excerptOffset = lineStart + from;
  s.hasExcerpt = true;
  return *this;
}

std::string renderError(const Error &error, std::string_view program) {
  std::string out;
  const SourceSpan *span =
      error.span && error.span->located() ? &*error.span : nullptr;
  if (span) {
    if (!error.source.empty())
      out += error.source + ":";
    out +=
        std::to_string(span->line) + ":" + std::to_string(span->column) + ": ";
  } else if (!error.source.empty()) {
    out += error.source + ": ";
  } else if (!program.empty()) {
    out += std::string(program) + ": ";
  }
  out += "error: " + shortenMessage(error.message, error.span
                                                       ? kPositionedMessageLimit
                                                       : kMessageLimit);
  if (!span || !span->hasExcerpt)
    return out;

  // The line as a terminal shows it: tabs expanded to the next tab stop,
  // control characters and bytes that are not UTF-8 shown as '?'. `cells`
  // counts the display columns; `caret`/`caretEnd` are the display columns
  // of the span's first byte and of the end of its range.
  std::string shown = span->cutBefore ? "..." : "";
  size_t cells = shown.size();
  const std::string &line = span->excerpt;
  size_t begin = span->begin - span->excerptOffset;
  size_t end = std::min(span->end - span->excerptOffset, line.size());
  size_t caret = std::string::npos, caretEnd = std::string::npos;
  size_t i = 0;
  while (i < line.size()) {
    if (i >= begin && caret == std::string::npos)
      caret = cells;
    if (i >= end && caretEnd == std::string::npos && i > begin)
      caretEnd = cells;
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == '\t') {
      size_t next = (cells / kTabStop + 1) * kTabStop;
      shown.append(next - cells, ' ');
      cells = next;
      ++i;
      continue;
    }
    size_t length = utf8Length(line, i);
    if (length == 0 || c < 0x20 || c == 0x7f) {
      shown += '?';
      length = length == 0 ? 1 : length;
    } else {
      shown.append(line, i, length);
    }
    ++cells;
    i += length;
  }
  if (caret == std::string::npos)
    caret = cells; // at the end of the line (e.g. "expected ']'")
  if (caretEnd == std::string::npos)
    caretEnd = end > begin ? cells : caret + 1;
  if (span->cutAfter)
    shown += "...";
  out += "\n" + shown + "\n" + std::string(caret, ' ') + "^";
  if (caretEnd > caret + 1)
    out += std::string(caretEnd - caret - 1, '~');
  return out;
}

} // namespace tessel
