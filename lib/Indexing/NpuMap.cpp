//===- NpuMap.cpp - NPU local tensors as indexing maps --------------------===//
#include "tessel/Indexing/NpuMap.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"

using mlir::AffineExpr;

namespace tessel {

IndexingMap getNpuLocalMap(const LocalTensor &tensor,
                           mlir::MLIRContext *context) {
  AffineExpr n = mlir::getAffineDimExpr(0, context);
  AffineExpr c = mlir::getAffineDimExpr(1, context);
  AffineExpr h = mlir::getAffineDimExpr(2, context);
  AffineExpr w = mlir::getAffineDimExpr(3, context);
  AffineExpr lane = mlir::getAffineConstantExpr(0, context);
  if (tensor.layout() == NpuLayout::Matrix) {
    int64_t width = tensor.desc().matrixW;
    w = c % width;
    c = c.floorDiv(width);
  } else if (int64_t lanes = modeLanes(tensor.mode()); lanes > 1) {
    lane = n % lanes;
    n = n.floorDiv(lanes);
  }
  const Dims4 &stride = tensor.strides();
  int64_t npus = tensor.config().npus();
  NpuPlace start = tensor.start();
  AffineExpr channel = c + start.npu;
  AffineExpr offset = (n * stride[0] + channel.floorDiv(npus) * stride[1] +
                       h * stride[2] + w * stride[3]) *
                          tensor.storedBytes() +
                      lane * tensor.elementBytes() + start.offset;
  const Dims4 &shape = tensor.shape();
  IndexingMap map = IndexingMap::fromTensorSizes(
      mlir::AffineMap::get(4, 0, {channel % npus, offset}, context),
      {shape[0], shape[1], shape[2], shape[3]}, {});
  map.simplify();
  return map;
}

IndexingMap getContinuousMap(const Dims4 &shape, int64_t elementBytes,
                             mlir::MLIRContext *context) {
  Dims4 stride = continuousStrides(shape);
  AffineExpr offset = mlir::getAffineConstantExpr(0, context);
  for (unsigned d = 0; d < 4; ++d)
    offset = offset +
             mlir::getAffineDimExpr(d, context) * (stride[d] * elementBytes);
  IndexingMap map = IndexingMap::fromTensorSizes(
      mlir::AffineMap::get(4, 0, {offset}, context),
      {shape[0], shape[1], shape[2], shape[3]}, {});
  map.simplify();
  return map;
}

} // namespace tessel
