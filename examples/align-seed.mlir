// The seed's kernel (Mosaic: "cannot statically prove that index in
// dimension 1 is a multiple of 128"), and two more ways to get it wrong.
// Try: tessel align examples/align-seed.mlir
func.func @seed(%m: memref<4x256xf32, #tpu.memory_space<vmem>>, %a: index, %b: index) -> vector<1x32xf32> {
  %v = vector.load %m[%a, %b] : memref<4x256xf32, #tpu.memory_space<vmem>>, vector<1x32xf32>
  return %v : vector<1x32xf32>
}

func.func @chunks(%m: memref<8x4096xf32, #tpu.memory_space<vmem>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c1 to %n step %c32 {
    %v = vector.load %m[%c0, %i] : memref<8x4096xf32, #tpu.memory_space<vmem>>, vector<8x32xf32>
  }
  return
}

func.func @product(%m: memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, %j: index) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %x = arith.muli %j, %c32 overflow<nsw> : index
  %v = vector.load %m[%c0, %x] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x32xf32>
  return
}
