"""HLO modules as XLA and jax print them: parse, print, verify, evaluate
with XLA's semantics, indexing maps (`tessel hlo`, `tessel indexing`).

    >>> text = '''HloModule m
    ... ENTRY e { p = f32[2] parameter(0) ROOT n = f32[2] negate(p) }'''
    >>> tessel.hlo.evaluate(text, np.array([1.5, 0], np.float32))
    array([-1.5, -0. ], dtype=float32)
"""

from __future__ import annotations

from typing import Optional, Union

from . import _arrays
from ._tessel import HloModule, _hlo_parse

__all__ = ["HloModule", "parse", "fmt", "verify", "evaluate", "indexing",
           "from_jax"]

ModuleLike = Union[str, HloModule]


def parse(text: str, verify: bool = True) -> HloModule:
    """Parses HLO text (and checks its shapes unless verify=False).

    >>> m = tessel.hlo.parse(text); m.parameters
    ['f32[2]{0}']
    """
    return _hlo_parse(text, verify)


def _module(module: ModuleLike) -> HloModule:
    return module if isinstance(module, HloModule) else parse(module)


def fmt(text: str, verify: bool = True) -> str:
    """The module in XLA's canonical text form (`tessel hlo fmt`)."""
    return str(parse(text, verify))


def verify(text: str) -> None:
    """Raises ValueError with what `tessel hlo verify` reports, else None."""
    parse(text, True)


def evaluate(module: ModuleLike, *arrays, physical: bool = False):
    """Evaluates the module on numpy arrays, one per ENTRY parameter, with
    XLA's semantics (`tessel hlo eval`): an array, or a tuple of arrays for a
    tuple ROOT. Arrays are logical; physical=True takes and gives the
    buffers of the entry's layouts (as `--physical`).

    >>> tessel.hlo.evaluate(text, np.array([1.5, 0], np.float32))
    array([-1.5, -0. ], dtype=float32)
    """
    m = _module(module)
    args = [_arrays.argument(a, f"argument {i}") for i, a in enumerate(arrays)]
    results = [_arrays.result(r) for r in m._evaluate(args, not physical)]
    return tuple(results) if m.result.startswith("(") else results[0]


def indexing(module: ModuleLike, instruction: Optional[str] = None, *,
             computation: Optional[str] = None,
             input_to_output: Optional[int] = None, as_dict: bool = False):
    """The indexing maps of an instruction (default: the entry's ROOT), as
    `tessel indexing maps` prints them: per operand, the maps from the
    output index to the operand index it reads; with input_to_output=N, the
    maps from operand N to the outputs. as_dict=True gives the object
    `tessel indexing maps --json` prints, parsed.

    >>> print(tessel.hlo.indexing(text))
    operand id = 0
    (d0) -> (d0), domain: d0 in [0, 1]
    >>> tessel.hlo.indexing(text, as_dict=True)["outputs"][0]["operands"]
    [{'maps': ['(d0) -> (d0), domain: d0 in [0, 1]'], 'operand': 0}]
    """
    m = _module(module)
    if as_dict:
        import json
        return json.loads(m._indexing_json(instruction or "", computation or "",
                                           input_to_output))
    return m.indexing(instruction or "", computation or "", input_to_output)


def from_jax(fn, *args, **kwargs) -> str:
    """The HLO text jax hands to XLA for `jax.jit(fn)(*args)` (needs jax).

    >>> text = tessel.hlo.from_jax(lambda x: jnp.tanh(x) * 2, x)
    >>> y = tessel.compile(text)(x)
    """
    try:
        import jax
    except ImportError as e:
        raise ImportError("tessel.hlo.from_jax needs jax "
                          "(pip install -r requirements-jax.txt)") from e
    return jax.jit(fn, **kwargs).lower(*args).as_text(dialect="hlo")
