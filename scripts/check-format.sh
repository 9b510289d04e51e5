#!/usr/bin/env bash
# Fails when a C++ file differs from clang-format-19's output (LLVM style).
#   scripts/check-format.sh          check
#   scripts/check-format.sh --fix    reformat in place
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.h' '*.cpp')
if [ "${1:-}" = "--fix" ]; then
  clang-format-19 -i "${files[@]}"
  exit 0
fi
clang-format-19 --dry-run --Werror "${files[@]}"
echo "format: ${#files[@]} files clean"
