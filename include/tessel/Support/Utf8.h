//===- Utf8.h - Quoting characters of user input in messages ----*- C++ -*-===//
//
// Parsers quote the character they did not expect. Input may be UTF-8: a
// message quotes the whole character, never one byte of it (which would
// make the message itself invalid UTF-8).
//
//   utf8Length("é]", 0)          -> 2
//   characterColumn("é]", 2)     -> 2   (the column of ']')
//   quoteCharacter("\xef]", 0)   -> "byte 0xef (not UTF-8)"
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_UTF8_H
#define TESSEL_SUPPORT_UTF8_H

#include <cstdio>
#include <string>
#include <string_view>

namespace tessel {

/// The bytes of the UTF-8 character at text[pos]: 1 for ASCII, 2 to 4 for a
/// valid multi-byte sequence, 0 for a byte that starts no valid sequence.
/// @pre pos < text.size()
inline size_t utf8Length(std::string_view text, size_t pos) {
  unsigned char lead = static_cast<unsigned char>(text[pos]);
  size_t length = lead < 0x80           ? 1
                  : (lead >> 5) == 0x6  ? 2
                  : (lead >> 4) == 0xe  ? 3
                  : (lead >> 3) == 0x1e ? 4
                                        : 0;
  if (length == 0 || pos + length > text.size())
    return 0;
  for (size_t i = 1; i < length; ++i)
    if ((static_cast<unsigned char>(text[pos + i]) >> 6) != 0x2)
      return 0;
  return length;
}

/// The 1-based column of byte `offset` counted in characters: UTF-8
/// continuation bytes do not start a column ("é]" has ']' at column 2).
/// @pre offset <= text.size()
inline size_t characterColumn(std::string_view text, size_t offset) {
  size_t column = 1;
  for (size_t i = 0; i < offset; ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80)
      ++column;
  return column;
}

/// The character at text[pos] quoted ("'é'"), or "byte 0xNN (not UTF-8)".
/// @pre pos < text.size()
inline std::string quoteCharacter(std::string_view text, size_t pos) {
  size_t length = utf8Length(text, pos);
  if (length == 0) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "byte 0x%02x (not UTF-8)",
                  static_cast<unsigned char>(text[pos]));
    return buffer;
  }
  return "'" + std::string(text.substr(pos, length)) + "'";
}

} // namespace tessel

#endif // TESSEL_SUPPORT_UTF8_H
