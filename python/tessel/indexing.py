"""Indexing maps in XLA's text form (`tessel indexing simplify|compose|eval|npu`):

    (d0, d1)[s0] -> (d1, d0 + s0), domain: d0 in [0, 9], d1 in [0, 4], s0 in [0, 1]

    >>> tessel.indexing.simplify(
    ...     "(d0, d1) -> ((d0 * 4 + d1) floordiv 8), domain: d0 in [0, 15], d1 in [0, 3]")
    '(d0, d1) -> (d0 floordiv 2), domain: d0 in [0, 15], d1 in [0, 3]'
    >>> tessel.indexing.eval("(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]", (3, 7))
    (7, 3)

The maps of HLO instructions are `tessel.hlo.indexing`; the map of a tiled
layout is `tessel.Layout.as_indexing_map`. Errors are ValueError with the
messages of the command line.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from ._tessel import NpuConfig, _indexing_compose, _indexing_eval, _indexing_npu
from ._tessel import _indexing_simplify

__all__ = ["simplify", "compose", "eval", "npu"]


def simplify(map: str, *, check: bool = False) -> str:
    """The map simplified (`tessel indexing simplify MAP`). check=True also
    compares it with the input at every point of the domain
    (`--check`; small domains) and raises ValueError where they differ.

    >>> tessel.indexing.simplify(
    ...     "(d0, d1) -> ((d0 * 4 + d1) floordiv 8), domain: d0 in [0, 15], d1 in [0, 3]")
    '(d0, d1) -> (d0 floordiv 2), domain: d0 in [0, 15], d1 in [0, 3]'
    """
    return _indexing_simplify(map, check)


def compose(first: str, second: str, *, simplify: bool = True) -> str:
    """The composition: `first`'s results feed `second`'s dims
    (`tessel indexing compose FIRST SECOND`; simplify=False is
    `--no-simplify`).

    >>> tessel.indexing.compose("(d0) -> (-d0 + 3), domain: d0 in [0, 3]",
    ...                         "(d0) -> (d0 + 2), domain: d0 in [0, 3]")
    '(d0) -> (-d0 + 5), domain: d0 in [0, 3]'
    """
    return _indexing_compose(first, second, simplify)


def eval(map: str, dims: Sequence[int],
         symbols: Sequence[int] = ()) -> Optional[Tuple[int, ...]]:
    """The map's results at a point (`tessel indexing eval MAP D0,D1,...
    [S0,...]`): dims, then symbols (range variables, then runtime
    variables). None where the point is outside the domain (the command
    line prints 'outside the domain').

    >>> tessel.indexing.eval("(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]", (3, 7))
    (7, 3)
    >>> tessel.indexing.eval("(d0) -> (d0), domain: d0 in [0, 3]", [9]) is None
    True
    """
    results = _indexing_eval(map, [int(d) for d in dims], [int(s) for s in symbols])
    return None if results is None else tuple(results)


def npu(spec: str, config: Optional[NpuConfig] = None) -> str:
    """An NPU tensor as an indexing map (`tessel indexing npu SPEC`): a local
    tensor (spec as for tessel.npu.LocalTensor, a matrix without W gets
    the advisor's) from (n, c, h, w) to (npu, byte offset) on `config`; a
    system-memory tensor (`:continuous`, no config needed) to its byte
    offset.

    >>> tessel.indexing.npu("fp32[2,3,4,5]:continuous")
    '(d0, d1, d2, d3) -> (d0 * 240 + d1 * 80 + d2 * 20 + d3 * 4), domain: ...'
    >>> tessel.indexing.npu("m=fp32[2,40]:matrix", tessel.npu.Config(npus=4, mem=1024))
    '(d0, d1, d2, d3) -> (d1 floordiv 20, d0 * 128 + (d1 mod 20) * 4), domain: ...'
    """
    return _indexing_npu(spec, config)
