//===- HloInput.h - Reading HLO modules for the commands --------*- C++ -*-===//
//
// `tessel hlo ...` and `tessel indexing M.hlo` read modules the same way:
// the file, then the parser, then (unless told not to) the verifier, each
// failure reported once with the file name and line:column.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TOOLS_HLOINPUT_H
#define TESSEL_TOOLS_HLOINPUT_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"
#include "tessel/Support/Npy.h"

#include <memory>
#include <string>

namespace tessel::cli {

/// `error` about the module read from `path` (by loadHloModule), named by
/// the path and located in the module's text, so that it shows the
/// offending line.
Error atFile(const std::string &path, Error error);

/// The module in `path`, or nullptr after printing the error (cli::fail).
std::unique_ptr<HloModule> loadHloModule(const std::string &path,
                                         bool verify = true);

/// Whether the compiler, which inlines every call and fusion, would see at
/// most `limit` instructions in `module`; else prints why (cli::fail) and
/// returns false. A computation that calls another twice doubles it: a
/// chain of 60 such computations would inline to 2^60 instructions.
/// @pre the module verifies (calls nest at most 256 deep).
bool checkInlinedSize(const HloModule &module, const std::string &path,
                      int64_t limit = int64_t(1) << 22);

/// An argument for `parameter` from an .npy file: the logical array, or
/// with `logical` false and a non-row-major layout, the physical buffer
/// (dims in physical order; the flat buffer for tiles).
Expected<Literal> readArgument(const std::string &path, const Shape &parameter,
                               bool logical);
/// The .npy array of a result value of `shape` (logical, or its physical
/// buffer as readArgument reads them).
Expected<NpyArray> resultArray(const Literal &value, const Shape &shape,
                               bool logical);

} // namespace tessel::cli

#endif // TESSEL_TOOLS_HLOINPUT_H
