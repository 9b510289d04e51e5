//===- TesselDialect.td - The tessel dialect ---------------*- tablegen -*-===//
//
// The dialect of tessel's fusion emitters (XLA calls its own xla_gpu): the
// few ops the emitters need beyond upstream func, tensor, arith, math, scf,
// vector and gpu.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSELDIALECT_TD
#define TESSEL_DIALECT_TESSELDIALECT_TD

include "mlir/IR/DialectBase.td"

def Tessel_Dialect : Dialect {
  let name = "tessel";
  let cppNamespace = "::tessel";
  let summary = "Ops of tessel's fusion emitters: loops over indexing maps, "
                "pure calls between subgraph functions, shared tiles";
  let description = [{
    A fusion is emitted as functions over tensors (one per subgraph of the
    computation partitioner) and an entry function whose `tessel.loop`s walk
    an indexing map from (thread, block) ids to output indices. Passes lower
    these ops to scf and the tensors to pointers; see docs/codegen.md.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let useDefaultAttributePrinterParser = 1;
  // A fix of an upstream canonicalization (TesselDialect.cpp).
  let hasCanonicalizer = 1;
}

#endif // TESSEL_DIALECT_TESSELDIALECT_TD
