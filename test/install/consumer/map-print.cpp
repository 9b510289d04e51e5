//===- map-print.cpp - A consumer of an installed TesselIndexingMap -------===//
//
// Parses a transpose's indexing map in XLA's text form and prints it back:
// (d0, d1) -> (d1, d0), domain: d0 in [0, 9], d1 in [0, 19]
//
//===----------------------------------------------------------------------===//
#include "tessel/Indexing/IndexingMap.h"

#include "mlir/IR/MLIRContext.h"

#include <iostream>

int main() {
  mlir::MLIRContext context;
  tessel::Expected<tessel::IndexingMap> map = tessel::parseIndexingMap(
      "(d0, d1) -> (d1, d0), domain: d0 in [0, 9], d1 in [0, 19]", &context);
  if (!map) {
    std::cerr << map.error().message << "\n";
    return 1;
  }
  std::cout << map->toString() << "\n";
  return 0;
}
