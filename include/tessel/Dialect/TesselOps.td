//===- TesselOps.td - Ops of the tessel dialect ------------*- tablegen -*-===//
#ifndef TESSEL_DIALECT_TESSELOPS_TD
#define TESSEL_DIALECT_TESSELOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "tessel/Dialect/TesselAttrs.td"
include "tessel/Dialect/TesselDialect.td"

class Tessel_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tessel_Dialect, mnemonic, traits>;

def Tessel_ApplyIndexingOp : Tessel_Op<"apply_indexing", [Pure]> {
  let summary = "Evaluates an indexing map at a point";
  let description = [{
    The results of the map at (dims)[symbols]; one index per map result.
    Every operand must lie in its variable's range and the point must
    satisfy the map's constraints (lowerings may rely on it):

      %i, %j = tessel.apply_indexing #indexing_map(%th, %bl)[%v]
  }];
  let arguments = (ins Variadic<Index>:$operands,
                       Tessel_IndexingMapAttr:$indexing_map_attr);
  let results = (outs Variadic<Index>);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::ValueRange":$dims, "::mlir::ValueRange":$symbols,
                   "const ::tessel::IndexingMap &":$map)>,
  ];
  let extraClassDeclaration = [{
    const ::tessel::IndexingMap &getIndexingMap() {
      return getIndexingMapAttr().getIndexingMap();
    }
    ::mlir::ValueRange getDims() {
      return getOperands().take_front(getIndexingMap().getNumDims());
    }
    ::mlir::ValueRange getSymbols() {
      return getOperands().drop_front(getIndexingMap().getNumDims());
    }
  }];
}

def Tessel_LoopOp : Tessel_Op<"loop", [
    AttrSizedOperandSegments, RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"::tessel::YieldOp">]> {
  let summary = "A loop over the points of an indexing map's domain";
  let description = [{
    Runs its body once for every value of the map's range variables
    (symbols) for which the point (dims)[symbols] lies in the map's domain;
    the body sees the symbols and the map's results, and threads values
    through `iter_args` as scf.for does:

      %r = tessel.loop (%th, %bl)[%v] -> (%i, %j) in #indexing_map
          iter_args(%acc = %out) -> (tensor<4x512xbf16>) {
        ...
        tessel.yield %next : tensor<4x512xbf16>
      }

    The block arguments are the range variables, then the map's results,
    then the iteration arguments. Runtime variables are not allowed.
  }];
  let arguments = (ins Variadic<Index>:$dims,
                       Tessel_IndexingMapAttr:$indexing_map_attr,
                       Variadic<AnyType>:$inits);
  let results = (outs Variadic<AnyType>);
  let regions = (region SizedRegion<1>:$region);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "const ::tessel::IndexingMap &":$map,
                   "::mlir::ValueRange":$dims, "::mlir::ValueRange":$inits,
                   CArg<"::llvm::function_ref<void(::mlir::OpBuilder &, "
                        "::mlir::Location, ::mlir::ValueRange, "
                        "::mlir::ValueRange, ::mlir::ValueRange)>",
                        "nullptr">:$bodyBuilder)>,
  ];
  let extraClassDeclaration = [{
    const ::tessel::IndexingMap &getIndexingMap() {
      return getIndexingMapAttr().getIndexingMap();
    }
    ::mlir::Block *getBody() { return &getRegion().front(); }
    /// The block arguments for the range variables, the map's results and
    /// the iteration arguments.
    ::mlir::Block::BlockArgListType getSymbolArgs();
    ::mlir::Block::BlockArgListType getIndexArgs();
    ::mlir::Block::BlockArgListType getRegionIterArgs();
  }];
}

def Tessel_YieldOp : Tessel_Op<"yield", [
    Pure, ReturnLike, Terminator, HasParent<"::tessel::LoopOp">]> {
  let summary = "Yields the next iteration's values of a tessel.loop";
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing to build */ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Tessel_PureCallOp : Tessel_Op<"pure_call", [
    Pure, CallOpInterface, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A call of a function without side effects";
  let description = [{
    Calls a subgraph function: `func.call` that may be removed when unused,
    moved, and deduplicated.

      %v = tessel.pure_call @fusion_log(%p0, %i, %j)
          : (tensor<20x40xf32>, index, index) -> f32
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$operands);
  let results = (outs Variadic<AnyType>);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::func::FuncOp":$callee,
                   "::mlir::ValueRange":$operands), [{
      $_state.addOperands(operands);
      $_state.addAttribute("callee", ::mlir::SymbolRefAttr::get(callee));
      $_state.addTypes(callee.getFunctionType().getResults());
    }]>,
  ];
  let extraClassDeclaration = [{
    ::mlir::CallInterfaceCallable getCallableForCallee() {
      return (*this)->getAttrOfType<::mlir::SymbolRefAttr>("callee");
    }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      (*this)->setAttr("callee", callee.get<::mlir::SymbolRefAttr>());
    }
    ::mlir::Operation::operand_range getArgOperands() { return getOperands(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() {
      return getOperandsMutable();
    }
  }];
}

def Tessel_AllocateSharedOp : Tessel_Op<"allocate_shared"> {
  let summary = "A tile in memory shared by the threads of a block";
  let description = [{
    On a GPU, shared memory; on the CPU, per-block scratch that stays in the
    L1 cache. Its contents are undefined until written.

      %tile = tessel.allocate_shared : tensor<32x1x33xf32>
  }];
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Tessel_SyncThreadsOp : Tessel_Op<"sync_threads", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "A barrier between the threads of a block";
  let description = [{
    Every thread of the block waits here until all have arrived; the
    results are the shared tiles as seen after the barrier, so that uses
    after it are ordered after the writes before it.

      %synced = tessel.sync_threads %tile : tensor<32x1x33xf32>
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$tensors);
  let results = (outs Variadic<AnyRankedTensor>);
  let assemblyFormat = "$tensors attr-dict `:` type($tensors)";
}

#endif // TESSEL_DIALECT_TESSELOPS_TD
