// RUN: tessel-opt %s -tessel-vectorize-partials | FileCheck %s

// The partial maxima of a bf16 row (the emitter's widen, compare, select,
// round back), lane k reading element 4 * i + k: one vector<4xbf16>
// carried, lane 0's ops on vectors, each partial extracted after the loop.
#rowmap = #tessel.indexing_map<"(d0, d1) -> (d0 * 128 + d1), domain: d0 in [0, 7], d1 in [0, 127]">
// CHECK-LABEL: func.func @maxima(
// CHECK: %[[S:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (vector<4xbf16>) {
// CHECK-DAG:   %[[X:.*]] = vector.transfer_read {{.*}} : tensor<1024xbf16>, vector<4xbf16>
// CHECK-DAG:   %[[W:.*]] = arith.extf %[[X]] : vector<4xbf16> to vector<4xf32>
// CHECK-DAG:   %[[V:.*]] = arith.extf %[[A]] : vector<4xbf16> to vector<4xf32>
// CHECK-DAG:   %[[G:.*]] = arith.cmpf ogt, %[[V]], %[[W]] : vector<4xf32>
// CHECK-DAG:   arith.select %[[G]], %[[V]], %[[W]] : vector<4xi1>, vector<4xf32>
// CHECK:   %[[Y:.*]] = arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK:   scf.yield %[[Y]] : vector<4xbf16>
// CHECK: vector.extract %[[S]][0]
// CHECK: vector.extract %[[S]][3]
func.func @maxima(%in: tensor<1024xbf16>, %out: tensor<8xbf16>) -> tensor<8xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %ninf = arith.constant 0xFF80 : bf16
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xbf16>) {
    %s:4 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %ninf, %a1 = %ninf, %a2 = %ninf, %a3 = %ninf) -> (bf16, bf16, bf16, bf16) {
      %j = arith.muli %i, %c4 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j)
      %x0 = tensor.extract %in[%k0] : tensor<1024xbf16>
      %w0 = arith.extf %x0 : bf16 to f32
      %v0 = arith.extf %a0 : bf16 to f32
      %g0 = arith.cmpf ogt, %v0, %w0 : f32
      %p0 = arith.select %g0, %v0, %w0 : f32
      %n0 = arith.cmpf uno, %v0, %v0 : f32
      %q0 = arith.select %n0, %v0, %p0 : f32
      %y0 = arith.truncf %q0 : f32 to bf16
      %j1 = arith.addi %j, %c1 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xbf16>
      %w1 = arith.extf %x1 : bf16 to f32
      %v1 = arith.extf %a1 : bf16 to f32
      %g1 = arith.cmpf ogt, %v1, %w1 : f32
      %p1 = arith.select %g1, %v1, %w1 : f32
      %n1 = arith.cmpf uno, %v1, %v1 : f32
      %q1 = arith.select %n1, %v1, %p1 : f32
      %y1 = arith.truncf %q1 : f32 to bf16
      %j2 = arith.addi %j, %c2 : index
      %k2 = tessel.apply_indexing #rowmap(%th, %j2)
      %x2 = tensor.extract %in[%k2] : tensor<1024xbf16>
      %w2 = arith.extf %x2 : bf16 to f32
      %v2 = arith.extf %a2 : bf16 to f32
      %g2 = arith.cmpf ogt, %v2, %w2 : f32
      %p2 = arith.select %g2, %v2, %w2 : f32
      %n2 = arith.cmpf uno, %v2, %v2 : f32
      %q2 = arith.select %n2, %v2, %p2 : f32
      %y2 = arith.truncf %q2 : f32 to bf16
      %j3 = arith.addi %j, %c3 : index
      %k3 = tessel.apply_indexing #rowmap(%th, %j3)
      %x3 = tensor.extract %in[%k3] : tensor<1024xbf16>
      %w3 = arith.extf %x3 : bf16 to f32
      %v3 = arith.extf %a3 : bf16 to f32
      %g3 = arith.cmpf ogt, %v3, %w3 : f32
      %p3 = arith.select %g3, %v3, %w3 : f32
      %n3 = arith.cmpf uno, %v3, %v3 : f32
      %q3 = arith.select %n3, %v3, %p3 : f32
      %y3 = arith.truncf %q3 : f32 to bf16
      scf.yield %y0, %y1, %y2, %y3 : bf16, bf16, bf16, bf16
    }
    %m = arith.maximumf %s#0, %s#3 : bf16
    %u = tensor.insert %m into %o[%th] : tensor<8xbf16>
    scf.yield %u : tensor<8xbf16>
  }
  return %r : tensor<8xbf16>
}

// Left scalar: a lane that yields another accumulator unchanged.
// CHECK-LABEL: func.func @mismatched(
// CHECK-NOT: vector
// CHECK: scf.for {{.*}} -> (bf16, bf16, bf16, bf16) {
// CHECK-NOT: vector
func.func @mismatched(%in: tensor<1024xbf16>, %out: tensor<8xbf16>) -> tensor<8xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %ninf = arith.constant 0xFF80 : bf16
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xbf16>) {
    %s:4 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %ninf, %a1 = %ninf, %a2 = %ninf, %a3 = %ninf) -> (bf16, bf16, bf16, bf16) {
      %j = arith.muli %i, %c4 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j)
      %x0 = tensor.extract %in[%k0] : tensor<1024xbf16>
      %w0 = arith.extf %x0 : bf16 to f32
      %v0 = arith.extf %a0 : bf16 to f32
      %g0 = arith.cmpf ogt, %v0, %w0 : f32
      %p0 = arith.select %g0, %v0, %w0 : f32
      %n0 = arith.cmpf uno, %v0, %v0 : f32
      %q0 = arith.select %n0, %v0, %p0 : f32
      %y0 = arith.truncf %q0 : f32 to bf16
      %j1 = arith.addi %j, %c1 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xbf16>
      %w1 = arith.extf %x1 : bf16 to f32
      %v1 = arith.extf %a1 : bf16 to f32
      %g1 = arith.cmpf ogt, %v1, %w1 : f32
      %p1 = arith.select %g1, %v1, %w1 : f32
      %n1 = arith.cmpf uno, %v1, %v1 : f32
      %q1 = arith.select %n1, %v1, %p1 : f32
      %y1 = arith.truncf %q1 : f32 to bf16
      %j2 = arith.addi %j, %c2 : index
      %k2 = tessel.apply_indexing #rowmap(%th, %j2)
      %x2 = tensor.extract %in[%k2] : tensor<1024xbf16>
      %w2 = arith.extf %x2 : bf16 to f32
      %v2 = arith.extf %a2 : bf16 to f32
      %g2 = arith.cmpf ogt, %v2, %w2 : f32
      %p2 = arith.select %g2, %v2, %w2 : f32
      %n2 = arith.cmpf uno, %v2, %v2 : f32
      %q2 = arith.select %n2, %v2, %p2 : f32
      %y2 = arith.truncf %q2 : f32 to bf16
      %j3 = arith.addi %j, %c3 : index
      %k3 = tessel.apply_indexing #rowmap(%th, %j3)
      %x3 = tensor.extract %in[%k3] : tensor<1024xbf16>
      %w3 = arith.extf %x3 : bf16 to f32
      %v3 = arith.extf %a3 : bf16 to f32
      %g3 = arith.cmpf ogt, %v3, %w3 : f32
      %p3 = arith.select %g3, %v3, %w3 : f32
      %n3 = arith.cmpf uno, %v3, %v3 : f32
      %q3 = arith.select %n3, %v3, %p3 : f32
      %y3 = arith.truncf %q3 : f32 to bf16
      scf.yield %y0, %y1, %y2, %a2 : bf16, bf16, bf16, bf16
    }
    %m = arith.maximumf %s#0, %s#3 : bf16
    %u = tensor.insert %m into %o[%th] : tensor<8xbf16>
    scf.yield %u : tensor<8xbf16>
  }
  return %r : tensor<8xbf16>
}

// The emitter's whole maximum of widened bf16 values (NaNs first, +0 above
// -0 by the AND of the bits) on the bf16 bits. Each lane carries the three
// integer reductions of MinMaxOnBits.h (vpmaxsw, vpminsw, vpmaxuw); where
// they show no NaN in any lane, the largest non-negative pattern (signed
// max) or, all negative, the smallest (signed min) is the maximum. Else the
// row runs again in the exact loop: the largest order key (a signed compare
// orders the keys as the floats) and the NaN that wins (the accumulator is
// the first operand: its first NaN), after it that NaN made quiet or the
// extreme key's bits.
// CHECK-LABEL: func.func @widened_maxima(
// CHECK: %[[I:.*]] = arith.bitcast %{{.*}} : vector<4xbf16> to vector<4xi16>
// CHECK: %[[E:.*]]:3 = scf.for {{.*}} iter_args(%[[SX:.*]] = %[[I]], %[[SN:.*]] = %[[I]], %[[UX:.*]] = %[[I]]) -> (vector<4xi16>, vector<4xi16>, vector<4xi16>) {
// CHECK:   %[[R0:.*]] = vector.transfer_read {{.*}} : tensor<1024xbf16>, vector<4xbf16>
// CHECK:   %[[X0:.*]] = arith.bitcast %[[R0]] : vector<4xbf16> to vector<4xi16>
// CHECK:   %[[A:.*]] = arith.maxsi %[[SX]], %[[X0]] : vector<4xi16>
// CHECK:   %[[B:.*]] = arith.minsi %[[SN]], %[[X0]] : vector<4xi16>
// CHECK:   %[[C:.*]] = arith.maxui %[[UX]], %[[X0]] : vector<4xi16>
// CHECK:   scf.yield %[[A]], %[[B]], %[[C]]
// CHECK: %[[PN:.*]] = arith.cmpi sgt, %[[E]]#0, %{{.*}} : vector<4xi16>
// CHECK: %[[NN:.*]] = arith.cmpi ugt, %[[E]]#2, %{{.*}} : vector<4xi16>
// CHECK: %[[NAN:.*]] = arith.ori %[[PN]], %[[NN]] : vector<4xi1>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[NAN]] : vector<4xi1> into i1
// CHECK: %[[V:.*]] = scf.if %[[ANY]] -> (vector<4xi16>) {
// CHECK:   %[[S:.*]]:2 = scf.for {{.*}} iter_args(%[[K:.*]] = %{{.*}}, %[[N:.*]] = %[[I]]) -> (vector<4xi16>, vector<4xi16>) {
// CHECK:     %[[R:.*]] = vector.transfer_read {{.*}} : tensor<1024xbf16>, vector<4xbf16>
// CHECK:     %[[X:.*]] = arith.bitcast %[[R]] : vector<4xbf16> to vector<4xi16>
// CHECK:     arith.shrsi %[[X]]
// CHECK:     %[[M:.*]] = arith.maxsi %[[K]], %{{.*}} : vector<4xi16>
// CHECK:     arith.andi %[[N]]
// CHECK:     %[[F:.*]] = arith.select %{{.*}}, %[[N]], %[[X]] : vector<4xi1>, vector<4xi16>
// CHECK:     scf.yield %[[M]], %[[F]] : vector<4xi16>, vector<4xi16>
// CHECK:   %[[Q:.*]] = arith.ori %[[S]]#1, %{{.*}} : vector<4xi16>
// CHECK:   %[[W:.*]] = arith.select %{{.*}}, %[[Q]], %{{.*}} : vector<4xi1>, vector<4xi16>
// CHECK:   scf.yield %[[W]]
// CHECK: } else {
// CHECK:   %[[GE:.*]] = arith.cmpi sge, %[[E]]#0, %{{.*}} : vector<4xi16>
// CHECK:   %[[Y:.*]] = arith.select %[[GE]], %[[E]]#0, %[[E]]#1 : vector<4xi1>, vector<4xi16>
// CHECK:   scf.yield %[[Y]]
// CHECK: %[[BF:.*]] = arith.bitcast %[[V]] : vector<4xi16> to vector<4xbf16>
// CHECK: vector.extract %[[BF]][0]

func.func @widened_maxima(%in: tensor<1024xbf16>, %out: tensor<8xbf16>) -> tensor<8xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %init = arith.constant 0xFF80 : bf16
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xbf16>) {
    %s:4 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %init, %a1 = %init, %a2 = %init, %a3 = %init) -> (bf16, bf16, bf16, bf16) {
      %j = arith.muli %i, %c4 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j)
      %x0 = tensor.extract %in[%k0] : tensor<1024xbf16>
      %w0 = arith.extf %x0 : bf16 to f32
      %v0 = arith.extf %a0 : bf16 to f32
      %g0 = arith.cmpf ogt, %v0, %w0 : f32
      %p0 = arith.select %g0, %v0, %w0 : f32
      %vb0 = arith.bitcast %v0 : f32 to i32
      %wb0 = arith.bitcast %w0 : f32 to i32
      %mb0 = arith.andi %vb0, %wb0 : i32
      %e0 = arith.cmpf oeq, %v0, %w0 : f32
      %m0 = arith.bitcast %mb0 : i32 to f32
      %pe0 = arith.select %e0, %m0, %p0 : f32
      %nw0 = arith.cmpf uno, %w0, %w0 : f32
      %pw0 = arith.select %nw0, %w0, %pe0 : f32
      %nv0 = arith.cmpf uno, %v0, %v0 : f32
      %q0 = arith.select %nv0, %v0, %pw0 : f32
      %y0 = arith.truncf %q0 : f32 to bf16
      %j1 = arith.addi %j, %c1 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xbf16>
      %w1 = arith.extf %x1 : bf16 to f32
      %v1 = arith.extf %a1 : bf16 to f32
      %g1 = arith.cmpf ogt, %v1, %w1 : f32
      %p1 = arith.select %g1, %v1, %w1 : f32
      %vb1 = arith.bitcast %v1 : f32 to i32
      %wb1 = arith.bitcast %w1 : f32 to i32
      %mb1 = arith.andi %vb1, %wb1 : i32
      %e1 = arith.cmpf oeq, %v1, %w1 : f32
      %m1 = arith.bitcast %mb1 : i32 to f32
      %pe1 = arith.select %e1, %m1, %p1 : f32
      %nw1 = arith.cmpf uno, %w1, %w1 : f32
      %pw1 = arith.select %nw1, %w1, %pe1 : f32
      %nv1 = arith.cmpf uno, %v1, %v1 : f32
      %q1 = arith.select %nv1, %v1, %pw1 : f32
      %y1 = arith.truncf %q1 : f32 to bf16
      %j2 = arith.addi %j, %c2 : index
      %k2 = tessel.apply_indexing #rowmap(%th, %j2)
      %x2 = tensor.extract %in[%k2] : tensor<1024xbf16>
      %w2 = arith.extf %x2 : bf16 to f32
      %v2 = arith.extf %a2 : bf16 to f32
      %g2 = arith.cmpf ogt, %v2, %w2 : f32
      %p2 = arith.select %g2, %v2, %w2 : f32
      %vb2 = arith.bitcast %v2 : f32 to i32
      %wb2 = arith.bitcast %w2 : f32 to i32
      %mb2 = arith.andi %vb2, %wb2 : i32
      %e2 = arith.cmpf oeq, %v2, %w2 : f32
      %m2 = arith.bitcast %mb2 : i32 to f32
      %pe2 = arith.select %e2, %m2, %p2 : f32
      %nw2 = arith.cmpf uno, %w2, %w2 : f32
      %pw2 = arith.select %nw2, %w2, %pe2 : f32
      %nv2 = arith.cmpf uno, %v2, %v2 : f32
      %q2 = arith.select %nv2, %v2, %pw2 : f32
      %y2 = arith.truncf %q2 : f32 to bf16
      %j3 = arith.addi %j, %c3 : index
      %k3 = tessel.apply_indexing #rowmap(%th, %j3)
      %x3 = tensor.extract %in[%k3] : tensor<1024xbf16>
      %w3 = arith.extf %x3 : bf16 to f32
      %v3 = arith.extf %a3 : bf16 to f32
      %g3 = arith.cmpf ogt, %v3, %w3 : f32
      %p3 = arith.select %g3, %v3, %w3 : f32
      %vb3 = arith.bitcast %v3 : f32 to i32
      %wb3 = arith.bitcast %w3 : f32 to i32
      %mb3 = arith.andi %vb3, %wb3 : i32
      %e3 = arith.cmpf oeq, %v3, %w3 : f32
      %m3 = arith.bitcast %mb3 : i32 to f32
      %pe3 = arith.select %e3, %m3, %p3 : f32
      %nw3 = arith.cmpf uno, %w3, %w3 : f32
      %pw3 = arith.select %nw3, %w3, %pe3 : f32
      %nv3 = arith.cmpf uno, %v3, %v3 : f32
      %q3 = arith.select %nv3, %v3, %pw3 : f32
      %y3 = arith.truncf %q3 : f32 to bf16
      scf.yield %y0, %y1, %y2, %y3 : bf16, bf16, bf16, bf16
    }
    %m = arith.maximumf %s#0, %s#3 : bf16
    %u = tensor.insert %m into %o[%th] : tensor<8xbf16>
    scf.yield %u : tensor<8xbf16>
  }
  return %r : tensor<8xbf16>
}


// The minimum: the smallest key.
// CHECK-LABEL: func.func @widened_minima(
// CHECK: scf.for {{.*}} -> (vector<4xi16>, vector<4xi16>) {
// CHECK:   arith.minsi {{.*}} : vector<4xi16>
func.func @widened_minima(%in: tensor<1024xbf16>, %out: tensor<8xbf16>) -> tensor<8xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %init = arith.constant 0x7F80 : bf16
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xbf16>) {
    %s:4 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %init, %a1 = %init, %a2 = %init, %a3 = %init) -> (bf16, bf16, bf16, bf16) {
      %j = arith.muli %i, %c4 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j)
      %x0 = tensor.extract %in[%k0] : tensor<1024xbf16>
      %w0 = arith.extf %x0 : bf16 to f32
      %v0 = arith.extf %a0 : bf16 to f32
      %g0 = arith.cmpf olt, %v0, %w0 : f32
      %p0 = arith.select %g0, %v0, %w0 : f32
      %vb0 = arith.bitcast %v0 : f32 to i32
      %wb0 = arith.bitcast %w0 : f32 to i32
      %mb0 = arith.ori %vb0, %wb0 : i32
      %e0 = arith.cmpf oeq, %v0, %w0 : f32
      %m0 = arith.bitcast %mb0 : i32 to f32
      %pe0 = arith.select %e0, %m0, %p0 : f32
      %nw0 = arith.cmpf uno, %w0, %w0 : f32
      %pw0 = arith.select %nw0, %w0, %pe0 : f32
      %nv0 = arith.cmpf uno, %v0, %v0 : f32
      %q0 = arith.select %nv0, %v0, %pw0 : f32
      %y0 = arith.truncf %q0 : f32 to bf16
      %j1 = arith.addi %j, %c1 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xbf16>
      %w1 = arith.extf %x1 : bf16 to f32
      %v1 = arith.extf %a1 : bf16 to f32
      %g1 = arith.cmpf olt, %v1, %w1 : f32
      %p1 = arith.select %g1, %v1, %w1 : f32
      %vb1 = arith.bitcast %v1 : f32 to i32
      %wb1 = arith.bitcast %w1 : f32 to i32
      %mb1 = arith.ori %vb1, %wb1 : i32
      %e1 = arith.cmpf oeq, %v1, %w1 : f32
      %m1 = arith.bitcast %mb1 : i32 to f32
      %pe1 = arith.select %e1, %m1, %p1 : f32
      %nw1 = arith.cmpf uno, %w1, %w1 : f32
      %pw1 = arith.select %nw1, %w1, %pe1 : f32
      %nv1 = arith.cmpf uno, %v1, %v1 : f32
      %q1 = arith.select %nv1, %v1, %pw1 : f32
      %y1 = arith.truncf %q1 : f32 to bf16
      %j2 = arith.addi %j, %c2 : index
      %k2 = tessel.apply_indexing #rowmap(%th, %j2)
      %x2 = tensor.extract %in[%k2] : tensor<1024xbf16>
      %w2 = arith.extf %x2 : bf16 to f32
      %v2 = arith.extf %a2 : bf16 to f32
      %g2 = arith.cmpf olt, %v2, %w2 : f32
      %p2 = arith.select %g2, %v2, %w2 : f32
      %vb2 = arith.bitcast %v2 : f32 to i32
      %wb2 = arith.bitcast %w2 : f32 to i32
      %mb2 = arith.ori %vb2, %wb2 : i32
      %e2 = arith.cmpf oeq, %v2, %w2 : f32
      %m2 = arith.bitcast %mb2 : i32 to f32
      %pe2 = arith.select %e2, %m2, %p2 : f32
      %nw2 = arith.cmpf uno, %w2, %w2 : f32
      %pw2 = arith.select %nw2, %w2, %pe2 : f32
      %nv2 = arith.cmpf uno, %v2, %v2 : f32
      %q2 = arith.select %nv2, %v2, %pw2 : f32
      %y2 = arith.truncf %q2 : f32 to bf16
      %j3 = arith.addi %j, %c3 : index
      %k3 = tessel.apply_indexing #rowmap(%th, %j3)
      %x3 = tensor.extract %in[%k3] : tensor<1024xbf16>
      %w3 = arith.extf %x3 : bf16 to f32
      %v3 = arith.extf %a3 : bf16 to f32
      %g3 = arith.cmpf olt, %v3, %w3 : f32
      %p3 = arith.select %g3, %v3, %w3 : f32
      %vb3 = arith.bitcast %v3 : f32 to i32
      %wb3 = arith.bitcast %w3 : f32 to i32
      %mb3 = arith.ori %vb3, %wb3 : i32
      %e3 = arith.cmpf oeq, %v3, %w3 : f32
      %m3 = arith.bitcast %mb3 : i32 to f32
      %pe3 = arith.select %e3, %m3, %p3 : f32
      %nw3 = arith.cmpf uno, %w3, %w3 : f32
      %pw3 = arith.select %nw3, %w3, %pe3 : f32
      %nv3 = arith.cmpf uno, %v3, %v3 : f32
      %q3 = arith.select %nv3, %v3, %pw3 : f32
      %y3 = arith.truncf %q3 : f32 to bf16
      scf.yield %y0, %y1, %y2, %y3 : bf16, bf16, bf16, bf16
    }
    %m = arith.maximumf %s#0, %s#3 : bf16
    %u = tensor.insert %m into %o[%th] : tensor<8xbf16>
    scf.yield %u : tensor<8xbf16>
  }
  return %r : tensor<8xbf16>
}

// f16 alike on its bits (+inf 0x7c00; a NaN made quiet by 0x200, as the
// rounding of a widened NaN back to f16 does).
// CHECK-LABEL: func.func @widened_maxima_f16(
// CHECK: %[[I:.*]] = arith.bitcast %{{.*}} : vector<4xf16> to vector<4xi16>
// CHECK: %[[E:.*]]:3 = scf.for {{.*}} -> (vector<4xi16>, vector<4xi16>, vector<4xi16>) {
// CHECK-NOT: truncf
// CHECK:   arith.maxui
// CHECK: arith.cmpi sgt, %[[E]]#0, %{{.*}} : vector<4xi16>
// CHECK: scf.if
// CHECK:   arith.maxsi
// CHECK:   arith.ori %{{.*}}, %{{.*}} : vector<4xi16>
// CHECK: } else {
// CHECK:   %[[GE:.*]] = arith.cmpi sge, %[[E]]#0, %{{.*}} : vector<4xi16>
// CHECK:   arith.select %[[GE]], %[[E]]#0, %[[E]]#1
// CHECK: arith.bitcast %{{.*}} : vector<4xi16> to vector<4xf16>
// CHECK-NOT: truncf
// CHECK: vector.extract
func.func @widened_maxima_f16(%in: tensor<1024xf16>, %out: tensor<8xf16>) -> tensor<8xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %init = arith.constant 0xFC00 : f16
  %r = scf.for %th = %c0 to %c8 step %c1 iter_args(%o = %out) -> (tensor<8xf16>) {
    %s:4 = scf.for %i = %c0 to %c32 step %c1 iter_args(%a0 = %init, %a1 = %init, %a2 = %init, %a3 = %init) -> (f16, f16, f16, f16) {
      %j = arith.muli %i, %c4 : index
      %k0 = tessel.apply_indexing #rowmap(%th, %j)
      %x0 = tensor.extract %in[%k0] : tensor<1024xf16>
      %w0 = arith.extf %x0 : f16 to f32
      %v0 = arith.extf %a0 : f16 to f32
      %g0 = arith.cmpf ogt, %v0, %w0 : f32
      %p0 = arith.select %g0, %v0, %w0 : f32
      %vb0 = arith.bitcast %v0 : f32 to i32
      %wb0 = arith.bitcast %w0 : f32 to i32
      %mb0 = arith.andi %vb0, %wb0 : i32
      %e0 = arith.cmpf oeq, %v0, %w0 : f32
      %m0 = arith.bitcast %mb0 : i32 to f32
      %pe0 = arith.select %e0, %m0, %p0 : f32
      %nw0 = arith.cmpf uno, %w0, %w0 : f32
      %pw0 = arith.select %nw0, %w0, %pe0 : f32
      %nv0 = arith.cmpf uno, %v0, %v0 : f32
      %q0 = arith.select %nv0, %v0, %pw0 : f32
      %y0 = arith.truncf %q0 : f32 to f16
      %j1 = arith.addi %j, %c1 : index
      %k1 = tessel.apply_indexing #rowmap(%th, %j1)
      %x1 = tensor.extract %in[%k1] : tensor<1024xf16>
      %w1 = arith.extf %x1 : f16 to f32
      %v1 = arith.extf %a1 : f16 to f32
      %g1 = arith.cmpf ogt, %v1, %w1 : f32
      %p1 = arith.select %g1, %v1, %w1 : f32
      %vb1 = arith.bitcast %v1 : f32 to i32
      %wb1 = arith.bitcast %w1 : f32 to i32
      %mb1 = arith.andi %vb1, %wb1 : i32
      %e1 = arith.cmpf oeq, %v1, %w1 : f32
      %m1 = arith.bitcast %mb1 : i32 to f32
      %pe1 = arith.select %e1, %m1, %p1 : f32
      %nw1 = arith.cmpf uno, %w1, %w1 : f32
      %pw1 = arith.select %nw1, %w1, %pe1 : f32
      %nv1 = arith.cmpf uno, %v1, %v1 : f32
      %q1 = arith.select %nv1, %v1, %pw1 : f32
      %y1 = arith.truncf %q1 : f32 to f16
      %j2 = arith.addi %j, %c2 : index
      %k2 = tessel.apply_indexing #rowmap(%th, %j2)
      %x2 = tensor.extract %in[%k2] : tensor<1024xf16>
      %w2 = arith.extf %x2 : f16 to f32
      %v2 = arith.extf %a2 : f16 to f32
      %g2 = arith.cmpf ogt, %v2, %w2 : f32
      %p2 = arith.select %g2, %v2, %w2 : f32
      %vb2 = arith.bitcast %v2 : f32 to i32
      %wb2 = arith.bitcast %w2 : f32 to i32
      %mb2 = arith.andi %vb2, %wb2 : i32
      %e2 = arith.cmpf oeq, %v2, %w2 : f32
      %m2 = arith.bitcast %mb2 : i32 to f32
      %pe2 = arith.select %e2, %m2, %p2 : f32
      %nw2 = arith.cmpf uno, %w2, %w2 : f32
      %pw2 = arith.select %nw2, %w2, %pe2 : f32
      %nv2 = arith.cmpf uno, %v2, %v2 : f32
      %q2 = arith.select %nv2, %v2, %pw2 : f32
      %y2 = arith.truncf %q2 : f32 to f16
      %j3 = arith.addi %j, %c3 : index
      %k3 = tessel.apply_indexing #rowmap(%th, %j3)
      %x3 = tensor.extract %in[%k3] : tensor<1024xf16>
      %w3 = arith.extf %x3 : f16 to f32
      %v3 = arith.extf %a3 : f16 to f32
      %g3 = arith.cmpf ogt, %v3, %w3 : f32
      %p3 = arith.select %g3, %v3, %w3 : f32
      %vb3 = arith.bitcast %v3 : f32 to i32
      %wb3 = arith.bitcast %w3 : f32 to i32
      %mb3 = arith.andi %vb3, %wb3 : i32
      %e3 = arith.cmpf oeq, %v3, %w3 : f32
      %m3 = arith.bitcast %mb3 : i32 to f32
      %pe3 = arith.select %e3, %m3, %p3 : f32
      %nw3 = arith.cmpf uno, %w3, %w3 : f32
      %pw3 = arith.select %nw3, %w3, %pe3 : f32
      %nv3 = arith.cmpf uno, %v3, %v3 : f32
      %q3 = arith.select %nv3, %v3, %pw3 : f32
      %y3 = arith.truncf %q3 : f32 to f16
      scf.yield %y0, %y1, %y2, %y3 : f16, f16, f16, f16
    }
    %m = arith.maximumf %s#0, %s#3 : f16
    %u = tensor.insert %m into %o[%th] : tensor<8xf16>
    scf.yield %u : tensor<8xf16>
  }
  return %r : tensor<8xf16>
}


// Loops of one trip, which the CPU pipeline's canonicalizers before this
// pass keep, are inlined after it; loops of no trip give their initial
// values; others stay.
// CHECK-LABEL: func.func @trivial_loops(
// CHECK-SAME: %[[A:.*]]: f32, %[[B:.*]]: f32
// CHECK-NOT: scf.for
// CHECK: %[[ONE:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK: scf.for {{.*}} -> (f32)
// CHECK-NOT: scf.for
// CHECK: return %[[ONE]], %[[B]], %{{.*}} : f32, f32, f32
func.func @trivial_loops(%a: f32, %b: f32) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = scf.for %i = %c0 to %c1 step %c1 iter_args(%x = %a) -> (f32) {
    %y = arith.addf %x, %b : f32
    scf.yield %y : f32
  }
  %none = scf.for %i = %c1 to %c1 step %c1 iter_args(%x = %b) -> (f32) {
    %y = arith.addf %x, %a : f32
    scf.yield %y : f32
  }
  %two = scf.for %i = %c0 to %c2 step %c1 iter_args(%x = %a) -> (f32) {
    %y = arith.addf %x, %a : f32
    scf.yield %y : f32
  }
  return %one, %none, %two : f32, f32, f32
}
