//===- ErrorDiagnostics.h - tessel Errors and MLIR diagnostics --*- C++ -*-===//
//
// The compiler layers (Codegen, Analysis, Dialect) speak MLIR: they return
// LogicalResult/FailureOr and report failures as diagnostics at a location.
// The core speaks Expected/Status with an Error (Support/Error.h). This is
// the one adapter between them:
//
//   - an Error becomes a diagnostic: `emitError(loc, error)`, at the error's
//     own position when it has one (FileLineColLoc), else at `loc`;
//   - diagnostics become an Error: an `ErrorCapture` alive while MLIR code
//     runs keeps the first error, with its line and column when its
//     location names them, and the notes attached to it.
//
//   ErrorCapture capture(context);
//   if (mlir::failed(pm.run(module)))
//     return capture.takeError("the pass pipeline failed");
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_ERRORDIAGNOSTICS_H
#define TESSEL_DIALECT_ERRORDIAGNOSTICS_H

#include "tessel/Hlo/HloInstruction.h"
#include "tessel/Support/Error.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include <optional>
#include <string_view>

namespace tessel {

/// The location of an error with a position: FileLineColLoc(source, line,
/// column); `fallback` for an error without one.
mlir::Location locationOf(const Error &error, mlir::Location fallback);

/// The location of an HLO instruction read from text (FileLineColLoc with
/// an empty file name), else `fallback`.
mlir::Location locationOf(const HloInstruction &instruction,
                          mlir::Location fallback);

/// Reports `error` as an MLIR error diagnostic, at its position when it has
/// one, else at `loc`.
mlir::InFlightDiagnostic emitError(mlir::Location loc, const Error &error);

/// The Error of a diagnostic: its message (and its notes, one a line) and,
/// when its location holds a FileLineColLoc (also inside a NameLoc,
/// CallSiteLoc or FusedLoc), the file, line and column.
Error errorFromDiagnostic(const mlir::Diagnostic &diagnostic);

/// Captures the diagnostics of `context` while alive: they are not printed.
/// Keeps the first error; warnings and remarks are dropped.
class ErrorCapture {
public:
  explicit ErrorCapture(mlir::MLIRContext *context);

  /// Whether an error was reported.
  bool failed() const { return first.has_value(); }
  /// The first error reported, or an Error(`otherwise`) when none was (a
  /// failure that emitted no diagnostic). Passing `otherwise` as context
  /// ("the pass pipeline failed") prefixes it to a captured error too.
  Error takeError(std::string_view otherwise);

private:
  std::optional<Error> first;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace tessel

#endif // TESSEL_DIALECT_ERRORDIAGNOSTICS_H
