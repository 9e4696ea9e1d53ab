"""Every op of every dialect against the layers that must know it.

The elementwise and reduction ops' facts live in `pypto_mlir.op_facts`; the
interpreters' kernel tables, the error bounds, the roofline's steps and the
frontend's `pto.*` functions are derived from them. What cannot be derived (the
IRDL classes in dialects/, the interpreters of the other ops) is checked here:
each failure names the op and the layer that lacks it. (The targets' cost keys
for the facts' vector steps are checked by test_targets.py.)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pytest
from xdsl.interpreter import InterpreterFunctions
from xdsl.ir import Operation

import pypto_mlir as pto
import pypto_mlir.op_facts as op_facts
from pypto_mlir import error_bound, roofline
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.interp.ascend_hw import AscendHwFunctions
from pypto_mlir.interp.ascend_hw.gm_memref import HwGmMemRefFunctions
from pypto_mlir.interp.tensor_view import TensorViewFunctions, op_suffix
from pypto_mlir.interp.tile import TileFunctions

TV_OPS = list(tv.TensorView.operations)
TILE_OPS = list(tile.Tile.operations)
HW_OPS = list(hw.AscendHW.operations)

FAMILIES: tuple[tuple[type[Operation], type[Operation], dict[str, object]], ...] = (
    (tv.UnaryOp, tile.TileUnaryOp, op_facts.UNARY),
    (tv.BinaryOp, tile.TileBinaryOp, op_facts.BINARY),
    (tv.ReduceOp, tile.TileReduceOp, op_facts.REDUCE),
)

TV_FRONTEND = {
    "tv.view": "x[...]",
    "tv.dim": None,  # shapes are static while a kernel is traced
    "tv.fill": "full",
    "tv.cast": "cast",
    "tv.matmul": "matmul",
    "tv.softmax": "softmax",
    "tv.transpose": "Tensor.transpose",
    "tv.reshape": "Tensor.reshape",
    "tv.assemble": "SparseTensor.__mul__",  # sparse * scalar: disassemble, assemble
    "tv.disassemble": "SparseTensor.__mul__",
    "tv.spmm": "SparseTensor.__matmul__",
    "tv.spmv": "SparseTensor.__matmul__",
    "tv.sddmm": "sddmm",
    "tv.sparse_softmax": "softmax",
    "tv.to_dense": "SparseTensor.to_dense",
    "tv.gather": "gather",
    "tv.select": "where",
}
"""The frontend's spelling of the tv ops outside the op-facts families."""


def _ids(ops: Iterable[type[Operation]]) -> list[str]:
    return [op.name for op in ops]


def _family_facts(op: type[Operation]) -> object | None:
    """The op-facts entry of a family op; None for ops of no family."""
    for tv_family, tile_family, table in FAMILIES:
        if issubclass(op, tv_family | tile_family):
            assert op_suffix(op) in table, (
                f"{op.name}: no entry in pypto_mlir.op_facts (the {tv_family.__name__}"
                " family's facts)"
            )
            return table[op_suffix(op)]
    return None


def _impls(functions: Iterable[type[InterpreterFunctions]]) -> set[type[Operation]]:
    ops: set[type[Operation]] = set()
    for cls in functions:
        ops.update(op for op, _ in cls._impls())
    return ops


@pytest.mark.parametrize("op", TV_OPS, ids=_ids(TV_OPS))
def test_tv_op_has_every_layer(op: type[Operation]) -> None:
    facts = _family_facts(op)
    assert op in _impls([TensorViewFunctions]), (
        f"{op.name}: no tv interpreter impl (pypto_mlir/interp/tensor_view.py)"
    )
    if facts is None:
        assert issubclass(op, error_bound.OTHER_OPS) or op is tv.DimOp, (
            f"{op.name}: no error-bound rule (pypto_mlir/error_bound.py)"
        )
        assert (
            op_suffix(op) in roofline.OTHER_STEPS
            or op in roofline.NOT_VECTOR_OPS
            or op in roofline.UNMODELLED_OPS
        ), f"{op.name}: no roofline steps (pypto_mlir/roofline.py)"
        assert op.name in TV_FRONTEND, f"{op.name}: no frontend spelling"
        spelling = TV_FRONTEND[op.name]
        if spelling is not None and spelling.isidentifier():
            assert spelling in pto.__all__, f"{op.name}: no pto.{spelling}"
        if spelling is not None and spelling.startswith("Tensor."):
            method = spelling.removeprefix("Tensor.")
            assert hasattr(pto.Tensor, method), f"{op.name}: no {spelling}"
        if spelling is not None and spelling.startswith("SparseTensor."):
            method = spelling.removeprefix("SparseTensor.")
            assert hasattr(pto.SparseTensor, method), f"{op.name}: no {spelling}"
        return
    assert isinstance(
        facts, op_facts.UnaryFacts | op_facts.BinaryFacts | op_facts.ReduceFacts
    )
    assert facts.vector_steps, f"{op.name}: no roofline steps in its facts"
    frontend = getattr(facts, "frontend", None)
    if frontend is not None:
        assert frontend in pto.__all__, f"{op.name}: pto.{frontend} is not defined"
        assert getattr(pto, frontend).__doc__, f"{op.name}: pto.{frontend} has no doc"


@pytest.mark.parametrize("op", TILE_OPS, ids=_ids(TILE_OPS))
def test_tile_op_has_every_layer(op: type[Operation]) -> None:
    _family_facts(op)
    assert op in _impls([TileFunctions]), (
        f"{op.name}: no tile interpreter impl (pypto_mlir/interp/tile.py)"
    )


def _hw_functions() -> list[type[InterpreterFunctions]]:
    """The InterpreterFunctions classes of the ascend_hw interpreter package."""
    return [AscendHwFunctions, HwGmMemRefFunctions]


@pytest.mark.parametrize("op", HW_OPS, ids=_ids(HW_OPS))
def test_ascend_hw_op_has_an_interpreter(op: type[Operation]) -> None:
    assert op in _impls(_hw_functions()), (
        f"{op.name}: no ascend_hw interpreter impl (pypto_mlir/interp/ascend_hw)"
    )


@pytest.mark.parametrize(
    ("name", "table"),
    [(name, table) for _, _, table in FAMILIES for name in table],
)
def test_every_fact_has_its_op_classes(name: str, table: dict[str, object]) -> None:
    """The IRDL classes are not derived from the facts: each entry needs its tv
    and tile op (registered in the dialect)."""
    assert f"tv.{name}" in _ids(TV_OPS), f"{name}: no tv.{name} op in tv's dialect"
    assert f"tile.{name}" in _ids(TILE_OPS), (
        f"{name}: no tile.{name} op in tile's dialect"
    )


@pytest.mark.parametrize("name", list(op_facts.UNARY))
def test_unary_fact_is_consistent(name: str) -> None:
    facts = op_facts.UNARY[name]
    x = np.linspace(0.25, 2.0, 8, dtype=np.float32)
    with np.errstate(all="ignore"):
        v = np.asarray(facts.kernel(x))
        derivative = np.asarray(facts.derivative(x.astype(np.float64), v))
    assert v.dtype == np.float32, f"{name}: the kernel does not compute in f32"
    assert np.all(np.isfinite(derivative)), f"{name}: derivative not finite"
    if facts.frontend is not None:
        assert f"pto.{facts.frontend}(" in facts.spelling


def test_numpy_spellings_name_pto_functions() -> None:
    spellings = op_facts.numpy_spellings()
    assert spellings["exp"] == "pto.exp(x)"
    assert spellings["maximum"] == "pto.maximum(x, y)"
    assert spellings["sum"] == "x.sum(axis)"
