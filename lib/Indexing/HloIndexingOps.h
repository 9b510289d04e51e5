//===- HloIndexingOps.h - Per-op indexing maps (internal) -------*- C++ -*-===//
//
// The maps of single ops, shared by HloIndexing.cpp (dispatch and fusions),
// HloOutputToInput.cpp and HloInputToOutput.cpp. Each function returns the
// unsimplified maps; the caller simplifies.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_INDEXING_HLOINDEXINGOPS_H
#define TESSEL_LIB_INDEXING_HLOINDEXINGOPS_H

#include "tessel/Indexing/HloIndexing.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace tessel {
namespace hlo_indexing {

inline mlir::AffineExpr dim(unsigned i, mlir::MLIRContext *context) {
  return mlir::getAffineDimExpr(i, context);
}
inline mlir::AffineExpr sym(unsigned i, mlir::MLIRContext *context) {
  return mlir::getAffineSymbolExpr(i, context);
}
inline mlir::AffineExpr cst(int64_t value, mlir::MLIRContext *context) {
  return mlir::getAffineConstantExpr(value, context);
}
/// (d0, ..., d{count-1}): the identity index.
llvm::SmallVector<mlir::AffineExpr> dimExprs(size_t count,
                                             mlir::MLIRContext *context);

/// "OPCODE %name: why", the error of an op whose maps cannot be built.
Error unsupported(const HloInstruction &instruction, const std::string &why);

/// Ops whose output element i reads element i of each operand: XLA's
/// elementwise ops, and real, imag and complex, which the compiler does not
/// emit (so isElementwise leaves them out).
inline bool hasElementwiseMaps(HloOpcode op) {
  return isElementwise(op) || op == HloOpcode::Real || op == HloOpcode::Imag ||
         op == HloOpcode::Complex;
}

/// Whether the op has maps here; the others (gather, scatter, sort,
/// convolution, while, custom-calls, ...) have unknown indexing.
inline bool hasIndexingMaps(const HloInstruction &inst) {
  if (hasElementwiseMaps(inst.opcode()) || inst.passesValueThrough())
    return true;
  switch (inst.opcode()) {
  case HloOpcode::Parameter:
  case HloOpcode::Constant:
  case HloOpcode::Iota:
  case HloOpcode::Broadcast:
  case HloOpcode::Transpose:
  case HloOpcode::Reshape:
  case HloOpcode::Slice:
  case HloOpcode::Reverse:
  case HloOpcode::Pad:
  case HloOpcode::Concatenate:
  case HloOpcode::Reduce:
  case HloOpcode::ReduceWindow:
  case HloOpcode::DynamicSlice:
  case HloOpcode::DynamicUpdateSlice:
  case HloOpcode::Dot:
  case HloOpcode::Copy:
  case HloOpcode::Bitcast:
  case HloOpcode::Tuple:
  case HloOpcode::GetTupleElement:
  case HloOpcode::Fusion:
  case HloOpcode::Call:
    return true;
  default:
    return false;
  }
}

/// The dims of an operand, which must be an array.
Expected<std::vector<int64_t>> operandDims(const HloInstruction &instruction,
                                           int64_t operand);

/// (d0, ..., dn-1)[s0, ...] -> (results) over the given sizes.
IndexingMap makeMap(mlir::MLIRContext *context, llvm::ArrayRef<int64_t> dims,
                    llvm::ArrayRef<int64_t> symbols,
                    llvm::ArrayRef<mlir::AffineExpr> results);
/// The map from a shape to nothing: a scalar operand every point may read.
IndexingMap scalarMap(mlir::MLIRContext *context, llvm::ArrayRef<int64_t> dims);
/// () -> (s0, ..., sn-1) with s_i over dims[i]: a scalar operand read by
/// every element of a shape.
IndexingMap everyElementMap(mlir::MLIRContext *context,
                            llvm::ArrayRef<int64_t> dims);

/// Row-major linear index of `index` in `dims`.
mlir::AffineExpr linearize(llvm::ArrayRef<mlir::AffineExpr> index,
                           llvm::ArrayRef<int64_t> dims,
                           mlir::MLIRContext *context);
/// The index of `dims` whose row-major linear index is `linear`.
llvm::SmallVector<mlir::AffineExpr> delinearize(mlir::AffineExpr linear,
                                                llvm::ArrayRef<int64_t> dims,
                                                mlir::MLIRContext *context);

/// The maps of a logical index of `from` to the logical index of `to` that
/// shares its place in the buffer (bitcast).
Expected<IndexingMap> bitcastMap(const Shape &from, const Shape &to,
                                 mlir::MLIRContext *context);

/// Output-to-input maps of one op, not simplified; outputId is checked.
Expected<HloInstructionIndexing>
outputToInput(const HloInstruction &instruction, int64_t outputId,
              mlir::MLIRContext *context);
/// Input-to-output maps of one op, not simplified; inputId is checked.
Expected<HloInstructionIndexing>
inputToOutput(const HloInstruction &instruction, int64_t inputId,
              mlir::MLIRContext *context);

/// Fusions and calls: composed through the called computation.
Expected<HloInstructionIndexing>
fusionOutputToInput(const HloInstruction &fusion, int64_t outputId,
                    mlir::MLIRContext *context);
Expected<HloInstructionIndexing>
fusionInputToOutput(const HloInstruction &fusion, int64_t inputId,
                    mlir::MLIRContext *context);

/// scatter (HloScatterIndexing.cpp): the operand by the identity both ways,
/// the updates to the output through runtime variables for the start
/// indices, the rest unknown.
HloInstructionIndexing scatterOutputToInput(const HloInstruction &scatter,
                                            mlir::MLIRContext *context);
HloInstructionIndexing scatterInputToOutput(const HloInstruction &scatter,
                                            int64_t inputId,
                                            mlir::MLIRContext *context);
/// "OPCODE %name" for messages.
std::string describe(const HloInstruction &instruction);

} // namespace hlo_indexing
} // namespace tessel

#endif // TESSEL_LIB_INDEXING_HLOINDEXINGOPS_H
