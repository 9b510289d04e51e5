//===- ErrorDiagnostics.cpp - tessel Errors and MLIR diagnostics ----------===//
#include "tessel/Dialect/ErrorDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

namespace tessel {

mlir::Location locationOf(const Error &error, mlir::Location fallback) {
  if (!error.span || !error.span->located())
    return fallback;
  return mlir::FileLineColLoc::get(fallback.getContext(), error.source,
                                   static_cast<unsigned>(error.span->line),
                                   static_cast<unsigned>(error.span->column));
}

mlir::Location locationOf(const HloInstruction &instruction,
                          mlir::Location fallback) {
  SourceLocation where = instruction.location();
  if (where.line <= 0)
    return fallback;
  return mlir::FileLineColLoc::get(fallback.getContext(), "",
                                   static_cast<unsigned>(where.line),
                                   static_cast<unsigned>(where.column));
}

mlir::InFlightDiagnostic emitError(mlir::Location loc, const Error &error) {
  return mlir::emitError(locationOf(error, loc)) << error.message;
}

namespace {

/// The first FileLineColLoc in `loc`, looking through the wrappers.
std::optional<mlir::FileLineColLoc> fileLineCol(mlir::Location loc) {
  if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc))
    return file;
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc))
    return fileLineCol(name.getChildLoc());
  if (auto callSite = llvm::dyn_cast<mlir::CallSiteLoc>(loc))
    return fileLineCol(callSite.getCallee());
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location inner : fused.getLocations())
      if (std::optional<mlir::FileLineColLoc> file = fileLineCol(inner))
        return file;
  return std::nullopt;
}

} // namespace

Error errorFromDiagnostic(const mlir::Diagnostic &diagnostic) {
  std::string message = diagnostic.str();
  for (const mlir::Diagnostic &note : diagnostic.getNotes())
    message += "\nnote: " + note.str();
  std::optional<mlir::FileLineColLoc> file =
      fileLineCol(diagnostic.getLocation());
  if (!file || file->getLine() == 0)
    return Error(std::move(message));
  Error error =
      Error::atLine(file->getLine(), file->getColumn(), std::move(message));
  // An HLO instruction's location has no file name (MLIR may spell it "-"):
  // the caller that read the file names it.
  llvm::StringRef name = file->getFilename().getValue();
  if (name != "-")
    error.source = name.str();
  return error;
}

ErrorCapture::ErrorCapture(mlir::MLIRContext *context)
    : handler(context, [this](mlir::Diagnostic &diagnostic) {
        if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error &&
            !first)
          first = errorFromDiagnostic(diagnostic);
        return mlir::success();
      }) {}

Error ErrorCapture::takeError(std::string_view otherwise) {
  if (!first)
    return Error(std::string(otherwise));
  Error error = std::move(*first);
  first.reset();
  if (!otherwise.empty())
    error.prepend(std::string(otherwise) + ": ");
  return error;
}

} // namespace tessel
