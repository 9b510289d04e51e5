#!/usr/bin/env bash
# The checks of issue 16 that need an NVIDIA GPU, in one run:
#   1. the Codegen unit tests with TESSEL_TEST_BACKEND=nvptx: every check
#      made with the GPU's launch (the jax corpus, the random fusions, every
#      emitter's cases) compiles to PTX and runs on the GPU, against the
#      evaluator;
#   2. bench/gpu_bench.sh: the benchmark cases checked and timed on the GPU,
#      next to a device copy, the memory's peak and a hand-written CUDA GELU;
#   3. the GELU 16 times larger (bf16[96,512,4096], 805 MB moved), timed;
#   4. both GELUs with --excess-precision (XLA's default numerics), timed.
#
#   scripts/gpu-check.sh [KIT.tar.xz | BUILD_DIR] [REPEAT] [tests | cpu]
#
# With `tests` as the third argument only step 1 runs (about 80 s on an
# H100 with 16 CPUs), for a second look after a fix. With `cpu`, nothing
# runs on the GPU: the host CPU's model, ISA and caches, the relayout
# tests (each kernel at every instruction set level the CPU has), the
# relayout benchmark at 64 and 256 MiB with 1, 2 and 8 threads, and every
# bench/codegen case with --check at 1 and 2 threads (about 4 minutes on
# the Intel Xeon of an H100 host; logs into $OUT when it is set). A GPU
# machine's host is often the only Intel CPU, or the only one with
# AVX-512, a session gets.
#
# KIT.tar.xz comes from scripts/gpu-kit.sh, for a machine without LLVM 19.
set -uo pipefail
cd "$(dirname "$0")/.."
where=${1:-build}
repeat=${2:-20}
only=${3:-all}
status=0
if [[ -f "$where" ]]; then
  rm -rf /tmp/tessel-kit
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall("/tmp")' "$where" || exit 1
  kit=/tmp/tessel-kit
  export LD_LIBRARY_PATH="$kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  tessel="$kit/bin/tessel"
  tests="$kit/bin/TesselCodegenTests"
  build="$kit"
  # The tests read the corpus from the directory they were built in.
  source=$(cat "$kit/SOURCE_DIR")
  if [[ -n "$source" && ! -e "$source/test/Hlo/corpus" ]]; then
    mkdir -p "$(dirname "$source")" && ln -sfn "$PWD" "$source"
  fi
  echo "kit from commit $(cat "$kit/COMMIT" 2>/dev/null)"
else
  build=$where
  tessel="$build/bin/tessel"
  tests="$build/unittests/TesselCodegenTests"
fi
if [[ -z "${TESSEL_CUDA_DRIVER:-}" ]] && ! ldconfig -p | grep -q 'libcuda\.so\.1 '; then
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/local/cuda/compat; do
    [[ -e "$d/libcuda.so.1" ]] && { export TESSEL_CUDA_DRIVER="$d/libcuda.so.1"; break; }
  done
fi
if [[ "$only" == cpu ]]; then
  bin=$(dirname "$tessel")
  out=${OUT:-/tmp}
  {
    lscpu
    for d in /sys/devices/system/cpu/cpu0/cache/index*; do
      echo "$d: level $(cat "$d/level") $(cat "$d/type") $(cat "$d/size") shared with $(cat "$d/shared_cpu_list")"
    done
    grep -m1 '^flags' /proc/cpuinfo
  } > "$out/cpu.txt" 2>&1
  grep -E 'Model name|^CPU\(s\)|L[123]' "$out/cpu.txt"
  echo "=== relayout tests (each at every level the CPU has)"
  timeout 300 "$bin/TesselRelayoutTests" --gtest_brief=1 > "$out/relayout-tests.log" 2>&1 || status=1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/relayout-tests.log"
  echo "=== relayout benchmark"
  timeout 300 "$bin/relayout-bench" --sizes 64,256 --threads 1,2,8 --min-runs 3 --min-time 0.2 2>&1 | tee "$out/relayout.txt" || status=1
  echo "=== the fusion compiler's bench cases"
  for m in bench/codegen/*.hlo; do
    echo "== $m"
    timeout 60 "$tessel" run "$m" --check --repeat "$repeat" --threads 1 2>&1 | grep -E '^check output|^time|copy of' || status=1
    timeout 60 "$tessel" run "$m" --repeat "$repeat" --threads 2 2>&1 | grep -E '^time|copy of' || status=1
  done 2>&1 | tee "$out/codegen.txt"
  exit $status
fi
nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.memory --format=csv
lscpu | grep -m1 'Model name'

echo "=== 1. Codegen unit tests, GPU launches on the GPU"
shards=${TESSEL_GPU_SHARDS:-8}
start=$(date +%s)
for i in $(seq 0 $((shards - 1))); do
  TESSEL_TEST_BACKEND=nvptx GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
    timeout "${TESSEL_GPU_TEST_TIMEOUT:-240}" "$tests" --gtest_brief=1 > "/tmp/gpu-tests.$i.log" 2>&1 &
done
for i in $(seq 0 $((shards - 1))); do
  wait -n || status=1
done
for i in $(seq 0 $((shards - 1))); do
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests ran|^\[  FAILED  \]' "/tmp/gpu-tests.$i.log" | sed "s/^/shard $i: /"
  if grep -q '^\[  FAILED  \]' "/tmp/gpu-tests.$i.log"; then
    status=1
    # The first failures in full.
    grep -B2 -A25 -m3 'Failure$' "/tmp/gpu-tests.$i.log" | head -120
  fi
done
echo "tests: $(( $(date +%s) - start )) s"
[[ -n "${OUT:-}" ]] && cat /tmp/gpu-tests.*.log > "$OUT/gpu-tests.log"
[[ "$only" == tests ]] && exit $status

# Steps 2 to 4, also into a log that bench/gpu_table.py makes a table of.
bench_log=/tmp/gpu-bench.log
rm -f /tmp/gpu-bench.status
{
  echo "=== 2. bench/gpu_bench.sh"
  bench/gpu_bench.sh "$build" "$repeat" || status=1

  echo "=== 3. the GELU 16 times larger"
  sed 's/bf16\[6,512,4096\]/bf16[96,512,4096]/g' examples/gelu.hlo > /tmp/gelu96.hlo
  echo "== /tmp/gelu96.hlo"
  "$tessel" run /tmp/gelu96.hlo --device gpu --repeat "$repeat" || status=1
  echo "=== 4. with XLA's numerics (--excess-precision: f32 between the ops)"
  for m in examples/gelu.hlo /tmp/gelu96.hlo; do
    echo "== $m (--excess-precision)"
    "$tessel" run "$m" --device gpu --excess-precision --repeat "$repeat" || status=1
  done
  echo "$status" > /tmp/gpu-bench.status
} 2>&1 | tee "$bench_log"
status=$(cat /tmp/gpu-bench.status 2>/dev/null || echo 1)
echo "=== the table (bench/gpu_table.py)"
python3 bench/gpu_table.py "$bench_log" || status=1
[[ -n "${OUT:-}" ]] && cp "$bench_log" "$OUT/gpu-bench.log"
exit $status
