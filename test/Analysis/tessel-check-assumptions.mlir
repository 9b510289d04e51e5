// RUN: tessel-opt %s --tessel-check-assumptions | FileCheck %s

// CHECK-LABEL: func.func @promise
// CHECK-SAME: (%[[B:.*]]: index, %[[N:.*]]: i32, %[[K:.*]]: i8)
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[R:.*]] = arith.remsi %[[B]], %[[C128]] : index
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[R]], %{{.*}} : index
// CHECK: cf.assert %[[OK]], "tpu.assume_multiple: %arg0 is not a multiple of 128 (at {{.*}}tessel-check-assumptions.mlir:[[@LINE+10]]:8)"
// CHECK: %[[J:.*]] = tpu.assume_multiple %[[B]], 128 : index
// CHECK: arith.remsi %[[N]]
// CHECK: cf.assert %{{.*}}, "tpu.assume_multiple: %arg1 is not a multiple of 8
// CHECK: tpu.assume_multiple %[[N]], 8 : i32
// A multiple of 128 in i8 is 0 or -128: the low 7 bits are zero.
// CHECK: %[[M:.*]] = arith.constant 127 : i8
// CHECK: arith.andi %[[K]], %[[M]] : i8
// CHECK: tpu.assume_multiple %[[K]], 128 : i8
func.func @promise(%b: index, %n: i32, %k: i8) -> (index, i32, i8) {
  %j = tpu.assume_multiple %b, 128 : index
  %m = tpu.assume_multiple %n, 8 : i32
  %l = tpu.assume_multiple %k, 128 : i8
  return %j, %m, %l : index, i32, i8
}
