//===- Bindings.h - Shared helpers of the Python binding --------*- C++ -*-===//
//
// The extension tessel._tessel binds tessel's libraries for the Python
// package `tessel` (python/tessel). Each area has one bindX() function in
// its own file; the helpers here turn tessel's Expected<T> and Status into a
// value or a Python ValueError carrying the text the command line prints
// (renderError): for an error with a position, "SOURCE:LINE:COL: error:
// MESSAGE", the offending line and a caret; else the message that follows
// "tessel: error: ".
//
// This is the only code of tessel compiled with exceptions: nanobind reports
// errors to Python by throwing. An exception is thrown only here, never
// through a frame of tessel's libraries or of LLVM (built without them).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PYTHON_BINDINGS_H
#define TESSEL_PYTHON_BINDINGS_H

#include "tessel/Hlo/Literal.h"
#include "tessel/Support/Expected.h"
#include "tessel/Support/Messages.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tessel::python {

namespace nb = nanobind;

/// Raises ValueError(message).
[[noreturn]] inline void raise(const std::string &message) {
  throw nb::value_error(message.c_str());
}

/// The text of the ValueError for `error`, as the command line prints it.
inline std::string describe(const Error &error) {
  if (!error.source.empty() || (error.span && error.span->located()))
    return renderError(error);
  return shortenMessage(error.message, 2000);
}

/// Raises `error` as a ValueError.
[[noreturn]] inline void raise(const Error &error) { raise(describe(error)); }

/// The value of `expected`, or raises its error as a ValueError.
template <typename T> T unwrap(Expected<T> expected) {
  if (!expected)
    raise(expected.error());
  return std::move(*expected);
}

/// Raises the error a library function reported, if any.
inline void check(const Status &status) {
  if (!status)
    raise(status.error());
}

/// As unwrap and check, for an error about the module `text` (found by the
/// verifier or the compiler): it is shown with its line, as the command line
/// shows it.
template <typename T> T unwrap(Expected<T> expected, std::string_view text) {
  if (!expected)
    raise(expected.takeError().locate(text));
  return std::move(*expected);
}
inline void check(Status status, std::string_view text) {
  if (!status)
    raise(status.takeError().locate(text));
}

/// The bytes of a C-contiguous numpy array, viewed in place as 1-D uint8.
using ByteView =
    nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
/// An array handed over by the Python package: its element type as XLA
/// spells it ("bf16"), its dims and its bytes in C order.
using ArrayArgument = std::tuple<std::string, std::vector<int64_t>, ByteView>;

/// The argument for `parameter` (the checks and messages of
/// literalFromArray; `name` is e.g. "argument 0").
Literal argumentLiteral(const ArrayArgument &array, const Shape &parameter,
                        bool logical, const std::string &name);
/// A result as (element type, dims, 1-D uint8 numpy array that owns the
/// bytes), for the package to view with the right dtype.
nb::tuple resultTuple(const Literal &value, const Shape &shape, bool logical);

void bindLayout(nb::module_ &m);
void bindRelayout(nb::module_ &m);
void bindHlo(nb::module_ &m);
void bindCodegen(nb::module_ &m);
void bindNpu(nb::module_ &m);
void bindAnalysis(nb::module_ &m);

} // namespace tessel::python

#endif // TESSEL_PYTHON_BINDINGS_H
