//===- TestPasses.h - Registration of tessel's test-only passes -*- C++ -*-===//
//
// Passes that exist for lit tests only (they print analyses and maps); the
// tessel-opt driver registers them when tests are built.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TEST_LIB_TESTPASSES_H
#define TESSEL_TEST_LIB_TESTPASSES_H

namespace tessel::test {

/// -test-tessel-indexing-map
void registerTestIndexingMapPass();

/// --tessel-test-divisibility (the name issue 11 asks for)
void registerTestDivisibilityPass();

/// Every test pass.
inline void registerTestPasses() {
  registerTestIndexingMapPass();
  registerTestDivisibilityPass();
}

} // namespace tessel::test

#endif // TESSEL_TEST_LIB_TESTPASSES_H
