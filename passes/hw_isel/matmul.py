"""`tile.matmul`: one `mmad` of the cube unit on l0a/l0b operands into l0c.

The moves that bring the operands to l0a/l0b and the result out of l0c are
`tile.move`s (`movement`).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.passes.hw_isel.emitter import BufferOf, Emitter
from pypto_mlir.passes.hw_isel.strategy import NoScratch


class MatmulStrategy(NoScratch):
    """`tile.matmul`: `mmad` over the valid m x k and k x n operands.

    `matmul`: `mmad` with `m`, `n`, `k` = the valid extents, `accumulate` with an
    accumulator
    """

    ops = (tile.MatmulOp,)

    def inplace(self, op: Operation) -> tuple[int, ...]:
        """An accumulating matmul computes into its accumulator's buffer."""
        assert isinstance(op, tile.MatmulOp)
        return (2,) if op.acc is not None else ()

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.MatmulOp)
        m, k = self.valid[op.lhs]
        _, n = self.valid[op.rhs]
        em.emit(
            hw.MmadOp(
                buffer(op.lhs),
                buffer(op.rhs),
                buffer(op.result),
                m=m,
                n=n,
                k=k,
                accumulate=op.acc is not None,
            )
        )
