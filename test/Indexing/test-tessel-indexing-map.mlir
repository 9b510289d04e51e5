// RUN: tessel-opt %s -split-input-file -test-tessel-indexing-map -o /dev/null | FileCheck %s

// The spec's examples: a transpose, a pad with interior padding, the loop
// emitter's thread -> element map. Each simplified map is checked against
// the parsed one by enumeration.

// CHECK-LABEL: @transpose parsed: (d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]{{$}}
// CHECK-NEXT: @transpose simplified: (d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]{{$}}
// CHECK-NEXT: @transpose check: same map at 800 points
func.func private @transpose() attributes {tessel.indexing_map =
  "(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]"}

// CHECK-LABEL: @pad parsed:
// CHECK-NEXT: @pad simplified: (d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4), domain: d0 in [1, 7], d1 in [4, 7], (d0 - 1) mod 2 in [0, 0]{{$}}
// CHECK-NEXT: @pad check: same map at 192 points
func.func private @pad() attributes {tessel.indexing_map =
  "(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4), domain: d0 in [0, 11], d1 in [0, 15], d0 - 1 in [0, 6], (d0 - 1) mod 2 in [0, 0], d1 - 4 in [0, 3]"}

// CHECK-LABEL: @loop_emitter parsed: (th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]{{$}}
// CHECK-NEXT: @loop_emitter simplified: (th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]{{$}}
// CHECK-NEXT: @loop_emitter check: not checked, the domain box of {{.*}} has more than 1048576 points
func.func private @loop_emitter() attributes {tessel.indexing_map =
  "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]"}

// -----

// Range-aware folding and gcd splitting.
// CHECK-LABEL: @gcd parsed:
// CHECK-NEXT: @gcd simplified: (d0, d1) -> (d0 floordiv 2, (d0 mod 2) * 4 + d1, d1), domain: d0 in [0, 15], d1 in [0, 3]{{$}}
// CHECK-NEXT: @gcd check: same map at 64 points
func.func private @gcd() attributes {tessel.indexing_map =
  "(d0, d1) -> ((d0 * 4 + d1) floordiv 8, (d0 * 4 + d1) mod 8, d1 mod 4), domain: d0 in [0, 15], d1 in [0, 3]"}

// A reduce reads its reduced dim through a range variable; an unused one goes.
// CHECK-LABEL: @reduce parsed:
// CHECK-NEXT: @reduce simplified: (d0)[s0] -> (d0, s0), domain: d0 in [0, 9], s0 in [0, 19]{{$}}
// CHECK-NEXT: @reduce check: same map at 1200 points
func.func private @reduce() attributes {tessel.indexing_map =
  "(d0)[s0, s1] -> (d0, s0), domain: d0 in [0, 9], s0 in [0, 19], s1 in [0, 4]"}

// CHECK-LABEL: @empty simplified: KNOWN EMPTY
func.func private @empty() attributes {tessel.indexing_map =
  "(d0) -> (d0), domain: d0 in [0, 9], d0 mod 4 in [4, 7]"}

// -----

// Composition: a reverse of a slice.
// CHECK-LABEL: @compose composed: (d0) -> (-d0 + 5), domain: d0 in [0, 3], -d0 + 3 in [0, 3]{{$}}
// CHECK-NEXT: @compose simplified: (d0) -> (-d0 + 5), domain: d0 in [0, 3]{{$}}
// CHECK-NEXT: @compose check: same map at 4 points
func.func private @compose() attributes {tessel.compose = [
  "(d0) -> (-d0 + 3), domain: d0 in [0, 3]",
  "(d0) -> (d0 + 2), domain: d0 in [0, 3]"]}
