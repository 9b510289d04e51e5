//===- Host.cpp - What the machine tessel runs on offers ------------------===//
#include "tessel/Support/Host.h"

#include <cstdio>
#include <cstdlib>

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

} // namespace tessel
