//===- RandomTensors.h - Random configs and tensors for property tests ----===//
#ifndef TESSEL_UNITTESTS_NPU_RANDOMTENSORS_H
#define TESSEL_UNITTESTS_NPU_RANDOMTENSORS_H

#include "tessel/Npu/LocalTensor.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace tessel::npu_testing {

inline int64_t uniform(std::mt19937_64 &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

/// X in 1..9, S a multiple of 128 in 256..2048, a random alignment unit and
/// bank count, packed modes on or off.
inline NpuConfig randomConfig(std::mt19937_64 &rng) {
  int64_t align = int64_t(4) << uniform(rng, 0, 5);
  int64_t bytes = 128 * uniform(rng, 2, 16);
  int64_t banks = int64_t(1) << uniform(rng, 0, 2);
  Expected<NpuConfig> config = NpuConfig::get(uniform(rng, 1, 9), bytes, banks,
                                              align, uniform(rng, 0, 3) != 0);
  return *config;
}

/// Nested strides over `sizes` in a random order, with random gaps.
inline Dims4 randomNestedStrides(std::mt19937_64 &rng, const Dims4 &sizes) {
  std::array<int, 4> order{0, 1, 2, 3};
  std::shuffle(order.begin(), order.end(), rng);
  Dims4 strides{0, 0, 0, 0};
  int64_t extent = 1;
  for (int d : order) {
    strides[d] = extent + uniform(rng, 0, 2);
    extent = strides[d] * (sizes[d] - 1) + extent;
  }
  return strides;
}

/// A random tensor description for `config` at address 0: any layout, type
/// and (when the chip has them) storage mode.
inline TensorDesc randomDesc(std::mt19937_64 &rng, const NpuConfig &config) {
  static const PrimitiveType kTypes[] = {
      PrimitiveType::F32, PrimitiveType::F16, PrimitiveType::BF16,
      PrimitiveType::S8,  PrimitiveType::U8,  PrimitiveType::S16,
      PrimitiveType::U16, PrimitiveType::S32, PrimitiveType::F64,
      PrimitiveType::Pred};
  static const NpuLayout kLayouts[] = {
      NpuLayout::Aligned, NpuLayout::ChipAligned, NpuLayout::Compact,
      NpuLayout::Matrix, NpuLayout::Strided};
  TensorDesc d;
  d.type = kTypes[uniform(rng, 0, std::size(kTypes) - 1)];
  d.layout = kLayouts[uniform(rng, 0, std::size(kLayouts) - 1)];
  if (d.layout == NpuLayout::Matrix) {
    d.shape = {uniform(rng, 1, 4), uniform(rng, 1, 40), 1, 1};
    d.matrixW = uniform(rng, 1, d.shape[1]);
    return d;
  }
  d.shape = {uniform(rng, 1, 9), uniform(rng, 1, 2 * config.npus() + 1),
             uniform(rng, 1, 5), uniform(rng, 1, 7)};
  if (config.hasPackedModes() && uniform(rng, 0, 1)) {
    if (d.type == PrimitiveType::S8 || d.type == PrimitiveType::U8)
      d.mode = StorageMode::N4;
    else if (d.type == PrimitiveType::S16 || d.type == PrimitiveType::U16)
      d.mode = StorageMode::N2;
    else if (d.type == PrimitiveType::F32)
      d.mode = StorageMode::IC2;
  }
  if (d.layout == NpuLayout::Strided) {
    int64_t lanes = modeLanes(d.mode);
    int64_t maxCpn = config.channelsPerNpu(config.npus() - 1, d.shape[1]);
    Dims4 sizes{(d.shape[0] + lanes - 1) / lanes, maxCpn, d.shape[2],
                d.shape[3]};
    d.strides = randomNestedStrides(rng, sizes);
  }
  return d;
}

/// A random tensor placed at a random aligned address where it fits, or
/// nullopt when this description does not fit at all.
inline std::optional<LocalTensor> randomPlacedTensor(std::mt19937_64 &rng,
                                                     const NpuConfig &config) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    TensorDesc d = randomDesc(rng, config);
    d.address = uniform(rng, 0, config.npus() - 1) * config.bytesPerNpu();
    Expected<LocalTensor> probe = LocalTensor::get(config, d);
    if (!probe)
      continue;
    int64_t room = config.bytesPerNpu() - probe->bytesPerNpu();
    if (room < 0)
      continue;
    int64_t unit = probe->requiredAlignment();
    d.address += uniform(rng, 0, room / unit) * unit;
    Expected<LocalTensor> t = LocalTensor::get(config, d);
    if (t && t->checkFits() && t->checkAlignment())
      return std::move(*t);
  }
  return std::nullopt;
}

} // namespace tessel::npu_testing

#endif // TESSEL_UNITTESTS_NPU_RANDOMTENSORS_H
