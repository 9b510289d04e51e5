// RUN: tessel-opt %s -split-input-file -tessel-lower-to-llvm -verify-diagnostics | FileCheck %s

// In a module of GPU kernels, the functions the CPU takes from the C
// library (and exp, log and pow, which PTX lacks) are libdevice's; f32 tanh
// stays MLIR's polynomial, as on the CPU. The kernel becomes an NVVM kernel.

// CHECK-DAG: llvm.func @__nv_sinf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_tanh(f64) -> f64
// CHECK-DAG: llvm.func @__nv_exp(f64) -> f64
// CHECK-DAG: llvm.func @__nv_powf(f32, f32) -> f32
// CHECK-LABEL: llvm.func @kernel(
// CHECK-SAME: %{{.*}}: f32, %{{.*}}: f64)
// CHECK-SAME: nvvm.kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 32, 1, 1>
// CHECK: llvm.call @__nv_sinf(%{{.*}}) : (f32) -> f32
// CHECK-NOT: llvm.call @__nv_tanhf
// CHECK: llvm.call @__nv_tanh(%{{.*}}) : (f64) -> f64
// CHECK: llvm.call @__nv_exp(%{{.*}}) : (f64) -> f64
// CHECK: llvm.call @__nv_powf(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
func.func @kernel(%x: f32, %y: f64) -> (f32, f32, f64, f64, f32)
    attributes {tessel.gpu_kernel, tessel.num_threads = 32 : i64, tessel.num_blocks = 1 : i64} {
  %s = math.sin %x : f32
  %t = math.tanh %x : f32
  %u = math.tanh %y : f64
  %e = math.exp %y : f64
  %p = math.powf %x, %x : f32
  return %s, %t, %u, %e, %p : f32, f32, f64, f64, f32
}

// -----

// What has neither a PTX instruction nor a libdevice function is refused.
func.func @kernel(%x: f32) -> f32
    attributes {tessel.gpu_kernel, tessel.num_threads = 32 : i64, tessel.num_blocks = 1 : i64} {
  // expected-error @+1 {{'math.sinh' op on 'f32' is not supported on the GPU}}
  %s = math.sinh %x : f32
  return %s : f32
}

// -----

// remainder is libdevice's exact fmod: NVPTX would expand frem as
// x - trunc(x / y) * y, wrong once x / y is inexact or overflows.
// CHECK-DAG: llvm.func @__nv_fmodf(f32, f32) -> f32
// CHECK-DAG: llvm.func @__nv_fmod(f64, f64) -> f64
// CHECK-LABEL: llvm.func @kernel(
// CHECK-NOT: llvm.frem
// CHECK: llvm.call @__nv_fmodf(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.call @__nv_fmod(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
func.func @kernel(%x: f32, %y: f64) -> (f32, f64)
    attributes {tessel.gpu_kernel, tessel.num_threads = 32 : i64, tessel.num_blocks = 1 : i64} {
  %r = arith.remf %x, %x : f32
  %s = arith.remf %y, %y : f64
  return %r, %s : f32, f64
}

// -----

// bf16 rounding on the GPU is LLVM's fptrunc (cvt.rn.bf16.f32 from sm_80),
// not the CPU's integer code: that code leaves out its NaN test after a
// product, which is right only where arithmetic keeps a NaN's payload (x86;
// PTX returns the canonical NaN 0x7fffffff, which the rounding bias would
// carry into -0). (A product of an f32 value: one of two bf16 values is a
// bf16 multiply, below.)
// CHECK-LABEL: llvm.func @kernel(
// CHECK: llvm.fmul
// CHECK-NOT: llvm.lshr
// CHECK: llvm.fptrunc %{{.*}} : f32 to bf16
// CHECK: llvm.bitcast %{{.*}} : bf16 to i16
func.func @kernel(%x: bf16, %y: f32) -> bf16
    attributes {tessel.gpu_kernel, tessel.num_threads = 32 : i64, tessel.num_blocks = 1 : i64} {
  %a = arith.extf %x : bf16 to f32
  %p = arith.mulf %a, %y : f32
  %t = arith.truncf %p : f32 to bf16
  return %t : bf16
}

// -----

// A product of two bf16 values rounded to bf16 is a bf16 multiply
// (mul.rn.bf16 from sm_90; the same bits: LowerToLlvm.cpp), on the values'
// bits (i16 in the llvm dialect) bitcast to bf16 and back; no widening, no
// rounding.
// CHECK-LABEL: llvm.func @kernel(
// CHECK: %[[A:.*]] = llvm.bitcast %{{.*}} : i16 to bf16
// CHECK: %[[B:.*]] = llvm.bitcast %{{.*}} : i16 to bf16
// CHECK: %[[P:.*]] = llvm.fmul %[[A]], %[[B]] : bf16
// CHECK-NOT: llvm.fptrunc
// CHECK: llvm.bitcast %[[P]] : bf16 to i16
func.func @kernel(%x: bf16, %y: bf16) -> bf16
    attributes {tessel.gpu_kernel, tessel.num_threads = 32 : i64, tessel.num_blocks = 1 : i64} {
  %a = arith.extf %x : bf16 to f32
  %b = arith.extf %y : bf16 to f32
  %p = arith.mulf %a, %b : f32
  %t = arith.truncf %p : f32 to bf16
  return %t : bf16
}

// -----

// A product by an f32 constant that bf16 holds exactly (0.75) is a bf16
// multiply; by one it does not (0.1), the product stays f32 and rounds.
// CHECK-LABEL: llvm.func @kernel(
// CHECK: llvm.fmul %{{.*}}, %{{.*}} : bf16
// CHECK: llvm.fmul %{{.*}}, %{{.*}} : f32
// CHECK: llvm.fptrunc %{{.*}} : f32 to bf16
func.func @kernel(%x: bf16) -> (bf16, bf16)
    attributes {tessel.gpu_kernel, tessel.num_threads = 32 : i64, tessel.num_blocks = 1 : i64} {
  %a = arith.extf %x : bf16 to f32
  %exact = arith.constant 0.75 : f32
  %p = arith.mulf %a, %exact : f32
  %t = arith.truncf %p : f32 to bf16
  %inexact = arith.constant 0.1 : f32
  %q = arith.mulf %a, %inexact : f32
  %u = arith.truncf %q : f32 to bf16
  return %t, %u : bf16, bf16
}

// -----

// Negation is an xor of the sign bit in inline PTX (neg.f32 may return
// another NaN); a bf16 negation as emitted, truncf(negf(extf x)), is an
// xor of x's 16 bits with no widening or rounding.
// CHECK-LABEL: llvm.func @kernel(
// CHECK-NOT: llvm.fneg
// CHECK: llvm.inline_asm "xor.b32 $0, $1, 0x80000000;", "=r,r"
// CHECK: llvm.inline_asm "xor.b16 $0, $1, 0x8000;", "=h,h"
// CHECK-NOT: llvm.fptrunc
func.func @kernel(%x: f32, %y: bf16) -> (f32, bf16)
    attributes {tessel.gpu_kernel, tessel.num_threads = 32 : i64, tessel.num_blocks = 1 : i64} {
  %n = arith.negf %x : f32
  %w = arith.extf %y : bf16 to f32
  %m = arith.negf %w : f32
  %t = arith.truncf %m : f32 to bf16
  return %n, %t : f32, bf16
}

// -----

// Integer maximum and minimum are a compare and a select in inline PTX:
// ptxas of CUDA 13.0 (sm_90) drops a negation when it fuses max.s32 of
// negated values into a three-input VIMNMX3.
// CHECK-LABEL: llvm.func @kernel(
// CHECK-NOT: llvm.intr.smax
// CHECK: llvm.inline_asm "{ .reg .pred p; setp.gt.s32 p, $1, $2; selp.b32 $0, $1, $2, p; }", "=r,r,r"
// CHECK: llvm.inline_asm "{ .reg .pred p; setp.lt.u16 p, $1, $2; selp.b16 $0, $1, $2, p; }", "=h,h,h"
// CHECK: llvm.inline_asm "{ .reg .pred p; setp.gt.u64 p, $1, $2; selp.b64 $0, $1, $2, p; }", "=l,l,l"
func.func @kernel(%x: i32, %y: i32, %a: i16, %b: i16, %c: i64, %d: i64) -> (i32, i16, i64)
    attributes {tessel.gpu_kernel, tessel.num_threads = 32 : i64, tessel.num_blocks = 1 : i64} {
  %n = arith.subi %x, %y : i32
  %m = arith.maxsi %x, %n : i32
  %u = arith.minui %a, %b : i16
  %v = arith.maxui %c, %d : i64
  return %m, %u, %v : i32, i16, i64
}
