"""tessel.npu against `tessel npu ...` on the same chips and tensors."""

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import tessel

SEED = ["--npus", "4", "--mem", "1024"]
TENSORS = [
    (SEED, "x=fp32[2,3,4,5]:aligned@2048"),
    (SEED, "fp32[2,3,4,5]:compact@0"),
    (SEED, "w=int8[6,5,4,5]:aligned:4n@0"),
    (SEED, "m=fp32[2,40]:matrix(20)@0"),
    (SEED, "m=fp32[2,40]:matrix"),
    (SEED, "s=fp32[2,5,3,4]:strides(120,56,16,2)"),
    (SEED, "fp32[2,3,4,5]:aligned@2049"),            # misaligned: explained
    (["--chip", "bm1684x"], "x=fp16[1,96,56,56]:eu@0"),
    (["--chip", "bm1688"], "x=bf16[1,16,8,8]:eu@0"),
]


def config_of(flags):
    if flags[0] == "--chip":
        return tessel.npu.Config(flags[1])
    return tessel.npu.Config(npus=int(flags[1]), mem=flags[3])


@pytest.mark.parametrize("flags,spec", TENSORS)
def test_explain_and_where_match_cli(cli, flags, spec):
    t = tessel.npu.LocalTensor(spec, config_of(flags))
    status, out, err = cli("npu", "explain", *flags, spec)
    assert t.explain() == out
    assert (status == 0) == (t.problems == [])
    if t.problems:
        assert err == "tessel: error: " + t.problems[0] + "\n"
        return
    shape = t.shape
    for index in [tuple(0 for _ in shape), tuple(d - 1 for d in shape),
                  tuple(d // 2 for d in shape)]:
        want = cli.out("npu", "where", *flags, spec, "--index",
                       ",".join(map(str, index)))
        npu, slot, offset, address = t.where(index)
        assert want == f"npu {npu} slot {slot} offset {offset} (address {address})\n"
    chip = config_of(flags)
    for npu in sorted({0, chip.npus - 1}):
        for offset in [100, chip.bytes_per_npu - 1]:
            want = cli.out("npu", "where", *flags, spec, "--npu", npu,
                           "--offset", offset)
            assert t.what_is(npu, offset) + "\n" == want


@pytest.mark.parametrize("flags,spec", [t for t in TENSORS if "2049" not in t[1]])
def test_pictures_match_cli(cli, tmp_path, flags, spec):
    t = tessel.npu.LocalTensor(spec, config_of(flags))
    assert t.draw() == cli.out("npu", "draw", *flags, spec)
    assert t.draw(scatter=True) == cli.out("npu", "draw", *flags, spec, "--scatter")
    cli.out("npu", "draw", *flags, spec, "--svg", tmp_path / "t.svg")
    assert t.svg() == (tmp_path / "t.svg").read_text()
    assert t._repr_svg_() == t.svg()


def test_config_matches_cli(cli):
    chip = tessel.npu.Config(npus=4, mem=1024)
    for address in [0, 1472, 4095]:
        npu, offset = chip.split(address)
        assert cli.out("npu", "address", *SEED, address) == \
            f"npu {npu} offset {offset}\n"
        assert chip.address(npu, offset) == address
    assert tessel.npu.presets() == ["bm1684", "bm1684x", "bm1688"]
    assert tessel.npu.Config("bm1684x", banks=8).name == "bm1684x-modified"
    assert tessel.npu.Config(npus=4, mem="1K") == chip
    for bad in [4096, -1]:
        with pytest.raises(ValueError) as e:
            chip.split(bad)
        assert str(e.value) == cli.error("npu", "address", *SEED, bad)
    with pytest.raises(ValueError) as e:
        chip.address(4, 0)
    assert str(e.value) == cli.error("npu", "address", *SEED, "--npu", 4,
                                     "--offset", 0)


@pytest.mark.parametrize("flags", [["--npus", "0", "--mem", "1024"],
                                   ["--npus", "4", "--mem", "1000"],
                                   ["--chip", "bm9999"],
                                   ["--npus", "4", "--mem", "12Q"]])
def test_bad_configs_give_the_cli_message(cli, flags):
    with pytest.raises(ValueError) as e:
        if flags[0] == "--chip":
            tessel.npu.Config(flags[1])
        else:
            tessel.npu.Config(npus=int(flags[1]), mem=flags[3])
    want = cli.error("npu", "explain", *flags, "fp32[1,1,1,1]")
    assert str(e.value) == want.replace("--mem: ", "mem: ")
    with pytest.raises(ValueError, match="give chip=NAME"):
        tessel.npu.Config()


@pytest.mark.parametrize("spec", ["fp32[2,3,4]", "x=fp33[1,1,1,1]",
                                  "fp32[2,3,4,5]:alinged", "fp32[2,3,4,5]:4n",
                                  "fp32[2,3,4,5]@99999999"])
def test_bad_specs_give_the_cli_message(cli, spec):
    with pytest.raises(ValueError) as e:
        tessel.npu.LocalTensor(spec, tessel.npu.Config(npus=4, mem=1024))
    assert str(e.value) == cli.error("npu", "explain", *SEED, spec)


def test_bad_index_gives_the_cli_message(cli):
    spec = "x=fp32[2,3,4,5]:aligned@2048"
    t = tessel.npu.LocalTensor(spec, tessel.npu.Config(npus=4, mem=1024))
    for index in [(1, 2, 3), (2, 0, 0, 0), (0, 0, 0, -1)]:
        with pytest.raises(ValueError) as e:
            t.where(index)
        assert str(e.value) == cli.error("npu", "where", *SEED, spec, "--index",
                                         ",".join(map(str, index)))


def test_fit_matches_cli(cli, tmp_path):
    specs = ["a=fp32[2,3,4,5]@0", "b=fp32[1,1,4,5]", "c=fp32[2,40]:matrix"]
    chip = tessel.npu.Config(npus=4, mem=1024)
    report = tessel.npu.fit(specs, chip)
    assert report.fits
    out = cli.out("npu", "fit", *SEED, *specs, "--draw", "--svg", tmp_path / "f.svg")
    assert str(report) + report.draw() == out
    assert report.svg() == (tmp_path / "f.svg").read_text()
    assert str(tessel.npu.fit("; ".join(specs), chip)) == str(report)
    too_big = ["a=fp32[4,8,16,16]@0", "b=fp32[4,8,16,16]@0"]
    report = tessel.npu.fit(too_big, chip)
    status, out, err = cli("npu", "fit", *SEED, *too_big)
    assert status == 1 and str(report) == out and not report.fits
    assert err == "tessel: error: the tensors do not fit: " + report.problems[0] + "\n"


@pytest.mark.parametrize("flags,spec", TENSORS)
def test_tensor_to_dict_is_cli_json(cli, flags, spec):
    import json
    t = tessel.npu.LocalTensor(spec, config_of(flags))
    status, out, err = cli("npu", "explain", *flags, spec, "--json")
    want = json.loads(out)
    assert t.to_dict() == want
    assert t.problems == want["problems"]
    assert status == (1 if t.problems else 0)


def test_fit_to_dict_is_cli_json(cli):
    import json
    chip = tessel.npu.Config(npus=4, mem=1024)
    for specs in (["a=fp32[2,3,4,5]@0", "b=fp32[1,1,4,5]", "c=fp32[2,40]:matrix"],
                  ["a=fp32[4,8,16,16]@0", "b=fp32[4,8,16,16]@0"]):
        _, out, _ = cli("npu", "fit", *SEED, *specs, "--json")
        assert tessel.npu.fit(specs, chip).to_dict() == json.loads(out)


MATRICES = [
    (SEED, "2x40", [], []), (SEED, "2x40", ["--dtype", "int8"], []),
    (SEED, "7x1000", ["--start-npu", "3"], []), (SEED, "2x40", [], [1, 4, 40]),
    (["--chip", "bm1684x"], "64x4096", ["--dtype", "fp16"], []),
    (["--chip", "bm1688"], "3X17", ["--dtype", "bf16", "--start-npu", "5"], [17]),
]


@pytest.mark.parametrize("flags,matrix,options,ws", MATRICES)
def test_advise_matrix_matches_cli(cli, flags, matrix, options, ws):
    import json
    args = ["npu", "fit", *flags, "--matrix", matrix, *options]
    if ws:
        args += ["--w", ",".join(map(str, ws))]
    kwargs = dict(zip((o[2:].replace("-", "_") for o in options[::2]), options[1::2]))
    if "start_npu" in kwargs:
        kwargs["start_npu"] = int(kwargs["start_npu"])
    advice = tessel.npu.advise_matrix(matrix, config_of(flags), w=ws, **kwargs)
    assert str(advice) == cli.out(*args)
    want = json.loads(cli.out(*args, "--json"))
    assert advice.to_dict() == want
    assert advice.best_w == want["best"]["w"]
    assert advice.reasons == want["reasons"]
    rows, cols = (int(v) for v in matrix.lower().split("x"))
    assert str(tessel.npu.advise_matrix((rows, cols), config_of(flags), w=ws,
                                        **kwargs)) == str(advice)


@pytest.mark.parametrize("options,ws", [
    (["--dtype", "fp64"], []), (["--dtype", "nope"], []), ([], [0]), ([], [41]),
    (["--start-npu", "-1"], []), (["--start-npu", "99"], []),
])
def test_advise_matrix_errors_match_cli(cli, options, ws):
    args = ["npu", "fit", *SEED, "--matrix", "2x40", *options]
    if ws:
        args += ["--w", ",".join(map(str, ws))]
    status, _, err = cli(*args)
    kwargs = dict(zip((o[2:].replace("-", "_") for o in options[::2]), options[1::2]))
    if "start_npu" in kwargs:
        kwargs["start_npu"] = int(kwargs["start_npu"])
    call = lambda: tessel.npu.advise_matrix(
        "2x40", tessel.npu.Config(npus=4, mem=1024), w=ws, **kwargs)
    if status == 0:
        call()
        return
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == cli.message(err)


@pytest.mark.parametrize("matrix", ["2y40", "2x", "x40", "2x40x3", ""])
def test_advise_matrix_bad_sizes(matrix):
    with pytest.raises(ValueError, match="expected ROWSxCOLS"):
        tessel.npu.advise_matrix(matrix, tessel.npu.Config(npus=4, mem=1024))


DTYPES = [(np.float32, "fp32"), (np.float16, "fp16"), (ml_dtypes.bfloat16, "bf16"),
          (np.int8, "int8"), (np.uint8, "uint8"), (np.int16, "int16"),
          (np.uint16, "uint16"), (np.int32, "int32"), (np.uint32, "uint32")]


@pytest.mark.parametrize("dtype,name", DTYPES, ids=[d[1] for d in DTYPES])
@pytest.mark.parametrize("layout", ["aligned", "compact", "eu"])
def test_store_and_load_round_trip(dtype, name, layout):
    chip = tessel.npu.Config(npus=4, mem=4096)
    t = tessel.npu.LocalTensor(f"x={name}[2,5,3,4]:{layout}@128", chip)
    rng = np.random.default_rng(1)
    x = rng.integers(0, 100, size=(2, 5, 3, 4)).astype(dtype)
    mem = tessel.npu.LocalMemory(chip)
    mem.fill(0xAB)
    assert mem.store(t, x) > 0
    back = mem.load(t)
    assert back.dtype == x.dtype and back.tobytes() == x.tobytes()
    # Each element's bytes are where `where` says they are.
    raw = np.frombuffer(mem.bytes(), np.uint8)
    width = x.dtype.itemsize
    for index in [(0, 0, 0, 0), (1, 4, 2, 3), (1, 2, 1, 0)]:
        npu, _, offset, _ = t.where(index)
        start = npu * chip.bytes_per_npu + offset
        assert raw[start:start + width].tobytes() == x[index].tobytes()


def test_store_checks_arrays_and_takes_non_contiguous_ones():
    chip = tessel.npu.Config(npus=4, mem=1024)
    t = tessel.npu.LocalTensor("x=fp32[2,3,4,5]:aligned@0", chip)
    mem = tessel.npu.LocalMemory(chip)
    with pytest.raises(ValueError, match=r"array: shape \(3,2,4,5\), expected \(2,3,4,5\)"):
        mem.store(t, np.zeros((3, 2, 4, 5), np.float32))
    with pytest.raises(ValueError, match="array: holds f64 elements, expected f32"):
        mem.store(t, np.zeros((2, 3, 4, 5)))
    x = np.arange(240, dtype=np.float32).reshape(2, 3, 4, 10)[..., ::2]
    assert not x.flags.c_contiguous
    mem.store(t, x)
    assert np.array_equal(mem.load(t), x)


def test_matrix_store_and_load():
    chip = tessel.npu.Config(npus=4, mem=1024)
    t = tessel.npu.LocalTensor("m=fp32[2,40]:matrix@0", chip)
    assert t.shape == (2, 40) and t.matrix_w > 0
    x = np.arange(80, dtype=np.float32).reshape(2, 40)
    mem = tessel.npu.LocalMemory(chip)
    mem.store(t, x)
    assert np.array_equal(mem.load(t), x)


def test_bad_npu_calls_never_kill_the_interpreter():
    code = r"""
import numpy as np, tessel
for kwargs in [dict(npus=2**40, mem=2**40), dict(npus=4, mem=-5), dict(npus=4, mem="9" * 40)]:
    try:
        tessel.npu.Config(**kwargs)
    except (ValueError, TypeError, OverflowError):
        pass
chip = tessel.npu.Config(npus=4, mem=1024)
for spec in ["fp32[99999999999,99999999999,99999999999,9]", "fp32[2,3,4,5]:strides(0,0,0,0)",
             "fp32[2,3,4,5]@1023", "int8[1,1,1,1]:2ic", "x=" + "a" * 100000 + "[1,1,1,1]"]:
    try:
        t = tessel.npu.LocalTensor(spec, chip)
        t.explain(); mem = tessel.npu.LocalMemory(chip)
        mem.store(t, np.zeros(t.shape, tessel.numpy_dtype(t.element_type)))
        mem.load(t)
    except ValueError:
        pass
try:
    tessel.npu.LocalMemory(tessel.npu.Config("bm1684x", npus=65536))
except ValueError:
    pass
print("survived")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "survived"
