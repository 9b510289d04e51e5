#!/usr/bin/env bash
# Row maxima, minima and sums of several shapes, timed with two or more
# tessel builds alternating (BENCHMARKS.md, "Maxima and minima on the
# bits"): each case checked once with special values by the last build,
# then `tessel run M --repeat 20 --threads 1` per build, three rounds, the
# process's CPU time per run and the copy's.
#
#   scripts/row-reduction-ab.sh BEFORE_TESSEL [MORE_TESSELS...] AFTER_TESSEL
#   ROUNDS=5 scripts/row-reduction-ab.sh /tmp/tessel-before build/bin/tessel
#   SET=short scripts/row-reduction-ab.sh ...   (BENCHMARKS.md, "Short rows
#     on the bits": rows of 8 to 300, 16 MiB each)
#   SET=lanes scripts/row-reduction-ab.sh ...   (BENCHMARKS.md, "Rows as
#     lanes": bf16 and f16 sums and products of rows of 20 to 28)
#   SET=f32max scripts/row-reduction-ab.sh ...  (BENCHMARKS.md, "Zen 5:
#     ... f32 maxima as a compare and select": f32 rows of 32 to 4099)
set -u
cd "$(dirname "$0")/.."
if [[ $# -lt 1 ]]; then
  echo "usage: $0 TESSEL [TESSEL...] (the builds to compare)" >&2
  exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# name type rows cols reducer init
module() {
  cat > "$dir/$1.hlo" <<HLO
HloModule $1
r {
  a = $2[] parameter(0)
  b = $2[] parameter(1)
  ROOT s = $2[] $5(a, b)
}
ENTRY e {
  p = $2[$3,$4] parameter(0)
  z = $2[] constant($6)
  ROOT r = $2[$3] reduce(p, z), dimensions={1}, to_apply=r
}
HLO
}
if [[ "${SET:-}" == short ]]; then
  for c in 8 12 16 24 32 33 40 47 49 100 300; do
    module "max_bf16_x$c" bf16 $((8388608 / c)) $c maximum -inf
    module "max_f16_x$c" f16 $((8388608 / c)) $c maximum -inf
    module "max_f32_x$c" f32 $((4194304 / c)) $c maximum -inf
  done
  module min_bf16_x24 bf16 349525 24 minimum inf
  module min_bf16_x40 bf16 209715 40 minimum inf
elif [[ "${SET:-}" == f32max ]]; then
  module max_f32_4096x4099 f32 4096 4099 maximum -inf
  module min_f32_4096x4096 f32 4096 4096 minimum inf
  module max_f32_16384x1024 f32 16384 1024 maximum -inf
  module max_f32_65536x300 f32 65536 300 maximum -inf
  module max_f32_262144x40 f32 262144 40 maximum -inf
  for c in 32 33 64 128 255; do
    module "max_f32_x$c" f32 $((4194304 / c)) $c maximum -inf
  done
elif [[ "${SET:-}" == lanes ]]; then
  for c in 20 24 28; do
    module "sum_bf16_x$c" bf16 $((8388608 / c)) $c add 0
    module "sum_f16_x$c" f16 $((8388608 / c)) $c add 0
  done
  module mul_bf16_x24 bf16 349525 24 multiply 1
else
module max_bf16_8192x4096 bf16 8192 4096 maximum -inf
module max_bf16_4096x4096 bf16 4096 4096 maximum -inf
module min_bf16_4096x4096 bf16 4096 4096 minimum inf
module max_f16_4096x4096 f16 4096 4096 maximum -inf
module max_bf16_41943x100 bf16 41943 100 maximum -inf
module max_bf16_65536x64 bf16 65536 64 maximum -inf
module max_f16_65536x64 f16 65536 64 maximum -inf
module max_f32_4096x4099 f32 4096 4099 maximum -inf
module min_f32_4096x4099 f32 4096 4099 minimum inf
module max_f32_32768x128 f32 32768 128 maximum -inf
module max_f32_16384x256 f32 16384 256 maximum -inf
module max_f32_65536x64 f32 65536 64 maximum -inf
module sum_f32_65536x64 f32 65536 64 add 0
module sum_f32_32768x128 f32 32768 128 add 0
module sum_f32_43648x96 f32 43648 96 add 0
fi
lscpu | grep -m1 'Model name'
last=${!#}
status=0
for m in "$dir"/*.hlo; do
  "$last" run "$m" --check --special-values 2>&1 | grep -E '^check output' |
    sed "s|^|$(basename "$m" .hlo): |" || status=1
done
for round in $(seq 1 "${ROUNDS:-3}"); do
  for bin in "$@"; do
    for m in "$dir"/*.hlo; do
      line=$("$bin" run "$m" --repeat 20 --threads 1 2>&1 | grep '^cpu time')
      echo "round $round $bin $(basename "$m" .hlo): $line"
    done
  done
done
exit $status
