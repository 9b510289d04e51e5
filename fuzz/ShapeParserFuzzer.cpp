//===- ShapeParserFuzzer.cpp - libFuzzer target for the shape parser ------===//
//
// Any input must parse or fail with a message; a parsed array shape must
// print back to a string that parses to the same shape, and its offsets and
// inverse must agree on a few elements.
//
//===----------------------------------------------------------------------===//
#include "tessel/Layout/ShapeParser.h"
#include "tessel/Layout/TiledLayout.h"

#include <cstdlib>
#include <string>

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Expected<Shape> shape = parseShape(text);
  if (!shape) {
    if (shape.error().message.empty())
      abort();
    return 0;
  }
  Expected<Shape> again = parseShape(shape->toString());
  if (!again || *again != *shape)
    abort();
  if (!shape->isArray() || !shape->dynamicDims.empty())
    return 0;
  Expected<TiledLayout> layout = TiledLayout::get(*shape);
  if (!layout)
    abort(); // the parser accepted it, so it must compile
  if (layout->logicalElements() == 0 || layout->physicalElements() > (1 << 20))
    return 0;
  // The first, last and a middle element map and map back.
  std::vector<int64_t> index(layout->rank());
  for (int pass = 0; pass < 3; ++pass) {
    for (int64_t d = 0; d < layout->rank(); ++d)
      index[d] = pass == 0   ? 0
                 : pass == 1 ? layout->logicalDims()[d] - 1
                             : layout->logicalDims()[d] / 2;
    int64_t offset = layout->offset(index);
    if (offset < 0 || offset >= layout->physicalElements())
      abort();
    std::optional<std::vector<int64_t>> back = layout->logicalIndex(offset);
    if (!back || *back != index)
      abort();
  }
  return 0;
}
