//===- RowReads.h - A row loop's element read as it is ----------*- C++ -*-===//
//
// Private to lib/Codegen: the row loops -tessel-min-max-on-bits and
// -tessel-vectorize-partials read as vectors, where the element of a step
// is read straight from a tensor, one element on per step.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_TRANSFORMS_ROWREADS_H
#define TESSEL_LIB_CODEGEN_TRANSFORMS_ROWREADS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace tessel {

/// Where `loop`'s element `element` is read: a tensor defined outside the
/// loop, at an index (the one result of an apply_indexing in the body)
/// whose coefficient of the induction variable is 1, the other operands
/// defined outside the loop, and the loop steps by 1.
struct RowRead {
  mlir::Value tensor;
  mlir::Value index;
};

/// `element`'s RowRead, or nullopt where it is not read so.
std::optional<RowRead> rowRead(mlir::scf::ForOp loop, mlir::Value element);

/// `index`, computed in `loop`'s body from its induction variable, for the
/// induction variable `iv` instead: the ops it is computed with cloned at
/// `b` (those outside the body are used as they are).
mlir::Value indexAt(mlir::OpBuilder &b, mlir::scf::ForOp loop,
                    mlir::Value index, mlir::Value iv);

/// The elements of `tensor` (rank 1) from `index` on as a vector of `type`,
/// in bounds (the caller reads inside the tensor), padding 0.
mlir::Value readVector(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value tensor, mlir::Value index,
                       mlir::VectorType type);

/// The elements of `read` at the steps `iv`, `iv` + 1, ... as a vector of
/// `type` (in bounds: the caller reads inside the row).
mlir::Value readLanes(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::scf::ForOp loop, const RowRead &read,
                      mlir::VectorType type, mlir::Value iv);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_TRANSFORMS_ROWREADS_H
