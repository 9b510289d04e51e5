//===- HloInput.cpp - Reading HLO modules for the commands ----------------===//
#include "HloInput.h"

#include "CommandLine.h"

#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Support/Npy.h"

namespace tessel::cli {

std::unique_ptr<HloModule> loadHloModule(const std::string &path, bool verify) {
  Expected<std::string> text = readFileBytes(path);
  if (!text) {
    fail(text.error().message);
    return nullptr;
  }
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(*text);
  if (!module) {
    fail(path + ":" + module.error().message);
    return nullptr;
  }
  if (verify)
    if (std::optional<Error> problem = verifyHloModule(**module)) {
      fail(path + ":" + problem->message);
      return nullptr;
    }
  return std::move(*module);
}

} // namespace tessel::cli
