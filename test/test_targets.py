"""Target files and their loader."""

from __future__ import annotations

import dataclasses
import inspect
import shutil
from pathlib import Path

import pytest

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.targets import (
    ON_CHIP_MEMORIES,
    VECTOR_COST_KEYS,
    VECTOR_PROFILE_TABLES,
    TargetError,
    builtin_targets,
    load_target,
)
from pypto_mlir.targets.cost import vector_cost_key


def test_builtin_targets_are_listed_and_load() -> None:
    assert {"ascend910b", "tiny"} <= set(builtin_targets())
    for name in builtin_targets():
        assert load_target(name).name == name


def test_ascend910b_figures() -> None:
    t = load_target("ascend910b")
    assert t.memories["ub"].size == 192 * 1024
    assert t.memories["ub"].alignment == 32
    assert t.memories["l0a"].alignment == 512
    assert t.memories["l1"].size == 512 * 1024
    assert t.memories["gm"].size is None
    banks = t.memories["ub"].banks
    assert (banks.count, banks.groups, banks.width) == (48, 16, 32)
    assert (banks.rows, banks.slice_bytes, banks.conflict_cycles) == (128, 65536, 1)
    assert t.sources["memories.ub.banks.conflict_cycles"].startswith("Ascend C")
    assert t.dma[("gm", "ub")].pipe == "MTE2"
    assert t.dma[("ub", "gm")].pipe == "MTE3"
    assert t.dma[("l1", "l0a")].pipe == "MTE1"
    assert t.dma[("l0c", "gm")].pipe == "FIX"
    # 100.9 GiB/s at 1.85 GHz, converted to bytes per cycle.
    assert t.dma[("gm", "ub")].bytes_per_cycle == pytest.approx(100.9 * 2**30 / 1.85e9)
    # L1 -> L0A is quoted as 441 GiB/s = 256 B/cycle.
    assert t.dma[("l1", "l0a")].bytes_per_cycle == pytest.approx(256, rel=1e-3)
    assert t.cube.macs_per_cycle["f16"] == 4096
    # PTO-ISA's mad: fp32 fractals are 16 x 16 x 8 and take 2 cycles each.
    assert t.cube.macs_per_cycle["f32"] == 16 * 16 * 8 // 2
    assert t.cube.macs_per_cycle["bf16"] == t.cube.macs_per_cycle["f16"]
    assert t.cube.head_cycles == 6
    # A2A3.ini's L1 -> UB, UB -> L1 and L0C -> UB rates, in bytes per cycle.
    assert t.dma[("l1", "ub")].bytes_per_cycle == 128
    assert t.dma[("ub", "l1")].bytes_per_cycle == 128
    assert t.dma[("l0c", "ub")].bytes_per_cycle == 256
    # The 910B1 profiles' start-ups: vadd about 6, vexp 12, vdiv 13 cycles.
    heads = t.vector.head_cycles
    assert (heads[16]["add"], heads[16]["div"], heads[32]["exp"]) == (5.93, 13, 12)
    assert t.vector.repeat_bytes == 256 and t.vector.max_repeat == 255
    assert t.sync.event_ids == 8
    assert t.cores == 24


def test_every_number_has_a_source() -> None:
    t = load_target("ascend910b")
    assert "memories.ub.size" in t.sources
    assert t.sources["dma.gm->ub.bandwidth"].startswith("PTO-ISA")
    assert all(s.strip() for s in t.sources.values())
    assumed = [s for s in t.sources.values() if s.startswith("assumed")]
    assert assumed and all(s.partition(":")[2].strip() for s in assumed)


def test_tiny_is_small_with_the_same_costs() -> None:
    tiny, big = load_target("tiny"), load_target("ascend910b")
    assert tiny.cores == 2
    assert tiny.memories["ub"].size == 4096
    assert tiny.memories["l1"].size == 16 * 1024
    assert tiny.memories["l0a"].size == tiny.memories["l0b"].size == 2048
    assert tiny.memories["l0c"].size == 4096
    assert tiny.dma == big.dma
    assert tiny.cube == big.cube and tiny.vector == big.vector
    assert tiny.sources["memories.ub.size"].startswith("assumed")
    # 16 groups of one 8-row bank: one bank slice, the A2 cost per conflict.
    banks = tiny.memories["ub"].banks
    assert (banks.count, banks.groups, banks.rows, banks.slice_bytes) == (
        16,
        16,
        8,
        4096,
    )
    assert banks.conflict_cycles == big.memories["ub"].banks.conflict_cycles
    for name in ON_CHIP_MEMORIES:
        assert tiny.memories[name].alignment == big.memories[name].alignment


def test_target_is_frozen() -> None:
    t = load_target("tiny")
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.cores = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        t.memories["ub"] = t.memories["l1"]  # type: ignore[index]


def test_load_by_path(tmp_path: Path) -> None:
    copy = tmp_path / "chip.toml"
    shutil.copy(Path(load_target("ascend910b").path), copy)
    assert load_target(str(copy)).memories["ub"].size == 192 * 1024


def _write(tmp_path: Path, body: str) -> str:
    path = tmp_path / "bad.toml"
    path.write_text('base = "ascend910b"\nname = "bad"\n' + body)
    return str(path)


BAD_OVERRIDES = [
    (
        '[memories.ub]\nsize = { value = -1, source = "x" }\n',
        "memories.ub.size",
        "positive",
    ),
    ("[memories.ub]\nsize = { value = 4096 }\n", "memories.ub.size", "source"),
    (
        '[memories.ub]\nsize = { value = 4096, source = "assumed:" }\n',
        "memories.ub.size",
        "reason",
    ),
    ("[memories.ub]\nsize = 4096\n", "memories.ub.size", "table"),
    (
        '[memories.ub]\nsize = { value = true, source = "x" }\n',
        "memories.ub.size",
        "number",
    ),
    (
        '[memories.ub]\nsize = { value = 4, unit = "GB", source = "x" }\n',
        "memories.ub.size",
        "unit",
    ),
    (
        '[memories.ub]\nsize = { value = 4100, source = "x" }\n',
        "memories.ub.size",
        "alignment",
    ),
    (
        '[memories.l1]\nalignment = { value = 48, source = "x" }\n',
        "memories.l1.alignment",
        "power of two",
    ),
    (
        '[memories.l2]\nsize = { value = 4096, source = "x" }\n',
        "memories.l2",
        "unknown key",
    ),
    ('[memories.ub]\ncolor = "red"\n', "memories.ub.color", "unknown key"),
    ('[dma."gm->ub"]\npipe = "MTE9"\n', "dma.gm->ub.pipe", "MTE2"),
    ('[dma."gm->hbm"]\npipe = "MTE2"\n', "dma.gm->hbm", "src->dst"),
    (
        '[dma."gm->ub"]\ngranule = { value = 100, source = "x" }\n',
        "dma.gm->ub.granule",
        "power of two",
    ),
    (
        '[dma."gm->ub"]\nbandwidth = { value = 1, unit = "furlongs", source = "x" }\n',
        "dma.gm->ub.bandwidth",
        "unit",
    ),
    (
        '[memories.ub.banks]\ncount = { value = 7, source = "x" }\n',
        "memories.ub.banks.groups",
        "groups",
    ),
    (
        "[memories.ub.banks]\nconflict_cycles = { value = 1 }\n",
        "memories.ub.banks.conflict_cycles",
        "source",
    ),
    (
        '[memories.ub.banks]\nconflict_cycles = { value = 0.5, source = "x" }\n',
        "memories.ub.banks.conflict_cycles",
        "whole",
    ),
    ('[sync]\nevent_ids = { value = 0, source = "x" }\n', "sync.event_ids", "positive"),
    (
        '[cube]\nhead_cycles = { value = 1.5, source = "x" }\n',
        "cube.head_cycles",
        "whole",
    ),
    ('[cube]\nstartup = { value = 20, source = "x" }\n', "cube.startup", "unknown key"),
    (
        '[vector.head_cycles.b32]\nadd = { value = -1, source = "x" }\n',
        "vector.head_cycles.b32.add",
        "positive",
    ),
    (
        '[vector.cycles_per_repeat.b12]\nadd = { value = 1, source = "x" }\n',
        "vector.cycles_per_repeat.b12",
        "b16",
    ),
    (
        '[vector.cycles_per_repeat.b8]\nadd = { value = 1, source = "x" }\n',
        "vector.cycles_per_repeat.b8.sub",
        "missing key",
    ),
]


@pytest.mark.parametrize("body,key,words", BAD_OVERRIDES)
def test_validation_errors_name_file_and_key(
    tmp_path: Path, body: str, key: str, words: str
) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(TargetError) as info:
        load_target(path)
    assert info.value.file == path
    assert info.value.key == key
    assert words in str(info.value)
    assert path in str(info.value)


def test_missing_keys_are_named(tmp_path: Path) -> None:
    path = tmp_path / "empty.toml"
    path.write_text('name = "empty"\n')
    with pytest.raises(TargetError, match="clock_ghz: missing key"):
        load_target(str(path))
    path.write_text('name = "x"\nclock_ghz = { value = 1, source = "x" }\n')
    with pytest.raises(TargetError, match="cores: missing key"):
        load_target(str(path))


def test_unknown_target_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="ascend910b"):
        load_target("no-such-chip")
    bad = tmp_path / "broken.toml"
    bad.write_text("name = \n")
    with pytest.raises(TargetError, match="invalid TOML"):
        load_target(str(bad))
    cyclic = tmp_path / "a.toml"
    cyclic.write_text(f'base = "{cyclic}"\nname = "a"\n')
    with pytest.raises(TargetError, match="cycle"):
        load_target(str(cyclic))


@pytest.mark.parametrize("table", ["cycles_per_repeat", "head_cycles"])
def test_a_vector_instruction_without_a_cost_is_a_load_error(
    tmp_path: Path, table: str
) -> None:
    """No instruction's cost falls back to a default: the file must price it, its
    slope and its start-up."""
    text = Path(load_target("ascend910b").path).read_text()
    lines = text.splitlines(keepends=True)
    section = lines.index(f"[vector.{table}.b16]\n")
    first = next(
        i for i in range(section, len(lines)) if lines[i].startswith("brcb = ")
    )
    path = tmp_path / "chip.toml"
    path.write_text("".join(lines[:first] + lines[first + 1 :]))
    with pytest.raises(TargetError) as info:
        load_target(str(path))
    assert info.value.file == str(path)
    assert info.value.key == f"vector.{table}.b16.brcb"
    assert "missing key" in str(info.value)


def _instruction_classes() -> list[type[hw.HwInstruction]]:
    return [
        cls
        for cls in vars(hw).values()
        if isinstance(cls, type)
        and issubclass(cls, hw.HwInstruction)
        and not inspect.isabstract(cls)
        and isinstance(getattr(cls, "name", None), str)
    ]


NOT_VECTOR_PRICING: dict[type[hw.HwInstruction], str] = {
    hw.BurstDmaOp: "its DMA path (dma.<src>-><dst>)",
    hw.MatrixMoveOp: "its DMA path (dma.<src>-><dst>)",
    hw.MmadOp: "cube.macs_per_cycle.<dtype> and cube.head_cycles",
    hw.FlagOp: "no cycles of its own (sync)",
    hw.PipeBarrierOp: "no cycles of its own (sync)",
    hw.SyncAllOp: "sync.all_latency",
    hw.BlockIdxOp: "scalar.op",
    hw.BlockDimOp: "scalar.op",
    hw.LoadScalarOp: "scalar.ub_load, scalar.dcache_hit / scalar.gm_load",
    hw.StoreScalarOp: "scalar.ub_store",
}
"""How the instructions that are not vector instructions are priced."""


@pytest.mark.parametrize("target", builtin_targets())
@pytest.mark.parametrize(
    "op", _instruction_classes(), ids=lambda cls: cls.name.removeprefix("ascend_hw.")
)
def test_every_instruction_has_a_cost_in_every_target(
    target: str, op: type[hw.HwInstruction]
) -> None:
    """Each ascend_hw instruction op class is priced by every shipped target."""
    if not issubclass(op, hw.VectorOp):
        assert issubclass(op, tuple(NOT_VECTOR_PRICING)), (
            f"{op.name}: neither a vector instruction nor priced by another table of "
            f"the target; say in NOT_VECTOR_PRICING how the target prices it"
        )
        return
    key = vector_cost_key(op.name)
    assert key in VECTOR_COST_KEYS, (
        f"{op.name}: its cost key {key!r} is not in targets.VECTOR_COST_KEYS"
    )
    vector = load_target(target).vector
    for name in VECTOR_PROFILE_TABLES:
        for bits, table in getattr(vector, name).items():
            assert key in table, (
                f"target {target}: {op.name} has no cost vector.{name}.b{bits}.{key}"
            )
