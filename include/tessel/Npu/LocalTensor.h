//===- LocalTensor.h - A 4-D tensor in NPU local memory ---------*- C++ -*-===//
//
// A local tensor is an address A = (Q, R), a shape (N, C, H, W), an element
// type and four strides counted in elements:
//
//   N stride  (n, c, h, w) -> (n + 1, c, h, w)
//   C stride  (n, c, h, w) -> (n, c + X, h, w)    the next slot, same NPU
//   H stride  (n, c, h, w) -> (n, c, h + 1, w)
//   W stride  (n, c, h, w) -> (n, c, h, w + 1)
//
// Element (n, c, h, w) lives on NPU (Q + c) mod X at byte
//
//   R + bytes * (n*Ns + floor((Q + c) / X)*Cs + h*Hs + w*Ws).
//
// The strides come from a layout or are given explicitly:
//
//   layout    W  H  C                     N              address divisible by
//   aligned   1  W  ceil(H*W/eu)*eu       Cs * cpn       128  (eu = 128 bytes)
//   eu        1  W  same, eu = the chip's alignment unit  the unit
//   compact   1  W  H*W                   Cs * cpn       4
//   matrix    an N x M matrix viewed as (N, ceil(M/W), 1, W), aligned
//   strided   the four strides given      4
//
// where cpn = ceil((Q + C) / X) is the channels per NPU. Storage modes pack
// along N: 4N stores int8/uint8 (4m..4m+3, c, h, w) together as one 32-bit
// int8x4 element of shape (ceil(N/4), C, H, W); 2N does the same for two
// int16/uint16; 2IC for two fp32 input channels of a conv weight. Strides of
// a packed tensor count packed elements of the packed shape.
//
// Worked example (the seed's), X = 4, fp32 (2,3,4,5) aligned:
//
//   at address 0    (Q 0): strides n 32 c 32 h 5 w 1, 1 channel per npu,
//                          c unused, 256 bytes on each of npus 0, 1, 2
//   at address 2048 (Q 2): strides n 64 c 32 h 5 w 1, 2 channels per npu,
//                          element (1,2,3,4) on npu 0 at byte 460
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_NPU_LOCALTENSOR_H
#define TESSEL_NPU_LOCALTENSOR_H

#include "tessel/Npu/NpuConfig.h"

#include <array>
#include <optional>
#include <string_view>
#include <vector>

namespace tessel {

/// (N, C, H, W): a 4-D shape, index or set of strides.
using Dims4 = std::array<int64_t, 4>;

enum class NpuLayout : uint8_t {
  Continuous,  ///< system memory: strides (C*H*W, H*W, W, 1)
  Aligned,     ///< channel slots rounded to 128 bytes
  ChipAligned, ///< channel slots rounded to the chip's alignment unit ("eu")
  Compact,     ///< channel slots of exactly H*W elements
  Matrix,      ///< an N x M matrix as (N, ceil(M/W), 1, W), aligned
  Strided,     ///< the four strides given explicitly
};

enum class StorageMode : uint8_t { Normal, N4, N2, IC2 };

/// "continuous", "aligned", "eu", "compact", "matrix", "strided".
std::string_view layoutName(NpuLayout layout);
/// Parses a layout name; "chip" is accepted for "eu".
std::optional<NpuLayout> parseLayoutName(std::string_view name);
/// "1n", "4n", "2n", "2ic".
std::string_view modeName(StorageMode mode);
std::optional<StorageMode> parseModeName(std::string_view name);
/// Logical elements packed in one stored element: 1, 4, 2, 2.
int64_t modeLanes(StorageMode mode);

/// The system-memory (continuous) strides of a shape: (C*H*W, H*W, W, 1).
/// @pre every dim >= 1 and the product fits in int64.
Dims4 continuousStrides(const Dims4 &shape);

/// What a user asks for. For a matrix, `shape` is (rows, cols, 1, 1).
struct TensorDesc {
  Dims4 shape{1, 1, 1, 1};
  PrimitiveType type = PrimitiveType::F32;
  NpuLayout layout = NpuLayout::Aligned;
  StorageMode mode = StorageMode::Normal;
  int64_t matrixW = 0;       ///< Matrix only: columns per channel, 1..M.
  Dims4 strides{0, 0, 0, 0}; ///< Strided only: (N, C, H, W) strides.
  int64_t address = 0;
  bool operator==(const TensorDesc &other) const;
};

/// What one byte of local memory is to a tensor.
enum class ByteKind : uint8_t {
  Element,        ///< a byte of a logical element
  Dummy,          ///< a padding lane of a packed (4N, 2N, 2IC) element
  MatrixTail,     ///< a column slot past M in the matrix's last channel
  FeaturePadding, ///< inside a channel slot, after its H*W elements
  EmptySlot,      ///< a slot of this NPU that holds no channel of the tensor
  Gap,            ///< inside the tensor's range, between strided elements
  Outside,        ///< not in the tensor's range on this NPU
};
std::string_view byteKindName(ByteKind kind);

struct ByteInfo {
  ByteKind kind = ByteKind::Outside;
  /// Element: the logical index; Dummy/MatrixTail/FeaturePadding: the
  /// stored index (n', c, h, w) of the slot position; EmptySlot: (n', -, 0, 0).
  Dims4 index{0, 0, 0, 0};
  int64_t byte = 0; ///< Element: byte within the logical element.
  int64_t slot = -1;
};

/// Bytes a tensor reserves on one NPU and what they hold.
struct NpuUsage {
  int64_t npu = 0;
  int64_t channels = 0;       ///< channel slots of this NPU holding data
  int64_t reserved = 0;       ///< bytes [R, R + reserved) of this NPU
  int64_t data = 0;           ///< bytes of logical elements
  int64_t dummy = 0;          ///< padding lanes of packed elements
  int64_t matrixTail = 0;     ///< unused columns of the last matrix channel
  int64_t featurePadding = 0; ///< alignment padding after each channel
  int64_t emptySlots = 0;     ///< slots holding no channel of the tensor
  int64_t gaps = 0;           ///< strided: bytes between elements
  int64_t wasted() const {
    return dummy + matrixTail + featurePadding + emptySlots + gaps;
  }
};

/// A tensor placed in local memory.
class LocalTensor {
public:
  /// Validates a description against a configuration: dims >= 1, a whole-byte
  /// element type, a mode that suits the type and the chip, 1 <= W <= M for
  /// a matrix, strides >= 0, the address inside local memory, every size
  /// within int64. It does not check alignment, fit or overlap: see the
  /// check* functions, so that a misplaced tensor can still be explained.
  static Expected<LocalTensor> get(const NpuConfig &config,
                                   const TensorDesc &desc);

  const NpuConfig &config() const { return cfg; }
  const TensorDesc &desc() const { return d; }
  NpuLayout layout() const { return d.layout; }
  StorageMode mode() const { return d.mode; }
  /// (Q, R) of the address.
  NpuPlace start() const { return origin; }
  /// The logical shape; (rows, cols, 1, 1) for a matrix.
  const Dims4 &shape() const { return d.shape; }
  /// The stored shape: packed along N for modes, (N, ceil(M/W), 1, W) for a
  /// matrix.
  const Dims4 &storageShape() const { return stored; }
  /// Strides in stored elements.
  const Dims4 &strides() const { return stride; }
  /// Which strides mean something: a dim of size 1 never moves, and the C
  /// stride is unused with one channel per NPU.
  std::array<bool, 4> stridesUsed() const;
  int64_t channelsPerNpu() const { return cpn; }
  /// Bytes of one logical element and of one stored (possibly packed) one.
  int64_t elementBytes() const { return logicalBytes; }
  int64_t storedBytes() const { return packedBytes; }
  /// "fp32", "int8x4", "fp32x2".
  std::string storedTypeName() const;
  /// Elements per alignment unit for the aligned layouts (eu), else 0.
  int64_t alignElements() const { return eu; }
  /// The byte alignment the layout requires of R.
  int64_t requiredAlignment() const;
  int64_t logicalElements() const;

  /// Bytes the tensor reserves on each NPU it touches: N * Ns * bytes for the
  /// layouts (what a compiler allocates), the span of the last element for
  /// explicit strides.
  int64_t bytesPerNpu() const { return reserved; }
  /// The NPUs holding channels, starting at Q: min(C, X) of them.
  int64_t npuCount() const;
  std::vector<int64_t> npus() const;
  bool touchesNpu(int64_t npu) const;

  /// NPU and byte of logical element `index`. @pre index inside shape().
  NpuPlace locate(const Dims4 &index) const;
  /// The slot of the channel holding logical element `index`.
  int64_t slotOf(const Dims4 &index) const;
  /// What byte `place` holds for this tensor (the inverse of locate).
  ByteInfo classify(NpuPlace place) const;

  NpuUsage usageOn(int64_t npu) const;
  /// The sum of usageOn over the touched NPUs (npu = -1).
  NpuUsage totalUsage() const;

  /// Each returns nullopt when fine, else a message with the numbers.
  Status checkAlignment() const;
  Status checkFits() const;
  /// Whether `other` shares a byte range on a shared NPU.
  Status checkOverlap(const LocalTensor &other,
                      std::string_view thisName = "tensor",
                      std::string_view otherName = "another "
                                                   "tensor") const;
  /// Whether two logical elements share a byte (only explicit strides can).
  Status checkNoAliasing() const;

private:
  LocalTensor() = default;
  Status computeStrides();
  ByteInfo classifyLayout(int64_t npu, int64_t rel) const;
  ByteInfo classifyStrided(int64_t npu, int64_t rel) const;
  ByteInfo fromStored(const Dims4 &storedIndex, int64_t byteInStored,
                      int64_t slot) const;

  NpuConfig cfg = NpuConfig::seed();
  TensorDesc d;
  NpuPlace origin;
  Dims4 stored{1, 1, 1, 1};
  Dims4 stride{0, 0, 0, 0};
  int64_t cpn = 1;
  int64_t logicalBytes = 4, packedBytes = 4, eu = 0;
  int64_t reserved = 0;
};

/// Why a set of strides may make two elements share a place: nullopt when
/// they never do (every index has its own offset), else a message naming two
/// indices with one offset, or saying that it could not be decided within
/// the work budget. Used for system-memory destinations.
Status checkStridesInjective(const Dims4 &sizes, const Dims4 &strides);

} // namespace tessel

#endif // TESSEL_NPU_LOCALTENSOR_H
