// RUN: tessel-opt %s -canonicalize | FileCheck %s

// With the tessel dialect loaded (the apply_indexing below), the
// canonicalizer composes a bitcast of a bitcast into one bitcast from the
// first source, or into the source where the types match. MLIR 19's own
// pattern returned the source whatever its type: @through_int returned the
// f16 as a bf16.

#map = #tessel.indexing_map<"(d0) -> (d0 * 2), domain: d0 in [0, 3]">

// CHECK-LABEL: func.func @through_int(
// CHECK-SAME: %[[X:.*]]: f16, %{{.*}}: index) -> (bf16, index)
// CHECK: %[[B:.*]] = arith.bitcast %[[X]] : f16 to bf16
// CHECK: return %[[B]],
func.func @through_int(%x: f16, %i: index) -> (bf16, index) {
  %a = arith.bitcast %x : f16 to i16
  %b = arith.bitcast %a : i16 to bf16
  %j = tessel.apply_indexing #map(%i)
  return %b, %j : bf16, index
}

// CHECK-LABEL: func.func @round_trip(
// CHECK-SAME: %[[X:.*]]: f32) -> f32
// CHECK-NOT: arith.bitcast
// CHECK: return %[[X]]
func.func @round_trip(%x: f32) -> f32 {
  %a = arith.bitcast %x : f32 to i32
  %b = arith.bitcast %a : i32 to f32
  return %b : f32
}
