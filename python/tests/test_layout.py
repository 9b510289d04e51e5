"""tessel.Layout against `tessel layout ...` on the same layouts."""

import subprocess
import sys

import pytest

import tessel

LAYOUTS = [
    "f32[3,5]{1,0:T(2,2)}",
    "bf16[3,300]{1,0:T(8,128)(2,1)}",
    "f32[1000,3]{1,0:T(8,128)}",
    "s8[5,7,9]{0,2,1:T(4,4)}",
    "pred[10,20]{1,0:T(8,128)(4,1)}",
    "f32[2,3,4]{2,1,0}",
    "s4[9,33]{1,0:T(8,128)(2,1)E(4)}",
    "f32[12]{0:T(8)L(16)}",
    "u8[3,17]{0,1}",
    "f64[]",
]


def sample_indices(dims):
    """A few indices of every corner and the middle."""
    picks = [tuple(0 for _ in dims), tuple(d - 1 for d in dims),
             tuple(d // 2 for d in dims), tuple((d * 2) // 3 for d in dims)]
    return sorted(set(picks))


@pytest.mark.parametrize("text", LAYOUTS)
def test_offsets_and_indices_match_cli(cli, text):
    layout = tessel.Layout(text)
    for index in sample_indices(layout.dims):
        arg = ",".join(map(str, index)) if index else ""
        if not index:
            continue  # a scalar has no index to type on the command line
        assert layout.offset(index) == int(cli.out("layout", "index", text, arg))
    for offset in sorted({0, layout.physical_elements // 3,
                          layout.physical_elements - 1}):
        want = cli.out("layout", "index", text, "--offset", offset).strip()
        got = layout.index_at(offset)
        assert (got is None and want == "padding") or \
            ",".join(map(str, got)) == want


@pytest.mark.parametrize("text", LAYOUTS)
def test_explain_draw_map_match_cli(cli, text, tmp_path):
    layout = tessel.Layout(text)
    assert layout.explain() == cli.out("layout", "explain", text)
    svg = tmp_path / "l.svg"
    assert layout.draw() == cli.out("layout", "draw", text, "--svg", svg)
    assert layout.svg() == svg.read_text()
    assert layout._repr_svg_() == svg.read_text()
    assert layout.decompose() == cli.out("layout", "decompose", text)
    assert layout.as_indexing_map() == cli.out("layout", "map", text).rstrip("\n")
    assert layout.as_indexing_map(inverse=True) == \
        cli.out("layout", "map", text, "--inverse").rstrip("\n")


@pytest.mark.parametrize("text", LAYOUTS)
def test_to_dict_is_cli_json(cli, text):
    import json
    want = json.loads(cli.out("layout", "explain", text, "--json"))
    assert tessel.Layout(text).to_dict() == want


@pytest.mark.parametrize("text", LAYOUTS)
def test_attributes_match_cli_json(cli, text):
    import json
    layout = tessel.Layout(text)
    want = json.loads(cli.out("layout", "explain", text, "--json"))
    assert str(layout) == want["canonical"]
    assert layout.element_type == want["element_type"]
    assert layout.element_bits == want["element_bits"]
    assert list(layout.dims) == want["logical_shape"]
    assert list(layout.minor_to_major) == want["minor_to_major"]
    assert layout.tiles == want["tiles"]
    assert list(layout.physical_shape) == want["physical_shape"]
    assert layout.logical_elements == want["logical_elements"]
    assert layout.physical_elements == want["physical_elements"]
    assert layout.physical_bytes == want["physical_bytes"]
    assert layout.data_bytes == want["data_bytes"]
    assert layout.padding_bytes == want["padding_bytes"]
    assert layout.utilization == pytest.approx(want["utilization"])
    assert layout.padding_reason == want["worst_padding"]
    assert layout.xla_bytes == want["xla_bytes"]


@pytest.mark.parametrize("shape", ["bf16[3,300]", "f32[3,300]", "s8[64,300]",
                                   "pred[8,8]", "f32[7]", "f32[0,5]"])
@pytest.mark.parametrize("packed", [False, True])
def test_tpu_dict_is_cli_json(cli, shape, packed):
    import json
    args = ["layout", "tpu", shape, "--json"] + (["--packed-pred"] if packed else [])
    assert tessel.Layout.tpu_dict(shape, packed_pred=packed) == json.loads(cli.out(*args))


@pytest.mark.parametrize("shape", ["bf16[3,", "f32[3,300]{1,1}", "tuple[]", ""])
def test_tpu_dict_bad_shapes_raise_the_cli_message(cli, shape):
    with pytest.raises(ValueError) as e:
        tessel.Layout.tpu_dict(shape)
    assert str(e.value) == cli.error("layout", "tpu", shape, "--json")


@pytest.mark.parametrize("shape", ["bf16[3,300]", "f32[3,300]", "s8[64,300]",
                                   "pred[8,8]", "f32[7]"])
def test_tpu_matches_cli(cli, shape):
    out = cli.out("layout", "tpu", shape).splitlines()
    assert str(tessel.Layout.tpu(shape)) == out[0]
    assert "  why: " + tessel.Layout.tpu_reason(shape) == out[1]
    packed = cli.out("layout", "tpu", shape, "--packed-pred").splitlines()[0]
    assert str(tessel.Layout.tpu(shape, packed_pred=True)) == packed


def test_equality_and_hash():
    a = tessel.Layout("F32[3, 5]{1,0}")
    b = tessel.Layout("f32[3,5]{1,0}")
    assert a == b and hash(a) == hash(b) and repr(a) == "Layout('f32[3,5]{1,0}')"
    assert a != tessel.Layout("f32[3,5]{0,1}")


BAD_LAYOUTS = ["f32[3,5]{1,1}", "f32[3,5", "q32[3]", "f32[3,5]{1,0:T(0,2)}",
               "(f32[2], f32[3])", "", "f32[99999999999,99999999999,9999999]",
               "f32[3,5]{1,0:T(2,2)E(99)}", "é[3]"]


@pytest.mark.parametrize("text", BAD_LAYOUTS)
def test_bad_layouts_raise_the_cli_message(cli, text):
    with pytest.raises(ValueError) as e:
        tessel.Layout(text)
    assert str(e.value) == cli.error("layout", "explain", text)


@pytest.mark.parametrize("index", [(3, 0), (0, 5), (-1, 0), (1,), (1, 2, 3)])
def test_bad_index_raises_the_cli_message(cli, index):
    text = "f32[3,5]{1,0:T(2,2)}"
    with pytest.raises(ValueError) as e:
        tessel.Layout(text).offset(index)
    assert str(e.value) == cli.error("layout", "index", text,
                                     ",".join(map(str, index)))


@pytest.mark.parametrize("text,offset", [("f32[3,5]{1,0:T(2,2)}", 24),
                                         ("f32[3,5]{1,0:T(2,2)}", -1),
                                         ("f32[0,5]", 0)])
def test_bad_offset_raises_the_cli_message(cli, text, offset):
    with pytest.raises(ValueError) as e:
        tessel.Layout(text).index_at(offset)
    assert str(e.value) == cli.error("layout", "index", text, f"--offset={offset}")


def test_too_large_picture_is_refused(cli):
    text = "f32[600,600,600]"
    with pytest.raises(ValueError) as e:
        tessel.Layout(text).svg(max_rows=600, max_cols=600)
    assert str(e.value) == cli.error("layout", "draw", text, "--max-rows=600",
                                     "--max-cols=600")
    assert tessel.Layout(text)._repr_svg_() is not None
    assert tessel.Layout("f32[600,600,600]{2,1,0}").svg()  # elided: small


def test_tpu_errors_match_cli(cli):
    for shape in ["f32[3", "(f32[2])"]:
        with pytest.raises(ValueError) as e:
            tessel.Layout.tpu(shape)
        assert str(e.value) == cli.error("layout", "tpu", shape)


def test_wrong_argument_types_raise_type_error():
    with pytest.raises(TypeError):
        tessel.Layout(3)
    with pytest.raises(TypeError):
        tessel.Layout("f32[3]").offset("a")


def test_bad_input_never_kills_the_interpreter():
    # Each case in a fresh interpreter: a crash would show as a signal.
    code = r"""
import tessel
cases = ["f32[" + "9" * 40 + "]", "f32[3]{0:T(" + "1," * 5000 + "1)}",
         "f32[" + ",".join(["2"] * 300) + "]", "\x00", "f32[3]{0:T(8)L(0)}",
         "bf16[1<=3]", "f32[3]{0:E(0)}", "token[]", "f32[-1]"]
for text in cases:
    try:
        layout = tessel.Layout(text)
        layout.explain(); layout.as_indexing_map(); layout._repr_svg_()
    except ValueError:
        pass
for offset in [2**62, -2**62]:
    try:
        tessel.Layout("f32[3]").index_at(offset)
    except ValueError:
        pass
try:
    tessel.Layout("f32[3]").index_at(2**70)
except (ValueError, TypeError, OverflowError):
    pass
print("survived")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "survived"
