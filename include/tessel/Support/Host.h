//===- Host.h - What the machine tessel runs on offers ----------*- C++ -*-===//
//
// Sizes derived from input are checked against the machine before anything
// is allocated: the build has no exceptions, so a failed allocation would
// abort instead of giving a message.
//
//   physicalMemoryBytes()          -> 25012338688 on a 23.3 GiB machine
//   describeBytes(32000000000)     -> "32000000000 bytes (29.8 GiB)"
//
// Tensors tessel allocates itself (the compiled kernels' temporaries, `tessel
// run`'s arguments and results) live in HostBuffers: a buffer of
// kHugePageThreshold bytes or more is mapped on a 2 MiB boundary and asks
// Linux for transparent huge pages (madvise), which a kernel with large
// strides needs: a transpose of f32[4096,4096] reads 16 rows 16 KiB apart
// per register block, one 4 KiB page each, and walks more pages than the
// TLB holds. Measured on the EPYC VM (thread CPU time, one thread, 64 MiB):
// the f32 transpose 18.3 -> 21.0 GB/s, bf16 9.4 -> 13.1, a copy 30 -> 38.
//
//   HostBuffer b(64 << 20);  b.data() % (2 << 20) == 0, zero-filled
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_HOST_H
#define TESSEL_SUPPORT_HOST_H

#include <cstdint>
#include <string>
#include <utility>

namespace tessel {

/// The machine's physical memory in bytes, or INT64_MAX when unknown.
int64_t physicalMemoryBytes();

/// Whether `bytes` can be allocated now: false past the machine's memory
/// or an address-space limit (`ulimit -v`). Nothing stays allocated.
bool canAllocate(double bytes);

/// A byte count for messages: "N bytes", with KiB/MiB/GiB beside large ones.
std::string describeBytes(double bytes);

/// Buffers from this size up are mapped on their own, 2 MiB aligned, with
/// transparent huge pages requested.
inline constexpr int64_t kHugePageThreshold = int64_t(4) << 20;

/// A zero-filled byte buffer, 64-byte aligned, that owns its memory. One of
/// kHugePageThreshold bytes or more is an anonymous mapping aligned to
/// 2 MiB with MADV_HUGEPAGE (the kernel's policy decides whether it gets
/// them: `/sys/kernel/mm/transparent_hugepage/enabled`).
class HostBuffer {
public:
  HostBuffer() = default;
  /// @post data() is null when the memory could not be had (check it: the
  /// build has no exceptions); else size() == bytes and every byte is 0.
  explicit HostBuffer(int64_t bytes);
  HostBuffer(HostBuffer &&other) noexcept { swap(other); }
  HostBuffer &operator=(HostBuffer &&other) noexcept {
    HostBuffer(std::move(other)).swap(*this);
    return *this;
  }
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  ~HostBuffer();

  uint8_t *data() const { return bytes; }
  int64_t size() const { return length; }
  /// Whether the buffer is a mapping for which huge pages were requested.
  bool mapped() const { return mappedBytes > 0; }

private:
  void swap(HostBuffer &other) noexcept {
    std::swap(bytes, other.bytes);
    std::swap(length, other.length);
    std::swap(mappedBytes, other.mappedBytes);
  }
  uint8_t *bytes = nullptr;
  int64_t length = 0;
  int64_t mappedBytes = 0;
};

} // namespace tessel

#endif // TESSEL_SUPPORT_HOST_H
