// RUN: tessel-opt %s -tessel-min-max-on-bits | FileCheck %s

// A row maximum of f32: the signed maximum and minimum and the unsigned
// maximum of the bits; where they show a NaN (a pattern above +inf's as a
// signed integer or above -inf's as an unsigned one) the loop as it was,
// else the signed maximum where it is not negative, the signed minimum
// where every element was negative.
// CHECK-LABEL: func.func @row_max(
// CHECK: %[[I:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[E:.*]]:3 = scf.for %{{.*}} iter_args(%[[SX:.*]] = %[[I]], %[[SN:.*]] = %[[I]], %[[UX:.*]] = %[[I]]) -> (i32, i32, i32) {
// CHECK:   %[[X:.*]] = tensor.extract
// CHECK:   %[[B:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:   %[[A0:.*]] = arith.maxsi %[[SX]], %[[B]] : i32
// CHECK:   %[[A1:.*]] = arith.minsi %[[SN]], %[[B]] : i32
// CHECK:   %[[A2:.*]] = arith.maxui %[[UX]], %[[B]] : i32
// CHECK:   scf.yield %[[A0]], %[[A1]], %[[A2]]
// CHECK: %[[P:.*]] = arith.cmpi sgt, %[[E]]#0, %{{.*}} : i32
// CHECK: %[[N:.*]] = arith.cmpi ugt, %[[E]]#2, %{{.*}} : i32
// CHECK: %[[NAN:.*]] = arith.ori %[[P]], %[[N]] : i1
// CHECK: %[[R:.*]] = scf.if %[[NAN]] -> (f32) {
// CHECK:   %[[OLD:.*]] = scf.for {{.*}} -> (f32) {
// CHECK:     arith.maximumf
// CHECK:   scf.yield %[[OLD]] : f32
// CHECK: } else {
// CHECK:   %[[GE:.*]] = arith.cmpi sge, %[[E]]#0, %{{.*}} : i32
// CHECK:   %[[V:.*]] = arith.select %[[GE]], %[[E]]#0, %[[E]]#1 : i32
// CHECK:   %[[F:.*]] = arith.bitcast %[[V]] : i32 to f32
// CHECK:   scf.yield %[[F]] : f32
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

// A minimum with the element first: the unsigned maximum where an element
// was negative, else the signed minimum.
// CHECK-LABEL: func.func @row_min(
// CHECK: scf.for {{.*}} -> (i32, i32, i32) {
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK:   arith.minimumf
// CHECK: } else {
// CHECK:   %[[NEG:.*]] = arith.cmpi uge, %{{.*}}, %c-2147483648_i32 : i32
// CHECK:   arith.select %[[NEG]]
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

// Left alone: a row of 128 (shorter than 256), a maximum with fast-math
// flags, a maximum of f64, and a loop whose accumulator is read twice.
// CHECK-LABEL: func.func @left(
// CHECK-NOT: arith.maxui
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
