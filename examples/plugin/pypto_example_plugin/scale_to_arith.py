"""`scale-to-arith`: lower `scale.by` to `arith.constant` + `arith.muli`."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from pypto_example_plugin.dialect import ScaleByOp


@dataclass
class LowerScaleBy(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScaleByOp, rewriter: PatternRewriter) -> None:
        value_type = op.input.type
        assert isinstance(value_type, IntegerType)
        factor = arith.ConstantOp(IntegerAttr(op.factor.value.data, value_type))
        product = arith.MuliOp(op.input, factor.result)
        rewriter.replace(op, [factor, product])


@dataclass(frozen=True)
class ScaleToArithPass(ModulePass):
    """Lower scale.by to arith.constant and arith.muli."""

    name = "scale-to-arith"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(LowerScaleBy()).rewrite_module(op)
