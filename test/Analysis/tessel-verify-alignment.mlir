// RUN: tessel-opt %s -split-input-file --tessel-verify-alignment -verify-diagnostics

// The seed's own example, pasted as Mosaic prints it: dim 0 touches one row
// of 32-bit elements (exempt); dim 1 is tiled by 128 and %b is unknown.
func.func @seed(%m: memref<4x256xf32, #tpu.memory_space<vmem>>, %a: index, %b: index) -> vector<1x32xf32> {
  // expected-error @+5 {{cannot statically prove that index in dimension 1 is a multiple of 128}}
  // expected-note @+4 {{the multiple 128 is the tile: memref<4x256xf32, #tpu.memory_space<vmem>> has no tiled layout, so it gets the default tiling (8,128) of 32-bit elements in #tpu.memory_space<vmem>, which tiles dimension 1 by 128}}
  // expected-note @+3 {{the term %arg2 (a function argument) breaks the proof: nothing is known about it}}
  // expected-note @+2 {{unknown, not proven misaligned: nothing is known about the index; it could be 1, which is not a multiple of 128}}
  // expected-note @+1 {{fix: if every value of %arg2 is a multiple of 128, promise it: `%aligned = tpu.assume_multiple %arg2, 128 : index` and use %aligned in its place}}
  %14372 = "vector.load"(%m, %a, %b) : (memref<4x256xf32, #tpu.memory_space<vmem>>, index, index) -> vector<1x32xf32>
  return %14372 : vector<1x32xf32>
}

// -----

// The seed's fix: the promise makes it pass.
func.func @seed_fixed(%m: memref<4x256xf32, #tpu.memory_space<vmem>>, %a: index, %b: index) -> vector<1x32xf32> {
  %aligned = tpu.assume_multiple %b, 128 : index
  %v = vector.load %m[%a, %aligned] : memref<4x256xf32, #tpu.memory_space<vmem>>, vector<1x32xf32>
  return %v : vector<1x32xf32>
}

// -----

// What passes: constants (static indices are exempt, aligned or not), loop
// variables with an aligned start and step, products, untiled leading dims,
// plain memrefs (not tiled), one row of 32-bit elements.
func.func @aligned(%m: memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>,
                   %t: memref<3x16x256xf32, #tpu.tiled<(8,128),[32,2,1]>>,
                   %p: memref<16x256xf32>, %n: index, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %v0 = vector.load %m[%c8, %c32] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  scf.for %k = %c0 to %n step %c128 {
    %v = vector.load %m[%c0, %k] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
    vector.store %v, %m[%c8, %k] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  }
  %r = arith.muli %i, %c8 : index
  %col = arith.muli %j, %c128 : index
  %v1 = vector.load %m[%r, %col] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  %v2 = vector.load %t[%i, %r, %col] : memref<3x16x256xf32, #tpu.tiled<(8,128),[32,2,1]>>, vector<8x128xf32>
  %v3 = vector.load %p[%i, %j] : memref<16x256xf32>, vector<8x128xf32>
  %v4 = vector.load %m[%i, %col] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<1x128xf32>
  return
}

// -----

// Proven misaligned: i * 128 + 32 is 32 mod 128; no promise helps.
func.func @proven_not(%m: memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, %i: index) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %x = arith.muli %i, %c128 : index
  %y = arith.addi %x, %c32 : index
  // expected-error @+5 {{cannot statically prove that index in dimension 1 is a multiple of 128}}
  // expected-note @+4 {{the layout #tpu.tiled<(8,128),[2,1]> tiles dimension 1 by 128 (as XLA writes the layout: f32[16,256]{1,0:T(8,128)})}}
  // expected-note @+3 {{the term %c32 (the result of arith.constant) breaks the proof: it is the constant 32}}
  // expected-note @+2 {{proven misaligned: every value of the index is 32 mod 128, so no value is a multiple of 128 (e.g. 32)}}
  // expected-note @+1 {{fix: no promise can help: pad the data in dimension 1 so that the index becomes a multiple of 128, or load the aligned tile that holds it (the index rounded down to a multiple of 128) and rotate the values into place}}
  %v = vector.load %m[%c0, %y] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x32xf32>
  return
}

// -----

// The spec's chunks of 32 from offset 1: 1, 33, 65, ...
func.func @chunks(%m: memref<8x4096xf32, #tpu.memory_space<vmem>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c1 to %n step %c32 {
    // expected-error @+5 {{cannot statically prove that index in dimension 1 is a multiple of 128}}
    // expected-note @+4 {{the multiple 128 is the tile}}
    // expected-note @+3 {{the term %arg2 (the induction variable of an scf.for) breaks the proof: every value of it is 1 mod 32}}
    // expected-note @+2 {{proven misaligned: every value of the index is 1 mod 32, so no value is a multiple of 128 (e.g. 1)}}
    // expected-note @+1 {{fix: the chunks start at 1, 33, 65, ...: repack or pad the data in dimension 1 so that the first chunk starts at 0 and chunks are 128 apart (0, 128, 256, ...), or load the aligned tile and rotate the values into place}}
    %v = vector.load %m[%c0, %i] : memref<8x4096xf32, #tpu.memory_space<vmem>>, vector<8x32xf32>
  }
  return
}

// -----

// A loop whose step is aligned but whose start is not known: promise the
// start.
func.func @loop_start(%m: memref<8x4096xf32, #tpu.memory_space<vmem>>, %lb: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  scf.for %i = %lb to %n step %c256 {
    // expected-error @+5 {{cannot statically prove that index in dimension 1 is a multiple of 128}}
    // expected-note @+4 {{the multiple 128 is the tile}}
    // expected-note @+3 {{the term %arg1 (a function argument) breaks the proof: nothing is known about it}}
    // expected-note @+2 {{unknown, not proven misaligned}}
    // expected-note @+1 {{fix: if every value of %arg1 is a multiple of 128, promise it}}
    %v = vector.load %m[%c0, %i] : memref<8x4096xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
  }
  return
}

// -----

// A product that is a multiple of 32 only: the smallest promise is on %j,
// by 128 / 32 = 4.
func.func @product(%m: memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, %j: index) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %x = arith.muli %j, %c32 overflow<nsw> : index
  // expected-error @+5 {{cannot statically prove that index in dimension 1 is a multiple of 128}}
  // expected-note @+4 {{the multiple 128 is the tile}}
  // expected-note @+3 {{the term %arg1 (a function argument) breaks the proof: nothing is known about it; it must be a multiple of 4 for the index to be a multiple of 128}}
  // expected-note @+2 {{unknown, not proven misaligned: the index is a multiple of 32 only; it could be 32, which is not a multiple of 128}}
  // expected-note @+1 {{fix: if every value of %arg1 is a multiple of 4, promise it: `%aligned = tpu.assume_multiple %arg1, 4 : index` and use %aligned in its place}}
  %v = vector.load %m[%c0, %x] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x32xf32>
  return
}

// -----

// bf16 packs two rows per sublane: the second-minor dim is tiled by 16 and
// one row is not exempt.
func.func @packed(%m: memref<32x256xbf16, #tpu.memory_space<vmem>>, %i: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+5 {{cannot statically prove that index in dimension 0 is a multiple of 16}}
  // expected-note @+4 {{the default tiling (16,128)(2,1) of 16-bit elements in #tpu.memory_space<vmem>, which tiles dimension 0 by 16 (as XLA writes the layout: bf16[32,256]{1,0:T(16,128)(2,1)})}}
  // expected-note @+3 {{the term %arg1}}
  // expected-note @+2 {{unknown}}
  // expected-note @+1 {{fix}}
  %v = vector.load %m[%i, %c0] : memref<32x256xbf16, #tpu.memory_space<vmem>>, vector<1x128xbf16>
  return
}

// -----

// A 1-D memref needs a whole tile.
func.func @one_dim(%m: memref<4096xf32, #tpu.memory_space<vmem>>, %i: index) {
  %c128 = arith.constant 128 : index
  %x = arith.muli %i, %c128 : index
  // expected-error @+5 {{cannot statically prove that index in dimension 0 is a multiple of 1024}}
  // expected-note @+4 {{default tiling (1024) of 32-bit elements}}
  // expected-note @+3 {{it must be a multiple of 8 for the index to be a multiple of 1024}}
  // expected-note @+2 {{unknown}}
  // expected-note @+1 {{fix}}
  %v = vector.load %m[%x] : memref<4096xf32, #tpu.memory_space<vmem>>, vector<128xf32>
  return
}

// -----

// Transfers and tpu.load/store follow the same rule; a transfer's
// permutation map says which dims it touches.
func.func @others(%m: memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %f0 = arith.constant 0.0 : f32
  %col = tpu.assume_multiple %j, 128 : index
  %a = vector.transfer_read %m[%c0, %col], %f0 : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  // expected-error @+5 {{cannot statically prove that index in dimension 0 is a multiple of 8}}
  // expected-note @+4 {{tiles dimension 0 by 8}}
  // expected-note @+3 {{the term %arg1}}
  // expected-note @+2 {{unknown}}
  // expected-note @+1 {{fix}}
  vector.transfer_write %a, %m[%i, %col] : vector<8x128xf32>, memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>
  // The column is the only dim read: the row is one row of 32-bit elements.
  %b = vector.transfer_read %m[%i, %col], %f0 {permutation_map = affine_map<(d0, d1) -> (d1)>} : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<128xf32>
  %c = tpu.load %m[%c0, %col] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  // expected-error @+5 {{cannot statically prove that index in dimension 1 is a multiple of 128}}
  // expected-note @+4 {{tiles dimension 1 by 128}}
  // expected-note @+3 {{the term %arg2}}
  // expected-note @+2 {{unknown}}
  // expected-note @+1 {{fix}}
  tpu.store %c, %m[%c0, %j] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  return
}

// -----

// Neither term of a sum is aligned: the sum itself is the term to promise.
func.func @sum(%m: memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %s = arith.addi %i, %j : index
  // expected-error @+5 {{cannot statically prove that index in dimension 1 is a multiple of 128}}
  // expected-note @+4 {{the multiple 128 is the tile}}
  // expected-note @+3 {{the term %0 (the result of arith.addi) breaks the proof: nothing is known about it}}
  // expected-note @+2 {{unknown}}
  // expected-note @+1 {{fix: if every value of %0 is a multiple of 128, promise it}}
  %v = vector.load %m[%c0, %s] : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  return
}

// -----

// Tile strides that are not those of row-major tiles have no XLA form.
func.func @strides(%m: memref<16x256xf32, #tpu.tiled<(8,128),[1,2]>>, %j: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+5 {{cannot statically prove that index in dimension 1 is a multiple of 128}}
  // expected-note-re @+4 {{the layout #tpu.tiled<(8,128),[1,2]> tiles dimension 1 by 128{{$}}}}
  // expected-note @+3 {{the term}}
  // expected-note @+2 {{unknown}}
  // expected-note @+1 {{fix}}
  %v = vector.load %m[%c0, %j] : memref<16x256xf32, #tpu.tiled<(8,128),[1,2]>>, vector<8x128xf32>
  return
}
