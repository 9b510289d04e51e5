// RUN: tessel-opt %s -canonicalize | FileCheck %s
// tessel-opt parses the upstream dialects the code generator emits and runs
// upstream passes on them.

// CHECK-LABEL: func.func @fold_index_arith
func.func @fold_index_arith(%t: tensor<8xf32>) -> f32 {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  // CHECK: %[[C5:.*]] = arith.constant 5 : index
  %i = arith.addi %c2, %c3 : index
  // CHECK: tensor.extract %{{.*}}[%[[C5]]]
  %v = tensor.extract %t[%i] : tensor<8xf32>
  %e = math.exp %v : f32
  return %e : f32
}

// CHECK-LABEL: func.func @loop
func.func @loop(%m: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %cst = arith.constant 0.0 : f32
  // CHECK: scf.for
  scf.for %i = %c0 to %c16 step %c1 {
    memref.store %cst, %m[%i] : memref<16xf32>
  }
  return
}
