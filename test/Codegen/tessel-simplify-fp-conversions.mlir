// RUN: tessel-opt %s -tessel-simplify-fp-conversions | FileCheck %s

// A bf16 value widened again keeps its f32 value (XLA's excess precision);
// the rounding where it leaves (the return) stays.

// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:.*]]: bf16, %[[Y:.*]]: bf16) -> bf16
// CHECK: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: %[[YW:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK: %[[M:.*]] = arith.mulf %[[XW]], %[[YW]] : f32
// CHECK-NOT: arith.truncf %[[M]]
// CHECK: %[[A:.*]] = arith.addf %[[M]], %[[XW]] : f32
// CHECK: %[[R:.*]] = arith.truncf %[[A]] {tessel.excess_precision} : f32 to bf16
// CHECK: return %[[R]]
func.func @chain(%x: bf16, %y: bf16) -> bf16 {
  %xw = arith.extf %x : bf16 to f32
  %yw = arith.extf %y : bf16 to f32
  %m = arith.mulf %xw, %yw : f32
  %mn = arith.truncf %m {tessel.excess_precision} : f32 to bf16
  %mw = arith.extf %mn : bf16 to f32
  %a = arith.addf %mw, %xw : f32
  %r = arith.truncf %a {tessel.excess_precision} : f32 to bf16
  return %r : bf16
}

// A convert's rounding (no tessel.excess_precision) stays: the HLO asks
// for it.
// CHECK-LABEL: func.func @convert(
// CHECK: %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.extf %[[T]] : bf16 to f32
func.func @convert(%x: f32) -> f32 {
  %t = arith.truncf %x : f32 to bf16
  %e = arith.extf %t : bf16 to f32
  return %e : f32
}

// A round trip through a narrower type than the source is a real
// conversion (f64 -> f32 -> f64 keeps its rounding).
// CHECK-LABEL: func.func @other_types(
// CHECK: arith.truncf %{{.*}} : f64 to bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
func.func @other_types(%x: f64) -> f32 {
  %t = arith.truncf %x : f64 to bf16
  %e = arith.extf %t : bf16 to f32
  return %e : f32
}

// A maximum of widened bf16 values (the emitter's compares and selects,
// the AND of the bits for signed zeros) is a bf16 value already: its round
// trip stays, so that the chain keeps the shape the on-bits fold matches;
// the product's goes.
// CHECK-LABEL: func.func @exact(
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %cst, %{{.*}} : f32
// CHECK: %[[T:.*]] = arith.truncf %[[S]] {tessel.excess_precision} : f32 to bf16
// CHECK: %[[W:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[W]], %{{.*}} : f32
// CHECK-NOT: arith.truncf %[[P]]
// CHECK: arith.addf %[[P]]
func.func @exact(%x: bf16, %y: bf16) -> bf16 {
  %ninf = arith.constant 0xFF800000 : f32
  %xw = arith.extf %x : bf16 to f32
  %yw = arith.extf %y : bf16 to f32
  %gt = arith.cmpf ogt, %xw, %yw : f32
  %mx = arith.select %gt, %xw, %yw : f32
  %xb = arith.bitcast %xw : f32 to i32
  %yb = arith.bitcast %yw : f32 to i32
  %and = arith.andi %xb, %yb : i32
  %z = arith.bitcast %and : i32 to f32
  %eq = arith.cmpf oeq, %xw, %yw : f32
  %m0 = arith.select %eq, %z, %mx : f32
  %uno = arith.cmpf uno, %xw, %xw : f32
  %m = arith.select %uno, %ninf, %m0 : f32
  %mn = arith.truncf %m {tessel.excess_precision} : f32 to bf16
  %mw = arith.extf %mn : bf16 to f32
  %p = arith.mulf %mw, %yw : f32
  %pn = arith.truncf %p {tessel.excess_precision} : f32 to bf16
  %pw = arith.extf %pn : bf16 to f32
  %a = arith.addf %pw, %xw : f32
  %r = arith.truncf %a {tessel.excess_precision} : f32 to bf16
  return %r : bf16
}
