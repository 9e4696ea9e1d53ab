"""The compiled `scf.for` fast path of the `ascend_hw` interpreter.

A kernel spends its time in loop bodies of a few ops run thousands of times;
xDSL's generic `scf.for` pays a scope per iteration, environment lookups through
the scope chain and result checks per op. `HwScfFunctions` runs each body as a
`_CompiledBlock` instead: values in a list indexed by slot, and the ascend_hw and
integer arith ops called through their undecorated functions
(`interp.direct_calls`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from operator import itemgetter
from typing import Any

from xdsl.dialects import scf
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Block, Operation, SSAValue

from pypto_mlir.interp.ascend_hw.errors import _execution_error
from pypto_mlir.interp.ascend_hw.runtime import HwRuntime
from pypto_mlir.interp.direct_calls import DirectCall
from pypto_mlir.interp.index_arith import int_attr
from pypto_mlir.sim import SimError


def _getter(slots: Sequence[int]) -> Callable[[list[Any]], tuple]:
    """A function reading the values in `slots` of an environment, as a tuple."""
    if not slots:
        return lambda env: ()
    if len(slots) == 1:
        (slot,) = slots
        return lambda env: (env[slot],)
    return itemgetter(*slots)


class _CompiledBlock:
    """An `scf.for` body prepared for running many times without xDSL's per-op
    dispatch (a scope per iteration, environment lookups through the scope chain,
    result checks): ascend_hw ops and the integer arith ops call their interpreter
    functions directly, the other ops go through `Interpreter.run_op`, in a scope
    holding the body's values when they have regions.

    Values live in a list (an environment) indexed by slot: the values from
    outside the body first, then the block arguments, then each op's results. It
    is kept across iterations (each iteration redefines every value the body
    defines before using it)."""

    def __init__(
        self,
        block: Block,
        calls: dict[type[Operation], DirectCall],
        interpreter: Interpreter,
    ):
        self.interpreter = interpreter
        self.args = tuple(block.args)
        ops = list(block.ops)
        terminator = ops.pop()
        defined: set[SSAValue] = set(block.args)
        outer: dict[SSAValue, None] = {}
        for op in [*ops, terminator]:
            for value in op.operands:
                if value not in defined:
                    outer[value] = None
            defined.update(op.results)
        self.outer = tuple(outer)
        values = [*self.outer, *self.args]
        for op in ops:
            values.extend(op.results)
        self.values = tuple(values)
        """The SSA value of each slot."""
        slot = {value: i for i, value in enumerate(values)}
        self.first_arg = len(self.outer)
        steps = []
        defined_slots = len(self.outer) + len(self.args)
        for op in ops:
            function = calls.get(type(op))
            steps.append(
                (
                    op,
                    None if function is None else partial(function, interpreter, op),
                    _getter([slot[v] for v in op.operands]),
                    tuple(slot[r] for r in op.results),
                    defined_slots if op.regions else 0,
                )
            )
            defined_slots += len(op.results)
        self.steps = tuple(steps)
        self.yielded = _getter([slot[v] for v in terminator.operands])

    def environment(self, interpreter: Interpreter) -> list[Any]:
        """A new environment holding the values from outside the body."""
        env: list[Any] = [None] * len(self.values)
        env[: len(self.outer)] = interpreter.get_values(self.outer)
        return env

    def run(self, env: list[Any]) -> tuple:
        """Run the ops once; returns the values the terminator yields."""
        interpreter = self.interpreter
        op: Operation | None = None
        try:
            for op, call, get, results, nested in self.steps:
                inputs = get(env)
                if call is not None:  # the op's function with its first arguments
                    outputs = call(inputs)
                elif nested:
                    interpreter.push_scope("for_body")
                    interpreter.set_values(
                        zip(self.values[:nested], env[:nested], strict=True)
                    )
                    try:
                        outputs = interpreter.run_op(op, inputs)
                    finally:
                        interpreter.pop_scope()
                else:
                    outputs = interpreter.run_op(op, inputs)
                if results:
                    for slot, value in zip(results, outputs, strict=True):
                        env[slot] = value
        except SimError:
            raise
        except Exception as error:
            assert op is not None
            raise _execution_error(op, error) from error
        return self.yielded(env)


@register_impls
class HwScfFunctions(ScfFunctions):
    """`scf` with `scf.for` bodies run by `_CompiledBlock` and the scalar unit's
    work accounted: each iteration costs its body's address arithmetic plus one
    loop-control instruction."""

    def __init__(self, runtime: HwRuntime, calls: dict[type[Operation], DirectCall]):
        self.runtime = runtime
        self.calls = calls
        """The ops whose functions the compiled bodies call directly (`direct_calls`
        of the ascend_hw and integer arith functions)."""
        self.blocks: dict[Block, _CompiledBlock] = {}

    @impl(scf.ForOp)
    def run_for(
        self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues
    ) -> PythonValues:
        lb, ub, step, *loop_args = args
        runtime = self.runtime
        body = op.body.block
        compiled = self.blocks.get(body)
        if compiled is None:
            compiled = self.blocks[body] = _CompiledBlock(body, self.calls, interpreter)
        work = runtime.scalar_work(body) + 1
        index_type = compiled.args[0].type
        bitwidth = interpreter.index_bitwidth
        env = compiled.environment(interpreter)
        index = compiled.first_arg
        carried = slice(index + 1, index + len(compiled.args))
        n_carried = len(compiled.args) - 1
        values = tuple(loop_args)
        run = compiled.run
        for i in range(lb.value.data, ub.value.data, step.value.data):
            runtime.core.scalar(work)
            env[index] = int_attr(i, index_type, bitwidth)
            if n_carried:
                if len(values) != n_carried:  # verified IR never has it
                    raise ValueError(
                        f"{len(values)} values yielded for {n_carried} carried ones"
                    )
                env[carried] = values
            values = run(env)
        return values
