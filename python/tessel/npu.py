"""NPU local memory of a Sophgo-style TPU (`tessel npu`): configurations,
local tensors and where their bytes live, the byte-exact simulator on numpy
arrays, fit reports and pictures.

    >>> chip = tessel.npu.Config(npus=4, mem=1024)       # or Config("bm1684x")
    >>> t = tessel.npu.LocalTensor("x=fp32[2,3,4,5]:aligned@2048", chip)
    >>> print(t.explain())
    >>> mem = tessel.npu.LocalMemory(chip)
    >>> mem.store(t, np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5))
    >>> mem.load(t)[1, 2, 3, 4]
    119.0
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence, Union

from . import _arrays
from ._tessel import FitReport, LocalTensor, MatrixAdvice, NpuConfig
from ._tessel import LocalMemory as _LocalMemory
from ._tessel import _npu_advise_matrix, _npu_config, _npu_fit, _npu_presets

__all__ = ["Config", "NpuConfig", "LocalTensor", "LocalMemory", "FitReport",
           "MatrixAdvice", "presets", "fit", "advise_matrix"]


def presets() -> list:
    """The chips tessel knows: ['bm1684', 'bm1684x', 'bm1688']."""
    return _npu_presets()


def Config(chip: Optional[str] = None, *, npus: Optional[int] = None,
           mem: Union[int, str, None] = None, banks: Optional[int] = None,
           align: Optional[int] = None) -> NpuConfig:
    """A chip preset, optionally modified, or a custom chip (`--chip`,
    `--npus`, `--mem`, `--banks`, `--align`); mem is bytes or a size such
    as '512K'.

    >>> str(tessel.npu.Config(npus=4, mem=1024))
    'custom: 4 npus x 1 KiB, 128-byte alignment, 4N/2N/2IC modes'
    """
    return _npu_config(chip, npus, mem, banks, align)


class LocalMemory(_LocalMemory):
    """The byte-exact simulator of local memory (`tessel/Npu/LocalMemory.h`):
    X * S bytes, numpy arrays stored into local tensors and loaded back.

    >>> mem = tessel.npu.LocalMemory(chip)
    >>> mem.store(t, x)            # x: float32 (2,3,4,5) for fp32[2,3,4,5]
    480
    >>> np.array_equal(mem.load(t), x)
    True
    """

    def store(self, tensor: LocalTensor, array) -> int:
        """Writes a numpy array of the tensor's logical shape and type into
        local memory (system -> local); returns the bytes written. Arrays
        that are not C-contiguous are copied to C order first."""
        return self._store(tensor, _arrays.argument(array, "array"))

    def load(self, tensor: LocalTensor):
        """Reads the tensor back as a new numpy array (local -> system)."""
        return _arrays.result(self._load(tensor))


def advise_matrix(matrix: Union[str, Sequence[int]], config: NpuConfig, *,
                  dtype: str = "fp32", start_npu: int = 0,
                  w: Optional[Iterable[int]] = None) -> MatrixAdvice:
    """The best W for a rows x cols matrix starting at npu `start_npu`, and
    the table of choices (`tessel npu fit --matrix RxC --dtype D
    --start-npu Q [--w W,W,...]`): `matrix` is 'RxC' or (rows, cols); `w`
    lists the Ws to compare (default: the advisor's candidates). str() is
    the command's report, to_dict() what `--json` prints.

    >>> a = tessel.npu.advise_matrix("2x40", tessel.npu.Config(npus=4, mem=1024))
    >>> a.best_w
    20
    >>> print(a)                      # best W = 20, why, and the table
    >>> a.to_dict()["best"]["fullest_npu_bytes"]
    256
    """
    if isinstance(matrix, str):
        parts = matrix.lower().split("x")
        try:
            rows, cols = (int(p) for p in parts)
        except ValueError:
            raise ValueError(f"matrix='{matrix}': expected ROWSxCOLS, "
                             f"e.g. 2x40") from None
    else:
        rows, cols = matrix
    return _npu_advise_matrix(int(rows), int(cols), config, dtype,
                              int(start_npu), [int(x) for x in (w or ())])


def fit(specs: Union[str, Iterable[str]], config: NpuConfig) -> FitReport:
    """Places tensors together (`tessel npu fit`): those with an address
    where they say, the others first-fit; str() of the result is the report.
    `specs` is a list of specs, or one string of specs separated by ';' or
    newlines (a `--tensors` file).

    >>> r = tessel.npu.fit(["a=fp32[2,3,4,5]@0", "b=fp32[2,40]:matrix"], chip)
    >>> r.fits
    True
    >>> r.to_dict()["npus"][0]        # what `tessel npu fit --json` prints

    The W advisor of `tessel npu fit --matrix` is `advise_matrix`.
    """
    return _npu_fit(specs if isinstance(specs, str) else list(specs), config)
