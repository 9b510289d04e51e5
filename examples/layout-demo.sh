#!/usr/bin/env bash
# A tour of tiled layouts: explain and draw the two
# figures of XLA's tiled-layout document and a bf16 TPU layout.
# Run by ./build.sh with build/bin on PATH; pictures go to build/demo/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$root/build/demo"
mkdir -p "$out"

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

echo "== Figure 1: f32[3,5] tiled by 2x2 (element (2,3) is at offset 17)"
run tessel layout index 'f32[3,5]{1,0:T(2,2)}' 2,3
run tessel layout draw 'f32[3,5]{1,0:T(2,2)}' --svg "$out/figure1.svg"
run tessel layout decompose 'f32[3,5]{1,0:T(2,2)}'

echo
echo "== Figure 2: bf16[4,8] tiled by (2,4) then (2,1)"
run tessel layout draw 'bf16[4,8]{1,0:T(2,4)(2,1)}' --svg "$out/figure2.svg"
run tessel layout index 'bf16[8,8]{1,0:T(2,4)(2,1,1,1)}' 6,5

echo
echo "== A bf16 activation on a TPU"
run tessel layout tpu 'bf16[3,300]'
run tessel layout explain 'bf16[3,300]{1,0:T(8,128)(2,1)}'
run tessel layout draw 'bf16[3,300]{1,0:T(4,128)(2,1)}' --max-cols 10 --svg "$out/bf16-tpu.svg"

echo
echo "== Padding that a dim order avoids"
run tessel layout explain 'f32[1000,3]{1,0:T(8,128)}'

printf '\nSVG pictures: %s\n' "$out"
