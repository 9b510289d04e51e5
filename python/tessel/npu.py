"""NPU local memory of a Sophgo-style TPU (`tessel npu`)."""

from __future__ import annotations

__all__: list = []
