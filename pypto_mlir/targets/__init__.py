"""Hardware targets: one TOML file per chip, loaded into a frozen `Target`.

Every number in a target file is a table `{ value = N, unit = "...", source = "..." }`:
the source names the public document it comes from, or starts with `assumed:` and
gives the reason for the value. A file may name a `base` target and override some of
its keys. The file format is documented in docs/simulator.md ("Target files").
The loader reads files only (the simulator uses it and knows nothing about IR);
which target a module is for is `targets.resolve`, the cost formulas `targets.cost`.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = [
    "BankLayout",
    "CubeSpec",
    "DEFAULT_TARGET",
    "DmaPath",
    "L2Spec",
    "L2_POLICIES",
    "Memory",
    "ON_CHIP_MEMORIES",
    "PIPE_NAMES",
    "ScalarSpec",
    "SyncSpec",
    "Target",
    "TargetError",
    "VECTOR_COST_KEYS",
    "VectorSpec",
    "builtin_targets",
    "load_target",
]

TARGET_DIR = Path(__file__).parent

DEFAULT_TARGET = "ascend910b"
"""The target whose numbers apply when neither an option nor the module names one."""

ON_CHIP_MEMORIES: tuple[str, ...] = ("l1", "l0a", "l0b", "l0c", "ub")
"""The per-core memories every target must describe (GM is described separately)."""

MEMORY_NAMES: tuple[str, ...] = ("gm", *ON_CHIP_MEMORIES)

PIPE_NAMES: tuple[str, ...] = ("S", "MTE1", "MTE2", "MTE3", "M", "V", "FIX")
"""Pipe names as in AscendNPU-IR HIVMAttrs.td (without the PIPE_ prefix)."""

VECTOR_COST_KEYS: tuple[str, ...] = (
    *("add", "sub", "mul", "div", "max", "min"),
    *("adds", "muls", "maxs", "mins"),
    *("exp", "ln", "abs", "relu", "sqrt", "rsqrt", "reciprocal", "copy", "cast"),
    *("reduce_sum", "reduce_max", "reduce_min", "block_reduce_max", "block_reduce_min"),
    *("dup", "brcb", "cmp", "select", "gather"),
)
"""The vector instructions' cost keys (`cost.vector_cost_key` of each ascend_hw
vector op): every `vector.cycles_per_repeat.<width>` table of a target prices each
one, so no instruction's cost falls back to a default."""

VECTOR_PROFILE_WIDTHS: tuple[str, ...] = ("b16", "b32")
"""The element widths every target profiles (a `b8` table is optional: 8-bit
elements are priced by the `b16` one when it is absent, see `cost.vector_cycles`)."""

VECTOR_PROFILE_TABLES: tuple[str, ...] = ("cycles_per_repeat", "head_cycles")
"""The per-op tables of `[vector]`: each has a table per element width, and each
of those prices every instruction (`VECTOR_COST_KEYS`)."""

_UNIT_SCALES: dict[str, dict[str, float]] = {
    "bytes": {"B": 1, "KiB": 1024, "MiB": 1024**2},
    "cycles": {"cycles": 1},
    "count": {"": 1},
    "ghz": {"GHz": 1},
    "ratio": {"": 1},
}
# Bandwidths are converted to bytes per cycle once the clock is known.
_BANDWIDTH_UNITS: dict[str, float] = {
    "B/cycle": 0.0,  # marker: no conversion
    "GiB/s": 1024.0**3,
    "GB/s": 1e9,
    "TB/s": 1e12,
}


class TargetError(ValueError):
    """A target file that cannot be used; names the file and the offending key."""

    def __init__(self, file: str, key: str, message: str):
        self.file = file
        self.key = key
        super().__init__(f"{file}: {key}: {message}" if key else f"{file}: {message}")


@dataclass(frozen=True)
class BankLayout:
    """Bank structure of a memory (used for bank-conflict modelling).

    Consecutive `width`-byte rows go to consecutive bank groups; bank `g + groups *
    k` of group `g` holds the k-th of the `count / groups` equal slices of the
    memory (the mapping of the Ascend C bank-conflict guide, where 0x10000 is in
    bank 16, 0x10020 in bank 17 and 0x20020 in bank 33).
    """

    count: int
    groups: int
    width: int
    rows: int = 0
    """Rows of one bank (the memory size / (count * width))."""
    conflict_cycles: int = 0
    """Cycles each further row queued on one bank or bank group costs a vector
    instruction (0: conflicts are not modelled)."""

    @property
    def slice_bytes(self) -> int:
        """Bytes of one slice: the rows of every bank with the same index in its
        group (64 KiB on Atlas A2)."""
        return self.groups * self.rows * self.width

    def group_of(self, address: Any) -> Any:
        """The bank group of a byte address (ints or numpy arrays)."""
        return address // self.width % self.groups

    def bank_of(self, address: Any) -> Any:
        """The bank of a byte address (ints or numpy arrays)."""
        return self.group_of(address) + self.groups * (address // self.slice_bytes)


@dataclass(frozen=True)
class Memory:
    """One memory space; `size` is None for GM (its tensors are sized at run time)."""

    name: str
    size: int | None
    alignment: int
    banks: BankLayout | None = None


@dataclass(frozen=True)
class DmaPath:
    """A data-movement direction of the chip and the pipe that executes it."""

    src: str
    dst: str
    pipe: str
    bytes_per_cycle: float
    latency: int
    granule: int
    burst_overhead: int

    @property
    def touches_gm(self) -> bool:
        return self.src == "gm" or self.dst == "gm"


@dataclass(frozen=True)
class CubeSpec:
    fractal_m: int
    fractal_n: int
    fractal_k_bytes: int
    head_cycles: int
    """Start-up cycles of an mmad that starts a stream on the M pipe."""
    macs_per_cycle: Mapping[str, int]


@dataclass(frozen=True)
class VectorSpec:
    repeat_bytes: int
    max_repeat: int
    cycles_per_repeat: Mapping[int, Mapping[str, float]]
    """element bits (16, 32) -> op name -> cycles per repeat."""
    head_cycles: Mapping[int, Mapping[str, float]]
    """element bits (16, 32) -> op name -> start-up cycles, charged when the op
    starts a stream on the V pipe (docs/simulator.md, "Start-up")."""


@dataclass(frozen=True)
class ScalarSpec:
    issue: int
    """cycles the scalar unit spends dispatching one instruction to a pipe."""
    op: int
    """cycles of one scalar ALU instruction."""
    ub_load: int
    """cycles of a scalar read of the UB (`load_scalar` of a ub buffer)."""
    ub_store: int
    """cycles of a scalar write of the UB (`store_scalar`)."""
    dcache_line: int
    """bytes of a line of the scalar unit's GM DataCache."""
    dcache_size: int
    """bytes of the scalar DataCache (per core; fully associative, LRU)."""
    dcache_hit: int
    """cycles of a scalar GM read that hits the DataCache."""
    gm_load: int
    """cycles of a scalar GM read that misses it (a GM round trip)."""


@dataclass(frozen=True)
class SyncSpec:
    event_ids: int
    max_pending_sets: int
    all_latency: int = 0
    """Cycles from the last core reaching a `sync_all` (its pipes drained) to every
    core going on (0 when the target does not give it)."""


L2_POLICIES: tuple[str, ...] = ("lru",)
"""Replacement policies the L2 model (sim/l2.py) implements."""


@dataclass(frozen=True)
class L2Spec:
    """The L2 cache shared by all cores between their DMA engines and GM (HBM).

    Fully associative with `policy` replacement over lines of `line` bytes. GM
    reads hit or miss per line; writes are write-through (they cost what they
    cost without an L2) and allocate their lines when `write_allocate`. The miss
    latency is the GM path's own `latency`. Model: docs/simulator.md ("L2 cache").
    """

    size: int
    line: int
    policy: str
    write_allocate: bool
    read_bytes_per_cycle: float
    """L2 read bandwidth available to one core."""
    hit_latency: int
    """Start-up cycles of a GM read all of whose lines hit."""

    @property
    def lines(self) -> int:
        """Capacity in lines."""
        return self.size // self.line


@dataclass(frozen=True)
class Target:
    """A chip description; every hardware number the compiler and simulator use."""

    name: str
    description: str
    path: str
    clock_ghz: float
    cores: int
    memories: Mapping[str, Memory]
    gm_bytes_per_cycle: float
    """Total GM (HBM) bandwidth shared by all cores."""
    dma: Mapping[tuple[str, str], DmaPath]
    cube: CubeSpec
    vector: VectorSpec
    scalar: ScalarSpec
    sync: SyncSpec
    sources: Mapping[str, str] = field(repr=False)
    l2: L2Spec | None = None
    """The shared L2 cache; None when the target has none (GM reads all pay HBM)."""
    """Dotted key (e.g. "memories.ub.size") -> where that number comes from."""

    def dma_path(self, src: str, dst: str) -> DmaPath:
        """The DMA path src -> dst, or KeyError naming the directions the chip has."""
        try:
            return self.dma[(src, dst)]
        except KeyError:
            known = ", ".join(f"{s}->{d}" for s, d in self.dma)
            raise KeyError(
                f"target {self.name} has no DMA path {src}->{dst} (it has {known})"
            ) from None


def builtin_targets() -> list[str]:
    """Names of the target files shipped with pypto-mlir."""
    return sorted(p.stem for p in TARGET_DIR.glob("*.toml"))


MAX_TARGET_INTEGER = 1 << 31
"""The largest whole number a target file may give (sizes in bytes, counts)."""

MAX_CORES = 4096
"""The most cores a target may have (the scheduler and simulator run each)."""


def load_target(name_or_path: str | os.PathLike[str]) -> Target:
    """Load a builtin target by name ("ascend910b", "tiny") or a TOML file by path."""
    text = os.fspath(name_or_path)
    builtin = TARGET_DIR / f"{text}.toml"
    if os.sep not in text and not text.endswith(".toml") and builtin.is_file():
        return _load_builtin(text)
    path = Path(text)
    if not path.is_file():
        raise TargetError(
            text,
            "",
            f"no such target file (builtin targets: {', '.join(builtin_targets())})",
        )
    return _load_file(path.resolve())


@cache
def _load_builtin(name: str) -> Target:
    return _load_file(TARGET_DIR / f"{name}.toml")


def _read_toml(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Parse `path`, merging it over its `base` target if it names one."""
    if path in seen:
        raise TargetError(
            str(path), "base", "targets inherit from each other in a cycle"
        )
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise TargetError(str(path), "", f"invalid TOML: {e}") from None
    base = data.pop("base", None)
    if base is None:
        return data
    if not isinstance(base, str):
        raise TargetError(str(path), "base", "must be a target name or a path")
    base_path = TARGET_DIR / f"{base}.toml"
    if not base_path.is_file():
        base_path = (path.parent / base).resolve()
    if not base_path.is_file():
        raise TargetError(str(path), "base", f"unknown base target {base!r}")
    # The name is not inherited: a file that does not give one is named after
    # itself, not reported as its base (whose sizes it may change).
    data.setdefault("name", path.stem)
    return _merge(_read_toml(base_path, (*seen, path)), data)


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        old = merged.get(key)
        is_number = isinstance(value, dict) and "value" in value
        if isinstance(old, dict) and isinstance(value, dict) and not is_number:
            merged[key] = _merge(old, value)
        else:
            merged[key] = value
    return merged


class _Reader:
    """Typed access to the parsed TOML that reports the dotted key on error."""

    def __init__(self, file: str, data: dict[str, Any]):
        self.file = file
        self.data = data
        self.sources: dict[str, str] = {}

    def error(self, key: str, message: str) -> TargetError:
        return TargetError(self.file, key, message)

    def table(self, key: str) -> dict[str, Any]:
        node: Any = self.data
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                raise self.error(key, "missing table")
            node = node[part]
        if not isinstance(node, dict):
            raise self.error(key, "must be a table")
        return node

    def string(self, key: str) -> str:
        parent, _, leaf = key.rpartition(".")
        node = self.table(parent) if parent else self.data
        if leaf not in node:
            raise self.error(key, "missing key")
        if not isinstance(node[leaf], str) or not node[leaf]:
            raise self.error(key, "must be a non-empty string")
        return node[leaf]

    def number(
        self,
        key: str,
        kind: str,
        *,
        integer: bool = False,
        allow_zero: bool = False,
        clock_ghz: float | None = None,
    ) -> float:
        """A sourced number `{value, unit?, source}` converted to the kind's base unit."""
        parent, _, leaf = key.rpartition(".")
        node = self.table(parent) if parent else self.data
        if leaf not in node:
            raise self.error(key, "missing key")
        entry = node[leaf]
        if not isinstance(entry, dict) or "value" not in entry:
            raise self.error(
                key,
                'must be a table { value = ..., source = "..." } (see docs/simulator.md)',
            )
        unknown = set(entry) - {"value", "unit", "source"}
        if unknown:
            raise self.error(key, f"unknown field(s) {', '.join(sorted(unknown))}")
        source = entry.get("source")
        if not isinstance(source, str) or not source.strip():
            raise self.error(
                key, "needs a source (a public document, or 'assumed: <reason>')"
            )
        if source.startswith("assumed") and not source.partition(":")[2].strip():
            raise self.error(
                key, "an assumed value must give its reason: 'assumed: <reason>'"
            )
        value = entry["value"]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"value must be a number, got {value!r}")
        if not math.isfinite(value):
            raise self.error(key, "value must be finite")
        unit = entry.get("unit", "")
        scale = self._unit_scale(key, kind, unit, clock_ghz)
        value = value * scale
        if integer:
            if value != int(value):
                raise self.error(key, f"must be a whole number, got {value}")
            value = int(value)
            if value > MAX_TARGET_INTEGER:
                # The simulator holds each memory in a byte array and loops over
                # counts: a huge number is a typo, not a chip.
                raise self.error(
                    key, f"must be at most {MAX_TARGET_INTEGER} (2**31), got {value}"
                )
        if value < 0 or (value == 0 and not allow_zero):
            raise self.error(key, f"must be positive, got {value}")
        self.sources[key] = source
        return value

    def _unit_scale(
        self, key: str, kind: str, unit: Any, clock_ghz: float | None
    ) -> float:
        if not isinstance(unit, str):
            raise self.error(key, "unit must be a string")
        if kind == "bandwidth":
            if unit in ("", "B/cycle"):
                return 1.0
            if unit not in _BANDWIDTH_UNITS:
                raise self.error(
                    key,
                    f"unknown bandwidth unit {unit!r} (known: {', '.join(_BANDWIDTH_UNITS)})",
                )
            assert clock_ghz is not None
            return _BANDWIDTH_UNITS[unit] / (clock_ghz * 1e9)
        units = _UNIT_SCALES[kind]
        if unit == "":
            return 1.0
        if unit not in units:
            known = ", ".join(u for u in units if u) or "none"
            raise self.error(key, f"unknown unit {unit!r} (known: {known})")
        return units[unit]

    def power_of_two(self, key: str) -> int:
        value = int(self.number(key, "bytes", integer=True))
        if value & (value - 1):
            raise self.error(key, f"must be a power of two, got {value}")
        return value

    def check_keys(self, key: str, allowed: set[str]) -> None:
        table = self.table(key) if key else self.data
        unknown = set(table) - allowed
        if unknown:
            name = sorted(unknown)[0]
            raise self.error(f"{key}.{name}" if key else name, "unknown key")


def _per_op_table(
    r: _Reader, key: str, *, allow_zero: bool
) -> Mapping[int, Mapping[str, float]]:
    """`key`'s per-width tables (element bits -> cost key -> value): one for each
    width of `VECTOR_PROFILE_WIDTHS` (and an optional b8), each pricing every
    instruction of `VECTOR_COST_KEYS`."""
    widths = r.table(key)
    for width in widths:
        if width not in ("b8", "b16", "b32"):
            raise r.error(f"{key}.{width}", "element width must be b8, b16 or b32")
    for width in VECTOR_PROFILE_WIDTHS:
        if width not in widths:
            raise r.error(f"{key}.{width}", "missing table")
    per_width: dict[int, Mapping[str, float]] = {}
    for width in widths:
        table = r.table(f"{key}.{width}")
        for op in VECTOR_COST_KEYS:
            if op not in table:
                raise r.error(
                    f"{key}.{width}.{op}",
                    "missing key (every vector instruction needs a cost)",
                )
        per_width[int(width[1:])] = MappingProxyType(
            {
                op: r.number(f"{key}.{width}.{op}", "ratio", allow_zero=allow_zero)
                for op in table
            }
        )
    return MappingProxyType(per_width)


def _load_file(path: Path) -> Target:
    r = _Reader(str(path), _read_toml(path))
    r.check_keys(
        "",
        {
            "name",
            "description",
            "clock_ghz",
            "cores",
            "memories",
            "dma",
            "cube",
            "vector",
        }
        | {"scalar", "sync", "l2"},
    )
    name = r.string("name")
    description = r.data.get("description", "")
    if not isinstance(description, str):
        raise r.error("description", "must be a string")
    clock_ghz = r.number("clock_ghz", "ghz")
    cores = int(r.number("cores", "count", integer=True))
    if cores > MAX_CORES:
        raise r.error("cores", f"must be at most {MAX_CORES}, got {cores}")

    r.check_keys("memories", set(MEMORY_NAMES))
    memories: dict[str, Memory] = {}
    gm_table = r.table("memories.gm")
    extra = set(gm_table) - {"alignment", "bandwidth"}
    if extra:
        raise r.error(
            f"memories.gm.{sorted(extra)[0]}",
            "unknown key (gm has only alignment and bandwidth; its size is the tensors')",
        )
    memories["gm"] = Memory("gm", None, r.power_of_two("memories.gm.alignment"))
    gm_bytes_per_cycle = r.number(
        "memories.gm.bandwidth", "bandwidth", clock_ghz=clock_ghz
    )
    for mem in ON_CHIP_MEMORIES:
        key = f"memories.{mem}"
        r.check_keys(key, {"size", "alignment", "banks"})
        size = int(r.number(f"{key}.size", "bytes", integer=True))
        alignment = r.power_of_two(f"{key}.alignment")
        if size % alignment:
            raise r.error(
                f"{key}.size", f"{size} is not a multiple of the alignment {alignment}"
            )
        banks = None
        if "banks" in r.table(key):
            r.check_keys(
                f"{key}.banks", {"count", "groups", "width", "conflict_cycles"}
            )
            count = int(r.number(f"{key}.banks.count", "count", integer=True))
            width = r.power_of_two(f"{key}.banks.width")
            conflict = 0
            if "conflict_cycles" in r.table(f"{key}.banks"):
                conflict = int(
                    r.number(
                        f"{key}.banks.conflict_cycles",
                        "cycles",
                        integer=True,
                        allow_zero=True,
                    )
                )
            banks = BankLayout(
                count=count,
                groups=int(r.number(f"{key}.banks.groups", "count", integer=True)),
                width=width,
                rows=size // (count * width),
                conflict_cycles=conflict,
            )
            if banks.count % banks.groups:
                raise r.error(
                    f"{key}.banks.groups",
                    f"{banks.count} banks do not divide into {banks.groups} groups",
                )
            if size % (banks.count * banks.width):
                raise r.error(
                    f"{key}.banks.count",
                    f"{banks.count} banks of {banks.width} B rows do not tile {size} B",
                )
        memories[mem] = Memory(mem, size, alignment, banks)
    if memories["ub"].banks is None:
        raise r.error(
            "memories.ub.banks", "missing table (the UB bank structure is required)"
        )

    dma: dict[tuple[str, str], DmaPath] = {}
    for path_name in r.table("dma"):
        key = f"dma.{path_name}"
        src, sep, dst = path_name.partition("->")
        if not sep or src not in MEMORY_NAMES or dst not in MEMORY_NAMES or src == dst:
            raise r.error(
                key,
                f"a DMA path is named 'src->dst' with memories from {', '.join(MEMORY_NAMES)}",
            )
        table = r.table(f"dma.{path_name}")
        unknown = set(table) - {
            "pipe",
            "bandwidth",
            "latency",
            "granule",
            "burst_overhead",
        }
        if unknown:
            raise r.error(f"{key}.{sorted(unknown)[0]}", "unknown key")
        pipe = table.get("pipe")
        if not isinstance(pipe, str) or pipe.upper() not in PIPE_NAMES:
            raise r.error(
                f"{key}.pipe", f"must be one of {', '.join(PIPE_NAMES)}, got {pipe!r}"
            )
        base = f"dma.{path_name}"
        dma[(src, dst)] = DmaPath(
            src=src,
            dst=dst,
            pipe=pipe.upper(),
            bytes_per_cycle=r.number(
                f"{base}.bandwidth", "bandwidth", clock_ghz=clock_ghz
            ),
            latency=int(
                r.number(f"{base}.latency", "cycles", integer=True, allow_zero=True)
            ),
            granule=r.power_of_two(f"{base}.granule"),
            burst_overhead=int(
                r.number(
                    f"{base}.burst_overhead", "cycles", integer=True, allow_zero=True
                )
            ),
        )
    if not dma:
        raise r.error("dma", "a target needs at least one DMA path")

    r.check_keys(
        "cube",
        {"fractal_m", "fractal_n", "fractal_k_bytes", "head_cycles", "macs_per_cycle"},
    )
    macs = {
        dtype: int(r.number(f"cube.macs_per_cycle.{dtype}", "count", integer=True))
        for dtype in r.table("cube.macs_per_cycle")
    }
    if "f16" not in macs:
        raise r.error("cube.macs_per_cycle.f16", "missing key")
    cube = CubeSpec(
        fractal_m=int(r.number("cube.fractal_m", "count", integer=True)),
        fractal_n=int(r.number("cube.fractal_n", "count", integer=True)),
        fractal_k_bytes=int(r.number("cube.fractal_k_bytes", "bytes", integer=True)),
        head_cycles=int(
            r.number("cube.head_cycles", "cycles", integer=True, allow_zero=True)
        ),
        macs_per_cycle=MappingProxyType(macs),
    )

    r.check_keys("vector", {"repeat_bytes", "max_repeat", *VECTOR_PROFILE_TABLES})
    vector = VectorSpec(
        repeat_bytes=int(r.number("vector.repeat_bytes", "bytes", integer=True)),
        max_repeat=int(r.number("vector.max_repeat", "count", integer=True)),
        cycles_per_repeat=_per_op_table(
            r, "vector.cycles_per_repeat", allow_zero=False
        ),
        # A zero start-up is a real figure (an op that overlaps any predecessor).
        head_cycles=_per_op_table(r, "vector.head_cycles", allow_zero=True),
    )

    r.check_keys(
        "scalar",
        {
            "issue",
            "op",
            "ub_load",
            "ub_store",
            "dcache_line",
            "dcache_size",
            "dcache_hit",
            "gm_load",
        },
    )
    scalar = ScalarSpec(
        issue=int(r.number("scalar.issue", "cycles", integer=True, allow_zero=True)),
        op=int(r.number("scalar.op", "cycles", integer=True)),
        ub_load=int(r.number("scalar.ub_load", "cycles", integer=True)),
        ub_store=int(r.number("scalar.ub_store", "cycles", integer=True)),
        dcache_line=int(r.number("scalar.dcache_line", "bytes", integer=True)),
        dcache_size=int(r.number("scalar.dcache_size", "bytes", integer=True)),
        dcache_hit=int(r.number("scalar.dcache_hit", "cycles", integer=True)),
        gm_load=int(r.number("scalar.gm_load", "cycles", integer=True)),
    )
    if scalar.dcache_size % scalar.dcache_line:
        raise r.error(
            "scalar.dcache_size",
            f"must be a multiple of scalar.dcache_line ({scalar.dcache_line} B)",
        )
    r.check_keys("sync", {"event_ids", "max_pending_sets", "all_latency"})
    all_latency = 0
    if "all_latency" in r.table("sync"):
        all_latency = int(
            r.number("sync.all_latency", "cycles", integer=True, allow_zero=True)
        )
    sync = SyncSpec(
        event_ids=int(r.number("sync.event_ids", "count", integer=True)),
        max_pending_sets=int(r.number("sync.max_pending_sets", "count", integer=True)),
        all_latency=all_latency,
    )
    l2 = _read_l2(r, clock_ghz)
    return Target(
        name=name,
        description=description,
        path=str(path),
        clock_ghz=clock_ghz,
        cores=cores,
        memories=MappingProxyType(memories),
        gm_bytes_per_cycle=gm_bytes_per_cycle,
        dma=MappingProxyType(dma),
        cube=cube,
        vector=vector,
        scalar=scalar,
        sync=sync,
        sources=MappingProxyType(dict(r.sources)),
        l2=l2,
    )


def _read_l2(r: _Reader, clock_ghz: float) -> L2Spec | None:
    """The `[l2]` table, or None when the file has none or sets `enabled = false`
    (how a target derived from one with an L2 drops it)."""
    if "l2" not in r.data:
        return None
    table = r.table("l2")
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise r.error("l2.enabled", f"must be true or false, got {enabled!r}")
    if not enabled:
        return None
    r.check_keys(
        "l2",
        {
            "enabled",
            "size",
            "line",
            "policy",
            "write_allocate",
            "read_bandwidth",
            "hit_latency",
        },
    )
    line = r.power_of_two("l2.line")
    size = int(r.number("l2.size", "bytes", integer=True))
    if size % line:
        raise r.error("l2.size", f"{size} is not a multiple of the line size {line}")
    policy = r.string("l2.policy")
    if policy not in L2_POLICIES:
        raise r.error(
            "l2.policy", f"must be one of {', '.join(L2_POLICIES)}, got {policy!r}"
        )
    write_allocate = table.get("write_allocate")
    if not isinstance(write_allocate, bool):
        raise r.error(
            "l2.write_allocate",
            "missing key" if write_allocate is None else "must be true or false",
        )
    return L2Spec(
        size=size,
        line=line,
        policy=policy,
        write_allocate=write_allocate,
        read_bytes_per_cycle=r.number(
            "l2.read_bandwidth", "bandwidth", clock_ghz=clock_ghz
        ),
        hit_latency=int(
            r.number("l2.hit_latency", "cycles", integer=True, allow_zero=True)
        ),
    )
