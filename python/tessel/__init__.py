"""tessel from Python: tiled layouts, relayout of numpy arrays, HLO, the
fusion compiler, NPU local memory, indexing maps and the alignment verifier.

    >>> import numpy as np, ml_dtypes, tessel
    >>> x = np.ones((3, 300), ml_dtypes.bfloat16)
    >>> layout = tessel.Layout.tpu("bf16[3,300]")     # {1,0:T(4,128)(2,1)}
    >>> buf = tessel.relayout(x, to=layout)           # the TPU buffer, padding zeroed
    >>> back = tessel.relayout(buf, from_=layout)     # the array again
    >>> bool((back == x).all())
    True

Errors are ValueError with the message `tessel` prints on the command line.
"""

from __future__ import annotations

import os
import tempfile
from typing import Optional, Sequence, Union

import numpy as np

from . import _arrays
from ._tessel import Executable as _CompiledModule
from ._tessel import HloModule, Layout, RelayoutPlan
from ._tessel import _compile as _tessel_compile
from . import hlo, indexing, npu
from ._align import AlignmentFailure, AlignmentReport, align

__all__ = ["Layout", "RelayoutPlan", "relayout", "compile", "Executable",
           "HloModule", "hlo", "npu", "indexing", "align", "AlignmentReport",
           "AlignmentFailure", "element_type", "numpy_dtype"]

element_type = _arrays.element_type
numpy_dtype = _arrays.numpy_dtype

LayoutLike = Union[str, Layout, None]


def _text(layout: LayoutLike) -> Optional[str]:
    if layout is None:
        return None
    if isinstance(layout, Layout):
        return str(layout)
    if isinstance(layout, str):
        return layout
    raise TypeError(f"a layout is a string such as '{{1,0:T(8,128)}}' or a "
                    f"tessel.Layout, not {type(layout).__name__}")


def _shape_of(layout: Optional[str]) -> Optional[str]:
    """The element type and dims of a layout given with its shape
    ('f32[3,5]{1,0:T(2,2)}' -> 'f32[3,5]'), None for a bare layout."""
    if layout is None or layout.lstrip().startswith("{"):
        return None
    parsed = Layout(layout)
    return f"{parsed.element_type}[{','.join(str(d) for d in parsed.dims)}]"


def relayout(array, to: LayoutLike = None, from_: LayoutLike = None, *,
             shape: Optional[str] = None, threads: int = 0,
             out: Optional[np.ndarray] = None) -> np.ndarray:
    """Converts an array's buffer from one layout to another
    (`tessel relayout`): padding slots of the result are zero.

    `to` and `from_` are bare layouts ('{1,0:T(8,128)(2,1)}'), shapes with
    layouts ('bf16[3,300]{1,0:T(4,128)(2,1)}') or tessel.Layout objects;
    the default is row-major. The shape (element type and dims) is `shape`,
    else the shape of `from_` or `to` when given with one, else the array's
    own dtype and shape.

    A row-major source is read as the array itself: its dtype and shape
    must be the logical ones. Any other source is the flat physical buffer
    (`source_bytes` bytes, any dtype). The result is the array (row-major
    destination) or the flat buffer: a 1-D array of the element type, or
    of uint8 for packed E(n) layouts. `out=` receives it instead of a new
    array (allocated on a 64-byte boundary: the tiling kernels' streaming
    stores run many times slower into numpy's 16-byte aligned buffers, so
    pass an aligned `out=` for speed). C-contiguous inputs are read in place
    (no copy), others are copied to C order first; the GIL is released while
    it runs.

    >>> x = np.arange(15, dtype=np.float32).reshape(3, 5)
    >>> tessel.relayout(x, to="{1,0:T(2,2)}")[:8]
    array([0., 1., 5., 6., 2., 3., 7., 8.], dtype=float32)
    """
    array = _arrays.as_array(array)
    to_text, from_text = _text(to), _text(from_)
    if shape is None:
        shape = _shape_of(from_text) or _shape_of(to_text)
    if shape is None:
        dims = ",".join(str(d) for d in array.shape)
        shape = f"{_arrays.element_type(array.dtype)}[{dims}]"
    plan = RelayoutPlan(shape, from_=from_text, to=to_text, threads=threads)
    source = _arrays.c_order(array)
    if plan.source_is_array:
        have, want = _arrays.element_type(array.dtype), plan.source.element_type
        if have != want:
            raise ValueError(f"array: holds {have} elements, expected {want} "
                             f"for {plan.source}")
    plan.check_source(list(source.shape) if plan.source_is_array else [],
                      False, source.nbytes)
    destination = plan.destination
    if plan.destination_is_array:
        dtype = _arrays.numpy_dtype(destination.element_type)
        dims = destination.dims
    elif destination.element_bits == 8 * _arrays.numpy_dtype(
            destination.element_type).itemsize:
        dtype = _arrays.numpy_dtype(destination.element_type)
        dims = (destination.physical_elements,)
    else:
        dtype, dims = np.dtype(np.uint8), (plan.destination_bytes,)
    if out is None:
        out = _arrays.empty_aligned(dims, dtype)
    else:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a numpy array, not {type(out).__name__}")
        if out.dtype != dtype or tuple(out.shape) != tuple(dims):
            raise ValueError(f"out is {out.dtype}{list(out.shape)}, expected "
                             f"{dtype}{list(dims)} for {destination}")
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("out must be a writeable C-contiguous array")
    plan.execute(_arrays.byte_view(source), _arrays.byte_view(out))
    return out


class Executable:
    """An HLO module compiled for this CPU (`tessel run`): call it on numpy
    arrays, one per ENTRY parameter; it returns an array, or a tuple of
    arrays for a tuple ROOT.

    >>> exe = tessel.compile(open("examples/gelu_small.hlo").read())
    >>> y = exe(np.random.rand(*dims).astype(ml_dtypes.bfloat16))
    >>> print(exe.explain())
    """

    def __init__(self, compiled: _CompiledModule, tuple_result: bool):
        self._compiled = compiled
        self._tuple = tuple_result

    @property
    def parameters(self) -> list:
        """The shapes of the ENTRY parameters."""
        return self._compiled.parameters

    @property
    def outputs(self) -> list:
        """The shapes of the outputs."""
        return self._compiled.outputs

    @property
    def device(self) -> str:
        """Where the kernels run: 'cpu', or 'gpu' (compiled with
        ``device="gpu"``)."""
        return self._compiled.device

    def __call__(self, *arrays, threads: int = 0):
        """Runs the kernels on numpy arrays, one per ENTRY parameter (`tessel
        run`); threads=0 uses every core. Row-major parameters and outputs
        with C-contiguous, 16-byte aligned arguments run on the arrays' own
        bytes, with no copy; other calls convert through Literals.

        >>> exe = tessel.compile("HloModule m\\nENTRY e { p = f32[2] parameter(0) "
        ...                      "ROOT n = f32[2] negate(p) }")
        >>> exe(np.array([1.5, 0], np.float32))
        array([-1.5, -0. ], dtype=float32)
        """
        args = [_arrays.argument(a, f"argument {i}") for i, a in enumerate(arrays)]
        results = [_arrays.result(r) for r in self._compiled._run(args, threads)]
        return tuple(results) if self._tuple else results[0]

    def emit(self, kind: str = "mlir") -> str:
        """`tessel compile --emit=KIND`: partition, mlir, lowered, llvm, asm,
        and ptx for an executable compiled with ``device="gpu"``."""
        return self._compiled.emit(kind)

    def explain(self) -> str:
        """`tessel compile --explain`: kernels, emitters and why, launches."""
        return self._compiled.explain()

    def mlir(self, after: Optional[str] = None) -> str:
        """The emitted MLIR, or with `after` the IR after the first pass whose
        flag matches that regex (`tessel compile --dump-after`).

        >>> print(exe.mlir(after="tessel-lower-tensors"))
        """
        if after is None:
            return self._compiled.emit("mlir")
        with tempfile.TemporaryDirectory() as d:
            self._compiled._dump(after, d)
            files = sorted(f for f in os.listdir(d) if not f.startswith("00."))
            if not files:
                raise ValueError(f"no pass of the pipeline matches '{after}'")
            with open(os.path.join(d, files[0])) as f:
                return f.read()


def compile(hlo_text: str, *, excess_precision: bool = False,
            tables: bool = True, relayouts: bool = True,
            device: str = "cpu", sm: Optional[int] = None,
            vector_width: Optional[int] = None) -> Executable:
    """Compiles an HLO module (text, as jax prints it) for this CPU, or with
    ``device="gpu"`` for an NVIDIA GPU.

    ``tables=False`` makes every kernel compute its elements; by default an
    elementwise kernel of one 8- or 16-bit input runs as a lookup in a table
    of its own results where computing is estimated to cost more on this
    CPU (the same bits; `tessel run --no-tables`).
    ``relayouts=False`` runs the transpose emitter's code for kernels that
    only transpose or copy an input, which by default run as relayout plans
    (the same bytes; `tessel run --no-relayout`).
    ``vector_width`` (128, 256 or 512) is the widest vectors LLVM's
    vectorizers use on the CPU (`tessel run --prefer-vector-width`); by
    default 512 bits on AVX-512 CPUs from Ice Lake and Zen 4 on, LLVM's
    choice for the CPU elsewhere.

    ``device="gpu"`` writes the kernels as PTX (for compute capability
    ``sm``, by default the device's) and runs them through the CUDA driver,
    opened when compiling (`tessel run --device gpu`): calls copy the
    arrays to the GPU and the results back. Without a driver it raises
    ValueError("no CUDA driver found ..."). Table lookups and relayout
    plans are CPU-only shortcuts; on the GPU every kernel computes.

    >>> exe = tessel.compile(hlo_text)
    >>> y = exe(x)
    """
    if isinstance(hlo_text, HloModule):
        hlo_text = str(hlo_text)
    compiled = _tessel_compile(hlo_text, excess_precision, tables, relayouts,
                               device, 0 if sm is None else sm,
                               0 if vector_width is None else vector_width)
    return Executable(compiled, hlo.parse(hlo_text, verify=False).result.startswith("("))

