//===- IndexingMapParserFuzzer.cpp - libFuzzer target for indexing maps ---===//
//
// Any input must parse or fail with a message. A parsed map must print to
// text that parses back. When its domain is small, the re-parsed and the
// simplified maps must agree with it at every point (a simplification rule
// that changes a value is a bug, not a fuzzing artefact).
//
//===----------------------------------------------------------------------===//
#include "tessel/Indexing/BruteForce.h"
#include "tessel/Indexing/IndexingMap.h"

#include "mlir/IR/MLIRContext.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace tessel;

namespace {

/// Points in the box of dims and symbols, or nullopt when it is large.
bool smallDomain(const IndexingMap &map) {
  llvm::SmallVector<Interval> box = map.getDimBounds();
  for (const Interval &bounds : map.getSymbolBounds())
    box.push_back(bounds);
  std::optional<int64_t> points = countBoxPoints(box);
  return points && *points <= 512;
}

[[noreturn]] void fail(const std::string &what, const std::string &text) {
  std::fprintf(stderr, "%s\ninput: %s\n", what.c_str(), text.c_str());
  abort();
}

/// Whether `text` has an integer of 10 digits or more.
bool hasHugeConstant(const std::string &text) {
  size_t run = 0;
  for (char c : text) {
    run = c >= '0' && c <= '9' ? run + 1 : 0;
    if (run >= 10)
      return true;
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext context;
  std::string text(reinterpret_cast<const char *>(data), size);
  Expected<IndexingMap> map = parseIndexingMap(text, &context);
  if (!map) {
    if (map.error().message.empty())
      fail("parse failed without a message", text);
    return 0;
  }
  // A known-empty map prints as XLA's `KNOWN EMPTY`, which has no dims to
  // parse back.
  if (map->isKnownEmpty())
    return 0;
  std::string printed = map->toString();
  Expected<IndexingMap> again = parseIndexingMap(printed, &context);
  if (!again)
    fail("printed map does not parse: " + again.error().message + "\n" +
             printed,
         text);
  // MLIR keeps sums in the order they were built, so `s0 + 2 + d0 + s0`
  // may print differently once re-parsed: compare values, not text.
  if (!smallDomain(*map))
    return 0;
  Expected<BruteForceComparison> reparsed =
      compareByEnumeration(*map, *again, 4096);
  if (reparsed && !reparsed->equal)
    fail("printed map means something else " + reparsed->mismatch +
             "\nprinted: " + printed,
         text);
  // A map evaluates in int64 and has no value where that overflows
  // (d0 * 666666666666666664 at d0 = 14), while the simplifier reasons in
  // exact arithmetic and may remove the overflow (dividing the sum by 8):
  // compare only maps whose constants have fewer than 10 digits, so that
  // the points of a small domain do not overflow.
  if (hasHugeConstant(printed))
    return 0;
  IndexingMap simplified = map->simplified();
  Expected<BruteForceComparison> same =
      compareByEnumeration(*map, simplified, 4096);
  if (same && !same->equal)
    fail("simplification changed the map " + same->mismatch +
             "\nbefore: " + printed + "\nafter:  " + simplified.toString(),
         text);
  return 0;
}
