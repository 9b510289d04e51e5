#!/usr/bin/env bash
# Packs a built tessel for a GPU machine that has the NVIDIA driver and CUDA
# toolkit but not Debian's LLVM/MLIR 19: the `tessel` binary, the Codegen
# unit tests (whose GPU-launch checks TESSEL_TEST_BACKEND=nvptx sends to the
# GPU), the relayout tests and benchmark (for the host CPU) and every
# shared library they load except the C library's, in one .tar.xz that
# scripts/gpu-check.sh unpacks and runs.
#
#   scripts/gpu-kit.sh [BUILD_DIR] [OUT.tar.xz]   (defaults: build, gpu-kit.tar.xz)
#
# libLLVM loads libz3 (its static analyzer's solver) and libxml2 (Windows
# manifests) but tessel never calls them; they and ICU would double the
# kit, so they are replaced by stubs that define the same symbols and
# versions and abort if called. libLLVM binds functions lazily, so the stubs
# are only reached if one of those functions is called.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-gpu-kit.tar.xz}
for f in "$build/bin/tessel" "$build/unittests/TesselCodegenTests"; do
  [[ -x "$f" ]] || { echo "gpu-kit: $f is not built (ninja -C $build tessel TesselCodegenTests)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kit="$tmp/tessel-kit"
mkdir -p "$kit/bin" "$kit/lib" "$tmp/stub"
cp "$build/bin/tessel" "$build/unittests/TesselCodegenTests" "$kit/bin/"
# For `gpu-check.sh KIT N cpu` (the host CPU's relayout tests and
# benchmark), when built; they load no library the two above do not.
for f in "$build/bench/relayout-bench" "$build/unittests/TesselRelayoutTests"; do
  [[ -x "$f" ]] && cp "$f" "$kit/bin/"
done
# The source directory the tests were built in: they read the corpus from it.
grep -m1 '^tessel_SOURCE_DIR:STATIC=' "$build/CMakeCache.txt" | cut -d= -f2 > "$kit/SOURCE_DIR"
git rev-parse --short HEAD > "$kit/COMMIT" 2>/dev/null || true

libs=$(ldd "$build/bin/tessel" "$build/unittests/TesselCodegenTests" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u)
stubbed=""
for lib in $libs; do
  name=$(basename "$lib")
  case "$name" in
    libc.so.*|libm.so.*|libgcc_s.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
    libz3.so.*|libxml2.so.*) stubbed="$stubbed $name" ;;
    libicu*|liblzma.so.*) ;;  # only libxml2 needs these
    *) cp -L "$lib" "$kit/lib/$name" ;;
  esac
done

# A stub of library $1 with the undefined symbols of libLLVM/libMLIR that
# it defines, in their symbol versions.
stub() {
  local name=$1 prefix=$2
  local syms
  syms=$(nm -D --undefined-only "$kit"/lib/libLLVM.so.* "$kit"/lib/libMLIR.so.* 2>/dev/null |
         awk '{print $2}' | grep "^$prefix" | sort -u || true)
  {
    echo '#include <stdlib.h>'
    for s in $syms; do
      local base=${s%%@*}
      if [[ "$base" == xmlFree ]]; then
        echo 'void (*xmlFree)(void *) = free;'  # a variable in libxml2
      else
        echo "void $base(void) { abort(); }"
      fi
    done
  } > "$tmp/stub/$name.c"
  local versions
  versions=$(printf '%s\n' $syms | grep '@' | sed 's/.*@//' | sort -u || true)
  local map="$tmp/stub/$name.map" flags=()
  if [[ -n "$versions" ]]; then
    : > "$map"
    local previous=""
    for v in $versions; do
      echo "$v { global:" >> "$map"
      printf '%s\n' $syms | grep "@$v\$" | sed 's/@.*/;/' >> "$map"
      echo "} $previous;" >> "$map"
      previous=$v
    done
    flags=(-Wl,--version-script="$map")
  fi
  gcc -shared -fPIC -O2 -Wl,-soname,"$name" "${flags[@]}" -o "$kit/lib/$name" "$tmp/stub/$name.c"
}
for name in $stubbed; do
  case "$name" in
    libz3.so.*) stub "$name" Z3_ ;;
    libxml2.so.*) stub "$name" xml ;;
  esac
done
# The kit must load with nothing but its own lib/ and the C library.
missing=$(LD_LIBRARY_PATH="$kit/lib" ldd "$kit/bin/tessel" "$kit/bin/TesselCodegenTests" | grep 'not found' || true)
[[ -z "$missing" ]] || { echo "gpu-kit: unresolved libraries: $missing" >&2; exit 1; }
LD_LIBRARY_PATH="$kit/lib" "$kit/bin/tessel" compile examples/gelu.hlo --target=nvptx --emit=ptx > /dev/null
tar -C "$tmp" -cf - tessel-kit | xz -T0 -4 > "$out"
echo "gpu-kit: $out ($(du -h "$out" | cut -f1)) from $(cat "$kit/COMMIT" 2>/dev/null)"
