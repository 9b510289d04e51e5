#!/usr/bin/env bash
# Replays the reproducers of the bad-input campaign of 2026-11-23
# (../shared/reports/faults-2026-11-23.md, D1-D27, and the jax list of
# issue 13) on files this script writes itself, and checks for each the
# exit status, the message, that no run hangs (the report's rule: 20 s)
# and that no output is left half-written.
#
#   replay-reproducers.sh WORKDIR        (tessel on PATH)
#
# Prints one line per failed check and exits 1 if any failed.
set -u
work=${1:?usage: replay-reproducers.sh WORKDIR}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
failures=0

# run STATUS PATTERN CMD...: runs CMD (20 s at most), checks its exit
# status and that its stdout+stderr match the extended regex PATTERN.
run() {
  local want=$1 pattern=$2
  shift 2
  timeout 20 "$@" > out.log 2>&1
  local got=$?
  if [ "$got" = 124 ]; then
    echo "FAIL (hang): $*"
    failures=$((failures + 1))
  elif [ "$got" != "$want" ]; then
    echo "FAIL (exit $got, expected $want): $*"
    head -c 600 out.log
    failures=$((failures + 1))
  elif [ -n "$pattern" ] && ! grep -Eq -- "$pattern" out.log; then
    echo "FAIL (message): $*"
    echo "  expected /$pattern/, got: $(head -c 600 out.log)"
    failures=$((failures + 1))
  fi
}

# check DESCRIPTION CMD...: a condition that must hold.
check() {
  local what=$1
  shift
  if ! "$@"; then
    echo "FAIL: $what"
    failures=$((failures + 1))
  fi
}

unchanged() { [ "$(cat "$1")" = OLD ]; }

printf 'HloModule t\nENTRY main {\n  x = s32[2,3] parameter(0)\n  ROOT t = (s32[2,3], s32[2,3]) tuple(x, x)\n}\n' > tuple.hlo
printf 'HloModule m\nENTRY main {\n  ROOT x = f32[2] parameter(0)\n}\n' > id.hlo
head -c 60 /dev/zero > in.bin
# A (2,3) s32 .npy and a (2,) f32 .npy, written byte by byte.
python3 - <<'EOF'
import struct
def npy(name, descr, shape, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(name, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
npy("x.npy", "<i4", "(2, 3)", struct.pack("<6i", 1, 2, 3, 4, 5, 6))
npy("f2.npy", "<f4", "(2,)", struct.pack("<2f", 1, 2))
EOF

# D1: writers keep devices, symlinks and modes.
if [ "$(id -u)" = 0 ]; then
  mknod -m 666 mynull c 1 3
  run 0 '' tessel layout draw 'f32[3,5]{1,0:T(2,2)}' --svg mynull
  check "D1: mynull is still a character device" test -c mynull
fi
run 0 '' tessel layout draw 'f32[3,5]' --svg /dev/null
check "D1: /dev/null is still a character device" test -c /dev/null
run 0 '' tessel relayout --shape 'f32[3,5]' in.bin /dev/null
run 0 '' tessel hlo eval id.hlo --input f2.npy --output /dev/null
check "D1: /dev/null is still a character device" test -c /dev/null
echo keep > t.svg && ln -s t.svg l.svg
run 0 '' tessel layout draw 'f32[3,5]' --svg l.svg
check "D1: l.svg is still a link" test -L l.svg
check "D1: the link's target was written" grep -q '<svg' t.svg
echo OLD > mode.svg && chmod 640 mode.svg
run 0 '' tessel layout draw 'f32[3,5]' --svg mode.svg
check "D1: the mode stays 640" test "$(stat -c %a mode.svg)" = 640
run 0 '<svg' tessel layout draw 'f32[3,5]' --svg -
run 0 'f32\[2\] \{1, 2\}' tessel hlo eval id.hlo --input - < f2.npy

# D2: deep nesting in the map parser.
run 1 'nest more than 256 deep' tessel indexing simplify "(d0) -> ($(python3 -c "print('('*10000+'d0'+')'*10000)")), domain: d0 in [0, 3]"
run 1 'nest more than 256 deep' tessel indexing simplify "(d0) -> ($(python3 -c "print('-'*50000+'d0')")), domain: d0 in [0, 3]"

# D3: long call and fusion chains; D6: call DAGs.
chain() { # chain KIND N
  python3 - "$@" <<'EOF'
import sys
kind, n = sys.argv[1], int(sys.argv[2])
p = ["HloModule m"]
if kind == "diamond":
    p.append("c0 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}")
    p += [f"c{i} {{\n  p = f32[] parameter(0)\n  a = f32[] call(p), to_apply=c{i-1}\n  b = f32[] call(p), to_apply=c{i-1}\n  ROOT r = f32[] add(a, b)\n}}" for i in range(1, n)]
    p.append(f"ENTRY main {{\n  x = f32[] constant(1)\n  ROOT r = f32[] call(x), to_apply=c{n-1}\n}}")
else:
    call = "call({}), to_apply=c{}" if kind == "call" else "fusion({}), kind=kLoop, calls=c{}"
    p.append("c0 {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] negate(p)\n}")
    p += [f"c{i} {{\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] {call.format('p', i-1)}\n}}" for i in range(1, n)]
    p.append(f"ENTRY main {{\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] {call.format('x', n-1)}\n}}")
print("\n".join(p))
EOF
}
chain call 8000 > chain.hlo
chain fusion 8000 > fusions.hlo
chain diamond 60 > diamond.hlo
run 1 'calls nest 8000 deep from here, more than the 256 levels' tessel indexing chain.hlo
run 1 'calls nest 8000 deep from here, more than the 256 levels' tessel indexing fusions.hlo
run 1 'chain.hlo:32004:3: error: %r: calls nest 8000 deep' tessel hlo verify chain.hlo
run 1 'calls nest 8000 deep' tessel hlo eval chain.hlo --input f2.npy
run 1 'calls nest 8000 deep' tessel compile chain.hlo
run 0 'f32\[\] -5.7646075e\+17' tessel hlo eval diamond.hlo
run 0 'operand id = 0' tessel indexing diamond.hlo
run 1 'with every call inlined the module has more than' tessel run diamond.hlo

# D4: sizes checked before allocating.
run 1 'more than this machine can allocate' tessel relayout --shape 'f32[50000000000,1]' --to '{1,0:T(8,128)}' in.bin y.bin
check "D4: no output" test ! -e y.bin
printf 'HloModule m\nENTRY main {\n  ROOT i = c128[2000000000] iota(), iota_dimension=0\n}\n' > big.hlo
run 1 'cannot hold a value of shape c128\[2000000000\]|iota of c128 is not supported' tessel hlo eval big.hlo

# D5, D10, D11, D14: int64 overflow.
run 1 'overflows int64' tessel indexing compose '(d0) -> (d0 * 3037000500), domain: d0 in [0, 3]' '(d0) -> (d0 * 3037000500), domain: d0 in [0, 9223372036854775807]'
run 1 'overflows int64' tessel indexing compose '(d0) -> (d0 * 1099511627776), domain: d0 in [0, 3]' '(d0) -> (d0 * 1099511627776), domain: d0 in [0, 4611686018427387904]'
run 1 'overflows int64' tessel indexing simplify '(d0) -> (-d0), domain: d0 in [-9223372036854775808, -9223372036854775808]'
run 1 'overflows int64 at this point' tessel indexing eval '(d0) -> (d0 * 2), domain: d0 in [0, 9223372036854775807]' 4611686018427387904
run 0 '^9223372036854775806$' tessel indexing eval '(d0) -> (d0), domain: d0 in [0, 9223372036854775807]' 9223372036854775806

# D7: many computations.
python3 -c "
p=['HloModule m']+[f'c{i} {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}}' for i in range(100000)]
p+=['ENTRY main {\n  ROOT x = f32[] constant(1)\n}']
open('comps.hlo','w').write('\n'.join(p)+'\n')"
run 0 '^ok$' tessel hlo verify comps.hlo

# D8: several outputs, all or none.
echo OLD > a.npy
run 1 'cannot write nodir/b.npy: no such file or directory' tessel hlo eval tuple.hlo --input x.npy --output a.npy --output nodir/b.npy
check "D8: a.npy keeps its old contents" unchanged a.npy

# D9: devices and FIFOs that never end.
echo OLD > out.bin
run 1 'holds more than 60 bytes' tessel relayout --shape 'f32[3,5]' /dev/zero out.bin
run 1 'holds more than 60 bytes' tessel relayout --shape 'f32[3,5]' /dev/urandom out.bin
check "D9: out.bin keeps its old contents" unchanged out.bin
run 1 'holds more than' tessel hlo eval id.hlo --input /dev/zero
run 1 'holds more than' tessel npu fit --npus 4 --mem 1024 --tensors /dev/zero
run 1 'holds more than' tessel align /dev/zero
mkfifo fifo
yes > fifo 2> /dev/null &
writer=$!
run 1 'holds more than 60 bytes' tessel relayout --shape 'f32[3,5]' fifo out.bin
# The writer ends when the reader closes the FIFO; should it still wait
# for one, end it.
kill "$writer" 2> /dev/null
wait "$writer" 2> /dev/null
check "D9: out.bin keeps its old contents" unchanged out.bin

# D12: --check bounded by work.
run 1 'cannot check' tessel indexing simplify "$(python3 -c "print('(d0) -> (' + '('*60 + 'd0' + ''.join(f' floordiv {i+2}) mod {i+5}' if i%2 else f' + {i}) * 3' for i in range(60)) + '), domain: d0 in [0, 16000000]')")" --check

# D13: pictures bounded.
run 1 'cells, more than' tessel layout draw 'f32[2000,2000]{1,0:T(8,128)}' --max-rows 100000 --max-cols 100000 --svg big.svg
check "D13: no picture" test ! -e big.svg

# D15: negative numbers are arguments.
run 1 'index -1 of dim 0 is out of range' tessel layout index 'f32[3,5]' -1,0
run 1 'address -1 is outside local memory' tessel npu address --npus 4 --mem 1024 -1

# D16: --threads clamped.
run 0 '' tessel relayout --shape 'f32[3,5]' --threads 10000 in.bin out16.bin

# D17: short messages for long inputs.
python3 -c "print(\"'\"+'A'*(1<<20)+\"'\")" > rsp
run 1 'bytes elided' tessel layout explain @rsp
check "D17: the message is short" test "$(wc -c < out.log)" -lt 2000

# D18: positions, once.
printf 'HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\nENTRY main {\n  p = f32[5] parameter(0)\n  ROOT r = f32[5] negate(p)\n}\n' > layout.hlo
run 1 'layout.hlo:1:14: error: entry_computation_layout does not match' tessel hlo verify layout.hlo
printf '\x93NUMPY\x01\x00\x10\x00(nothing here)  ' > bad.npy
run 1 '^bad.npy:1:11: error: npy header: expected' tessel hlo eval id.hlo --input bad.npy

# D19, D20, D26: NPU flags.
run 2 '--npu needs --offset' tessel npu address --npus 4 --mem 1024 --npu 1
run 0 'npu 0 offset 77' tessel npu address --npus 4 --mem 1024 077
run 1 "in --dtype 'nope'" tessel npu explain --npus 4 --mem 1024 --shape 2,3,4,5 --dtype nope
run 2 '--layout strided needs --strides' tessel npu explain --npus 4 --mem 1024 --shape 2,3,4,5 --layout strided

# D21, D22: empty names and directories.
run 2 '--svg needs a file name' tessel layout draw 'f32[3,5]' --svg ''
run 1 'is a directory' tessel layout draw 'f32[3,5]' --svg .
run 1 'is a directory' tessel relayout --shape 'f32[3,5]' in.bin .

# D23: undefined computations of while.
printf 'HloModule m\nENTRY main {\n  z = f32[] constant(0)\n  ROOT w = f32[] while(z), condition=nowhere, body=nowhere2\n}\n' > while.hlo
run 1 'use of undefined computation %nowhere' tessel hlo verify while.hlo

# D24: whole UTF-8 characters.
run 1 "unknown layout attribute 'é'" tessel layout explain 'f32[3,5]{1,0:T(2,2)é}'
check "D24: the message is valid UTF-8" python3 -c "open('out.log', encoding='utf-8').read()"

# D25: an empty --tensors file.
printf '# nothing\n' > empty.txt
run 1 'holds no tensor specs' tessel npu fit --npus 4 --mem 1024 --tensors empty.txt

# D27: empty dims.
run 1 'has size 0' tessel layout index 'f32[0,0]{1,0:T(2,2)}' 0,0

# Issue 13, found by running jax programs.
printf 'HloModule t, entry_computation_layout={(s32[2,3]{1,0})->s32[2,3]{0,1}}\nENTRY main {\n  x = s32[2,3]{1,0} parameter(0)\n  ROOT y = s32[2,3]{0,1} copy(x)\n}\n' > colmajor.hlo
run 0 '' tessel hlo eval colmajor.hlo --input x.npy --output logical.npy
run 0 's32\[2,3\] \{ \{ 1, 2, 3 \}, \{ 4, 5, 6 \} \}' tessel hlo eval colmajor.hlo --input logical.npy
printf 'HloModule m:\nENTRY main {\n  p = f32[2] parameter(0)\n  c = bf16[17,22] constant(1)\n  b = f32[2] opt-barrier(p)\n  s = f32[2] custom-call(b), custom_call_target="Sharding", sharding={replicated}\n  k = pred[2]{0:E(32)} constant({1,0})\n  ROOT r = (f32[2], bf16[17,22], pred[2]{0:E(32)}) tuple(s, c, k)\n}\n' > jax.hlo
run 0 'f32\[2\] \{1, 2\}' tessel hlo eval jax.hlo --input f2.npy
run 0 'ROOT %x = f32\[2\]\{0\} parameter\(0\)' tessel hlo fmt id.hlo
printf 'HloModule m\nENTRY main {\n  ROOT c = f32[300] constant({...})\n}\n' > elided.hlo
run 1 'xla_dump_large_constants' tessel hlo eval elided.hlo
printf '\xef\xbb\xbfHloModule m\nENTRY main {\n  ROOT x = f32[2] parameter(0)\n}\n' > bom.hlo
run 0 '^ok$' tessel hlo verify bom.hlo
cat id.hlo id.hlo > two.hlo
run 1 'a second HloModule' tessel hlo verify two.hlo

# Nothing half-written anywhere: no temporary file is left.
leftovers=$(find . -name '*.tessel-*')
check "no temporary files left: $leftovers" test -z "$leftovers"

if [ "$failures" != 0 ]; then
  echo "$failures checks failed"
  exit 1
fi
echo "all reproducers behave"
