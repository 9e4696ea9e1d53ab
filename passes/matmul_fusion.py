"""Row and prologue fusion for `tv-to-tile` (`row-fusion`, `prologue-fusion`,
docs/tiling.md): vector work around a matmul runs in the matmul's nest.

**Rows.** A row-wise reduction or softmax of a matmul result runs in the
matmul's nest.

tv_fusion keeps a matmul and the ROW group reducing its result apart (the
result goes to GM, then a `sync_all`, then a vector nest reads it back). When
the ROW group reduces only the result's last dim (its rows, N long) and reads
the result as it is (no broadcast, no transpose), the two groups become one
MATMUL group whose epilogue holds the reductions: the matmul nest then takes
base blocks spanning whole rows (`MatmulRequest.whole_rows`) and reduces each
block in UB after the move out of L0C. Whether such a block fits L0C and UB is
the tiling model's answer; tv-to-tile splits the group again, with a remark,
when none does.

**Prologues.** A matmul operand computed by elementwise ops (`(x * s) @ w`,
`relu(x) @ w`, `cast(x) @ w`, `(x + b) @ w`: a MAP group whose only output is
the operand, read by the matmul alone) is computed in UB on each operand block
the matmul nest needs and moved UB -> L1 (nz) in place of the block's GM -> L1
load: the MAP group becomes a prologue of the MATMUL group
(`Group.prologues`), and the operand never goes to GM. Refused, with a remark,
on a target without a UB -> L1 path, for an operand that is not f16, the cube
reads transposed or has a dim of extent 1, and when the operand's group does
more than elementwise work; tv-to-tile computes the prologue as a nest of its
own when no matmul block fits UB with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import f16
from xdsl.ir import Operation, SSAValue

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.targets import Target

from .tv_fusion import (
    MAP_OPS,
    FusionAnalysis,
    Group,
    GroupKind,
    is_returned,
    operand_mapping,
    tensor_type,
    tensor_users,
)


@dataclass(frozen=True)
class FusionDecision:
    """A decision of `fuse_matmul_rows` or `fuse_matmul_prologues`: the op its
    remark goes to and the text."""

    op: Operation
    text: str


def fuse_matmul_rows(analysis: FusionAnalysis) -> list[FusionDecision]:
    """Merge each ROW group with the MATMUL group whose result it reduces along
    rows, where that can be one nest; a remark per merge and per refusal."""
    decisions: list[FusionDecision] = []
    for row in list(analysis.groups):
        if row.kind != GroupKind.ROW or row not in analysis.groups:
            continue
        producers = _matmul_producers(analysis, row)
        if not producers:
            continue
        names = ", ".join(m.name for m in row.members if _is_reduction(m))
        if len(producers) > 1:
            decisions.append(
                FusionDecision(
                    row.root, f"{names} not fused with a matmul: it reads two"
                )
            )
            continue
        matmul = producers[0]
        reason = _refusal(analysis, matmul, row)
        if reason is not None:
            decisions.append(
                FusionDecision(row.root, f"{names} not fused with tv.matmul: {reason}")
            )
            continue
        op = matmul.matmul
        assert op is not None
        merged = analysis.merge_groups([matmul, row])
        merged.kind = GroupKind.MATMUL
        merged.matmul = op
        length = merged.frame[-1]
        decisions.append(
            FusionDecision(
                merged.root,
                f"fused {names} into the nest of tv.matmul: its rows of {length} "
                "are reduced in ub after the move out of l0c (no GM round trip)",
            )
        )
    return decisions


def _is_reduction(op: Operation) -> bool:
    return isinstance(op, tv.ReduceOp | tv.SoftmaxOp)


def _matmul_producers(analysis: FusionAnalysis, row: Group) -> list[Group]:
    """The plain MATMUL groups (no reduction of their own) whose results `row` reads."""
    found: list[Group] = []
    for member in row.members:
        for operand in member.operands:
            owner = operand.owner
            group = (
                analysis.group_of.get(owner) if isinstance(owner, Operation) else None
            )
            if (
                group is not None
                and group is not row
                and group.kind == GroupKind.MATMUL
                and not group.reduced
                and type(group) is Group
                and all(g is not group for g in found)
            ):
                found.append(group)
    return found


def _refusal(analysis: FusionAnalysis, matmul: Group, row: Group) -> str | None:
    """Why `row` cannot join `matmul`'s nest (None: it can)."""
    last = row.rank - 1
    if row.reduced != frozenset([last]):
        dims = ",".join(map(str, sorted(row.reduced)))
        return (
            f"it reduces dims [{dims}], not only the rows of the result (the "
            "matmul's blocks span whole rows, not whole columns)"
        )
    if row.rank != matmul.rank or not all(
        analysis.extents.classes.same(a, b)
        for a, b in zip(row.frame, matmul.frame, strict=True)
    ):
        return "their iteration spaces differ"
    if not isinstance(row.frame[last], int):
        return "the rows have a dynamic length (a block must hold a whole row)"
    identity = row.identity()
    for value in matmul.outputs:
        for use in value.uses:
            user = use.operation
            if analysis.group_of.get(user) is not row:
                continue
            rank = tensor_type(value).get_num_dims()
            if rank != row.rank or operand_mapping(user, value, row) != identity:
                return f"{user.name} reads the matmul result broadcast or transposed"
    for other in analysis.dependencies(row):
        if other is not matmul and analysis.reaches(other, matmul):
            return "it also reads a result computed from the matmul's by another nest"
    return None


def fuse_matmul_prologues(
    analysis: FusionAnalysis, target: Target
) -> list[FusionDecision]:
    """Make each MAP group computing only a matmul operand a prologue of the
    matmul's group, where it can be; a remark per fusion and per refusal."""
    decisions: list[FusionDecision] = []
    for group in list(analysis.groups):
        op = group.matmul
        if group.kind != GroupKind.MATMUL or op is None or type(group) is not Group:
            continue
        operands = (
            (op.lhs, "lhs", op.transpose_a is not None),
            (op.rhs, "rhs", op.transpose_b is not None),
        )
        for operand, side, transposed in operands:
            prologue = _operand_group(analysis, group, operand)
            if prologue is None:
                continue
            names = ", ".join(m.name for m in prologue.members)
            reason = _prologue_refusal(analysis, group, prologue, transposed, target)
            if reason is not None:
                decisions.append(
                    FusionDecision(
                        op, f"prologue {names} of the {side} not fused: {reason}"
                    )
                )
                continue
            analysis.groups.remove(prologue)
            group.prologues[operand] = prologue
            for member in prologue.members:
                analysis.group_of[member] = group
            decisions.append(
                FusionDecision(
                    op,
                    f"fused prologue {names} into the nest of tv.matmul: the {side} "
                    "is computed in ub on each block and moved ub -> l1 (no GM "
                    "round trip)",
                )
            )
    analysis.finish()
    return decisions


def _operand_group(
    analysis: FusionAnalysis, group: Group, operand: SSAValue
) -> Group | None:
    """The MAP group computing `operand` for `group`'s matmul alone (a ROW
    group's reductions need whole rows of the operand: no candidate)."""
    owner = operand.owner
    producer = analysis.group_of.get(owner) if isinstance(owner, Operation) else None
    if producer is None or producer is group or type(producer) is not Group:
        return None
    if producer.kind != GroupKind.MAP or producer.outputs != [operand]:
        return None
    if is_returned(operand) or tensor_users(operand) != [group.matmul]:
        return None
    return producer


def _prologue_refusal(
    analysis: FusionAnalysis,
    group: Group,
    prologue: Group,
    transposed: bool,
    target: Target,
) -> str | None:
    """Why `prologue` cannot be computed in `group`'s nest (None: it can)."""
    if ("ub", "l1") not in target.dma:
        return f"target '{target.name}' has no ub -> l1 path"
    if not all(isinstance(m, MAP_OPS) for m in prologue.members):
        return "its group does more than elementwise work"
    if tensor_type(prologue.root.results[0]).element_type != f16:
        return (
            "only f16 operands are computed in ub for the cube (the vector unit "
            "has no i8 or bf16 instructions to pad and move them with)"
        )
    if transposed:
        return "the cube reads the operand transposed (moved in l1 -> l0 only)"
    if prologue.rank != group.rank:
        return "it broadcasts over the matmul's batch dims"
    if 1 in prologue.frame[-2:]:
        return (
            "the operand has a dim of extent 1 (its ub tile would have one row "
            "or column, not whole fractals)"
        )
    for other in analysis.dependencies(group):
        if other is not prologue and analysis.reaches(other, prologue):
            return "the matmul also reads a result computed from it by another nest"
    return None
