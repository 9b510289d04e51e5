// RUN: tessel-opt %s -split-input-file | FileCheck %s
// RUN: tessel-opt %s -split-input-file | tessel-opt -split-input-file | FileCheck %s
// RUN: tessel-opt %s -split-input-file -mlir-print-op-generic | tessel-opt -split-input-file | FileCheck %s

// The IR snippets of the emitter seed (002), with xla_gpu spelled tessel.
// Each parses, verifies and prints back to the same text.

// CHECK: #indexing_map = #tessel.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
#map = #tessel.indexing_map<"(th_x, bl_x)[vector_index] -> ("
  "bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index),"
  "domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">

// CHECK-LABEL: func.func @main(
// CHECK:   %[[TH:.*]] = gpu.thread_id  x upper_bound 128
// CHECK:   %[[BL:.*]] = gpu.block_id  x upper_bound 24576
// CHECK:   %[[LOOP:.*]] = tessel.loop (%[[TH]], %[[BL]])[%[[V:.*]]] -> (%[[D0:.*]], %[[D1:.*]], %[[D2:.*]]) in #indexing_map iter_args(%[[ITER:.*]] = %{{.*}}) -> (tensor<6x512x4096xbf16>) {
// CHECK:     %[[CALL:.*]] = tessel.pure_call @gelu(%{{.*}}, %[[D0]], %[[D1]], %[[D2]]) : (tensor<6x512x4096xbf16>, index, index, index) -> bf16
// CHECK:     %[[INS:.*]] = tensor.insert %[[CALL]] into %[[ITER]][%[[D0]], %[[D1]], %[[D2]]]
// CHECK:     tessel.yield %[[INS]] : tensor<6x512x4096xbf16>
// CHECK:   }
// CHECK:   return %[[LOOP]]
func.func @main(%input: tensor<6x512x4096xbf16>, %output: tensor<6x512x4096xbf16>)
    -> tensor<6x512x4096xbf16> {
  %thread_id_x = gpu.thread_id x upper_bound 128
  %block_id_x = gpu.block_id x upper_bound 24576
  %xla_loop = tessel.loop (%thread_id_x, %block_id_x)[%vector_index] -> (%dim0, %dim1, %dim2)
      in #map iter_args(%iter = %output) -> (tensor<6x512x4096xbf16>) {
    %pure_call = tessel.pure_call @gelu(%input, %dim0, %dim1, %dim2)
        : (tensor<6x512x4096xbf16>, index, index, index) -> bf16
    %inserted = tensor.insert %pure_call into %iter[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
    tessel.yield %inserted : tensor<6x512x4096xbf16>
  }
  return %xla_loop : tensor<6x512x4096xbf16>
}
func.func private @gelu(%arg0: tensor<6x512x4096xbf16>, %i: index, %j: index, %k: index) -> bf16 {
  %cst = arith.constant 5.000000e-01 : bf16
  %extracted = tensor.extract %arg0[%i, %j, %k] : tensor<6x512x4096xbf16>
  %0 = arith.mulf %extracted, %cst : bf16
  %1 = math.tanh %0 : bf16
  return %1 : bf16
}

// -----

// The lowered loop's index computations (after lowering tessel.loop to scf).
// CHECK-DAG: #[[M0:.*]] = #tessel.indexing_map<"(th_x, bl_x, vector_index) -> (th_x * 4 + bl_x * 512 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-LABEL: func.func @flat(
// CHECK: tessel.apply_indexing #[[M0]](%{{.*}}, %{{.*}}, %{{.*}})
#flat = #tessel.indexing_map<"(th_x, bl_x, vector_index) -> (th_x * 4 + bl_x * 512 + vector_index),"
  "domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
func.func @flat(%th: index, %bl: index, %v: index) -> index {
  %dim = tessel.apply_indexing #flat(%th, %bl, %v)
  return %dim : index
}

// -----

// The transpose emitter's entry function: a shared tile, two loops and a
// barrier between them.
#map = #tessel.indexing_map<"(th_x, bl_x)[i, j] -> (bl_x floordiv 6 * 32 + i, 0, th_x mod 32 + j * 4, i, 0, th_x mod 32), domain: th_x in [0, 127], bl_x in [0, 959], i in [0, 0], j in [0, 0]">
#map1 = #tessel.indexing_map<"(th_x, bl_x)[i] -> (th_x, 0, i), domain: th_x in [0, 31], bl_x in [0, 959], i in [0, 19]">
// CHECK-LABEL: func.func @transpose(
// CHECK: %[[SHMEM:.*]] = tessel.allocate_shared : tensor<32x1x33xf32>
// CHECK: %[[L0:.*]] = tessel.loop
// CHECK-SAME: iter_args(%{{.*}} = %[[SHMEM]]) -> (tensor<32x1x33xf32>)
// CHECK: %[[SYNC:.*]] = tessel.sync_threads %[[L0]] : tensor<32x1x33xf32>
// CHECK: tessel.loop
// CHECK: tensor.extract %[[SYNC]]
func.func @transpose(%arg0: tensor<20x160x170xf32>, %arg1: tensor<170x160x20xf32>) -> tensor<170x160x20xf32> {
  %thread_id_x = gpu.thread_id x upper_bound 128
  %block_id_x = gpu.block_id x upper_bound 960
  %c0 = arith.constant 0 : index
  %shmem = tessel.allocate_shared : tensor<32x1x33xf32>
  %xla_loop = tessel.loop (%thread_id_x, %block_id_x)[%i, %j]
      -> (%input_dim0, %input_dim1, %input_dim2, %shmem_dim0, %shmem_dim1, %shmem_dim2)
      in #map iter_args(%iter = %shmem) -> (tensor<32x1x33xf32>) {
    %extracted = tensor.extract %arg0[%input_dim0, %input_dim1, %input_dim2] : tensor<20x160x170xf32>
    %0 = math.exp %extracted : f32
    %inserted = tensor.insert %0 into %iter[%shmem_dim0, %shmem_dim1, %shmem_dim2] : tensor<32x1x33xf32>
    tessel.yield %inserted : tensor<32x1x33xf32>
  }
  %synced_tensor = tessel.sync_threads %xla_loop : tensor<32x1x33xf32>
  %xla_loop_0 = tessel.loop (%thread_id_x, %block_id_x)[%i] -> (%dim0, %dim1, %dim2)
      in #map1 iter_args(%iter = %arg1) -> (tensor<170x160x20xf32>) {
    %extracted = tensor.extract %synced_tensor[%dim0, %c0, %dim2] : tensor<32x1x33xf32>
    %2 = math.absf %extracted : f32
    %inserted = tensor.insert %2 into %iter[%dim0, %dim1, %dim2] : tensor<170x160x20xf32>
    tessel.yield %inserted : tensor<170x160x20xf32>
  }
  return %xla_loop_0 : tensor<170x160x20xf32>
}

// -----

// A loop without iter_args prints no terminator.
// CHECK-LABEL: func.func @no_iter_args(
// CHECK: tessel.loop (%{{.*}}) -> (%{{.*}}) in #indexing_map {
// CHECK-NEXT: }
#m = #tessel.indexing_map<"(d0) -> (d0 * 2), domain: d0 in [0, 7]">
func.func @no_iter_args(%d: index) {
  tessel.loop (%d) -> (%r) in #m {
  }
  return
}
