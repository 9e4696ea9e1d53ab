"""Mistakes in kernels and in calls: a KernelError at the author's file and line."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pypto_mlir as pto
from pypto_mlir.frontend.kernel import Kernel

HERE = os.path.basename(__file__)

M = pto.sym("M")
N = pto.sym("N")


def body_line(kernel: Kernel, offset: int = 1) -> int:
    """The line `offset` lines below the kernel's `def` (one decorator above it)."""
    return kernel.function.__code__.co_firstlineno + 1 + offset


def trace_error(kernel: Kernel, **sizes: int) -> pto.KernelError:
    with pytest.raises(pto.KernelError) as caught:
        kernel.mlir(**sizes)
    return caught.value


def assert_at(error: pto.KernelError, line: int, message: str) -> None:
    assert error.location is not None
    assert os.path.basename(error.location.file) == HERE
    assert error.location.line == line
    assert message in error.message
    assert str(error).startswith(f"{error.location.file}:{line}: ")


def test_kernel_error_is_a_type_and_value_error() -> None:
    assert issubclass(pto.KernelError, TypeError)
    assert issubclass(pto.KernelError, ValueError)


def test_shape_mismatch_points_at_the_kernel_line() -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4, 8), pto.f16], y: pto.Tensor[(5, 8), pto.f16]):
        return x + y

    error = trace_error(bad)
    assert_at(error, body_line(bad), "shape mismatch in '+': (4, 8) and (5, 8)")
    assert str(error) == (
        f"{error.location.file}:{body_line(bad)}: "  # pyright: ignore
        "shape mismatch in '+': (4, 8) and (5, 8)"
    )


def test_error_in_a_helper_points_at_the_helper_line() -> None:
    def helper(a: Any, b: Any) -> Any:
        return a @ b

    @pto.kernel
    def bad(x: pto.Tensor[(4, 8), pto.f32]):
        return helper(x, x)

    error = trace_error(bad)
    assert_at(error, helper.__code__.co_firstlineno + 1, "shape mismatch in '@'")
    assert "contraction dimensions differ" in error.message


KERNEL_MISTAKES: list[tuple[Callable[..., Any], str]] = [
    (lambda x, n: x + n, "dtype mismatch in '+': f16 and i32"),
    (lambda x, n: n / n, "'/' needs float operands, got i32"),
    (
        lambda x, n: pto.exp(n),
        "pto.exp expects a float tensor (f16, bf16, f32), got i32",
    ),
    (lambda x, n: pto.exp(1.0), "pto.exp expects a kernel tensor, got float"),
    (lambda x, n: x + np.ones(8), "a ndarray cannot be captured by a kernel"),
    (lambda x, n: x + "a", "unsupported operand of type str"),
    (lambda x, n: n * 0.5, "the float constant 0.5 cannot be used with an i32 tensor"),
    (lambda x, n: x * 1e6, "the constant 1000000.0 overflows f16"),
    (lambda x, n: n + 2**40, "does not fit in i32"),
    (lambda x, n: x if x else x, "a traced tensor has no truth value"),
    (lambda x, n: x < 1.0, "usable only as the condition of pto.where"),
    (lambda x, n: [r for r in x], "iterating over a tensor is not supported"),
    (lambda x, n: x[1, 2, 3], "too many indices for a (4, 8) tensor: 3"),
    (lambda x, n: x[4], "index 4 is out of range for dimension 0 of size 4"),
    (lambda x, n: x[::-1], "slice steps must be positive, got -1"),
    (lambda x, n: x[None, None, 1, 2, 3], "too many indices for a (4, 8) tensor: 3"),
    (lambda x, n: x[0].mT, "mT needs at least 2 dimensions, got a (8,) tensor"),
    (lambda x, n: x[x], "gather: the index tensor must be i32 or i16, got f16"),
    (lambda x, n: x[0.5], "unsupported index 0.5 for dimension 0"),
    (lambda x, n: x[np.array([True, False] * 2)], "a boolean index (a numpy mask)"),
    (lambda x, n: x[True], "a boolean index (a numpy mask) for dimension 0"),
    (lambda x, n: x[:, [0, 2]], "an index array for dimension 1 must be a kernel"),
    (lambda x, n: x.sum(axis=2), "sum: axis 2 is out of range for a rank-2 tensor"),
    (lambda x, n: x.sum(axis=(0, -2)), "sum: repeated axis in (0, -2)"),
    (lambda x, n: x[0:0].max(axis=0), "max over an empty dimension"),
    (lambda x, n: n.mean(), "mean of an i32 tensor: cast it to a float type first"),
    (lambda x, n: x.transpose(0, 0), "transpose: (0, 0) is not a permutation"),
    (lambda x, n: x**4, "'**' supports the constant exponents"),
    (lambda x, n: x @ n, "dtype mismatch in '@': f16 and i32"),
    (lambda x, n: n.astype(pto.i16) @ n.astype(pto.i16), "'@' supports f16, bf16"),
    (lambda x, n: x @ 2.0, "'@': unsupported operand of type float"),
    (lambda x, n: pto.softmax(n), "pto.softmax expects a float tensor, got i32"),
    (lambda x, n: pto.softmax(x, axis=3), "pto.softmax: axis 3 is out of range"),
    (lambda x, n: x.astype(np.float32), "astype: expected a pto dtype"),
    (lambda x, n: pto.full((2, -1), 0.0), "pto.full: a dimension is an integer >= 0"),
    (
        lambda x, n: pto.maximum(1.0, 2.0),
        "pto.maximum needs at least one kernel tensor",
    ),
    (lambda x, n: pto.Tensor[(4,), np.float16], "must be a pto dtype"),
    (lambda x, n: pto.sym("not a name"), "a symbolic size needs an identifier name"),
]


@pytest.mark.parametrize(("mistake", "message"), KERNEL_MISTAKES)
def test_kernel_mistakes(mistake: Callable[..., Any], message: str) -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4, 8), pto.f16], n: pto.Tensor[(4, 8), pto.i32]):
        return mistake(x, n)

    error = trace_error(bad)
    # The lambda is the innermost user code: the error is located there.
    assert_at(error, mistake.__code__.co_firstlineno, message)


def test_assignment_is_rejected() -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4, 8), pto.f16]):
        x[0] = 1.0
        return x

    assert_at(trace_error(bad), body_line(bad), "cannot be assigned to")


def test_scalar_parameters_need_a_tensor() -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4,), pto.i32], alpha: pto.f32):
        return x * alpha

    assert_at(
        trace_error(bad), body_line(bad), "a f32 scalar cannot be combined with an i32"
    )

    @pto.kernel
    def bad2(x: pto.Tensor[(4,), pto.f32], alpha: pto.f32):
        return x + alpha * 2.0

    assert_at(
        trace_error(bad2), body_line(bad2), "arithmetic on scalar parameters alone"
    )


def test_tensor_from_another_trace() -> None:
    leaked: list[Any] = []

    @pto.kernel
    def first(x: pto.Tensor[(4,), pto.f32]):
        leaked.append(x)
        return x + 1.0

    @pto.kernel
    def second(x: pto.Tensor[(4,), pto.f32]):
        return x + leaked[0]

    first.mlir()
    assert_at(trace_error(second), body_line(second), "from another kernel trace")


def test_functions_outside_a_kernel() -> None:
    with pytest.raises(pto.KernelError, match="pto.zeros|pto.full") as caught:
        pto.zeros((4,))
    assert caught.value.location is not None
    assert caught.value.location.file.endswith(HERE)


@pytest.mark.parametrize(
    ("define", "message"),
    [
        (
            lambda: pto.kernel(lambda x: x),
            "parameter 'x': annotate it with pto.Tensor[shape, dtype]",
        ),
        ("def k(x: pto.Tensor[(4,), pto.f32] = None): return x", "default values"),
        ("def k(*xs: pto.Tensor[(4,), pto.f32]): return xs[0]", "*args and **kwargs"),
        ("def k(backend: pto.Tensor[(4,), pto.f32]): return backend", "reserved"),
        ("def k(x: pto.Tensor[4, pto.f32]) -> int: return x", "annotate the result"),
        (
            "def k(x: pto.Tensor[('M',), pto.f32]) -> pto.Tensor[('N',), pto.f32]: "
            "return x",
            "the result size 'N' is not the size of any parameter",
        ),
        ("def k(x: pto.Tensor[(4, 'a b'), pto.f32]): return x", "identifier name"),
        ("def k(x: pto.Tensor[(4,)]): return x", "pto.Tensor[shape, dtype]"),
        ("def k(x: pto.Tensor[(True,), pto.f32]): return x", "a size >= 0"),
        ("def k(x: 'NoSuchName'): return x", "cannot evaluate the annotations"),
    ],
)
def test_malformed_signatures(define: object, message: str) -> None:
    with pytest.raises(pto.KernelError, match=None) as caught:
        if callable(define):
            define()
        else:
            namespace: dict[str, Any] = {"pto": pto}
            code = compile(str(define), "kernel_file.py", "exec", dont_inherit=True)
            exec(code, namespace)
            pto.kernel(namespace["k"])
    assert message in caught.value.message


def test_not_a_function() -> None:
    with pytest.raises(pto.KernelError, match="decorates a function"):
        pto.kernel(42)  # pyright: ignore


def test_result_checks() -> None:
    @pto.kernel
    def wrong_dtype(x: pto.Tensor[(4,), pto.f16]) -> pto.Tensor[(4,), pto.f32]:
        return x

    error = trace_error(wrong_dtype)
    assert error.location is not None
    assert error.location.line == wrong_dtype.function.__code__.co_firstlineno
    assert "result 0 is a (4,) f16 tensor, but the annotation declares" in str(error)

    @pto.kernel
    def wrong_count(
        x: pto.Tensor[(4,), pto.f16],
    ) -> tuple[pto.Tensor[(4,), pto.f16], pto.Tensor[(4,), pto.f16]]:
        return x

    assert "returns 1 tensors, but its annotation declares 2" in str(
        trace_error(wrong_count)
    )

    @pto.kernel
    def nothing(x: pto.Tensor[(4,), pto.f16]):
        pto.exp(x)

    assert "must return a tensor or a tuple of tensors" in str(trace_error(nothing))


def test_mlir_needs_every_size() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(M, N), pto.f32]):
        return x

    with pytest.raises(
        pto.KernelError, match=r"give M, N, e.g. k.mlir\(M=..., N=...\)"
    ):
        k.mlir()
    with pytest.raises(pto.KernelError, match="has no size named K"):
        k.mlir(M=1, N=2, K=3)
    with pytest.raises(pto.KernelError, match="size M must be an integer >= 0"):
        k.mlir(M=-1, N=2)


def call_error(kernel: Kernel, *args: Any, **kwargs: Any) -> pto.KernelError:
    with pytest.raises(pto.KernelError) as caught:
        kernel(*args, **kwargs)
    return caught.value


def test_call_arguments_are_checked() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(M, 8), pto.f16], y: pto.Tensor[(M,), pto.i8], s: pto.i8):
        return x

    x = np.zeros((4, 8), np.float16)
    y = np.zeros(4, np.int8)
    cases = [
        ((x,), {}, "k(): missing a required argument: 'y'"),
        ((x, y, 1, 2), {}, "k(): too many positional arguments"),
        ((x[0], y, 1), {}, "argument 'x': expected a rank-2 array of shape (M, 8)"),
        ((x[:, :4], y, 1), {}, "argument 'x': expected shape (M, 8), got (4, 4)"),
        (
            (x, y[:3], 1),
            {},
            "argument 'y': dimension 0 is 3, but k(): argument 'x' bound M = 4",
        ),
        ((x.astype(complex), y, 1), {}, "expected a numeric array, got dtype complex"),
        ((x, y.astype(np.float32), 1), {}, "cannot convert float32 values to i8"),
        ((x.astype(np.float32) + 7e4, y, 1), {}, "argument 'x': values overflow f16"),
        (
            (x, y.astype(np.int32) + 300, 1),
            {},
            "argument 'y': values are out of the range of i8",
        ),
        ((x, y, 1.5), {}, "argument 's': expected an integer for i8, got 1.5"),
        ((x, y, 200), {}, "argument 's': 200 is out of the range of i8"),
        ((x, y, "1"), {}, "argument 's': expected a i8 number"),
        ((np.array(["a"] * 8 * 4).reshape(4, 8), y, 1), {}, "expected a numeric array"),
        ((x, y, 1), {"backend": "nope"}, "unknown backend 'nope' (known: auto, "),
    ]
    for args, kwargs, message in cases:
        error = call_error(k, *args, **kwargs)
        assert message in error.message, (message, error.message)
        assert error.location is not None and error.location.file.endswith(HERE)


def test_index_arguments_of_other_dtypes() -> None:
    """A numpy mask as an index tensor is refused at the call (it would gather
    rows 0 and 1, not select where True); uint64 positions convert when they fit,
    floats never."""

    @pto.kernel(backend="reference")
    def g(x: pto.Tensor[(4, 2), pto.f32], idx: pto.Tensor[(4,), pto.i32]):
        return x[idx]

    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    mask = np.array([False, True, True, False])
    error = call_error(g, x, mask)
    assert "argument 'idx': a boolean array (a numpy mask) cannot be an i32" in str(
        error
    )
    assert error.location is not None and error.location.file.endswith(HERE)
    positions = np.array([3, 1, 0, 2], np.uint64)
    np.testing.assert_array_equal(g(x, positions), x[positions])
    assert (
        "values are out of the range of i32"
        in call_error(g, x, positions + 2**40).message
    )
    assert (
        "cannot convert float32 values to i32"
        in call_error(g, x, positions.astype(np.float32)).message
    )


def test_arguments_convert_when_the_values_fit() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(3,), pto.f16], n: pto.Tensor[(3,), pto.i8]):
        return x + 1.0, n + 1

    y, m = k([0.5, 1.5, -2], np.array([1, 2, 3], np.int64), backend="reference")
    assert y.dtype == np.float16 and m.dtype == np.int8
    np.testing.assert_array_equal(y, np.array([1.5, 2.5, -1], np.float16))
    np.testing.assert_array_equal(m, np.array([2, 3, 4], np.int8))
    x = k.run(np.zeros(3, np.float64), np.zeros(3, np.int8), backend="reference")
    assert x.report.inputs == ("x f16[3]", "n i8[3]")


def test_keyword_arguments_bind_by_name() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(2,), pto.f32], y: pto.Tensor[(2,), pto.f32]):
        return x - y

    np.testing.assert_array_equal(k(y=np.ones(2), x=np.zeros(2)), [-1.0, -1.0])


def test_future_annotations_hint() -> None:
    source = (
        "from __future__ import annotations\n"
        "def make():\n"
        "    n = 4\n"
        "    def k(x: pto.Tensor[(n,), pto.f32]):\n"
        "        return x\n"
        "    return k\n"
    )
    namespace: dict[str, Any] = {"pto": pto}
    exec(compile(source, "kernel_file.py", "exec", dont_inherit=True), namespace)
    with pytest.raises(pto.KernelError) as caught:
        pto.kernel(namespace["make"]())
    assert str(caught.value) == (
        "kernel_file.py:4: cannot evaluate the annotations of kernel 'k': name 'n' "
        "is not defined (under 'from __future__ import annotations' they can only "
        "use module-level names)"
    )
