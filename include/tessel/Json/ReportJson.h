//===- ReportJson.h - The --json objects of tessel's reports ----*- C++ -*-===//
//
// The objects `tessel ... --json` prints, built in one place so that the
// command line and the Python binding (`Layout.to_dict()`, the NPU reports'
// `to_dict()`) give the same fields:
//
//   layoutExplainJson(layout)        tessel layout explain --json
//   tpuLayoutJson(choice)            tessel layout tpu --json
//   npuConfigJson(config)            the "config" of the NPU reports
//   localTensorExplainJson(tensor)   tessel npu explain --json
//   fitReportJson(report, config)    tessel npu fit --json
//   matrixAdviceJson(table, config)  tessel npu fit --matrix RxC --json
//   hloIndexingJson(inst, input)     tessel indexing maps --json
//   formatJson(value)                indented by 2, as the command prints it
//
// The core libraries (Layout, Npu) do not link LLVM; this library does.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_JSON_REPORTJSON_H
#define TESSEL_JSON_REPORTJSON_H

#include "tessel/Hlo/HloInstruction.h"
#include "tessel/Layout/TiledLayout.h"
#include "tessel/Layout/TpuLayout.h"
#include "tessel/Npu/LocalTensor.h"
#include "tessel/Npu/NpuConfig.h"
#include "tessel/Npu/NpuReport.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/JSON.h"

#include <optional>

#include <string>

namespace tessel {

/// Sizes, padding, utilization, XLA's bytes and a cheaper layout.
llvm::json::Value layoutExplainJson(const TiledLayout &layout);

/// layout, reason, physical_bytes, utilization of a TPU compiler's choice.
llvm::json::Object tpuLayoutJson(const TpuLayoutChoice &choice);

/// name, npus, bytes_per_npu, banks, align_bytes.
llvm::json::Object npuConfigJson(const NpuConfig &config);

/// {n, c, h, w} of strides.
llvm::json::Object npuStridesJson(const Dims4 &strides);

/// The first `rank` dims as an array.
llvm::json::Array npuDimsJson(const Dims4 &dims, int rank = 4);

/// The tensor's spec, config, placement, strides (and which are used),
/// bytes, waste by cause, problems and cheaper suggestions.
llvm::json::Object localTensorExplainJson(const LocalTensor &tensor);

/// config, fits, tensors (name, spec, npus, bytes and waste, suggestions),
/// npus (high water, reserved, data) and problems.
llvm::json::Object fitReportJson(const FitReport &report,
                                 const NpuConfig &config);

/// rows, cols, dtype, start_npu, config, best, ties, reasons and the
/// table's choices.
llvm::json::Object matrixAdviceJson(const MatrixAdviceTable &table,
                                    const NpuConfig &config);

/// The indexing maps of `inst`: for every output, the maps of each operand
/// (output-to-input), or with `inputId` the maps from that operand to the
/// outputs; fails as the indexing of the instruction does.
Expected<llvm::json::Value> hloIndexingJson(const HloInstruction &inst,
                                            std::optional<int64_t> inputId,
                                            mlir::MLIRContext *context);

/// The text of `value` as the commands print it (no final newline).
std::string formatJson(const llvm::json::Value &value);

} // namespace tessel

#endif // TESSEL_JSON_REPORTJSON_H
