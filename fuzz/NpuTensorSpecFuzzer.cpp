//===- NpuTensorSpecFuzzer.cpp - libFuzzer target for NPU tensor specs ----===//
//
// Any input must parse as a list of tensor specs or fail with a message. A
// parsed spec prints back to text that parses to the same spec. When it
// describes a valid local tensor of the seed's configuration whose elements
// do not alias, locate and classify agree on a few elements, and a small
// tensor that fits round-trips through the local-memory simulator.
//
//===----------------------------------------------------------------------===//
#include "tessel/Npu/LocalMemory.h"
#include "tessel/Npu/TensorSpec.h"

#include <cstdlib>
#include <string>

using namespace tessel;

static void checkTensor(const LocalTensor &t) {
  // Aliasing strides give several elements one place; classify then names
  // one of them.
  if (!t.checkNoAliasing())
    return;
  const Dims4 &s = t.shape();
  for (int pass = 0; pass < 3; ++pass) {
    Dims4 i;
    for (int d = 0; d < 4; ++d)
      i[d] = pass == 0 ? 0 : pass == 1 ? s[d] - 1 : s[d] / 2;
    NpuPlace p = t.locate(i);
    ByteInfo info = t.classify(p);
    if (info.kind != ByteKind::Element || info.index != i || info.byte != 0)
      abort();
  }
  if (t.logicalElements() > 4096 || !t.checkAlignment() || !t.checkFits())
    return;
  LocalMemory mem = *LocalMemory::create(t.config());
  int64_t bytes = t.logicalElements() * t.elementBytes();
  std::string in(bytes, '\0'), out(bytes, '\0');
  for (int64_t k = 0; k < bytes; ++k)
    in[k] = static_cast<char>(k * 31 + 7);
  Dims4 strides = continuousStrides(s);
  if (!mem.store(t, reinterpret_cast<const uint8_t *>(in.data()), bytes,
                 strides) ||
      !mem.load(t, reinterpret_cast<uint8_t *>(out.data()), bytes, strides) ||
      in != out)
    abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Expected<std::vector<TensorSpec>> specs = parseTensorSpecList(text);
  if (!specs) {
    if (specs.error().message.empty())
      abort();
    return 0;
  }
  for (TensorSpec &spec : *specs) {
    Expected<TensorSpec> again = parseTensorSpec(printTensorSpec(spec));
    if (!again || !(*again == spec))
      abort();
    if (spec.desc.layout == NpuLayout::Matrix && spec.desc.matrixW == 0)
      spec.desc.matrixW = 1;
    Expected<LocalTensor> t = LocalTensor::get(NpuConfig::seed(), spec.desc);
    if (!t) {
      if (t.error().message.empty())
        abort();
      continue;
    }
    checkTensor(*t);
  }
  return 0;
}
