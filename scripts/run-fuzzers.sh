#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD/fuzz for SECONDS each, starting from the
# committed seed corpus. A crash fails the run and leaves the input in
# fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:?usage: run-fuzzers.sh BUILD_DIR SECONDS}
seconds=${2:-30}
mkdir -p fuzz/artifacts
for target in "$build"/fuzz/*Fuzzer; do
  name=$(basename "$target")
  corpus=fuzz/corpus/${name%Fuzzer}
  work=$(mktemp -d)
  [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
  echo "fuzz: $name for ${seconds}s"
  "$target" -max_total_time="$seconds" -print_final_stats=0 \
    -artifact_prefix=fuzz/artifacts/ "$work" 2>&1 | tail -n 3
  rm -rf "$work"
done
