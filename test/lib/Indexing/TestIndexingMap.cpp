//===- TestIndexingMap.cpp - -test-tessel-indexing-map --------------------===//
//
// Prints indexing maps written as attributes, for lit tests:
//
//   func.func private @pad() attributes {tessel.indexing_map =
//       "(d0) -> ((d0 - 1) floordiv 2), domain: d0 in [0, 11], ..."}
//
// prints
//
//   @pad parsed: (d0) -> ((d0 - 1) floordiv 2), domain: ...
//   @pad simplified: (d0) -> ((d0 - 1) floordiv 2), domain: d0 in [1, 7], ...
//   @pad check: same map at 12 points
//
// `tessel.compose = ["FIRST", "SECOND"]` prints the composition, raw and
// simplified. The check line compares the simplified map with the parsed one
// by enumeration (or says the domain is too large). A map that does not
// parse is an error at the op.
//
//===----------------------------------------------------------------------===//
#include "TestPasses.h"

#include "tessel/Indexing/BruteForce.h"
#include "tessel/Indexing/IndexingMap.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel::test {
namespace {

constexpr int64_t kMaxCheckedPoints = int64_t(1) << 20;

struct TestIndexingMapPass
    : public mlir::PassWrapper<TestIndexingMapPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestIndexingMapPass)

  llvm::StringRef getArgument() const final {
    return "test-tessel-indexing-map";
  }
  llvm::StringRef getDescription() const final {
    return "Print the indexing maps of tessel.indexing_map and tessel.compose "
           "attributes, parsed and simplified";
  }

  void runOnOperation() override {
    getOperation()->walk([&](mlir::Operation *op) {
      if (auto text =
              op->getAttrOfType<mlir::StringAttr>("tessel.indexing_map"))
        if (mlir::failed(printMap(op, text.getValue())))
          return signalPassFailure();
      if (auto pair = op->getAttrOfType<mlir::ArrayAttr>("tessel.compose"))
        if (mlir::failed(printComposition(op, pair)))
          return signalPassFailure();
    });
  }

  static std::string label(mlir::Operation *op) {
    if (auto name = op->getAttrOfType<mlir::StringAttr>(
            mlir::SymbolTable::getSymbolAttrName()))
      return "@" + name.getValue().str();
    return op->getName().getStringRef().str();
  }

  mlir::FailureOr<IndexingMap> parse(mlir::Operation *op,
                                     llvm::StringRef text) {
    Expected<IndexingMap> map = parseIndexingMap(text, &getContext());
    if (!map) {
      // The map is an attribute's string: name its column in the message.
      const Error &error = map.error();
      return op->emitError("invalid indexing map: column ")
             << (error.span ? error.span->column : 1) << ": " << error.message;
    }
    return std::move(*map);
  }

  void printSimplified(const std::string &name, const IndexingMap &map) {
    IndexingMap simplified = map.simplified();
    llvm::outs() << name << " simplified: " << simplified << "\n";
    Expected<BruteForceComparison> same =
        compareByEnumeration(map, simplified, kMaxCheckedPoints);
    llvm::outs() << name << " check: ";
    if (!same)
      llvm::outs() << "not checked, " << same.error().message << "\n";
    else if (same->equal)
      llvm::outs() << "same map at " << same->pointsChecked << " points\n";
    else
      llvm::outs() << "DIFFERENT " << same->mismatch << "\n";
  }

  mlir::LogicalResult printMap(mlir::Operation *op, llvm::StringRef text) {
    mlir::FailureOr<IndexingMap> map = parse(op, text);
    if (mlir::failed(map))
      return mlir::failure();
    std::string name = label(op);
    llvm::outs() << name << " parsed: " << *map << "\n";
    printSimplified(name, *map);
    return mlir::success();
  }

  mlir::LogicalResult printComposition(mlir::Operation *op,
                                       mlir::ArrayAttr pair) {
    auto first = pair.size() == 2 ? llvm::dyn_cast<mlir::StringAttr>(pair[0])
                                  : mlir::StringAttr();
    auto second = pair.size() == 2 ? llvm::dyn_cast<mlir::StringAttr>(pair[1])
                                   : mlir::StringAttr();
    if (!first || !second)
      return op->emitError("tessel.compose expects two strings, [FIRST, "
                           "SECOND]");
    mlir::FailureOr<IndexingMap> a = parse(op, first.getValue());
    if (mlir::failed(a))
      return mlir::failure();
    mlir::FailureOr<IndexingMap> b = parse(op, second.getValue());
    if (mlir::failed(b))
      return mlir::failure();
    if (a->getNumResults() != b->getNumDims())
      return op->emitError("tessel.compose: FIRST has ")
             << a->getNumResults() << " results but SECOND has "
             << b->getNumDims() << " dims";
    IndexingMap composed = composeIndexingMaps(*a, *b);
    std::string name = label(op);
    llvm::outs() << name << " composed: " << composed << "\n";
    printSimplified(name, composed);
    return mlir::success();
  }
};

} // namespace

void registerTestIndexingMapPass() {
  mlir::PassRegistration<TestIndexingMapPass>();
}

} // namespace tessel::test
