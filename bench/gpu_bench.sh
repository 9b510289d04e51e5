#!/usr/bin/env bash
# The GPU benchmark of issue 16, for a machine with an NVIDIA GPU, its
# driver and the CUDA toolkit: tessel's kernels on the GPU (checked against
# the evaluator, then timed alone with CUDA events) next to a copy inside
# the device and the memory's peak, and the seed's GELU next to the same
# fusion written by hand in CUDA (bench/cuda/gelu_bf16.cu, built by nvcc).
#
#   bench/gpu_bench.sh [BUILD_DIR] [REPEAT]      (defaults: build, 20)
#
# Targets (issue 16): loop fusions >= 90% of the memory's bandwidth,
# transposes >= 80%, reductions >= 80%.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeat=${2:-20}
tessel="$build/bin/tessel"

nvcc=""
for root in "${CUDA_HOME:-}" "${CUDA_PATH:-}"; do
  if [[ -n "$root" && -x "$root/bin/nvcc" ]]; then nvcc="$root/bin/nvcc"; break; fi
done
[[ -z "$nvcc" ]] && nvcc=$(command -v nvcc || true)
[[ -z "$nvcc" && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
if ! command -v nvidia-smi > /dev/null; then
  echo "gpu_bench: no nvidia-smi: this machine has no NVIDIA GPU driver" >&2
  exit 1
fi
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)

for case in examples/gelu.hlo bench/codegen/transpose_f32.hlo \
            bench/codegen/column_sum_f32.hlo bench/codegen/row_max_f32.hlo \
            bench/codegen/row_sum_f32.hlo bench/codegen/softmax_f32.hlo \
            bench/codegen/layernorm_f32.hlo bench/codegen/column_max_f32.hlo \
            bench/codegen/transpose_bf16.hlo bench/codegen/transpose_fused_f32.hlo \
            bench/codegen/transpose_fused_s8.hlo bench/codegen/softmax_bf16.hlo \
            bench/codegen/layernorm_bf16.hlo bench/codegen/convert_chain_bf16.hlo \
            bench/codegen/broadcast_add.hlo bench/codegen/f32_chain.hlo; do
  echo "== $case"
  "$tessel" run "$case" --device gpu --check --repeat "$repeat"
done

if [[ -n "$nvcc" ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$nvcc" -O3 -arch="sm_$sm" -o "$tmp/gelu_bf16" bench/cuda/gelu_bf16.cu
  echo "== hand-written CUDA: the same GELU"
  "$tmp/gelu_bf16" "$repeat"
  echo "== hand-written CUDA: the GELU 16 times larger"
  "$tmp/gelu_bf16" "$repeat" 96
else
  echo "gpu_bench: no nvcc (set CUDA_HOME): the hand-written peer is skipped" >&2
fi
