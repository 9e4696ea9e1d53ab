"""What the frontend records: the tv IR of traced kernels."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FileLineColLoc, FloatAttr, IntegerAttr, f16, f32, i8

import pypto_mlir as pto
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.frontend.kernel import Kernel

M = pto.sym("M")
N = pto.sym("N")


def body_ops(kernel: Kernel, **sizes: int) -> list[object]:
    """The ops of the kernel's function, without the terminator."""
    func_op = kernel.specialize(**sizes).module.ops.first
    assert isinstance(func_op, func.FuncOp)
    return list(func_op.body.block.ops)[:-1]


def op_names(kernel: Kernel, **sizes: int) -> list[str]:
    return [op.name for op in body_ops(kernel, **sizes)]  # pyright: ignore


def test_swish_ir_text() -> None:
    @pto.kernel
    def swish(
        x: pto.Tensor[(4096, 1024), pto.f16],
    ) -> pto.Tensor[(4096, 1024), pto.f16]:
        return x * pto.sigmoid(x)

    assert swish.mlir() == (
        "builtin.module {\n"
        "  func.func @swish(%x: !tv.tensor<4096x1024xf16>) -> "
        "!tv.tensor<4096x1024xf16> {\n"
        "    %0 = tv.sigmoid %x : !tv.tensor<4096x1024xf16>\n"
        "    %1 = tv.mul %x, %0 : !tv.tensor<4096x1024xf16>\n"
        "    func.return %1 : !tv.tensor<4096x1024xf16>\n"
        "  }\n"
        "}\n"
    )


@pytest.mark.parametrize(
    ("expression", "op_type"),
    [
        (lambda a, b: a + b, tv.AddOp),
        (lambda a, b: a - b, tv.SubOp),
        (lambda a, b: a * b, tv.MulOp),
        (lambda a, b: a / b, tv.DivOp),
        (lambda a, b: pto.maximum(a, b), tv.MaxOp),
        (lambda a, b: pto.minimum(a, b), tv.MinOp),
    ],
)
def test_binary_operators(expression: object, op_type: type[tv.BinaryOp]) -> None:
    @pto.kernel
    def k(a: pto.Tensor[(4, 8), pto.f32], b: pto.Tensor[(8,), pto.f32]):
        return expression(a, b)  # pyright: ignore

    (op,) = body_ops(k)
    assert isinstance(op, op_type)
    assert op.result.type == tv.TensorViewType(f32, [4, 8])


@pytest.mark.parametrize(
    ("function", "op_type"),
    [
        (pto.exp, tv.ExpOp),
        (pto.log, tv.LogOp),
        (pto.sqrt, tv.SqrtOp),
        (pto.rsqrt, tv.RsqrtOp),
        (pto.reciprocal, tv.ReciprocalOp),
        (pto.relu, tv.ReluOp),
        (pto.sigmoid, tv.SigmoidOp),
        (pto.tanh, tv.TanhOp),
        (pto.gelu, tv.GeluOp),
        (pto.silu, tv.SiluOp),
        (pto.abs, tv.AbsOp),
        (pto.neg, tv.NegOp),
        (abs, tv.AbsOp),
        (lambda x: -x, tv.NegOp),
    ],
)
def test_unary_functions(function: object, op_type: type[tv.UnaryOp]) -> None:
    @pto.kernel
    def k(x: pto.Tensor[(4, 8), pto.f16]):
        return function(x)  # pyright: ignore

    (op,) = body_ops(k)
    assert isinstance(op, op_type)


def test_python_scalars_become_constants_of_the_tensor_dtype() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(4,), pto.f16], n: pto.Tensor[(4,), pto.i8]):
        return 2.0 - x * 0.1, 3 + n

    ops = body_ops(k)
    constants = [op for op in ops if isinstance(op, arith.ConstantOp)]
    assert [c.value.type for c in constants] == [f16, f16, i8]
    assert isinstance(constants[0].value, FloatAttr)
    # 0.1 rounded to f16, as numpy's weak scalars would be.
    assert constants[0].value.value.data == float(np.float16(0.1))
    sub = next(op for op in ops if isinstance(op, tv.SubOp))
    assert sub.lhs.owner is constants[1]  # reflected: 2.0 - (...)
    add = next(op for op in ops if isinstance(op, tv.AddOp))
    assert isinstance(constants[2].value, IntegerAttr)
    assert add.lhs.owner is constants[2]  # reflected: 3 + n


def test_equal_constants_are_shared() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(4,), pto.f32]):
        return (x + 1.0) * 1.0 + -0.0

    constants = [op for op in body_ops(k) if isinstance(op, arith.ConstantOp)]
    assert len(constants) == 2  # 1.0 once; -0.0 is not +0.0


def test_slicing_records_views() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(8, 16), pto.f32]):
        return x[2:6, ::4], x[-1], x[..., 3:], x[:, :]

    views = body_ops(k)
    assert len(views) == 3  # x[:, :] is x itself
    strided, row, tail = views
    assert isinstance(strided, tv.ViewOp)
    assert strided.static_offsets.get_values() == (2, 0)
    assert strided.static_sizes.get_values() == (4, 4)
    assert strided.static_strides.get_values() == (1, 4)
    assert isinstance(row, tv.ViewOp)
    assert row.static_offsets.get_values() == (7, 0)
    assert row.result.type == tv.TensorViewType(f32, [16])
    assert isinstance(tail, tv.ViewOp)
    assert tail.result.type == tv.TensorViewType(f32, [8, 13])


def test_transposes_casts_and_reductions() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(2, 3, 4), pto.f16]):
        t = x.T.transpose(0, 2, 1).transpose((1, 0, 2))
        s = x.astype(pto.f32).sum(axis=(0, -1), keepdims=True)
        return t, s, x.max(axis=1), x.min(), x.astype(pto.f16), pto.cast(x, pto.f32)

    ops = body_ops(k)
    assert [op.name for op in ops] == [  # pyright: ignore
        "tv.transpose",
        "tv.transpose",
        "tv.transpose",
        "tv.cast",
        "tv.reduce_sum",
        "tv.reduce_max",
        "tv.reduce_min",
        "tv.cast",
    ]
    reduce_sum = ops[4]
    assert isinstance(reduce_sum, tv.ReduceSumOp)
    assert reduce_sum.axes.get_values() == (0, 2)
    assert reduce_sum.result.type == tv.TensorViewType(f32, [1, 3, 1])
    reduce_min = ops[6]
    assert isinstance(reduce_min, tv.ReduceMinOp)
    assert reduce_min.result.type == tv.TensorViewType(f16, [])


def test_mean_is_sum_times_reciprocal() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(4, 768), pto.f16]):
        return x.mean(axis=-1, keepdims=True)

    reduce_sum, factor, product = body_ops(k)
    assert isinstance(reduce_sum, tv.ReduceSumOp)
    assert isinstance(factor, arith.ConstantOp)
    assert factor.value == FloatAttr(1 / 768, f32)
    assert isinstance(product, tv.MulOp)
    assert product.result.type == tv.TensorViewType(f16, [4, 1])


def test_matmul_and_powers() -> None:
    @pto.kernel
    def k(a: pto.Tensor[(4, 8), pto.f16], b: pto.Tensor[(16, 8), pto.f16]):
        c = pto.matmul(a, b, transpose_b=True, out_dtype=pto.f32)
        return a @ b.T, c**2, c**0.5, c**-0.5, c**-1, c**1

    ops = body_ops(k)
    names = [op.name for op in ops]  # pyright: ignore
    assert names == [
        "tv.matmul",
        "tv.transpose",
        "tv.matmul",
        "tv.mul",
        "tv.sqrt",
        "tv.rsqrt",
        "tv.reciprocal",
    ]
    explicit = ops[0]
    assert isinstance(explicit, tv.MatmulOp)
    assert explicit.transpose_b is not None
    assert explicit.result.type == tv.TensorViewType(f32, [4, 16])


def test_full_and_zeros() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(4, 8), pto.f16]):
        return x + pto.zeros((8,), pto.f16), pto.full((2, 2), 3.5), pto.ones(3, pto.i8)

    fills = [op for op in body_ops(k) if isinstance(op, tv.FillOp)]
    assert [f.result.type for f in fills] == [
        tv.TensorViewType(f16, [8]),
        tv.TensorViewType(f32, [2, 2]),
        tv.TensorViewType(i8, [3]),
    ]


def test_scalar_parameters_are_operands() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(4,), pto.f16], alpha: pto.f32):
        return alpha * x

    assert "func.func @k(%x: !tv.tensor<4xf16>, %alpha: f32)" in k.mlir()
    (mul,) = body_ops(k)
    assert isinstance(mul, tv.MulOp)
    assert mul.lhs.type == f32


def test_ops_carry_the_kernel_line_as_location() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(4,), pto.f32]):
        y = pto.exp(x)
        return y + 1.0

    first_line = k.function.__code__.co_firstlineno
    locations = [op.location for op in body_ops(k)]  # pyright: ignore
    assert all(isinstance(loc, FileLineColLoc) for loc in locations)
    lines = [loc.line.data for loc in locations]  # pyright: ignore
    assert lines == [first_line + 2, first_line + 3, first_line + 3]
    assert locations[0].filename.data.endswith("test_frontend_tracing.py")  # pyright: ignore


def test_kernels_called_inside_kernels_are_inlined() -> None:
    @pto.kernel
    def swish(x: pto.Tensor[(N,), pto.f32]) -> pto.Tensor[(N,), pto.f32]:
        return x * pto.sigmoid(x)

    @pto.kernel
    def twice(x: pto.Tensor[(8,), pto.f32]):
        return swish(swish(x))

    assert op_names(twice) == ["tv.sigmoid", "tv.mul", "tv.sigmoid", "tv.mul"]


# A symbol may also be written as a string, outside annotations (linters read
# strings in annotations as forward references).
COLUMN = pto.Tensor[("M", 1), pto.f32]


def test_symbolic_sizes_specialize_the_ir() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(M, 8), pto.f32], y: COLUMN):
        return x + y

    assert k.symbols == ("M",)
    assert "!tv.tensor<3x8xf32>" in k.mlir(M=3)
    assert "!tv.tensor<5x1xf32>" in k.mlir(M=5)
    assert k.cache_info() == pto.CacheInfo(hits=0, misses=2, size=2)
    k.mlir(M=3)
    assert k.cache_info().hits == 1


def test_module_returns_a_copy() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(4,), pto.f32]):
        return pto.exp(x)

    module = k.module()
    module.ops.first.detach()  # pyright: ignore
    assert "tv.exp" in k.mlir()
