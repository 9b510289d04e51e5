//===- HostTest.cpp - HostBuffer and the machine's limits -----------------===//
#include "tessel/Support/Host.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace tessel;

namespace {

bool allZero(const HostBuffer &b) {
  return std::all_of(b.data(), b.data() + b.size(),
                     [](uint8_t v) { return v == 0; });
}

/// The AnonHugePages line of /proc/self/smaps_rollup in KiB, -1 if absent.
int64_t anonHugeKiB() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("AnonHugePages:", 0) == 0) {
      std::istringstream fields(line.substr(14));
      int64_t kib = -1;
      fields >> kib;
      return kib;
    }
  return -1;
}

TEST(HostBufferTest, SmallBuffersAreZeroedAndLineAligned) {
  for (int64_t bytes : {1, 63, 64, 1000, 4095, 1 << 20}) {
    HostBuffer b(bytes);
    ASSERT_NE(b.data(), nullptr) << bytes;
    EXPECT_EQ(b.size(), bytes);
    EXPECT_FALSE(b.mapped());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u) << bytes;
    EXPECT_TRUE(allZero(b)) << bytes;
  }
}

TEST(HostBufferTest, LargeBuffersAreMappedOnHugePageBoundaries) {
  for (int64_t bytes : {kHugePageThreshold, kHugePageThreshold + 1,
                        (int64_t(6) << 20) + 4097}) {
    HostBuffer b(bytes);
    ASSERT_NE(b.data(), nullptr) << bytes;
    EXPECT_EQ(b.size(), bytes);
    EXPECT_TRUE(b.mapped());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (2 << 20), 0u) << bytes;
    EXPECT_TRUE(allZero(b)) << bytes;
    // Every byte is writable up to the end.
    b.data()[0] = 1;
    b.data()[bytes - 1] = 2;
    EXPECT_EQ(b.data()[bytes - 1], 2);
  }
}

TEST(HostBufferTest, EmptyAndMoved) {
  HostBuffer none(0);
  EXPECT_EQ(none.data(), nullptr);
  EXPECT_EQ(none.size(), 0);
  HostBuffer a(kHugePageThreshold);
  uint8_t *data = a.data();
  HostBuffer b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.data(), nullptr);
  HostBuffer c(100);
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_TRUE(c.mapped());
  EXPECT_EQ(c.size(), kHugePageThreshold);
}

TEST(HostBufferTest, HugePagesWhereTheKernelGivesThem) {
  std::ifstream policy("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(policy, text);
  if (text.find("[never]") != std::string::npos || text.empty() ||
      anonHugeKiB() < 0)
    GTEST_SKIP() << "transparent huge pages are off here: " << text;
  int64_t before = anonHugeKiB();
  HostBuffer b(int64_t(16) << 20);
  ASSERT_NE(b.data(), nullptr);
  for (int64_t i = 0; i < b.size(); i += 4096)
    b.data()[i] = 1;
  // The kernel may lack free 2 MiB frames; it must find at least one of
  // eight when it honours the request at all.
  EXPECT_GE(anonHugeKiB() - before, 2048) << "policy: " << text;
}

} // namespace
