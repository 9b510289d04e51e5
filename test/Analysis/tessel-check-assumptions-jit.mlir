// A false promise, checked at run time: the kernel traps with the message.
// (stdbuf: the message goes to stdout, which abort would not flush.)
// RUN: tessel-opt %s --tessel-check-assumptions --canonicalize --tessel-lower-to-llvm \
// RUN:   | not --crash stdbuf -o0 mlir-cpu-runner -e main -entry-point-result=void 2>/dev/null \
// RUN:   | FileCheck %s
// CHECK: tpu.assume_multiple: %arg0 is not a multiple of 128 (at {{.*}}tessel-check-assumptions-jit.mlir:[[@LINE+2]]:8)
func.func @check(%i: index) {
  %j = tpu.assume_multiple %i, 128 : index
  return
}

// 256 keeps the promise; 100 breaks it.
func.func @main() {
  %c256 = arith.constant 256 : index
  %c100 = arith.constant 100 : index
  call @check(%c256) : (index) -> ()
  call @check(%c100) : (index) -> ()
  return
}
