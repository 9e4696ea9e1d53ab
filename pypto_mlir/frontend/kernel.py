"""`@pto.kernel`: a Python function traced into a `tv` function, compiled and run.

The parameters' annotations give shapes and dtypes (`pto.Tensor[(M, 1024),
pto.f16]`; a bare dtype is a scalar parameter). Tracing runs the body once on
proxies (`pypto_mlir.frontend.tensor`) for one binding of the symbolic sizes;
the resulting module is cached per binding (a "specialization"), and so is each
backend's compiled form of it. Calling the kernel binds the sizes from the
arguments' shapes, checks and converts the arguments, and runs the chosen
backend (`pypto_mlir.frontend.backends`).
"""

from __future__ import annotations
import __future__

import functools
import inspect
import numbers
import time
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from io import StringIO
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FunctionType,
    IntAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute
from xdsl.printer import Printer

from pypto_mlir.diagnostics import DiagnosticError, SourceLocation, verify
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.frontend.backends import (
    Backend,
    Compiled,
    SimBackend,
    backend_target,
    select_backend,
)
from pypto_mlir.frontend.dtypes import DType
from pypto_mlir.frontend.errors import (
    KernelError,
    definition_location,
    kernel_error,
    user_location,
)
from pypto_mlir.frontend.sparse import (
    SparseSpec,
    SparseTensor,
    argument_shape,
    describe_sparse,
    result_matches,
    sparse_argument,
    to_scipy,
)
from pypto_mlir.frontend.tensor import (
    Scalar,
    Sym,
    Tensor,
    TensorComparison,
    TensorSpec,
    Trace,
    format_shape,
    tracing,
)
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.sim.profile import Hint, LineStats, Profile, profile
from pypto_mlir.sim.profile_text import profile_text

AUTOTUNE_BUDGET = 16
"""Candidates `@pto.kernel(autotune=True)` measures for a new shape."""

Annotation = TensorSpec | SparseSpec | DType
"""What a kernel parameter is declared as."""

ResultSpec = TensorSpec | SparseSpec
"""What a kernel result is declared as."""


@dataclass(frozen=True)
class Parameter:
    """A kernel parameter and its declared type."""

    name: str
    annotation: Annotation


@dataclass(frozen=True)
class CacheInfo:
    """Counts of the specialization cache, like `functools.lru_cache`'s."""

    hits: int
    misses: int
    size: int


@dataclass
class Specialization:
    """The kernel traced for one binding of its symbolic sizes."""

    sizes: dict[str, int]
    module: ModuleOp
    trace_seconds: float
    compiled: dict[str, Compiled] = field(default_factory=dict[str, Compiled])
    """Each backend's compiled form, by backend name."""


def describe(shape: Sequence[int], dtype: str) -> str:
    """`f16[4096x1024]`: how reports show an array."""
    return f"{dtype}[{'x'.join(str(d) for d in shape)}]"


@dataclass(frozen=True)
class RunReport:
    """What ran and how: the backend and pipeline, sizes, outputs, times, and
    the simulator's report when a simulator ran (cycles)."""

    kernel: str
    backend: str
    level: str
    """The IR level that executed (`tv` for the reference interpreter)."""
    pipeline: str
    sizes: dict[str, int]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    cached: bool
    """Whether the compiled kernel came from the cache."""
    compile_seconds: float
    run_seconds: float
    sim: Any | None = None
    """`pypto_mlir.sim.Report` of the simulated run, or None."""

    @property
    def cycles(self) -> int | None:
        """Simulated cycles, when a simulator ran."""
        return None if self.sim is None else self.sim.cycles

    @property
    def microseconds(self) -> float | None:
        """Simulated time at the target's clock, when a simulator ran."""
        return None if self.sim is None else self.sim.microseconds

    @property
    def target(self) -> str | None:
        """The simulated chip, when a simulator ran."""
        return None if self.sim is None else self.sim.target

    @property
    def roofline_cycles(self) -> float | None:
        """The roofline bound of the kernel's problem on the target (cycles)."""
        bound = None if self.sim is None else self.sim.roofline
        return None if bound is None else bound.cycles

    @property
    def bound_by(self) -> str | None:
        """The resource that bounds the roofline (`cube`, `vector`, `gm->ub`...)."""
        bound = None if self.sim is None else self.sim.roofline
        return None if bound is None else bound.resource

    @property
    def roofline_fraction(self) -> float | None:
        """The share of the roofline reached: bound / simulated cycles."""
        return None if self.sim is None else self.sim.roofline_fraction

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "backend": self.backend,
            "level": self.level,
            "pipeline": self.pipeline,
            "sizes": dict(self.sizes),
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "cached": self.cached,
            "compile_seconds": self.compile_seconds,
            "run_seconds": self.run_seconds,
            "cycles": self.cycles,
            "microseconds": self.microseconds,
            "target": self.target,
            "roofline_cycles": self.roofline_cycles,
            "bound_by": self.bound_by,
            "roofline_fraction": self.roofline_fraction,
            "sim": None if self.sim is None else self.sim.to_dict(),
        }

    def to_text(self) -> str:
        lines = [
            f"kernel {self.kernel}: backend '{self.backend}' ({self.pipeline})",
        ]
        if self.sizes:
            bound = ", ".join(f"{name}={size}" for name, size in self.sizes.items())
            lines.append(f"  sizes:   {bound}")
        lines.append(f"  inputs:  {', '.join(self.inputs) or '(none)'}")
        lines.append(f"  outputs: {', '.join(self.outputs)}")
        compile_note = "cached" if self.cached else f"{self.compile_seconds:.3f} s"
        lines.append(f"  compile: {compile_note}, run: {self.run_seconds:.3f} s")
        if self.sim is None:
            lines.append("  cycles:  - (no simulator ran)")
        else:
            lines.append(
                f"  cycles:  {self.sim.cycles} ({self.sim.microseconds:.2f} us at "
                f"{self.sim.clock_ghz:g} GHz on {self.sim.target}, "
                f"{self.sim.block_dim} core{'s' if self.sim.block_dim != 1 else ''})"
            )
            lines.append(f"  {self.sim.roofline_text()}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class RunResult:
    """The outputs of a kernel run and its report."""

    outputs: tuple[Any, ...]
    """numpy arrays; scipy arrays for sparse results."""
    report: RunReport

    @property
    def value(self) -> Any:
        """What calling the kernel returns: one array, or a tuple of them."""
        return self.outputs[0] if len(self.outputs) == 1 else self.outputs


@dataclass(frozen=True)
class KernelProfile:
    """A simulated run and where its time went per line of the kernel's code
    (`pypto_mlir.sim.profile`); `print(kernel.profile(x))` shows the table."""

    run: RunResult
    profile: Profile

    @property
    def lines(self) -> list[LineStats]:
        return self.profile.lines

    @property
    def hints(self) -> list[Hint]:
        return self.profile.hints

    def to_text(self, limit: int | None = 20) -> str:
        return profile_text(self.profile, limit)

    def __str__(self) -> str:
        return self.to_text()


def _spec_symbols(specs: Sequence[Annotation]) -> list[str]:
    names: list[str] = []
    for spec in specs:
        if isinstance(spec, TensorSpec | SparseSpec):
            names += [name for name in spec.symbols if name not in names]
    return names


def _read_signature(
    function: Callable[..., Any],
) -> tuple[list[Parameter], list[ResultSpec] | None]:
    """The parameters and declared results of a kernel function."""
    name = function.__name__
    where = definition_location(function)
    try:
        annotations = inspect.get_annotations(function, eval_str=True)
    except KernelError as error:
        raise KernelError(error.message, where) from None
    except Exception as error:
        hint = ""
        if function.__code__.co_flags & __future__.CO_FUTURE_ANNOTATIONS:
            hint = (
                " (under 'from __future__ import annotations' they can only use "
                "module-level names)"
            )
        raise KernelError(
            f"cannot evaluate the annotations of kernel '{name}': {error}{hint}", where
        ) from None
    parameters: list[Parameter] = []
    for parameter in inspect.signature(function).parameters.values():
        what = f"kernel '{name}', parameter '{parameter.name}'"
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise KernelError(f"{what}: *args and **kwargs are not supported", where)
        if parameter.name == "backend":
            raise KernelError(
                f"{what}: the name 'backend' is reserved for choosing the backend",
                where,
            )
        if parameter.default is not parameter.empty:
            raise KernelError(f"{what}: default values are not supported", where)
        annotation = annotations.get(parameter.name)
        if not isinstance(annotation, TensorSpec | SparseSpec | DType):
            raise KernelError(
                f"{what}: annotate it with pto.Tensor[shape, dtype] (pto.CSR[...] or "
                f"pto.BSR[...] for a sparse one) or a pto dtype (pto.f32) for a "
                f"scalar, got {annotation!r}",
                where,
            )
        parameters.append(Parameter(parameter.name, annotation))
    results = _read_results(name, annotations.get("return"), where)
    if results is not None:
        known = _spec_symbols([p.annotation for p in parameters])
        for unknown in _spec_symbols(results):
            if unknown not in known:
                raise KernelError(
                    f"kernel '{name}': the result size '{unknown}' is not the size "
                    "of any parameter",
                    where,
                )
    return parameters, results


def _read_results(
    name: str, annotation: object, where: SourceLocation | None
) -> list[ResultSpec] | None:
    if annotation is None:
        return None
    if isinstance(annotation, TensorSpec | SparseSpec):
        return [annotation]
    items: tuple[object, ...] | None = None
    if typing.get_origin(annotation) is tuple:
        items = typing.get_args(annotation)
    elif isinstance(annotation, tuple):
        items = annotation
    if items and all(isinstance(item, TensorSpec | SparseSpec) for item in items):
        return [item for item in items if isinstance(item, TensorSpec | SparseSpec)]
    raise KernelError(
        f"kernel '{name}': annotate the result with pto.Tensor[shape, dtype] or "
        f"tuple[pto.Tensor[...], ...], got {annotation!r}",
        where,
    )


def bind_shape(
    what: str,
    spec: TensorSpec,
    shape: tuple[int, ...],
    sizes: dict[str, int],
    bound_by: dict[str, str],
) -> None:
    """Check `shape` against `spec`, binding its symbolic sizes in `sizes`
    (`bound_by` remembers which argument bound each, for messages)."""
    if len(shape) != len(spec.shape):
        raise kernel_error(
            f"{what}: expected a rank-{len(spec.shape)} array of shape "
            f"{format_shape(spec.shape)}, got shape {shape}"
        )
    for dim, (declared, actual) in enumerate(zip(spec.shape, shape, strict=True)):
        if not isinstance(declared, Sym):
            if declared != actual:
                raise kernel_error(
                    f"{what}: expected shape {format_shape(spec.shape)}, got {shape}"
                )
        elif declared.name not in sizes:
            sizes[declared.name] = actual
            bound_by[declared.name] = what
        elif sizes[declared.name] != actual:
            raise kernel_error(
                f"{what}: dimension {dim} is {actual}, but "
                f"{bound_by[declared.name]} bound {declared.name} = "
                f"{sizes[declared.name]}"
            )


def _array_argument(
    what: str,
    spec: TensorSpec,
    value: object,
    sizes: dict[str, int],
    bound_by: dict[str, str],
) -> np.ndarray:
    """`value` as an array of the parameter's dtype; binds symbolic sizes."""
    try:
        array = np.asarray(value)
    except Exception as error:
        raise kernel_error(f"{what}: not an array: {error}") from None
    if array.dtype.kind not in "biuf":
        raise kernel_error(f"{what}: expected a numeric array, got dtype {array.dtype}")
    bind_shape(what, spec, array.shape, sizes, bound_by)
    target = spec.dtype.numpy_dtype
    if array.dtype.kind == "b" and not spec.dtype.is_float:
        # an integer tensor may index (`x[idx]` gathers rows by position); a
        # numpy mask selects where it is True, so 0/1 positions are wrong
        raise kernel_error(
            f"{what}: a boolean array (a numpy mask) cannot be an {spec.dtype} "
            "tensor: x[idx] gathers rows by position, numpy's x[mask] selects "
            "where the mask is True; pass the positions, "
            "np.flatnonzero(mask).astype(np.int32), or mask.astype(np.int32) "
            "for 0/1 values"
        )
    if array.dtype == target:
        return array
    if not np.can_cast(array.dtype, target, "same_kind"):
        raise kernel_error(
            f"{what}: cannot convert {array.dtype} values to {spec.dtype} "
            "(a float to integer conversion would truncate)"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        converted = array.astype(target)
    if spec.dtype.is_float:
        if np.any(np.isfinite(array) & ~np.isfinite(converted)):
            raise kernel_error(f"{what}: values overflow {spec.dtype}")
    elif np.any(converted.astype(array.dtype) != array):
        raise kernel_error(f"{what}: values are out of the range of {spec.dtype}")
    return converted


def _scalar_argument(what: str, dtype: DType, value: object) -> int | float:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise kernel_error(f"{what}: expected a {dtype} number, got {value!r}")
    if dtype.is_float:
        return float(value)
    if not isinstance(value, numbers.Integral):
        raise kernel_error(f"{what}: expected an integer for {dtype}, got {value!r}")
    info = np.iinfo(dtype.numpy_dtype)
    if not info.min <= int(value) <= info.max:
        raise kernel_error(f"{what}: {int(value)} is out of the range of {dtype}")
    return int(value)


class Kernel:
    """A traced, compiled and runnable kernel; made by `@pto.kernel`.

    `kernel(*arrays)` returns the output array(s); `kernel.run(*arrays)` also
    the report; `kernel.mlir(**sizes)` the `tv` IR. Called with traced tensors
    (from inside another kernel), the body is inlined into the caller.
    """

    def __init__(
        self,
        function: Callable[..., Any],
        backend: str = "auto",
        autotune: bool | int = False,
    ) -> None:
        if not inspect.isfunction(function):
            raise kernel_error(f"@pto.kernel decorates a function, got {function!r}")
        functools.update_wrapper(self, function)
        self.function = function
        self.name: str = function.__name__
        self.backend = backend
        self.autotune = autotune
        """Tune on the first simulated call of a shape not tuned yet (an int:
        the budget in candidates; True: AUTOTUNE_BUDGET)."""
        self.location = definition_location(function)
        self.parameters, self.results = _read_signature(function)
        self.symbols: tuple[str, ...] = tuple(
            _spec_symbols([p.annotation for p in self.parameters])
        )
        self._signature = inspect.signature(function)
        self._cache: dict[tuple[str | None, *tuple[int, ...]], Specialization] = {}
        self._hits = 0
        self._misses = 0

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.annotation!r}" for p in self.parameters)
        return f"<pto.kernel {self.name}({params})>"

    # Arguments.

    def _bind(
        self, args: Sequence[object], kwargs: Mapping[str, object]
    ) -> tuple[list[Any], dict[str, int]]:
        """Check the call's arguments; the converted values and the sizes."""
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as error:
            raise kernel_error(f"{self.name}(): {error}") from None
        sizes: dict[str, int] = {}
        bound_by: dict[str, str] = {}
        values: list[Any] = [None] * len(self.parameters)
        # sparse arguments last: a triple's column count may be a size that a
        # dense argument binds
        order = sorted(
            range(len(self.parameters)),
            key=lambda i: isinstance(self.parameters[i].annotation, SparseSpec),
        )
        for index in order:
            parameter = self.parameters[index]
            what = f"{self.name}(): argument '{parameter.name}'"
            value = bound.arguments[parameter.name]
            if isinstance(parameter.annotation, TensorSpec):
                values[index] = _array_argument(
                    what, parameter.annotation, value, sizes, bound_by
                )
            elif isinstance(parameter.annotation, SparseSpec):
                spec = parameter.annotation
                shape = argument_shape(what, spec, value, sizes)
                bind_shape(what, spec.dense, shape, sizes, bound_by)
                values[index] = sparse_argument(what, spec, value, shape)
            else:
                values[index] = _scalar_argument(what, parameter.annotation, value)
        return values, sizes

    def _check_sizes(self, sizes: Mapping[str, object]) -> dict[str, int]:
        unknown = [name for name in sizes if name not in self.symbols]
        if unknown:
            known = ", ".join(self.symbols) or "none"
            raise kernel_error(
                f"kernel '{self.name}' has no size named {', '.join(unknown)} "
                f"(its sizes: {known})"
            )
        missing = [name for name in self.symbols if name not in sizes]
        if missing:
            example = ", ".join(f"{name}=..." for name in missing)
            raise kernel_error(
                f"kernel '{self.name}' has symbolic sizes; give "
                f"{', '.join(missing)}, e.g. {self.name}.mlir({example})"
            )
        checked: dict[str, int] = {}
        for name in self.symbols:
            size = sizes[name]
            if (
                not isinstance(size, numbers.Integral)
                or isinstance(size, bool)
                or size < 0
            ):
                raise kernel_error(f"size {name} must be an integer >= 0, got {size!r}")
            checked[name] = int(size)
        return checked

    # Tracing.

    def specialize(self, **sizes: int) -> Specialization:
        """The kernel traced for these symbolic sizes (cached)."""
        return self._specialization(self._check_sizes(sizes))[0]

    def _specialization(
        self, sizes: dict[str, int], target: str | None = None
    ) -> tuple[Specialization, bool]:
        key = (target, *(sizes[name] for name in self.symbols))
        cached = self._cache.get(key)
        if cached is not None:
            self._hits += 1
            return cached, True
        start = time.perf_counter()
        module = self._trace(sizes, target)
        specialization = Specialization(sizes, module, time.perf_counter() - start)
        self._misses += 1
        self._cache[key] = specialization
        return specialization, False

    def _location_attr(self) -> FileLineColLoc | None:
        if self.location is None:
            return None
        return FileLineColLoc(
            StringAttr(self.location.file), IntAttr(self.location.line), IntAttr(1)
        )

    def _trace(self, sizes: dict[str, int], target: str | None = None) -> ModuleOp:
        arg_types: list[Attribute] = []
        for parameter in self.parameters:
            annotation = parameter.annotation
            if isinstance(annotation, TensorSpec):
                arg_types.append(
                    tv.TensorViewType(
                        annotation.dtype.element_type, annotation.resolve(sizes)
                    )
                )
            elif isinstance(annotation, SparseSpec):
                arg_types.append(annotation.tv_type(sizes))
            else:
                arg_types.append(annotation.element_type)
        func_op = func.FuncOp(self.name, (arg_types, []))
        location = self._location_attr()
        if location is not None:
            func_op.location = location
        block = func_op.body.block
        trace = Trace(block)
        proxies: list[Tensor | SparseTensor | Scalar] = []
        for parameter, argument in zip(self.parameters, block.args, strict=True):
            annotation = parameter.annotation
            argument.name_hint = parameter.name
            if isinstance(annotation, DType):
                proxies.append(Scalar(argument, trace, annotation))
            elif isinstance(annotation, SparseSpec):
                proxies.append(SparseTensor(argument, trace))
            else:
                proxies.append(Tensor(argument, trace))
        with tracing(trace):
            returned = self.function(*proxies)
        results = self._returned_tensors(returned, trace, sizes)
        return_op = func.ReturnOp(*(t.value for t in results))
        if location is not None:
            return_op.location = location
        block.add_op(return_op)
        func_op.function_type = FunctionType.from_lists(
            arg_types, [t.type for t in results]
        )
        return verified(ModuleOp([func_op]))

    def _returned_tensors(
        self, returned: object, trace: Trace, sizes: dict[str, int]
    ) -> list[Tensor | SparseTensor]:
        items = list(returned) if isinstance(returned, tuple | list) else [returned]
        for item in items:
            if isinstance(item, TensorComparison):
                raise item.misuse_error()
        if not items or not all(
            isinstance(item, Tensor | SparseTensor) and item._trace is trace
            for item in items
        ):
            raise KernelError(
                f"kernel '{self.name}' must return a tensor or a tuple of tensors "
                f"computed by the kernel, got {returned!r}",
                self.location,
            )
        tensors = [item for item in items if isinstance(item, Tensor | SparseTensor)]
        if self.results is not None:
            if len(self.results) != len(tensors):
                raise KernelError(
                    f"kernel '{self.name}' returns {len(tensors)} tensors, but its "
                    f"annotation declares {len(self.results)}",
                    self.location,
                )
            for index, (spec, tensor) in enumerate(
                zip(self.results, tensors, strict=True)
            ):
                if (
                    not result_matches(spec, tensor, sizes)
                    if isinstance(spec, SparseSpec) or isinstance(tensor, SparseTensor)
                    else spec.resolve(sizes) != tensor.shape
                    or spec.dtype is not tensor.dtype
                ):
                    raise KernelError(
                        f"kernel '{self.name}': result {index} is a "
                        f"{format_shape(tensor.shape)} {tensor.dtype} tensor, but the "
                        f"annotation declares {spec!r}",
                        self.location,
                    )
        return tensors

    # Public entry points.

    def mlir(self, **sizes: int) -> str:
        """The `tv` IR of the kernel. Symbolic sizes must be given
        (`kernel.mlir(M=128)`): the IR is always specialized to static shapes."""
        stream = StringIO()
        Printer(stream=stream).print_op(self.specialize(**sizes).module)
        return stream.getvalue() + "\n"

    def module(self, **sizes: int) -> ModuleOp:
        """A copy of the kernel's `tv` module for these sizes."""
        return self.specialize(**sizes).module.clone()

    def cache_info(self) -> CacheInfo:
        """How often a call found its specialization already traced."""
        return CacheInfo(self._hits, self._misses, len(self._cache))

    def arguments(self, *args: object, **kwargs: object) -> list[Any]:
        """A call's arguments as the kernel takes them: checked and converted
        (a sparse one a canonical `SparseArray`), for running its lowering
        directly (`check.lowered_arguments`)."""
        return self._bind(args, kwargs)[0]

    def run(
        self, *args: object, backend: str | None = None, **kwargs: object
    ) -> RunResult:
        """Run the kernel; the outputs and a report of what ran."""
        chosen = select_backend(backend or self.backend)
        values, sizes = self._bind(args, kwargs)
        specialization, traced_before = self._specialization(
            sizes, self._target_of(chosen)
        )
        compiled = specialization.compiled.get(chosen.name)
        if compiled is None and self.autotune and self._tunable(chosen):
            self._autotune(chosen, specialization, values)
        cached = compiled is not None and traced_before
        compile_seconds = 0.0 if traced_before else specialization.trace_seconds
        if compiled is None:
            start = time.perf_counter()
            compiled = self._compile(chosen, specialization.module)
            compile_seconds += time.perf_counter() - start
            specialization.compiled[chosen.name] = compiled
        start = time.perf_counter()
        execution = compiled.run(values)
        run_seconds = time.perf_counter() - start
        outputs = tuple(execution.outputs)
        func_op = specialization.module.ops.first
        assert isinstance(func_op, func.FuncOp)
        report = RunReport(
            kernel=self.name,
            backend=chosen.name,
            level=compiled.level or chosen.level,
            pipeline=compiled.pipeline,
            sizes=dict(sizes),
            inputs=tuple(
                f"{p.name} {_describe_argument(p.annotation, v)}"
                for p, v in zip(self.parameters, values, strict=True)
            ),
            outputs=tuple(
                describe_sparse(output, dtype)
                if isinstance(output, SparseArray)
                else describe(output.shape, dtype)
                for output, dtype in zip(
                    outputs, self._output_dtypes(func_op), strict=True
                )
            ),
            cached=cached,
            compile_seconds=compile_seconds,
            run_seconds=run_seconds,
            sim=execution.sim_report,
        )
        returned = tuple(
            to_scipy(output) if isinstance(output, SparseArray) else output
            for output in outputs
        )
        return RunResult(returned, report)

    # Tuning (pypto_mlir.tune, docs/tuning.md).

    def _tunable(self, backend: Backend) -> bool:
        return isinstance(backend, SimBackend) and self._target_of(backend) is None

    def tune(
        self,
        *args: object,
        budget: int | None = None,
        seconds: float | None = None,
        jobs: int | None = None,
        ray: bool | str = False,
        backend: str | None = None,
        **kwargs: object,
    ) -> Any:
        """Tune pypto-lower's options for these arguments' shapes on the
        simulator (`backend`'s target) and store the winner, which later calls
        compile with; `ray=True` runs candidates on a local Ray instance, a
        string on the cluster at that address. The `pypto_mlir.tune.tuner.
        TuneResult` (`print(pypto_mlir.tune.report.summary(result))`)."""
        chosen = select_backend(backend or self.backend)
        if not self._tunable(chosen):
            raise kernel_error(
                f"kernel '{self.name}': tuning needs a tv kernel on a simulator "
                f"backend, not backend '{chosen.name}'"
            )
        values, sizes = self._bind(args, kwargs)
        specialization, _ = self._specialization(sizes)
        return self._run_tuner(
            chosen, specialization, values, budget, seconds, jobs, ray
        )

    def _autotune(
        self, backend: Backend, specialization: Specialization, values: list[Any]
    ) -> None:
        from pypto_mlir.tune.applied import stored_tuning

        if stored_tuning(specialization.module, self.name, backend_target(backend)):
            return
        budget = AUTOTUNE_BUDGET if self.autotune is True else int(self.autotune)
        self._run_tuner(backend, specialization, values, budget, None, None, False)

    def _run_tuner(
        self,
        backend: Backend,
        specialization: Specialization,
        values: list[Any],
        budget: int | None,
        seconds: float | None,
        jobs: int | None,
        ray: bool | str,
    ) -> Any:
        from pypto_mlir.tune.executors import (
            DEFAULT_CANDIDATE_SECONDS,
            ExecutorError,
            LocalExecutor,
            RayExecutor,
        )
        from pypto_mlir.tune.space import SpaceError
        from pypto_mlir.tune.tuner import TuneError, tune

        try:
            executor = (
                RayExecutor(ray if isinstance(ray, str) else None)
                if ray
                else LocalExecutor(jobs, DEFAULT_CANDIDATE_SECONDS)
            )
            try:
                result = tune(
                    specialization.module,
                    self.name,
                    backend_target(backend),
                    budget=budget,
                    seconds=seconds,
                    executor=executor,
                    inputs=values,
                )
            finally:
                executor.close()
        except (ExecutorError, SpaceError, TuneError) as error:
            raise KernelError(f"kernel '{self.name}': {error}", self.location) from None
        specialization.compiled.pop(backend.name, None)
        return result

    # Hooks of the tile-level form (`pypto_mlir.frontend.tile_kernel`).

    def _target_of(self, backend: Backend) -> str | None:
        """The target the module is traced for (a tv module is target-free)."""
        return None

    def _compile(self, backend: Backend, module: ModuleOp) -> Compiled:
        return backend.compile(module, self.name)

    def _output_dtypes(self, function: func.FuncOp) -> list[str]:
        return [str(_result_dtype(t)) for t in function.function_type.outputs.data]

    def profile(
        self, *args: object, backend: str | None = None, **kwargs: object
    ) -> KernelProfile:
        """Run the kernel on a simulator and profile the run per source line of
        the kernel; `print(...)` it for the table and the hints."""
        result = self.run(*args, backend=backend, **kwargs)
        if result.report.sim is None:
            raise KernelError(
                f"kernel '{self.name}': backend '{result.report.backend}' runs no "
                "simulator, so there is nothing to profile (use backend='sim')",
                user_location(),
            )
        return KernelProfile(result, profile(result.report.sim))

    def __call__(
        self, *args: object, backend: str | None = None, **kwargs: object
    ) -> Any:
        """The output array (a tuple of arrays for several results); with traced
        tensors as arguments, the kernel body inlined into the calling trace."""
        if any(
            isinstance(a, Tensor | SparseTensor | Scalar)
            for a in (*args, *kwargs.values())
        ):
            return self._inline(args, kwargs)
        return self.run(*args, backend=backend, **kwargs).value

    def _inline(self, args: Sequence[object], kwargs: Mapping[str, object]) -> Any:
        """Call the body on traced tensors, after checking them against the
        annotations (symbolic sizes bind as in a call)."""
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as error:
            raise kernel_error(f"{self.name}(): {error}") from None
        sizes: dict[str, int] = {}
        bound_by: dict[str, str] = {}
        for parameter in self.parameters:
            value = bound.arguments[parameter.name]
            what = f"{self.name}(): argument '{parameter.name}'"
            annotation = parameter.annotation
            if isinstance(annotation, DType):
                if not isinstance(value, Scalar | numbers.Real):
                    raise kernel_error(f"{what}: expected a {annotation} scalar")
                continue
            expected = SparseTensor if isinstance(annotation, SparseSpec) else Tensor
            if not isinstance(value, expected):
                raise kernel_error(
                    f"{what}: expected a traced {annotation!r}, got {value!r}"
                )
            if value.dtype is not annotation.dtype:
                raise kernel_error(
                    f"{what}: expected {annotation.dtype}, got {value.dtype}"
                )
            if isinstance(annotation, SparseSpec):
                if annotation.block != value.blocksize:
                    raise kernel_error(
                        f"{what}: expected {annotation!r}, got {value!r}"
                    )
                annotation = annotation.dense
            bind_shape(what, annotation, value.shape, sizes, bound_by)
        return self.function(*bound.args, **bound.kwargs)


def verified(module: ModuleOp) -> ModuleOp:
    """`module`, after the verifier: its first error as a `KernelError` at the
    kernel line of the op."""
    try:
        verify(module)
    except DiagnosticError as error:
        diagnostic = error.diagnostic
        raise KernelError(diagnostic.message, diagnostic.location) from None
    return module


def _result_dtype(result_type: Attribute) -> str:
    assert isinstance(result_type, tv.TensorViewType)
    return str(result_type.element_type)


def _describe_argument(annotation: Annotation, value: Any) -> str:
    if isinstance(annotation, DType):
        return f"{annotation} = {value}"
    if isinstance(annotation, SparseSpec):
        return describe_sparse(value, str(annotation.dtype))
    return describe(np.shape(value), str(annotation.dtype))


def kernel(
    function: Callable[..., Any] | None = None,
    *,
    backend: str = "auto",
    autotune: bool | int = False,
) -> Any:
    """Make a Python function a kernel: `@pto.kernel`,
    `@pto.kernel(backend="reference")` or `@pto.kernel(autotune=True)` (tune
    each new shape on its first simulated call; an int is the budget)."""
    if function is None:
        return lambda f: Kernel(f, backend=backend, autotune=autotune)
    return Kernel(function, backend=backend, autotune=autotune)
