// RUN: tessel-opt %s -tessel-lower-indexing -cse | FileCheck %s

// floordiv and mod of values the domain shows non-negative become unsigned
// division and remainder; a possibly negative dividend rounds toward
// negative infinity.

// CHECK-LABEL: func.func @nonnegative(
// CHECK-SAME: %[[TH:.*]]: index, %[[BL:.*]]: index
// CHECK-DAG: %[[C512:.*]] = arith.constant 512 : index
// CHECK: %[[Q:.*]] = arith.divui %[[BL]], %[[C512]] : index
// CHECK: %[[R:.*]] = arith.remui %[[BL]], %[[C512]] : index
// CHECK: return %[[Q]], %[[R]], %[[TH]]
#seed_cpu = #tessel.indexing_map<"(th_x, bl_x) -> (bl_x floordiv 512, bl_x mod 512, th_x), domain: th_x in [0, 4095], bl_x in [0, 3071]">
func.func @nonnegative(%th: index, %bl: index) -> (index, index, index) {
  %i:3 = tessel.apply_indexing #seed_cpu(%th, %bl)
  return %i#0, %i#1, %i#2 : index, index, index
}

// CHECK-LABEL: func.func @negative(
// CHECK: arith.floordivsi
// CHECK: arith.remsi
// CHECK: arith.select
#pad = #tessel.indexing_map<"(d0) -> ((d0 - 1) floordiv 2, (d0 - 1) mod 2), domain: d0 in [0, 11]">
func.func @negative(%d: index) -> (index, index) {
  %i:2 = tessel.apply_indexing #pad(%d)
  return %i#0, %i#1 : index, index
}
