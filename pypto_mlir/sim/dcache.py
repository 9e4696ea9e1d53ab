"""The scalar unit's GM data cache: which scalar reads of GM hit.

The scalar unit reads GM through a per-core DataCache (Ascend C programming
guide, *Reading/Writing Data by the Scalar Unit*): a read that misses fills
the whole line, so reading the following elements of the line (CSR offsets
`indptr[r]`, `indptr[r + 1]`, consecutive column indices) hits. Modelled as
fully associative with LRU replacement, `scalar.dcache_size` bytes in lines of
`scalar.dcache_line` bytes. Only the timing is modelled: reads return GM as it
is in program order (the kernels read index arrays nothing writes).
"""

from __future__ import annotations

from collections import OrderedDict


class DataCache:
    """LRU lines of (tensor id, line number)."""

    __slots__ = ("line", "capacity", "lines")

    def __init__(self, line: int, size: int):
        self.line = line
        self.capacity = size // line
        self.lines: OrderedDict[tuple[int, int], None] = OrderedDict()

    def read(self, tensor: int, start: int, end: int) -> bool:
        """Read bytes [start, end) of a tensor; whether every line was cached
        (the missing ones are filled)."""
        hit = True
        lines = self.lines
        for number in range(start // self.line, (end - 1) // self.line + 1):
            key = (tensor, number)
            if key in lines:
                lines.move_to_end(key)
                continue
            hit = False
            lines[key] = None
            if len(lines) > self.capacity:
                lines.popitem(last=False)
        return hit
