"""`hw-coalesce-dma`: fewer, longer GM bursts for the same bytes (docs/hw_coalesce_dma.md).

Every DMA instruction pays a start-up latency and every burst a fixed overhead and
whole GM granules (pypto_mlir.targets.cost). Two rewrites of `dma_load` / `dma_store`
cut both without changing a single byte moved:

- *Merging ops*: consecutive DMAs of one block (only pure address arithmetic and
  views between them) of the same kind, GM memref and on-chip buffer, with one
  burst shape, whose bursts continue each other at a constant pitch on both sides,
  become one DMA with the sum of their bursts (the gap is the pitch minus the burst).
- *Merging bursts*: bursts that follow each other with no gap on either side (GM
  gap 0, on-chip pitch equal to the burst) become one burst.

A rewrite is kept only when `dma_cost` says it is no dearer at every possible GM
alignment of the first byte. The pass runs after tile-to-hw and before
hw-insert-sync, so the flags are computed for the merged instructions.

Merging bursts is one DMA at a time, a `RewritePattern` (`MergeBursts`), run once
the ops are merged. Merging ops is a decision over a run of consecutive DMAs of a
block (where a run ends depends on every DMA in it and on the cost of the
whole), so a hand-written scan of each block (`_Coalescer`) makes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.passes.access_analysis import Affine, affine_of
from pypto_mlir.targets import Target
from pypto_mlir.targets.cost import dma_cost

_MERGEABLE = (hw.DmaLoadOp, hw.DmaStoreOp)


@dataclass(frozen=True)
class _Dma:
    """What a burst DMA moves: its shape and where its first byte is on each side.

    `gm` is the byte address of the first GM byte relative to the memref's start;
    `chip` the on-chip byte offset from the start of `root` (an alloc).
    """

    op: hw.DmaLoadOp | hw.DmaStoreOp
    bursts: int
    length: int
    gm_pitch: int
    chip_pitch: int
    gm: Affine
    root: SSAValue
    chip: int


def _on_chip(op: hw.DmaLoadOp | hw.DmaStoreOp) -> SSAValue:
    return op.dst if isinstance(op, hw.DmaLoadOp) else op.src


def _gm_side(op: hw.DmaLoadOp | hw.DmaStoreOp) -> tuple[SSAValue, Sequence[SSAValue]]:
    if isinstance(op, hw.DmaLoadOp):
        return op.src, op.src_indices
    return op.dst, op.dst_indices


def _buffer_origin(value: SSAValue) -> tuple[SSAValue, int] | None:
    """(alloc value, static byte offset) of an nd buffer view, else None."""
    offset = 0
    while isinstance(owner := value.owner, hw.SubviewOp):
        source = owner.source.type
        assert isinstance(source, hw.BufferType)
        if source.layout_kind != hw.Layout.ND:
            return None
        elements = 0
        for index, dim in zip(owner.indices, source.get_shape(), strict=True):
            const = affine_of(index)
            if const.coeffs:
                return None
            elements = elements * dim + const.const
        offset += elements * source.element_bytes
        value = owner.source
    if not isinstance(value.owner, hw.AllocOp):
        return None
    return value, offset


def _gm_address(memref: SSAValue, indices: Sequence[SSAValue]) -> Affine | None:
    """Byte address of memref[indices] relative to the memref's start."""
    mtype = memref.type
    if not isinstance(mtype, MemRefType):
        return None
    strides = mtype.get_strides()
    if strides is None or any(s is None for s in strides):
        return None
    size = hw.element_bytes(mtype.element_type)
    address = Affine()
    for index, stride in zip(indices, strides, strict=True):
        assert stride is not None
        address = address + affine_of(index).scaled(stride * size)
    return address


def _describe(op: hw.DmaLoadOp | hw.DmaStoreOp, target: Target) -> _Dma | None:
    memref, indices = _gm_side(op)
    gm = _gm_address(memref, indices)
    origin = _buffer_origin(_on_chip(op))
    if gm is None or origin is None:
        return None
    bursts, length, _, _ = op.burst_descriptor()
    src_pitch, dst_pitch = op.pitches(target)
    gm_pitch, chip_pitch = (
        (src_pitch, dst_pitch)
        if isinstance(op, hw.DmaLoadOp)
        else (dst_pitch, src_pitch)
    )
    return _Dma(op, bursts, length, gm_pitch, chip_pitch, gm, origin[0], origin[1])


def _transparent(op: Operation) -> bool:
    """Ops a merge may move DMAs across: address arithmetic and views, no effects."""
    return (
        not isinstance(op, hw.HwInstruction)
        and not op.regions
        and (isinstance(op, arith.ConstantOp) or is_side_effect_free(op))
    )


def _path(op: hw.DmaLoadOp | hw.DmaStoreOp) -> tuple[str, str]:
    chip = _on_chip(op).type
    assert isinstance(chip, hw.BufferType)
    space = str(chip.memory_space)
    return ("gm", space) if isinstance(op, hw.DmaLoadOp) else (space, "gm")


def _no_dearer(
    target: Target,
    path: tuple[str, str],
    before: Sequence[tuple[int, int, int, int]],
    after: tuple[int, int, int],
    element: int,
) -> bool:
    """Whether one DMA `after` = (bursts, length, gm_pitch) costs no more cycles and
    no more wire bytes than the DMAs `before` = (bursts, length, gm_pitch, gm
    offset from the first), wherever the first GM byte falls in a granule."""
    granule = target.dma_path(*path).granule
    gm_side = 1 if path[1] == "gm" else 0

    def cost(bursts: int, length: int, pitch: int, addr: int) -> tuple[int, int]:
        addrs = [0, 0]
        strides: list[int | None] = [None, None]
        addrs[gm_side], strides[gm_side] = addr, pitch
        c = dma_cost(
            target, path, bursts, length, addrs[0], addrs[1], strides[0], strides[1]
        )
        return c.cycles, c.wire_bytes

    for start in range(0, granule, element):
        parts = [cost(b, n, p, start + off) for b, n, p, off in before]
        merged = cost(*after, start)
        if merged[0] > sum(c for c, _ in parts) or merged[1] > sum(w for _, w in parts):
            return False
    return True


class _Coalescer:
    """Merges the runs of consecutive DMAs of each block (see the module doc)."""

    def __init__(self, target: Target):
        self.target = target
        self.rewriter = Rewriter()

    def block(self, block: Block) -> None:
        run: list[_Dma] = []
        for op in list(block.ops):
            for region in op.regions:
                for inner in region.blocks:
                    self.block(inner)
            if isinstance(op, _MERGEABLE):
                dma = _describe(op, self.target)
                if dma is not None and run and self._continues(run, dma):
                    run.append(dma)
                    continue
                self._flush(run)
                run = [dma] if dma is not None else []
            elif not _transparent(op):
                self._flush(run)
                run = []
        self._flush(run)

    def _continues(self, run: list[_Dma], dma: _Dma) -> bool:
        """Whether `dma`'s bursts continue the run's at one constant pitch."""
        first = run[0]
        if (
            type(dma.op) is not type(first.op)
            or _gm_side(dma.op)[0] != _gm_side(first.op)[0]
            or dma.root != first.root
            or _element(dma.op) != _element(first.op)
            or dma.length != first.length
        ):
            return False
        pitches = _run_pitches([*run, dma])
        return pitches is not None and self._chip_pitch_ok(dma, pitches[1])

    def _chip_pitch_ok(self, dma: _Dma, pitch: int) -> bool:
        """An on-chip pitch a descriptor can express: the burst rounded up to the
        memory's alignment plus a gap that is a multiple of the alignment."""
        alignment = self._alignment(dma)
        rounded = -(-dma.length // alignment) * alignment
        return pitch >= rounded and (pitch - rounded) % alignment == 0

    def _alignment(self, dma: _Dma) -> int:
        buf = _on_chip(dma.op).type
        assert isinstance(buf, hw.BufferType)
        return self.target.memories[str(buf.memory_space)].alignment

    def _flush(self, run: list[_Dma]) -> None:
        if len(run) < 2:
            return
        first = run[0]
        pitches = _run_pitches(run)
        assert pitches is not None
        gm_pitch, chip_pitch = pitches
        bursts = sum(d.bursts for d in run)
        element = hw.element_bytes(_element(first.op))
        before = [
            (d.bursts, d.length, d.gm_pitch, (d.gm - first.gm).const) for d in run
        ]
        path = _path(first.op)
        if not _no_dearer(
            self.target, path, before, (bursts, first.length, gm_pitch), element
        ):
            return
        alignment = self._alignment(first)
        rounded = -(-first.length // alignment) * alignment
        span = (bursts - 1) * chip_pitch + first.length
        buf = self._covering(first, _on_chip(first.op), span)
        gm_gap, chip_gap = gm_pitch - first.length, chip_pitch - rounded
        anchor = run[-1].op
        if isinstance(first.op, hw.DmaLoadOp):
            new: hw.DmaLoadOp | hw.DmaStoreOp = hw.DmaLoadOp(
                first.op.src,
                first.op.src_indices,
                buf,
                bursts=bursts,
                burst_bytes=first.length,
                src_gap=gm_gap,
                dst_gap=chip_gap,
            )
        else:
            new = hw.DmaStoreOp(
                buf,
                first.op.dst,
                first.op.dst_indices,
                bursts=bursts,
                burst_bytes=first.length,
                src_gap=chip_gap,
                dst_gap=gm_gap,
            )
        new.location = first.op.location
        new.attributes |= first.op.attributes
        self.rewriter.insert_op(new, InsertPoint.before(anchor))
        operands = [o for dma in run for o in dma.op.operands]
        for dma in run:
            self.rewriter.erase_op(dma.op)
        self._erase_dead(operands)

    def _erase_dead(self, values: list[SSAValue]) -> None:
        """Erase the address arithmetic and views only merged DMAs used."""
        while values:
            owner = values.pop().owner
            if (
                isinstance(owner, Operation)
                and owner.parent is not None
                and _transparent(owner)
                and not any(r.uses for r in owner.results)
            ):
                values.extend(owner.operands)
                self.rewriter.erase_op(owner)

    def _covering(self, first: _Dma, buf: SSAValue, span: int) -> SSAValue:
        """A buffer value from `first`'s on-chip start spanning `span` bytes: its
        own when large enough, else a flat view of the alloc from that byte on."""
        btype = buf.type
        assert isinstance(btype, hw.BufferType)
        if btype.byte_size() >= span:
            return buf
        root = first.root.type
        assert isinstance(root, hw.BufferType)
        size = root.element_bytes
        offset = first.chip // size
        index: list[int] = []
        rest = offset
        for dim in reversed(root.get_shape()):
            index.append(rest % dim)
            rest //= dim
        index.reverse()
        consts = [arith.ConstantOp.from_int_and_width(i, hw.IndexType()) for i in index]
        view_type = hw.BufferType(
            [root.element_count() - offset], root.element_type, str(root.memory_space)
        )
        view = hw.SubviewOp(first.root, consts, view_type)
        where = InsertPoint.before(first.op)
        for op in (*consts, view):
            op.location = first.op.location
            self.rewriter.insert_op(op, where)
        return view.result


def _element(op: hw.DmaLoadOp | hw.DmaStoreOp) -> Attribute:
    buf = _on_chip(op).type
    assert isinstance(buf, hw.BufferType)
    return buf.element_type


def _run_pitches(run: Sequence[_Dma]) -> tuple[int, int] | None:
    """The (GM, on-chip) pitch at which the bursts of `run` follow each other, or
    None when they do not: one constant pitch, at least a burst long on GM."""
    multi = [d for d in run if d.bursts > 1]
    if multi:
        pitches = (multi[0].gm_pitch, multi[0].chip_pitch)
    else:
        step = run[1].gm - run[0].gm
        if step.coeffs:
            return None
        pitches = (step.const, run[1].chip - run[0].chip)
    if any((d.gm_pitch, d.chip_pitch) != pitches for d in multi):
        return None
    for prev, dma in zip(run, run[1:], strict=False):
        step = dma.gm - prev.gm
        if (
            step.coeffs
            or step.const != prev.bursts * pitches[0]
            or dma.chip - prev.chip != prev.bursts * pitches[1]
        ):
            return None
    if pitches[0] < run[0].length:
        return None
    return pitches


@dataclass(frozen=True)
class MergeBursts(RewritePattern):
    """Bursts of one DMA with no gap on either side become one burst, when
    `dma_cost` says it is no dearer."""

    target: Target

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: hw.DmaLoadOp | hw.DmaStoreOp, rewriter: PatternRewriter
    ) -> None:
        bursts, length, src_gap, dst_gap = op.burst_descriptor()
        if bursts == 1 or src_gap or dst_gap:
            return
        if op.pitches(self.target) != (length, length):
            return
        element = hw.element_bytes(_element(op))
        path = _path(op)
        if not _no_dearer(
            self.target,
            path,
            [(bursts, length, length, 0)],
            (1, bursts * length, bursts * length),
            element,
        ):
            return
        op.bursts = hw._i64(1)  # pyright: ignore[reportPrivateUsage]
        op.burst_bytes = hw._i64(bursts * length)  # pyright: ignore[reportPrivateUsage]
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class HwCoalesceDmaPass(ModulePass):
    """Merge DMAs and bursts that move consecutive windows into fewer, longer ones.

    Exact: the same bytes move between the same addresses; run before
    hw-insert-sync.
    """

    name = "hw-coalesce-dma"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target, _ = hw.target_of(op)
        coalescer = _Coalescer(target)
        for region in op.regions:
            for block in region.blocks:
                coalescer.block(block)
        walker = PatternRewriteWalker(MergeBursts(target), apply_recursively=False)
        walker.rewrite_module(op)
