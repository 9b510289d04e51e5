//===- Messages.cpp - Error messages that quote user input ----------------===//
#include "tessel/Support/Messages.h"
#include "tessel/Support/Utf8.h"

#include <algorithm>
#include <cctype>

namespace tessel {

std::string shortenMessage(const std::string &text, size_t limit) {
  if (text.size() <= limit)
    return text;
  size_t head = limit * 3 / 4, tail = limit - head;
  return text.substr(0, head) + " ...(" +
         std::to_string(text.size() - head - tail) + " bytes elided)... " +
         text.substr(text.size() - tail);
}

std::string quoteInput(const std::string &label, const std::string &text,
                       const std::string &message) {
  size_t digits = 0;
  while (digits < message.size() &&
         std::isdigit(static_cast<unsigned char>(message[digits])))
    ++digits;
  std::string rest = message;
  size_t column = 0;
  size_t characterColumnNumber = 0;
  if (digits > 0 && message.compare(digits, 2, ": ") == 0) {
    column = std::stoull(message.substr(0, digits));
    rest = message.substr(digits + 2);
    // The parsers count bytes; people count characters.
    characterColumnNumber =
        characterColumn(text, std::min(column - 1, text.size()));
  }
  std::string excerpt = text;
  constexpr size_t kWindow = 60;
  if (text.size() > 2 * kWindow) {
    size_t center = column ? std::min(column - 1, text.size()) : 0;
    size_t start = center > kWindow ? center - kWindow : 0;
    size_t end = std::min(text.size(), start + 2 * kWindow);
    excerpt = (start ? "..." : "") + text.substr(start, end - start) +
              (end < text.size() ? "..." : "") + "' (" +
              std::to_string(text.size()) + " bytes";
    excerpt += ")";
    return "in " + label + "'" + excerpt +
           (column ? " at column " + std::to_string(characterColumnNumber)
                   : "") +
           ": " + shortenMessage(rest, 500);
  }
  return "in " + label + "'" + excerpt + "'" +
         (column ? " at column " + std::to_string(characterColumnNumber) : "") +
         ": " + shortenMessage(rest, 500);
}

} // namespace tessel
