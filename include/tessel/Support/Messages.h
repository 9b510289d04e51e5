//===- Messages.h - Error messages that quote user input --------*- C++ -*-===//
//
// The parsers report "COLUMN: what" about the text they were given; a
// message for people quotes that text and counts the column in characters:
//
//   quoteInput("--shape ", "f32[3,5]{1,1}",
//              "12: minor_to_major {1,1} repeats dim 1, ...")
//   -> "in --shape 'f32[3,5]{1,1}' at column 12: minor_to_major ..."
//
// The command line and the Python binding print the same messages.
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

/// "in LABEL'TEXT' at column N: WHAT" for a parser's "N: WHAT" about `text`
/// (LABEL is e.g. "--shape " or empty; a message without a column gives
/// "in LABEL'TEXT': WHAT"). A long text is quoted as an excerpt around the
/// column and a long message is shortened, so that a megabyte of input does
/// not become a megabyte of error.
std::string quoteInput(const std::string &label, const std::string &text,
                       const std::string &message);

} // namespace tessel

#endif // TESSEL_SUPPORT_MESSAGES_H
