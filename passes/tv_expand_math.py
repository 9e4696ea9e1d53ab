"""tv-expand-math: the tv ops the chip has no instruction for, in other tv ops.

The vector unit has no sine, cosine or erf (Ascend C's `Sin`, `Cos` and `Erf`
are library routines built from basic vector instructions), so, as MLIR's
`math-polynomial-approximation` does, this pass rewrites each such op into the
f32 steps its facts give (`pypto_mlir.op_facts`, `UnaryFacts.expansion`:
multiplies, adds, min/max and a division with f32 constants; a range reduction
and polynomials for sin/cos, a clamped rational function for erf). f16 and bf16
operands are cast to f32 first and the result cast back, so the steps round as
f32 and the op rounds once to its type at the end, as the reference does.

One RewritePattern per expanded op (`ExpandUnary(tv.SinOp, ...)`), made from the
facts, so that an op with an expansion needs no code here. The accuracy of each
expansion is its facts' `approximation` (the checker's error bound). Kernels
without these ops are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, ModuleOp, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

import pypto_mlir.op_facts as op_facts
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.passes.located_builder import LocatedBuilder

_TV_OPS: dict[str, type[Operation]] = {op.name: op for op in tv.TensorView.operations}

_BINARY_OPS: dict[str, type[tv.BinaryOp]] = {
    name: cast(type[tv.BinaryOp], _TV_OPS[f"tv.{name}"]) for name in op_facts.BINARY
}
"""The tv op of each step's `op`."""


@dataclass
class ExpandUnary(RewritePattern):
    """`op_type` (a tv.UnaryOp on a float tensor) -> its expansion's tv ops."""

    op_type: type[tv.UnaryOp]
    expansion: tuple[op_facts.Step, ...]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if type(op) is not self.op_type:
            return
        assert isinstance(op, tv.UnaryOp)
        result_type = op.result.type
        assert isinstance(result_type, tv.TensorViewType)
        element_type = result_type.element_type
        builder = LocatedBuilder.before(op)
        x = op.input
        if element_type != f32:  # f16/bf16: the steps compute in f32
            x = builder.value(tv.CastOp(x, f32))
        values: dict[str, SSAValue] = {"x": x}
        constants: dict[float, SSAValue] = {}
        for step in self.expansion:
            if isinstance(step.rhs, float):
                if step.rhs not in constants:
                    constant = arith.ConstantOp(FloatAttr(step.rhs, f32))
                    constants[step.rhs] = builder.value(constant)
                rhs = constants[step.rhs]
            else:
                rhs = values[step.rhs]
            step_op = _BINARY_OPS[step.op](values[step.lhs], rhs)
            values[step.result] = builder.value(step_op)
        result = values[self.expansion[-1].result]
        if element_type != f32:
            result = builder.value(tv.CastOp(result, element_type))
        rewriter.replace(op, (), (result,))


def expansion_patterns() -> list[RewritePattern]:
    """One pattern per tv op whose facts have an expansion."""
    patterns: list[RewritePattern] = []
    for name, facts in op_facts.UNARY.items():
        op_type = _TV_OPS.get(f"tv.{name}")
        if facts.expansion is not None and op_type is not None:
            patterns.append(
                ExpandUnary(cast(type[tv.UnaryOp], op_type), facts.expansion)
            )
    return patterns


@dataclass(frozen=True)
class TvExpandMathPass(ModulePass):
    """Expand the tv ops the chip has no instruction for (sin, cos, erf) into
    f32 tv ops (multiplies, adds, min/max, a division)."""

    name = "tv-expand-math"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(expansion_patterns()),
            apply_recursively=False,
        ).rewrite_module(op)
