"""tessel.indexing against `tessel indexing simplify|compose|eval` on the
same maps, and on maps and points the command line refuses."""

import subprocess
import sys

import pytest

import tessel

MAPS = [
    "(d0, d1) -> ((d0 * 4 + d1) floordiv 8), domain: d0 in [0, 15], d1 in [0, 3]",
    "(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]",
    "(d0)[s0] -> ((d0 + s0 * 128) mod 64, d0 floordiv 4), domain: d0 in [0, 127], s0 in [0, 3]",
    "(d0, d1) -> ((d0 floordiv 2) * 12 + (d1 floordiv 2) * 4 + (d0 mod 2) * 2 + d1 mod 2), domain: d0 in [0, 2], d1 in [0, 4]",
    "(d0) -> (d0 * 9223372036854775807), domain: d0 in [0, 3]",
    "(d0) -> (d0 mod 1), domain: d0 in [0, 7]",
    # The simplifier refuses a map that overflows int64 on its domain.
    "(d0) -> (-d0), domain: d0 in [-9223372036854775808, -9223372036854775808]",
    "(d0) -> (d0 * 2), domain: d0 in [0, 9223372036854775807]",
]

BAD_MAPS = ["", "(d0) -> (d1), domain: d0 in [0, 3]", "(d0 -> (d0)",
            "(d0) -> (d0), domain: d0 in [5, 2]", "garbage" * 100]


def same_as_cli(cli, args, call):
    """The binding gives the command line's answer, or its error."""
    status, out, err = cli("indexing", *args)
    if status == 0:
        return call(), out
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == cli.message(err)
    return None, None


@pytest.mark.parametrize("text", MAPS + BAD_MAPS)
def test_simplify_matches_cli(cli, text):
    got, out = same_as_cli(cli, ["simplify", text],
                           lambda: tessel.indexing.simplify(text))
    if got is not None:
        assert got + "\n" == out


@pytest.mark.parametrize("text", MAPS[:4])
def test_simplify_check(cli, text):
    status, out, err = cli("indexing", "simplify", text, "--check")
    assert status == 0 and "same map" in err
    assert tessel.indexing.simplify(text, check=True) + "\n" == out


COMPOSE = [
    ("(d0) -> (-d0 + 3), domain: d0 in [0, 3]", "(d0) -> (d0 + 2), domain: d0 in [0, 3]"),
    (MAPS[1], "(d0, d1) -> (d0 * 40 + d1), domain: d0 in [0, 19], d1 in [0, 39]"),
    (MAPS[0], MAPS[1]),
    ("(d0) -> (d0 * 4), domain: d0 in [0, 3]", "(d0) -> (d0), domain: d0 in [0, 3]"),
    ("(d0) -> (d0 * 3037000500), domain: d0 in [0, 3]",
     "(d0) -> (d0 * 3037000500), domain: d0 in [0, 9223372036854775807]"),
    ("(d0) -> (d0 * 1099511627776), domain: d0 in [0, 3]",
     "(d0) -> (d0 * 1099511627776), domain: d0 in [0, 4611686018427387904]"),
]


@pytest.mark.parametrize("first,second", COMPOSE + [(MAPS[0], "(d0")])
@pytest.mark.parametrize("simplify", [True, False])
def test_compose_matches_cli(cli, first, second, simplify):
    args = ["compose", first, second] + ([] if simplify else ["--no-simplify"])
    got, out = same_as_cli(cli, args, lambda: tessel.indexing.compose(
        first, second, simplify=simplify))
    if got is not None:
        assert got + "\n" == out


EVAL = [
    (MAPS[1], (3, 7), ()), (MAPS[1], (40, 0), ()), (MAPS[2], (5,), (3,)),
    (MAPS[2], (5,), ()), (MAPS[1], (1,), ()), (MAPS[0], (15, 3), ()),
    (MAPS[4], (3,), ()), (MAPS[4], (1,), ()), (MAPS[2], (5,), (1, 2)),
]


@pytest.mark.parametrize("text,dims,symbols", EVAL)
def test_eval_matches_cli(cli, text, dims, symbols):
    args = ["eval", text, ",".join(map(str, dims))]
    if symbols:
        args.append(",".join(map(str, symbols)))
    got, out = same_as_cli(cli, args, lambda: tessel.indexing.eval(
        text, dims, symbols))
    if out is not None:
        want = None if out == "outside the domain\n" else tuple(
            int(v) for v in out.split(","))
        assert got == want


def test_examples_of_the_docstrings():
    assert tessel.indexing.eval(MAPS[1], (3, 7)) == (7, 3)
    assert tessel.indexing.eval("(d0) -> (d0), domain: d0 in [0, 3]", [9]) is None
    assert tessel.indexing.simplify(MAPS[0]) == (
        "(d0, d1) -> (d0 floordiv 2), domain: d0 in [0, 15], d1 in [0, 3]")
    assert tessel.indexing.compose(*COMPOSE[0]) == (
        "(d0) -> (-d0 + 5), domain: d0 in [0, 3]")


def test_bad_arguments():
    with pytest.raises(ValueError, match="got 1 dim values, expected 2"):
        tessel.indexing.eval(MAPS[1], [1])
    with pytest.raises(TypeError):
        tessel.indexing.simplify(None)
    with pytest.raises((TypeError, ValueError)):
        tessel.indexing.eval(MAPS[1], ["a", 2])


def test_bad_maps_do_not_crash():
    code = ("import tessel\n"
            "for t in ['(d0', '(d0) -> (d0 floordiv 0), domain: d0 in [0, 3]',\n"
            "          '(' * 5000, '(d0) -> (d0), domain: d0 in [0, 3]']:\n"
            "    for f in (tessel.indexing.simplify,\n"
            "              lambda m: tessel.indexing.eval(m, [1]),\n"
            "              lambda m: tessel.indexing.compose(m, m)):\n"
            "        try: f(t)\n"
            "        except ValueError: pass\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


NPU_SPECS = ["fp32[2,3,4,5]:continuous", "x=int8[1,7,3,3]:continuous"]


def npu_cases():
    from test_npu import TENSORS
    return [(flags, spec) for flags, spec in TENSORS] + \
        [([], spec) for spec in NPU_SPECS] + \
        [(["--npus", "4", "--mem", "1024"], spec) for spec in NPU_SPECS]


@pytest.mark.parametrize("flags,spec", npu_cases())
def test_npu_matches_cli(cli, flags, spec):
    from test_npu import config_of
    config = config_of(flags) if flags else None
    got, out = same_as_cli(cli, ["npu", *flags, spec],
                           lambda: tessel.indexing.npu(spec, config))
    if got is not None:
        assert got + "\n" == out


@pytest.mark.parametrize("spec", ["fp32[2,3,4,5]@1", "fp32[2,3,4", "q=fp32[0,1,1,1]",
                                  "fp32[2,3,4,5]:matrix(7)@0"])
def test_npu_bad_specs_match_cli(cli, spec):
    config = tessel.npu.Config(npus=4, mem=1024)
    status, out, err = cli("indexing", "npu", "--npus", "4", "--mem", "1024", spec)
    if status == 0:
        assert tessel.indexing.npu(spec, config) + "\n" == out
        return
    with pytest.raises(ValueError) as e:
        tessel.indexing.npu(spec, config)
    assert str(e.value) == cli.message(err)


def test_npu_local_tensor_needs_a_config():
    with pytest.raises(ValueError, match="is a local tensor: give config="):
        tessel.indexing.npu("fp32[2,3,4,5]@0")
