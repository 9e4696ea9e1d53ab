"""UB bank conflicts (targets.cost.bank_access_cycles / bank_conflict_cycles) against
the Ascend C best-practice page "Avoiding Bank Conflicts in the Unified Buffer"
(hiascend.com, atlas_ascendc_best_practices_10_0025) and a loop-by-loop model."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto_mlir.targets import load_target
from pypto_mlir.targets.cost import bank_access_cycles, bank_conflict_cycles

T = load_target("ascend910b")
BANKS = T.memories["ub"].banks
assert BANKS is not None


def blocks(*addresses: int) -> np.ndarray:
    """One repeat touching the 32-byte blocks at `addresses`."""
    return np.array([addresses], dtype=np.int64)


def test_the_pages_bank_structure() -> None:
    # 192 KB in 48 banks of 128 rows of 32 B; 16 groups of 3 banks, bank 15, 31
    # and 47 forming one group.
    assert (BANKS.count, BANKS.groups, BANKS.width, BANKS.rows) == (48, 16, 32, 128)
    assert BANKS.count * BANKS.rows * BANKS.width == T.memories["ub"].size
    group_15 = [15 * 32 + k * 65536 for k in range(3)]
    assert [BANKS.bank_of(a) for a in group_15] == [15, 31, 47]
    assert {BANKS.group_of(a) for a in group_15} == {15}
    # "0x10000 is in bank 16, 0x10020 in bank 17 and 0x20020 in bank 33"; the
    # read/write example's 0x10E20 is in bank 17 too.
    assert [BANKS.bank_of(a) for a in (0x10000, 0x10020, 0x20020, 0x10E20)] == [
        16,
        17,
        33,
        17,
    ]
    # Every bank holds 128 rows.
    banks = BANKS.bank_of(np.arange(0, T.memories["ub"].size, 32))
    assert sorted(Counter(banks.tolist()).values()) == [128] * 48


# (reads, writes, extra cycles, the page's conclusion)
PAGE_TABLES = [
    # Table 1, read/write: src and dst of one instruction in one bank.
    ([0x10020], [0x10000], 0, "banks 17 and 16: no conflict"),
    ([0x10020], [0x10E20], 1, "both in bank 17: conflict"),
    # Table 3, read/read: two sources in one bank group.
    ([0x10020, 0x20020], [], 1, "banks 17 and 33, group 1: conflict"),
    ([0x10020, 0x10000], [], 0, "groups 1 and 0: no conflict"),
]


@pytest.mark.parametrize("reads,writes,extra,conclusion", PAGE_TABLES)
def test_the_pages_read_write_and_read_read_tables(
    reads: list[int], writes: list[int], extra: int, conclusion: str
) -> None:
    got = bank_conflict_cycles(
        T, [blocks(a) for a in reads], [blocks(a) for a in writes]
    )
    assert got == extra, conclusion


@pytest.mark.parametrize(
    "blk_stride,cycles",
    [
        (16, 8),  # "8 data blocks in one bank group: 8 cycles per repeat"
        (8, 4),  # "block 0 and block 2 in one bank group: 4 cycles per repeat"
        (1, 1),  # contiguous: 8 groups, one row each
    ],
)
def test_the_pages_write_write_table(blk_stride: int, cycles: int) -> None:
    """Table 2: dst 0x1FE00, the 8 blocks of a repeat blk_stride blocks apart."""
    dst = blocks(*(0x1FE00 + j * blk_stride * 32 for j in range(8)))
    assert bank_access_cycles(BANKS, [], [dst]).tolist() == [cycles]
    assert bank_conflict_cycles(T, [], [dst]) == cycles - 1


def repeats(address: int, count: int, blocks_per_repeat: int = 8) -> np.ndarray:
    """Contiguous repeats of `blocks_per_repeat` blocks from `address`."""
    i = np.arange(count)[:, None] * blocks_per_repeat + np.arange(blocks_per_repeat)
    return address + 32 * i


def test_full_repeats() -> None:
    """256-byte repeats: sources half a group span (256 B mod 512) apart read all
    16 groups once; at the same offset mod 512 they read groups 0-7 twice; a
    destination in place over a source or in another 64 KiB slice is free, one
    in the sources' banks costs a cycle more."""
    a, b_same, b_half = repeats(0, 4), repeats(2048, 4), repeats(2304, 4)
    assert bank_conflict_cycles(T, [a, b_half], [a]) == 0
    assert bank_conflict_cycles(T, [a, b_same], [a]) == 4
    assert bank_conflict_cycles(T, [a, b_half], [repeats(65536, 4)]) == 0
    # groups 0-15 read, dst rows in banks 0-7 which a reads: read + write = 2
    assert bank_conflict_cycles(T, [a, b_half], [repeats(4096, 4)]) == 4
    # the same row read by two operands is read once
    assert bank_conflict_cycles(T, [a, a], []) == 0


def test_no_cost_when_the_target_does_not_model_conflicts() -> None:
    import dataclasses

    free = dataclasses.replace(BANKS, conflict_cycles=0)
    memories = dict(T.memories)
    memories["ub"] = dataclasses.replace(T.memories["ub"], banks=free)
    target = dataclasses.replace(T, memories=memories)
    assert bank_conflict_cycles(target, [blocks(0x10020)], [blocks(0x10E20)]) == 0


def reference_cycles(reads: list[list[int]], writes: list[list[int]]) -> int:
    """One repeat, loop by loop: rows per group read, per group written, and per
    bank read plus written (in-place rows not counted as writes there)."""
    read_rows = {a // 32 for op in reads for a in op if a >= 0}
    write_rows = {a // 32 for op in writes for a in op if a >= 0}

    def group(row: int) -> int:
        return row % 16

    def bank(row: int) -> int:
        return row % 16 + 16 * (row * 32 // 65536)

    cycles = 1
    for rows in (read_rows, write_rows):
        cycles = max(cycles, *Counter(map(group, rows)).values(), 1)
    rb = Counter(map(bank, read_rows))
    wb = Counter(map(bank, write_rows - read_rows))
    both = [rb[k] + wb[k] for k in rb if wb[k]]
    return max([cycles, *both])


operand = st.lists(
    st.integers(0, 196608 // 32 - 1).map(lambda r: 32 * r), min_size=1, max_size=8
)


@settings(max_examples=200, deadline=None)
@given(st.lists(operand, max_size=3), st.lists(operand, max_size=2))
def test_against_a_loop_model(reads: list[list[int]], writes: list[list[int]]) -> None:
    def arrays(ops: list[list[int]]) -> list[np.ndarray]:
        return [np.array([op + [-1] * (8 - len(op))]) for op in ops]

    if not reads and not writes:
        return
    got = bank_access_cycles(BANKS, arrays(reads), arrays(writes))
    assert got.tolist() == [reference_cycles(reads, writes)]
