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
