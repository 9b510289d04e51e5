// RUN: tessel-opt %s -tessel-column-extremes | FileCheck %s

// A block of a column maximum after -tessel-lower-grid-to-cpu: 72 rows, 2
// a step, over a tile of 16 columns behind the threads' bounds check. The
// block runs first on tiles of its own: the maxima as compare-and-selects,
// each column's sum (from -0, or the initial value where it is a zero);
// the last step apart, where a zero maximum takes the sign of the sum and
// a flag says whether a sum or maximum was a NaN or a zero maximum's sum
// was not a zero; then as it was on the tile where the flag is set.
// CHECK-LABEL: func.func @column_max(
// CHECK: %[[OWN:.*]] = tessel.allocate_shared : tensor<16xf32>
// CHECK: %[[OWNSUMS:.*]] = tessel.allocate_shared : tensor<16xf32>
// CHECK: %[[COPY:.*]]:2 = scf.for %{{.*}} iter_args(%[[W:.*]] = %[[OWN]], %[[S:.*]] = %[[OWNSUMS]])
// CHECK:   %[[I:.*]] = tensor.extract %[[TILE:.*]][
// CHECK:   %[[ZERO:.*]] = arith.cmpf oeq, %[[I]]
// CHECK:   %[[SUM0:.*]] = arith.select %[[ZERO]], %[[I]], %{{.*}}
// CHECK:   tensor.insert %[[I]] into %[[W]]
// CHECK:   tensor.insert %[[SUM0]] into %[[S]]
// CHECK: %[[C35:.*]] = arith.constant 35 : index
// CHECK: %[[LASTR:.*]] = arith.addi
// CHECK: %[[FAST:.*]]:2 = scf.for %{{.*}} to %[[LASTR]] step %{{.*}} iter_args(%{{.*}} = %[[COPY]]#0, %{{.*}} = %[[COPY]]#1) -> (tensor<16xf32>, tensor<16xf32>) {
// CHECK:   scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>) {
// CHECK:     scf.if %{{.*}} -> (tensor<16xf32>, tensor<16xf32>) {
// CHECK:       %[[M0:.*]] = tensor.extract {{.*}} : tensor<16xf32>
// CHECK:       %[[SUM:.*]] = tensor.extract {{.*}} : tensor<16xf32>
// CHECK:       %[[B0:.*]] = arith.cmpf ogt, %[[X0:.*]], %[[M0]]
// CHECK:       %[[S0:.*]] = arith.select %[[B0]], %[[X0]], %[[M0]]
// CHECK:       %[[B1:.*]] = arith.cmpf ogt, %[[X1:.*]], %[[S0]]
// CHECK:       %[[S1:.*]] = arith.select %[[B1]], %[[X1]], %[[S0]]
// CHECK:       %[[PAIR:.*]] = arith.addf %[[X0]], %[[X1]] fastmath<reassoc>
// CHECK:       %[[SUM1:.*]] = arith.addf %[[SUM]], %[[PAIR]] fastmath<reassoc>
// CHECK:       tensor.insert %[[SUM1]]
// CHECK:       tensor.insert %[[S1]]
// CHECK:     } else {
// CHECK:       scf.yield
// CHECK: %[[LAST:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %[[FAST]]#0, %{{.*}} = %[[FAST]]#1, %{{.*}} = %false) -> (tensor<16xf32>, tensor<16xf32>, i1) {
// CHECK:   arith.muli %[[LASTR]]
// CHECK:   arith.addf {{.*}} fastmath<reassoc>
// CHECK:   %[[LS:.*]] = arith.addf {{.*}} fastmath<reassoc>
// CHECK:   %[[LZ:.*]] = arith.cmpf oeq, %[[LM:.*]], %{{.*}}
// CHECK:   %[[LN:.*]] = arith.cmpf uno, %[[LS]], %[[LM]]
// CHECK:   %[[LNZ:.*]] = arith.cmpf une, %[[LS]]
// CHECK:   %[[MIXED:.*]] = arith.andi %[[LZ]], %[[LNZ]]
// CHECK:   %[[BAD:.*]] = arith.ori %[[LN]], %[[MIXED]]
// CHECK:   arith.ori %{{.*}}, %[[BAD]]
// CHECK:   %[[SIGNED:.*]] = arith.select %[[LZ]], %[[LS]], %[[LM]]
// CHECK:   tensor.insert %[[SIGNED]]
// CHECK: %[[OUT:.*]] = scf.if %[[LAST]]#2 -> (tensor<16xf32>) {
// CHECK:   %[[EXACT:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[TILE]]) -> (tensor<16xf32>) {
// CHECK:     arith.maximumf
// CHECK:     arith.maximumf
// CHECK:   scf.yield %[[EXACT]]
// CHECK: } else {
// CHECK:   scf.yield %[[LAST]]#0
// CHECK: return %[[OUT]]
func.func @column_max(%in: tensor<1152xf32>, %tile: tensor<16xf32>, %ok: i1) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c72 = arith.constant 72 : index
  %t = scf.for %r = %c0 to %c72 step %c2 iter_args(%acc = %tile) -> (tensor<16xf32>) {
    %u = scf.for %th = %c0 to %c16 step %c1 iter_args(%a = %acc) -> (tensor<16xf32>) {
      %g = scf.if %ok -> (tensor<16xf32>) {
        %i0 = arith.muli %r, %c16 : index
        %j0 = arith.addi %i0, %th : index
        %x0 = tensor.extract %in[%j0] : tensor<1152xf32>
        %j1 = arith.addi %j0, %c16 : index
        %x1 = tensor.extract %in[%j1] : tensor<1152xf32>
        %m = tensor.extract %a[%th] : tensor<16xf32>
        %m0 = arith.maximumf %m, %x0 : f32
        %m1 = arith.maximumf %x1, %m0 : f32
        %w = tensor.insert %m1 into %a[%th] : tensor<16xf32>
        scf.yield %w : tensor<16xf32>
      } else {
        scf.yield %a : tensor<16xf32>
      }
      scf.yield %g : tensor<16xf32>
    }
    scf.yield %u : tensor<16xf32>
  }
  return %t : tensor<16xf32>
}

// A minimum without the bounds check: compares `olt`, sums the negated
// elements, and a zero minimum takes the sign of the negated sum.
// CHECK-LABEL: func.func @column_min(
// CHECK: scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>) {
// CHECK:   arith.negf
// CHECK:   arith.select
// CHECK: scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>) {
// CHECK:   scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>) {
// CHECK:     arith.cmpf olt
// CHECK:     arith.negf
// CHECK: scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>, i1) {
// CHECK:   arith.cmpf une
// CHECK:   %[[NEG:.*]] = arith.negf
// CHECK:   arith.select %{{.*}}, %[[NEG]], %{{.*}}
// CHECK: scf.if
// CHECK:   arith.minimumf
func.func @column_min(%in: tensor<1152xf32>, %tile: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c72 = arith.constant 72 : index
  %t = scf.for %r = %c0 to %c72 step %c1 iter_args(%acc = %tile) -> (tensor<16xf32>) {
    %u = scf.for %th = %c0 to %c16 step %c1 iter_args(%a = %acc) -> (tensor<16xf32>) {
      %i0 = arith.muli %r, %c16 : index
      %j0 = arith.addi %i0, %th : index
      %x0 = tensor.extract %in[%j0] : tensor<1152xf32>
      %m = tensor.extract %a[%th] : tensor<16xf32>
      %m0 = arith.minimumf %m, %x0 : f32
      %w = tensor.insert %m0 into %a[%th] : tensor<16xf32>
      scf.yield %w : tensor<16xf32>
    }
    scf.yield %u : tensor<16xf32>
  }
  return %t : tensor<16xf32>
}

// Left alone: fewer than 64 rows; a maximum with fast-math flags; a chain
// that mixes maxima and minima; an accumulator read twice.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: tessel.allocate_shared
// CHECK-NOT: arith.select
// CHECK: return
func.func @left_alone(%in: tensor<1152xf32>, %tile: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c63 = arith.constant 63 : index
  %c72 = arith.constant 72 : index
  %short = scf.for %r = %c0 to %c63 step %c1 iter_args(%acc = %tile) -> (tensor<16xf32>) {
    %u = scf.for %th = %c0 to %c16 step %c1 iter_args(%a = %acc) -> (tensor<16xf32>) {
      %x0 = tensor.extract %in[%th] : tensor<1152xf32>
      %m = tensor.extract %a[%th] : tensor<16xf32>
      %m0 = arith.maximumf %m, %x0 : f32
      %w = tensor.insert %m0 into %a[%th] : tensor<16xf32>
      scf.yield %w : tensor<16xf32>
    }
    scf.yield %u : tensor<16xf32>
  }
  %flags = scf.for %r = %c0 to %c72 step %c1 iter_args(%acc = %tile) -> (tensor<16xf32>) {
    %u = scf.for %th = %c0 to %c16 step %c1 iter_args(%a = %acc) -> (tensor<16xf32>) {
      %x0 = tensor.extract %in[%th] : tensor<1152xf32>
      %m = tensor.extract %a[%th] : tensor<16xf32>
      %m0 = arith.maximumf %m, %x0 fastmath<nnan> : f32
      %w = tensor.insert %m0 into %a[%th] : tensor<16xf32>
      scf.yield %w : tensor<16xf32>
    }
    scf.yield %u : tensor<16xf32>
  }
  %mixed = scf.for %r = %c0 to %c72 step %c1 iter_args(%acc = %tile) -> (tensor<16xf32>) {
    %u = scf.for %th = %c0 to %c16 step %c1 iter_args(%a = %acc) -> (tensor<16xf32>) {
      %x0 = tensor.extract %in[%th] : tensor<1152xf32>
      %m = tensor.extract %a[%th] : tensor<16xf32>
      %m0 = arith.maximumf %m, %x0 : f32
      %m1 = arith.minimumf %m0, %x0 : f32
      %w = tensor.insert %m1 into %a[%th] : tensor<16xf32>
      scf.yield %w : tensor<16xf32>
    }
    scf.yield %u : tensor<16xf32>
  }
  %twice = scf.for %r = %c0 to %c72 step %c1 iter_args(%acc = %tile) -> (tensor<16xf32>) {
    %u = scf.for %th = %c0 to %c16 step %c1 iter_args(%a = %acc) -> (tensor<16xf32>) {
      %x0 = tensor.extract %a[%c0] : tensor<16xf32>
      %m = tensor.extract %a[%th] : tensor<16xf32>
      %m0 = arith.maximumf %m, %x0 : f32
      %w = tensor.insert %m0 into %a[%th] : tensor<16xf32>
      scf.yield %w : tensor<16xf32>
    }
    scf.yield %u : tensor<16xf32>
  }
  return %short, %flags, %mixed, %twice : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
