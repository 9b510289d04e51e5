"""bench/gpu_table.py: the output of bench/gpu_bench.sh as a Markdown table
(the lines below are an H100 run's, 2026-11-26)."""

import importlib.util
import subprocess
import sys

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("gpu_table",
                                               ROOT / "bench" / "gpu_table.py")
gpu_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_table)

SAMPLE = """\
=== 2. bench/gpu_bench.sh
NVIDIA H100 80GB HBM3, 9.0, 580.159.04
== examples/gelu.hlo
check output 0 bf16[6,512,4096]: bit-exact
time: 0.028 ms median of 20 runs (the kernels alone, CUDA events), 1823.61 GB/s (50331648 bytes read and written)
device copy of the same bytes: 0.024 ms, 2108.40 GB/s; the kernels run at 86% of copy speed
device memory peak: 3352 GB/s (memory clock and bus width); the kernels reach 54% of it, the copy 63%
compile: 310.0 ms (HLO to loaded PTX)
== bench/codegen/softmax_f32.hlo
check: the evaluator sums in the kernels' order (16 partial sums along the minor dim, docs/codegen.md)
check output 0 f32[8192,4096]: 4511136 of 33554432 elements differ, at most 5 ulp (4.66e-10 absolute), worst at [66,110]: 0.0004851642 vs 0.00048516406: within the bound for approximated functions
time: 0.214 ms median of 20 runs (the kernels alone, CUDA events), 1256.81 GB/s (268435456 bytes read and written)
device copy of the same bytes: 0.098 ms, 2750.36 GB/s; the kernels run at 46% of copy speed
device memory peak: 3352 GB/s (memory clock and bus width); the kernels reach 37% of it, the copy 82%
== bench/codegen/never_timed.hlo
check output 0 f32[4]: bit-exact
== bench/codegen/wrong.hlo
check output 0 f32[4]: 4 of 4 elements differ, at most 16448 ulp (3 absolute), worst at [0]: 0 vs 3: FAILED (4 outside the bound)
time: 1.000 ms median of 2 runs (the kernels alone, CUDA events), 0.00 GB/s (32 bytes read and written)
== hand-written CUDA: the same GELU
hand-written CUDA GELU bf16[6,512,4096]: 0.043 ms median of 20 runs, 1175.53 GB/s (50331648 bytes read and written)
device copy of the same bytes: 0.024 ms, 2139.95 GB/s; the kernel runs at 55% of copy speed
device memory peak: 3352 GB/s; the kernel reaches 35% of it, the copy 64%
time: 0.324 ms median of 20 runs (the kernels alone, CUDA events), 2489.20 GB/s (805306368 bytes read and written)
device copy of the same bytes: 0.272 ms, 2965.05 GB/s; the kernels run at 84% of copy speed
== /tmp/gelu96.hlo (--excess-precision)
time: 0.342 ms median of 20 runs (the kernels alone, CUDA events), 2356.68 GB/s (805306368 bytes read and written)
"""


def test_each_timed_case_is_a_row_with_its_figures():
    rows = gpu_table.parse(SAMPLE)
    assert [r.case for r in rows] == [
        "gelu", "softmax_f32", "wrong", "hand-written CUDA: GELU bf16[6,512,4096]",
        "(unnamed)", "gelu96 (--excess-precision)"]
    gelu, softmax, wrong, cuda, unnamed, excess = rows
    assert wrong.checks == ["**FAILED**"]
    assert (gelu.ms, gelu.gbps, gelu.bytes) == (0.028, 1823.61, 50331648)
    assert (gelu.copy_ms, gelu.of_copy, gelu.of_peak) == (0.024, 86, 54)
    assert gelu.checks == ["bit-exact"]
    assert softmax.checks == ["within the bound"]
    assert (softmax.of_copy, softmax.of_peak) == (46, 37)
    assert (cuda.ms, cuda.of_copy, cuda.of_peak) == (0.043, 55, 35)
    # A timing after the hand-written kernel's, with no "== case" of its own,
    # is a row of its own, not the kernel's.
    assert (unnamed.ms, unnamed.of_copy) == (0.324, 84)
    assert excess.copy_ms is None and excess.of_copy is None


def test_the_table_has_a_line_per_row():
    table = gpu_table.markdown(gpu_table.parse(SAMPLE)).splitlines()
    assert table[0].startswith("| case | check |")
    assert len(table) == 2 + 6
    assert table[2] == ("| gelu | bit-exact | 50 MB | 0.028 | 1824 | 0.024 "
                        "| 86% | 54% |")
    assert table[-1] == ("| gelu96 (--excess-precision) |  | 805 MB | 0.342 "
                         "| 2357 |  |  |  |")


def test_input_without_a_timed_case_is_an_error(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("=== 2. bench/gpu_bench.sh\nno GPU here\n")
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_table.py"),
                           str(empty)], capture_output=True, text=True)
    assert done.returncode == 1
    assert "no timed case" in done.stderr
    missing = subprocess.run([sys.executable,
                              str(ROOT / "bench" / "gpu_table.py"),
                              str(tmp_path / "missing.log")],
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "gpu_table:" in missing.stderr
