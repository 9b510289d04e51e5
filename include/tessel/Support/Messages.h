//===- Messages.h - Bounding the size of messages ---------------*- C++ -*-===//
//
// A message may quote user input; a megabyte of input must not become a
// megabyte of error:
//
//   shortenMessage(std::string(10000, 'a'), 100)
//   -> 75 a's, " ...(9900 bytes elided)... ", 25 a's
//
// renderError (Support/Error.h) shortens every message it prints.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_MESSAGES_H
#define TESSEL_SUPPORT_MESSAGES_H

#include <cstddef>
#include <string>

namespace tessel {

/// At most `limit` bytes of `text`, the middle elided with a note of how
/// many bytes were left out.
std::string shortenMessage(const std::string &text, size_t limit);

} // namespace tessel

#endif // TESSEL_SUPPORT_MESSAGES_H
