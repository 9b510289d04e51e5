#!/usr/bin/env python3
"""The output of bench/gpu_bench.sh (or scripts/gpu-check.sh) as one
Markdown table, the columns of BENCHMARKS.md's "On the GPU" tables:

    bench/gpu_bench.sh build 20 | tee gpu.log
    python3 bench/gpu_table.py gpu.log

Each case of `tessel run M.hlo --device gpu --check --repeat N` is a row
(the module's name, what --check said, the kernels' median time and GB/s,
the device copy's time, the two ratios), and so is each hand-written CUDA
kernel. Standard library only: the GPU machine may have nothing else.
"""

import re
import sys
from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class Row:
    case: str
    checks: List[str] = field(default_factory=list)
    ms: Optional[float] = None
    gbps: Optional[float] = None
    bytes: Optional[int] = None
    copy_ms: Optional[float] = None
    of_copy: Optional[int] = None
    of_peak: Optional[int] = None


_CASE = re.compile(r"^== (\S+)(.*)$")
_CUDA = re.compile(r"^hand-written CUDA (.*?): ([0-9.]+) ms median of \d+ runs, "
                   r"([0-9.]+) GB/s \((\d+) bytes")
_TIME = re.compile(r"^time: ([0-9.]+) ms median of \d+ runs.*?, ([0-9.]+) GB/s "
                   r"\((\d+) bytes")
_COPY = re.compile(r"^device copy of the same bytes: ([0-9.]+) ms.*?run(?:s)? at "
                   r"(\d+)% of copy speed")
_PEAK = re.compile(r"^device memory peak: .*?reach(?:es)? (\d+)% of it")
_CHECK = re.compile(r"^check output \d+ (\S+): (.*)$")


def parse(text: str) -> List[Row]:
    """The rows of `text`, in order; a case without a timing is left out."""
    rows: List[Row] = []
    current: Optional[Row] = None
    for line in text.splitlines():
        line = line.strip()
        if m := _CASE.match(line):
            current = Row(m.group(1).rsplit("/", 1)[-1].removesuffix(".hlo") +
                          m.group(2))
            rows.append(current)
        elif m := _CUDA.match(line):
            current = Row("hand-written CUDA: " + m.group(1),
                          ms=float(m.group(2)), gbps=float(m.group(3)),
                          bytes=int(m.group(4)))
            rows.append(current)
        elif current is None:
            continue
        elif m := _TIME.match(line):
            if current.ms is not None:  # a second timing with no "== case"
                current = Row("(unnamed)")
                rows.append(current)
            current.ms, current.gbps = float(m.group(1)), float(m.group(2))
            current.bytes = int(m.group(3))
        elif m := _COPY.match(line):
            current.copy_ms, current.of_copy = float(m.group(1)), int(m.group(2))
        elif m := _PEAK.match(line):
            current.of_peak = int(m.group(1))
        elif m := _CHECK.match(line):
            verdict = m.group(2)
            if "FAILED" in verdict:
                verdict = "**FAILED**"
            elif "within the bound" in verdict:
                verdict = "within the bound"
            current.checks.append(verdict)
    return [row for row in rows if row.ms is not None]


def markdown(rows: List[Row]) -> str:
    def number(value, unit=""):
        return "" if value is None else f"{value}{unit}"

    lines = ["| case | check | bytes read + written | ms | GB/s | device copy ms "
             "| % of copy | % of peak |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        megabytes = "" if row.bytes is None else f"{row.bytes / 1e6:.0f} MB"
        check = ", ".join(sorted(set(row.checks))) if row.checks else ""
        lines.append(f"| {row.case} | {check} | {megabytes} | {row.ms:.3f} "
                     f"| {row.gbps:.0f} "
                     f"| {'' if row.copy_ms is None else f'{row.copy_ms:.3f}'} "
                     f"| {number(row.of_copy, '%')} | {number(row.of_peak, '%')} |")
    return "\n".join(lines)


def main(argv: List[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 1
    try:
        text = open(argv[1]).read() if len(argv) == 2 else sys.stdin.read()
    except OSError as error:
        print(f"gpu_table: {error}", file=sys.stderr)
        return 1
    rows = parse(text)
    if not rows:
        print("gpu_table: no timed case in the input (expected the output of "
              "bench/gpu_bench.sh)", file=sys.stderr)
        return 1
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
