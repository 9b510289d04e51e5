//===- TpuDialect.h - A small tpu dialect with Mosaic's spelling -*- C++
//-*-===//
//
// Enough of Mosaic TPU's dialect to paste its kernels into tessel-opt
// (TpuOps.td says what each piece means):
//
//   func.func @k(%m: memref<4x256xf32, #tpu.tiled<(8,128),[2,1]>,
//                                      #tpu.memory_space<vmem>>, %i: index) {
//     %j = tpu.assume_multiple %i, 128 : index
//     %v = tpu.load %m[%c0, %j] : memref<...>, vector<1x128xf32>
//     ...
//
// Register with registry.insert<tessel::tpu::TpuDialect>().
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TPUDIALECT_H
#define TESSEL_DIALECT_TPUDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

// Generated code leaves parameters unused (cmake/Tessel.cmake explains).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "tessel/Dialect/TpuDialect.h.inc"
#include "tessel/Dialect/TpuEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/TpuAttrs.h.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/TpuOps.h.inc"

#pragma GCC diagnostic pop

#endif // TESSEL_DIALECT_TPUDIALECT_H
