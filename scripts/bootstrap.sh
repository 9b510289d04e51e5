#!/usr/bin/env bash
# Installs what tessel needs, only what is missing, and configures the build.
# Called by ./build.sh and ./test.sh; safe to run any number of times.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# Debian packages, and why each is here (README lists the same):
packages=(
  cmake ninja-build ccache g++      # the build
  llvm-19-dev libmlir-19-dev        # LLVM/MLIR 19: code generator, tools' command line
  mlir-19-tools llvm-19-tools       # mlir-opt, FileCheck, not, lit for the tool tests
  libgtest-dev libgmock-dev         # unit tests
  libbenchmark-dev                  # benchmarks
  libtbb-dev                        # relayout's thread pool (composable, no oversubscription)
  libhwy-dev                        # Google Highway: relayout's AVX2/AVX-512 kernels, picked at run time
  libeigen3-dev                     # benchmark peer: Eigen's tensor shuffle
  clang-19 libclang-rt-19-dev libfuzzer-19-dev  # libFuzzer targets of the parsers
  clang-format-19                   # the formatting check
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
command -v python3 >/dev/null || missing+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
# Python.h, for the nanobind extension (python/).
python3 -c 'import os, sysconfig; p = sysconfig.get_paths()["include"]; exit(not os.path.exists(p + "/Python.h"))' ||
  missing+=(python3-dev)
if ((${#missing[@]})); then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python packages go into .venv (never the system): numpy for the benchmark
# peers and .npy checks, ml_dtypes for bf16/f8 arrays, nanobind,
# scikit-build-core and pytest for the Python binding.
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv"
  python3 -m venv .venv
fi
want=$(sha256sum requirements.txt | cut -d' ' -f1)
have=$(cat .venv/.requirements.sha256 2>/dev/null || true)
if [ "$want" != "$have" ]; then
  echo "bootstrap: installing Python packages from requirements.txt"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
  echo "$want" > .venv/.requirements.sha256
fi
