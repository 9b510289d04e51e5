//===- Host.h - What the machine tessel runs on offers ----------*- C++ -*-===//
//
// Sizes derived from input are checked against the machine before anything
// is allocated: the build has no exceptions, so a failed allocation would
// abort instead of giving a message.
//
//   physicalMemoryBytes()          -> 25012338688 on a 23.3 GiB machine
//   describeBytes(32000000000)     -> "32000000000 bytes (29.8 GiB)"
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_HOST_H
#define TESSEL_SUPPORT_HOST_H

#include <cstdint>
#include <string>

namespace tessel {

/// The machine's physical memory in bytes, or INT64_MAX when unknown.
int64_t physicalMemoryBytes();

/// Whether `bytes` can be allocated now: false past the machine's memory
/// or an address-space limit (`ulimit -v`). Nothing stays allocated.
bool canAllocate(double bytes);

/// A byte count for messages: "N bytes", with KiB/MiB/GiB beside large ones.
std::string describeBytes(double bytes);

} // namespace tessel

#endif // TESSEL_SUPPORT_HOST_H
