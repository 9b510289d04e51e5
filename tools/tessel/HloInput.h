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

#include <memory>
#include <string>

namespace tessel::cli {

/// The module in `path`, or nullptr after printing the error (cli::fail).
std::unique_ptr<HloModule> loadHloModule(const std::string &path,
                                         bool verify = true);

} // namespace tessel::cli

#endif // TESSEL_TOOLS_HLOINPUT_H
