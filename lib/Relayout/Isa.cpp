//===- Isa.cpp - Picking the instruction set level and the cache sizes ----===//
#include "Isa.h"
#include "Kernels.h"

#include <hwy/targets.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace tessel::relayout {

const char *isaName(IsaLevel level) {
  switch (level) {
  case IsaLevel::Sse2:
    return "sse2";
  case IsaLevel::Avx2:
    return "avx2";
  case IsaLevel::Avx512:
    return "avx512";
  }
  return "sse2";
}

static const KernelSet &sse2Set() {
  static const KernelSet set = [] {
    KernelSet k;
    k.level = IsaLevel::Sse2;
    k.copy = copyBytes;
    k.copyRows = copyRowsBytes;
    k.pairNibbles = pairNibblesScalar;
    k.zero = zeroBytes;
    k.interleave = sse2Interleave;
    k.deinterleave = sse2Deinterleave;
    k.fillStage[0] = sse2FillStage1;
    k.fillStage[1] = sse2FillStage2;
    k.fillStage[2] = sse2FillStage4;
    k.fillStage[3] = sse2FillStage8;
    k.transposeBand[0] = sse2TransposeBand1;
    k.transposeBand[1] = sse2TransposeBand2;
    k.transposeBand[2] = sse2TransposeBand4;
    k.transposeBand[3] = sse2TransposeBand8;
    k.transposeRows[0] = sse2TransposeRows1;
    k.transposeRows[1] = sse2TransposeRows2;
    k.transposeRows[2] = sse2TransposeRows4;
    k.transposeRows[3] = sse2TransposeRows8;
    return k;
  }();
  return set;
}

std::vector<IsaLevel> supportedLevels() {
  static const std::vector<IsaLevel> levels = [] {
    std::vector<IsaLevel> result = {IsaLevel::Sse2};
#if HWY_ARCH_X86
    int64_t cpu = hwy::SupportedTargets();
    if ((cpu & HWY_AVX2) && highwayKernels(IsaLevel::Avx2))
      result.push_back(IsaLevel::Avx2);
    if ((cpu & HWY_AVX3) && highwayKernels(IsaLevel::Avx512))
      result.push_back(IsaLevel::Avx512);
#endif
    return result;
  }();
  return levels;
}

const KernelSet &kernelSet(IsaLevel level) {
  if (level == IsaLevel::Sse2)
    return sse2Set();
  const KernelSet *set = highwayKernels(level);
  return set ? *set : sse2Set();
}

static Expected<IsaLevel> parseLevel(const std::string &name) {
  for (int i = 0; i < kIsaLevels; ++i)
    if (name == isaName(static_cast<IsaLevel>(i)))
      return static_cast<IsaLevel>(i);
  return Error("unknown instruction set '" + name +
               "', expected sse2, avx2 or avx512");
}

Expected<IsaLevel> chooseLevel(const std::string &requested) {
  IsaLevel level = supportedLevels().back();
  auto cap = [&](const std::string &name, const std::string &what) -> Status {
    if (name.empty())
      return {};
    Expected<IsaLevel> wanted = parseLevel(name);
    if (!wanted)
      return Error(what + wanted.error().message);
    level = std::min(level, *wanted);
    return {};
  };
  if (Status capped = cap(requested, "instruction set option: "); !capped)
    return capped.takeError();
  const char *env = std::getenv("TESSEL_ISA");
  if (Status capped = cap(env ? env : "", "TESSEL_ISA: "); !capped)
    return capped.takeError();
  return level;
}

//===----------------------------------------------------------------------===//
// Cache sizes
//===----------------------------------------------------------------------===//

/// "32K", "1024K", "32M" or a plain number of bytes; -1 when unreadable.
static int64_t parseSize(const std::string &text) {
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || value <= 0)
    return -1;
  if (*end == 'K')
    return value << 10;
  if (*end == 'M')
    return value << 20;
  if (*end == 'G')
    return value << 30;
  return value;
}

static std::string readLine(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// A size is believed when it lies within `[low, high]`; VMs report zero,
/// nothing, or (through the C library) the host's whole cache.
static void keepIfPlausible(int64_t &size, int64_t value, int64_t low,
                            int64_t high) {
  if (value >= low && value <= high)
    size = value;
}

const CacheSizes &hostCaches() {
  static const CacheSizes caches = [] {
    CacheSizes result;
    int64_t found[4] = {-1, -1, -1, -1};
    for (int index = 0; index < 8; ++index) {
      std::string dir =
          "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
      std::string type = readLine(dir + "/type");
      if (type.empty())
        break;
      if (type == "Instruction")
        continue;
      int64_t level = parseSize(readLine(dir + "/level"));
      if (level >= 1 && level <= 3)
        found[level] = parseSize(readLine(dir + "/size"));
    }
#if defined(_SC_LEVEL1_DCACHE_SIZE)
    if (found[1] <= 0)
      found[1] = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (found[2] <= 0)
      found[2] = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (found[3] <= 0)
      found[3] = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    keepIfPlausible(result.l1, found[1], int64_t(4) << 10, int64_t(1) << 20);
    keepIfPlausible(result.l2, found[2], std::max(result.l1, int64_t(64) << 10),
                    int64_t(64) << 20);
    keepIfPlausible(result.l3, found[3], std::max(result.l2, int64_t(1) << 20),
                    int64_t(2) << 30);
    return result;
  }();
  return caches;
}

} // namespace tessel::relayout
