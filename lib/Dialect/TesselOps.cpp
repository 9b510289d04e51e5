//===- TesselOps.cpp - Ops of the tessel dialect --------------------------===//
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "tessel/Dialect/TesselOps.cpp.inc"
#pragma GCC diagnostic pop

namespace tessel {

using mlir::OpAsmParser;
using mlir::OpAsmPrinter;

//===----------------------------------------------------------------------===//
// apply_indexing
//===----------------------------------------------------------------------===//

void ApplyIndexingOp::build(mlir::OpBuilder &builder,
                            mlir::OperationState &state, mlir::ValueRange dims,
                            mlir::ValueRange symbols, const IndexingMap &map) {
  state.addOperands(dims);
  state.addOperands(symbols);
  state.addAttribute(getIndexingMapAttrAttrName(state.name),
                     IndexingMapAttr::get(builder.getContext(), map));
  state.addTypes(llvm::SmallVector<mlir::Type>(map.getNumResults(),
                                               builder.getIndexType()));
}

/// `(%d0, %d1)[%s0]`: dims in parentheses, symbols in brackets (optional).
static mlir::ParseResult parseDimsAndSymbols(
    OpAsmParser &parser,
    llvm::SmallVectorImpl<OpAsmParser::UnresolvedOperand> &dims,
    llvm::SmallVectorImpl<OpAsmParser::UnresolvedOperand> &syms) {
  if (parser.parseOperandList(dims, OpAsmParser::Delimiter::Paren))
    return mlir::failure();
  return parser.parseOperandList(syms, OpAsmParser::Delimiter::OptionalSquare);
}

mlir::ParseResult ApplyIndexingOp::parse(OpAsmParser &parser,
                                         mlir::OperationState &result) {
  IndexingMapAttr mapAttr;
  llvm::SMLoc loc = parser.getCurrentLocation();
  llvm::SmallVector<OpAsmParser::UnresolvedOperand> dims, symbols;
  if (parser.parseCustomAttributeWithFallback(mapAttr, mlir::Type{}) ||
      parseDimsAndSymbols(parser, dims, symbols) ||
      parser.parseOptionalAttrDict(result.attributes))
    return mlir::failure();
  result.addAttribute("indexing_map_attr", mapAttr);
  mlir::Type index = parser.getBuilder().getIndexType();
  dims.append(symbols.begin(), symbols.end());
  if (parser.resolveOperands(dims, index, loc, result.operands))
    return mlir::failure();
  result.addTypes(llvm::SmallVector<mlir::Type>(
      mapAttr.getIndexingMap().getNumResults(), index));
  return mlir::success();
}

void ApplyIndexingOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printAttributeWithoutType(getIndexingMapAttr());
  p << "(" << getDims() << ")";
  if (!getSymbols().empty())
    p << "[" << getSymbols() << "]";
  p.printOptionalAttrDict((*this)->getAttrs(), {"indexing_map_attr"});
}

mlir::LogicalResult ApplyIndexingOp::verify() {
  const IndexingMap &map = getIndexingMap();
  unsigned expected = map.getNumDims() + map.getNumSymbols();
  if (getNumOperands() != expected)
    return emitOpError() << "has " << getNumOperands()
                         << " operands, but its map has " << map.getNumDims()
                         << " dims and " << map.getNumSymbols()
                         << " symbols (expected " << expected << " operands)";
  if (getNumResults() != map.getNumResults())
    return emitOpError() << "has " << getNumResults()
                         << " results, but its map has " << map.getNumResults();
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// loop
//===----------------------------------------------------------------------===//

void LoopOp::build(
    mlir::OpBuilder &builder, mlir::OperationState &state,
    const IndexingMap &map, mlir::ValueRange dims, mlir::ValueRange inits,
    llvm::function_ref<void(mlir::OpBuilder &, mlir::Location, mlir::ValueRange,
                            mlir::ValueRange, mlir::ValueRange)>
        bodyBuilder) {
  state.addOperands(dims);
  state.addOperands(inits);
  state.addAttribute(getIndexingMapAttrAttrName(state.name),
                     IndexingMapAttr::get(builder.getContext(), map));
  state.addAttribute(
      getOperandSegmentSizesAttrName(state.name),
      builder.getDenseI32ArrayAttr({static_cast<int32_t>(dims.size()),
                                    static_cast<int32_t>(inits.size())}));
  for (mlir::Value init : inits)
    state.addTypes(init.getType());

  mlir::Region *region = state.addRegion();
  mlir::Block *body = new mlir::Block();
  region->push_back(body);
  mlir::Type index = builder.getIndexType();
  for (unsigned i = 0; i < map.getNumRangeVars() + map.getNumResults(); ++i)
    body->addArgument(index, state.location);
  for (mlir::Value init : inits)
    body->addArgument(init.getType(), state.location);
  if (!bodyBuilder) {
    if (inits.empty()) {
      mlir::OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToEnd(body);
      builder.create<YieldOp>(state.location);
    }
    return;
  }
  mlir::OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  auto args = body->getArguments();
  unsigned numSymbols = map.getNumRangeVars();
  unsigned numResults = map.getNumResults();
  bodyBuilder(builder, state.location, args.take_front(numSymbols),
              args.slice(numSymbols, numResults),
              args.drop_front(numSymbols + numResults));
}

mlir::Block::BlockArgListType LoopOp::getSymbolArgs() {
  return getBody()->getArguments().take_front(
      getIndexingMap().getNumRangeVars());
}
mlir::Block::BlockArgListType LoopOp::getIndexArgs() {
  return getBody()->getArguments().slice(getIndexingMap().getNumRangeVars(),
                                         getIndexingMap().getNumResults());
}
mlir::Block::BlockArgListType LoopOp::getRegionIterArgs() {
  return getBody()->getArguments().drop_front(
      getIndexingMap().getNumRangeVars() + getIndexingMap().getNumResults());
}

// (%th, %bl)[%i, %j] -> (%d0, %d1) in #map iter_args(%a = %init) -> (types)
mlir::ParseResult LoopOp::parse(OpAsmParser &parser,
                                mlir::OperationState &result) {
  mlir::Builder &b = parser.getBuilder();
  mlir::Type index = b.getIndexType();
  llvm::SmallVector<OpAsmParser::UnresolvedOperand> dims;
  llvm::SmallVector<OpAsmParser::Argument> symbolArgs, indexArgs, iterArgs;
  llvm::SmallVector<OpAsmParser::UnresolvedOperand> inits;
  llvm::SmallVector<mlir::Type> resultTypes;
  IndexingMapAttr mapAttr;
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (parser.parseOperandList(dims, OpAsmParser::Delimiter::Paren) ||
      parser.parseArgumentList(symbolArgs,
                               OpAsmParser::Delimiter::OptionalSquare) ||
      parser.parseArrow() ||
      parser.parseArgumentList(indexArgs, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("in") ||
      parser.parseCustomAttributeWithFallback(mapAttr, mlir::Type{}))
    return mlir::failure();
  if (succeeded(parser.parseOptionalKeyword("iter_args"))) {
    if (parser.parseAssignmentList(iterArgs, inits) ||
        parser.parseArrowTypeList(resultTypes))
      return mlir::failure();
  }
  if (iterArgs.size() != resultTypes.size())
    return parser.emitError(loc)
           << "has " << iterArgs.size() << " iter_args but "
           << resultTypes.size() << " result types";
  result.addAttribute("indexing_map_attr", mapAttr);
  if (parser.resolveOperands(dims, index, result.operands) ||
      parser.resolveOperands(inits, resultTypes, loc, result.operands))
    return mlir::failure();
  result.addTypes(resultTypes);
  result.addAttribute(
      "operandSegmentSizes",
      b.getDenseI32ArrayAttr({static_cast<int32_t>(dims.size()),
                              static_cast<int32_t>(inits.size())}));
  llvm::SmallVector<OpAsmParser::Argument> regionArgs;
  for (auto &arg : symbolArgs) {
    arg.type = index;
    regionArgs.push_back(arg);
  }
  for (auto &arg : indexArgs) {
    arg.type = index;
    regionArgs.push_back(arg);
  }
  for (auto [arg, type] : llvm::zip(iterArgs, resultTypes)) {
    arg.type = type;
    regionArgs.push_back(arg);
  }
  mlir::Region *body = result.addRegion();
  if (parser.parseRegion(*body, regionArgs))
    return mlir::failure();
  LoopOp::ensureTerminator(*body, b, result.location);
  return parser.parseOptionalAttrDict(result.attributes);
}

void LoopOp::print(OpAsmPrinter &p) {
  p << " (" << getDims() << ")";
  if (!getSymbolArgs().empty()) {
    p << "[";
    llvm::interleaveComma(getSymbolArgs(), p,
                          [&](mlir::Value v) { p.printOperand(v); });
    p << "]";
  }
  p << " -> (";
  llvm::interleaveComma(getIndexArgs(), p,
                        [&](mlir::Value v) { p.printOperand(v); });
  p << ") in ";
  p.printAttributeWithoutType(getIndexingMapAttr());
  if (!getInits().empty()) {
    p << " iter_args(";
    llvm::interleaveComma(llvm::zip(getRegionIterArgs(), getInits()), p,
                          [&](auto pair) {
                            p.printOperand(std::get<0>(pair));
                            p << " = ";
                            p.printOperand(std::get<1>(pair));
                          });
    p << ") -> (" << getResultTypes() << ")";
  }
  p << " ";
  p.printRegion(getRegion(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/!getInits().empty());
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"indexing_map_attr", "operandSegmentSizes"});
}

mlir::LogicalResult LoopOp::verify() {
  const IndexingMap &map = getIndexingMap();
  if (map.getNumRTVars() != 0)
    return emitOpError() << "map has " << map.getNumRTVars()
                         << " runtime variables; a loop runs over range "
                            "variables only";
  if (getDims().size() != map.getNumDims())
    return emitOpError() << "has " << getDims().size()
                         << " dim operands, but its map has "
                         << map.getNumDims() << " dims";
  unsigned expectedArgs =
      map.getNumRangeVars() + map.getNumResults() + getInits().size();
  if (getBody()->getNumArguments() != expectedArgs)
    return emitOpError() << "body has " << getBody()->getNumArguments()
                         << " arguments, expected " << expectedArgs
                         << " (range variables, map results, iter_args)";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(getInits(), getRegionIterArgs())))
    if (std::get<0>(pair).getType() != std::get<1>(pair).getType())
      return emitOpError() << "iter_arg #" << i << " has type "
                           << std::get<1>(pair).getType()
                           << " but its initial value has type "
                           << std::get<0>(pair).getType();
  auto yield = llvm::cast<YieldOp>(getBody()->getTerminator());
  if (!llvm::equal(yield.getValues().getTypes(), getResultTypes()))
    return yield.emitOpError()
           << "yields " << yield.getValues().size()
           << " values whose types differ from the loop's results";
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// pure_call
//===----------------------------------------------------------------------===//

mlir::LogicalResult
PureCallOp::verifySymbolUses(mlir::SymbolTableCollection &symbolTable) {
  auto callee = symbolTable.lookupNearestSymbolFrom<mlir::func::FuncOp>(
      *this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "calls '" << getCallee()
                         << "', which is not a function in this module";
  mlir::FunctionType type = callee.getFunctionType();
  if (!llvm::equal(type.getInputs(), getOperandTypes()) ||
      !llvm::equal(type.getResults(), getResultTypes()))
    return emitOpError() << "has type "
                         << mlir::FunctionType::get(getContext(),
                                                    getOperandTypes(),
                                                    getResultTypes())
                         << " but @" << getCallee() << " has type " << type;
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// sync_threads
//===----------------------------------------------------------------------===//

mlir::LogicalResult SyncThreadsOp::inferReturnTypes(
    mlir::MLIRContext *, std::optional<mlir::Location>,
    mlir::ValueRange operands, mlir::DictionaryAttr, mlir::OpaqueProperties,
    mlir::RegionRange, llvm::SmallVectorImpl<mlir::Type> &inferred) {
  for (mlir::Value operand : operands)
    inferred.push_back(operand.getType());
  return mlir::success();
}

} // namespace tessel
