"""tessel.align: the alignment verifier on MLIR text (`tessel align`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import List

from ._tessel import _align

__all__ = ["align", "AlignmentReport", "AlignmentFailure"]


@dataclass(frozen=True)
class AlignmentFailure:
    """One dynamic index into a tiled dim not proven a multiple of the tile:
    the fields of an entry of `tessel align --json`'s "failures"."""
    line: int           # the access's position in the text (1-based)
    column: int
    op: str             # 'vector.load'
    dimension: int      # the tiled dim
    multiple: int       # the tile extent it must be a multiple of
    verdict: str        # 'unknown' or 'proven-not'
    message: str        # Mosaic's error message
    source: str         # where the multiple comes from
    term: str           # the term of the index that breaks the proof
    status: str         # what is known of it
    fix: str            # the smallest change that proves it ('fix: ...')

    @property
    def proven_not(self) -> bool:
        """True when the index is proven not a multiple (else unknown)."""
        return self.verdict == "proven-not"


@dataclass(frozen=True)
class AlignmentReport:
    """What `tessel align` found: the accesses into tiled memory and the
    dynamic indices into tiled dims it checked, and each index not proven
    aligned. bool(report) is True when every index is proven aligned;
    str(report) is the command line's text report; to_dict() is the object
    `tessel align --json` prints."""
    file: str
    accesses: int
    indices: int
    aligned: bool
    failures: List[AlignmentFailure] = field(default_factory=list)
    _text: str = field(default="", repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.aligned

    def __str__(self) -> str:
        return self._text

    def to_dict(self) -> dict:
        """The report as `tessel align --json` prints it, parsed."""
        return {"file": self.file, "accesses": self.accesses,
                "indices": self.indices, "aligned": self.aligned,
                "failures": [asdict(f) for f in self.failures]}


def align(mlir_text: str, *, name: str = "<string>") -> AlignmentReport:
    """Checks that every dynamic index into tiled memory is a multiple of
    the tile (Mosaic TPU's rule; `tessel align`, docs/alignment.md), on MLIR
    text with func, arith, scf, affine, memref, vector, gpu, tessel and tpu
    ops. `name` stands for the file name in the report and in parse errors;
    MLIR that does not parse raises ValueError ("'NAME' is not valid MLIR",
    then the parser's messages).

    >>> report = tessel.align('''
    ... func.func @k(%m: memref<4x256xf32, #tpu.memory_space<vmem>>, %b: index) -> vector<1x32xf32> {
    ...   %c0 = arith.constant 0 : index
    ...   %v = vector.load %m[%c0, %b] : memref<4x256xf32, #tpu.memory_space<vmem>>, vector<1x32xf32>
    ...   return %v : vector<1x32xf32>
    ... }''')
    >>> bool(report), report.accesses, report.indices
    (False, 1, 1)
    >>> f = report.failures[0]
    >>> f.message
    'cannot statically prove that index in dimension 1 is a multiple of 128'
    >>> "`%aligned = tpu.assume_multiple %b, 128 : index`" in f.fix
    True
    """
    if not isinstance(mlir_text, str):
        raise TypeError(f"mlir_text must be a str, not {type(mlir_text).__name__}")
    data, text = _align(mlir_text, name)
    report = json.loads(data)
    return AlignmentReport(
        file=report["file"], accesses=report["accesses"],
        indices=report["indices"], aligned=report["aligned"],
        failures=[AlignmentFailure(**f) for f in report["failures"]],
        _text=text)
