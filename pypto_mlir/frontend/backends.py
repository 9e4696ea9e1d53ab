"""Where a kernel runs: a registry of backends.

A backend turns the traced `tv` module into something it can execute
(`Backend.compile`, cached per kernel specialization) and executes it on numpy
arrays. `backend="auto"` picks the available backend with the highest priority,
so registering a better one makes it the default without changing kernels.

- `sim` (priority 10, the default): `pypto-lower{target=ascend910b}` to
  `ascend_hw` (with the options pypto-tune stored for the kernel, if any:
  docs/tuning.md), run on the simulated AI Core; the report has the cycles and the
  roofline of the tv kernel (`pypto_mlir.roofline`) or of the tile kernel
  (`pypto_mlir.tile_roofline`).
- `reference` (priority 0): the `tv` numpy interpreter, the numerical ground
  truth, no lowering and no timing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp
from xdsl.interpreter import InterpretationError
from xdsl.traits import SymbolTable

from pypto_mlir.diagnostics import (
    Diagnostic,
    Severity,
    capture_op_errors,
    emit,
    error_op,
    op_location,
)
from pypto_mlir.frontend.errors import KernelError, KernelRuntimeError, user_location
from pypto_mlir.interp.tensor_view import run_tv_function
from pypto_mlir.targets import DEFAULT_TARGET


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
    level: str | None = None
    """The IR level that executes when it is not the backend's (a tile kernel
    on the reference backend runs the tile interpreter)."""

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

    def compile_tile(self, module: ModuleOp, entry: str) -> Compiled:
        """Prepare `func.func @entry` of a verified `tile` module (a
        `@pto.tile_kernel`: its trailing memref arguments are its outputs)."""
        raise KernelError(
            f"backend '{self.name}' runs tv kernels only, not tile kernels",
            user_location(),
        )


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
                raise runtime_error(error) from error
        return Execution(outputs)


def runtime_error(error: InterpretationError) -> KernelRuntimeError:
    """An interpreter's failure as a `KernelRuntimeError` at the op's line."""
    op = error_op(error)
    location = op_location(op) if op is not None else None
    return KernelRuntimeError(str(error).strip().split("\n")[0], location)


def tile_outputs(module: ModuleOp, entry: str) -> Callable[[], list[np.ndarray]]:
    """New output buffers of a tile kernel (its trailing memref arguments, as
    many as the function's `pypto.outputs` attribute says), poisoned so that
    elements never written show."""
    function = SymbolTable.lookup_symbol(module, entry)
    assert isinstance(function, func.FuncOp)
    count = function.attributes["pypto.outputs"]
    assert isinstance(count, IntegerAttr)
    types = function.function_type.inputs.data[-count.value.data :]

    def buffers() -> list[np.ndarray]:
        from pypto_mlir.interp.gm_memref import poison_array

        return [
            poison_array(t.get_shape(), t.get_element_type())
            for t in types
            if isinstance(t, MemRefType)
        ]

    return buffers


class _TileReferenceCompiled(Compiled):
    pipeline = "tile reference interpreter (numpy), no lowering"
    level = "tile"

    def __init__(self, module: ModuleOp, entry: str) -> None:
        self.module = module
        self.entry = entry
        self.new_outputs = tile_outputs(module, entry)

    def run(self, args: Sequence[np.ndarray | int | float]) -> Execution:
        from pypto_mlir.check import run_tile_level

        outputs = self.new_outputs()
        with capture_op_errors():
            try:
                run_tile_level(self.module, self.entry, [*args, *outputs])
            except InterpretationError as error:
                raise runtime_error(error) from error
        return Execution(outputs)


class ReferenceBackend(Backend):
    """The `tv` reference interpreter: the numerical ground truth, no timing
    (the `tile` interpreter for tile kernels)."""

    name = "reference"
    level = "tv"
    priority = 0

    def compile(self, module: ModuleOp, entry: str) -> Compiled:
        return _ReferenceCompiled(module, entry)

    def compile_tile(self, module: ModuleOp, entry: str) -> Compiled:
        return _TileReferenceCompiled(module, entry)


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


class _SimCompiled(Compiled):
    """A kernel lowered to ascend_hw; each run allocates the outputs (the
    trailing memref arguments of the lowered function) and simulates it."""

    def __init__(
        self,
        entry: str,
        new_outputs: Callable[[Sequence[Any]], list[np.ndarray]],
        lowered: ModuleOp,
        target: Any,
        pipeline: str,
        remarks: list[Diagnostic],
        roofline: Any | None = None,
        arguments: Callable[[Sequence[Any]], list[Any]] = list,
        results: Callable[[Sequence[Any], list[np.ndarray]], list[Any]] | None = None,
    ) -> None:
        self.entry = entry
        self.arguments = arguments
        """The lowered function's arguments for the kernel's (a sparse tensor
        is three buffers, docs/sparse.md)."""
        self.new_outputs = new_outputs
        """The output buffers for a run's arguments (a sparse result's values
        are as many as its pattern's)."""
        self.results = results
        """The kernel's results from the run's arguments and output buffers
        (a sparse result with its pattern); None: the buffers."""
        self.roofline = roofline
        """The `sim.report.RooflineBound` of the tv kernel (None: no bound),
        or a function of the run's arguments giving it (a sparse kernel's
        bound depends on its pattern: `pypto_mlir.sparse_roofline`)."""
        self.lowered = lowered
        self.target = target
        self.pipeline = pipeline
        self.remarks = remarks
        """What the passes reported (tile sizes...), collected while lowering."""

    def run(self, args: Sequence[np.ndarray | int | float]) -> Execution:
        from pypto_mlir.interp.ascend_hw import run_hw_function
        from pypto_mlir.sim import SimError
        from pypto_mlir.sim_diagnostic import sim_diagnostic

        outputs = self.new_outputs(args)
        # The simulator's GM is its arguments, written in place (bf16 ones are
        # rounded there): the caller's arrays stay as they were.
        inputs = [
            a.copy() if isinstance(a, np.ndarray) else a for a in self.arguments(args)
        ]
        try:
            result = run_hw_function(
                self.lowered,
                self.entry,
                [*inputs, *outputs],
                self.target,
            )
        except SimError as error:
            diagnostic = sim_diagnostic(error)
            raise KernelRuntimeError(diagnostic.message, diagnostic.location) from error
        result.report.roofline = (
            self.roofline(args) if callable(self.roofline) else self.roofline
        )
        if self.results is not None:
            return Execution(self.results(args, outputs), result.report)
        return Execution(outputs, result.report)


class SimBackend(Backend):
    """Lower with `pypto-lower` and run on the simulated AI Core of `target`.

    The report carries the simulator's `Report` (cycles, microseconds, pipes,
    GM traffic). Another chip is another registration:
    `register_backend(SimBackend("tiny", name="sim-tiny", priority=5))`.
    """

    level = "ascend_hw"

    def __init__(
        self, target: str = DEFAULT_TARGET, name: str = "sim", priority: int = 10
    ) -> None:
        self.target = target
        self.name = name
        self.priority = priority

    def unavailable_reason(self) -> str | None:
        from pypto_mlir.targets import TargetError, load_target

        try:
            load_target(self.target)
        except TargetError as error:
            return str(error)
        return None

    def compile(self, module: ModuleOp, entry: str) -> Compiled:
        from pypto_mlir.check import (
            lowered_arguments,
            result_buffers,
            sparse_result_sources,
            with_sparse_results,
        )
        from pypto_mlir.diagnostics import DiagnosticError
        from pypto_mlir.roofline import roofline_bound
        from pypto_mlir.sparse_roofline import has_sparse_ops, sparse_roofline_bound
        from pypto_mlir.targets import load_target

        source = SymbolTable.lookup_symbol(module, entry)
        assert isinstance(source, func.FuncOp)
        target = load_target(self.target)
        bound: Any = roofline_bound(module, entry, target)
        if has_sparse_ops(module, entry):

            def bound(args: Sequence[Any]) -> Any:
                return sparse_roofline_bound(module, entry, target, args)

        try:
            sparse = any(s is not None for s in sparse_result_sources(source))
        except DiagnosticError as error:
            raise KernelError(
                f"cannot lower kernel '{entry}' for {self.target}: "
                f"{error.diagnostic.message}",
                error.diagnostic.location,
            ) from None
        return self._lower(
            module,
            entry,
            "tv",
            lambda args: result_buffers(source, args),
            bound,
            lambda args: lowered_arguments(source, args),
            (lambda args, out: with_sparse_results(source, args, out))
            if sparse
            else None,
        )

    def compile_tile(self, module: ModuleOp, entry: str) -> Compiled:
        """`pypto-lower{start-level=tile}`: the stages after tv-to-tile."""
        from pypto_mlir.targets import load_target
        from pypto_mlir.tile_roofline import tile_roofline_bound

        outputs = tile_outputs(module, entry)
        return self._lower(
            module,
            entry,
            "tile",
            lambda _: outputs(),
            tile_roofline_bound(module, entry, load_target(self.target)),
        )

    def _lower(
        self,
        module: ModuleOp,
        entry: str,
        start_level: str,
        new_outputs: Callable[[Sequence[Any]], list[np.ndarray]],
        roofline: Any | None,
        arguments: Callable[[Sequence[Any]], list[Any]] = list,
        results: Callable[[Sequence[Any], list[np.ndarray]], list[Any]] | None = None,
    ) -> Compiled:
        from pypto_mlir.check import lower
        from pypto_mlir.diagnostics import DiagnosticError, diagnostic_handler
        from pypto_mlir.pipelines import LowerPipeline
        from pypto_mlir.targets import load_target
        from pypto_mlir.tune.applied import options_text, tuned_pipeline

        pipeline = LowerPipeline(target=self.target, start_level=start_level)
        remarks: list[Diagnostic] = []
        try:
            with diagnostic_handler(remarks.append):
                if start_level == "tv":
                    pipeline = tuned_pipeline(module, pipeline)
                lowered = lower(module, "ascend_hw", pipeline)
        except DiagnosticError as error:
            diagnostic = error.diagnostic
            raise KernelError(
                f"cannot lower kernel '{entry}' for {self.target}: "
                f"{diagnostic.message} (backend='reference' runs it on the tv "
                "interpreter)",
                diagnostic.location,
            ) from None
        for diagnostic in remarks:
            if diagnostic.severity is Severity.WARNING:
                emit(diagnostic)  # remarks (tile sizes) stay on the compiled kernel
        options = f"target={self.target}"
        if pipeline != LowerPipeline(target=self.target, start_level=start_level):
            tuned = {
                k: v
                for k, v in vars(pipeline).items()
                if v != getattr(LowerPipeline(), k) and k != "target"
            }
            options += f" {options_text(tuned)} (tuned)"
        if start_level != "tv":
            options += f" start-level={start_level}"
        return _SimCompiled(
            entry,
            new_outputs,
            lowered,
            load_target(self.target),
            f"pypto-lower{{{options}}} to ascend_hw, run on the simulated "
            f"{self.target}",
            remarks,
            roofline,
            arguments,
            results,
        )


register_backend(ReferenceBackend())
register_backend(SimBackend())


def backend_target(backend: Backend) -> str:
    """The target a simulator backend runs (the default chip for others)."""
    return backend.target if isinstance(backend, SimBackend) else DEFAULT_TARGET


def sim_backend(target: str) -> str:
    """The name of a simulator backend for `target`: `sim` for the default
    chip, else `sim-<target>`, registered on first use with priority -1 (so
    that `auto` still picks the defaults)."""
    for name, backend in _BACKENDS.items():
        if isinstance(backend, SimBackend) and backend.target == target:
            return name
    name = f"sim-{target}"
    register_backend(SimBackend(target, name=name, priority=-1))
    return name
