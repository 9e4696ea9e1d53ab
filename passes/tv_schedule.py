"""`tv-schedule{target=... fuse-siblings=... interleave=...}`: schedule a kernel's
`tv` ops before `tv-to-tile`.

The pass partitions each function's `tv` ops into fused groups over the
dataflow graph, starting from the producer/consumer groups of
passes/tv_fusion.py and applying the *fusion rules* of `FUSION_RULES` in order
(a registry: a rule is a name, the option that switches it, and a function that
merges groups of a `FusionAnalysis` and says why). Then it orders the groups
into *phases* (a group's phase is one more than the latest phase it reads a
result of) and assigns cores: the groups of one phase do not depend on each
other, so with `interleave` each is split over all the cores, one after the
other on every core, with no barrier between them; phases that depend on each
other keep their `sync_all`.

The decisions reach the later passes as attributes, so the IR shows them:

- `pypto.group = N : i64` on every `tv` op that does work: the ops with one
  number form one nest. `tv-to-tile` merges the groups of its own fusion
  analysis whose members carry one number (when tv_fusion agrees they can be
  one nest: `FusionAnalysis.siblings_compatible`), and ignores the attribute
  otherwise.
- `pypto.interleave_groups` (a unit attribute) on a function with independent
  groups: tile-to-hw's multi-core split (passes/multicore_split.py) cuts each
  phase into its independent loops, splits each over all the cores and drops
  the attribute.

- `pypto.balance_cores = N : i64` on the ops of vector groups (with
  `balance-cores`): tv-to-tile sizes their tiles for N cores by cost
  (`tiling_model.balanced_tiling`, with `group_balance`: shorter steps along a
  parallel dim when the largest tiles leave cores idle and the target's DMA
  cost says that is faster; `pto.auto` sizes tile kernels with it too).

Each decision gets a remark: per group its members, iteration space, phase,
GM bytes read and written (each input once) and its cores; per merge the
inputs it reads once; per refused merge of groups sharing an input, why.
Tile sizes are chosen afterwards by `tv-to-tile` from the target
(passes/tiling_model.py, then `balanced_tiling`) for the nest each group
becomes, with a remark there (", sized for N cores by cost" when balanced).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from pypto_mlir.diagnostics import emit_remark, op_error
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects.tile import element_bytes
from pypto_mlir.targets import Target, TargetError, load_target
from pypto_mlir.targets.resolve import TARGET_ATTR, resolve_target

from .multicore_split import INTERLEAVE_ATTR
from .reduction_split import split_reductions
from .tiling_model import CoreBalance
from .tv_fusion import (
    ExtentAnalysis,
    FusionAnalysis,
    Group,
    GroupKind,
    is_tensor,
    tensor_type,
)

GROUP_ATTR = "pypto.group"
"""The fused group of a `tv` op (an i64), set by `tv-schedule`."""

CORES_ATTR = "pypto.balance_cores"
"""On the ops of a vector group (an i64, set by `tv-schedule`): tv-to-tile sizes
the group's tiles for this many cores by cost (`tiling_model.balanced_tiling`)."""


# --------------------------------------------------------------------------------------
# Fusion rules
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """A remark about a group: the op it is attached to and its text."""

    op: Operation
    text: str


FusionRuleFn = Callable[[FusionAnalysis], list[Decision]]
"""Merges groups of the analysis; returns a remark per merge or refusal."""


@dataclass(frozen=True)
class FusionRule:
    """One way of fusing groups; `option` (a field of `TvSchedulePass`) switches
    it off."""

    name: str
    option: str
    apply: FusionRuleFn


def _show(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else f"a {value.type}"


def _names(group: Group) -> str:
    return ", ".join(m.name for m in group.members)


def _refusal(analysis: FusionAnalysis, first: Group, second: Group) -> str:
    """Why two groups that share an input are not one nest."""
    if GroupKind.MATMUL in (first.kind, second.kind):
        return "a matmul nest takes no sibling"
    if first.reduced != second.reduced:
        return "they reduce different dims"
    if first.rank != second.rank or not all(
        analysis.extents.classes.same(a, b)
        for a, b in zip(first.frame, second.frame, strict=True)
    ):
        return "their iteration spaces differ"
    return "one depends on the other"


def fuse_siblings(analysis: FusionAnalysis) -> list[Decision]:
    """Groups over the same iteration space that read a common input (several
    outputs of the same inputs) become one nest, which loads each input once;
    a remark per merge, and per pair sharing an input that stays apart."""
    decisions: list[Decision] = []
    while (pair := _sibling_pair(analysis)) is not None:
        first, second, shared = pair
        text = (
            f"fused {_names(first)} with its sibling {_names(second)}: one nest "
            f"reads {', '.join(map(_show, shared))} once"
        )
        decisions.append(Decision(analysis.merge_groups([first, second]).root, text))
    for k, first in enumerate(analysis.groups):
        for second in analysis.groups[k + 1 :]:
            shared = _shared(analysis, first, second)
            if shared:
                decisions.append(
                    Decision(
                        second.root,
                        f"not fused with {_names(first)} (sharing "
                        f"{', '.join(map(_show, shared))}): "
                        f"{_refusal(analysis, first, second)}",
                    )
                )
    return decisions


def _shared(analysis: FusionAnalysis, first: Group, second: Group) -> list[SSAValue]:
    inputs = analysis.inputs(first)
    return [v for v in analysis.inputs(second) if v in inputs]


def _sibling_pair(
    analysis: FusionAnalysis,
) -> tuple[Group, Group, list[SSAValue]] | None:
    """The first two groups (in program order) that share an input and can be
    one nest, with the inputs they share."""
    for k, first in enumerate(analysis.groups):
        for second in analysis.groups[k + 1 :]:
            shared = _shared(analysis, first, second)
            if shared and analysis.siblings_compatible(first, second):
                return first, second, shared
    return None


FUSION_RULES: list[FusionRule] = [
    FusionRule("sibling fusion", "fuse_siblings", fuse_siblings),
]
"""Applied in order after tv_fusion's producer/consumer grouping; a new rule
(e.g. an attention recogniser) is one entry here and an option of the pass."""


# --------------------------------------------------------------------------------------
# The schedule
# --------------------------------------------------------------------------------------


@dataclass
class ScheduledGroup:
    group: Group
    index: int
    phase: int
    read_bytes: int | None
    written_bytes: int | None


def _bytes(value: SSAValue, extents: ExtentAnalysis) -> int | None:
    """The bytes of a tensor value; None when a dim is dynamic."""
    count = 1
    for extent in extents.of(value):
        if not isinstance(extent, int):
            return None
        count *= extent
    return count * element_bytes(tensor_type(value).element_type)


def _total(values: Sequence[SSAValue], extents: ExtentAnalysis) -> int | None:
    sizes = [_bytes(v, extents) for v in values]
    return None if any(s is None for s in sizes) else sum(s or 0 for s in sizes)


class Scheduler:
    """The groups of one function and their phases (see the module doc)."""

    def __init__(self, function: func.FuncOp, rules: Sequence[FusionRule]):
        self.function = function
        block = function.body.block
        self.extents = ExtentAnalysis()
        # Placeholders for the `?` dims of arguments: the schedule compares
        # extents, it does not compute them.
        dims = Block(
            arg_types=[IndexType()] * sum(_dynamic_dims(a) for a in block.args)
        )
        placeholders = iter(dims.args)
        for arg in block.args:
            if is_tensor(arg):
                count = _dynamic_dims(arg)
                self.extents.set_argument(
                    arg, [next(placeholders) for _ in range(count)]
                )
        self.ops = [op for op in block.ops if op.dialect_name() == "tv"]
        for op in self.ops:
            self.extents.visit(op)
        self.analysis = FusionAnalysis(self.ops, self.extents)
        self.decisions: list[Decision] = []
        for rule in rules:
            self.decisions += rule.apply(self.analysis)
        self.groups = self._phases()

    def _phases(self) -> list[ScheduledGroup]:
        phase: dict[int, int] = {}
        scheduled: list[ScheduledGroup] = []
        for index, group in enumerate(self.analysis.groups):
            depends = self.analysis.dependencies(group)
            phase[id(group)] = 1 + max(
                (phase.get(id(d), 0) for d in depends), default=-1
            )
            scheduled.append(
                ScheduledGroup(
                    group,
                    index,
                    phase[id(group)],
                    _total(self.analysis.inputs(group), self.extents),
                    _total(group.outputs, self.extents),
                )
            )
        return scheduled

    def has_independent_groups(self) -> bool:
        """Whether two groups share a phase (so interleaving can matter)."""
        phases = [g.phase for g in self.groups]
        return len(set(phases)) < len(phases)

    def annotate(self, cores: int) -> None:
        """Number the groups' ops; with `cores`, ask for vector tiles balanced
        over that many cores."""
        for item in self.groups:
            for member in item.group.members:
                member.attributes[GROUP_ATTR] = IntegerAttr(item.index, i64)
                if cores and item.group.kind != GroupKind.MATMUL:
                    member.attributes[CORES_ATTR] = IntegerAttr(cores, i64)

    def remarks(self, target: Target, interleave: bool) -> list[Decision]:
        phases = 1 + max((g.phase for g in self.groups), default=-1)
        remarks = list(self.decisions)
        for item in self.groups:
            group = item.group
            frame = "x".join(str(e) if isinstance(e, int) else "?" for e in group.frame)
            peers = [g for g in self.groups if g.phase == item.phase and g is not item]
            traffic = (
                f"reads {item.read_bytes} bytes of GM, writes {item.written_bytes}"
                if item.read_bytes is not None and item.written_bytes is not None
                else "GM traffic dynamic"
            )
            if not peers:
                cores = f"split over up to {target.cores} cores"
            elif interleave:
                cores = (
                    f"split over up to {target.cores} cores, interleaved with "
                    f"{len(peers)} independent group(s) of its phase"
                )
            else:
                cores = (
                    f"not interleaved with the {len(peers)} other group(s) of its "
                    "phase (interleave=false)"
                )
            remarks.append(
                Decision(
                    group.root,
                    f"group {item.index} ({group.kind.value}: {_names(group)}) over "
                    f"{frame}: phase {item.phase} of {phases}, {traffic}, "
                    f"{len(group.outputs)} output(s); {cores}",
                )
            )
        return remarks


def _dynamic_dims(value: SSAValue) -> int:
    if not is_tensor(value):
        return 0
    return sum(d == DYNAMIC_INDEX for d in tensor_type(value).get_shape())


def balance_cores(group: Group) -> int:
    """The cores tv-schedule asked `group`'s tiles to be balanced over (0: none)."""
    for member in group.members:
        value = member.attributes.get(CORES_ATTR)
        if isinstance(value, IntegerAttr):
            return value.value.data
    return 0


def group_balance(group: Group, tile_rank: int, cores: int) -> CoreBalance | None:
    """What `balanced_tiling` needs of `group`'s nest with `tile_rank` tile dims
    (its last ones): the outer frame dims' iterations, the tile dims it reduces
    and the bytes of the elements it loads (its inputs from outside the group);
    None when an outer dim is dynamic."""
    first = len(group.frame) - tile_rank
    outer = group.frame[:first]
    if any(not isinstance(e, int) for e in outer):
        return None
    element = max(
        (
            element_bytes(tensor_type(v).element_type)
            for m in group.members
            for v in m.operands
            if is_tensor(v)
            and not (isinstance(v.owner, Operation) and v.owner in group.members)
        ),
        default=2,
    )
    pitches = output_pitches(group)
    return CoreBalance(
        cores=cores,
        outer_units=math.prod(cast(int, e) for e in outer),
        reduced=frozenset(d - first for d in group.reduced if d >= first),
        element_bytes=element,
        outer_pitch=pitches[first - 1] if first and pitches else 0,
        pitches=tuple(pitches[first:]) if pitches else (),
    )


def output_pitches(group: Group) -> list[int]:
    """Per frame dim of `group`, the GM bytes its outputs' windows move per
    element along it (the gcd over the outputs, row-major tensors; 0: none
    moves), which decides the multi-core split's granule; empty when an
    output has a dynamic dim."""
    pitches = [0] * group.rank
    for value in group.outputs:
        shape = tensor_type(value).get_shape()
        if any(d == DYNAMIC_INDEX for d in shape):
            return []
        stride = element_bytes(tensor_type(value).element_type)
        for dim in reversed(range(len(shape))):
            if shape[dim] > 1:
                frame_dim = group.mapping[value][dim]
                pitches[frame_dim] = math.gcd(pitches[frame_dim], stride)
            stride *= shape[dim]
    return pitches


def _schedulable(function: func.FuncOp) -> bool:
    """Whether tv-to-tile tiles every tensor op of `function` (top-level dense tv
    ops, none of the sparse family): otherwise it reports the op, and the schedule leaves it."""
    block = function.body.block
    for op in function.walk():
        if op is function:
            continue
        values = [v for v in (*op.operands, *op.results) if is_tensor(v)]
        if not values:
            continue
        if (
            op.parent_block() is not block
            or isinstance(op, tv.SPARSE_OPS)
            or any(tensor_type(v).is_sparse for v in values)
        ):
            return False
        if op.dialect_name() != "tv" and not isinstance(op, func.ReturnOp):
            return False
    return not any(is_tensor(a) and tensor_type(a).is_sparse for a in block.args)


def apply_groups(analysis: FusionAnalysis) -> None:
    """Merge the groups of `analysis` whose members `tv-schedule` numbered alike
    (`GROUP_ATTR`), where tv_fusion agrees they can be one nest; the rest stay
    as they are (ops created or changed after the schedule carry no number)."""
    by_number: dict[int, list[Group]] = {}
    for group in analysis.groups:
        numbers = {
            m.attributes[GROUP_ATTR].value.data  # pyright: ignore[reportAttributeAccessIssue]
            for m in group.members
            if isinstance(m.attributes.get(GROUP_ATTR), IntegerAttr)
        }
        if len(numbers) == 1:
            by_number.setdefault(numbers.pop(), []).append(group)
    for groups in by_number.values():
        merged = groups[0]
        for other in groups[1:]:
            if analysis.siblings_compatible(merged, other):
                merged = analysis.merge_groups([merged, other])


def strip_groups(ops: Sequence[Operation]) -> None:
    for op in ops:
        op.attributes.pop(GROUP_ATTR, None)


@dataclass(frozen=True)
class TvSchedulePass(ModulePass):
    """Partition tv ops into fused groups, order them into phases, assign cores.

    Records the groups as `pypto.group` on the ops and, with interleave, marks
    the function so that independent groups share all the cores; a remark per
    decision.
    """

    name = "tv-schedule"

    target: str | None = None
    """A builtin target name or a TOML file; default: the module's pypto.target."""

    fuse_siblings: bool = True
    """Fuse groups over the same iteration space that share inputs (one nest
    reading each input once); false: one nest per output."""

    interleave: bool = True
    """Split independent groups of a phase each over all the cores; false: the
    later ones run on the last core."""

    balance_cores: bool = True
    """Let tv-to-tile shorten a vector nest's tiles where that puts idle cores
    to work and the target's DMA costs say it finishes sooner; false: the
    largest tiles that fit."""

    split_reductions: bool = True
    """Split a reduction of an argument over its first reduced dim across the
    cores, with a second nest combining the partial results, where the
    tiling model estimates it faster (passes/reduction_split.py); false: one
    nest."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target_name = resolve_target(op, self.target, default=None)
        if target_name is None:
            raise op_error(
                op,
                "tv-schedule needs a target: pass target=NAME or run pypto-set-target",
            )
        try:
            target = load_target(target_name)
        except TargetError as error:
            raise op_error(op, f"tv-schedule: unknown target: {error}") from error
        rules = [r for r in FUSION_RULES if getattr(self, r.option)]
        for function in list(op.walk()):
            if not isinstance(function, func.FuncOp) or not function.body.blocks:
                continue
            ops = [o for o in function.body.block.ops if o.dialect_name() == "tv"]
            if not ops:
                continue
            if not _schedulable(function):
                continue  # tv-to-tile reports what it cannot tile
            if self.split_reductions:
                split_reductions(function, target, target.cores)
            scheduler = Scheduler(function, rules)
            scheduler.annotate(target.cores if self.balance_cores else 0)
            if self.interleave and scheduler.has_independent_groups():
                function.attributes[INTERLEAVE_ATTR] = UnitAttr()
            for decision in scheduler.remarks(target, self.interleave):
                emit_remark(decision.op, decision.text)
        op.attributes[TARGET_ATTR] = StringAttr(target_name)
