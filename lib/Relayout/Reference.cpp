//===- Reference.cpp - The per-element relayout, the tests' oracle --------===//
#include "tessel/Relayout/Relayout.h"

#include "Kernels.h"

namespace tessel {

void relayoutReference(const TiledLayout &from, const TiledLayout &to,
                       const void *srcBuffer, void *dstBuffer) {
  const auto *src = static_cast<const uint8_t *>(srcBuffer);
  auto *dst = static_cast<uint8_t *>(dstBuffer);
  std::memset(dst, 0, to.physicalBytes());
  if (from.logicalElements() == 0)
    return;
  relayout::BitConversion bits = relayout::BitConversion::get(from, to);
  bool bytes = bits.srcBits == bits.dstBits && bits.srcBits % 8 == 0;
  std::vector<int64_t> index(from.rank(), 0);
  for (;;) {
    int64_t s = from.offset(index), d = to.offset(index);
    if (bytes) {
      std::memcpy(dst + d * (bits.dstBits / 8), src + s * (bits.srcBits / 8),
                  bits.srcBits / 8);
    } else {
      uint64_t value = relayout::loadBits(src, s * bits.srcBits, bits.srcBits);
      relayout::orBits(dst, d * bits.dstBits, bits.dstBits,
                       bits.convert(value));
    }
    int64_t i = from.rank() - 1;
    for (; i >= 0; --i) {
      if (++index[i] < from.logicalDims()[i])
        break;
      index[i] = 0;
    }
    if (i < 0)
      return;
  }
}

} // namespace tessel
