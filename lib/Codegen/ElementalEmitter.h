//===- ElementalEmitter.h - One HLO element as MLIR arithmetic --*- C++ -*-===//
//
// Private to lib/Codegen. Emits the code that computes one element of an HLO
// instruction at a given output index: arith/math for elementwise ops,
// tessel.apply_indexing for ops that only move indices (through the maps of
// HloIndexing.h), scf.if for pad and concatenate, scf.for for reduce and dot.
// Operands are emitted recursively until the caller's `OperandProvider`
// says an operand lies outside (a parameter tensor, another subgraph's
// function); values already emitted at the same indices are reused.
//
// Numerics follow the evaluator (HloEvaluator.h): bf16 and f16 compute in f32
// and round after every op; integers wrap, x / 0 = -1, x % 0 = x; shifts by
// the width or more give 0 (or the sign); float -> int converts saturate.
// c64/c128 are complex<f32>/complex<f64> values (ScalarOpsComplex.cpp); a
// constant of them is a tensor of its parts.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_ELEMENTALEMITTER_H
#define TESSEL_LIB_CODEGEN_ELEMENTALEMITTER_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Indexing/IndexingMap.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <memory>
#include <string>

namespace tessel {

/// The storage type of an HLO element type in tensors (pred is i1, unsigned
/// integers are signless), or nullptr with `error` set when the compiler does
/// not handle it.
mlir::Type getStorageType(PrimitiveType type, mlir::MLIRContext *context,
                          std::string *error = nullptr);
/// tensor<dims x storage>, with the layout as a string encoding when it is
/// not the default row-major one.
mlir::RankedTensorType getTensorType(const Shape &shape,
                                     mlir::MLIRContext *context);

/// Emits `tessel.apply_indexing` for `map` and returns its results (constants
/// for constant results).
llvm::SmallVector<mlir::Value> emitApplyIndexing(mlir::OpBuilder &b,
                                                 mlir::Location loc,
                                                 const IndexingMap &map,
                                                 mlir::ValueRange dims,
                                                 mlir::ValueRange symbols);
/// An i1 that is true when (dims)[symbols] lies in the map's domain: every
/// variable in its range and every constraint satisfied. Checks that
/// `knownDims` says are implied (dims in range) are skipped.
mlir::Value emitInDomain(mlir::OpBuilder &b, mlir::Location loc,
                         const IndexingMap &map, mlir::ValueRange dims,
                         mlir::ValueRange symbols, bool dimsKnownInRange);

class ElementalEmitter {
public:
  /// Returns the value(s) of an operand that the emitter must not emit
  /// itself, or std::nullopt to have it emitted here.
  using OperandProvider =
      std::function<std::optional<llvm::SmallVector<mlir::Value>>(
          const HloInstruction &, mlir::ValueRange)>;

  ElementalEmitter(mlir::OpBuilder &builder, OperandProvider provider)
      : b(builder), provider(std::move(provider)) {}

  /// The value(s) of `instruction` at `indices` (one value, or one per tuple
  /// element of a variadic reduce). When an op or type is not handled, fails
  /// with an error diagnostic at the instruction's line and column.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emit(const HloInstruction &instruction, mlir::ValueRange indices);

  /// An integer start index of `type` as an index clamped into [0, max],
  /// as XLA and the evaluator clamp the starts of dynamic-slice,
  /// dynamic-update-slice and gather (a u64 past INT64_MAX is max).
  mlir::Value emitClampedStart(mlir::Value value, PrimitiveType type,
                               int64_t max);

  /// Emits a scalar computation (a reducer, a map's function) on `args`.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitScalarComputation(const HloComputation &computation,
                        mlir::ValueRange args);

private:
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitUncached(const HloInstruction &instruction, mlir::ValueRange indices);
  mlir::FailureOr<mlir::Value> emitOperand(const HloInstruction &instruction,
                                           int64_t i, mlir::ValueRange indices);
  mlir::FailureOr<mlir::Value> emitThroughMap(const HloInstruction &instruction,
                                              mlir::ValueRange indices);
  mlir::FailureOr<mlir::Value> emitPad(const HloInstruction &instruction,
                                       mlir::ValueRange indices);
  mlir::FailureOr<mlir::Value>
  emitConcatenate(const HloInstruction &instruction, mlir::ValueRange indices);
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitReduce(const HloInstruction &instruction, mlir::ValueRange indices);
  /// A reduce in the compiler's partial order (reducesInPartials in
  /// HloEvaluator.h): the minor dim as independent partial results (SIMD
  /// lanes on the CPU) folded at the end.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitPartialReduce(const HloInstruction &instruction, mlir::ValueRange indices,
                    llvm::ArrayRef<int64_t> bounds,
                    const std::vector<bool> &isReduced, mlir::Value init);
  mlir::FailureOr<mlir::Value> emitDot(const HloInstruction &instruction,
                                       mlir::ValueRange indices);
  /// acc + lhs[lhsIndex] * rhs[rhsIndex] in `accType` (operands 0 and 1 of
  /// a dot or a convolution), as the one-element result of a loop body.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitMultiplyAdd(const HloInstruction &instruction, mlir::ValueRange lhsIndex,
                  mlir::ValueRange rhsIndex, mlir::Value acc,
                  PrimitiveType accType);
  /// convolution in the evaluator's order (kernel positions, then input
  /// features), floats summed in f64.
  mlir::FailureOr<mlir::Value>
  emitConvolution(const HloInstruction &instruction, mlir::ValueRange indices);
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitReduceWindow(const HloInstruction &instruction, mlir::ValueRange indices);
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitCall(const HloInstruction &instruction, mlir::ValueRange indices);
  mlir::FailureOr<mlir::Value>
  emitDynamicSlice(const HloInstruction &instruction, mlir::ValueRange indices);
  /// gather: the start vector read from the indices at the output's batch
  /// position, clamped as XLA and the evaluator clamp it.
  mlir::FailureOr<mlir::Value> emitGather(const HloInstruction &instruction,
                                          mlir::ValueRange indices);
  mlir::FailureOr<mlir::Value>
  emitDynamicUpdateSlice(const HloInstruction &instruction,
                         mlir::ValueRange indices);
  /// bitcast-convert to a narrower or wider type (a minor dim added or
  /// dropped).
  mlir::FailureOr<mlir::Value>
  emitBitcastConvertWidths(const HloInstruction &instruction,
                           mlir::ValueRange indices);
  mlir::FailureOr<mlir::Value> emitConstant(const HloInstruction &instruction,
                                            mlir::ValueRange indices);
  /// The element of `literal` at `indices` (a constant of the kernel).
  mlir::FailureOr<mlir::Value> emitLiteral(const Literal &literal,
                                           mlir::ValueRange indices);
  /// The value of an instruction computed from constants and iotas alone
  /// (through data movement and the ops foldsWhenConstant accepts), by the
  /// evaluator, or null: for another instruction, a value of more than
  /// kConstantElements elements, or one the evaluator refuses.
  std::shared_ptr<const Literal>
  constantValue(const HloInstruction &instruction);
  mlir::FailureOr<mlir::Value> emitIota(const HloInstruction &instruction,
                                        mlir::ValueRange indices);
  /// Clamped start indices of dynamic-slice / dynamic-update-slice.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitStartIndices(const HloInstruction &instruction, int64_t firstOperand,
                   llvm::ArrayRef<int64_t> operandDims,
                   llvm::ArrayRef<int64_t> sliceDims);

  mlir::LogicalResult fail(const HloInstruction &instruction,
                           const std::string &what);

  mlir::OpBuilder &b;
  OperandProvider provider;

  /// Values emitted in each open region (innermost last): a value is reused
  /// only while the region that holds it encloses the insertion point.
  struct CacheKey {
    const HloInstruction *instruction;
    llvm::SmallVector<mlir::Value> indices;
  };
  std::vector<std::vector<std::pair<CacheKey, llvm::SmallVector<mlir::Value>>>>
      scopes{1};
  const llvm::SmallVector<mlir::Value> *lookup(const HloInstruction &,
                                               mlir::ValueRange) const;
  /// Opens a cache scope for code emitted inside a nested region.
  struct Scope {
    ElementalEmitter &e;
    explicit Scope(ElementalEmitter &e) : e(e) { e.scopes.emplace_back(); }
    ~Scope() { e.scopes.pop_back(); }
  };
  /// Scalar parameters of the computation being emitted by
  /// emitScalarComputation.
  llvm::DenseMap<const HloInstruction *, mlir::Value> scalarParameters;
  /// Parameters of computations called by `call`: the call and the operand
  /// each stands for.
  llvm::DenseMap<const HloInstruction *,
                 std::pair<const HloInstruction *, int64_t>>
      callArguments;
  /// constantValue's answers so far.
  llvm::DenseMap<const HloInstruction *, std::shared_ptr<const Literal>>
      constants;
};

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_ELEMENTALEMITTER_H
