// RUN: tessel-opt %s -tessel-unroll-loops -canonicalize | FileCheck %s

// The vector loop of the seed (4 iterations) disappears; a loop of 9
// iterations and an outer loop stay.

// CHECK-LABEL: func.func @vector(
// CHECK-NOT: scf.for
// CHECK-COUNT-4: tensor.insert
// CHECK-NOT: scf.for
func.func @vector(%t: tensor<16xf32>, %base: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  %r = scf.for %v = %c0 to %c4 step %c1 iter_args(%acc = %t) -> (tensor<16xf32>) {
    %i = arith.addi %base, %v : index
    %u = tensor.insert %f into %acc[%i] : tensor<16xf32>
    scf.yield %u : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// CHECK-LABEL: func.func @long(
// CHECK: scf.for
// CHECK-COUNT-1: tensor.insert
func.func @long(%t: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %f = arith.constant 1.0 : f32
  %r = scf.for %v = %c0 to %c9 step %c1 iter_args(%acc = %t) -> (tensor<16xf32>) {
    %u = tensor.insert %f into %acc[%v] : tensor<16xf32>
    scf.yield %u : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
