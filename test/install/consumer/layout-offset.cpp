//===- layout-offset.cpp - A consumer of an installed TesselLayout --------===//
//
// Prints where element (2,3) of f32[3,5]{1,0:T(2,2)} lands (figure 1 of XLA's
// tiled-layout document): offset 17 of a 24-element buffer.
//
//===----------------------------------------------------------------------===//
#include "tessel/Layout/ShapeParser.h"
#include "tessel/Layout/TiledLayout.h"

#include <iostream>

int main() {
  const char *text = "f32[3,5]{1,0:T(2,2)}";
  tessel::Expected<tessel::Shape> shape = tessel::parseShape(text);
  if (!shape) {
    std::cerr << shape.error().message << "\n";
    return 1;
  }
  tessel::Expected<tessel::TiledLayout> layout =
      tessel::TiledLayout::get(*shape);
  if (!layout) {
    std::cerr << layout.error().message << "\n";
    return 1;
  }
  std::cout << text << ": element (2,3) is at offset " << layout->offset({2, 3})
            << " of " << layout->physicalElements() << "\n";
  return 0;
}
