#!/usr/bin/env bash
# The arithmetic-bound bench/codegen cases at two vector widths, on this
# CPU: checked once at each, then timed at 1 and 2 threads, two rounds,
# alternating (`tessel run --prefer-vector-width`; 0 is tessel's default).
# Written for a GPU machine's host CPU (the only Intel one sessions get):
#
#   scripts/vector-width-ab.sh [KIT.tar.xz | none]     (output also in $OUT)
#   WIDTHS="0 256" CASES="f32_chain softmax_f32" scripts/vector-width-ab.sh
set -u
cd "$(dirname "$0")/.."
widths=${WIDTHS:-0 256}
kit=${1:-gpu-kit.tar.xz}
if [[ -f "$kit" ]]; then
  rm -rf /tmp/tessel-kit
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall("/tmp")' "$kit" || exit 1
  export LD_LIBRARY_PATH=/tmp/tessel-kit/lib
  tessel=/tmp/tessel-kit/bin/tessel
else
  tessel=build/bin/tessel
fi
out=${OUT:-/tmp}
lscpu | grep -m1 'Model name'
cases=${CASES:-softmax_bf16 softmax_f32 layernorm_bf16 layernorm_f32 f32_chain transpose_fused_f32}
for m in $cases; do
  for w in $widths; do
    opt=""; [[ $w != 0 ]] && opt="--prefer-vector-width=$w"
    timeout 60 $tessel run bench/codegen/$m.hlo --check --repeat 1 $opt 2>&1 | grep -E '^check' | sed "s/^/$m w=$w /"
  done
done
for t in 1 2; do
  for round in 1 2; do
    for m in $cases; do
      for w in $widths; do
        opt=""; [[ $w != 0 ]] && opt="--prefer-vector-width=$w"
        r=$(timeout 60 $tessel run bench/codegen/$m.hlo --repeat 20 --threads $t $opt 2>&1 | grep -E '^time|copy of' | sed -E 's/.*time: ([0-9.]+) ms.*/\1/; s/.*copy of the same bytes: ([0-9.]+) ms.*at ([0-9]+)% .*/copy \1 \2%/' | tr '\n' ' ')
        echo "t=$t round=$round $m w=$w $r"
      done
    done
  done
done 2>&1 | tee $out/vw-ab.txt
