// RUN: tessel-opt %s -split-input-file -tessel-vectorize-loads-stores -cse | FileCheck %s

// The seed's example after flattening: the offset bl_x * 512 + th_x * 4 +
// vector_index is contiguous in the vector index and a multiple of 4
// elsewhere, so the load and the store become vector<4xbf16> transfers
// outside the loop.
#flat = #tessel.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-LABEL: func.func @seed(
// CHECK-SAME: %[[IN:[^:]*]]: tensor<12582912xbf16>, %[[OUT:[^:]*]]: tensor<12582912xbf16>, %[[TH:[^:]*]]: index, %[[BL:[^:]*]]: index)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[BASE:.*]] = tessel.apply_indexing #{{.*}}(%[[TH]], %[[BL]])[%[[C0]]]
// CHECK: %[[VIN:.*]] = vector.transfer_read %[[IN]][%[[BASE]]], %{{.*}} {in_bounds = [true]} : tensor<12582912xbf16>, vector<4xbf16>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xbf16>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[V:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %[[OUT]], %[[VACC:.*]] = %[[ZERO]]) -> (tensor<12582912xbf16>, vector<4xbf16>) {
// CHECK:   %[[X:.*]] = vector.extract %[[VIN]][%[[V]]] : bf16 from vector<4xbf16>
// CHECK:   %[[Y:.*]] = arith.negf %[[X]] : bf16
// CHECK:   %[[W:.*]] = vector.insert %[[Y]], %[[VACC]] [%[[V]]] : bf16 into vector<4xbf16>
// CHECK:   scf.yield %[[ACC]], %[[W]]
// CHECK: %[[R:.*]] = vector.transfer_write %[[LOOP]]#1, %[[LOOP]]#0[%[[BASE]]] {in_bounds = [true]} : vector<4xbf16>, tensor<12582912xbf16>
// CHECK: return %[[R]]
func.func @seed(%in: tensor<12582912xbf16>, %out: tensor<12582912xbf16>, %th: index, %bl: index) -> tensor<12582912xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %v = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<12582912xbf16>) {
    %o = tessel.apply_indexing #flat(%th, %bl)[%v]
    %x = tensor.extract %in[%o] : tensor<12582912xbf16>
    %y = arith.negf %x : bf16
    %u = tensor.insert %y into %acc[%o] : tensor<12582912xbf16>
    scf.yield %u : tensor<12582912xbf16>
  }
  return %r : tensor<12582912xbf16>
}

// -----

// th_x * 2 + v is contiguous but not a multiple of 4: left alone (the
// vector would straddle an alignment boundary the analysis cannot prove).
#odd = #tessel.indexing_map<"(th_x)[v] -> (th_x * 2 + v), domain: th_x in [0, 7], v in [0, 3]">
// CHECK-LABEL: func.func @unaligned(
// CHECK-NOT: vector.transfer_read
// CHECK: tensor.extract
func.func @unaligned(%in: tensor<20xf32>, %th: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  %r = scf.for %v = %c0 to %c4 step %c1 iter_args(%s = %z) -> (f32) {
    %o = tessel.apply_indexing #odd(%th)[%v]
    %x = tensor.extract %in[%o] : tensor<20xf32>
    %t = arith.addf %s, %x : f32
    scf.yield %t : f32
  }
  return %r : f32
}

// -----

// A strided access (2 * v) is not contiguous: left alone.
#strided = #tessel.indexing_map<"(th_x)[v] -> (th_x * 8 + v * 2), domain: th_x in [0, 7], v in [0, 3]">
// CHECK-LABEL: func.func @strided(
// CHECK-NOT: vector.transfer_read
func.func @strided(%in: tensor<64xf32>, %th: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  %r = scf.for %v = %c0 to %c4 step %c1 iter_args(%s = %z) -> (f32) {
    %o = tessel.apply_indexing #strided(%th)[%v]
    %x = tensor.extract %in[%o] : tensor<64xf32>
    %t = arith.addf %s, %x : f32
    scf.yield %t : f32
  }
  return %r : f32
}

// -----

// Predicates take a byte each in memory, while LLVM packs vector<4xi1> into
// bits: an i1 access stays scalar even where it is contiguous and aligned.
#pred = #tessel.indexing_map<"(th_x)[v] -> (th_x * 4 + v), domain: th_x in [0, 7], v in [0, 3]">
// CHECK-LABEL: func.func @predicates(
// CHECK-NOT: vector.transfer
// CHECK: tensor.extract
// CHECK: tensor.insert
func.func @predicates(%in: tensor<32xi1>, %out: tensor<32xi1>, %th: index) -> tensor<32xi1> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %true = arith.constant true
  %r = scf.for %v = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<32xi1>) {
    %o = tessel.apply_indexing #pred(%th)[%v]
    %x = tensor.extract %in[%o] : tensor<32xi1>
    %y = arith.xori %x, %true : i1
    %u = tensor.insert %y into %acc[%o] : tensor<32xi1>
    scf.yield %u : tensor<32xi1>
  }
  return %r : tensor<32xi1>
}

// -----

// The map alone sees d0 + v; the divisibility analysis knows d0 is
// 4 * %i (no wrap), so the access is aligned and becomes a vector read.
#plain = #tessel.indexing_map<"(d0)[v] -> (d0 + v), domain: d0 in [0, 60], v in [0, 3]">
// CHECK-LABEL: func.func @analysis(
// CHECK: vector.transfer_read %{{.*}} : tensor<64xf32>, vector<4xf32>
func.func @analysis(%in: tensor<64xf32>, %out: tensor<64xf32>, %i: index) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %d = arith.muli %i, %c4 overflow<nsw> : index
  %r = scf.for %v = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<64xf32>) {
    %o = tessel.apply_indexing #plain(%d)[%v]
    %x = tensor.extract %in[%o] : tensor<64xf32>
    %u = tensor.insert %x into %acc[%o] : tensor<64xf32>
    scf.yield %u : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// 3 * %i may be anything modulo 4: the access stays scalar.
#plain3 = #tessel.indexing_map<"(d0)[v] -> (d0 + v), domain: d0 in [0, 60], v in [0, 3]">
// CHECK-LABEL: func.func @unknown(
// CHECK-NOT: vector.transfer_read
func.func @unknown(%in: tensor<64xf32>, %out: tensor<64xf32>, %i: index) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %d = arith.muli %i, %c3 : index
  %r = scf.for %v = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<64xf32>) {
    %o = tessel.apply_indexing #plain3(%d)[%v]
    %x = tensor.extract %in[%o] : tensor<64xf32>
    %u = tensor.insert %x into %acc[%o] : tensor<64xf32>
    scf.yield %u : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// A loop of more than 8 iterations that carries a scalar (the loop
// emitter's row loop of a max over rows of 64) keeps its scalar reads: a
// vector<64xf32> read would leave extracts at a variable position, which
// LLVM makes through memory one element at a time (a row max of
// f32[65536,64] took 11 ms instead of 0.5).
#row = #tessel.indexing_map<"(d0)[v] -> (d0 * 64 + v), domain: d0 in [0, 1023], v in [0, 63]">
// CHECK-LABEL: func.func @row_loop(
// CHECK-NOT: vector.transfer_read
// CHECK: tensor.extract
// CHECK: arith.maximumf
func.func @row_loop(%in: tensor<65536xf32>, %row: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %init = arith.constant 0xFF800000 : f32
  %r = scf.for %v = %c0 to %c64 step %c1 iter_args(%acc = %init) -> (f32) {
    %o = tessel.apply_indexing #row(%row)[%v]
    %x = tensor.extract %in[%o] : tensor<65536xf32>
    %m = arith.maximumf %acc, %x : f32
    scf.yield %m : f32
  }
  return %r : f32
}

// -----

// The same over rows of 8: -tessel-unroll-loops unrolls it, so one read of
// vector<8xf32> pays.
#row8 = #tessel.indexing_map<"(d0)[v] -> (d0 * 8 + v), domain: d0 in [0, 1023], v in [0, 7]">
// CHECK-LABEL: func.func @short_row_loop(
// CHECK: vector.transfer_read {{.*}} : tensor<8192xf32>, vector<8xf32>
func.func @short_row_loop(%in: tensor<8192xf32>, %row: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %init = arith.constant 0xFF800000 : f32
  %r = scf.for %v = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (f32) {
    %o = tessel.apply_indexing #row8(%row)[%v]
    %x = tensor.extract %in[%o] : tensor<8192xf32>
    %m = arith.maximumf %acc, %x : f32
    scf.yield %m : f32
  }
  return %r : f32
}
