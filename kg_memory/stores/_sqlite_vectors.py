"""How the SQLite store keeps embedding vectors: float32 blobs, scored by exact cosine."""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Sequence


def pack(vector: Sequence[float]) -> bytes:
    """float32, little-endian, whatever the machine's byte order."""
    values = array("f", vector)
    if sys.byteorder == "big":
        values.byteswap()
    return values.tobytes()


def unpack(blob: bytes) -> tuple[float, ...]:
    values = array("f")
    values.frombytes(blob)
    if sys.byteorder == "big":
        values.byteswap()
    return tuple(values)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))
