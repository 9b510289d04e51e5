//===- TpuDialect.cpp - The tpu dialect, its attributes and ops ----------===//
#include "tessel/Dialect/TpuDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "tessel/Dialect/TpuDialect.cpp.inc"
#include "tessel/Dialect/TpuEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/TpuAttrs.cpp.inc"
#define GET_OP_CLASSES
#include "tessel/Dialect/TpuOps.cpp.inc"
#pragma GCC diagnostic pop

using namespace mlir;

namespace tessel::tpu {

void TpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/TpuOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tessel/Dialect/TpuAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// #tpu.tiled<(8,128)(2,1),[2,1]>
//===----------------------------------------------------------------------===//

Attribute TiledLayoutAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  SmallVector<DenseI64ArrayAttr> tiles;
  while (succeeded(parser.parseOptionalLParen())) {
    SmallVector<int64_t> dims;
    if (parser.parseCommaSeparatedList([&]() -> ParseResult {
          int64_t d = 0;
          if (parser.parseInteger(d))
            return failure();
          dims.push_back(d);
          return success();
        }) ||
        parser.parseRParen())
      return {};
    tiles.push_back(DenseI64ArrayAttr::get(parser.getContext(), dims));
  }
  SmallVector<int64_t> strides;
  if (parser.parseComma() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       int64_t s = 0;
                                       if (parser.parseInteger(s))
                                         return failure();
                                       strides.push_back(s);
                                       return success();
                                     }) ||
      parser.parseGreater())
    return {};
  return parser.getChecked<TiledLayoutAttr>(loc, parser.getContext(), tiles,
                                            strides);
}

void TiledLayoutAttr::print(AsmPrinter &printer) const {
  printer << "<";
  for (DenseI64ArrayAttr tile : getTiles()) {
    printer << "(";
    llvm::interleave(tile.asArrayRef(), printer, ",");
    printer << ")";
  }
  printer << ",[";
  llvm::interleave(getTileStrides(), printer, ",");
  printer << "]>";
}

LogicalResult
TiledLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        ArrayRef<DenseI64ArrayAttr> tiles,
                        ArrayRef<int64_t> tileStrides) {
  for (auto [i, tile] : llvm::enumerate(tiles)) {
    if (tile.empty())
      return emitError() << "tile " << i << " has no dims";
    for (int64_t d : tile.asArrayRef())
      if (d <= 0)
        return emitError() << "tile " << i << " has extent " << d
                           << ", expected a positive extent";
  }
  for (int64_t s : tileStrides)
    if (s < 0)
      return emitError() << "tile stride " << s << " is negative";
  return success();
}

AffineMap TiledLayoutAttr::getAffineMap() const {
  return AffineMap::getMultiDimIdentityMap(getTileStrides().size(),
                                           getContext());
}

// Never the identity, or memref types would print without it.
bool TiledLayoutAttr::isIdentity() const { return false; }

LogicalResult TiledLayoutAttr::verifyLayout(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (getTileStrides().size() != shape.size())
    return emitError() << "#tpu.tiled has " << getTileStrides().size()
                       << " tile strides for a memref of rank " << shape.size();
  if (!getTiles().empty() && size_t(getTiles().front().size()) > shape.size())
    return emitError() << "#tpu.tiled's first tile has "
                       << getTiles().front().size()
                       << " dims, more than the memref's rank " << shape.size();
  return success();
}

int64_t TiledLayoutAttr::tileExtent(unsigned dim, unsigned rank) const {
  if (getTiles().empty())
    return 1;
  ArrayRef<int64_t> tile = getTiles().front().asArrayRef();
  if (dim + tile.size() < rank || dim >= rank)
    return 1;
  return tile[dim + tile.size() - rank];
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult AssumeMultipleOp::verify() {
  int64_t multiple = getMultipleAttr().getValue().getSExtValue();
  if (multiple <= 0)
    return emitOpError() << "multiple must be positive, got " << multiple;
  return success();
}

static LogicalResult verifyAccess(Operation *op, MemRefType type,
                                  size_t numIndices) {
  if (size_t(type.getRank()) != numIndices)
    return op->emitOpError()
           << "has " << numIndices << " indices for a memref of rank "
           << type.getRank();
  return success();
}

LogicalResult LoadOp::verify() {
  return verifyAccess(*this, getBase().getType(), getIndices().size());
}

LogicalResult StoreOp::verify() {
  return verifyAccess(*this, getBase().getType(), getIndices().size());
}

} // namespace tessel::tpu
