//===- ErrorText.h - Errors as short strings for assertions -----*- C++ -*-===//
//
// The position of an Error is structured (Support/Error.h); tests compare
// it and the message in one string:
//
//   columnText(e)      -> "12: minor_to_major ..."   (one-line inputs)
//   lineColumnText(e)  -> "3:5: %c: ..."             (files)
//
// An error without a located position gives the message alone.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_UNITTESTS_ERRORTEXT_H
#define TESSEL_UNITTESTS_ERRORTEXT_H

#include "tessel/Support/Error.h"

#include <string>

namespace tessel {

inline std::string columnText(const Error &error) {
  if (!error.span || !error.span->located())
    return error.message;
  return std::to_string(error.span->column) + ": " + error.message;
}

inline std::string lineColumnText(const Error &error) {
  if (!error.span || !error.span->located())
    return error.message;
  return std::to_string(error.span->line) + ":" +
         std::to_string(error.span->column) + ": " + error.message;
}

} // namespace tessel

#endif // TESSEL_UNITTESTS_ERRORTEXT_H
