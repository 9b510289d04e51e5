//===- NpuConfig.h - NPUs, their local memories and addresses ---*- C++ -*-===//
//
// A Sophgo-style TPU has X NPUs (lanes); each owns S bytes of local memory.
// A local-memory address A in [0, X*S) names NPU Q = floor(A / S) and the
// byte offset R = A mod S inside it. With the seed's teaching configuration
// (X = 4, S = 1024):
//
//   NpuConfig seed = NpuConfig::seed();
//   seed.split(1472)        // -> {npu 1, offset 448}
//   seed.address({3, 16})   // -> 3088
//
// Channel c of a tensor that starts at NPU Q lives on NPU (Q + c) mod X, in
// slot floor((Q + c) / X) of that NPU; the tensor needs
// channelsPerNpu(Q, C) = ceil((Q + C) / X) slots on every NPU it touches:
//
//   seed.channelsPerNpu(0, 6)   // -> 2 (channels 4 and 5 in the second slot)
//   seed.channelsPerNpu(3, 6)   // -> 3 (three rows of slots, 6 of 12 empty)
//
// Each NPU's memory is split into `banks` equal banks, and layouts align
// channel slots to an alignment unit: 128 bytes on BM1684, 64 on BM1684X and
// 16 on BM1688 (the presets below).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_NPU_NPUCONFIG_H
#define TESSEL_NPU_NPUCONFIG_H

#include "tessel/Layout/PrimitiveType.h"
#include "tessel/Support/Expected.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

/// A byte in local memory: NPU `npu`, `offset` bytes into its memory.
struct NpuPlace {
  int64_t npu = 0;
  int64_t offset = 0;
  bool operator==(const NpuPlace &other) const {
    return npu == other.npu && offset == other.offset;
  }
  bool operator!=(const NpuPlace &other) const { return !(*this == other); }
};

/// Where channel c of a tensor lives: NPU (Q + c) mod X, slot
/// floor((Q + c) / X).
struct ChannelSlot {
  int64_t npu = 0;
  int64_t slot = 0;
};

/// The NPUs of a chip and their local memories.
class NpuConfig {
public:
  /// Largest accepted NPU count and local-memory size (bytes per NPU); they
  /// keep every address and byte count of a tensor far from int64 overflow.
  static constexpr int64_t kMaxNpus = 1 << 16;
  static constexpr int64_t kMaxBytesPerNpu = int64_t(1) << 40;

  /// A validated configuration. @pre nothing; errors name the bad value:
  ///   get(0, 1024) -> "npus is 0, expected 1..65536"
  ///   get(4, 1000, 1, 128) -> "local memory of 1000 bytes per npu is not a
  ///                            multiple of the 128-byte alignment unit"
  /// banks must divide S; the alignment unit is a power of two dividing S.
  static Expected<NpuConfig> get(int64_t npus, int64_t bytesPerNpu,
                                 int64_t banks = 1, int64_t alignBytes = 128,
                                 bool packedModes = true,
                                 std::string name = "custom");

  /// The chips tessel knows: "bm1684", "bm1684x", "bm1688" (case-insensitive).
  static Expected<NpuConfig> preset(std::string_view name);
  static std::vector<std::string_view> presetNames();

  /// A preset with overrides, or a custom chip, as `--chip NAME --npus X
  /// --mem S --banks B --align A` describe it. A modified preset is named
  /// "NAME-modified". @pre `chip` is not empty, or npus and bytesPerNpu are
  /// given.
  static Expected<NpuConfig> resolve(const std::string &chip,
                                     std::optional<int64_t> npus,
                                     std::optional<int64_t> bytesPerNpu,
                                     std::optional<int64_t> banks,
                                     std::optional<int64_t> alignBytes);

  /// The seed's teaching configuration: 4 NPUs of 1024 bytes, one bank,
  /// 128-byte alignment, packed modes allowed.
  static NpuConfig seed();

  const std::string &name() const { return chipName; }
  int64_t npus() const { return numNpus; }
  int64_t bytesPerNpu() const { return memBytes; }
  int64_t banks() const { return numBanks; }
  int64_t bankBytes() const { return memBytes / numBanks; }
  /// The chip's own alignment unit in bytes (BM1684X: 64).
  int64_t alignBytes() const { return alignUnit; }
  /// Whether the 4N, 2N and 2IC storage modes exist (BM1684 has them).
  bool hasPackedModes() const { return packed; }
  /// X * S.
  int64_t totalBytes() const { return numNpus * memBytes; }

  /// (Q, R) of an address. Fails when A is outside [0, X*S).
  Expected<NpuPlace> split(int64_t address) const;
  /// Q * S + R. @pre 0 <= place.npu < X, 0 <= place.offset < S.
  int64_t address(NpuPlace place) const {
    return place.npu * memBytes + place.offset;
  }
  /// ceil((Q + C) / X): the slots a tensor of C channels starting at NPU Q
  /// needs on every NPU it touches (okk_channle_num_per_npu).
  /// @pre 0 <= startNpu < X, channels >= 1.
  int64_t channelsPerNpu(int64_t startNpu, int64_t channels) const;
  /// NPU and slot of channel c for a tensor starting at NPU Q.
  ChannelSlot channelSlot(int64_t startNpu, int64_t channel) const;
  /// The bank holding byte `offset` of an NPU's memory.
  int64_t bank(int64_t offset) const { return offset / bankBytes(); }

  /// "bm1684x: 64 npus x 256 KiB, 16 banks of 16 KiB, 64-byte alignment".
  std::string toString() const;

  bool operator==(const NpuConfig &other) const;

private:
  NpuConfig() = default;
  std::string chipName;
  int64_t numNpus = 0, memBytes = 0, numBanks = 1, alignUnit = 1;
  bool packed = true;
};

/// A byte count the way people read it: "512 KiB", "1000 bytes", "1.5 MiB"
/// only when exact ("1536 KiB").
std::string formatBytes(int64_t bytes);

/// Parses a byte count with an optional unit: "1024", "512K", "512KiB",
/// "1M". Fails with a message naming the text.
Expected<int64_t> parseByteSize(std::string_view text);

/// Element types as NPU programmers name them. Accepts the NPU names and
/// XLA's: fp32/f32/float32/float, fp16/f16/half, bf16, fp64/f64/double,
/// int8/s8/i8, uint8/u8, int16/s16/i16, uint16/u16, int32/s32/i32,
/// uint32/u32, int64/s64/i64, uint64/u64, bool/pred, and the f8 types.
/// Sub-byte types (s4, u4, s2, u2) are refused: local memory is addressed in
/// bytes and the seed's layouts count whole elements.
Expected<PrimitiveType> parseNpuType(std::string_view name);
/// The NPU name of a type: fp32, int8, uint16, bf16, f8e4m3fn, ...
std::string npuTypeName(PrimitiveType type);

} // namespace tessel

#endif // TESSEL_NPU_NPUCONFIG_H
