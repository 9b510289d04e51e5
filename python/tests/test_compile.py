"""tessel.compile against `tessel compile` and `tessel run` on the same
modules and inputs."""

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import tessel
from conftest import CORPUS, EXAMPLES, ROOT
from test_hlo import inputs_of, load

# A few modules of each emitter (loop, transpose, reductions), tuple roots
# and bf16; compiling every module of the corpus twice would be slow.
MODULES = ["gelu_tanh_bf16", "transpose_2d_f32", "row_reduce_f32",
           "column_reduce_f32", "pad_slice_concat_bf16", "softmax_f32",
           "complex_c64"]


@pytest.mark.parametrize("name", MODULES)
def test_run_matches_cli(cli, tmp_path, name):
    path = CORPUS / name / "module.hlo"
    exe = tessel.compile(path.read_text())
    inputs = inputs_of(name)
    arrays = [load(p, tessel.Layout(s).element_type)
              for p, s in zip(inputs, exe.parameters)]
    got = exe(*arrays, threads=1)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(exe.outputs)
    outputs = [tmp_path / f"out{i}.npy" for i in range(len(got))]
    args = [a for p in inputs for a in ("--input", p)]
    args += [a for o in outputs for a in ("--output", o)]
    cli.out("run", path, "--threads", "1", *args)
    for array, out in zip(got, outputs):
        want = np.load(out)
        assert array.shape == want.shape and array.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_arrays_in_and_out(cli, tmp_path, dtype):
    # numpy's complex64/complex128 through the binding and `tessel run`:
    # the same bytes, the evaluator's (`--check`), and numpy's where the
    # formula is numpy's too (add, negate, the parts).
    t = "c64" if dtype == np.complex64 else "c128"
    p = "f32" if dtype == np.complex64 else "f64"
    text = (f"HloModule m\nENTRY e {{\n  x = {t}[3,5] parameter(0)\n"
            f"  y = {t}[3,5] parameter(1)\n  a = {t}[3,5] add(x, y)\n"
            f"  m = {t}[3,5] multiply(x, y)\n  d = {t}[3,5] divide(x, y)\n"
            f"  n = {t}[3,5] negate(x)\n  e = {t}[3,5] exponential(x)\n"
            f"  r = {p}[3,5] real(d)\n  i = {p}[3,5] imag(m)\n"
            f"  ROOT t = ({t}[3,5], {t}[3,5], {t}[3,5], {t}[3,5], {t}[3,5], "
            f"{p}[3,5], {p}[3,5]) tuple(a, m, d, n, e, r, i)\n}}\n")
    path = tmp_path / "m.hlo"
    path.write_text(text)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(dtype)
    y = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(dtype)
    x[0, 0] = complex(-0.0, np.inf)
    y[0, 1] = complex(np.nan, 0.0)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    exe = tessel.compile(text)
    got = exe(x, y, threads=1)
    outputs = [tmp_path / f"out{i}.npy" for i in range(len(got))]
    report = cli.out("run", path, "--threads", "1", "--check", "--input",
                     tmp_path / "x.npy", "--input", tmp_path / "y.npy",
                     *[a for o in outputs for a in ("--output", o)])
    assert report.count("bit-exact") == len(got), report
    for array, out in zip(got, outputs):
        want = np.load(out)
        assert array.dtype == want.dtype and array.tobytes() == want.tobytes()
    a, m, d, n, e, r, i = got
    assert a.dtype == dtype and r.dtype == np.dtype(p.replace("f", "float"))
    assert a.tobytes() == (x + y).tobytes()
    assert n.tobytes() == (-x).tobytes()
    assert np.allclose(m[1:], x[1:] * y[1:], rtol=1e-6)
    assert np.allclose(e[1:], np.exp(x[1:]), rtol=1e-6)
    assert np.allclose(r[1:], (x[1:] / y[1:]).real, rtol=1e-5)


def test_ir_and_explain_match_cli(cli, tmp_path):
    path = EXAMPLES / "gelu_small.hlo"
    exe = tessel.compile(path.read_text())
    assert exe.explain() == cli.out("compile", path, "--explain")
    for kind in ["partition", "mlir", "lowered"]:
        assert exe.emit(kind) == cli.out("compile", path, f"--emit={kind}")
    assert exe.mlir() == cli.out("compile", path, "--emit=mlir")
    dump = tmp_path / "dump"
    cli.out("compile", path, "--emit=lowered", "--dump-after", ".*",
            "--dump-dir", dump)
    files = sorted(p for p in dump.iterdir() if not p.name.startswith("00."))
    first = files[0]
    flag = first.name.split(".", 1)[1].rsplit(".", 1)[0]
    assert exe.mlir(after=flag) == first.read_text()
    with pytest.raises(ValueError, match="no pass of the pipeline matches"):
        exe.mlir(after="no-such-pass")
    with pytest.raises(ValueError, match="unknown IR 'sass'"):
        exe.emit("sass")
    with pytest.raises(ValueError, match="PTX is written for the GPU: compile "
                                         "with device='gpu'"):
        exe.emit("ptx")


def test_excess_precision_is_an_option(cli, tmp_path):
    path = CORPUS / "gelu_tanh_bf16" / "module.hlo"
    exe = tessel.compile(path.read_text(), excess_precision=True)
    x = load(inputs_of("gelu_tanh_bf16")[0], "bf16")
    np.save(tmp_path / "x.npy", np.load(inputs_of("gelu_tanh_bf16")[0]))
    cli.out("run", path, "--excess-precision", "--threads", "1", "--input",
            tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    assert exe(x, threads=1).tobytes() == np.load(tmp_path / "y.npy").tobytes()


def test_tables_give_the_computed_bits(cli, tmp_path):
    # bf16[4,65539]: large enough for the GELU to run as a table lookup.
    text = (EXAMPLES / "gelu.hlo").read_text().replace("6,512,4096", "4,65539")
    table = tessel.compile(text)
    computed = tessel.compile(text, tables=False)
    assert "runs as a table lookup" in table.explain()
    assert "table lookup" not in computed.explain()
    bits = np.arange(4 * 65539, dtype=np.uint32) * 40503 % 65536
    x = bits.astype(np.uint16).view(ml_dtypes.bfloat16).reshape(4, 65539)
    got, want = table(x, threads=2), computed(x, threads=2)
    assert got.view(np.uint16).tobytes() == want.view(np.uint16).tobytes()


def test_relayouts_give_the_emitted_bytes():
    text = (CORPUS / "transpose_2d_f32" / "module.hlo").read_text()
    moved = tessel.compile(text)
    emitted = tessel.compile(text, relayouts=False)
    assert "runs as a relayout" in moved.explain()
    assert "runs as a relayout" not in emitted.explain()
    arrays = [load(p, tessel.Layout(s).element_type)
              for p, s in zip(inputs_of("transpose_2d_f32"), moved.parameters)]
    assert moved(*arrays).tobytes() == emitted(*arrays).tobytes()


def test_vector_width_gives_the_same_bits():
    text = (CORPUS / "softmax_f32" / "module.hlo").read_text()
    default = tessel.compile(text)
    arrays = [load(p, tessel.Layout(s).element_type)
              for p, s in zip(inputs_of("softmax_f32"), default.parameters)]
    expected = default(*arrays).tobytes()
    for bits in (128, 256, 512):
        assert tessel.compile(text, vector_width=bits)(*arrays).tobytes() == expected
    with pytest.raises(ValueError, match="not a vector width"):
        tessel.compile(text, vector_width=300)


def test_arguments_are_checked_like_the_cli(cli, tmp_path):
    text = "HloModule m\nENTRY e { p = f32[2,3] parameter(0) ROOT n = f32[2,3] negate(p) }"
    path = tmp_path / "m.hlo"
    path.write_text(text)
    exe = tessel.compile(text)
    bad = np.zeros((3, 2), np.float32)
    np.save(tmp_path / "x.npy", bad)
    with pytest.raises(ValueError) as e:
        exe(bad)
    want = cli.error("run", path, "--input", tmp_path / "x.npy")
    assert want == str(e.value).replace("argument 0", str(tmp_path / "x.npy"))
    with pytest.raises(ValueError, match="the entry takes 1 parameters, given 0"):
        exe()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(exe(x.T.copy().T), -x)   # Fortran order is fine


def test_compile_errors_match_cli(cli, tmp_path):
    for text in ["HloModule m\nENTRY e { ROOT p = f32[2] parameter(0) ",
                 "HloModule m\nENTRY e { p = f32[2] parameter(0) ROOT n = f32[3] negate(p) }"]:
        path = tmp_path / "m.hlo"
        path.write_text(text)
        with pytest.raises(ValueError) as e:
            tessel.compile(text)
        assert str(e.value) == cli.error("compile", path, file=path)


def test_bad_calls_never_kill_the_interpreter():
    code = r"""
import numpy as np, tessel
exe = tessel.compile("HloModule m\nENTRY e { p = f32[4] parameter(0) ROOT n = f32[4] negate(p) }")
for args in [(), (np.zeros(3, np.float32),), (np.zeros(4),), ("x",),
             (np.zeros(4, np.float32), np.zeros(4, np.float32))]:
    try:
        exe(*args)
    except (ValueError, TypeError):
        pass
try:
    exe(np.zeros(4, np.float32), threads=-1)
except ValueError:
    pass
print(exe(np.ones(4, np.float32)).tolist())
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[-1.0, -1.0, -1.0, -1.0]"


def misaligned_copy(array):
    """A C-contiguous copy whose data is not 16-byte aligned: the call must
    go through Literals (a copy) for it."""
    raw = np.empty(array.nbytes + 32, np.uint8)
    start = (-raw.ctypes.data) % 16 + 1
    view = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    view[...] = array
    assert view.ctypes.data % 16 != 0 and view.flags.c_contiguous
    return view


def row_major(shape):
    layout = tessel.Layout(shape)
    rank = len(layout.dims)
    return not layout.tiles and list(layout.minor_to_major) == list(
        range(rank - 1, -1, -1))


@pytest.mark.parametrize("name", MODULES)
def test_contiguous_arguments_run_in_place(name):
    """Row-major parameters and C-contiguous, aligned arrays run on the
    arrays' own bytes (Executable.runPhysical, no Literal); the results are
    those of the copying path, byte for byte."""
    exe = tessel.compile((CORPUS / name / "module.hlo").read_text())
    arrays = [load(p, tessel.Layout(s).element_type)
              for p, s in zip(inputs_of(name), exe.parameters)]
    arrays = [np.ascontiguousarray(a) for a in arrays]
    # numpy allocates on 16-byte boundaries; a view into a file need not.
    arrays = [a if a.ctypes.data % 16 == 0 else a.copy() for a in arrays]
    # transpose_2d_f32 returns f32[48,32]{0,1}: no numpy C order, a copy.
    in_place = all(row_major(s) for s in exe.parameters + exe.outputs)
    assert in_place == (name != "transpose_2d_f32")
    fast = exe(*arrays, threads=1)
    assert exe._compiled._runs_in_place == int(in_place)
    slow = exe(*[misaligned_copy(a) for a in arrays], threads=1)
    assert exe._compiled._runs_in_place == int(in_place)
    fast = fast if isinstance(fast, tuple) else (fast,)
    slow = slow if isinstance(slow, tuple) else (slow,)
    for f, s in zip(fast, slow):
        assert f.dtype == s.dtype and f.shape == s.shape
        assert f.tobytes() == s.tobytes()


def test_in_place_run_leaves_the_arguments_alone():
    text = ("HloModule m\nENTRY e { p = f32[4,8] parameter(0) "
            "ROOT n = f32[4,8] negate(p) }")
    exe = tessel.compile(text)
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    keep = x.copy()
    y = exe(x)
    assert exe._compiled._runs_in_place == 1
    assert (x == keep).all() and (y == -keep).all()
    assert not np.shares_memory(x, y)
    y[0, 0] = 99                       # the result owns its bytes
    assert exe(x)[0, 0] == 0 and x[0, 0] == 0
    # A transposed view is copied to C order first, then runs in place too.
    z = exe(np.ascontiguousarray(x.T).T)
    assert (z == -keep).all()


def test_large_results_start_on_huge_page_boundaries():
    """Results of 4 MiB and more are HostBuffers (tessel/Support/Host.h):
    mapped on a 2 MiB boundary, with transparent huge pages requested; small
    ones on a 64-byte line."""
    for n, align in ((1024, 2 << 20), (64, 64)):
        text = (f"HloModule m\nENTRY e {{ p = f32[{n},{n}] parameter(0) "
                f"ROOT n = f32[{n},{n}] negate(p) }}")
        exe = tessel.compile(text)
        x = np.ones((n, n), np.float32)
        y = exe(x)
        assert exe._compiled._runs_in_place == 1
        assert y.ctypes.data % align == 0, (n, hex(y.ctypes.data))
        assert (y == -1).all()
        del y                          # the capsule unmaps it


def test_donated_arguments_are_not_modified():
    """input_output_alias lets the compiler update a parameter's buffer in
    place; from Python the argument is copied into the result first, on
    both paths (the arrays' own bytes, and through Literals), so the numpy
    array passed in keeps its values."""
    text = (ROOT / "test" / "Codegen" / "Inputs" / "dus_aliased.hlo").read_text()
    exe = tessel.compile(text)
    assert "parameter 0's (input_output_alias" in exe.explain()
    x = np.arange(64 * 48, dtype=np.float32).reshape(64, 48)
    u = -np.ones((5, 7), np.float32)
    keep = x.copy()
    want = x.copy()
    want[2:7, 3:10] = 1
    y = exe(x, u, np.int32(2))
    assert exe._compiled._runs_in_place == 1
    assert (y == want).all() and (x == keep).all()
    assert not np.shares_memory(x, y)
    y = exe(misaligned_copy(x), u, np.int32(2))
    assert exe._compiled._runs_in_place == 1
    assert (y == want).all() and (x == keep).all()


def test_tiled_parameters_do_not_run_in_place():
    text = ("HloModule m, entry_computation_layout={(f32[8,128]{1,0:T(8,128)})"
            "->f32[8,128]{1,0:T(8,128)}}\nENTRY e { p = f32[8,128]{1,0:T(8,128)} "
            "parameter(0) ROOT n = f32[8,128]{1,0:T(8,128)} negate(p) }")
    exe = tessel.compile(text)
    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    assert (exe(x) == -x).all()
    assert exe._compiled._runs_in_place == 0


NEGATE = "HloModule m\nENTRY e { p = f32[4] parameter(0) ROOT n = f32[4] negate(p) }"


def test_device_and_sm_are_checked():
    with pytest.raises(ValueError) as e:
        tessel.compile(NEGATE, device="tpu")
    assert str(e.value) == "device must be 'cpu' or 'gpu', not 'tpu'"
    with pytest.raises(ValueError) as e:
        tessel.compile(NEGATE, sm=80)
    assert str(e.value) == "sm is for device='gpu'"
    assert tessel.compile(NEGATE).device == "cpu"


def _run_with_driver(driver: str, code: str):
    """Runs `code` in a new interpreter whose CUDA driver is `driver` (the
    driver is opened once per process)."""
    env = dict(os.environ, TESSEL_CUDA_DRIVER=driver)
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=300, env=env)


def test_gpu_without_a_driver_says_so(tmp_path):
    done = _run_with_driver(str(tmp_path / "libcuda.so.1"), f"""
import tessel
try:
    tessel.compile({NEGATE!r}, device="gpu")
except ValueError as e:
    print(e)
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no CUDA driver found (" + str(tmp_path))
    assert "--target=nvptx --emit=ptx compiles without one" in done.stdout


def test_gpu_compiles_to_ptx_and_runs_through_the_driver():
    # The stand-in driver of the unit tests (unittests/Codegen/
    # FakeCudaDriver.cpp) loads the PTX and logs launches but runs nothing,
    # so this checks the path, not the values (scripts/gpu-check.sh runs the
    # kernels on a real GPU).
    tessel_bin = os.environ.get("TESSEL_BIN", str(ROOT / "build" / "bin" / "tessel"))
    fake = os.path.join(os.path.dirname(os.path.dirname(tessel_bin)), "unittests",
                        "libTesselFakeCudaDriver.so")
    if not os.path.exists(fake):
        pytest.skip(f"no stand-in CUDA driver at {fake}")
    done = _run_with_driver(fake, f"""
import numpy as np, tessel
exe = tessel.compile({NEGATE!r}, device="gpu", sm=90)
print(exe.device)
ptx = exe.emit("ptx")
print(".target sm_90" in ptx, ".entry kernel_0(" in ptx)
y = exe(np.ones(4, np.float32))
print(y.dtype, y.shape)
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["gpu", "True True", "float32 (4,)"]
