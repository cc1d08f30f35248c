"""HyperLogLog sketches of visitors (per day) and of sessions (per minute), dense or sparse.

Dense: every register, 6 bits each (4,096 registers of a day's visitors: 3,072 bytes). Sparse: only the
registers raised, 3 bytes each (the register's index then its rank), sorted by index; a day item holds the
sparse form while it is smaller (fewer than 1,024 registers raised), so a shop with few visitors keeps a small
item. Both forms give the same estimate: the sparse one is expanded before estimating."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from typing import Any

HLL_BITS = 12
HLL_REGISTERS = 1 << HLL_BITS
REGISTER_BITS = 6  # ranks go up to 64 - HLL_BITS + 1 = 53 < 2**6
DENSE_BYTES = HLL_REGISTERS * REGISTER_BITS // 8
# Sessions per minute: a smaller sketch (1,024 registers, 768 bytes dense, standard error about 3%; exact
# for a handful of sessions).
SESSION_BITS = 10
SESSION_REGISTERS = 1 << SESSION_BITS
SPARSE_ENTRY = 3  # bytes per raised register in the sparse form

Registers = dict[int, int]  # register index -> rank, only the raised ones


def _register(key: str, bits: int = HLL_BITS) -> tuple[int, int]:
    """HyperLogLog register index and rank (position of the first 1 bit) of a visitor or session."""
    digest = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    index = digest >> (64 - bits)
    rest = (digest << bits) & ((1 << 64) - 1)
    rank = 1
    while rank <= 64 - bits and not rest & (1 << 63):
        rank += 1
        rest <<= 1
    return index, rank


def raise_to(registers: Registers, added: Mapping[int, int]) -> bool:
    """Raise `registers` to the maximum with `added`; whether anything changed."""
    changed = False
    for index, rank in added.items():
        if rank > registers.get(index, 0):
            registers[index] = rank
            changed = True
    return changed


def pack(registers: list[int]) -> bytes:
    """Registers of 6 bits each (4,096 of them: 3,072 bytes)."""
    value = 0
    for rank in registers:
        value = (value << REGISTER_BITS) | rank
    return value.to_bytes(len(registers) * REGISTER_BITS // 8, "big")


def unpack(data: Any, size: int = HLL_REGISTERS) -> list[int]:
    if not data:
        return [0] * size
    value = int.from_bytes(bytes(data), "big")
    mask = (1 << REGISTER_BITS) - 1
    out = [0] * size
    for i in range(size - 1, -1, -1):
        out[i] = value & mask
        value >>= REGISTER_BITS
    return out


def sparse_pack(registers: Mapping[int, int]) -> bytes:
    return b"".join(
        ((index << REGISTER_BITS) | rank).to_bytes(SPARSE_ENTRY, "big")
        for index, rank in sorted(registers.items())
    )


def sparse_unpack(data: Any) -> Registers:
    raw = bytes(data or b"")
    out: Registers = {}
    for at in range(0, len(raw) - SPARSE_ENTRY + 1, SPARSE_ENTRY):
        value = int.from_bytes(raw[at : at + SPARSE_ENTRY], "big")
        out[value >> REGISTER_BITS] = value & ((1 << REGISTER_BITS) - 1)
    return out


def dense(registers: Mapping[int, int], size: int = HLL_REGISTERS) -> list[int]:
    out = [0] * size
    for index, rank in registers.items():
        out[index] = rank
    return out


def estimate(ranks: list[int]) -> int:
    """HyperLogLog cardinality estimate with the small-range correction."""
    m = len(ranks)
    alpha = 0.7213 / (1 + 1.079 / m)
    raw = alpha * m * m / sum(2.0**-r for r in ranks)
    zeros = ranks.count(0)
    if raw <= 2.5 * m and zeros:
        return round(m * math.log(m / zeros))
    return round(raw)


def stored_visitors(item: Mapping[str, Any]) -> Registers:
    """The visitor registers of a day item, whichever form it holds ("hll" dense, "hlls" sparse)."""
    registers = sparse_unpack(item.get("hlls"))
    if item.get("hll"):
        raise_to(registers, {i: r for i, r in enumerate(unpack(item["hll"])) if r})
    return registers


def visitor_attributes(registers: Registers) -> dict[str, bytes]:
    """The day item's sketch attribute: sparse while it is smaller than the dense form."""
    if len(registers) * SPARSE_ENTRY < DENSE_BYTES:
        return {"hlls": sparse_pack(registers)}
    return {"hll": pack(dense(registers))}


def union(sketches: Iterable[Mapping[int, int]]) -> Registers:
    out: Registers = {}
    for sketch in sketches:
        raise_to(out, sketch)
    return out
