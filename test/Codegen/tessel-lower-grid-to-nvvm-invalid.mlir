// RUN: tessel-opt %s -split-input-file -tessel-lower-grid-to-nvvm -verify-diagnostics

// expected-error @+1 {{runs 2048 threads per block; a GPU block has 1 to 1024 threads}}
func.func @too_many_threads(%out: tensor<4xf32>) -> tensor<4xf32>
    attributes {tessel.num_threads = 2048 : i64, tessel.num_blocks = 1 : i64} {
  return %out : tensor<4xf32>
}

// -----

// expected-error @+1 {{runs 4294967296 blocks; a GPU grid has 1 to 2^31 - 1 blocks along x}}
func.func @too_many_blocks(%out: tensor<4xf32>) -> tensor<4xf32>
    attributes {tessel.num_threads = 1 : i64, tessel.num_blocks = 4294967296 : i64} {
  return %out : tensor<4xf32>
}

// -----

func.func @barrier_in_loop(%out: tensor<4xf32>) -> tensor<4xf32>
    attributes {tessel.num_threads = 4 : i64, tessel.num_blocks = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%o = %out) -> (tensor<4xf32>) {
    // expected-error @+1 {{inside a loop or branch is not supported on the GPU}}
    %s = tessel.sync_threads %o : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @y_dimension(%out: tensor<4xf32>) -> tensor<4xf32>
    attributes {tessel.num_threads = 4 : i64, tessel.num_blocks = 1 : i64} {
  // expected-error @+1 {{only the x dimension of the grid is used}}
  %th = gpu.thread_id y
  return %out : tensor<4xf32>
}
