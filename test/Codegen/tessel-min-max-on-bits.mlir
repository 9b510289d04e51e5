// RUN: tessel-opt %s -tessel-min-max-on-bits | FileCheck %s

// A row maximum of f32: the maximum with fast-math flags that leave NaNs
// and the sign of a zero to it (x86: vmaxps) and a sum that is a NaN where
// an element was one; where the sum or the initial value is a NaN, or the
// maximum is a zero of either sign, the loop as it was, else the maximum.
// The choice is a select, not an OR, so that a maximum made poison by a
// NaN does not decide it.
// CHECK-LABEL: func.func @row_max(
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]]:2 = scf.for %{{.*}} iter_args(%[[M:.*]] = %[[I:.*]], %[[S:.*]] = %[[Z]]) -> (f32, f32) {
// CHECK:   %[[X:.*]] = tensor.extract
// CHECK:   %[[A:.*]] = arith.maxnumf %[[X]], %[[M]] fastmath<nnan,nsz> : f32
// CHECK:   %[[B:.*]] = arith.addf %[[S]], %[[X]] fastmath<reassoc> : f32
// CHECK:   scf.yield %[[A]], %[[B]]
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[E]]#1, %[[I]] : f32
// CHECK: %[[ZERO:.*]] = arith.cmpf oeq, %[[E]]#0, %{{.*}} : f32
// CHECK: %[[AGAIN:.*]] = arith.select %[[NAN]], %true, %[[ZERO]] : i1
// CHECK: %[[R:.*]] = scf.if %[[AGAIN]] -> (f32) {
// CHECK:   %[[OLD:.*]] = scf.for {{.*}} -> (f32) {
// CHECK:     arith.maximumf
// CHECK:   scf.yield %[[OLD]] : f32
// CHECK: } else {
// CHECK:   scf.yield %[[E]]#0 : f32
// CHECK: return %[[R]]
func.func @row_max(%in: tensor<4096xf32>, %row: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %ninf = arith.constant 0xFF800000 : f32
  %m = scf.for %i = %c0 to %c256 step %c1 iter_args(%acc = %ninf) -> (f32) {
    %k = arith.addi %row, %i : index
    %x = tensor.extract %in[%k] : tensor<4096xf32>
    %y = arith.maximumf %acc, %x : f32
    scf.yield %y : f32
  }
  return %m : f32
}

// A minimum with the element first: the same with the minimum.
// CHECK-LABEL: func.func @row_min(
// CHECK: scf.for {{.*}} -> (f32, f32) {
// CHECK:   arith.minnumf %{{.*}}, %{{.*}} fastmath<nnan,nsz> : f32
// CHECK:   arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK:   arith.minimumf
// CHECK: } else {
func.func @row_min(%in: tensor<4096xf32>, %row: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %inf = arith.constant 0x7F800000 : f32
  %m = scf.for %i = %c0 to %c256 step %c1 iter_args(%acc = %inf) -> (f32) {
    %k = arith.addi %row, %i : index
    %x = tensor.extract %in[%k] : tensor<4096xf32>
    %y = arith.minimumf %x, %acc : f32
    scf.yield %y : f32
  }
  return %m : f32
}

// A row of 40 read as it is (an apply_indexing of the induction variable
// with coefficient 1): two chunks of 16 lanes as vectors, a compare and
// select for the maximum (never poison: no fast-math flags) and the sum;
// the last 16 elements once more (40 is not a multiple of 16); the
// maximum across the lanes by halves, the sum by vector.reduction; an OR
// of the two conditions; the loop as it was where either holds.
#rowmap = #tessel.indexing_map<"(d0, d1) -> (d0 * 40 + d1), domain: d0 in [0, 99], d1 in [0, 39]">
// CHECK-LABEL: func.func @vector_row(
// CHECK: %[[I:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: %[[B:.*]] = vector.splat %[[I]] : vector<16xf32>
// CHECK: %[[E:.*]]:2 = scf.for %[[C:[^ ]*]] = %{{.*}} to %c2 step %{{.*}} iter_args(%[[M:[^ ]*]] = %[[B]], %[[S:[^ ]*]] = %[[Z]]) -> (vector<16xf32>, vector<16xf32>) {
// CHECK:   %[[O:.*]] = arith.muli %[[C]], %c16
// CHECK:   %[[IV:.*]] = arith.addi %c0, %[[O]] : index
// CHECK:   %[[K:.*]] = tessel.apply_indexing #{{.*}}(%{{.*}}, %[[IV]])
// CHECK:   %[[X:.*]] = vector.transfer_read %{{.*}}[%[[K]]], %{{.*}} {in_bounds = [true]} : tensor<4000xf32>, vector<16xf32>
// CHECK:   %[[GT:.*]] = arith.cmpf ogt, %[[X]], %[[M]] : vector<16xf32>
// CHECK:   %[[A:.*]] = arith.select %[[GT]], %[[X]], %[[M]]
// CHECK:   %[[T:.*]] = arith.addf %[[S]], %[[X]] fastmath<reassoc> : vector<16xf32>
// CHECK:   scf.yield %[[A]], %[[T]]
// CHECK: %[[LIV:.*]] = arith.addi %c0, %c24 : index
// CHECK: %[[L:.*]] = tessel.apply_indexing #{{.*}}(%{{.*}}, %[[LIV]])
// CHECK: %[[Y:.*]] = vector.transfer_read %{{.*}}[%[[L]]]
// CHECK: arith.cmpf ogt, %[[Y]], %[[E]]#0 : vector<16xf32>
// CHECK: vector.shuffle {{.*}} [8, 9, 10, 11, 12, 13, 14, 15]
// CHECK: vector.shuffle {{.*}} [1] : vector<2xf32>, vector<2xf32>
// CHECK: %[[MAX:.*]] = vector.extract %{{.*}}[0] : f32 from vector<1xf32>
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[SUM]], %[[I]] : f32
// CHECK: %[[ZERO:.*]] = arith.cmpf oeq, %[[MAX]], %{{.*}} : f32
// CHECK: %[[AGAIN:.*]] = arith.ori %[[NAN]], %[[ZERO]] : i1
// CHECK: %[[R:.*]] = scf.if %[[AGAIN]] -> (f32) {
// CHECK:   scf.for {{.*}} -> (f32) {
// CHECK:     arith.maximumf
// CHECK: } else {
// CHECK:   scf.yield %[[MAX]] : f32
// CHECK: return %[[R]]
func.func @vector_row(%in: tensor<4000xf32>, %row: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  %ninf = arith.constant 0xFF800000 : f32
  %m = scf.for %i = %c0 to %c40 step %c1 iter_args(%acc = %ninf) -> (f32) {
    %k = tessel.apply_indexing #rowmap(%row, %i)
    %x = tensor.extract %in[%k] : tensor<4000xf32>
    %y = arith.maximumf %acc, %x : f32
    scf.yield %y : f32
  }
  return %m : f32
}

// Left alone: a row of 128 (shorter than 256), a maximum with fast-math
// flags, a maximum of f64, and a loop whose accumulator is read twice.
// CHECK-LABEL: func.func @left(
// CHECK-NOT: arith.maxnumf
// CHECK-NOT: scf.if
// CHECK: return
func.func @left(%in: tensor<4096xf32>, %d: tensor<4096xf64>, %row: index) -> (f32, f32, f64, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %ninf = arith.constant 0xFF800000 : f32
  %dninf = arith.constant 0xFFF0000000000000 : f64
  %a = scf.for %i = %c0 to %c128 step %c1 iter_args(%acc = %ninf) -> (f32) {
    %x = tensor.extract %in[%i] : tensor<4096xf32>
    %y = arith.maximumf %acc, %x : f32
    scf.yield %y : f32
  }
  %b = scf.for %i = %c0 to %c256 step %c1 iter_args(%acc = %ninf) -> (f32) {
    %x = tensor.extract %in[%i] : tensor<4096xf32>
    %y = arith.maximumf %acc, %x fastmath<nnan> : f32
    scf.yield %y : f32
  }
  %c = scf.for %i = %c0 to %c256 step %c1 iter_args(%acc = %dninf) -> (f64) {
    %x = tensor.extract %d[%i] : tensor<4096xf64>
    %y = arith.maximumf %acc, %x : f64
    scf.yield %y : f64
  }
  %e = scf.for %i = %c0 to %c256 step %c1 iter_args(%acc = %ninf) -> (f32) {
    %x = tensor.extract %in[%i] : tensor<4096xf32>
    %s = arith.addf %acc, %x : f32
    %y = arith.maximumf %acc, %s : f32
    scf.yield %y : f32
  }
  return %a, %b, %c, %e : f32, f32, f64, f32
}
