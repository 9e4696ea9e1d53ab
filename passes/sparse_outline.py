"""Dense ops of a sparse function: outlined by `tv-sparse-to-tile`, tiled by
`tv-to-tile`, inlined back (docs/sparse.md, *Dense ops beside sparse ones*).

MLIR's sparse lowering rewrites the sparse ops and leaves the dense ones to the
dense pipeline. Here `tv-sparse-to-tile` moves each run of consecutive dense
ops into a dense `tv` function of its own (`pypto.outlined`) and calls it at
the run's place, bridging GM buffers and tensors as MLIR's partial
conversions do:

    %t = builtin.unrealized_conversion_cast %buffer : memref<...> to !tv.tensor<...>
    %r = func.call @f__dense0(%t, %scale) {pypto.outlined} : (...) -> !tv.tensor<...>
    %m = builtin.unrealized_conversion_cast %r : !tv.tensor<...> to memref<...>
    memref.copy %m, %destination : memref<...> to memref<...>

`tv-to-tile` tiles the outlined function as any dense one (fusion, epilogues,
its own remarks), then `inline_outlined` puts its body at the call with the
cast buffers as its arguments and the copies' destinations as its outputs (so
nothing is copied), and erases the function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    FunctionType,
    IntegerAttr,
    ModuleOp,
    UnitAttr,
    UnrealizedConversionCastOp,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from pypto_mlir.diagnostics import op_error
from pypto_mlir.dialects import tensor_view as tv

from .located_builder import LocatedBuilder
from .multicore_split import INTERLEAVE_ATTR

OUTLINED_ATTR = "pypto.outlined"
"""On an outlined dense function and on the calls of it."""

DISTRIBUTE_ATTR = "pypto.distribute"
"""On a top-level `scf.if` between whole nests (the dense fallback's run-time
choice): after inlining, its condition moves into each nest's loop body."""

_UNGUARDED = (memref.DeallocOp,)
"""Ops without results a distributed branch runs whatever the condition (the
GM temporary's release)."""


def _is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, tv.TensorViewType)


def outline(
    ops: Sequence[Operation],
    buffer_of: Callable[[Operation, SSAValue], SSAValue],
    destinations: Mapping[SSAValue, SSAValue],
    parent: func.FuncOp,
    builder: LocatedBuilder,
    retype: Callable[[tv.TensorViewType], tv.TensorViewType] | None = None,
) -> func.FuncOp:
    """Move the dense tv `ops` (program order) into a new function called at
    `builder`: a tensor they read from outside comes from `buffer_of(op, value)`
    (a GM memref), a constant is copied in, another scalar is an argument; each
    value of `destinations` is copied to its memref. `retype` gives the
    function's tensors other types (one stored entry of a values tensor)."""
    moved = set(ops)
    inputs: list[SSAValue] = []
    constants: list[Operation] = []
    for op in ops:
        for value in op.operands:
            owner = value.owner
            if owner in moved or value in inputs:
                continue
            if isinstance(owner, arith.ConstantOp):
                if owner not in constants:
                    constants.append(owner)
                continue
            inputs.append(value)
    first_reader = {v: next(o for o in ops if v in o.operands) for v in inputs}

    def new_type(value: SSAValue) -> Attribute:
        if retype is None or not isinstance(value.type, tv.TensorViewType):
            return value.type
        return retype(value.type)

    block = Block(arg_types=[new_type(v) for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args, strict=True))
    for value, arg in mapping.items():
        arg.name_hint = value.name_hint
    for constant in constants:
        copy = constant.clone()
        block.add_op(copy)
        mapping[constant.results[0]] = copy.results[0]
    for op in ops:
        if op.parent is not None:  # else a copy, not inserted anywhere
            op.detach()
        block.add_op(op)
        for index, value in enumerate(op.operands):
            if value in mapping:
                op.operands[index] = mapping[value]
    results = list(destinations)
    if retype is not None:
        renamed: dict[SSAValue, SSAValue] = {}
        for op in ops:
            for result in op.results:
                outside = [(u.operation, u.index) for u in result.uses]
                outside = [(o, i) for o, i in outside if o not in moved]
                renamed[result] = Rewriter.replace_value_with_new_type(
                    result, new_type(result)
                )
                for user, index in outside:  # erased with the sparse function's ops
                    user.operands[index] = result
        results = [renamed[r] for r in results]
        destinations = {renamed[r]: d for r, d in destinations.items()}
    block.add_op(func.ReturnOp(*results))
    callee = func.FuncOp(
        _fresh_name(parent),
        FunctionType.from_lists(
            [new_type(v) for v in inputs], [r.type for r in results]
        ),
        Region(block),
    )
    callee.attributes[OUTLINED_ATTR] = UnitAttr()
    callee.location = ops[0].location
    after: Operation = parent  # after the parent's earlier outlined functions
    while isinstance(
        after.next_op, func.FuncOp
    ) and after.next_op.sym_name.data.startswith(f"{parent.sym_name.data}__dense"):
        after = after.next_op
    module = parent.parent_op()
    assert module is not None
    module.regions[0].block.insert_op_after(callee, after)

    arguments: list[SSAValue] = []
    for value in inputs:
        if not _is_tensor(value):
            arguments.append(value)
            continue
        buffer = buffer_of(first_reader[value], value)
        cast = UnrealizedConversionCastOp.get([buffer], [new_type(value)])
        arguments.append(builder.value(cast))
    call = builder.insert(
        func.CallOp(callee.sym_name.data, arguments, [r.type for r in results])
    )
    call.attributes[OUTLINED_ATTR] = UnitAttr()
    for result, value in zip(call.results, results, strict=True):
        destination = destinations[value]
        cast = UnrealizedConversionCastOp.get([result], [destination.type])
        builder.insert(memref.CopyOp(builder.value(cast), destination))
    return callee


def _fresh_name(parent: func.FuncOp) -> str:
    module = parent.parent_op()
    assert isinstance(module, ModuleOp)
    base = parent.sym_name.data
    index = 0
    while SymbolTable.lookup_symbol(module, f"{base}__dense{index}") is not None:
        index += 1
    return f"{base}__dense{index}"


def calls_outlined(function: func.FuncOp) -> bool:
    """The function calls an outlined dense function (tv-to-tile tiles the
    callee, then inlines it here)."""
    return any(
        isinstance(o, func.CallOp) and OUTLINED_ATTR in o.attributes
        for o in function.walk()
    )


def inline_outlined(module: ModuleOp) -> None:
    """Replace each call of a tiled outlined function by its body: the call's
    cast buffers are its arguments, the destinations its results are copied to
    its output memrefs; then erase the functions."""
    callees = {
        f.sym_name.data: f
        for f in module.ops
        if isinstance(f, func.FuncOp) and OUTLINED_ATTR in f.attributes
    }
    calls = [
        o
        for o in module.walk()
        if isinstance(o, func.CallOp) and o.callee.string_value() in callees
    ]
    for call in calls:
        callee = callees[call.callee.string_value()]
        body = callee.body.block
        arguments = [_cast_source(v) for v in call.arguments]
        copies = [_copy_of(call, r) for r in call.results]
        if len(body.args) != len(arguments) + len(copies) or any(
            isinstance(a.type, tv.TensorViewType) for a in body.args
        ):
            raise op_error(call, f"{call.callee} was not tiled by tv-to-tile")
        mapping: dict[SSAValue, SSAValue] = dict(
            zip(
                body.args,
                [*arguments, *(c.destination for c in copies)],
                strict=True,
            )
        )
        where = InsertPoint.before(call)
        for op in body.ops:
            if isinstance(op, func.ReturnOp):
                continue
            LocatedBuilder(where).insert(op.clone(value_mapper=mapping))
        for copy in copies:
            cast = copy.source.owner
            copy.detach()
            copy.erase()
            assert isinstance(cast, Operation)
            cast.detach()
            cast.erase()
        casts = [v.owner for v in call.arguments if _is_tensor(v)]
        call.detach()
        call.erase()
        for cast in casts:
            assert isinstance(cast, Operation)
            if not cast.results[0].uses:
                cast.detach()
                cast.erase()
    for callee in callees.values():
        callee.detach()
        callee.erase()
    for branch in [
        o
        for o in module.walk()
        if isinstance(o, scf.IfOp) and DISTRIBUTE_ATTR in o.attributes
    ]:
        distribute(branch)


def distribute(branch: scf.IfOp) -> None:
    """`if c {A} else {B}` between nests becomes A and B one after the other,
    each top-level loop's body guarded by `c` (B's by `not c`), so that the
    loops stay at the top of the function, where tile-to-hw splits them over
    the cores (passes/multicore_split.py). Other ops without results (stores)
    are guarded one by one; ops with results (constants, index arithmetic,
    GM buffers and views, a tile a loop starts from) run either way: they
    write no GM."""
    before = LocatedBuilder(InsertPoint.before(branch), location=branch.location)
    true = before.value(arith.ConstantOp(IntegerAttr(1, i1)))
    negated = before.value(arith.XOrIOp(branch.cond, true))
    # B's loops share a sync_all phase with A's first ones (independent GM):
    # each is split over all the cores, one after the other, as tv-schedule's
    # interleaving asks, not the later ones left to the last core.
    function = branch.parent_op()
    while function is not None and not isinstance(function, func.FuncOp):
        function = function.parent_op()
    assert function is not None
    function.attributes[INTERLEAVE_ATTR] = UnitAttr()
    for region, condition in (
        (branch.false_region, negated),
        (branch.true_region, branch.cond),
    ):
        for op in list(region.block.ops):
            if isinstance(op, scf.YieldOp):
                continue
            op.detach()
            before.insert(op)
            if isinstance(op, scf.ForOp):
                _guard_body(op, condition)
            elif not isinstance(op, _UNGUARDED) and not op.results:
                guard = scf.IfOp(condition, [], Region(Block()))
                before.insert(guard)
                op.detach()
                guard.true_region.block.add_op(op)
                guard.true_region.block.add_op(scf.YieldOp())
    branch.detach()
    branch.erase()


def _guard_body(loop: scf.ForOp, condition: SSAValue) -> None:
    """The loop's body runs under `condition`; otherwise it carries its
    values unchanged."""
    body = loop.body.block
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    carried = list(body.args[1:])
    then_block, else_block = Block(), Block()
    for op in list(body.ops):
        op.detach()
        then_block.add_op(op)
    else_block.add_op(scf.YieldOp(*carried))
    guard = scf.IfOp(
        condition,
        [v.type for v in carried],
        Region(then_block),
        Region(else_block),
    )
    body.add_op(guard)
    body.add_op(scf.YieldOp(*guard.results))


def _cast_source(value: SSAValue) -> SSAValue:
    if not _is_tensor(value):
        return value
    cast = value.owner
    assert isinstance(cast, UnrealizedConversionCastOp)
    return cast.operands[0]


def _copy_of(call: func.CallOp, result: SSAValue) -> memref.CopyOp:
    (use,) = result.uses
    cast = use.operation
    assert isinstance(cast, UnrealizedConversionCastOp)
    (copy_use,) = cast.results[0].uses
    copy = copy_use.operation
    assert isinstance(copy, memref.CopyOp), call
    return copy
