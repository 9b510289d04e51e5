// RUN: tessel-opt %s -tessel-fold-nan-constants | FileCheck %s

// -inf / -inf of a bf16 constant widened to f32: the NaN this CPU makes
// (x86: 0xFFC00000, the sign bit set; the canonicalizer's APFloat would
// give 0x7FC00000). The widening is folded so that the division sees two
// constants.
// CHECK-LABEL: func.func @invalid_division
// CHECK-NOT: arith.divf
// CHECK-NOT: arith.extf
// CHECK: %[[NAN:.*]] = arith.constant 0x{{[F7]}}FC00000 : f32
// CHECK: return %[[NAN]]
func.func @invalid_division() -> f32 {
  %a = arith.constant 0xFF80 : bf16
  %x = arith.extf %a : bf16 to f32
  %q = arith.divf %x, %x : f32
  return %q : f32
}

// inf - inf and 0 * inf in f64.
// CHECK-LABEL: func.func @f64_nans
// CHECK-NOT: arith.subf
// CHECK-NOT: arith.mulf
// CHECK-COUNT-2: arith.constant 0x{{[F7]}}FF8000000000000 : f64
func.func @f64_nans() -> (f64, f64) {
  %inf = arith.constant 0x7FF0000000000000 : f64
  %zero = arith.constant 0.0 : f64
  %d = arith.subf %inf, %inf : f64
  %m = arith.mulf %zero, %inf : f64
  return %d, %m : f64, f64
}

// Results that are numbers are left to the canonicalizer, and so are
// operations with an operand that is not a constant, and a widening of a
// NaN constant (APFloat would quiet a signaling NaN).
// CHECK-LABEL: func.func @left_alone
// CHECK: arith.addf
// CHECK: arith.divf %{{.*}}, %arg0
// CHECK: arith.extf
func.func @left_alone(%arg0: f32) -> (f32, f32, f32) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %s = arith.addf %one, %two : f32
  %inf = arith.constant 0x7F800000 : f32
  %q = arith.divf %inf, %arg0 : f32
  %snan = arith.constant 0x7F81 : bf16
  %w = arith.extf %snan : bf16 to f32
  return %s, %q, %w : f32, f32, f32
}
