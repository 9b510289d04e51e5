// RUN: tessel-opt %s -split-input-file -tessel-lower-grid-to-nvvm | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-lower-grid-to-nvvm -tessel-lower-indexing -tessel-lower-tensors -tessel-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// The ids are the PTX special registers; the entry is marked a GPU kernel;
// barriers and shared tiles stay for -tessel-lower-tensors.

// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: tessel.gpu_kernel
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[TH:.*]] = arith.index_castui %[[TID]] : i32 to index
// CHECK: %[[CTAID:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK: %[[BL:.*]] = arith.index_castui %[[CTAID]] : i32 to index
// CHECK-NOT: gpu.
// CHECK: tessel.allocate_shared
// CHECK: tessel.apply_indexing #{{.*}}(%[[TH]], %[[BL]])
// CHECK: tessel.sync_threads

// After the whole lowering: an NVVM kernel of 16 threads; the tile is a
// global of shared memory, the barrier nvvm.barrier0, the input's loads
// invariant.
// LLVM: llvm.mlir.global internal @kernel_shared_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<16 x f32>
// LLVM-LABEL: llvm.func @kernel(
// LLVM-SAME: %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias})
// LLVM-SAME: nvvm.kernel
// LLVM-SAME: nvvm.maxntid = array<i32: 16, 1, 1>
// LLVM-DAG: %[[S:.*]] = llvm.mlir.addressof @kernel_shared_0 : !llvm.ptr<3>
// LLVM-DAG: nvvm.read.ptx.sreg.tid.x
// LLVM: llvm.addrspacecast %[[S]] : !llvm.ptr<3> to !llvm.ptr
// LLVM: llvm.load %{{.*}} invariant : !llvm.ptr -> f32
// LLVM: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// LLVM: nvvm.barrier0
// LLVM: llvm.load
// LLVM: llvm.store
// LLVM-NOT: nvvm.barrier0
// LLVM: llvm.return
#map = #tessel.indexing_map<"(th_x, bl_x) -> (bl_x * 16 + th_x), domain: th_x in [0, 15], bl_x in [0, 3]">
#tile = #tessel.indexing_map<"(th_x, bl_x) -> (th_x), domain: th_x in [0, 15], bl_x in [0, 3]">
#rev = #tessel.indexing_map<"(th_x, bl_x) -> (15 - th_x), domain: th_x in [0, 15], bl_x in [0, 3]">
func.func @kernel(%in: tensor<64xf32>, %out: tensor<64xf32>) -> tensor<64xf32>
    attributes {tessel.num_threads = 16 : i64, tessel.num_blocks = 4 : i64} {
  %th = gpu.thread_id x upper_bound 16
  %bl = gpu.block_id x upper_bound 4
  %tile = tessel.allocate_shared : tensor<16xf32>
  %i = tessel.apply_indexing #map(%th, %bl)
  %t = tessel.apply_indexing #tile(%th, %bl)
  %x = tensor.extract %in[%i] : tensor<64xf32>
  %w = tensor.insert %x into %tile[%t] : tensor<16xf32>
  %s = tessel.sync_threads %w : tensor<16xf32>
  %r = tessel.apply_indexing #rev(%th, %bl)
  %y = tensor.extract %s[%r] : tensor<16xf32>
  %u = tensor.insert %y into %out[%i] : tensor<64xf32>
  return %u : tensor<64xf32>
}

// -----

// A function without a launch configuration is left alone.
// CHECK-LABEL: func.func @helper(
// CHECK-NOT: tessel.gpu_kernel
// CHECK: return
func.func @helper(%x: f32) -> f32 {
  return %x : f32
}
