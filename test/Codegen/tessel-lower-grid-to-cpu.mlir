// RUN: tessel-opt %s -tessel-lower-grid-to-cpu | FileCheck %s

// An entry function gets a block range; blocks and then threads become
// loops, the thread loop innermost, the output threaded through both.

// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: %[[IN:[^:]*]]: tensor<64xf32>, %[[OUT:[^:]*]]: tensor<64xf32>, %[[BEGIN:[^:]*]]: index, %[[END:[^:]*]]: index) -> tensor<64xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[R:.*]] = scf.for %[[BL:.*]] = %[[BEGIN]] to %[[END]] step %[[C1]] iter_args(%[[A:.*]] = %[[OUT]])
// CHECK:   %[[S:.*]] = scf.for %[[TH:.*]] = %[[C0]] to %[[C16]] step %[[C1]] iter_args(%[[B:.*]] = %[[A]])
// CHECK-NOT: gpu.
// CHECK:     tessel.apply_indexing #{{.*}}(%[[TH]], %[[BL]])
// CHECK:     tensor.insert %{{.*}} into %[[B]]
// CHECK:     scf.yield
// CHECK:   scf.yield %[[S]]
// CHECK: return %[[R]]
#map = #tessel.indexing_map<"(th_x, bl_x) -> (bl_x * 16 + th_x), domain: th_x in [0, 15], bl_x in [0, 3]">
func.func @kernel(%in: tensor<64xf32>, %out: tensor<64xf32>) -> tensor<64xf32>
    attributes {tessel.num_threads = 16 : i64, tessel.num_blocks = 4 : i64} {
  %th = gpu.thread_id x upper_bound 16
  %bl = gpu.block_id x upper_bound 4
  %i = tessel.apply_indexing #map(%th, %bl)
  %x = tensor.extract %in[%i] : tensor<64xf32>
  %u = tensor.insert %x into %out[%i] : tensor<64xf32>
  return %u : tensor<64xf32>
}

// A function without a launch configuration is left alone.
// CHECK-LABEL: func.func @helper(%{{.*}}: index) -> index
// CHECK-NEXT: return
func.func @helper(%i: index) -> index {
  return %i : index
}

// A barrier splits the threads into two loops; the shared tile stays in
// front of the block loop; an index both phases compute from the thread id
// is recomputed in the second.
// CHECK-LABEL: func.func @phases(
// CHECK: %[[TILE:.*]] = tessel.allocate_shared : tensor<4xf32>
// CHECK: scf.for %[[BL:.*]] = {{.*}} iter_args(%[[O:.*]] = %{{.*}})
// CHECK:   %[[T:.*]] = scf.for %[[TH1:.*]] = {{.*}} iter_args(%[[A:.*]] = %[[TILE]])
// CHECK:     tessel.apply_indexing #{{.*}}(%[[TH1]])
// CHECK:     tensor.insert %{{.*}} into %[[A]]
// CHECK:   %[[U:.*]] = scf.for %[[TH2:.*]] = {{.*}} iter_args(%[[B:.*]] = %[[O]])
// CHECK:     %[[J:.*]] = tessel.apply_indexing #{{.*}}(%[[TH2]])
// CHECK:     tensor.extract %[[T]][%[[J]]]
// CHECK:     tensor.insert %{{.*}} into %[[B]]
// CHECK:   scf.yield %[[U]]
// CHECK-NOT: tessel.sync_threads
#rev = #tessel.indexing_map<"(th_x) -> (3 - th_x), domain: th_x in [0, 3]">
func.func @phases(%in: tensor<4xf32>, %out: tensor<4xf32>) -> tensor<4xf32>
    attributes {tessel.num_threads = 4 : i64, tessel.num_blocks = 1 : i64} {
  %th = gpu.thread_id x upper_bound 4
  %tile = tessel.allocate_shared : tensor<4xf32>
  %j = tessel.apply_indexing #rev(%th)
  %x = tensor.extract %in[%th] : tensor<4xf32>
  %t = tensor.insert %x into %tile[%j] : tensor<4xf32>
  %s = tessel.sync_threads %t : tensor<4xf32>
  %y = tensor.extract %s[%j] : tensor<4xf32>
  %u = tensor.insert %y into %out[%th] : tensor<4xf32>
  return %u : tensor<4xf32>
}

// An index the second phase computes from one of the first's (cloned into
// the second) and the third reads again: the third recomputes both from
// its own thread id, the clone included.
// CHECK-LABEL: func.func @chained(
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %arg1)
// CHECK: scf.for %[[TH1:.*]] = {{.*}} iter_args
// CHECK:   tessel.apply_indexing #{{.*}}(%[[TH1]])
// CHECK: scf.for %[[TH2:.*]] = {{.*}} iter_args
// CHECK:   %[[J2:.*]] = tessel.apply_indexing #{{.*}}(%[[TH2]])
// CHECK:   tessel.apply_indexing #{{.*}}(%[[J2]])
// CHECK: scf.for %[[TH3:.*]] = {{.*}} iter_args
// CHECK:   %[[J3:.*]] = tessel.apply_indexing #{{.*}}(%[[TH3]])
// CHECK:   %[[K3:.*]] = tessel.apply_indexing #{{.*}}(%[[J3]])
// CHECK:   tensor.extract %{{.*}}[%[[K3]]]
#half = #tessel.indexing_map<"(th_x) -> (th_x floordiv 2), domain: th_x in [0, 3]">
func.func @chained(%in: tensor<4xf32>, %out: tensor<4xf32>) -> tensor<4xf32>
    attributes {tessel.num_threads = 4 : i64, tessel.num_blocks = 1 : i64} {
  %th = gpu.thread_id x upper_bound 4
  %tile = tessel.allocate_shared : tensor<4xf32>
  %tile2 = tessel.allocate_shared : tensor<4xf32>
  %j = tessel.apply_indexing #rev(%th)
  %x = tensor.extract %in[%j] : tensor<4xf32>
  %t = tensor.insert %x into %tile[%th] : tensor<4xf32>
  %s = tessel.sync_threads %t : tensor<4xf32>
  %k = tessel.apply_indexing #half(%j)
  %y = tensor.extract %s[%k] : tensor<4xf32>
  %t2 = tensor.insert %y into %tile2[%th] : tensor<4xf32>
  %s2 = tessel.sync_threads %t2 : tensor<4xf32>
  %z = tensor.extract %s2[%k] : tensor<4xf32>
  %u = tensor.insert %z into %out[%th] : tensor<4xf32>
  return %u : tensor<4xf32>
}

// A loop marked tessel.uniform (every thread runs the same iterations: the
// rows of a column reduction) stays outside, with the threads inside it.
// CHECK-LABEL: func.func @uniform(
// CHECK: %[[TILE:.*]] = tessel.allocate_shared : tensor<4xf32>
// CHECK: scf.for %[[BL:.*]] = {{.*}} iter_args(%[[O:.*]] = %{{.*}})
// CHECK:   %[[INIT:.*]] = scf.for %[[TH1:.*]] = {{.*}} iter_args(%[[A:.*]] = %[[TILE]])
// CHECK:   %[[ROWS:.*]] = scf.for %[[ROW:.*]] = {{.*}} iter_args(%[[T:.*]] = %[[INIT]])
// CHECK:     %[[STEP:.*]] = scf.for %[[TH2:.*]] = {{.*}} iter_args(%[[T2:.*]] = %[[T]])
// CHECK:       tensor.extract %{{.*}}[%[[ROW]], %[[TH2]]]
// CHECK:       tensor.insert %{{.*}} into %[[T2]][%[[TH2]]]
// CHECK:     scf.yield %[[STEP]]
// CHECK:   scf.for %[[TH3:.*]] = {{.*}} iter_args(%[[B:.*]] = %[[O]])
// CHECK:     tensor.extract %[[ROWS]][%[[TH3]]]
// CHECK-NOT: tessel.sync_threads
func.func @uniform(%in: tensor<8x4xf32>, %out: tensor<4xf32>) -> tensor<4xf32>
    attributes {tessel.num_threads = 4 : i64, tessel.num_blocks = 1 : i64} {
  %th = gpu.thread_id x upper_bound 4
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %tile = tessel.allocate_shared : tensor<4xf32>
  %t0 = tensor.insert %zero into %tile[%th] : tensor<4xf32>
  %s0 = tessel.sync_threads %t0 : tensor<4xf32>
  %sum = scf.for %row = %c0 to %c8 step %c1 iter_args(%t = %s0) -> (tensor<4xf32>) {
    %x = tensor.extract %in[%row, %th] : tensor<8x4xf32>
    %a = tensor.extract %t[%th] : tensor<4xf32>
    %n = arith.addf %a, %x : f32
    %u = tensor.insert %n into %t[%th] : tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  } {tessel.uniform}
  %s1 = tessel.sync_threads %sum : tensor<4xf32>
  %y = tensor.extract %s1[%th] : tensor<4xf32>
  %v = tensor.insert %y into %out[%th] : tensor<4xf32>
  return %v : tensor<4xf32>
}

// With barriers and a multiple of 32 threads (warps on the GPU), each
// phase's threads run as warps around their 32 lanes, th = w * 32 + l, and
// the maps that read th read w and l instead: the tile's rows are linear in
// the lane loop, which LLVM vectorizes.
// RUN: tessel-opt %s -tessel-lower-grid-to-cpu | FileCheck %s --check-prefix=MAPS
// MAPS-DAG: #tessel.indexing_map<"(d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 31]">
// MAPS-DAG: #tessel.indexing_map<"(d0, d1) -> (d1, d0), domain: d0 in [0, 1], d1 in [0, 31]">
// CHECK-LABEL: func.func @warps(
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: scf.for %[[BL:.*]] =
// CHECK:   %[[T:.*]] = scf.for %[[W:.*]] = %{{.*}} to %[[C2]]
// CHECK:     scf.for %[[L:.*]] = %{{.*}} to %[[C32]]
// CHECK:       tessel.apply_indexing #{{.*}}(%[[W]], %[[L]])
// CHECK:   scf.for %[[W2:.*]] = %{{.*}} to %[[C2]]
// CHECK:     scf.for %[[L2:.*]] = %{{.*}} to %[[C32]]
// CHECK:       tessel.apply_indexing #{{.*}}(%[[W2]], %[[L2]])
// CHECK-NOT: tessel.sync_threads
#rowcol = #tessel.indexing_map<"(th_x) -> (th_x floordiv 32, th_x mod 32), domain: th_x in [0, 63]">
#colrow = #tessel.indexing_map<"(th_x) -> (th_x mod 32, th_x floordiv 32), domain: th_x in [0, 63]">
func.func @warps(%in: tensor<2x32xf32>, %out: tensor<32x2xf32>) -> tensor<32x2xf32>
    attributes {tessel.num_threads = 64 : i64, tessel.num_blocks = 1 : i64} {
  %th = gpu.thread_id x upper_bound 64
  %tile = tessel.allocate_shared : tensor<2x32xf32>
  %r, %c = tessel.apply_indexing #rowcol(%th)
  %x = tensor.extract %in[%r, %c] : tensor<2x32xf32>
  %t = tensor.insert %x into %tile[%r, %c] : tensor<2x32xf32>
  %s = tessel.sync_threads %t : tensor<2x32xf32>
  %i, %j = tessel.apply_indexing #colrow(%th)
  %y = tensor.extract %s[%j, %i] : tensor<2x32xf32>
  %u = tensor.insert %y into %out[%i, %j] : tensor<32x2xf32>
  return %u : tensor<32x2xf32>
}

// A phase that is one scf.if on th <= 1 (a map with fewer threads than the
// launch, as the transpose emitter's squares) loops over threads 0 and 1
// only; a phase that every thread works in keeps all 8.
// CHECK-LABEL: func.func @guarded(
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[BL:.*]] =
// CHECK:   %[[T:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C8]]
// CHECK:   %[[C2:.*]] = arith.constant 2 : index
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[C2]]
// CHECK:     scf.if
func.func @guarded(%in: tensor<8xf32>, %out: tensor<8xf32>) -> tensor<8xf32>
    attributes {tessel.num_threads = 8 : i64, tessel.num_blocks = 1 : i64} {
  %th = gpu.thread_id x upper_bound 8
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tile = tessel.allocate_shared : tensor<8xf32>
  %x = tensor.extract %in[%th] : tensor<8xf32>
  %t = tensor.insert %x into %tile[%th] : tensor<8xf32>
  %s = tessel.sync_threads %t : tensor<8xf32>
  %low = arith.cmpi sge, %th, %c0 : index
  %high = arith.cmpi sle, %th, %c1 : index
  %in_range = arith.andi %low, %high : i1
  %u = scf.if %in_range -> (tensor<8xf32>) {
    %y = tensor.extract %s[%th] : tensor<8xf32>
    %v = tensor.insert %y into %out[%th] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  } else {
    scf.yield %out : tensor<8xf32>
  }
  return %u : tensor<8xf32>
}

// The else branch does work too (every thread writes): all 8 threads.
// CHECK-LABEL: func.func @else_works(
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK-NOT: arith.constant 2 : index
// CHECK: scf.for %[[BL:.*]] =
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[C8]] step
// CHECK:     scf.if
func.func @else_works(%in: tensor<8xf32>, %out: tensor<8xf32>) -> tensor<8xf32>
    attributes {tessel.num_threads = 8 : i64, tessel.num_blocks = 1 : i64} {
  %th = gpu.thread_id x upper_bound 8
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %low = arith.cmpi sle, %th, %c1 : index
  %u = scf.if %low -> (tensor<8xf32>) {
    %y = tensor.extract %in[%th] : tensor<8xf32>
    %v = tensor.insert %y into %out[%th] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  } else {
    %v = tensor.insert %zero into %out[%th] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  }
  return %u : tensor<8xf32>
}

// A phase of two guards (two unrolled passes of one map, as the transpose
// emitter's reading phase), on th <= 1 and th <= 2: threads 0..2.
// CHECK-LABEL: func.func @two_guards(
// CHECK: scf.for %[[BL:.*]] =
// CHECK:   %[[C3:.*]] = arith.constant 3 : index
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[C3]]
// CHECK-COUNT-2: scf.if
func.func @two_guards(%in: tensor<8xf32>, %out: tensor<8xf32>) -> tensor<8xf32>
    attributes {tessel.num_threads = 8 : i64, tessel.num_blocks = 1 : i64} {
  %th = gpu.thread_id x upper_bound 8
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %first = arith.cmpi sle, %th, %c1 : index
  %u = scf.if %first -> (tensor<8xf32>) {
    %y = tensor.extract %in[%th] : tensor<8xf32>
    %v = tensor.insert %y into %out[%th] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  } else {
    scf.yield %out : tensor<8xf32>
  }
  %second = arith.cmpi sle, %th, %c2 : index
  %w = scf.if %second -> (tensor<8xf32>) {
    %at = arith.addi %th, %c4 : index
    %y = tensor.extract %in[%at] : tensor<8xf32>
    %v = tensor.insert %y into %u[%at] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  } else {
    scf.yield %u : tensor<8xf32>
  }
  return %w : tensor<8xf32>
}

// One of the guards bounds the block, not the thread id: all 8 threads.
// CHECK-LABEL: func.func @one_guard_unbounded(
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[BL:.*]] =
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[C8]] step
func.func @one_guard_unbounded(%in: tensor<8xf32>, %out: tensor<8xf32>) -> tensor<8xf32>
    attributes {tessel.num_threads = 8 : i64, tessel.num_blocks = 2 : i64} {
  %th = gpu.thread_id x upper_bound 8
  %bl = gpu.block_id x upper_bound 2
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %flag = arith.cmpi sle, %bl, %c0 : index
  %first = arith.cmpi sle, %th, %c1 : index
  %u = scf.if %first -> (tensor<8xf32>) {
    %y = tensor.extract %in[%th] : tensor<8xf32>
    %v = tensor.insert %y into %out[%th] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  } else {
    scf.yield %out : tensor<8xf32>
  }
  %w = scf.if %flag -> (tensor<8xf32>) {
    %y = tensor.extract %in[%th] : tensor<8xf32>
    %v = tensor.insert %y into %u[%th] : tensor<8xf32>
    scf.yield %v : tensor<8xf32>
  } else {
    scf.yield %u : tensor<8xf32>
  }
  return %w : tensor<8xf32>
}
