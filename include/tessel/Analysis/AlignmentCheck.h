//===- AlignmentCheck.h - The alignment check of an MLIR source -*- C++ -*-===//
//
// `tessel align` and the Python binding's `tessel.align` run the alignment
// verifier (AlignmentVerifier.h) on MLIR text: parse it with the dialects
// kernels use (func, arith, scf, affine, memref, vector, gpu, tessel, tpu),
// check every top-level op, and report each failure with its position and
// values named as the source names them (%b, %r#1). The report outlives the
// MLIR context: it holds strings and numbers only.
//
//   AlignmentSourceReport report;
//   std::string diagnostics;
//   if (Status error = checkAlignmentOfSource(text, "k.mlir", report,
//                                           diagnostics); !error)
//     ... diagnostics, then error.error().message: "'k.mlir' is not valid MLIR"
//   llvm::outs() << formatAlignmentReport(report);
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_ANALYSIS_ALIGNMENTCHECK_H
#define TESSEL_ANALYSIS_ALIGNMENTCHECK_H

#include "tessel/Support/Divisibility.h"
#include "tessel/Support/Expected.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

/// One index not proven aligned, as AlignmentFailure with the op's position
/// and name instead of the op.
struct AlignmentFinding {
  /// 1-based; 0 when the op has no file position.
  unsigned line = 0;
  unsigned column = 0;
  /// "vector.load".
  std::string op;
  unsigned dim = 0;
  int64_t multiple = 0;
  Verdict verdict = Verdict::Unknown;
  std::string message, source, term, status, fix;
};

/// What the check found in a source.
struct AlignmentSourceReport {
  unsigned accessesChecked = 0;
  unsigned indicesChecked = 0;
  std::vector<AlignmentFinding> failures;
};

/// "proven-not" or "unknown".
const char *alignmentVerdictName(Verdict verdict);

/// Parses `text` (named `bufferName` in diagnostics) and checks it into
/// `report`. When it does not parse, `diagnostics` gets the parser's
/// messages ("k.mlir:3:5: error: ...\n...") and the error says "'k.mlir' is
/// not valid MLIR".
Status checkAlignmentOfSource(llvm::StringRef text, llvm::StringRef bufferName,
                              AlignmentSourceReport &report,
                              std::string &diagnostics);

/// The text `tessel align FILE` prints: each failure (FILE:L:C: error: ...
/// with its op, why, term, status and fix), then the count.
std::string formatAlignmentReport(llvm::StringRef file,
                                  const AlignmentSourceReport &report);

/// The object `tessel align FILE --json` prints: file, accesses, indices,
/// aligned, and failures (line, column, op, dimension, multiple, verdict,
/// message, source, term, status, fix).
llvm::json::Value alignmentReportJson(llvm::StringRef file,
                                      const AlignmentSourceReport &report);

} // namespace tessel

#endif // TESSEL_ANALYSIS_ALIGNMENTCHECK_H
