"""Checks that run before the verifiers of the xDSL 0.75 ops that raise a bare
`Exception`, `ValueError` or `IndexError` where MLIR reports a verify error.

Each check returns MLIR's message for the op (without the `'dialect.op' op`
prefix, which `pypto_mlir.diagnostics` adds) or None when the op is fine, so the
xDSL verifier then runs on an op it can check. The ops were found by reading
every `verify_` in xDSL's dialects for such raises, and by the fuzzer
(docs/cli.md, *Fuzzing*).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import memref, scf
from xdsl.ir import Attribute, Operation, SSAValue

if TYPE_CHECKING:  # imported by name below: two dialects pypto-opt rarely loads
    from xdsl.dialects import accfg, csl_wrapper


def _while_edges(op: scf.WhileOp) -> str | None:
    """MLIR's check of the control-flow edges into an `scf.while`'s regions
    (xDSL raises `Exception` for a type mismatch, `IndexError` for too few
    arguments)."""
    edges = (
        ("parent operands", 0, op.arguments, op.before_region),
        ("parent results", 1, op.res, op.after_region),
    )
    for source, index, values, region in edges:
        if not region.blocks:
            continue
        args = region.blocks[0].args
        where = f"along control flow edge from {source} to Region #{index}"
        if len(values) != len(args):
            return (
                f" {where}: source has {len(values)} operands, but target "
                f"successor needs {len(args)}"
            )
        for position, (value, arg) in enumerate(zip(values, args, strict=True)):
            if value.type != arg.type:
                return (
                    f" {where}: source type #{position} {value.type} should match "
                    f"input type #{position} {arg.type}"
                )
    return None


def _rank(value: SSAValue) -> int | None:
    return (
        value.type.get_num_dims() if isinstance(value.type, memref.MemRefType) else None
    )


def _load_indices(op: memref.LoadOp) -> str | None:
    rank = _rank(op.memref)
    if rank is not None and rank != len(op.indices):
        return (
            f"incorrect number of indices for load, expected {rank} but got "
            f"{len(op.indices)}"
        )
    return None


def _store_indices(op: memref.StoreOp) -> str | None:
    rank = _rank(op.memref)
    if rank is not None and rank != len(op.indices):
        return "store index operand count not equal to memref rank"
    return None


def _parameter_count(op: accfg.SetupOp | accfg.LaunchOp) -> str | None:
    if len(op.values) != len(op.param_names):
        return f"has {len(op.values)} values for {len(op.param_names)} parameter names"
    return None


def _layout_arguments(op: csl_wrapper.ModuleOp) -> str | None:
    """csl_wrapper.module's layout block takes x, y, width, height and then one
    argument per parameter (xDSL zips them strictly: ValueError)."""
    if not op.layout_module.blocks:
        return None
    types: Sequence[Attribute] = op.layout_module.block.arg_types[4:]
    params = op.params.data
    if len(types) != len(params):
        return (
            f"layout block has {len(types)} arguments after x, y, width, height "
            f"for {len(params)} parameters"
        )
    for arg, param in zip(types, params, strict=True):
        if arg != param.type:
            return (
                f"layout block argument for parameter {param.key.data} has type "
                f"{arg}, expected {param.type}"
            )
    return None


PRECHECKS: dict[str, Callable[[Operation], str | None]] = {
    scf.WhileOp.name: _while_edges,  # pyright: ignore[reportAssignmentType]
    memref.LoadOp.name: _load_indices,  # pyright: ignore[reportAssignmentType]
    memref.StoreOp.name: _store_indices,  # pyright: ignore[reportAssignmentType]
    "accfg.setup": _parameter_count,  # pyright: ignore[reportAssignmentType]
    "accfg.launch": _parameter_count,  # pyright: ignore[reportAssignmentType]
    "csl_wrapper.module": _layout_arguments,  # pyright: ignore[reportAssignmentType]
}
"""Per op name, the check that runs before its xDSL verifier. By name, so that
the accfg and csl_wrapper dialects are imported only by a run that uses them
(their modules take a tenth of a second of each pypto-opt start-up)."""


def precheck(op: Operation) -> str | None:
    """MLIR's verify message for `op` where its xDSL verifier would raise
    something other than a verify error, else None."""
    check = PRECHECKS.get(op.name)
    return None if check is None else check(op)
