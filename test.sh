#!/usr/bin/env bash
# Every test: unit tests, lit tests of the tools, the Python binding's
# pytest suite, the formatting check, the core under ASan+UBSan, the MLIR
# layers with assertions on, and the parser fuzzers for a bounded time.
#   ./test.sh           all of it (what CI runs)
#   ./test.sh --quick   unit, lit and Python tests only
#   TESSEL_FUZZ_SECONDS=N  seconds per fuzz target (default 30)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$root"
quick=0
[ "${1:-}" = "--quick" ] && quick=1
scripts/bootstrap.sh
jobs=$(nproc)

step() { printf '\n=== %s\n' "$*"; }

# The GPU tests need CUDA's ptxas and libdevice (no GPU): a CUDA toolkit if
# one is installed, else the one requirements.txt put in .venv.
if [ -z "${CUDA_HOME:-}${CUDA_PATH:-}" ] && ! command -v ptxas >/dev/null &&
   [ ! -x /usr/local/cuda/bin/ptxas ]; then
  for d in .venv/lib/python3*/site-packages/nvidia/cuda_nvcc; do
    [ -x "$d/bin/ptxas" ] && export CUDA_HOME="$root/$d"
  done
fi
echo "CUDA toolkit for the GPU tests: ${CUDA_HOME:-${CUDA_PATH:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}}"

step "build (Release)"
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
ninja -C build
step "unit and lit tests"
ninja -C build check-tessel
step "Python binding (pytest)"
if [ -f build/python/tessel/__init__.py ]; then
  PYTHONPATH="$root/build/python" TESSEL_BIN="$root/build/bin/tessel" \
    .venv/bin/python -m pytest -q -p no:cacheprovider python/tests
else
  echo "skipped: build/ was configured with TESSEL_ENABLE_PYTHON=OFF"
fi
[ $quick -eq 1 ] && { echo "quick run: skipped format, sanitizers, assertions and fuzzing"; exit 0; }

step "formatting (clang-format-19)"
scripts/check-format.sh

step "core under ASan+UBSan"
[ -f build-asan/build.ninja ] || cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DTESSEL_ENABLE_MLIR=OFF -DTESSEL_ENABLE_BENCHMARKS=OFF -DTESSEL_SANITIZE=address,undefined
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"

# build/ stays a plain Release build (NDEBUG): ./build.sh and the benchmarks
# share it. The ASan build above is Debug, so the core's asserts fire there,
# but it leaves out the MLIR layers. build-assert is the cheapest way to run
# the Indexing layer and up with their asserts (and the inline asserts of the
# LLVM/MLIR headers, llvm::cast & co.) on: Release plus
# TESSEL_ENABLE_ASSERTIONS, and it builds only check-tessel-mlir's targets
# (the MLIR layers' unit tests, tessel, tessel-opt and the libraries under
# them; no benchmarks, no core unit tests). Measured on the 2-core CI
# machine, configure, build and tests: about 1.7 minutes with a cold ccache
# (66 compiles), 30 s with a warm one.
step "MLIR layers with assertions (build-assert)"
[ -f build-assert/build.ninja ] || cmake -S . -B build-assert -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DTESSEL_ENABLE_ASSERTIONS=ON -DTESSEL_ENABLE_BENCHMARKS=OFF
ninja -C build-assert check-tessel-mlir

step "fuzzing the parsers"
[ -f build-fuzz/build.ninja ] || CC=clang-19 CXX=clang++-19 cmake -S . -B build-fuzz -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSEL_ENABLE_TESTS=OFF \
  -DTESSEL_ENABLE_BENCHMARKS=OFF -DTESSEL_ENABLE_FUZZERS=ON
ninja -C build-fuzz
scripts/run-fuzzers.sh build-fuzz "${TESSEL_FUZZ_SECONDS:-30}"
step "all tests passed"
