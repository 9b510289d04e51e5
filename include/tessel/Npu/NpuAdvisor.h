//===- NpuAdvisor.h - Choosing matrix W and checking that tensors fit -*- C++
//-*-===//
//
// The matrix advisor picks W for an N x M matrix in the matrix layout: the
// matrix is stored as (N, ceil(M/W), 1, W) in the 128-byte aligned layout,
// so each channel slot holds W columns rounded up to 128 bytes, and
// ceil((Q + C) / X) slots sit on each NPU. The best W needs the fewest bytes
// on the fullest NPU; ties go to fewer channels, then to the smaller W.
// For the seed's 2 x 40 fp32 matrix on 4 NPUs:
//
//   W = 40  1 channel,  64 fp32 per row  -> 512 bytes on npu 0
//   W = 20  2 channels, 32 fp32 per row  -> 256 bytes on npus 0, 1   (best)
//   W = 10  4 channels, 32 fp32 per row  -> 256 bytes on npus 0..3
//   W =  8  5 channels, 2 per npu        -> 512 bytes
//
// The fit report places a list of tensors (at their addresses, or first-fit
// where none is given), checks alignment, size and overlaps, says where the
// bytes go and suggests cheaper choices (start NPU, layout, W).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_NPU_NPUADVISOR_H
#define TESSEL_NPU_NPUADVISOR_H

#include "tessel/Npu/TensorSpec.h"

#include <string>
#include <vector>

namespace tessel {

/// One W for an N x M matrix.
struct MatrixChoice {
  int64_t w = 0;
  int64_t channels = 0;        ///< ceil(M / W)
  int64_t channelsPerNpu = 0;  ///< ceil((Q + channels) / X)
  int64_t npusUsed = 0;        ///< min(channels, X)
  int64_t slotElements = 0;    ///< W rounded up to the 128-byte unit
  int64_t rowBytes = 0;        ///< bytes of one matrix row on the fullest NPU
  int64_t fullestNpuBytes = 0; ///< rows * rowBytes
  int64_t totalBytes = 0;      ///< bytes reserved over all NPUs used
  int64_t wastedBytes = 0;     ///< totalBytes - rows * M * element bytes
};

/// Evaluates one W. @pre 1 <= w <= cols, 0 <= startNpu < X, sizes small
/// enough for adviseMatrix to accept.
MatrixChoice evaluateMatrixW(const NpuConfig &config, int64_t rows,
                             int64_t cols, PrimitiveType type, int64_t w,
                             int64_t startNpu = 0);

struct MatrixAdvice {
  MatrixChoice best;
  /// The cheapest W of each channel count, by channel count (1, 2, ...).
  std::vector<MatrixChoice> candidates;
  /// Every W that needs as few bytes on the fullest NPU as the best:
  /// [tieLow, tieHigh] when they form one range (tieCount of them).
  int64_t tieLow = 0, tieHigh = 0, tieCount = 0;
  /// Sentences explaining the choice.
  std::vector<std::string> reasons;
};

/// The best W for a rows x cols matrix of `type` starting at NPU startNpu.
/// Fails for sizes past 2^40 columns or byte counts past int64.
Expected<MatrixAdvice> adviseMatrix(const NpuConfig &config, int64_t rows,
                                    int64_t cols, PrimitiveType type,
                                    int64_t startNpu = 0);

/// One tensor of a fit report.
struct FitEntry {
  std::string name;
  TensorSpec spec; ///< with the address and W used
  LocalTensor tensor;
  bool autoPlaced = false;
  bool autoW = false;
  NpuUsage usage; ///< over all NPUs it touches
  std::vector<std::string> suggestions;
  size_t order = 0; ///< position in the input list
};

struct FitReport {
  std::vector<FitEntry> entries; ///< in input order
  /// Alignment, size and overlap problems and tensors that found no place.
  std::vector<std::string> problems;
  /// Per NPU: the highest byte reserved + 1, and the bytes reserved.
  std::vector<int64_t> highWater, reserved, data;
  bool fits() const { return problems.empty(); }
};

/// Places the tensors in order: those with an address where they say, the
/// others first-fit (lowest offset, then the start NPU needing the fewest
/// channels per NPU). A matrix without W gets the advisor's W. Fails only
/// for a tensor that cannot be described at all (e.g. 4N fp32) and for a
/// name given to two tensors.
Expected<FitReport> fitTensors(const NpuConfig &config,
                               const std::vector<TensorSpec> &specs);

/// Cheaper choices for one placed tensor: a start NPU needing fewer channels
/// per NPU, a tighter layout, a better matrix W.
std::vector<std::string> suggestCheaper(const LocalTensor &tensor);

} // namespace tessel

#endif // TESSEL_NPU_NPUADVISOR_H
