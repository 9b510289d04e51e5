// RUN: tessel-opt %s -split-input-file -tessel-inline-subgraphs | FileCheck %s

// A function called once is inlined and erased; one called twice stays.

// CHECK-LABEL: func.func @main(
// CHECK-NOT: tessel.pure_call @once
// CHECK: %[[X:.*]] = tensor.extract
// CHECK: math.exp %[[X]]
// CHECK: tessel.pure_call @twice
// CHECK: tessel.pure_call @twice
// CHECK-NOT: func.func private @once
// CHECK: func.func private @twice
func.func @main(%t: tensor<8xf32>, %i: index, %j: index) -> (f32, f32, f32) {
  %a = tessel.pure_call @once(%t, %i) : (tensor<8xf32>, index) -> f32
  %b = tessel.pure_call @twice(%t, %i) : (tensor<8xf32>, index) -> f32
  %c = tessel.pure_call @twice(%t, %j) : (tensor<8xf32>, index) -> f32
  return %a, %b, %c : f32, f32, f32
}
func.func private @once(%t: tensor<8xf32>, %i: index) -> f32 {
  %x = tensor.extract %t[%i] : tensor<8xf32>
  %e = math.exp %x : f32
  return %e : f32
}
func.func private @twice(%t: tensor<8xf32>, %i: index) -> f32 {
  %x = tensor.extract %t[%i] : tensor<8xf32>
  return %x : f32
}

// -----

// Inlining exposes the callee's own call, now the only one: inlined too.
// CHECK-LABEL: func.func @chain(
// CHECK-NOT: tessel.pure_call
// CHECK: math.log
// CHECK: math.exp
// CHECK-NOT: func.func private
func.func @chain(%t: tensor<8xf32>, %i: index) -> f32 {
  %a = tessel.pure_call @outer(%t, %i) : (tensor<8xf32>, index) -> f32
  return %a : f32
}
func.func private @outer(%t: tensor<8xf32>, %i: index) -> f32 {
  %x = tessel.pure_call @inner(%t, %i) : (tensor<8xf32>, index) -> f32
  %e = math.exp %x : f32
  return %e : f32
}
func.func private @inner(%t: tensor<8xf32>, %i: index) -> f32 {
  %x = tensor.extract %t[%i] : tensor<8xf32>
  %l = math.log %x : f32
  return %l : f32
}
