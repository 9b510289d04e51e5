// RUN: tessel-opt %s -tessel-flatten-tensors | FileCheck %s

// Every tensor becomes its 1-D buffer; indices go through the layout map,
// composed with the apply_indexing that produced them. The seed's loop
// offsets become its flattened map.

// CHECK-DAG: #[[SEED:.*]] = #tessel.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-DAG: #[[TILED:.*]] = #tessel.indexing_map<"(d0, d1) -> ((d0 floordiv 2) * 12 + (d1 floordiv 2) * 4 + (d0 mod 2) * 2 + d1 mod 2), domain: d0 in [0, 2], d1 in [0, 4]">
// CHECK-DAG: #[[A129:.*]] = #tessel.indexing_map<"(d0, d1) -> (d0 * 129 + d1), domain: d0 in [0, 31], d1 in [0, 128]">
// CHECK-DAG: #[[B32:.*]] = #tessel.indexing_map<"(d0, d1) -> (d0 * 32 + d1), domain: d0 in [0, 127], d1 in [0, 31]">
// CHECK-DAG: #[[ROWS:.*]] = #tessel.indexing_map<"(d0, d1) -> (d0 * 3 + d1), domain: d0 in [0, 1], d1 in [0, 2]">

// CHECK-LABEL: func.func @seed(
// CHECK-SAME: %[[IN:.*]]: tensor<12582912xbf16>, %[[OUT:.*]]: tensor<12582912xbf16>, %[[TH:.*]]: index, %[[BL:.*]]: index, %[[V:.*]]: index) -> tensor<12582912xbf16>
// CHECK: %[[O:.*]] = tessel.apply_indexing #[[SEED]](%[[TH]], %[[BL]])[%[[V]]]
// CHECK: tensor.extract %[[IN]][%[[O]]] : tensor<12582912xbf16>
// CHECK: tensor.insert %{{.*}} into %[[OUT]][%{{.*}}] : tensor<12582912xbf16>

// The tiled layout of figure 1: 3x5 in 2x2 tiles is 24 elements.
// CHECK-LABEL: func.func @tiled(
// CHECK-SAME: tensor<24xf32>
// CHECK: tessel.apply_indexing #[[TILED]]

// CHECK-LABEL: func.func @scalar(
// CHECK-SAME: tensor<1xbf16>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: tensor.extract %{{.*}}[%[[C0]]] : tensor<1xbf16>

// CHECK-LABEL: func.func @constant(
// CHECK: arith.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
// CHECK: tessel.apply_indexing #[[ROWS]]

#map = #tessel.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
func.func @seed(%in: tensor<6x512x4096xbf16>, %out: tensor<6x512x4096xbf16>, %th: index, %bl: index, %v: index) -> tensor<6x512x4096xbf16> {
  %i:3 = tessel.apply_indexing #map(%th, %bl)[%v]
  %x = tensor.extract %in[%i#0, %i#1, %i#2] : tensor<6x512x4096xbf16>
  %u = tensor.insert %x into %out[%i#0, %i#1, %i#2] : tensor<6x512x4096xbf16>
  return %u : tensor<6x512x4096xbf16>
}
func.func @tiled(%t: tensor<3x5xf32, "{1,0:T(2,2)}">, %i: index, %j: index) -> f32 {
  %x = tensor.extract %t[%i, %j] : tensor<3x5xf32, "{1,0:T(2,2)}">
  return %x : f32
}
func.func @scalar(%t: tensor<bf16>) -> bf16 {
  %x = tensor.extract %t[] : tensor<bf16>
  return %x : bf16
}
func.func @constant(%i: index, %j: index) -> i32 {
  %c = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %x = tensor.extract %c[%i, %j] : tensor<2x3xi32>
  return %x : i32
}

// A 1-D vector transfer along the minor dim of a row-major tensor (the
// transpose emitter's squares on the CPU) starts at its first element's
// offset in the buffer.
// CHECK-LABEL: func.func @square(
// CHECK-SAME: %[[A:.*]]: tensor<4128xf32>, %[[B:.*]]: tensor<4096xf32>
// CHECK: %[[RO:.*]] = tessel.apply_indexing #[[A129]](%{{.*}}, %{{.*}})
// CHECK: %[[V:.*]] = vector.transfer_read %[[A]][%[[RO]]], %{{.*}} {in_bounds = [true]} : tensor<4128xf32>, vector<8xf32>
// CHECK: %[[WO:.*]] = tessel.apply_indexing #[[B32]](%{{.*}}, %{{.*}})
// CHECK: vector.transfer_write %[[V]], %[[B]][%[[WO]]] {in_bounds = [true]} : vector<8xf32>, tensor<4096xf32>
func.func @square(%a: tensor<32x129xf32>, %b: tensor<128x32xf32>, %r: index, %c: index) -> tensor<128x32xf32> {
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %a[%r, %c], %pad {in_bounds = [true]} : tensor<32x129xf32>, vector<8xf32>
  %w = vector.transfer_write %v, %b[%c, %r] {in_bounds = [true]} : vector<8xf32>, tensor<128x32xf32>
  return %w : tensor<128x32xf32>
}
