"""RecordStore: packed records rebuild equal to the issued ones, and a run's
report does not depend on the chunk size."""

from __future__ import annotations

import numpy as np
import pytest

from pypto_mlir.sim import Access, Machine, records
from pypto_mlir.sim.access import Pipe
from pypto_mlir.sim.records import Record, RecordKind, RecordStore
from pypto_mlir.targets import load_target

TARGET = load_target("ascend910b")


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 4 records, so that a few records fill several."""
    monkeypatch.setattr(records, "_CHUNK_BITS", 2)
    monkeypatch.setattr(records, "_CHUNK", 4)


def _issue(machine: Machine) -> None:
    """A few DMAs, vector ops and flags on every core."""
    x = machine.register_gm("x", np.arange(4096, dtype=np.float16))
    for core in machine.cores:
        for i in range(5):
            core.dma(
                "load", f"k.py:{i}:1", Access(x, 256 * i, 256), Access("ub", 0, 256)
            )
            core.set_flag("mte2", "v", 0, "k.py:9:1")
            core.wait_flag("mte2", "v", 0, "k.py:9:2")
            core.issue(
                Pipe.V,
                "vadd",
                "k.py:10:1",
                7 + i,
                reads=(core.access("ub", 0, 256),),
                writes=(core.access("ub", 256, 256),),
                head=3,
            )
            core.barrier("all")


def test_rebuilt_records_equal_issued(small_chunks: None) -> None:
    store = RecordStore(0)
    x = Machine(TARGET).register_gm("x", np.zeros(64, np.uint8))
    path = TARGET.dma_path("gm", "ub")
    issued = [
        Record(
            i,
            0,
            RecordKind.INSTR if i % 3 else RecordKind.SET,
            i % 7,
            f"op{i % 2}",
            f"k.py:{i}:1",
            1000 * i,
            (Access(x, i, 3, 2, 8),) if i % 2 else (),
            (Access("ub", 32 * i, 32),),
            path if i % 2 else None,
            6 * i,
            2**40 + i,
            (1, 5, i % 4) if i % 3 == 0 else None,
            i,
            i % 5,
        )
        for i in range(11)
    ]
    for rec in issued:
        store.append(rec)
    assert len(store) == 11
    assert list(store) == issued
    assert [store[i] for i in range(11)] == issued
    assert store[-1] == issued[-1] and store[2:9:3] == issued[2:9:3]
    assert store[1].path is path and store[1].reads[0].mem is x
    assert store[3].reads[0].end == issued[3].reads[0].end
    assert store.column(11).tolist() == [r.wire_bytes for r in issued]
    names = store.column(4)
    assert [store.objects[c] for c in names.tolist()] == [r.name for r in issued]
    with pytest.raises(IndexError):
        store[11]


def test_report_same_for_any_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    reports = []
    for bits in (1, 10):
        monkeypatch.setattr(records, "_CHUNK_BITS", bits)
        monkeypatch.setattr(records, "_CHUNK", 1 << bits)
        machine = Machine(TARGET, block_dim=3)
        _issue(machine)
        report = machine.finish()
        gids = [machine.records[g].gid for g in range(len(machine.records))]
        assert gids == list(range(len(machine.records)))
        columns = report.columns
        reports.append(
            (
                report.to_json(),
                [list(s) for s in report.slices],
                columns.names,
                columns.locs,
                columns.paths,
                columns.kind.tolist(),
                columns.src.tolist(),
                columns.start.tolist(),
            )
        )
    assert reports[0] == reports[1]
