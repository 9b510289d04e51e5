"""numpy dtypes and XLA element types, and the checks on arrays handed to tessel."""

from __future__ import annotations

import numpy as np

try:
    import ml_dtypes
except ImportError:  # bf16 and f8 arrays need ml_dtypes
    ml_dtypes = None

# numpy dtype name -> XLA type name, for the types numpy itself knows.
_NUMPY_TYPES = {
    "bool": "pred",
    "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}
# ml_dtypes type name -> XLA type name (one element per byte for s4/u4/s2/u2,
# as tessel stores them without E(n)).
_ML_DTYPES_TYPES = {
    "bfloat16": "bf16",
    "float8_e5m2": "f8e5m2",
    "float8_e4m3fn": "f8e4m3fn",
    "float8_e4m3b11fnuz": "f8e4m3b11fnuz",
    "float8_e5m2fnuz": "f8e5m2fnuz",
    "float8_e4m3fnuz": "f8e4m3fnuz",
    "int4": "s4", "uint4": "u4", "int2": "s2", "uint2": "u2",
}
_TO_NUMPY = {xla: name for name, xla in _NUMPY_TYPES.items()}
_TO_ML_DTYPES = {xla: name for name, xla in _ML_DTYPES_TYPES.items()}


def element_type(dtype) -> str:
    """The XLA element type of a numpy dtype: float32 -> 'f32', bfloat16 -> 'bf16'."""
    dtype = np.dtype(dtype)
    name = dtype.name
    if name in _NUMPY_TYPES and dtype.kind != "V":
        return _NUMPY_TYPES[name]
    if ml_dtypes is not None and name in _ML_DTYPES_TYPES:
        if np.dtype(getattr(ml_dtypes, name)) == dtype:
            return _ML_DTYPES_TYPES[name]
    raise TypeError(f"tessel has no element type for numpy dtype {dtype!r}; "
                    "expected bool, an int, uint, float or complex type, or "
                    "an ml_dtypes type (bfloat16, float8_*, int4, ...)")


def numpy_dtype(element: str) -> np.dtype:
    """The numpy dtype of an XLA element type: 'bf16' -> ml_dtypes.bfloat16."""
    if element in _TO_NUMPY:
        return np.dtype(_TO_NUMPY[element])
    if element in _TO_ML_DTYPES:
        if ml_dtypes is None:
            raise TypeError(f"{element} arrays need ml_dtypes (pip install ml_dtypes)")
        return np.dtype(getattr(ml_dtypes, _TO_ML_DTYPES[element]))
    raise TypeError(f"numpy has no dtype for {element}")


def as_array(value, what: str = "array") -> np.ndarray:
    """`value` as a numpy array; lists and scalars become arrays."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__array__") or hasattr(value, "__dlpack__"):
        return np.asarray(value)
    if isinstance(value, (list, tuple, int, float, complex, bool, np.generic)):
        return np.asarray(value)
    raise TypeError(f"{what} must be a numpy array, not {type(value).__name__}")


# The relayout kernels write whole cache lines with streaming stores; numpy's
# own allocations are only 16-byte aligned, and the tiling kernels run many
# times slower into such a buffer. Results are allocated on a cache line.
ALIGNMENT = 64


def empty_aligned(shape, dtype) -> np.ndarray:
    """An uninitialized C-contiguous array whose data starts on a 64-byte
    boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = (-raw.ctypes.data) % ALIGNMENT
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def byte_view(array: np.ndarray) -> np.ndarray:
    """The bytes of a C-contiguous array as a 1-D uint8 view (no copy)."""
    return array.reshape(-1).view(np.uint8)


def c_order(array: np.ndarray) -> np.ndarray:
    """The array in C order: itself when C-contiguous, else a copy."""
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


def argument(array, what: str):
    """(element type, dims, bytes) of an argument for the extension."""
    array = as_array(array, what)
    array = c_order(array)
    return (element_type(array.dtype), list(array.shape), byte_view(array))


def result(value) -> np.ndarray:
    """A numpy array from the extension's (element type, dims, bytes)."""
    element, dims, data = value
    return data.view(numpy_dtype(element)).reshape(dims)
