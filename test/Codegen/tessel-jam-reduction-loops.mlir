// RUN: tessel-opt %s -tessel-vectorize-partials -tessel-jam-reduction-loops | FileCheck %s

// A thread loop of 8 threads, each reducing a row of 64: 4 threads a step,
// their ids and row indices computed first, one row loop carrying the 4
// accumulators (each thread's own loads and maxima, in thread order), then
// the 4 inserts, each into what the one before it yielded.
// CHECK-LABEL: func.func @rows(
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[TH:.*]] = %{{.*}} to %{{.*}} step %[[C4]] iter_args(%[[O:.*]] = %{{.*}})
// CHECK:   %[[T1:.*]] = arith.addi %[[TH]], %{{.*}}
// CHECK:   %[[T2:.*]] = arith.addi %[[TH]], %{{.*}}
// CHECK:   %[[T3:.*]] = arith.addi %[[TH]], %{{.*}}
// CHECK:   %[[R0:.*]] = arith.muli %[[TH]], %{{.*}}
// CHECK:   %[[R1:.*]] = arith.muli %[[T1]], %{{.*}}
// CHECK:   %[[R2:.*]] = arith.muli %[[T2]], %{{.*}}
// CHECK:   %[[R3:.*]] = arith.muli %[[T3]], %{{.*}}
// CHECK:   %[[M:.*]]:4 = scf.for %[[I:.*]] = {{.*}} iter_args(%[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}}, %[[A2:.*]] = %{{.*}}, %[[A3:.*]] = %{{.*}}) -> (f32, f32, f32, f32)
// CHECK:     arith.addi %[[R0]], %[[I]]
// CHECK:     %[[X0:.*]] = tensor.extract
// CHECK:     %[[Y0:.*]] = arith.maximumf %[[A0]], %[[X0]]
// CHECK:     arith.addi %[[R1]], %[[I]]
// CHECK:     %[[X1:.*]] = tensor.extract
// CHECK:     %[[Y1:.*]] = arith.maximumf %[[A1]], %[[X1]]
// CHECK:     arith.addi %[[R2]], %[[I]]
// CHECK:     %[[Y2:.*]] = arith.maximumf %[[A2]]
// CHECK:     arith.addi %[[R3]], %[[I]]
// CHECK:     %[[Y3:.*]] = arith.maximumf %[[A3]]
// CHECK:     scf.yield %[[Y0]], %[[Y1]], %[[Y2]], %[[Y3]]
// CHECK:   %[[U0:.*]] = tensor.insert %[[M]]#0 into %[[O]][%[[TH]]]
// CHECK:   %[[U1:.*]] = tensor.insert %[[M]]#1 into %[[U0]][%[[T1]]]
// CHECK:   %[[U2:.*]] = tensor.insert %[[M]]#2 into %[[U1]][%[[T2]]]
// CHECK:   %[[U3:.*]] = tensor.insert %[[M]]#3 into %[[U2]][%[[T3]]]
// CHECK:   scf.yield %[[U3]]
// CHECK-NOT: scf.for
func.func @rows(%in: tensor<512xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %ninf = arith.constant 0xFF800000 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %row = arith.muli %th, %c64 : index
    %m = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %ninf) -> (f32) {
      %k = arith.addi %row, %i : index
      %x = tensor.extract %in[%k] : tensor<512xf32>
      %y = arith.maximumf %acc, %x : f32
      scf.yield %y : f32
    }
    %u = tensor.insert %m into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// 6 threads: 2 at a time.
// CHECK-LABEL: func.func @pairs(
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: scf.for %{{.*}} step %[[C2]]
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK-COUNT-2: tensor.insert
// CHECK-NOT: tensor.insert
func.func @pairs(%in: tensor<384xf32>, %out: tensor<6xf32>) -> tensor<6xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c6 step %c1 iter_args(%o = %out) -> (tensor<6xf32>) {
    %row = arith.muli %th, %c64 : index
    %m = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %k = arith.addi %row, %i : index
      %x = tensor.extract %in[%k] : tensor<384xf32>
      %y = arith.addf %acc, %x : f32
      scf.yield %y : f32
    }
    %u = tensor.insert %m into %o[%th] : tensor<6xf32>
    scf.yield %u : tensor<6xf32>
  }
  return %r : tensor<6xf32>
}

// A thread behind a bounds check (the loop emitter's, where the launch has
// more threads than rows): the 4 threads' tests, then the jammed rows when
// all 4 are in bounds, else each thread's original check and work in turn.
// CHECK-LABEL: func.func @guarded(
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[TH:.*]] = %{{.*}} to %{{.*}} step %[[C4]] iter_args(%[[O:.*]] = %{{.*}})
// CHECK:   %[[T1:.*]] = arith.addi %[[TH]]
// CHECK:   %[[T2:.*]] = arith.addi %[[TH]]
// CHECK:   %[[T3:.*]] = arith.addi %[[TH]]
// CHECK:   %[[B0:.*]] = arith.cmpi ult, %[[TH]]
// CHECK:   %[[B1:.*]] = arith.cmpi ult, %[[T1]]
// CHECK:   %[[B2:.*]] = arith.cmpi ult, %[[T2]]
// CHECK:   %[[B3:.*]] = arith.cmpi ult, %[[T3]]
// CHECK:   %[[A1:.*]] = arith.andi %[[B0]], %[[B1]]
// CHECK:   %[[A2:.*]] = arith.andi %[[A1]], %[[B2]]
// CHECK:   %[[A3:.*]] = arith.andi %[[A2]], %[[B3]]
// CHECK:   %[[R:.*]] = scf.if %[[A3]]
// CHECK:     scf.for {{.*}} -> (f32, f32, f32, f32)
// CHECK-COUNT-4: tensor.insert
// CHECK:   } else {
// CHECK:     %[[G0:.*]] = scf.if %[[B0]]
// CHECK:       scf.for {{.*}} -> (f32) {
// CHECK:       tensor.insert %{{.*}} into %[[O]]
// CHECK:     } else {
// CHECK:       scf.yield %[[O]]
// CHECK:     %[[G1:.*]] = scf.if %[[B1]]
// CHECK:       tensor.insert %{{.*}} into %[[G0]]
// CHECK:     } else {
// CHECK:       scf.yield %[[G0]]
// CHECK:     %[[G2:.*]] = scf.if %[[B2]]
// CHECK:     %[[G3:.*]] = scf.if %[[B3]]
// CHECK:     scf.yield %[[G3]]
// CHECK:   scf.yield %[[R]]
func.func @guarded(%in: tensor<448xf32>, %out: tensor<7xf32>) -> tensor<7xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<7xf32>) {
    %in_bounds = arith.cmpi ult, %th, %c7 : index
    %g = scf.if %in_bounds -> (tensor<7xf32>) {
      %row = arith.muli %th, %c64 : index
      %m = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
        %k = arith.addi %row, %i : index
        %x = tensor.extract %in[%k] : tensor<448xf32>
        %y = arith.addf %acc, %x : f32
        scf.yield %y : f32
      }
      %u = tensor.insert %m into %o[%th] : tensor<7xf32>
      scf.yield %u : tensor<7xf32>
    } else {
      scf.yield %o : tensor<7xf32>
    }
    scf.yield %g : tensor<7xf32>
  }
  return %r : tensor<7xf32>
}

// Left alone: 7 threads (no factor divides them), a sum over a row of 16
// (short), a row loop that reads the thread loop's iteration argument, one
// that carries 4 values, and one with a loop inside.
// CHECK-LABEL: func.func @odd(
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: scf.for {{.*}} -> (f32) {
// CHECK-COUNT-1: tensor.insert
// CHECK-NOT: tensor.insert
// CHECK: return
func.func @odd(%in: tensor<448xf32>, %out: tensor<7xf32>) -> tensor<7xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c7 step %c1 iter_args(%o = %out) -> (tensor<7xf32>) {
    %row = arith.muli %th, %c64 : index
    %m = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %k = arith.addi %row, %i : index
      %x = tensor.extract %in[%k] : tensor<448xf32>
      %y = arith.addf %acc, %x : f32
      scf.yield %y : f32
    }
    %u = tensor.insert %m into %o[%th] : tensor<7xf32>
    scf.yield %u : tensor<7xf32>
  }
  return %r : tensor<7xf32>
}

// CHECK-LABEL: func.func @short(
// CHECK: arith.constant 1 : index
// CHECK-NOT: arith.constant 4 : index
// CHECK-COUNT-1: tensor.insert
// CHECK-NOT: tensor.insert
// CHECK: return
func.func @short(%in: tensor<128xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %row = arith.muli %th, %c16 : index
    %m = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
      %k = arith.addi %row, %i : index
      %x = tensor.extract %in[%k] : tensor<128xf32>
      %y = arith.addf %acc, %x : f32
      scf.yield %y : f32
    }
    %u = tensor.insert %m into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// A max over rows of 16 is jammed (LLVM does not vectorize the threads of
// a bf16 max: 14 ms alone, 4.8 jammed for 8 MiB), and so is a sum over
// rows of 24; a max over rows of 8 is not.
// CHECK-LABEL: func.func @short_max(
// CHECK: arith.constant 4 : index
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-COUNT-4: tensor.insert
// CHECK-LABEL: func.func @short_sum_24(
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-COUNT-4: tensor.insert
// CHECK-LABEL: func.func @too_short_max(
// CHECK-NOT: arith.constant 4 : index
// CHECK-COUNT-1: tensor.insert
// CHECK-NOT: tensor.insert
// CHECK: return
func.func @short_max(%in: tensor<128xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %init = arith.constant 0xFF800000 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %row = arith.muli %th, %c16 : index
    %m = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %init) -> (f32) {
      %k = arith.addi %row, %i : index
      %x = tensor.extract %in[%k] : tensor<128xf32>
      %y = arith.maximumf %acc, %x : f32
      scf.yield %y : f32
    }
    %u = tensor.insert %m into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
func.func @short_sum_24(%in: tensor<192xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c24 = arith.constant 24 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %row = arith.muli %th, %c24 : index
    %m = scf.for %i = %c0 to %c24 step %c1 iter_args(%acc = %zero) -> (f32) {
      %k = arith.addi %row, %i : index
      %x = tensor.extract %in[%k] : tensor<192xf32>
      %y = arith.addf %acc, %x : f32
      scf.yield %y : f32
    }
    %u = tensor.insert %m into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
func.func @too_short_max(%in: tensor<64xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %init = arith.constant 0xFF800000 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %row = arith.muli %th, %c8 : index
    %m = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (f32) {
      %k = arith.addi %row, %i : index
      %x = tensor.extract %in[%k] : tensor<64xf32>
      %y = arith.maximumf %acc, %x : f32
      scf.yield %y : f32
    }
    %u = tensor.insert %m into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// The row loop reads the output as it is so far: the threads stay in order.
// CHECK-LABEL: func.func @reads_output(
// CHECK-NOT: arith.constant 4 : index
// CHECK-COUNT-1: tensor.insert
// CHECK-NOT: tensor.insert
// CHECK: return
func.func @reads_output(%in: tensor<512xf32>, %out: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<64xf32>) {
    %row = arith.muli %th, %c64 : index
    %m = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = tensor.extract %o[%i] : tensor<64xf32>
      %y = arith.addf %acc, %x : f32
      scf.yield %y : f32
    }
    %u = tensor.insert %m into %o[%th] : tensor<64xf32>
    scf.yield %u : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// CHECK-LABEL: func.func @four(
// CHECK-NOT: arith.constant 4 : index
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32)
// CHECK: return
func.func @four(%in: tensor<512xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %row = arith.muli %th, %c64 : index
    %m:4 = scf.for %i = %c0 to %c64 step %c1 iter_args(%a = %zero, %b = %zero, %c = %zero, %d = %zero) -> (f32, f32, f32, f32) {
      %k = arith.addi %row, %i : index
      %x = tensor.extract %in[%k] : tensor<512xf32>
      %y = arith.addf %a, %x : f32
      scf.yield %y, %a, %b, %c : f32, f32, f32, f32
    }
    %s = arith.addf %m#0, %m#2 : f32
    %u = tensor.insert %s into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @nested(
// CHECK-NOT: arith.constant 4 : index
// CHECK: return
func.func @nested(%in: tensor<512xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %row = arith.muli %th, %c64 : index
    %m = scf.for %i = %c0 to %c64 step %c2 iter_args(%acc = %zero) -> (f32) {
      %n = scf.for %j = %c0 to %c2 step %c1 iter_args(%b = %acc) -> (f32) {
        %k0 = arith.addi %row, %i : index
        %k = arith.addi %k0, %j : index
        %x = tensor.extract %in[%k] : tensor<512xf32>
        %y = arith.addf %b, %x : f32
        scf.yield %y : f32
      }
      scf.yield %n : f32
    }
    %u = tensor.insert %m into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// The loop emitter's row sums (made vectors by -tessel-vectorize-partials
// first): lane k of the partial sums adds the elements
// at k, 4 + k, 8 + k, ... of the row. The lanes become one vector<4xf32>
// (one vector read at lane 0's offset, one vector add, the accumulator
// first as before), then 4 rows are jammed: one loop carrying 4 vectors,
// and each row's lanes taken out after it.
#rowmap = #tessel.indexing_map<"(d0, d1) -> (d0 * 128 + d1), domain: d0 in [0, 7], d1 in [0, 127]">
// CHECK-LABEL: func.func @lanes(
// CHECK: scf.for %{{.*}} step %{{.*}} iter_args(%[[O:.*]] = %{{.*}})
// CHECK:   %[[S:.*]]:4 = scf.for %[[I:.*]] = {{.*}} iter_args(%[[V0:.*]] = %{{.*}}, %[[V1:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK:     %[[X0:.*]] = vector.transfer_read %{{.*}} {in_bounds = [true]} : tensor<1024xf32>, vector<4xf32>
// CHECK:     %[[Y0:.*]] = arith.addf %[[V0]], %[[X0]] : vector<4xf32>
// CHECK:     %[[X1:.*]] = vector.transfer_read
// CHECK:     %[[Y1:.*]] = arith.addf %[[V1]], %[[X1]] : vector<4xf32>
// CHECK-COUNT-2: vector.transfer_read
// CHECK:     scf.yield %[[Y0]], %[[Y1]],
// CHECK-COUNT-4: vector.extract %[[S]]#0
// CHECK-COUNT-4: tensor.insert
// CHECK-NOT: tensor.insert
func.func @lanes(%in: tensor<1024xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %s:4 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero) -> (f32, f32, f32, f32) {
      %j = arith.muli %i, %c4 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j)
      %x0 = tensor.extract %in[%k0] : tensor<1024xf32>
      %y0 = arith.addf %a0, %x0 : f32
      %j1 = arith.addi %j, %c1 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xf32>
      %y1 = arith.addf %a1, %x1 : f32
      %j2 = arith.addi %j, %c2 : index
      %k2 = tessel.apply_indexing #rowmap(%th, %j2)
      %x2 = tensor.extract %in[%k2] : tensor<1024xf32>
      %y2 = arith.addf %a2, %x2 : f32
      %j3 = arith.addi %j, %c3 : index
      %k3 = tessel.apply_indexing #rowmap(%th, %j3)
      %x3 = tensor.extract %in[%k3] : tensor<1024xf32>
      %y3 = arith.addf %a3, %x3 : f32
      scf.yield %y0, %y1, %y2, %y3 : f32, f32, f32, f32
    }
    %t0 = arith.addf %s#0, %s#1 : f32
    %t1 = arith.addf %s#2, %s#3 : f32
    %t = arith.addf %t0, %t1 : f32
    %u = tensor.insert %t into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// Lanes left scalar (and so rows not jammed): lane 1 two elements past
// lane 0, a map not linear in the lane's offset, the accumulator second in
// one lane only.
#modmap = #tessel.indexing_map<"(d0, d1) -> (d0 * 128 + d1 mod 64), domain: d0 in [0, 7], d1 in [0, 127]">
// CHECK-LABEL: func.func @not_lanes(
// CHECK-NOT: vector.transfer_read
// CHECK: scf.for {{.*}} -> (f32, f32) {
// CHECK-NOT: vector.transfer_read
// CHECK: scf.for {{.*}} -> (f32, f32) {
// CHECK-NOT: vector.transfer_read
// CHECK: scf.for {{.*}} -> (f32, f32) {
// CHECK-NOT: vector
func.func @not_lanes(%in: tensor<1024xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %s:2 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %zero, %a1 = %zero) -> (f32, f32) {
      %j = arith.muli %i, %c2 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j)
      %x0 = tensor.extract %in[%k0] : tensor<1024xf32>
      %y0 = arith.addf %a0, %x0 : f32
      %j1 = arith.addi %j, %c2 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xf32>
      %y1 = arith.addf %a1, %x1 : f32
      scf.yield %y0, %y1 : f32, f32
    }
    %m:2 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %zero, %a1 = %zero) -> (f32, f32) {
      %j = arith.muli %i, %c2 : index
      %k0 = tessel.apply_indexing #modmap(%th, %j)
      %x0 = tensor.extract %in[%k0] : tensor<1024xf32>
      %y0 = arith.addf %a0, %x0 : f32
      %j1 = arith.addi %j, %c1 : index
      %k1 = tessel.apply_indexing #modmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xf32>
      %y1 = arith.addf %a1, %x1 : f32
      scf.yield %y0, %y1 : f32, f32
    }
    %n:2 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %zero, %a1 = %zero) -> (f32, f32) {
      %j = arith.muli %i, %c2 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j)
      %x0 = tensor.extract %in[%k0] : tensor<1024xf32>
      %y0 = arith.addf %a0, %x0 : f32
      %j1 = arith.addi %j, %c1 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xf32>
      %y1 = arith.addf %x1, %a1 : f32
      scf.yield %y0, %y1 : f32, f32
    }
    %t = arith.addf %s#0, %m#1 : f32
    %t2 = arith.addf %t, %n#0 : f32
    %u = tensor.insert %t2 into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// A lane computed from what it reads (layer norm's sum of squares, of bf16
// widened to f32): lane 0's ops again on vectors, the value all lanes
// share (the mean) splat, lane k's scalar reads left dead.
// CHECK-LABEL: func.func @computed_lanes(
// CHECK: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK:   %[[R:.*]] = vector.transfer_read %{{.*}} : tensor<1024xbf16>, vector<4xbf16>
// CHECK:   %[[W:.*]] = arith.extf %[[R]] : vector<4xbf16> to vector<4xf32>
// CHECK:   %[[M:.*]] = vector.splat %{{.*}} : vector<4xf32>
// CHECK:   %[[C:.*]] = arith.subf %[[W]], %[[M]] : vector<4xf32>
// CHECK:   %[[Q:.*]] = arith.mulf %[[C]], %[[C]] : vector<4xf32>
// CHECK:   arith.addf %{{.*}}, %[[Q]] : vector<4xf32>
func.func @computed_lanes(%in: tensor<1024xbf16>, %mean: tensor<8xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %m = tensor.extract %mean[%th] : tensor<8xf32>
    %s:4 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero) -> (f32, f32, f32, f32) {
      %j = arith.muli %i, %c4 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j)
      %x0 = tensor.extract %in[%k0] : tensor<1024xbf16>
      %w0 = arith.extf %x0 : bf16 to f32
      %d0 = arith.subf %w0, %m : f32
      %q0 = arith.mulf %d0, %d0 : f32
      %y0 = arith.addf %a0, %q0 : f32
      %j1 = arith.addi %j, %c1 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xbf16>
      %w1 = arith.extf %x1 : bf16 to f32
      %d1 = arith.subf %w1, %m : f32
      %q1 = arith.mulf %d1, %d1 : f32
      %y1 = arith.addf %a1, %q1 : f32
      %j2 = arith.addi %j, %c2 : index
      %k2 = tessel.apply_indexing #rowmap(%th, %j2)
      %x2 = tensor.extract %in[%k2] : tensor<1024xbf16>
      %w2 = arith.extf %x2 : bf16 to f32
      %d2 = arith.subf %w2, %m : f32
      %q2 = arith.mulf %d2, %d2 : f32
      %y2 = arith.addf %a2, %q2 : f32
      %j3 = arith.addi %j, %c3 : index
      %k3 = tessel.apply_indexing #rowmap(%th, %j3)
      %x3 = tensor.extract %in[%k3] : tensor<1024xbf16>
      %w3 = arith.extf %x3 : bf16 to f32
      %d3 = arith.subf %w3, %m : f32
      %q3 = arith.mulf %d3, %d3 : f32
      %y3 = arith.addf %a3, %q3 : f32
      scf.yield %y0, %y1, %y2, %y3 : f32, f32, f32, f32
    }
    %t0 = arith.addf %s#0, %s#1 : f32
    %t1 = arith.addf %s#2, %s#3 : f32
    %t = arith.addf %t0, %t1 : f32
    %u = tensor.insert %t into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// Left scalar: an exp in the lanes (its approximation is lowered for
// scalars), and lanes that mix up their reads (lane 1 multiplies by lane
// 0's element, which is no value the lanes share).
// CHECK-LABEL: func.func @mismatched_lanes(
// CHECK-NOT: vector
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-NOT: vector
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-NOT: vector
func.func @mismatched_lanes(%in: tensor<1024xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf32>) {
    %s:4 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero) -> (f32, f32, f32, f32) {
      %j0 = arith.muli %i, %c4 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j0)
      %x0 = tensor.extract %in[%k0] : tensor<1024xf32>
      %q0 = math.exp %x0 : f32
      %y0 = arith.addf %a0, %q0 : f32
      %j1 = arith.addi %j0, %c1 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xf32>
      %q1 = math.exp %x1 : f32
      %y1 = arith.addf %a1, %q1 : f32
      %j2 = arith.addi %j0, %c2 : index
      %k2 = tessel.apply_indexing #rowmap(%th, %j2)
      %x2 = tensor.extract %in[%k2] : tensor<1024xf32>
      %q2 = math.exp %x2 : f32
      %y2 = arith.addf %a2, %q2 : f32
      %j3 = arith.addi %j0, %c3 : index
      %k3 = tessel.apply_indexing #rowmap(%th, %j3)
      %x3 = tensor.extract %in[%k3] : tensor<1024xf32>
      %q3 = math.exp %x3 : f32
      %y3 = arith.addf %a3, %q3 : f32
      scf.yield %y0, %y1, %y2, %y3 : f32, f32, f32, f32
    }
    %n:4 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero) -> (f32, f32, f32, f32) {
      %j0 = arith.muli %i, %c4 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j0)
      %x0 = tensor.extract %in[%k0] : tensor<1024xf32>
      %q0 = arith.mulf %x0, %x0 : f32
      %y0 = arith.addf %a0, %q0 : f32
      %j1 = arith.addi %j0, %c1 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xf32>
      %q1 = arith.mulf %x1, %x0 : f32
      %y1 = arith.addf %a1, %q1 : f32
      %j2 = arith.addi %j0, %c2 : index
      %k2 = tessel.apply_indexing #rowmap(%th, %j2)
      %x2 = tensor.extract %in[%k2] : tensor<1024xf32>
      %q2 = arith.mulf %x2, %x2 : f32
      %y2 = arith.addf %a2, %q2 : f32
      %j3 = arith.addi %j0, %c3 : index
      %k3 = tessel.apply_indexing #rowmap(%th, %j3)
      %x3 = tensor.extract %in[%k3] : tensor<1024xf32>
      %q3 = arith.mulf %x3, %x3 : f32
      %y3 = arith.addf %a3, %q3 : f32
      scf.yield %y0, %y1, %y2, %y3 : f32, f32, f32, f32
    }
    %t = arith.addf %s#0, %n#1 : f32
    %u = tensor.insert %t into %o[%th] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
