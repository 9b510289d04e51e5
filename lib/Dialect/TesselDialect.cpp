//===- TesselDialect.cpp - The tessel dialect and its attributes ---------===//
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "tessel/Dialect/TesselDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/TesselAttrs.cpp.inc"
#pragma GCC diagnostic pop

namespace tessel {
namespace {

/// Printed IR names indexing maps `#indexing_map`, `#indexing_map1`, ...
struct TesselOpAsmInterface : public mlir::OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(mlir::Attribute attr,
                       llvm::raw_ostream &os) const final {
    if (llvm::isa<IndexingMapAttr>(attr)) {
      os << "indexing_map";
      return AliasResult::FinalAlias;
    }
    return AliasResult::NoAlias;
  }
};

/// Everything of the dialect may be inlined: its ops are pure or structured
/// (loop), and a subgraph function is inlined into its one caller.
struct TesselInlinerInterface : public mlir::DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(mlir::Operation *, mlir::Operation *, bool) const final {
    return true;
  }
  bool isLegalToInline(mlir::Operation *, mlir::Region *, bool,
                       mlir::IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(mlir::Region *, mlir::Region *, bool,
                       mlir::IRMapping &) const final {
    return true;
  }
};

/// bitcast(bitcast(x)) -> bitcast(x), or x where the types match. MLIR
/// 19's own pattern for it (BitcastOfBitcast) replaces the pair with x
/// whatever x's type: f16 -> i16 -> bf16 (an HLO bitcast-convert chain)
/// became the f16 value itself, which the next op then read as a number
/// (the bits of a bf16 read as an f16). With a higher benefit this runs
/// first, and the pair is gone before that pattern sees it. It is a
/// dialect's canonicalization pattern so that every canonicalizer run of
/// a context with tessel loaded has it.
struct ComposeBitcasts : public mlir::OpRewritePattern<mlir::arith::BitcastOp> {
  ComposeBitcasts(mlir::MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}
  mlir::LogicalResult
  matchAndRewrite(mlir::arith::BitcastOp op,
                  mlir::PatternRewriter &rewriter) const final {
    auto inner = op.getIn().getDefiningOp<mlir::arith::BitcastOp>();
    if (!inner)
      return mlir::failure();
    mlir::Value source = inner.getIn();
    if (source.getType() == op.getType())
      rewriter.replaceOp(op, source);
    else
      rewriter.replaceOpWithNewOp<mlir::arith::BitcastOp>(op, op.getType(),
                                                          source);
    return mlir::success();
  }
};

} // namespace

void TesselDialect::getCanonicalizationPatterns(
    mlir::RewritePatternSet &results) const {
  results.add<ComposeBitcasts>(getContext());
}

void TesselDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/TesselOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tessel/Dialect/TesselAttrs.cpp.inc"
      >();
  addInterfaces<TesselOpAsmInterface, TesselInlinerInterface>();
}

mlir::Attribute IndexingMapAttr::parse(mlir::AsmParser &parser, mlir::Type) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  std::string text;
  if (parser.parseLess())
    return {};
  llvm::SMLoc stringLoc = parser.getCurrentLocation();
  if (parser.parseString(&text))
    return {};
  // Adjacent strings concatenate, so a long map can span lines.
  bool pieces = false;
  for (std::string more; succeeded(parser.parseOptionalString(&more));) {
    text += more;
    pieces = true;
  }
  if (parser.parseGreater())
    return {};
  Expected<IndexingMap> map = parseIndexingMap(text, parser.getContext());
  if (!map) {
    const Error &error = map.error();
    // One string without escapes holds the map's bytes as they are in the
    // file: the diagnostic points at the offending character itself.
    const char *first = stringLoc.getPointer() + 1;
    if (!pieces && error.span && llvm::StringRef(first, text.size()) == text) {
      parser.emitError(llvm::SMLoc::getFromPointer(first + error.span->begin))
          << "invalid indexing map: " << error.message;
      return {};
    }
    parser.emitError(loc) << "invalid indexing map: " << error.message
                          << " (at column "
                          << (error.span ? error.span->column : 1) << " of \""
                          << text << "\")";
    return {};
  }
  return parser.getChecked<IndexingMapAttr>(loc, parser.getContext(), *map);
}

void IndexingMapAttr::print(mlir::AsmPrinter &printer) const {
  printer << "<";
  printer.printString(getIndexingMap().toString());
  printer << ">";
}

mlir::LogicalResult IndexingMapAttr::verify(
    llvm::function_ref<mlir::InFlightDiagnostic()> emitError, IndexingMap map) {
  if (std::optional<std::string> problem = map.verify())
    return emitError() << "invalid indexing map: " << *problem;
  return mlir::success();
}

} // namespace tessel
