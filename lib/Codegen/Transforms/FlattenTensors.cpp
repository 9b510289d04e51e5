//===- FlattenTensors.cpp - -tessel-flatten-tensors -----------------------===//
//
// Every N-d tensor becomes the 1-D tensor of its buffer: as many elements as
// the layout's physical size (tiles and padding included), indexed by the
// layout's logical -> physical map (LayoutMap.h). An access
//
//   %x = tensor.extract %t[%i, %j] : tensor<3x5xf32, "{1,0:T(2,2)}">
//
// becomes
//
//   %o = tessel.apply_indexing #indexing_map(%i, %j)   // the layout's map
//   %x = tensor.extract %t[%o] : tensor<24xf32>
//
// and when every index comes from one tessel.apply_indexing, the two maps
// are composed and simplified into one, so the offset reads directly in the
// loop's variables: (th_x, bl_x)[vector_index] -> (bl_x * 512 + th_x * 4 +
// vector_index). A tensor's layout is its encoding (a string, as HLO prints
// layouts); no encoding means row-major.
//
// A vector transfer of a 1-D vector along the minor dim of a row-major
// tensor (the transpose emitter's squares on the CPU) reads or writes
// consecutive elements of the buffer from the offset of its first:
//
//   %v = vector.transfer_read %t[%i, %j], %pad : tensor<32x129xf32>,
//   vector<8xf32>
//     -> %o = tessel.apply_indexing #indexing_map(%i, %j)  // i * 129 + j
//        %v = vector.transfer_read %t[%o], %pad : tensor<4128xf32>,
//        vector<8xf32>
//
//===----------------------------------------------------------------------===//
#include "../ElementalEmitter.h"
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/TesselDialect.h"
#include "tessel/Indexing/LayoutMap.h"
#include "tessel/Layout/ShapeParser.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace tessel {
namespace {

std::optional<PrimitiveType> primitiveTypeOf(mlir::Type type) {
  if (type.isInteger(1))
    return PrimitiveType::Pred;
  if (type.isInteger(8))
    return PrimitiveType::S8;
  if (type.isInteger(16))
    return PrimitiveType::S16;
  if (type.isInteger(32))
    return PrimitiveType::S32;
  if (type.isInteger(64))
    return PrimitiveType::S64;
  if (type.isF16())
    return PrimitiveType::F16;
  if (type.isBF16())
    return PrimitiveType::BF16;
  if (type.isF32())
    return PrimitiveType::F32;
  if (type.isF64())
    return PrimitiveType::F64;
  if (auto complex = llvm::dyn_cast<mlir::ComplexType>(type))
    return complex.getElementType().isF32() ? PrimitiveType::C64
                                            : PrimitiveType::C128;
  return std::nullopt;
}

/// The layout of a tensor type: its logical -> physical map and its size.
struct TensorLayout {
  IndexingMap map;
  int64_t physicalElements;
};

mlir::FailureOr<TensorLayout> getTensorLayout(mlir::RankedTensorType type,
                                              std::string *error) {
  std::optional<PrimitiveType> element = primitiveTypeOf(type.getElementType());
  if (!element) {
    *error = "unsupported element type";
    return mlir::failure();
  }
  std::string text = std::string(primitiveTypeName(*element)) + "[";
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    text += (i ? "," : "") + std::to_string(d);
  text += "]";
  if (auto encoding =
          llvm::dyn_cast_or_null<mlir::StringAttr>(type.getEncoding()))
    text += encoding.getValue().str();
  Expected<Shape> shape = parseShape(text);
  if (!shape) {
    *error = "bad layout in " + text + ": " + shape.error().message;
    return mlir::failure();
  }
  Expected<TiledLayout> layout = TiledLayout::get(*shape);
  if (!layout) {
    *error = "bad layout in " + text + ": " + layout.error().message;
    return mlir::failure();
  }
  return TensorLayout{getLogicalToPhysicalMap(*layout, type.getContext()),
                      std::max<int64_t>(layout->physicalElements(), 1)};
}

bool needsFlattening(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  return tensor && (tensor.getRank() != 1 || tensor.getEncoding());
}

/// When every operand of `op` is a result of one apply_indexing, replaces
/// `op` by the composition of the two maps, simplified. Returns the op
/// that computes the values now.
ApplyIndexingOp composeWithProducer(ApplyIndexingOp op) {
  if (op.getNumOperands() == 0)
    return op;
  auto producer = op.getOperand(0).getDefiningOp<ApplyIndexingOp>();
  if (!producer)
    return op;
  llvm::SmallVector<mlir::AffineExpr> firstResults;
  for (mlir::Value v : op.getOperands()) {
    auto result = llvm::dyn_cast<mlir::OpResult>(v);
    if (!result || result.getOwner() != producer.getOperation())
      return op;
    firstResults.push_back(producer.getIndexingMap().getAffineMap().getResult(
        result.getResultNumber()));
  }
  const IndexingMap &p = producer.getIndexingMap();
  IndexingMap first(mlir::AffineMap::get(p.getNumDims(), p.getNumSymbols(),
                                         firstResults, op.getContext()),
                    p.getDimVars(), p.getRangeVars(), p.getRTVars(),
                    p.getConstraints());
  if (first.getNumRTVars() != 0 || op.getIndexingMap().getNumSymbols() != 0)
    return op;
  IndexingMap composed = composeIndexingMaps(first, op.getIndexingMap());
  composed.simplify();
  if (composed.getNumSymbols() != p.getNumSymbols())
    return op; // a symbol was dropped: keep the operands as they are
  mlir::OpBuilder b(op);
  auto replacement = b.create<ApplyIndexingOp>(op.getLoc(), producer.getDims(),
                                               producer.getSymbols(), composed);
  op.replaceAllUsesWith(replacement.getResults());
  op.erase();
  return replacement;
}

struct FlattenTensorsPass
    : public mlir::PassWrapper<FlattenTensorsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FlattenTensorsPass)
  llvm::StringRef getArgument() const final { return "tessel-flatten-tensors"; }
  llvm::StringRef getDescription() const final {
    return "Flatten tensors to 1-D buffers through their layouts' maps";
  }

  llvm::DenseMap<mlir::Type, std::optional<TensorLayout>> layouts;

  const TensorLayout *lookup(mlir::Operation *at, mlir::Type type) {
    auto it = layouts.find(type);
    if (it == layouts.end()) {
      std::string error;
      auto layout =
          getTensorLayout(llvm::cast<mlir::RankedTensorType>(type), &error);
      if (mlir::failed(layout))
        at->emitOpError() << error;
      it = layouts
               .insert({type, mlir::succeeded(layout)
                                  ? std::optional<TensorLayout>(*layout)
                                  : std::nullopt})
               .first;
    }
    return it->second ? &*it->second : nullptr;
  }

  mlir::Type flatType(mlir::Operation *at, mlir::Type type) {
    if (!needsFlattening(type))
      return type;
    const TensorLayout *layout = lookup(at, type);
    if (!layout)
      return type;
    auto tensor = llvm::cast<mlir::RankedTensorType>(type);
    return mlir::RankedTensorType::get({layout->physicalElements},
                                       tensor.getElementType());
  }

  /// The 1-D offset of `indices` in a tensor of type `type`.
  mlir::FailureOr<mlir::Value> linearize(mlir::OpBuilder &b,
                                         mlir::Operation *at, mlir::Type type,
                                         mlir::ValueRange indices) {
    const TensorLayout *layout = lookup(at, type);
    if (!layout)
      return mlir::failure();
    if (indices.empty())
      return mlir::Value(
          b.create<mlir::arith::ConstantIndexOp>(at->getLoc(), 0));
    auto op = b.create<ApplyIndexingOp>(at->getLoc(), indices,
                                        mlir::ValueRange{}, layout->map);
    return mlir::Value(composeWithProducer(op).getResult(0));
  }

  /// (d0) -> (d0): a 1-D vector of a 1-D tensor.
  static mlir::AffineMap minorIdentity(mlir::Operation *op) {
    return mlir::AffineMap::getMinorIdentityMap(1, 1, op->getContext());
  }

  /// The offset of a transfer's first element in the flattened tensor of
  /// `type`; null when the tensor stays as it is. Only a 1-D vector along
  /// the minor dim of a row-major tensor is flattened.
  mlir::FailureOr<mlir::Value>
  linearizeTransfer(mlir::OpBuilder &b, mlir::VectorTransferOpInterface op,
                    mlir::Type type, mlir::ValueRange indices) {
    if (!needsFlattening(type))
      return mlir::Value();
    auto tensor = llvm::cast<mlir::RankedTensorType>(type);
    if (tensor.getEncoding() || op.getVectorType().getRank() != 1 ||
        !op.getPermutationMap().isMinorIdentity()) {
      op->emitOpError() << "flattens only 1-D vectors along the minor dim of a "
                           "row-major tensor";
      return mlir::failure();
    }
    return linearize(b, op, type, indices);
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    bool failed = false;
    // 1. Accesses: indices through the layout map.
    module.walk([&](mlir::Operation *op) {
      mlir::OpBuilder b(op);
      if (auto extract = llvm::dyn_cast<mlir::tensor::ExtractOp>(op)) {
        mlir::Type type = extract.getTensor().getType();
        if (!needsFlattening(type))
          return;
        auto offset = linearize(b, op, type, extract.getIndices());
        if (mlir::failed(offset))
          return void(failed = true);
        extract.getIndicesMutable().assign(*offset);
      } else if (auto insert = llvm::dyn_cast<mlir::tensor::InsertOp>(op)) {
        mlir::Type type = insert.getDest().getType();
        if (!needsFlattening(type))
          return;
        auto offset = linearize(b, op, type, insert.getIndices());
        if (mlir::failed(offset))
          return void(failed = true);
        insert.getIndicesMutable().assign(*offset);
      } else if (auto read = llvm::dyn_cast<mlir::vector::TransferReadOp>(op)) {
        auto offset = linearizeTransfer(b, read, read.getSource().getType(),
                                        read.getIndices());
        if (mlir::failed(offset))
          return void(failed = true);
        if (*offset) {
          read.getIndicesMutable().assign(*offset);
          read.setPermutationMap(minorIdentity(op));
        }
      } else if (auto write =
                     llvm::dyn_cast<mlir::vector::TransferWriteOp>(op)) {
        auto offset = linearizeTransfer(b, write, write.getSource().getType(),
                                        write.getIndices());
        if (mlir::failed(offset))
          return void(failed = true);
        if (*offset) {
          write.getIndicesMutable().assign(*offset);
          write.setPermutationMap(minorIdentity(op));
        }
      }
    });
    if (failed)
      return signalPassFailure();
    // 2. Types: every tensor value, function signature and constant.
    module.walk([&](mlir::Operation *op) {
      for (mlir::Region &region : op->getRegions())
        for (mlir::Block &block : region)
          for (mlir::BlockArgument arg : block.getArguments())
            arg.setType(flatType(op, arg.getType()));
      for (mlir::OpResult result : op->getResults())
        result.setType(flatType(op, result.getType()));
      if (auto func = llvm::dyn_cast<mlir::func::FuncOp>(op)) {
        llvm::SmallVector<mlir::Type> inputs, results;
        for (mlir::Type t : func.getFunctionType().getInputs())
          inputs.push_back(flatType(op, t));
        for (mlir::Type t : func.getFunctionType().getResults())
          results.push_back(flatType(op, t));
        func.setFunctionType(
            mlir::FunctionType::get(op->getContext(), inputs, results));
      }
      if (auto constant = llvm::dyn_cast<mlir::arith::ConstantOp>(op))
        if (auto dense =
                llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue()))
          if (dense.getType() != constant.getType())
            constant.setValueAttr(dense.reshape(
                llvm::cast<mlir::ShapedType>(constant.getType())));
    });
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createFlattenTensorsPass() {
  return std::make_unique<FlattenTensorsPass>();
}

} // namespace tessel
