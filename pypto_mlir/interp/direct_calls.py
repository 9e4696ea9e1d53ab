"""Interpreter functions registered so that a fast path can also call them
directly.

Every function is an xDSL `@impl(Op)` method of a `@register_impls` class, as in
`xdsl/interpreters/arith.py`. xDSL wraps each in a function that packs its
results into an `OpImplResult` for the interpreter's dispatch. The `ascend_hw`
interpreter's `scf.for` fast path (`ascend_hw.fast_path._CompiledBlock`) runs the
ops of a loop body many times and calls the undecorated functions instead,
saving that wrapper and the dispatch per op; its table is derived from the
registered impls (`direct_calls`), so there is no second registry to keep in
step with the classes. A leaf of `interp/`: the index arithmetic that the tile
and ascend_hw interpreters share (`index_arith`) registers with it too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
)
from xdsl.ir import Operation

DirectCall = Callable[[Interpreter, Any, PythonValues], PythonValues]
"""An interpreter function bound to its functions object: (interpreter, op, args)."""


def direct_impl(
    op_type: type[Operation],
) -> Callable[[Callable[..., PythonValues]], Any]:
    """xDSL's `impl`, keeping the undecorated function on the registered one as
    `__wrapped__` (the attribute `functools.wraps` sets) for `direct_calls`."""

    def register(function: Callable[..., PythonValues]) -> Any:
        registered = impl(op_type)(function)
        registered.__wrapped__ = function  # type: ignore[attr-defined]
        return registered

    return register


def direct_calls(
    functions: Iterable[InterpreterFunctions],
) -> dict[type[Operation], DirectCall]:
    """The registered impls made with `direct_impl` of each functions object, by
    op class, as their undecorated functions bound to the object."""
    calls: dict[type[Operation], DirectCall] = {}
    for instance in functions:
        for op_type, registered in type(instance)._impls():
            function = getattr(registered, "__wrapped__", None)
            if function is not None:
                calls[op_type] = partial(function, instance)
    return calls
