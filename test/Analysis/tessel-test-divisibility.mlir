// RUN: tessel-opt %s -split-input-file --allow-unregistered-dialect --tessel-test-divisibility -verify-diagnostics

// Function arguments are unknown; constants are exact.
func.func @arguments_and_constants(%i: index) {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %c33 = arith.constant 33 : index
  // expected-remark @+1 {{unknown whether a multiple of 128}}
  "test.divisible"(%i) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 1}}
  "test.divisible"(%i) {by = 1 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%c0) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%c256) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven not a multiple of 32}}
  "test.divisible"(%c33) {by = 32 : i64} : (index) -> ()
  return
}

// -----

// i * 128 + 32: a multiple of 32, never of 128 (the spec's proven-misaligned
// example).
func.func @add_mul(%i: index) {
  %c128 = arith.constant 128 : index
  %c32 = arith.constant 32 : index
  %x = arith.muli %i, %c128 : index
  %y = arith.addi %x, %c32 : index
  %z = arith.subi %x, %c128 : index
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%x) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven not a multiple of 128}}
  "test.divisible"(%y) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 32}}
  "test.divisible"(%y) {by = 32 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%z) {by = 128 : i64} : (index) -> ()
  return
}

// -----

// A product that may wrap keeps only its power-of-two factor; nsw keeps all.
func.func @wrap(%i: index) {
  %c24 = arith.constant 24 : index
  %x = arith.muli %i, %c24 : index
  %y = arith.muli %i, %c24 overflow<nsw> : index
  // expected-remark @+1 {{proven multiple of 8}}
  "test.divisible"(%x) {by = 8 : i64} : (index) -> ()
  // expected-remark @+1 {{unknown whether a multiple of 24}}
  "test.divisible"(%x) {by = 24 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 24}}
  "test.divisible"(%y) {by = 24 : i64} : (index) -> ()
  return
}

// -----

func.func @division_and_remainder(%i: index) {
  %c1024 = arith.constant 1024 : index
  %c8 = arith.constant 8 : index
  %c100 = arith.constant 100 : index
  %x = arith.muli %i, %c1024 : index
  %d = arith.divsi %x, %c8 : index
  %u = arith.divui %x, %c8 : index
  %f = arith.floordivsi %x, %c8 : index
  %c = arith.ceildivsi %x, %c8 : index
  %r = arith.remsi %x, %c100 : index
  %ru = arith.remui %i, %c8 : index
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%d) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%u) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%f) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%c) {by = 128 : i64} : (index) -> ()
  // x mod 100 is x - 100q: a multiple of gcd(1024, 100) = 4.
  // expected-remark @+1 {{proven multiple of 4}}
  "test.divisible"(%r) {by = 4 : i64} : (index) -> ()
  // expected-remark @+1 {{unknown whether a multiple of 8}}
  "test.divisible"(%r) {by = 8 : i64} : (index) -> ()
  // expected-remark @+1 {{unknown whether a multiple of 2}}
  "test.divisible"(%ru) {by = 2 : i64} : (index) -> ()
  return
}

// -----

func.func @shifts_and_masks(%i: index, %n: i32) {
  %c7 = arith.constant 7 : index
  %c3 = arith.constant 3 : index
  %mask = arith.constant -128 : index
  %c1 = arith.constant 1 : index
  %s = arith.shli %i, %c7 : index
  %r = arith.shrsi %s, %c3 : index
  %ru = arith.shrui %s, %c3 : index
  %a = arith.andi %i, %mask : index
  %o = arith.ori %s, %c1 : index
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%s) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 16}}
  "test.divisible"(%r) {by = 16 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 16}}
  "test.divisible"(%ru) {by = 16 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%a) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven not a multiple of 2}}
  "test.divisible"(%o) {by = 2 : i64} : (index) -> ()
  return
}

// -----

func.func @min_max_select(%i: index, %j: index, %b: i1) {
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c64 = arith.constant 64 : index
  %x = arith.muli %i, %c256 : index
  %m = arith.minsi %x, %c128 : index
  %n = arith.maxui %x, %c64 : index
  %s = arith.select %b, %x, %c128 : index
  %t = arith.select %b, %x, %j : index
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%m) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{unknown whether a multiple of 128}}
  "test.divisible"(%n) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%s) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{unknown whether a multiple of 128}}
  "test.divisible"(%t) {by = 128 : i64} : (index) -> ()
  return
}

// -----

// Casts: sign extension keeps the value, truncation keeps the low bits.
func.func @casts(%n: i32, %k: i8) {
  %c128 = arith.constant 128 : i32
  %x = arith.muli %n, %c128 : i32
  %xi = arith.index_cast %x : i32 to index
  %xu = arith.index_castui %x : i32 to index
  %e = arith.extsi %x : i32 to i64
  %t = arith.trunci %x : i32 to i8
  %te = arith.extui %t : i8 to i32
  %ti = arith.index_cast %te : i32 to index
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%xi) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%xu) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%e) {by = 128 : i64} : (i64) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%ti) {by = 128 : i64} : (index) -> ()
  return
}

// -----

// Loop induction variables: lower bound + k * step.
func.func @loops(%n: index, %lb: index) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  scf.for %i = %c0 to %n step %c128 {
    // expected-remark @+1 {{proven multiple of 128}}
    "test.divisible"(%i) {by = 128 : i64} : (index) -> ()
  }
  // The spec's chunks of 32 from offset 1: 1, 33, 65, ...
  scf.for %i = %c1 to %n step %c32 {
    // expected-remark @+1 {{proven not a multiple of 32}}
    "test.divisible"(%i) {by = 32 : i64} : (index) -> ()
  }
  scf.for %i = %lb to %n step %c128 {
    // expected-remark @+1 {{unknown whether a multiple of 128}}
    "test.divisible"(%i) {by = 128 : i64} : (index) -> ()
  }
  // A loop-carried value: 0, then +128 each trip.
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    // expected-remark @+1 {{proven multiple of 128}}
    "test.divisible"(%acc) {by = 128 : i64} : (index) -> ()
    %next = arith.addi %acc, %c128 : index
    scf.yield %next : index
  }
  return
}

// -----

#map = affine_map<(d0)[s0] -> (d0 * 256 + s0 * 128, d0 floordiv 2)>
#map1 = affine_map<(d0) -> (d0 * 256 + 64)>
func.func @affine(%i: index, %s: index) {
  %x = affine.apply affine_map<(d0)[s0] -> (d0 * 256 + s0 * 128)>(%i)[%s]
  %y = affine.apply #map1(%i)
  %z = affine.apply affine_map<(d0) -> ((d0 * 1024) floordiv 4)>(%i)
  %w = affine.apply affine_map<(d0) -> ((d0 * 256 + 3) mod 64)>(%i)
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%x) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven not a multiple of 128}}
  "test.divisible"(%y) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 256}}
  "test.divisible"(%z) {by = 256 : i64} : (index) -> ()
  // expected-remark @+1 {{proven not a multiple of 2}}
  "test.divisible"(%w) {by = 2 : i64} : (index) -> ()
  return
}

// -----

// Block and thread ids times constants; an id whose upper bound is 1 is 0.
#im = #tessel.indexing_map<"(th_x, bl_x) -> (bl_x * 1024 + th_x * 8, th_x), domain: th_x in [0, 127], bl_x in [0, 15]">
func.func @grid() {
  %th = gpu.thread_id x upper_bound 128
  %bl = gpu.block_id x upper_bound 16
  %one = gpu.block_id y upper_bound 1
  %c128 = arith.constant 128 : index
  %b = arith.muli %bl, %c128 : index
  %o, %t = tessel.apply_indexing #im(%th, %bl)
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%b) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{unknown whether a multiple of 128}}
  "test.divisible"(%th) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%one) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 8}}
  "test.divisible"(%o) {by = 8 : i64} : (index) -> ()
  // expected-remark @+1 {{unknown whether a multiple of 16}}
  "test.divisible"(%o) {by = 16 : i64} : (index) -> ()
  return
}

// -----

// Promises are trusted, and combine with what is known.
func.func @assume(%i: index, %n: i32) {
  %c8 = arith.constant 8 : index
  %a = tpu.assume_multiple %i, 128 : index
  %b = arith.muli %a, %c8 : index
  %k = tpu.assume_multiple %n, 16 : i32
  %ki = arith.index_cast %k : i32 to index
  %e = arith.muli %i, %c8 : index
  %f = tpu.assume_multiple %e, 6 : index
  // expected-remark @+1 {{proven multiple of 128}}
  "test.divisible"(%a) {by = 128 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 1024}}
  "test.divisible"(%b) {by = 1024 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 16}}
  "test.divisible"(%ki) {by = 16 : i64} : (index) -> ()
  // expected-remark @+1 {{proven multiple of 24}}
  "test.divisible"(%f) {by = 24 : i64} : (index) -> ()
  return
}
