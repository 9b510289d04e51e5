// RUN: tessel-opt %s -split-input-file -verify-diagnostics

func.func @zero_multiple(%i: index) {
  // expected-error @+1 {{'tpu.assume_multiple' op multiple must be positive, got 0}}
  %j = tpu.assume_multiple %i, 0 : index
  return
}

// -----

func.func @negative_multiple(%i: index) {
  // expected-error @+1 {{'tpu.assume_multiple' op multiple must be positive, got -128}}
  %j = tpu.assume_multiple %i, -128 : index
  return
}

// -----

func.func @float_operand(%x: f32) {
  // expected-error @+1 {{operand #0 must be index or signless integer}}
  %j = tpu.assume_multiple %x, 8 : f32
  return
}

// -----

// expected-error @+1 {{#tpu.tiled has 1 tile strides for a memref of rank 2}}
func.func @rank(%m: memref<8x128xf32, #tpu.tiled<(8,128),[1]>>) {
  return
}

// -----

// expected-error @+1 {{tile 0 has extent 0, expected a positive extent}}
func.func @extent(%m: memref<8x128xf32, #tpu.tiled<(8,0),[1,1]>>) {
  return
}

// -----

func.func @indices(%m: memref<8x128xf32, #tpu.tiled<(8,128),[1,1]>>, %i: index) {
  // expected-error @+1 {{'tpu.load' op has 1 indices for a memref of rank 2}}
  %v = tpu.load %m[%i] : memref<8x128xf32, #tpu.tiled<(8,128),[1,1]>>, vector<8x128xf32>
  return
}

// -----

// expected-error @+2 {{expected ::tessel::tpu::MemorySpace to be one of: any, vmem, smem}}
// expected-error @+1 {{failed to parse Tpu_MemorySpaceAttr parameter 'value'}}
func.func @space(%m: memref<8x128xf32, #tpu.memory_space<hbm>>) {
  return
}
