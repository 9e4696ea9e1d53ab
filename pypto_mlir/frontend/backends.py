"""Where a kernel runs: a registry of backends.

A backend turns the traced `tv` module into something it can execute
(`Backend.compile`, cached per kernel specialization) and executes it on numpy
arrays. `backend="auto"` picks the available backend with the highest priority,
so registering a better one (full lowering + the AI Core simulator, priority
above the reference's) makes it the default without changing kernels:

    class SimBackend(Backend):
        name = "sim"; level = "ascend_hw"; priority = 10
        def compile(self, module, entry): ...   # run the lowering pipeline
        ...
    register_backend(SimBackend())

Today `reference` (the `tv` numpy interpreter) is the only backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import InterpretationError

from pypto_mlir.diagnostics import capture_op_errors, error_op, op_location
from pypto_mlir.frontend.errors import KernelError, KernelRuntimeError, user_location
from pypto_mlir.interp.tensor_view import run_tv_function


@dataclass(frozen=True)
class Execution:
    """What one run of a compiled kernel produced."""

    outputs: list[np.ndarray]
    sim_report: Any | None = None
    """The simulator's `pypto_mlir.sim.Report` when a simulator ran."""


class Compiled(ABC):
    """A kernel specialization prepared by a backend."""

    pipeline: str
    """What was done to the `tv` module and what executes it, for reports."""

    @abstractmethod
    def run(self, args: Sequence[np.ndarray | int | float]) -> Execution:
        """Execute on arguments already checked against the signature; raise
        `KernelRuntimeError` for failures while running."""


class Backend(ABC):
    """A way to execute kernels; see the module docstring."""

    name: str
    level: str
    """The IR level that executes (`tv`, `tile`, `ascend_hw`)."""
    priority: int
    """`auto` picks the highest available."""

    def unavailable_reason(self) -> str | None:
        """Why this backend cannot run here (None: it can)."""
        return None

    @abstractmethod
    def compile(self, module: ModuleOp, entry: str) -> Compiled:
        """Prepare `func.func @entry` of a verified `tv` module (not modified)."""


class _ReferenceCompiled(Compiled):
    pipeline = "tv reference interpreter (numpy), no lowering"

    def __init__(self, module: ModuleOp, entry: str) -> None:
        self.module = module
        self.entry = entry

    def run(self, args: Sequence[np.ndarray | int | float]) -> Execution:
        with capture_op_errors():
            try:
                outputs = run_tv_function(self.module, self.entry, args)
            except InterpretationError as error:
                op = error_op(error)
                location = op_location(op) if op is not None else None
                raise KernelRuntimeError(
                    str(error).strip().split("\n")[0], location
                ) from error
        return Execution(outputs)


class ReferenceBackend(Backend):
    """The `tv` reference interpreter: the numerical ground truth, no timing."""

    name = "reference"
    level = "tv"
    priority = 0

    def compile(self, module: ModuleOp, entry: str) -> Compiled:
        return _ReferenceCompiled(module, entry)


_BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> None:
    """Make `backend` available by its name (and to `auto`)."""
    if backend.name == "auto":
        raise ValueError("'auto' is reserved for picking the best backend")
    _BACKENDS[backend.name] = backend


def backend_names() -> tuple[str, ...]:
    """The registered backends, best first."""
    return tuple(sorted(_BACKENDS, key=lambda name: -_BACKENDS[name].priority))


def select_backend(name: str) -> Backend:
    """The backend called `name`, or the best available one for `auto`."""
    if name == "auto":
        for candidate in backend_names():
            if _BACKENDS[candidate].unavailable_reason() is None:
                return _BACKENDS[candidate]
        raise KernelError("no kernel backend is available", user_location())
    if name not in _BACKENDS:
        known = ", ".join(("auto", *backend_names()))
        raise KernelError(f"unknown backend '{name}' (known: {known})", user_location())
    backend = _BACKENDS[name]
    reason = backend.unavailable_reason()
    if reason is not None:
        raise KernelError(
            f"backend '{name}' is not available: {reason}", user_location()
        )
    return backend


register_backend(ReferenceBackend())
