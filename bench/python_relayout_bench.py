#!/usr/bin/env python3
"""tessel.relayout from Python next to the C++ benchmark, numpy and a copy.

Runs build/bench/relayout-bench (C++: RelayoutPlan::execute into a reused
buffer) on a few cases, then times tessel.relayout from Python on the same
shapes and layouts: into a reused array (`out=`, what the C++ figure
measures) and into a fresh array (allocation and first touch included),
next to numpy's reshape/transpose/copy of the same movement and np.copyto of
the source bytes. The C++ run is repeated after the Python one; the ratio is
taken against the mean of the two C++ figures. Prints a Markdown table:

    PYTHONPATH=build/python .venv/bin/python bench/python_relayout_bench.py \\
        [--sizes 64] [--repeat 3]
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import tessel

ROOT = Path(__file__).resolve().parent.parent
CASES = ["f32 tile T(8,128)", "f32 untile T(8,128)", "bf16 tile T(8,128)(2,1)",
         "f32 transpose 2-D"]


def cpp_rows(binary, case, sizes):
    out = subprocess.run([str(binary), "--json", "--sizes", sizes, "--filter",
                          case], check=True, capture_output=True, text=True).stdout
    return [r for r in map(json.loads, filter(str.strip, out.splitlines()))
            if r.get("case") == case]


def median_seconds(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def python_row(row, runs):
    layout = tessel.Layout(row["shape"])
    dtype = tessel.numpy_dtype(layout.element_type)
    rng = np.random.default_rng(0)
    logical = rng.integers(0, 100, size=layout.dims).astype(dtype)
    src = tessel.relayout(logical, to=row["from"])   # the source buffer
    plan = tessel.RelayoutPlan(row["shape"], from_=row["from"], to=row["to"])
    moved = plan.source_bytes + plan.destination_bytes
    threads = row["threads"]

    def call(out=None):
        return tessel.relayout(src, to=row["to"], from_=row["from"],
                               shape=row["shape"], threads=threads, out=out)

    out = call()
    reused = moved / median_seconds(lambda: call(out), runs) / 1e9
    fresh = moved / median_seconds(call, runs) / 1e9

    flat = logical
    if row["pad_to"]:
        flat = np.zeros(row["pad_to"], dtype)
        flat[tuple(slice(0, d) for d in logical.shape)] = logical
    movement = lambda: flat.reshape(row["reshape"]).transpose(row["perm"]).copy()
    numpy_gbs = moved / median_seconds(movement, runs) / 1e9
    dst = np.empty_like(src)
    copy_gbs = 2 * src.nbytes / median_seconds(lambda: np.copyto(dst, src), runs) / 1e9
    return reused, fresh, numpy_gbs, copy_gbs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--sizes", default="64")
    parser.add_argument("--runs", type=int, default=9)
    opts = parser.parse_args()
    binary = Path(opts.build) / "bench" / "relayout-bench"
    if not binary.exists():
        sys.exit(f"{binary} not found; build it with `ninja -C {opts.build} "
                 "relayout-bench`")
    print("| case | MiB | threads | C++ GB/s | Python out= GB/s | Python/C++ "
          "| Python new array GB/s | numpy GB/s | np.copyto GB/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case in CASES:
        before = cpp_rows(binary, case, opts.sizes)
        python = [python_row(r, opts.runs) for r in before]
        after = cpp_rows(binary, case, opts.sizes)
        for row, again, (reused, fresh, npy, copy) in zip(before, after, python):
            cpp = (row["tessel_gbs"] + again["tessel_gbs"]) / 2
            print(f"| {case} | {row['mib']} | {row['threads']} | {cpp:.2f} | "
                  f"{reused:.2f} | {100 * reused / cpp:.0f}% | {fresh:.2f} | "
                  f"{npy:.2f} | {copy:.2f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
