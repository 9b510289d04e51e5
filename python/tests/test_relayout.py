"""tessel.relayout against `tessel relayout` on the same arrays, for every
element type numpy and ml_dtypes have."""

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import tessel

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
          np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64,
          np.complex64, np.complex128, ml_dtypes.bfloat16, ml_dtypes.float8_e5m2,
          ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3b11fnuz,
          ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e4m3fnuz, ml_dtypes.int4,
          ml_dtypes.uint4]

LAYOUT_PAIRS = [("{1,0}", "{1,0:T(8,128)}"), ("{1,0}", "{0,1}"),
                ("{0,1:T(2,2)}", "{1,0:T(4,4)(2,1)}"), ("{1,0:T(8,128)(2,1)}", "{1,0}")]


def random_array(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize,
                       dtype=np.uint8)
    if np.dtype(dtype) == np.bool_:
        raw = raw % 2
    if np.dtype(dtype) in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)):
        raw = raw % 8
    return raw.view(dtype).reshape(shape)


def cli_relayout(cli, tmp_path, array_or_bytes, shape, src, dst):
    inp, out = tmp_path / "in.bin", tmp_path / "out.bin"
    data = array_or_bytes if isinstance(array_or_bytes, bytes) else \
        np.ascontiguousarray(array_or_bytes).tobytes()
    inp.write_bytes(data)
    cli.out("relayout", "--shape", shape, "--from", src, "--to", dst,
            "--format=raw", inp, out)
    return out.read_bytes()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_matches_cli(cli, tmp_path, dtype):
    x = random_array(dtype, (9, 33))
    element = tessel.element_type(x.dtype)
    shape = f"{element}[9,33]"
    for src, dst in LAYOUT_PAIRS:
        source = x if src == "{1,0}" else tessel.relayout(x, to=src)
        got = tessel.relayout(source, to=dst, from_=src, shape=shape)
        want = cli_relayout(cli, tmp_path, source.tobytes(), shape, src, dst)
        assert got.tobytes() == want, (src, dst)
        if dst == "{1,0}":
            assert got.dtype == x.dtype and got.shape == x.shape
        else:
            assert got.ndim == 1 and got.dtype == x.dtype


def test_round_trip_through_a_tpu_layout():
    x = random_array(ml_dtypes.bfloat16, (3, 300))
    layout = tessel.Layout.tpu("bf16[3,300]")
    buf = tessel.relayout(x, to=layout)
    assert buf.shape == (layout.physical_elements,)
    back = tessel.relayout(buf, from_=layout)
    assert back.dtype == x.dtype and back.tobytes() == x.tobytes()


def test_padding_is_zero_and_layout_offsets_agree():
    x = np.arange(1, 16, dtype=np.float32).reshape(3, 5)
    layout = tessel.Layout("f32[3,5]{1,0:T(2,2)}")
    buf = tessel.relayout(x, to=layout)
    for i in range(3):
        for j in range(5):
            assert buf[layout.offset((i, j))] == x[i, j]
    padding = [o for o in range(buf.size) if layout.index_at(o) is None]
    assert padding and all(buf[o] == 0 for o in padding)


def test_packed_e4_gives_bytes(cli, tmp_path):
    x = random_array(ml_dtypes.int4, (9, 33))
    to = "{1,0:T(8,128)(2,1)E(4)}"
    got = tessel.relayout(x, to=to)
    assert got.dtype == np.uint8
    assert got.tobytes() == cli_relayout(cli, tmp_path, x, "s4[9,33]", "{1,0}", to)


@pytest.mark.parametrize("make", [
    lambda x: x.T,                       # Fortran order
    lambda x: x[::2, ::3],               # strided
    lambda x: x[:, 1:],                  # offset rows
    lambda x: np.broadcast_to(x[:1], x.shape),  # zero strides
], ids=["transposed", "strided", "sliced", "broadcast"])
def test_non_contiguous_inputs_are_read_in_c_order(make):
    x = make(random_array(np.float32, (12, 18)))
    assert not x.flags.c_contiguous
    want = tessel.relayout(np.ascontiguousarray(x), to="{1,0:T(2,4)}")
    assert tessel.relayout(x, to="{1,0:T(2,4)}").tobytes() == want.tobytes()


def test_read_only_input_is_fine():
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    x.flags.writeable = False
    assert tessel.relayout(x, to="{0,1}").tolist() == x.T.reshape(-1).tolist()


def test_out_receives_the_result():
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    out = np.full(24, 7, np.float32)
    assert tessel.relayout(x, to="{1,0:T(2,2)}", out=out) is out
    assert out.tobytes() == tessel.relayout(x, to="{1,0:T(2,2)}").tobytes()


@pytest.mark.parametrize("out,message", [
    (np.empty(23, np.float32), "out is float32[23], expected float32[24]"),
    (np.empty(24, np.float64), "out is float64[24], expected float32[24]"),
    (np.empty(48, np.float32)[::2], "out must be a writeable C-contiguous array"),
])
def test_bad_out_is_refused(out, message):
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        tessel.relayout(x, to="{1,0:T(2,2)}", out=out)


def test_out_sharing_the_input_is_refused():
    buf = np.zeros(24, np.float32)
    with pytest.raises(ValueError, match="shares memory"):
        tessel.relayout(buf, from_="f32[24]", to="{0}", out=buf)


def test_threads_give_the_same_bytes():
    x = random_array(np.float32, (256, 384))
    one = tessel.relayout(x, to="{0,1:T(8,128)}", threads=1)
    assert tessel.relayout(x, to="{0,1:T(8,128)}", threads=2).tobytes() == one.tobytes()


def test_plan_describes_its_kernel():
    plan = tessel.RelayoutPlan("bf16[4096,4096]", to="{1,0:T(8,128)(2,1)}")
    assert plan.source_bytes == plan.destination_bytes == 2 * 4096 * 4096
    assert plan.describe()
    assert plan.source_is_array and not plan.destination_is_array


def cli_message(cli, tmp_path, data, *args):
    inp = tmp_path / "in.npy"
    np.save(inp, data)
    return cli.error("relayout", *args, inp, tmp_path / "out.bin")


def test_wrong_shape_gives_the_cli_message(cli, tmp_path):
    x = np.zeros((5, 3), np.float32)
    with pytest.raises(ValueError) as e:
        tessel.relayout(x, shape="f32[3,5]", to="{0,1}")
    want = cli_message(cli, tmp_path, x, "--shape", "f32[3,5]", "--to", "{0,1}")
    assert want == str(e.value).replace("array", str(tmp_path / "in.npy"), 1)


def test_wrong_buffer_size_gives_the_cli_message(cli, tmp_path):
    buf = np.zeros(20, np.float32)
    with pytest.raises(ValueError) as e:
        tessel.relayout(buf, from_="f32[3,5]{1,0:T(2,2)}")
    want = cli_message(cli, tmp_path, buf, "--shape", "f32[3,5]", "--from",
                       "{1,0:T(2,2)}")
    assert want == str(e.value).replace("array", str(tmp_path / "in.npy"), 1)


@pytest.mark.parametrize("option,label", [("--to", "to"), ("--from", "from_")])
def test_bad_layouts_give_the_cli_message_with_the_argument_name(
        cli, tmp_path, option, label):
    x = np.zeros((3, 5), np.float32)
    for bad in ["{1,1}", "{1,0:T(0,1)}", "{1,0", "{2,1,0}"]:
        with pytest.raises(ValueError) as e:
            tessel.relayout(x, shape="f32[3,5]", **{label: bad})
        want = cli_message(cli, tmp_path, x, "--shape", "f32[3,5]", option, bad)
        # The source of the error is the argument: `--to:1:4: error: ...`
        # on the command line, `to:1:4: error: ...` in Python.
        assert want.startswith(option + ":1:")
        assert str(e.value) == want.replace(option + ":", label + ":", 1)


def test_shape_errors(cli, tmp_path):
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(ValueError) as e:
        tessel.relayout(x, shape="f32[3,5")
    assert str(e.value) == cli_message(cli, tmp_path, x, "--shape", "f32[3,5",
                                       "--to", "{1,0}").replace("--shape:", "shape:")
    with pytest.raises(ValueError, match="expected the element type and dims"):
        tessel.relayout(x, to="f32[5,3]{0,1}", from_="f32[3,5]")
    with pytest.raises(ValueError, match=r"array: holds f64 elements, expected f32 for f32\[3,5\]\{1,0\}"):
        tessel.relayout(np.zeros((3, 5)), shape="f32[3,5]", to="{0,1}")


def test_unsupported_dtypes_and_objects_raise_type_error():
    with pytest.raises(TypeError, match="no element type"):
        tessel.relayout(np.array(["a", "b"]), to="{0}")
    with pytest.raises(TypeError, match="no element type"):
        tessel.relayout(np.zeros(3, dtype=[("a", np.int32)]), to="{0}")
    with pytest.raises(TypeError):
        tessel.relayout(object(), to="{0}")
    with pytest.raises(TypeError):
        tessel.relayout(np.zeros(3), to=3)


def test_huge_shapes_fail_cleanly_in_a_subprocess():
    code = r"""
import numpy as np, tessel
for shape in ["u8[4000000000000]", "f32[99999999999,99999999999]",
              "s4[9999999999999]"]:
    try:
        tessel.relayout(np.zeros(3, np.uint8), shape=shape, to="{0}" if shape.count(",") == 0 else "{0,1}")
    except (ValueError, MemoryError):
        pass
try:
    tessel.RelayoutPlan("f32[3,5]", to="{1,0}", threads=-1)
except ValueError:
    pass
print("survived")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "survived"


def test_results_start_on_a_cache_line():
    # The tiling kernels' streaming stores want an aligned destination.
    for shape in [(3, 5), (64, 300), (7,)]:
        x = np.ones(shape, np.float32)
        for to in ["{1,0:T(8,128)}" if len(shape) == 2 else "{0:T(128)}", None]:
            out = tessel.relayout(x, to=to)
            assert out.ctypes.data % 64 == 0 and out.flags.c_contiguous
            assert out.flags.writeable and out.flags.owndata is False


def test_empty_and_scalar_arrays():
    assert tessel.relayout(np.zeros((0, 5), np.float32), to="{0,1}").size == 0
    assert tessel.relayout(np.zeros((0, 5), np.float32), to="{1,0:T(8,128)}").shape == (0,)
    scalar = tessel.relayout(np.float32(3.5), to="{}")
    assert scalar.shape == () and scalar == np.float32(3.5)


@pytest.mark.parametrize("shape,src,dst", [("f32[64,300]", "{1,0}", "{1,0:T(8,128)}"),
                                           ("bf16[16,256]", "{1,0:T(8,128)(2,1)}", "{1,0}"),
                                           ("f32[40,50]", "{1,0}", "{0,1}")])
def test_describe_matches_cli_verbose(cli, tmp_path, shape, src, dst):
    plan = tessel.RelayoutPlan(shape, from_=src, to=dst)
    (tmp_path / "in.bin").write_bytes(bytes(plan.source_bytes))
    status, _, err = cli("relayout", "--shape", shape, "--from", src, "--to", dst,
                         "-v", tmp_path / "in.bin", tmp_path / "out.bin")
    assert status == 0
    assert err.splitlines()[0] == "relayout: " + plan.describe()


def test_contiguous_inputs_are_not_copied():
    # numpy reports its buffers to tracemalloc: a copy of the 16 MiB input
    # (or a new result) would show in the peak.
    import tracemalloc
    x = random_array(np.float32, (2048, 2048))
    out = tessel.relayout(x, to="{1,0:T(8,128)}")
    tracemalloc.start()
    tessel.relayout(x, to="{1,0:T(8,128)}", out=out)
    tessel.relayout(out, from_="f32[2048,2048]{1,0:T(8,128)}", out=x)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1 << 20, peak
    # A non-contiguous input is copied once, to C order.
    tracemalloc.start()
    tessel.relayout(x.T, to="{1,0:T(8,128)}", out=out)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak >= x.nbytes
