// RUN: tessel-opt %s -tessel-lower-grid-to-cpu | FileCheck %s

// An entry function gets a block range; blocks and then threads become
// loops, the thread loop innermost, the output threaded through both.

// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: %[[IN:[^:]*]]: tensor<64xf32>, %[[OUT:[^:]*]]: tensor<64xf32>, %[[BEGIN:[^:]*]]: index, %[[END:[^:]*]]: index) -> tensor<64xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[R:.*]] = scf.for %[[BL:.*]] = %[[BEGIN]] to %[[END]] step %[[C1]] iter_args(%[[A:.*]] = %[[OUT]])
// CHECK:   %[[S:.*]] = scf.for %[[TH:.*]] = %[[C0]] to %[[C16]] step %[[C1]] iter_args(%[[B:.*]] = %[[A]])
// CHECK-NOT: gpu.
// CHECK:     tessel.apply_indexing #{{.*}}(%[[TH]], %[[BL]])
// CHECK:     tensor.insert %{{.*}} into %[[B]]
// CHECK:     scf.yield
// CHECK:   scf.yield %[[S]]
// CHECK: return %[[R]]
#map = #tessel.indexing_map<"(th_x, bl_x) -> (bl_x * 16 + th_x), domain: th_x in [0, 15], bl_x in [0, 3]">
func.func @kernel(%in: tensor<64xf32>, %out: tensor<64xf32>) -> tensor<64xf32>
    attributes {tessel.num_threads = 16 : i64, tessel.num_blocks = 4 : i64} {
  %th = gpu.thread_id x upper_bound 16
  %bl = gpu.block_id x upper_bound 4
  %i = tessel.apply_indexing #map(%th, %bl)
  %x = tensor.extract %in[%i] : tensor<64xf32>
  %u = tensor.insert %x into %out[%i] : tensor<64xf32>
  return %u : tensor<64xf32>
}

// A function without a launch configuration is left alone.
// CHECK-LABEL: func.func @helper(%{{.*}}: index) -> index
// CHECK-NEXT: return
func.func @helper(%i: index) -> index {
  return %i : index
}
