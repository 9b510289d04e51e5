// RUN: tessel-opt %s -split-input-file -tessel-lower-loops | FileCheck %s

// The seed's loop: thread and block ids whose upper bounds are the map's
// ranges need no check; the vector index becomes an scf.for.
#map = #tessel.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-LABEL: func.func @seed(
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[V:.*]] = %[[C0]] to %[[C4]]
// CHECK-NOT: scf.if
// CHECK: %[[I:.*]]:3 = tessel.apply_indexing #indexing_map(%{{.*}}, %{{.*}})[%[[V]]]
// CHECK: tensor.extract %{{.*}}[%[[I]]#0, %[[I]]#1, %[[I]]#2]
// CHECK: tensor.insert
// CHECK: scf.yield
func.func @seed(%in: tensor<6x512x4096xbf16>, %out: tensor<6x512x4096xbf16>) -> tensor<6x512x4096xbf16> {
  %th = gpu.thread_id x upper_bound 128
  %bl = gpu.block_id x upper_bound 24576
  %r = tessel.loop (%th, %bl)[%v] -> (%i, %j, %k) in #map iter_args(%acc = %out) -> (tensor<6x512x4096xbf16>) {
    %x = tensor.extract %in[%i, %j, %k] : tensor<6x512x4096xbf16>
    %u = tensor.insert %x into %acc[%i, %j, %k] : tensor<6x512x4096xbf16>
    tessel.yield %u : tensor<6x512x4096xbf16>
  }
  return %r : tensor<6x512x4096xbf16>
}

// -----

// A map with a constraint (a partial last block) and dims of unknown range:
// the body runs under scf.if on the domain, the else branch passes the
// iteration argument through.
#map = #tessel.indexing_map<"(th_x, bl_x) -> (bl_x * 128 + th_x), domain: th_x in [0, 127], bl_x in [0, 7], bl_x * 128 + th_x in [0, 999]">
// CHECK-LABEL: func.func @partial(
// CHECK-DAG: %[[C999:.*]] = arith.constant 999 : index
// CHECK: arith.cmpi sle, %{{.*}}, %[[C999]] : index
// CHECK: scf.if %{{.*}} -> (tensor<1000xf32>) {
// CHECK:   tessel.apply_indexing
// CHECK:   tensor.insert
// CHECK:   scf.yield
// CHECK: } else {
// CHECK:   scf.yield %arg2
func.func @partial(%th: index, %bl: index, %out: tensor<1000xf32>) -> tensor<1000xf32> {
  %c = arith.constant 1.0 : f32
  %r = tessel.loop (%th, %bl) -> (%i) in #map iter_args(%acc = %out) -> (tensor<1000xf32>) {
    %u = tensor.insert %c into %acc[%i] : tensor<1000xf32>
    tessel.yield %u : tensor<1000xf32>
  }
  return %r : tensor<1000xf32>
}
