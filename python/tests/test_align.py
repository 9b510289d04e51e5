"""tessel.align against `tessel align` (text and --json) on the examples and
the lit inputs, and on MLIR that does not parse."""

import json
import subprocess
import sys

import pytest

import tessel
from conftest import EXAMPLES, ROOT

INPUTS = ROOT / "test" / "Analysis" / "Inputs"
FILES = [EXAMPLES / "align-seed.mlir", INPUTS / "aligned.mlir"]

SEED = """func.func @k(%m: memref<4x256xf32, #tpu.memory_space<vmem>>, %b: index) -> vector<1x32xf32> {
  %c0 = arith.constant 0 : index
  %v = vector.load %m[%c0, %b] : memref<4x256xf32, #tpu.memory_space<vmem>>, vector<1x32xf32>
  return %v : vector<1x32xf32>
}
"""


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_align_matches_cli(cli, path):
    report = tessel.align(path.read_text(), name=str(path))
    status, out, _ = cli("align", path)
    assert status == (0 if report.aligned else 1)
    assert str(report) == out
    status, out, _ = cli("align", path, "--json")
    assert report.to_dict() == json.loads(out)
    assert bool(report) == report.aligned == (not report.failures)


def test_align_fields():
    report = tessel.align(SEED)
    assert (report.file, report.accesses, report.indices) == ("<string>", 1, 1)
    assert not report
    (f,) = report.failures
    assert (f.line, f.column, f.op, f.dimension, f.multiple) == (
        3, 8, "vector.load", 1, 128)
    assert f.verdict == "unknown" and not f.proven_not
    assert f.message == ("cannot statically prove that index in dimension 1 "
                         "is a multiple of 128")
    assert "tpu.assume_multiple %b, 128" in f.fix
    assert str(report).startswith("<string>:3:8: error: cannot statically")


def test_align_proven_not(cli):
    report = tessel.align((EXAMPLES / "align-seed.mlir").read_text())
    assert [f.verdict for f in report.failures] == [
        "unknown", "proven-not", "unknown"]
    assert report.failures[1].proven_not


def test_align_aligned_and_empty():
    assert tessel.align((INPUTS / "aligned.mlir").read_text())
    empty = tessel.align("")
    assert empty and (empty.accesses, empty.indices, empty.failures) == (0, 0, [])


def test_align_invalid_matches_cli(cli):
    path = INPUTS / "invalid.mlir"
    status, _, err = cli("align", path)
    assert status == 1
    with pytest.raises(ValueError) as e:
        tessel.align(path.read_text(), name=str(path))
    message = str(e.value)
    first, diagnostics = message.split("\n", 1)
    assert err.endswith(f"tessel: error: {first}\n")
    assert err.startswith(diagnostics)
    assert first == f"'{path}' is not valid MLIR"


@pytest.mark.parametrize("text", [
    "func.func @f(", "%x = arith.constant", "\x00\xff garbage", "}" * 1000,
    "func.func @f() { %0 = unknown.op() : () -> i32\n return }",
])
def test_align_bad_input_raises(text):
    with pytest.raises(ValueError, match="'<string>' is not valid MLIR"):
        tessel.align(text)


def test_align_type_error():
    with pytest.raises(TypeError):
        tessel.align(b"func.func @f() { return }")


def test_align_bad_input_does_not_crash():
    code = ("import tessel\n"
            "for t in ['func.func @f(', '\\x00', 'module {', '{' * 5000]:\n"
            "    try: tessel.align(t)\n"
            "    except ValueError: pass\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
