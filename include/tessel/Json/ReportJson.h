//===- ReportJson.h - The --json objects of tessel's reports ----*- C++ -*-===//
//
// The objects `tessel ... --json` prints, built in one place so that the
// command line and the Python binding (`Layout.to_dict()`, the NPU reports'
// `to_dict()`) give the same fields:
//
//   layoutExplainJson(layout)        tessel layout explain --json
//   npuConfigJson(config)            the "config" of the NPU reports
//   fitReportJson(report, config)    tessel npu fit --json
//   matrixAdviceJson(table, config)  tessel npu fit --matrix RxC --json
//   formatJson(value)                indented by 2, as the command prints it
//
// The core libraries (Layout, Npu) do not link LLVM; this library does.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_JSON_REPORTJSON_H
#define TESSEL_JSON_REPORTJSON_H

#include "tessel/Layout/TiledLayout.h"
#include "tessel/Npu/NpuConfig.h"
#include "tessel/Npu/NpuReport.h"

#include "llvm/Support/JSON.h"

#include <string>

namespace tessel {

/// Sizes, padding, utilization, XLA's bytes and a cheaper layout.
llvm::json::Value layoutExplainJson(const TiledLayout &layout);

/// name, npus, bytes_per_npu, banks, align_bytes.
llvm::json::Object npuConfigJson(const NpuConfig &config);

/// config, fits, tensors (name, spec, npus, bytes and waste, suggestions),
/// npus (high water, reserved, data) and problems.
llvm::json::Object fitReportJson(const FitReport &report,
                                 const NpuConfig &config);

/// rows, cols, dtype, start_npu, config, best, ties, reasons and the
/// table's choices.
llvm::json::Object matrixAdviceJson(const MatrixAdviceTable &table,
                                    const NpuConfig &config);

/// The text of `value` as the commands print it (no final newline).
std::string formatJson(const llvm::json::Value &value);

} // namespace tessel

#endif // TESSEL_JSON_REPORTJSON_H
