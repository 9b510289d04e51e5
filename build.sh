#!/usr/bin/env bash
# The main job: install what is missing, build tessel, then compile, run,
# check and time the emitter seed's GELU fusion (examples/gelu-demo.sh).
#   ./build.sh            build everything, then compile, run, check and time the seed's GELU
#   ./build.sh --no-demo  build only
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$root"
scripts/bootstrap.sh
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
ninja -C build
if [ "${1:-}" != "--no-demo" ]; then
  PATH="$root/build/bin:$PATH" examples/gelu-demo.sh
fi
