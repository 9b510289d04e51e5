// RUN: tessel-opt %s -split-input-file | FileCheck %s
// RUN: tessel-opt %s -split-input-file | tessel-opt -split-input-file | FileCheck %s
// RUN: tessel-opt %s -split-input-file -mlir-print-op-generic | tessel-opt -split-input-file | FileCheck %s

// Mosaic's spelling of tiled memory, pasted as Mosaic prints it.

// CHECK-LABEL: func.func @seed
// CHECK-SAME: memref<4x256xf32, #tpu.memory_space<vmem>>
// CHECK: vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x256xf32, #tpu.memory_space<vmem>>, vector<1x32xf32>
func.func @seed(%m: memref<4x256xf32, #tpu.memory_space<vmem>>, %a: index, %b: index) -> vector<1x32xf32> {
  %v = vector.load %m[%a, %b] : memref<4x256xf32, #tpu.memory_space<vmem>>, vector<1x32xf32>
  return %v : vector<1x32xf32>
}

// -----

// CHECK-LABEL: func.func @tiled
// CHECK-SAME: memref<16x256xbf16, #tpu.tiled<(16,128)(2,1),[2,1]>, #tpu.memory_space<vmem>>
// CHECK-SAME: memref<1024xf32, #tpu.tiled<(1024),[1]>, #tpu.memory_space<smem>>
// CHECK-SAME: memref<2x8x128xf32, #tpu.tiled<(8,128),[8,1,1]>, #tpu.memory_space<any>>
func.func @tiled(%a: memref<16x256xbf16, #tpu.tiled<(16,128)(2,1),[2,1]>, #tpu.memory_space<vmem>>,
                 %b: memref<1024xf32, #tpu.tiled<(1024),[1]>, #tpu.memory_space<smem>>,
                 %c: memref<2x8x128xf32, #tpu.tiled<(8,128),[8,1,1]>, #tpu.memory_space<any>>) {
  return
}

// -----

// CHECK-LABEL: func.func @ops
// CHECK: %[[J:.*]] = tpu.assume_multiple %{{.*}}, 128 : index
// CHECK: tpu.assume_multiple %{{.*}}, 8 : i32
// CHECK: %[[V:.*]] = tpu.load %{{.*}}[%{{.*}}, %[[J]]] {sublane_mask = array<i1: true, false>} : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
// CHECK: tpu.store %[[V]], %{{.*}}[%{{.*}}, %[[J]]] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
func.func @ops(%m: memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, %i: index, %n: i32) {
  %c0 = arith.constant 0 : index
  %j = tpu.assume_multiple %i, 128 : index
  %k = tpu.assume_multiple %n, 8 : i32
  %v = tpu.load %m[%c0, %j] {sublane_mask = array<i1: true, false>} : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  tpu.store %v, %m[%c0, %j] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  return
}
