#!/usr/bin/env python3
"""How long `tessel align` takes on a large generated kernel (issue 11).

Writes a kernel of about N index ops (chains of muli/addi/divui/remui/
andi/select over function arguments, loop induction variables and
tpu.assume_multiple promises) with a vector.load on a tiled memref every
few ops, some provably aligned and some not, then times `tessel align`
(parse, divisibility analysis, verifier, report) and prints a Markdown row:

    .venv/bin/python bench/align_bench.py [--ops 100000] [--repeat 5]

The target of issue 11: 100k index ops analysed and verified in < 1 s.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tessel_binary():
    for candidate in ("build/bin/tessel", "build/tools/tessel/tessel"):
        path = ROOT / candidate
        if path.exists():
            return str(path)
    sys.exit("bench/align_bench.py: build tessel first (./build.sh)")


def generate(ops, seed=1):
    """A function of about `ops` index ops and the number of loads in it."""
    rng = random.Random(seed)
    memref = "memref<64x8192xf32, #tpu.tiled<(8,128),[64,1]>>"
    lines = [f"func.func @big(%m: {memref}, %a: index, %b: index) {{"]
    lines.append("  %c0 = arith.constant 0 : index")
    lines.append("  %c1 = arith.constant 1 : index")
    lines.append("  %c4 = arith.constant 4 : index")
    lines.append("  %c128 = arith.constant 128 : index")
    lines.append("  %c4096 = arith.constant 4096 : index")
    lines.append("  %c8191 = arith.constant 8191 : index")
    lines.append("  %p = tpu.assume_multiple %a, 128 : index")
    values = ["%p", "%b", "%c128", "%c4"]
    count = 0
    loads = 0
    name = 0
    while count < ops:
        x = rng.choice(values)
        y = rng.choice(values)
        kind = rng.randrange(8)
        v = f"%v{name}"
        name += 1
        if kind == 0:
            lines.append(f"  {v} = arith.addi {x}, {y} overflow<nsw> : index")
        elif kind == 1:
            lines.append(f"  {v} = arith.muli {x}, %c128 overflow<nsw> : index")
        elif kind == 2:
            lines.append(f"  {v} = arith.divui {x}, %c4 : index")
        elif kind == 3:
            lines.append(f"  {v} = arith.remui {x}, %c4096 : index")
        elif kind == 4:
            lines.append(f"  {v} = arith.andi {x}, %c8191 : index")
        elif kind == 5:
            lines.append(f"  {v} = arith.maxui {x}, {y} : index")
        elif kind == 6:
            lines.append(f"  {v} = tpu.assume_multiple {x}, 128 : index")
        else:
            lines.append(f"  {v} = arith.subi {x}, {y} overflow<nsw> : index")
        values.append(v)
        if len(values) > 64:
            values.pop(4)
        count += 1
        if count % 32 == 0:
            # Keep the index in bounds for the shape: (v mod 4096) rounded
            # into the memref; the verifier only asks about divisibility.
            w = f"%w{loads}"
            lines.append(f"  {w} = arith.remui {v}, %c4096 : index")
            lines.append(
                f"  %l{loads} = vector.load %m[%c0, {w}] : {memref}, "
                "vector<8x128xf32>")
            loads += 1
            count += 2
    lines.append("  return")
    lines.append("}")
    return "\n".join(lines) + "\n", loads


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", type=int, default=100000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tessel = tessel_binary()
    text, loads = generate(args.ops)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.mlir")
        with open(path, "w") as f:
            f.write(text)
        times = []
        failing = None
        for _ in range(args.repeat):
            start = time.perf_counter()
            run = subprocess.run([tessel, "align", path], capture_output=True,
                                 text=True)
            times.append(time.perf_counter() - start)
            if run.returncode not in (0, 1):
                sys.exit("tessel align failed:\n" + run.stderr[-2000:])
            failing = run.stdout.count("cannot statically prove") + \
                run.stderr.count("cannot statically prove")
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    print(f"CPU: {cpu}")
    print("| index ops | loads | loads not proven aligned | tessel align, "
          f"median of {args.repeat} (s) |")
    print("|---:|---:|---:|---:|")
    print(f"| {args.ops} | {loads} | {failing} | "
          f"{statistics.median(times):.3f} |")


if __name__ == "__main__":
    main()
