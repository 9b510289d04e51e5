//===- Host.cpp - What the machine tessel runs on offers ------------------===//
#include "tessel/Support/Host.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

namespace tessel {

int64_t physicalMemoryBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return INT64_MAX;
  double bytes = static_cast<double>(pages) * static_cast<double>(pageSize);
  return bytes >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(bytes);
}

bool canAllocate(double bytes) {
  if (bytes <= 0)
    return true;
  if (bytes > static_cast<double>(physicalMemoryBytes()) || bytes >= 9.2e18)
    return false;
  void *probe = std::malloc(static_cast<size_t>(bytes));
  std::free(probe);
  return probe != nullptr;
}

std::string describeBytes(double bytes) {
  char text[96];
  const char *unit = nullptr;
  double scaled = bytes;
  if (bytes >= double(1 << 30)) {
    unit = "GiB";
    scaled = bytes / double(1 << 30);
  } else if (bytes >= double(1 << 20)) {
    unit = "MiB";
    scaled = bytes / double(1 << 20);
  } else if (bytes >= 1024) {
    unit = "KiB";
    scaled = bytes / 1024;
  }
  if (unit)
    std::snprintf(text, sizeof text, "%.0f bytes (%.1f %s)", bytes, scaled,
                  unit);
  else
    std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  return text;
}

HostBuffer::HostBuffer(int64_t size) {
  if (size <= 0)
    return;
  if (size < kHugePageThreshold) {
    size_t rounded = (static_cast<size_t>(size) + 63) / 64 * 64;
    bytes = static_cast<uint8_t *>(std::aligned_alloc(64, rounded));
    if (!bytes)
      return;
    std::memset(bytes, 0, rounded);
    length = size;
    return;
  }
  // Map 2 MiB more than needed, then give back what lies before the first
  // 2 MiB boundary and after the end: anonymous pages come zero-filled.
  constexpr size_t kHuge = size_t(2) << 20;
  size_t rounded = (static_cast<size_t>(size) + kHuge - 1) / kHuge * kHuge;
  size_t total = rounded + kHuge;
  void *base = ::mmap(nullptr, total, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return;
  uintptr_t start = reinterpret_cast<uintptr_t>(base);
  uintptr_t aligned = (start + kHuge - 1) / kHuge * kHuge;
  if (aligned > start)
    ::munmap(base, aligned - start);
  size_t after = start + total - (aligned + rounded);
  if (after)
    ::munmap(reinterpret_cast<void *>(aligned + rounded), after);
#if defined(MADV_HUGEPAGE)
  ::madvise(reinterpret_cast<void *>(aligned), rounded, MADV_HUGEPAGE);
#endif
  bytes = reinterpret_cast<uint8_t *>(aligned);
  length = size;
  mappedBytes = static_cast<int64_t>(rounded);
}

HostBuffer::~HostBuffer() {
  if (mappedBytes)
    ::munmap(bytes, static_cast<size_t>(mappedBytes));
  else
    std::free(bytes);
}

} // namespace tessel
