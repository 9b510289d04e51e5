#!/usr/bin/env python3
"""Relayout speed: tessel next to the best copy, Eigen, a plain loop and numpy.

Runs build/bench/relayout-bench (tessel, best copy, Eigen, the plain
hand-written reference of bench/PlainReference.cpp) and times numpy's
reshape/transpose/copy of the same data movement on the same sizes, then
prints the CPU, the instruction set level tessel ran at, and the Markdown
table that BENCHMARKS.md records (TESSEL_ISA=sse2|avx2|avx512 caps the level):

    .venv/bin/python bench/relayout_bench.py [--repeat 3] [--sizes 4,64,256]
        [--hptt build/bench/libhptt-peer.so [--hptt-tune]]

With --repeat N the whole C++ run is repeated N times and each figure is the
median over the repeats (the machines are shared and their bandwidth drifts);
ratios are taken within a repeat, then their median is printed.
Options after `--` go to relayout-bench (e.g. `-- --filter f32`).
--hptt adds HPTT as a peer for the f32 cases (bench/build-hptt-peer.sh builds
the library from a checkout of HPTT's sources; --hptt-tune lets HPTT time its
candidates when it plans).
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DTYPES = {"f32": np.float32, "bf16": np.uint16, "s8": np.int8}


def numpy_gbs(row, runs=5):
    """GB/s of numpy doing the case's movement: pad, reshape, transpose, copy
    (None where numpy has no such movement: sub-byte and tiled sources)."""
    if not row["reshape"]:
        return None
    dtype = DTYPES[row["shape"].split("[")[0]]
    dims = [int(d) for d in row["shape"].split("[")[1].split("]")[0].split(",")]
    src = np.arange(int(np.prod(dims)), dtype=np.int64).astype(dtype)
    src = src.reshape(dims)
    pad_to = row["pad_to"]

    def move():
        a = src
        if pad_to:
            a = np.zeros(pad_to, dtype=dtype)
            a[tuple(slice(0, d) for d in dims)] = src
        return a.reshape(row["reshape"]).transpose(row["perm"]).copy()

    move()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out = move()
        times.append(time.perf_counter() - start)
    moved = src.nbytes + out.nbytes
    return moved / statistics.median(times) / 1e9


def peer_cols(rows, key, digits):
    """'GB/s | tessel/peer' of a peer column over the repeats' rows, the
    medians of both; '- | -' where the peer did not run."""
    if rows[0].get(key) is None:
        return "- | -"
    gbs = statistics.median(r[key] for r in rows)
    ratio = statistics.median(r["tessel_gbs"] / r[key] for r in rows)
    return f"{gbs:.2f} | {ratio:.{digits}f}x"


def run_cpp(binary, args):
    """(header, rows): the machine's line, then one line per measurement."""
    out = subprocess.run([str(binary), "--json", *args], check=True,
                         capture_output=True, text=True).stdout
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    return lines[0], lines[1:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default="4,64,256")
    parser.add_argument("--hptt", help="libhptt-peer.so (bench/build-hptt-peer.sh)")
    parser.add_argument("--hptt-tune", action="store_true",
                        help="HPTT times its candidates when planning")
    parser.add_argument("rest", nargs="*", help="arguments for relayout-bench")
    opts = parser.parse_args()
    binary = Path(opts.build) / "bench" / "relayout-bench"
    if not binary.exists():
        sys.exit(f"relayout_bench.py: {binary} not found; build it with "
                 f"`ninja -C {opts.build} relayout-bench`")

    extra = []
    if opts.hptt:
        extra += ["--hptt", opts.hptt] + (["--hptt-tune"] if opts.hptt_tune else [])
    elif opts.hptt_tune:
        sys.exit("relayout_bench.py: --hptt-tune needs --hptt LIB")
    runs = [run_cpp(binary, ["--sizes", opts.sizes, *extra, *opts.rest])
            for _ in range(opts.repeat)]
    header = runs[0][0]
    repeats = [rows for _, rows in runs]
    print(f"CPU: {header['cpu']}; tessel's kernels ran at {header['isa']} "
          f"(this CPU has {header['levels']}); the plain reference is "
          f"compiled for {header['plain_isa']}\n")
    numpy_cache = {}
    print("| case | MiB | threads | tessel GB/s | best copy GB/s | tessel/copy "
          "| plain GB/s | tessel/plain | Eigen GB/s | tessel/Eigen "
          "| numpy GB/s | tessel/numpy |"
          + (" HPTT GB/s | tessel/HPTT |" if opts.hptt else "") + " kernel |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
          + ("---:|---:|" if opts.hptt else "") + "---|")
    for i, row in enumerate(repeats[0]):
        rows = [rep[i] for rep in repeats]
        key = (row["case"], row["mib"])
        if key not in numpy_cache:
            numpy_cache[key] = numpy_gbs(row)
        npy = numpy_cache[key]
        med = lambda f: statistics.median(f(r) for r in rows)
        tessel = med(lambda r: r["tessel_gbs"])
        copy = med(lambda r: r["copy_gbs"])
        ratio = med(lambda r: r["tessel_gbs"] / r["copy_gbs"])
        eigen_cols = peer_cols(rows, "eigen_gbs", 1)
        numpy_cols = (f"{npy:.2f} | {tessel / npy:.1f}x" if npy is not None
                      else "- | -")
        plain_cols = peer_cols(rows, "plain_gbs", 2)
        hptt_cols = peer_cols(rows, "hptt_gbs", 2) + " | " if opts.hptt else ""
        print(f"| {row['case']} | {row['mib']} | {row['threads']} | "
              f"{tessel:.2f} | {copy:.2f} | {100 * ratio:.0f}% | {plain_cols} | "
              f"{eigen_cols} | {numpy_cols} | {hptt_cols}"
              f"{row['kernel']} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
