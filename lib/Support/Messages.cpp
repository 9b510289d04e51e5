//===- Messages.cpp - Bounding the size of messages ----------------===//
#include "tessel/Support/Messages.h"

namespace tessel {

std::string shortenMessage(const std::string &text, size_t limit) {
  if (text.size() <= limit)
    return text;
  size_t head = limit * 3 / 4, tail = limit - head;
  return text.substr(0, head) + " ...(" +
         std::to_string(text.size() - head - tail) + " bytes elided)... " +
         text.substr(text.size() - tail);
}

} // namespace tessel
