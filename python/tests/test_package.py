"""The package itself: stubs, docstrings, the dtype table."""

import pathlib

import ml_dtypes
import numpy as np
import pytest

import tessel
import tessel._tessel


def test_stubs_are_generated_next_to_the_extension():
    stub = pathlib.Path(tessel._tessel.__file__).with_name("_tessel.pyi")
    assert stub.exists(), "nanobind_add_stub did not run"
    text = stub.read_text()
    for name in ["class Layout", "class RelayoutPlan", "class HloModule",
                 "class Executable", "class LocalTensor", "class LocalMemory",
                 "class FitReport", "def offset(self, index: Sequence[int]) -> int"]:
        assert name in text


PUBLIC = [tessel.Layout, tessel.Layout.offset, tessel.Layout.index_at,
          tessel.Layout.explain, tessel.Layout.draw, tessel.Layout.svg,
          tessel.Layout.as_indexing_map, tessel.Layout.tpu, tessel.RelayoutPlan,
          tessel.relayout, tessel.compile, tessel.Executable,
          tessel.Executable.mlir, tessel.hlo, tessel.hlo.parse,
          tessel.hlo.evaluate, tessel.hlo.indexing, tessel.hlo.from_jax,
          tessel.npu, tessel.npu.Config, tessel.npu.LocalTensor,
          tessel.npu.LocalMemory, tessel.npu.fit, tessel.npu.NpuConfig.split]


@pytest.mark.parametrize("obj", PUBLIC, ids=lambda o: getattr(o, "__qualname__", o.__name__))
def test_docstrings_have_a_worked_example(obj):
    assert obj.__doc__ and ">>>" in obj.__doc__


TYPES = {np.bool_: "pred", np.int8: "s8", np.int16: "s16", np.int32: "s32",
         np.int64: "s64", np.uint8: "u8", np.uint16: "u16", np.uint32: "u32",
         np.uint64: "u64", np.float16: "f16", np.float32: "f32",
         np.float64: "f64", np.complex64: "c64", np.complex128: "c128",
         ml_dtypes.bfloat16: "bf16", ml_dtypes.float8_e5m2: "f8e5m2",
         ml_dtypes.float8_e4m3fn: "f8e4m3fn",
         ml_dtypes.float8_e4m3b11fnuz: "f8e4m3b11fnuz",
         ml_dtypes.float8_e5m2fnuz: "f8e5m2fnuz",
         ml_dtypes.float8_e4m3fnuz: "f8e4m3fnuz", ml_dtypes.int4: "s4",
         ml_dtypes.uint4: "u4"}


@pytest.mark.parametrize("dtype,name", TYPES.items(), ids=list(TYPES.values()))
def test_element_types_round_trip(dtype, name):
    assert tessel.element_type(dtype) == name
    assert tessel.numpy_dtype(name) == np.dtype(dtype)
    assert tessel.Layout(f"{name}[2]").element_type == name


def test_unknown_dtypes_are_type_errors():
    for dtype in [np.dtype("U3"), np.dtype("O"), np.dtype([("a", "i4")]),
                  np.dtype("V2"), np.dtype("datetime64[s]")]:
        with pytest.raises(TypeError, match="no element type"):
            tessel.element_type(dtype)
    with pytest.raises(TypeError, match="numpy has no dtype for token"):
        tessel.numpy_dtype("token")
