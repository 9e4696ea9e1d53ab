"""How tv-to-tile tiles a matmul group, and what stays in its nest.

A matmul group (passes/tv_fusion.py, passes/matmul_fusion.py) is the matmul
with the ops fused into its nest: an elementwise epilogue computed in UB on each
block, row reductions on blocks spanning whole rows, operand prologues computed
on each operand block. `MatmulLowering.emit` chooses the blocks with the matmul
model (passes/matmul_model.py) or from `matmul-tile-sizes`, and, where nothing
fits or the model estimates the unfused form faster, splits a part off into a
nest of its own (a remark says which and why); `MatmulNest` builds the nest.

It is its own module because these choices are a job apart from the driver's
(tv_to_tile.FunctionLowering: the order of the nests, the GM buffers, views),
which it reaches only through `NestLowering`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from xdsl.dialects import memref
from xdsl.dialects.builtin import IndexType, MemRefType, f32
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.diagnostics import emit_remark
from pypto_mlir.dialects.tile import (
    MATMUL_TYPES,
    MemorySpace,
    TileType,
    element_bytes,
    fractal_edge,
)
from pypto_mlir.roofline import ops_vector_cycles
from pypto_mlir.targets import Target

from .bufferize import memref_type
from .located_builder import LocatedBuilder
from .matmul_model import (
    ASSUMED_DYNAMIC_EXTENT,
    MatmulRequest,
    MatmulTiling,
    OperandPrologue,
    RowEpilogue,
    auto_matmul_tiling,
    covers_rows,
    explicit_matmul_tiling,
    fused_prologue_cycles,
    fused_rows_cycles,
    matmul_choice_text,
    matmul_cycles,
    matmul_fits,
    prologue_nest_cycles,
    row_nest_cycles,
    with_unrolled_k,
)
from .matmul_nests import MatmulNest
from .nest_builder import GmBuffers, discard_block
from .tiling_candidates import record_request
from .tiling_model import (
    BUFFERING,
    LiveProfile,
    LiveTerm,
    TilingError,
    VectorRequest,
    VectorTiling,
    column_unit,
)
from .tv_fusion import ExtentAnalysis, Group, GroupKind, static_extent, tensor_type

EPILOGUE_PROBE_SIZES = (48, 80)
"""Base block of the matmul epilogue a group is measured with (distinct
multiples of every fractal edge)."""


@dataclass(frozen=True)
class MatmulOptions:
    """The options of tv-to-tile (`TvToTilePass`, same names) that matmul
    nests read."""

    matmul_tile_sizes: tuple[int, ...]
    tile_sizes: tuple[int, ...]
    max_cores: int
    matmul_panels: bool
    matmul_split_k: bool
    matmul_unroll_k: bool
    matmul_l2_order: bool
    epilogue_fusion: bool


class NestLowering(Protocol):
    """What a matmul group's tiling asks of the function's lowering
    (tv_to_tile.FunctionLowering): its GM buffers, and the vector nests of the
    parts it splits off or measures."""

    target: Target
    extents: ExtentAnalysis
    gm: GmBuffers
    allocs: list[SSAValue]
    """GM temporaries, deallocated before the return."""
    sum_lanes: int

    def emit_group(self, group: Group, cursor: LocatedBuilder) -> None: ...

    def probe(
        self, group: Group, resident: bool, by_rows: bool = False
    ) -> LiveProfile: ...

    def vector_choice(
        self, group: Group, explicit: Sequence[int]
    ) -> tuple[VectorTiling, bool, VectorRequest, int, str]: ...

    def scratch_terms(
        self, op: Operation, term: Callable[[SSAValue], LiveTerm | None]
    ) -> list[LiveTerm]: ...


class MatmulLowering:
    """Tiles the matmul groups of one function (see the module doc)."""

    def __init__(self, host: NestLowering, options: MatmulOptions):
        self.host = host
        self.target = host.target
        self.options = options

    def emit(self, group: Group, cursor: LocatedBuilder) -> None:
        """Tile `group`'s matmul nest, or split what does not stay in it."""
        op = group.matmul
        assert op is not None
        lhs_extents = self.host.extents.of(op.lhs)
        k_extent = lhs_extents[-2] if op.transpose_a is not None else lhs_extents[-1]
        element_type = tensor_type(op.lhs).element_type
        epilogue = None
        if group.members != [op] and not self.options.epilogue_fusion:
            self._split_epilogue(group, cursor, "epilogue-fusion=false")
            return
        if group.members != [op]:
            profile = self._epilogue_profile(group)
            epilogue = profile.peak_of
            unit = column_unit(
                profile.profile.element_types, self.target.memories["ub"].alignment
            )
            if unit > fractal_edge(element_type, self.target):
                # Base blocks are fractal multiples: too narrow for the rows of
                # the epilogue's tiles (an i8 cast after an f16 matmul).
                self._split_epilogue(
                    group,
                    cursor,
                    f"its tiles need rows of {unit} elements, a base block's are "
                    f"multiples of {fractal_edge(element_type, self.target)}",
                )
                return
        batch = 1
        for extent in group.frame[:-2]:
            batch *= static_extent(extent) or ASSUMED_DYNAMIC_EXTENT
        cores = self.target.cores
        if self.options.max_cores:
            cores = min(cores, self.options.max_cores)
        if static_extent(k_extent) == 0:
            # the tiling model divides by k's blocks: name the cause instead
            raise TilingError(
                "tv-to-tile cannot lower a matmul over an empty contraction "
                "dimension (K = 0: its result is zeros)"
            )
        request = MatmulRequest(
            m=static_extent(group.frame[-2]),
            n=static_extent(group.frame[-1]),
            k=static_extent(k_extent),
            in_bytes=element_bytes(element_type),
            acc_bytes=element_bytes(MATMUL_TYPES[element_type]),
            fractal=fractal_edge(element_type, self.target),
            epilogue=epilogue,
            in_type=str(element_type),
            out_bytes=element_bytes(tensor_type(op.result).element_type),
            transpose_a=op.transpose_a is not None,
            transpose_b=op.transpose_b is not None,
            batch=batch,
            cores=cores,
            panels=self.options.matmul_panels and op.lhs not in group.prologues,
            prologue=self._prologue_peak(group),
            split_k=self.options.matmul_split_k
            and group.members == [op]
            and group.rank == 2,
            l2_order=self.options.matmul_l2_order,
            unroll_k=self.options.matmul_unroll_k,
            whole_rows=bool(group.reduced),
        )
        record_request(request)
        buffering = BUFFERING
        if self.options.matmul_tile_sizes:
            try:
                tiling = explicit_matmul_tiling(
                    self.target, request, self.options.matmul_tile_sizes
                )
            except TilingError as error:
                if not group.prologues:
                    raise
                # Raises when the sizes do not fit without the prologues either.
                explicit_matmul_tiling(
                    self.target,
                    replace(request, prologue=None),
                    self.options.matmul_tile_sizes,
                )
                self._split_prologues(group, cursor, str(error))
                self.emit(group, cursor)
                return
            if not covers_rows(request, tiling):
                self._split_epilogue(
                    group,
                    cursor,
                    f"matmul-tile-sizes gives base blocks {tiling.n0} wide, not the "
                    f"whole rows of {request.n} the reductions need",
                )
                return
            if matmul_fits(self.target, request, tiling, BUFFERING) is not None:
                buffering = 1
        else:
            found = auto_matmul_tiling(self.target, request)
            if found is None:
                buffering = 1
                found = auto_matmul_tiling(self.target, request, 1)
            if found is None and group.prologues:
                self._split_prologues(
                    group,
                    cursor,
                    f"no matmul block fits target '{self.target.name}' with it in ub",
                )
                self.emit(group, cursor)
                return
            if found is None and epilogue is not None:
                self._split_epilogue(group, cursor, self._no_block_reason(request))
                return
            if found is None:
                raise TilingError(
                    f"no matmul tiling fits target '{self.target.name}': even one "
                    f"{request.fractal}x{request.fractal} fractal per operand does not fit "
                    "l0a/l0b/l0c/l1 (and the epilogue in ub)"
                )
            tiling = with_unrolled_k(self.target, request, found)
        tiling = _effective(tiling, request)
        if group.prologues and not self.options.matmul_tile_sizes:

            def split_prologues(reason: str) -> None:
                self._split_prologues(group, cursor, reason)
                self.emit(group, cursor)

            if self._declined_by_cost(
                group,
                self._prologue_costs(group, request, tiling),
                "{fused:.0f} cycles with the operand computed on each block in "
                "the matmul's nest, {unfused:.0f} with a nest of its own over the "
                "cores, a sync_all and the matmul's best blocks",
                "prologue kept in the matmul's nest",
                split_prologues,
            ):
                return
        if (
            group.reduced
            and not self.options.matmul_tile_sizes
            and self._declined_by_cost(
                group,
                self._row_fusion_costs(group, request, tiling),
                "{fused:.0f} cycles with whole-row blocks and the rows reduced "
                "in their nest, {unfused:.0f} with the matmul's best blocks, a "
                "sync_all and a row nest over the cores",
                "rows reduced in the matmul's nest",
                lambda reason: self._split_epilogue(group, cursor, reason),
            )
        ):
            return
        nest = MatmulNest(
            group, self.host.extents, self.host.gm, cursor, self.host.sum_lanes
        )
        if tiling.split > 1:
            nest.workspace = self._split_workspace(group, tiling, cursor)
            nest.combine_ub = self.target.memories["ub"].size or nest.combine_ub
            nest.combine_cores = cores
        nest.emit(tiling)
        emit_remark(
            group.root, self._matmul_remark(group, tiling, k_extent, buffering, request)
        )

    def _split_workspace(
        self, group: Group, tiling: MatmulTiling, cursor: LocatedBuilder
    ) -> SSAValue:
        """The f32 GM buffer [split * M', N] of a K split's partial sums, M'
        = M rounded up to whole L1 blocks."""
        m, n = (static_extent(e) for e in group.frame[-2:])
        assert m is not None and n is not None
        shape = [tiling.split * -(-m // tiling.m1) * tiling.m1, n]
        buffer = cursor.value(memref.AllocOp([], [], MemRefType(f32, shape)))
        self.host.allocs.append(buffer)
        return buffer

    def _row_fusion_costs(
        self, group: Group, request: MatmulRequest, tiling: MatmulTiling
    ) -> tuple[float, float]:
        """Estimated cycles of a row-fused matmul group (`tiling`: whole-row
        blocks) and of the same work unfused: the matmul with its best blocks,
        a sync_all, and the row nest tv-to-tile would tile for the epilogue
        (matmul_model.row_nest_cycles)."""
        op = group.matmul
        assert op is not None
        saved = dict(self.host.gm.source), dict(self.host.gm.targets)
        # The row nest's tiling, probed on a stand-in for the result's buffer.
        stand_in = memref.AllocOp([], [], memref_type(tensor_type(op.result)))
        if op.result not in self.host.gm.source:
            self.host.gm.source[op.result] = stand_in.memref
        _, row_group = self._split_groups(group)
        row_tiling = self.host.vector_choice(row_group, self.options.tile_sizes)[0]
        for planned, before in zip(
            (self.host.gm.source, self.host.gm.targets), saved, strict=True
        ):
            planned.clear()
            planned.update(before)
        stand_in.erase()
        rows = math.prod(
            static_extent(e) or ASSUMED_DYNAMIC_EXTENT for e in group.frame[:-1]
        )
        members = [m for m in group.members if m is not op]
        n = static_extent(group.frame[-1]) or ASSUMED_DYNAMIC_EXTENT
        epilogue = RowEpilogue(
            vector_per_row=ops_vector_cycles(members, self.target) / rows,
            in_row_bytes=n * request.out_bytes,
            out_row_bytes=sum(
                math.prod(tensor_type(v).get_shape()[-1:])
                * element_bytes(tensor_type(v).element_type)
                for v in group.outputs
                if v is not op.result
            ),
        )
        plain = replace(
            request,
            epilogue=None,
            whole_rows=False,
            split_k=self.options.matmul_split_k and group.rank == 2,
        )
        plain_tiling = auto_matmul_tiling(self.target, plain) or auto_matmul_tiling(
            self.target, plain, 1
        )
        tile_rows = row_tiling.steps[-2] if len(row_tiling.steps) > 1 else 1
        units = math.ceil(rows / tile_rows)
        cores = self.target.cores
        if self.options.max_cores:
            cores = min(cores, self.options.max_cores)
        fused = fused_rows_cycles(self.target, request, tiling, epilogue)
        if plain_tiling is None:
            return fused, math.inf
        unfused = (
            matmul_cycles(self.target, plain, _effective(plain_tiling, plain))
            + self.target.sync.all_latency
            + row_nest_cycles(self.target, epilogue, tile_rows, units, cores)
        )
        return fused, unfused

    @staticmethod
    def _declined_by_cost(
        group: Group,
        costs: tuple[float, float],
        text: str,
        kept: str,
        split: Callable[[str], None],
    ) -> bool:
        """Whether a fusion is declined because its unfused form (`costs`:
        fused, unfused) is estimated faster: then `split` is called with the
        reason, else a remark says the fusion is `kept`; both give `text`
        (formatted with `fused` and `unfused`)."""
        fused, unfused = costs
        estimates = text.format(fused=fused, unfused=unfused)
        if unfused < fused:
            split(f"two nests are estimated faster ({estimates})")
            return True
        emit_remark(group.root, f"{kept}: estimated {estimates}")
        return False

    def _prologue_costs(
        self, group: Group, request: MatmulRequest, tiling: MatmulTiling
    ) -> tuple[float, float]:
        """Estimated cycles of a matmul group with its operand prologues
        (`tiling`: the blocks chosen with them) and of the same work with
        each prologue a nest of its own, a sync_all and the matmul without
        them (A panels allowed again)."""
        op = group.matmul
        assert op is not None
        prologues: list[OperandPrologue] = []
        for operand, prologue in group.prologues.items():
            shape = tensor_type(operand).get_shape()
            elements = math.prod(
                static_extent(e) or ASSUMED_DYNAMIC_EXTENT for e in shape
            )
            columns = static_extent(shape[-1]) or ASSUMED_DYNAMIC_EXTENT
            prologues.append(
                OperandPrologue(
                    operand is op.lhs,
                    ops_vector_cycles(prologue.members, self.target) / elements,
                    elements // columns,
                    columns,
                    element_bytes(tensor_type(operand).element_type),
                )
            )
        fused = fused_prologue_cycles(self.target, request, tiling, prologues)
        plain = replace(request, prologue=None, panels=self.options.matmul_panels)
        plain_tiling = auto_matmul_tiling(self.target, plain) or auto_matmul_tiling(
            self.target, plain, 1
        )
        if plain_tiling is None:
            return fused, math.inf
        unfused = (
            sum(prologue_nest_cycles(self.target, p, request.cores) for p in prologues)
            + self.target.sync.all_latency
            + matmul_cycles(self.target, plain, _effective(plain_tiling, plain))
        )
        return fused, unfused

    def _prologue_peak(self, group: Group) -> Callable[[int, int, int], int] | None:
        """Peak UB bytes of `group`'s operand prologues on a block (m0, n0, k1):
        each computed on its operand's tile ([m0, k1] of A, [k1, n0] of B) as
        a vector nest would, one after the other."""
        op = group.matmul
        if op is None or not group.prologues:
            return None
        for operand in group.prologues:
            self.host.gm.targets.setdefault(operand, [])  # moved to l1, never stored
        peaks: list[tuple[bool, LiveProfile]] = [
            (operand is op.lhs, self.host.probe(prologue, True))
            for operand, prologue in group.prologues.items()
        ]

        def peak(m0: int, n0: int, k1: int) -> int:
            return max(p.peak((m0, k1) if lhs else (k1, n0)) for lhs, p in peaks)

        return peak

    def _split_prologues(
        self, group: Group, cursor: LocatedBuilder, reason: str
    ) -> None:
        """Compute `group`'s operand prologues as nests of their own (each
        operand through a GM temporary) when no matmul block fits with them."""
        op = group.matmul
        assert op is not None
        for operand, prologue in group.prologues.items():
            names = ", ".join(m.name for m in prologue.members)
            emit_remark(op, f"prologue {names} not fused: {reason}")
            self.host.gm.source[operand] = operand  # a temporary, allocated below
            self.host.emit_group(prologue, cursor)
        group.prologues = {}

    def _no_block_reason(self, request: MatmulRequest) -> str:
        """Why no base block fits a matmul with an epilogue."""
        if request.whole_rows:
            return (
                f"no base block spanning whole rows of {request.n} fits "
                f"target '{self.target.name}' (l0c holds its f32 accumulators, ub "
                "the epilogue's tiles)"
            )
        return f"no base block fits ub next to the epilogue on '{self.target.name}'"

    def _split_epilogue(
        self, group: Group, cursor: LocatedBuilder, reason: str
    ) -> None:
        """A matmul whose epilogue is not computed in its nest (`reason`: the
        option that says so, or nothing fits: an i8 matmul's 32x32 i32 block
        on tiny): its result goes to GM and the epilogue becomes a vector nest
        of its own (a row nest for reductions), which tiles it as it needs."""
        op = group.matmul
        assert op is not None
        names = ", ".join(m.name for m in group.members if m is not op)
        emit_remark(
            group.root,
            f"epilogue {names} not fused with tv.matmul: {reason}; the result "
            "goes through GM",
        )
        matmul, epilogue = self._split_groups(group)
        self.host.emit_group(matmul, cursor)
        self.host.emit_group(epilogue, cursor)

    def _split_groups(self, group: Group) -> tuple[Group, Group]:
        """`group`'s matmul alone, its result in GM (planned here), and its
        epilogue as a nest of its own (a ROW group for reductions)."""
        op = group.matmul
        assert op is not None
        result = op.result
        matmul = Group(
            GroupKind.MATMUL,
            op,
            group.frame,
            members=[op],
            mapping={result: group.mapping[result]},
            matmul=op,
            outputs=[result],
            prologues=group.prologues,
        )
        epilogue = Group(
            GroupKind.ROW if group.reduced else GroupKind.MAP,
            group.root,
            group.frame,
            group.reduced,
            members=[m for m in group.members if m is not op],
            mapping={v: m for v, m in group.mapping.items() if v is not result},
            outputs=[v for v in group.outputs if v is not result],
        )
        if result not in self.host.gm.source:
            targets = self.host.gm.targets.get(result) or []
            self.host.gm.source[result] = targets[0] if targets else result
            self.host.gm.targets[result] = targets
        return matmul, epilogue

    def _epilogue_profile(self, group: Group) -> _EpilogueProfile:
        op = group.matmul
        assert op is not None
        element_type = tensor_type(op.lhs).element_type
        accumulator = TileType(
            EPILOGUE_PROBE_SIZES, MATMUL_TYPES[element_type], MemorySpace.L0C
        )
        block = Block(arg_types=[IndexType(), accumulator])
        emitter = MatmulNest(
            group,
            self.host.extents,
            self.host.gm,
            LocatedBuilder(InsertPoint.at_end(block)),
            self.host.sum_lanes,
        )
        rows, cols = group.rank - 2, group.rank - 1
        emitter.physical = {
            rows: EPILOGUE_PROBE_SIZES[0],
            cols: EPILOGUE_PROBE_SIZES[1],
        }
        for dim in range(group.rank - 2):
            emitter.index[dim] = block.args[0]
            emitter.valid[dim] = 1
        index = block.args[0]
        emitter.epilogue(
            InsertPoint.at_end(block), op, (index, index), (index, index), block.args[1]
        )
        profile = LiveProfile.of_block(
            block,
            EPILOGUE_PROBE_SIZES,
            MemorySpace.UB,
            self.target.memories["ub"].alignment,
            # The scratch of reductions (partials, broadcasts) is large enough
            # to matter; an elementwise epilogue's is left out as before.
            self.host.scratch_terms if group.reduced else None,
        )
        discard_block(block)
        return _EpilogueProfile(profile)

    def _matmul_remark(
        self,
        group: Group,
        tiling: MatmulTiling,
        k_extent: object,
        buffering: int,
        request: MatmulRequest,
    ) -> str:
        def show(extent: object) -> str:
            return str(extent) if isinstance(extent, int) else "?"

        frame = group.frame
        text = (
            f"tiled tv.matmul {show(frame[-2])}x{show(frame[-1])}x{show(k_extent)}: "
            f"L1 blocks {tiling.m1}x{tiling.n1}x{tiling.k1}, L0 base blocks "
            f"{tiling.m0}x{tiling.n0}x{tiling.k0}, {tiling.fa * tiling.fb} "
            f"accumulator(s) in l0c"
        )
        epilogue = [m.name for m in group.members if m is not group.matmul]
        if epilogue:
            text += f", epilogue {', '.join(epilogue)} in ub"
        text += "; double-buffered" if buffering > 1 else "; single-buffered"
        return text + matmul_choice_text(self.target, request, tiling)


@dataclass(frozen=True)
class _EpilogueProfile:
    profile: LiveProfile

    def peak_of(self, m0: int, n0: int) -> int:
        return self.profile.peak((m0, n0))


def _effective(tiling: MatmulTiling, request: MatmulRequest) -> MatmulTiling:
    """`tiling` without L1 factors that a static extent leaves no whole L1 block for."""
    fa = 1 if request.m is not None and request.m < tiling.m1 else tiling.fa
    fb = 1 if request.n is not None and request.n < tiling.n1 else tiling.fb
    return replace(tiling, fa=fa, fb=fb)
