//===- RowReads.cpp - A row loop's element read as it is ------------------===//
#include "RowReads.h"

#include "AffineCoefficients.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

namespace tessel {

std::optional<RowRead> rowRead(mlir::scf::ForOp loop, mlir::Value element) {
  if (mlir::getConstantIntValue(loop.getStep()) != 1)
    return std::nullopt;
  auto read = element.getDefiningOp<mlir::tensor::ExtractOp>();
  if (!read || read->getBlock() != loop.getBody() ||
      read.getIndices().size() != 1 ||
      !loop.isDefinedOutsideOfLoop(read.getTensor()))
    return std::nullopt;
  auto index = read.getIndices()[0].getDefiningOp<ApplyIndexingOp>();
  if (!index || index.getNumResults() != 1)
    return std::nullopt;
  int64_t position = -1;
  for (auto [i, operand] : llvm::enumerate(index.getOperands())) {
    if (operand == loop.getInductionVar() && position == -1)
      position = i;
    else if (!loop.isDefinedOutsideOfLoop(operand))
      return std::nullopt;
  }
  const IndexingMap &map = index.getIndexingMap();
  if (position == -1 || coefficientOf(map.getAffineMap().getResult(0),
                                      operandVariable(map, position)) != 1)
    return std::nullopt;
  return RowRead{read.getTensor(), index.getResult(0)};
}

mlir::Value indexAt(mlir::OpBuilder &b, mlir::scf::ForOp loop,
                    mlir::Value index, mlir::Value iv) {
  mlir::IRMapping map;
  map.map(loop.getInductionVar(), iv);
  std::function<mlir::Value(mlir::Value)> at = [&](mlir::Value v) {
    if (mlir::Value done = map.lookupOrNull(v))
      return done;
    mlir::Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != loop.getBody())
      return v;
    for (mlir::Value operand : def->getOperands())
      at(operand);
    b.clone(*def, map);
    return map.lookup(v);
  };
  return at(index);
}

mlir::Value readVector(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value tensor, mlir::Value index,
                       mlir::VectorType type) {
  mlir::Value padding = b.create<mlir::arith::ConstantOp>(
      loc, b.getZeroAttr(type.getElementType()));
  return b.create<mlir::vector::TransferReadOp>(
      loc, type, tensor, mlir::ValueRange{index}, padding,
      llvm::ArrayRef<bool>{true});
}

mlir::Value readLanes(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::scf::ForOp loop, const RowRead &read,
                      mlir::VectorType type, mlir::Value iv) {
  return readVector(b, loc, read.tensor, indexAt(b, loop, read.index, iv),
                    type);
}

} // namespace tessel
