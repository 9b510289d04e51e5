// RUN: tessel-opt %s -split-input-file -tessel-split-ragged-blocks | FileCheck %s

// A loop kernel of 4194300 elements in blocks of 4096 threads: the last
// block's threads past the end do nothing, and every thread tests it. The
// thread loop (marked tessel.threads by -tessel-lower-grid-to-cpu) is
// versioned: when the guard holds at thread 0 and at thread 4095 it holds
// for all (bl * 4096 + th rises with th), and the loop runs without it.
#th = #tessel.indexing_map<"(th_x, bl_x) -> (bl_x * 4096 + th_x), domain: th_x in [0, 4095], bl_x in [0, 1023]">
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: %[[IN:[^:]*]]: tensor<4194300xf32>, %[[OUT:[^:]*]]: tensor<4194300xf32>, %[[BL:[^:]*]]: index)
// CHECK-DAG: %[[LAST:.*]] = arith.constant 4194299 : index
// CHECK: %[[T0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[E0:.*]] = tessel.apply_indexing #{{.*}}(%[[T0]], %[[BL]])
// CHECK: arith.cmpi sle, %[[E0]], %[[LAST]]
// CHECK: %[[G0:.*]] = arith.andi
// CHECK: %[[T4095:.*]] = arith.constant 4095 : index
// CHECK-NEXT: %[[E1:.*]] = tessel.apply_indexing #{{.*}}(%[[T4095]], %[[BL]])
// CHECK: arith.cmpi sle, %[[E1]], %[[LAST]]
// CHECK: %[[G1:.*]] = arith.andi
// CHECK: %[[FULL:.*]] = arith.andi %[[G0]], %[[G1]]
// CHECK: %[[R:.*]] = scf.if %[[FULL]] -> (tensor<4194300xf32>) {
// CHECK:   %[[U:.*]] = scf.for %[[TH:.*]] = {{.*}} iter_args(%[[A:.*]] = %[[OUT]])
// CHECK-NOT: scf.if
// CHECK:     math.exp
// CHECK:     tensor.insert %{{.*}} into %[[A]]
// CHECK:   scf.yield %[[U]]
// CHECK: } else {
// CHECK:   %[[G:.*]] = scf.for
// CHECK:     scf.if
// CHECK:       math.exp
// CHECK:   scf.yield %[[G]]
// CHECK: return %[[R]]
// CHECK-NOT: tessel.threads
func.func @elementwise(%in: tensor<4194300xf32>, %out: tensor<4194300xf32>, %bl: index) -> tensor<4194300xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %last = arith.constant 4194299 : index
  %r = scf.for %t = %c0 to %c4096 step %c1 iter_args(%o = %out) -> (tensor<4194300xf32>) {
    %e = tessel.apply_indexing #th(%t, %bl)
    %lo = arith.cmpi sge, %e, %c0 : index
    %hi = arith.cmpi sle, %e, %last : index
    %in_range = arith.andi %lo, %hi : i1
    %w = scf.if %in_range -> (tensor<4194300xf32>) {
      %x = tensor.extract %in[%e] : tensor<4194300xf32>
      %y = math.exp %x : f32
      %u = tensor.insert %y into %o[%e] : tensor<4194300xf32>
      scf.yield %u : tensor<4194300xf32>
    } else {
      scf.yield %o : tensor<4194300xf32>
    }
    scf.yield %w : tensor<4194300xf32>
  } {tessel.threads}
  return %r : tensor<4194300xf32>
}

// -----

// A guard on (th mod 7) holds on no interval of threads: left alone.
#mod = #tessel.indexing_map<"(th_x, bl_x) -> (bl_x * 4096 + th_x mod 7), domain: th_x in [0, 4095], bl_x in [0, 1023]">
// CHECK-LABEL: func.func @not_an_interval(
// CHECK-NOT: scf.if %{{.*}} -> (tensor<4194300xf32>) {
// CHECK: scf.for
// CHECK: scf.if
func.func @not_an_interval(%in: tensor<4194300xf32>, %out: tensor<4194300xf32>, %bl: index) -> tensor<4194300xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %last = arith.constant 4194299 : index
  %r = scf.for %t = %c0 to %c4096 step %c1 iter_args(%o = %out) -> (tensor<4194300xf32>) {
    %e = tessel.apply_indexing #mod(%t, %bl)
    %hi = arith.cmpi sle, %e, %last : index
    %w = scf.if %hi -> (tensor<4194300xf32>) {
      %x = tensor.extract %in[%e] : tensor<4194300xf32>
      %u = tensor.insert %x into %o[%e] : tensor<4194300xf32>
      scf.yield %u : tensor<4194300xf32>
    } else {
      scf.yield %o : tensor<4194300xf32>
    }
    scf.yield %w : tensor<4194300xf32>
  } {tessel.threads}
  return %r : tensor<4194300xf32>
}

// -----

// A thread that reduces a row (here a loop over it) is left to LLVM as it
// was: without the guard its loop vectorizer took the threads, not the
// row. So is a loop without the mark.
#row = #tessel.indexing_map<"(th_x, bl_x) -> (bl_x * 64 + th_x), domain: th_x in [0, 63], bl_x in [0, 655]">
#th2 = #tessel.indexing_map<"(th_x, bl_x) -> (bl_x * 4096 + th_x), domain: th_x in [0, 4095], bl_x in [0, 1023]">
// CHECK-LABEL: func.func @row_sums(
// CHECK: scf.for
// CHECK: scf.if
// CHECK: scf.for
// CHECK-LABEL: func.func @unmarked(
// CHECK: scf.for
// CHECK: scf.if
func.func @row_sums(%in: tensor<4194300xf32>, %out: tensor<41943xf32>, %bl: index) -> tensor<41943xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %last = arith.constant 41942 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %t = %c0 to %c64 step %c1 iter_args(%o = %out) -> (tensor<41943xf32>) {
    %e = tessel.apply_indexing #row(%t, %bl)
    %hi = arith.cmpi sle, %e, %last : index
    %w = scf.if %hi -> (tensor<41943xf32>) {
      %s = scf.for %i = %c0 to %c100 step %c1 iter_args(%acc = %zero) -> (f32) {
        %base = arith.muli %e, %c100 : index
        %k = arith.addi %base, %i : index
        %x = tensor.extract %in[%k] : tensor<4194300xf32>
        %a = arith.addf %acc, %x : f32
        scf.yield %a : f32
      }
      %u = tensor.insert %s into %o[%e] : tensor<41943xf32>
      scf.yield %u : tensor<41943xf32>
    } else {
      scf.yield %o : tensor<41943xf32>
    }
    scf.yield %w : tensor<41943xf32>
  } {tessel.threads}
  return %r : tensor<41943xf32>
}
func.func @unmarked(%in: tensor<4194300xf32>, %out: tensor<4194300xf32>, %bl: index) -> tensor<4194300xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %last = arith.constant 4194299 : index
  %r = scf.for %t = %c0 to %c4096 step %c1 iter_args(%o = %out) -> (tensor<4194300xf32>) {
    %e = tessel.apply_indexing #th2(%t, %bl)
    %hi = arith.cmpi sle, %e, %last : index
    %w = scf.if %hi -> (tensor<4194300xf32>) {
      %x = tensor.extract %in[%e] : tensor<4194300xf32>
      %u = tensor.insert %x into %o[%e] : tensor<4194300xf32>
      scf.yield %u : tensor<4194300xf32>
    } else {
      scf.yield %o : tensor<4194300xf32>
    }
    scf.yield %w : tensor<4194300xf32>
  }
  return %r : tensor<4194300xf32>
}
