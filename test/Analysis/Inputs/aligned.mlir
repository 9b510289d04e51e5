func.func @aligned(%m: memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, %n: index, %b: index) {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %col = tpu.assume_multiple %b, 128 : index
  %v = vector.load %m[%c0, %col] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  scf.for %i = %c0 to %n step %c128 {
    vector.store %v, %m[%c0, %i] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  }
  return
}
