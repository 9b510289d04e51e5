#!/usr/bin/env bash
# The main job: the emitter seed's GELU fusion, bf16[6,512,4096], compiled
# for this CPU, run, checked against the reference evaluator and timed
# against a plain copy of the same bytes; then the layout of one TPU tile.
# Run by ./build.sh with build/bin on PATH.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gelu="$root/examples/gelu.hlo"

# Prints the command, runs it, keeps the first N lines of its output.
head_of() {
  local n="$1"
  shift
  printf '\n$ %s | head -%s\n' "$*" "$n"
  "$@" | head -"$n"
}

run() {
  local line="$" arg
  for arg in "$@"; do
    case "$arg" in
      *[^A-Za-z0-9_./,=-]*) line+=" '$arg'" ;;
      *) line+=" $arg" ;;
    esac
  done
  printf '\n%s\n' "$line"
  "$@"
}

echo "== The seed's GELU: one loop fusion, partitioned into one function"
head_of 3 tessel compile "$gelu" --emit=partition

echo
echo "== The thread -> element map of the loop emitter (GPU launch: 128"
echo "   threads of 4 elements, 24576 blocks; on the CPU a thread is an element)"
head_of 1 tessel compile "$gelu" --emit=mlir --gpu-launch
head_of 1 tessel compile "$gelu" --emit=mlir

echo
echo "== Compiled, run on random bf16 inputs, checked and timed (median of 20):"
echo "   a bf16 input has 65536 values, so the kernel runs as a lookup in a"
echo "   table of its own results (tessel compile --explain says so)"
head_of 6 tessel compile "$gelu" --explain
run tessel run "$gelu" --check --repeat 20
echo
echo "== The same kernel computing every element (--no-tables)"
run tessel run "$gelu" --check --repeat 20 --no-tables

echo
echo "== Where a bf16[3,300] array lives on a TPU: (8,128)(2,1) tiles"
run tessel layout tpu 'bf16[3,300]'
run tessel layout draw 'bf16[3,300]{1,0:T(4,128)(2,1)}'
echo
echo "More: examples/layout-demo.sh (XLA's tiled-layout figures), README.md."
