//===- NpuReport.h - The reports of tessel npu explain and fit --*- C++ -*-===//
//
// The text `tessel npu explain` and `tessel npu fit` print (and the Python
// binding's LocalTensor.explain() and tessel.npu.fit()):
//
//   tessel npu explain --npus 4 --mem 1024 'fp32[2,3,4,5]:aligned@2048'
//   tensor      fp32 (2,3,4,5) aligned at address 2048
//   ...         (one row per fact: chip, start, channels, strides, waste)
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_NPU_NPUREPORT_H
#define TESSEL_NPU_NPUREPORT_H

#include "tessel/Npu/LocalTensor.h"
#include "tessel/Npu/NpuAdvisor.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel {

/// "(2,3,4,5)": the first `rank` dims.
std::string describeDims(const Dims4 &dims, int rank = 4);
/// "npu 2", "npus 0..3", "npus 1, 3".
std::string describeNpuList(const std::vector<int64_t> &npus);
/// "fp32 (2,3,4,5) aligned at address 2048" (with W and the mode).
std::string describeTensorLine(const LocalTensor &tensor);

/// "name        value\n": a row of a report, the name padded to 12.
std::string describeField(const std::string &name, const std::string &value);

/// The report of `tessel npu explain`: placement, channels per NPU, strides
/// and why each has its value, bytes per NPU, data and waste, banks, then
/// the W the advisor chose (when `matrixWChosen`), the problems (alignment,
/// fit, aliasing) and cheaper alternatives.
std::string explainLocalTensor(const LocalTensor &tensor,
                               bool matrixWChosen = false);

/// What the byte at `place` holds (`tessel npu where --npu Q --offset R`):
/// "element (0,1,2,3), byte 2 of 4", "alignment padding after channel
/// (0,1), ...", "not part of the tensor: ...". `info` is
/// tensor.classify(place).
std::string describeByte(const LocalTensor &tensor, const ByteInfo &info,
                         NpuPlace place);

/// An (n, c, h, w) index (or (row, col) of a matrix) a user typed, checked
/// against the tensor's shape; `text` is how the user wrote it.
Expected<Dims4> checkTensorIndex(const LocalTensor &tensor,
                                 const std::vector<int64_t> &values,
                                 const std::string &text);

/// The title `tessel npu draw` gives a tensor's picture: "fp32 (2,3,4,5)
/// aligned at address 2048 on 4 npus x 1 KiB".
std::string describePictureTitle(const LocalTensor &tensor);

/// The tensor's alignment, fit and aliasing problems, in that order (empty
/// when there are none): what `tessel npu explain` fails with.
std::vector<std::string> localTensorProblems(const LocalTensor &tensor);

/// Gives a matrix without W the advisor's W (adviseMatrix); other tensors
/// are left as they are.
Status chooseMatrixW(const NpuConfig &config, TensorDesc &desc);

/// The report of `tessel npu fit`: each tensor's NPUs, bytes and waste, the
/// cheaper alternatives, per-NPU totals, and whether it all fits.
std::string describeFitReport(const FitReport &report, const NpuConfig &config);

/// The W advisor's answer for a rows x cols matrix (`tessel npu fit
/// --matrix RxC`): the advice, and the rows of its table (the Ws asked for,
/// else the candidates worth showing: at most 2 channels per NPU, and the
/// best).
struct MatrixAdviceTable {
  int64_t rows = 0, cols = 0;
  PrimitiveType type = PrimitiveType::F32;
  int64_t startNpu = 0;
  MatrixAdvice advice;
  std::vector<MatrixChoice> choices;
};

/// The advice and table for `ws` (empty: the advisor's candidates). Fails
/// as adviseMatrix does, and for a W outside 1..cols.
Expected<MatrixAdviceTable> adviseMatrixTable(const NpuConfig &config,
                                              int64_t rows, int64_t cols,
                                              PrimitiveType type,
                                              int64_t startNpu,
                                              const std::vector<int64_t> &ws);

/// The text of `tessel npu fit --matrix`: the best W, why, and the table.
std::string describeMatrixAdvice(const MatrixAdviceTable &table,
                                 const NpuConfig &config);

} // namespace tessel

#endif // TESSEL_NPU_NPUREPORT_H
