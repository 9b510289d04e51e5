//===- NpuSimulatorBench.cpp - Speed of the local-memory simulator --------===//
//
// Bytes per second of LocalMemory::store and ::load for BM1684 tensors in the
// aligned, compact and 4N layouts, next to a plain memcpy of the same bytes
// (the physical limit). Run: build/bench/NpuSimulatorBench.
//
//===----------------------------------------------------------------------===//
#include "tessel/Npu/LocalMemory.h"

#include <benchmark/benchmark.h>

#include <cstring>

using namespace tessel;

namespace {

LocalTensor tensor(NpuLayout layout, PrimitiveType type, StorageMode mode,
                   Dims4 shape) {
  TensorDesc d;
  d.shape = shape;
  d.type = type;
  d.layout = layout;
  d.mode = mode;
  return *LocalTensor::get(*NpuConfig::preset("bm1684"), d);
}

void run(benchmark::State &state, const LocalTensor &t, bool store) {
  LocalMemory mem = *LocalMemory::create(t.config());
  int64_t bytes = t.logicalElements() * t.elementBytes();
  std::vector<uint8_t> system(bytes, 7);
  Dims4 strides = continuousStrides(t.shape());
  if (!mem.store(t, system.data(), bytes, strides))
    state.SkipWithError("store failed");
  for (auto _ : state) {
    if (store)
      benchmark::DoNotOptimize(mem.store(t, system.data(), bytes, strides));
    else
      benchmark::DoNotOptimize(mem.load(t, system.data(), bytes, strides));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

const Dims4 kShape{4, 64, 56, 56}; // 3.2 MB of fp32, 50 KiB per npu

void BM_StoreAlignedF32(benchmark::State &state) {
  run(state,
      tensor(NpuLayout::Aligned, PrimitiveType::F32, StorageMode::Normal,
             kShape),
      true);
}
void BM_LoadAlignedF32(benchmark::State &state) {
  run(state,
      tensor(NpuLayout::Aligned, PrimitiveType::F32, StorageMode::Normal,
             kShape),
      false);
}
void BM_StoreCompactF32(benchmark::State &state) {
  run(state,
      tensor(NpuLayout::Compact, PrimitiveType::F32, StorageMode::Normal,
             kShape),
      true);
}
void BM_StoreInt8In4N(benchmark::State &state) {
  run(state,
      tensor(NpuLayout::Aligned, PrimitiveType::S8, StorageMode::N4,
             {16, 64, 56, 56}),
      true);
}
void BM_LoadInt8From4N(benchmark::State &state) {
  run(state,
      tensor(NpuLayout::Aligned, PrimitiveType::S8, StorageMode::N4,
             {16, 64, 56, 56}),
      false);
}
void BM_Memcpy(benchmark::State &state) {
  int64_t bytes = 4 * 64 * 56 * 56 * 4;
  std::vector<uint8_t> a(bytes, 7), b(bytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

} // namespace

BENCHMARK(BM_StoreAlignedF32);
BENCHMARK(BM_LoadAlignedF32);
BENCHMARK(BM_StoreCompactF32);
BENCHMARK(BM_StoreInt8In4N);
BENCHMARK(BM_LoadInt8From4N);
BENCHMARK(BM_Memcpy);
BENCHMARK_MAIN();
