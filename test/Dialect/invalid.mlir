// RUN: tessel-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{invalid indexing map: unknown variable 'd1', expected one of d0}}
#bad = #tessel.indexing_map<"(d0) -> (d1), domain: d0 in [0, 3]">

// -----

#m = #tessel.indexing_map<"(d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 3]">
func.func @apply_operands(%a: index) -> index {
  // expected-error @+1 {{'tessel.apply_indexing' op has 1 operands, but its map has 2 dims and 0 symbols (expected 2 operands)}}
  %r = tessel.apply_indexing #m(%a)
  return %r : index
}

// -----

#m = #tessel.indexing_map<"(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 3]">
func.func @loop_dims(%a: index, %b: index) {
  // expected-error @+1 {{'tessel.loop' op has 2 dim operands, but its map has 1 dims}}
  tessel.loop (%a, %b)[%s] -> (%r) in #m {
  }
  return
}

// -----

#m = #tessel.indexing_map<"(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 3]">
func.func @loop_results(%a: index) {
  // expected-error @+1 {{'tessel.loop' op body has 3 arguments, expected 2 (range variables, map results, iter_args)}}
  tessel.loop (%a)[%s] -> (%r, %q) in #m {
  }
  return
}

// -----

#m = #tessel.indexing_map<"(d0) -> (d0), domain: d0 in [0, 3]">
func.func @loop_yield(%a: index, %t: tensor<4xf32>) -> tensor<4xf32> {
  %r = tessel.loop (%a) -> (%i) in #m iter_args(%acc = %t) -> (tensor<4xf32>) {
    %c = arith.constant 0 : index
    // expected-error @+1 {{'tessel.yield' op yields 1 values whose types differ from the loop's results}}
    tessel.yield %c : index
  }
  return %r : tensor<4xf32>
}

// -----

func.func private @f(f32) -> f32
func.func @call_types(%x: f64) -> f64 {
  // expected-error @+1 {{'tessel.pure_call' op has type '(f64) -> f64' but @f has type '(f32) -> f32'}}
  %r = tessel.pure_call @f(%x) : (f64) -> f64
  return %r : f64
}

// -----

func.func @call_missing(%x: f32) -> f32 {
  // expected-error @+1 {{'tessel.pure_call' op calls 'g', which is not a function in this module}}
  %r = tessel.pure_call @g(%x) : (f32) -> f32
  return %r : f32
}
