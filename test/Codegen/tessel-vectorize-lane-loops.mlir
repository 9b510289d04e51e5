// RUN: tessel-opt %s -split-input-file -tessel-vectorize-lane-loops -cse | FileCheck %s

// The transpose emitter's writing phase after -tessel-lower-grid-to-cpu:
// warps (%w) around a loop over their 32 lanes (%l), marked tessel.lanes.
// Each lane reads the tile at w * 32 + l and writes the output at
// w * 4096 + bl * 32 + l: both contiguous in the lane and multiples of 32
// elsewhere, so the lane loop reads and writes vector<32xf32> (left to
// LLVM, CPUs with AVX-512 vectorized the warp loop with gathers and
// scatters) and is unrolled. The mark is removed.
#tile = #tessel.indexing_map<"(w, l, bl) -> (w * 32 + l), domain: w in [0, 127], l in [0, 31], bl in [0, 4095]">
#out = #tessel.indexing_map<"(w, l, bl) -> ((bl mod 32) * 524288 + w * 4096 + (bl floordiv 32) * 32 + l), domain: w in [0, 127], l in [0, 31], bl in [0, 4095]">
// CHECK-LABEL: func.func @writing_phase(
// CHECK-SAME: %[[TILE:[^:]*]]: tensor<4096xf32>, %[[OUT:[^:]*]]: tensor<16777216xf32>, %[[BL:[^:]*]]: index)
// CHECK: scf.for %[[W:.*]] = %{{.*}} iter_args(%[[O:.*]] = %[[OUT]])
// CHECK:   %[[TB:.*]] = tessel.apply_indexing #{{.*}}(%[[W]], %[[C0:.*]], %[[BL]])
// CHECK:   %[[VIN:.*]] = vector.transfer_read %[[TILE]][%[[TB]]], %{{.*}} {in_bounds = [true]} : tensor<4096xf32>, vector<32xf32>
// CHECK:   %[[OB:.*]] = tessel.apply_indexing #{{.*}}(%[[W]], %[[C0]], %[[BL]])
// The lane loop is unrolled whole (LLVM makes vector ops of the copies).
// CHECK-NOT: scf.for
// CHECK-NOT: tessel.lanes
// CHECK-COUNT-32: math.absf
// CHECK:   %[[LAST:.*]] = vector.insert %{{.*}} : f32 into vector<32xf32>
// CHECK-NEXT: vector.transfer_write %[[LAST]], %[[O]][%[[OB]]] {in_bounds = [true]} : vector<32xf32>, tensor<16777216xf32>
func.func @writing_phase(%tile: tensor<4096xf32>, %out: tensor<16777216xf32>, %bl: index) -> tensor<16777216xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %r = scf.for %w = %c0 to %c128 step %c1 iter_args(%o = %out) -> (tensor<16777216xf32>) {
    %s = scf.for %l = %c0 to %c32 step %c1 iter_args(%acc = %o) -> (tensor<16777216xf32>) {
      %i = tessel.apply_indexing #tile(%w, %l, %bl)
      %x = tensor.extract %tile[%i] : tensor<4096xf32>
      %y = math.absf %x : f32
      %j = tessel.apply_indexing #out(%w, %l, %bl)
      %u = tensor.insert %y into %acc[%j] : tensor<16777216xf32>
      scf.yield %u : tensor<16777216xf32>
    } {tessel.lanes}
    scf.yield %s : tensor<16777216xf32>
  }
  return %r : tensor<16777216xf32>
}

// -----

// The same loop without the mark is not a lane loop of the grid: left
// alone (-tessel-vectorize-loads-stores ran on it before the grid was
// lowered).
#tile2 = #tessel.indexing_map<"(w, l) -> (w * 32 + l), domain: w in [0, 127], l in [0, 31]">
// CHECK-LABEL: func.func @unmarked(
// CHECK-NOT: vector.transfer_read
// CHECK: tensor.extract
// CHECK-NOT: vector.transfer_write
// CHECK: tensor.insert
func.func @unmarked(%tile: tensor<4096xf32>, %out: tensor<4096xf32>) -> tensor<4096xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %r = scf.for %w = %c0 to %c128 step %c1 iter_args(%o = %out) -> (tensor<4096xf32>) {
    %s = scf.for %l = %c0 to %c32 step %c1 iter_args(%acc = %o) -> (tensor<4096xf32>) {
      %i = tessel.apply_indexing #tile2(%w, %l)
      %x = tensor.extract %tile[%i] : tensor<4096xf32>
      %u = tensor.insert %x into %acc[%i] : tensor<4096xf32>
      scf.yield %u : tensor<4096xf32>
    }
    scf.yield %s : tensor<4096xf32>
  }
  return %r : tensor<4096xf32>
}

// -----

// A marked lane loop whose output offset is not a multiple of 32 at l = 0
// (w * 4100): the read becomes a vector, the write stays scalar (32
// inserts after unrolling).
#tile3 = #tessel.indexing_map<"(w, l) -> (w * 32 + l), domain: w in [0, 127], l in [0, 31]">
#out3 = #tessel.indexing_map<"(w, l) -> (w * 4100 + l), domain: w in [0, 127], l in [0, 31]">
// CHECK-LABEL: func.func @unaligned_output(
// CHECK: vector.transfer_read {{.*}} vector<32xf32>
// CHECK-NOT: vector.transfer_write
// CHECK: tensor.insert
func.func @unaligned_output(%tile: tensor<4096xf32>, %out: tensor<524800xf32>) -> tensor<524800xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %r = scf.for %w = %c0 to %c128 step %c1 iter_args(%o = %out) -> (tensor<524800xf32>) {
    %s = scf.for %l = %c0 to %c32 step %c1 iter_args(%acc = %o) -> (tensor<524800xf32>) {
      %i = tessel.apply_indexing #tile3(%w, %l)
      %x = tensor.extract %tile[%i] : tensor<4096xf32>
      %j = tessel.apply_indexing #out3(%w, %l)
      %u = tensor.insert %x into %acc[%j] : tensor<524800xf32>
      scf.yield %u : tensor<524800xf32>
    } {tessel.lanes}
    scf.yield %s : tensor<524800xf32>
  }
  return %r : tensor<524800xf32>
}
