#!/usr/bin/env bash
# Builds HPTT (github.com/springer13/hptt) with bench/HpttPeer.cpp into one
# shared library that `relayout-bench --hptt LIB` (and
# `bench/relayout_bench.py --hptt LIB`) loads as a peer column. HPTT is not
# part of tessel: bring a checkout of its sources yourself
# (git clone https://github.com/springer13/hptt).
#
#   bench/build-hptt-peer.sh HPTT_DIR [OUT.so]    (default: build/bench/libhptt-peer.so)
#
# Compiled for this CPU (-march=native) with OpenMP and HPTT's AVX kernels
# (-DHPTT_ARCH_AVX, its Makefile's `make avx`: HPTT has no AVX-512 kernels);
# nothing of HPTT is copied into tessel's tree. Some revisions of HPTT's
# transpose.cpp do not compile with -fopenmp (a declaration between
# `#pragma omp parallel for` and its loop); fix that in your checkout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -lt 1 || $# -gt 2 || $1 == -h || $1 == --help ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -ge 1 && ($1 == -h || $1 == --help) ]] && exit 0
  exit 2
fi
hptt=$1
out=${2:-$root/build/bench/libhptt-peer.so}
for f in "$hptt/include/hptt.h" "$hptt/src/transpose.cpp"; do
  [[ -f $f ]] || { echo "build-hptt-peer: $f not found: HPTT_DIR must be a checkout of HPTT's sources" >&2; exit 1; }
done
mkdir -p "$(dirname "$out")"
# shellcheck disable=SC2046
${CXX:-g++} -O3 -march=native -DHPTT_ARCH_AVX -fopenmp -fPIC -shared -std=c++14 -w \
  -I"$hptt/include" $(ls "$hptt"/src/*.cpp) "$root/bench/HpttPeer.cpp" \
  -o "$out"
echo "build-hptt-peer: wrote $out"
