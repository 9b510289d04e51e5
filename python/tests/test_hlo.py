"""tessel.hlo against `tessel hlo ...` and `tessel indexing maps` on the
jax corpus (test/Hlo/corpus) and on broken modules."""

import subprocess
import sys

import ml_dtypes  # noqa: F401  (bf16 .npy files load as void without it)
import numpy as np
import pytest

import tessel
from conftest import CORPUS, EXAMPLES, corpus_modules

MODULES = corpus_modules()


def inputs_of(name):
    directory = CORPUS / name
    files = sorted(directory.glob("input*.npy"), key=lambda p: int(p.stem[5:]))
    return files


def load(path, element):
    """An .npy input with the dtype tessel's element type names (numpy
    saves ml_dtypes arrays as void)."""
    array = np.load(path)
    return array.view(tessel.numpy_dtype(element)) if array.dtype.kind == "V" else array


@pytest.mark.parametrize("name", MODULES)
def test_fmt_and_evaluate_match_cli(cli, tmp_path, name):
    path = CORPUS / name / "module.hlo"
    text = path.read_text()
    assert tessel.hlo.fmt(text) == cli.out("hlo", "fmt", path)
    module = tessel.hlo.parse(text)
    assert str(module) == cli.out("hlo", "fmt", path)
    inputs = inputs_of(name)
    arrays = [load(p, tessel.Layout(s).element_type)
              for p, s in zip(inputs, module.parameters)]
    got = tessel.hlo.evaluate(text, *arrays)
    got = got if isinstance(got, tuple) else (got,)
    outputs = [tmp_path / f"out{i}.npy" for i in range(len(got))]
    args = [a for p in inputs for a in ("--input", p)]
    args += [a for o in outputs for a in ("--output", o)]
    cli.out("hlo", "eval", path, *args)
    for array, out in zip(got, outputs):
        want = np.load(out)
        assert array.shape == want.shape
        assert array.tobytes() == want.tobytes()


@pytest.mark.parametrize("name", MODULES)
def test_indexing_matches_cli(cli, name):
    path = CORPUS / name / "module.hlo"
    status, out, err = cli("indexing", "maps", path)
    if status == 0:
        assert tessel.hlo.indexing(path.read_text()) == out
    else:
        with pytest.raises(ValueError) as e:
            tessel.hlo.indexing(path.read_text())
        assert str(e.value) == cli.message(err, path)


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("extra", [[], ["--input-to-output", "0"]])
def test_indexing_dict_is_cli_json(cli, name, extra):
    import json
    path = CORPUS / name / "module.hlo"
    status, out, err = cli("indexing", "maps", path, "--json", *extra)
    kwargs = {"input_to_output": int(extra[1])} if extra else {}
    if status == 0:
        assert tessel.hlo.indexing(path.read_text(), as_dict=True,
                                   **kwargs) == json.loads(out)
    else:
        with pytest.raises(ValueError) as e:
            tessel.hlo.indexing(path.read_text(), as_dict=True, **kwargs)
        assert str(e.value) == cli.message(err, path)


def test_indexing_of_named_instructions_matches_cli(cli):
    path = EXAMPLES / "gelu_small.hlo"
    text = path.read_text()
    module = tessel.hlo.parse(text)
    for line in str(module).splitlines():
        line = line.strip()
        if "=" not in line or line.startswith(("HloModule", "ENTRY", "%fused", "}")):
            continue
        name = line.removeprefix("ROOT ").split(" ")[0].lstrip("%")
        status, out, err = cli("indexing", "maps", path, "--instruction", name)
        if status == 0:
            assert tessel.hlo.indexing(module, name) == out
        else:
            with pytest.raises(ValueError) as e:
                tessel.hlo.indexing(module, name)
            assert str(e.value) == cli.message(err, path)
    for name, extra in [("nope", []), ("p", ["--computation", "nope"])]:
        with pytest.raises(ValueError) as e:
            tessel.hlo.indexing(module, name,
                                computation=extra[1] if extra else None)
        assert str(e.value) == cli.error("indexing", "maps", path,
                                         "--instruction", name, *extra,
                                         file=path)
    assert tessel.hlo.indexing(module, input_to_output=0) == \
        cli.out("indexing", "maps", path, "--input-to-output", "0")


BROKEN = [
    "HloModule m\nENTRY e { ROOT p = f32[2] parameter(0) ",
    "HloModule m\nENTRY e { p = f32[2] parameter(0) ROOT n = f32[3] negate(p) }",
    "HloModule m\nENTRY e { p = f32[2] parameter(0) ROOT n = f32[2] frobnicate(p) }",
    "HloModule m\nENTRY e { ROOT n = f32[2] negate(q) }",
    "HloModule m\nENTRY e { p = f32[2] parameter(0) ROOT a = f32[2] add(p) }",
    "",
    "HloModule m",
    "HloModule m\nENTRY e { p = f32[2]{0:T(é)} parameter(0) ROOT n = f32[2] negate(p) }",
]


@pytest.mark.parametrize("text", BROKEN)
def test_broken_modules_give_the_cli_message(cli, tmp_path, text):
    path = tmp_path / "m.hlo"
    path.write_text(text)
    want = cli.error("hlo", "verify", path, file=path)
    for call in (tessel.hlo.verify, tessel.hlo.parse, tessel.hlo.fmt):
        with pytest.raises(ValueError) as e:
            call(text)
        assert str(e.value) == want


NEGATE = "HloModule m\nENTRY e { p = f32[2,3] parameter(0) ROOT n = f32[2,3] negate(p) }"


def test_evaluate_checks_its_arguments(cli, tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(NEGATE)
    for bad in [np.zeros((3, 2), np.float32), np.zeros(6, np.float32)]:
        np.save(tmp_path / "x.npy", bad)
        with pytest.raises(ValueError) as e:
            tessel.hlo.evaluate(NEGATE, bad)
        want = cli.error("hlo", "eval", path, "--input", tmp_path / "x.npy")
        assert want == str(e.value).replace("argument 0", str(tmp_path / "x.npy"))
    with pytest.raises(ValueError, match="argument 0: holds f64 elements, "
                                         r"expected f32 for f32\[2,3\]"):
        tessel.hlo.evaluate(NEGATE, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="argument 0: holds bf16 elements"):
        tessel.hlo.evaluate(NEGATE.replace("f32", "f16"),
                            np.zeros((2, 3), ml_dtypes.bfloat16))
    with pytest.raises(ValueError, match="the entry takes 1 parameters, given 2"):
        tessel.hlo.evaluate(NEGATE, np.zeros((2, 3), np.float32),
                            np.zeros((2, 3), np.float32))


def test_evaluate_takes_non_contiguous_and_list_inputs():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = x.T[:3, :2].T    # (2,3), not C-contiguous
    assert not view.flags.c_contiguous
    assert np.array_equal(tessel.hlo.evaluate(NEGATE, view), -np.ascontiguousarray(view))
    got = tessel.hlo.evaluate(NEGATE.replace("f32", "s32"), [[1, 2, 3], [4, 5, 6]]) \
        if np.asarray([[1]]).dtype == np.int32 else None
    if got is not None:
        assert got.tolist() == [[-1, -2, -3], [-4, -5, -6]]


def test_evaluate_physical_buffers(cli, tmp_path):
    text = ("HloModule m, entry_computation_layout={(f32[3,5]{1,0:T(2,2)})->"
            "f32[3,5]{0,1}}\nENTRY e { p = f32[3,5]{1,0:T(2,2)} parameter(0) "
            "ROOT n = f32[3,5]{0,1} negate(p) }")
    path = tmp_path / "m.hlo"
    path.write_text(text)
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    buf = tessel.relayout(x, to="{1,0:T(2,2)}")
    got = tessel.hlo.evaluate(text, buf, physical=True)
    np.save(tmp_path / "x.npy", buf)
    cli.out("hlo", "eval", path, "--physical", "--input", tmp_path / "x.npy",
            "--output", tmp_path / "y.npy")
    want = np.load(tmp_path / "y.npy")
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    assert np.array_equal(got, -x.T)


def test_bad_modules_never_kill_the_interpreter():
    code = r"""
import numpy as np, tessel
texts = ["HloModule m\nENTRY e { " + "(" * 100000 + " }",
         "HloModule m\nENTRY e { p = f32[99999999999,99999999999] parameter(0) ROOT n = f32[99999999999,99999999999] negate(p) }",
         "\x00\xff", "HloModule m\nENTRY e { ROOT c = f32[] constant({1,2}) }",
         "HloModule m\nENTRY e { ROOT c = f32[0] constant({}) }"]
for text in texts:
    for call in (tessel.hlo.parse, tessel.hlo.indexing):
        try:
            call(text)
        except ValueError:
            pass
try:
    tessel.hlo.evaluate(texts[1], np.zeros(3, np.float32))
except ValueError:
    pass
print("survived")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "survived"


def test_from_jax_needs_jax():
    try:
        import jax  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs jax"):
            tessel.hlo.from_jax(lambda x: x, np.zeros(2))
        return
    import jax.numpy as jnp
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    text = tessel.hlo.from_jax(lambda a: jnp.tanh(a) * 2, x)
    assert np.allclose(tessel.hlo.evaluate(text, x), np.tanh(x) * 2, atol=1e-6)


def test_scalar_and_empty_arguments():
    scalar = "HloModule m\nENTRY e { p = f32[] parameter(0) ROOT n = f32[] negate(p) }"
    assert tessel.hlo.evaluate(scalar, np.float32(2)) == -2
    assert tessel.compile(scalar)(np.float32(2)) == -2
    empty = scalar.replace("f32[]", "f32[0]")
    assert tessel.hlo.evaluate(empty, np.zeros(0, np.float32)).shape == (0,)
