// RUN: tessel-opt %s -tessel-lower-tensors | FileCheck %s

// Tensors become pointers; extract and insert become loads and stores at
// the element's address; an entry function returns nothing afterwards; a
// constant tensor becomes a global.

// CHECK: llvm.mlir.global internal constant @tessel_constant_0(dense<[1, 2, 3]> : tensor<3xi32>)
// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: %[[IN:.*]]: !llvm.ptr, %[[OUT:.*]]: !llvm.ptr, %[[I:.*]]: index)
// CHECK-NOT: ->
// CHECK: %[[II:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[P:.*]] = llvm.getelementptr inbounds %[[IN]][%[[II]]] : (!llvm.ptr, i64) -> !llvm.ptr, bf16
// bf16 is loaded and stored as its bits (i16): LLVM copies it exactly.
// CHECK: %[[X:.*]] = llvm.load %[[P]] : !llvm.ptr -> i16
// CHECK: %[[XB:.*]] = arith.bitcast %[[X]] : i16 to bf16
// CHECK: %[[Q:.*]] = llvm.getelementptr inbounds %[[OUT]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, bf16
// CHECK: %[[XI:.*]] = arith.bitcast %[[XB]] : bf16 to i16
// CHECK: llvm.store %[[XI]], %[[Q]] : i16, !llvm.ptr
// CHECK: return{{$}}
func.func @kernel(%in: tensor<8xbf16>, %out: tensor<8xbf16>, %i: index) -> tensor<8xbf16>
    attributes {tessel.num_threads = 8 : i64, tessel.num_blocks = 1 : i64} {
  %x = tensor.extract %in[%i] : tensor<8xbf16>
  %u = tensor.insert %x into %out[%i] : tensor<8xbf16>
  return %u : tensor<8xbf16>
}

// CHECK-LABEL: func.func @table(
// CHECK: %[[G:.*]] = llvm.mlir.addressof @tessel_constant_0 : !llvm.ptr
// CHECK: llvm.getelementptr inbounds %[[G]]
// CHECK: llvm.load {{.*}} -> i32
func.func @table(%i: index) -> i32 {
  %c = arith.constant dense<[1, 2, 3]> : tensor<3xi32>
  %x = tensor.extract %c[%i] : tensor<3xi32>
  return %x : i32
}

// Tensors through loops: the iteration arguments become pointers too.
// CHECK-LABEL: func.func @loop(
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (!llvm.ptr)
// CHECK: llvm.store
func.func @loop(%out: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 2.0 : f32
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<4xf32>) {
    %u = tensor.insert %f into %acc[%i] : tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// A shared tile becomes a stack buffer (bf16 as i16).
// CHECK-LABEL: func.func @tile(
// CHECK: %[[N:.*]] = llvm.mlir.constant(1056 : i64) : i64
// CHECK: llvm.alloca %[[N]] x i16 {alignment = 64 : i64} : (i64) -> !llvm.ptr
func.func @tile(%i: index) -> bf16 {
  %t = tessel.allocate_shared : tensor<1056xbf16>
  %x = tensor.extract %t[%i] : tensor<1056xbf16>
  return %x : bf16
}

// c64 elements are (re, im) structs in memory, cast to the complex value
// that -tessel-lower-to-llvm converts to the same struct.
// CHECK-LABEL: func.func @complex(
// CHECK: %[[P:.*]] = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.struct<(f32, f32)>
// CHECK: %[[S:.*]] = llvm.load %[[P]] : !llvm.ptr -> !llvm.struct<(f32, f32)>
// CHECK: %[[Z:.*]] = builtin.unrealized_conversion_cast %[[S]] : !llvm.struct<(f32, f32)> to complex<f32>
// CHECK: %[[B:.*]] = builtin.unrealized_conversion_cast %[[Z]] : complex<f32> to !llvm.struct<(f32, f32)>
// CHECK: llvm.store %[[B]], %{{.*}} : !llvm.struct<(f32, f32)>, !llvm.ptr
func.func @complex(%in: tensor<8xcomplex<f32>>, %out: tensor<8xcomplex<f32>>, %i: index) -> tensor<8xcomplex<f32>>
    attributes {tessel.num_threads = 8 : i64, tessel.num_blocks = 1 : i64} {
  %x = tensor.extract %in[%i] : tensor<8xcomplex<f32>>
  %u = tensor.insert %x into %out[%i] : tensor<8xcomplex<f32>>
  return %u : tensor<8xcomplex<f32>>
}
