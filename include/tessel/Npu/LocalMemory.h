//===- LocalMemory.h - A simulator of the NPUs' local memories --*- C++ -*-===//
//
// LocalMemory holds the X * S bytes of a chip's local memories and moves
// tensors between them and system memory, bit-exact, the way the chip's DMA
// lays them out:
//
//   LocalMemory mem = *LocalMemory::create(NpuConfig::seed());
//   LocalTensor t = ...;                 // fp32 (2,3,4,5) aligned @2048
//   std::vector<float> x(120);           // continuous in system memory
//   mem.store(t, bytesOf(x), 480, continuousStrides(t.shape()), "x");
//   mem.load(t, bytesOf(y), 480, continuousStrides(t.shape()));  // y == x
//
// System tensors are plain byte buffers with strides in elements over the
// logical shape ((rows, cols, 1, 1) for a matrix); any strides >= 0 work for
// reading, and a destination's strides must keep elements apart. Storing
// writes every logical element and zeros into the dummy lanes of packed
// (4N, 2N, 2IC) elements; channel padding and empty slots are left as they
// were.
//
// Before anything is written, a store checks the layout's address alignment,
// that the tensor fits in S on every NPU it touches, that explicit strides
// keep its elements apart, that the source buffer holds every element the
// strides reach, and that the tensor does not overlap a tensor stored (or
// placed) earlier. Storing again at exactly the same place is allowed.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_NPU_LOCALMEMORY_H
#define TESSEL_NPU_LOCALMEMORY_H

#include "tessel/Npu/LocalTensor.h"

#include <string>
#include <vector>

namespace tessel {

class LocalMemory {
public:
  /// Largest simulated memory (X * S), to keep a typo from allocating
  /// terabytes.
  static constexpr int64_t kMaxBytes = int64_t(1) << 30;

  /// X * S zero bytes. Fails when X * S is above kMaxBytes.
  static Expected<LocalMemory> create(const NpuConfig &config);

  const NpuConfig &config() const { return cfg; }

  /// A tensor placed in memory, with the name used in messages.
  struct Placed {
    std::string name;
    LocalTensor tensor;
  };
  const std::vector<Placed> &placed() const { return tensors; }

  /// Reserves the tensor's bytes after the checks above (except the source
  /// buffer). An empty name becomes "tensor K". Returns the placement index.
  Expected<int64_t> place(const LocalTensor &tensor, std::string name = "");
  /// Forgets every placement (the bytes stay).
  void releaseAll() { tensors.clear(); }

  /// System -> local. `src` holds `srcBytes` bytes; element i of the logical
  /// shape is at byte elementBytes * sum(i[d] * srcStrides[d]). Returns the
  /// number of bytes written (elements and dummies). Places the tensor unless
  /// an identical one is placed already.
  Expected<int64_t> store(const LocalTensor &tensor, const uint8_t *src,
                          int64_t srcBytes, const Dims4 &srcStrides,
                          std::string name = "");
  /// Local -> system: writes every logical element into `dst` (dstBytes
  /// bytes) at the strides given, which must keep elements apart. Returns
  /// the number of bytes written. Reading needs no placement, only that the
  /// tensor is aligned and fits.
  Expected<int64_t> load(const LocalTensor &tensor, uint8_t *dst,
                         int64_t dstBytes, const Dims4 &dstStrides) const;

  /// The raw bytes, NPU after NPU (address order).
  const std::vector<uint8_t> &bytes() const { return memory; }
  uint8_t at(NpuPlace place) const {
    return memory[place.npu * cfg.bytesPerNpu() + place.offset];
  }
  /// Sets every byte (e.g. to see which bytes a store leaves alone).
  void fill(uint8_t value);

private:
  explicit LocalMemory(const NpuConfig &config);
  Status checkSystem(const LocalTensor &tensor, int64_t bufferBytes,
                     const Dims4 &strides, bool forWriting) const;

  NpuConfig cfg;
  std::vector<uint8_t> memory;
  std::vector<Placed> tensors;
};

/// Bytes a system buffer needs for a logical shape at the given strides:
/// elementBytes * (1 + sum (shape[d] - 1) * strides[d]); nullopt on overflow.
std::optional<int64_t> systemBufferBytes(const Dims4 &shape,
                                         const Dims4 &strides,
                                         int64_t elementBytes);

} // namespace tessel

#endif // TESSEL_NPU_LOCALMEMORY_H
