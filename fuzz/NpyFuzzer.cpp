//===- NpyFuzzer.cpp - libFuzzer target for the .npy reader ---------------===//
//
// Any bytes must parse or fail with a message; a parsed array must write
// back to bytes that parse to the same array.
//
//===----------------------------------------------------------------------===//
#include "tessel/Support/Npy.h"

#include <cstdlib>
#include <string_view>

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  Expected<NpyArray> array = parseNpy(bytes);
  if (!array) {
    if (array.error().message.empty())
      abort();
    return 0;
  }
  if (static_cast<int64_t>(array->data.size()) !=
      array->itemSize() * array->elementCount())
    abort();
  Expected<NpyArray> again = parseNpy(writeNpy(*array));
  if (!again || again->descr != array->descr || again->shape != array->shape ||
      again->fortranOrder != array->fortranOrder || again->data != array->data)
    abort();
  return 0;
}
