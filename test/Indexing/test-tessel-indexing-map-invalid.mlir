// RUN: tessel-opt %s -split-input-file -test-tessel-indexing-map -verify-diagnostics -o /dev/null
// A map that does not parse is an error at the op, naming the column.

// expected-error @+1 {{invalid indexing map: column 10: unknown variable 'd1', expected one of d0}}
func.func private @bad() attributes {tessel.indexing_map = "(d0) -> (d1), domain: d0 in [0, 1]"}

// -----

// expected-error @+1 {{tessel.compose: FIRST has 2 results but SECOND has 1 dims}}
func.func private @bad_compose() attributes {tessel.compose = [
  "(d0) -> (d0, d0), domain: d0 in [0, 1]",
  "(d0) -> (d0), domain: d0 in [0, 1]"]}
