//===- HloInput.cpp - Reading HLO modules for the commands ----------------===//
#include "HloInput.h"
#include "CommandLine.h"

#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Hlo/LiteralArrays.h"
#include "tessel/Layout/TiledLayout.h"
#include "tessel/Support/MathExtras.h"
#include "tessel/Support/Npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

namespace tessel::cli {

namespace {
/// The text of the modules read so far, by path: errors found after
/// parsing (verifier, evaluator, compiler) show the offending line.
std::map<std::string, std::string> &moduleTexts() {
  static std::map<std::string, std::string> texts;
  return texts;
}
} // namespace

Error atFile(const std::string &path, Error error) {
  auto text = moduleTexts().find(path);
  if (text != moduleTexts().end())
    error.locate(text->second);
  return std::move(error).inSource(path == "-" ? "<stdin>" : path);
}

std::unique_ptr<HloModule> loadHloModule(const std::string &path, bool verify) {
  Expected<std::string> text = readFileBytes(path);
  if (!text) {
    fail(text.error());
    return nullptr;
  }
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(*text);
  moduleTexts()[path] = std::move(*text);
  if (!module) {
    fail(atFile(path, module.takeError()));
    return nullptr;
  }
  if (verify)
    if (Status problem = verifyHloModule(**module); !problem) {
      fail(atFile(path, problem.takeError()));
      return nullptr;
    }
  return std::move(*module);
}

bool checkInlinedSize(const HloModule &module, const std::string &path,
                      int64_t limit) {
  if (Status tooLarge = tessel::checkInlinedSize(module, limit); !tooLarge) {
    fail(atFile(path, tooLarge.takeError()));
    return false;
  }
  return true;
}

Expected<Literal> readArgument(const std::string &file, const Shape &param,
                               bool logical) {
  // Messages name the file, or standard input for `-`.
  std::string path = file == "-" ? "standard input" : file;
  if (!param.isArray())
    return Error(path + ": parameter shape " + param.toString() +
                 " is not an array");
  std::vector<int64_t> want = param.dims;
  if (readsPhysical(param, logical)) {
    Expected<std::vector<int64_t>> dims = physicalArrayDims(param);
    if (!dims)
      return Error(path + ": " + dims.error().message);
    want = *dims;
  }
  // The file holds a header and the array: refuse anything much larger
  // before reading it (a device such as /dev/zero never ends).
  std::optional<int64_t> dataBytes = byteWidth(param.elementType);
  for (int64_t d : want)
    if (dataBytes)
      dataBytes = checkedMul(*dataBytes, d);
  int64_t limit = kMaxInputBytes;
  std::string why;
  if (dataBytes && *dataBytes < INT64_MAX - (1 << 20)) {
    limit = *dataBytes + (1 << 20);
    why = param.toString() + " takes " + std::to_string(*dataBytes) +
          " bytes of data and a .npy header";
  }
  Expected<NpyArray> array = readNpyFile(file, limit, why);
  if (!array)
    return array.takeError();
  return literalFromArray(*array, param, logical, path);
}

Expected<NpyArray> resultArray(const Literal &value, const Shape &shape,
                               bool logical) {
  return arrayFromLiteral(value, shape, logical);
}

} // namespace tessel::cli
