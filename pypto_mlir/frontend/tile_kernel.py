"""`@pto.tile_kernel`: a kernel written with tile views, traced to the `tile`
dialect (docs/tile_views.md).

    @pto.tile_kernel
    def swish(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, C), pto.f16]):
        for i, j in pto.tiles(out, (pto.auto, pto.auto)):
            pto.store(out[i, j], pto.silu(pto.load(x[i, j])))

Inputs are annotated `pto.Tensor[...]` (or a dtype, for a scalar) and the
outputs, which come last, `pto.Out[...]`; the caller passes the inputs and gets
the outputs back, as from a `@pto.kernel`. A `TileKernel` is a `Kernel`: the
cache, argument checks, `run(...).report`, `profile` and the backends are the
tensor-level ones; it differs in what it traces (a `tile` function in the
lowered calling convention, `func @f(%x: memref, ..., %out: memref)`, for the
target of the backend that runs it: tile sizes and capacities depend on it) and
in how a backend compiles it (`Backend.compile_tile`: the tile interpreter, or
`pypto-lower{start-level=tile}`, the stages after tv-to-tile).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute

from pypto_mlir.dialects.common import TARGET_ATTR
from pypto_mlir.frontend.backends import Backend, Compiled
from pypto_mlir.frontend.dtypes import DType
from pypto_mlir.frontend.errors import KernelError, kernel_error
from pypto_mlir.frontend.kernel import Kernel, Specialization, verified
from pypto_mlir.frontend.tensor import Scalar, TensorSpec, tensor_spec
from pypto_mlir.frontend.tile_loops import size_auto_grids
from pypto_mlir.frontend.tile_trace import TileTrace, tile_tracing
from pypto_mlir.frontend.tile_views import GmTensor
from pypto_mlir.targets import DEFAULT_TARGET, Target, TargetError, load_target


@dataclass(frozen=True)
class OutputSpec(TensorSpec):
    """The annotation `pto.Out[shape, dtype]`: an output of a tile kernel."""

    def __repr__(self) -> str:
        return super().__repr__().replace("pto.Tensor", "pto.Out", 1)


class Out:
    """`pto.Out[(M, N), pto.f16]`: a tile kernel's output parameter."""

    def __class_getitem__(cls, params: object) -> OutputSpec:
        spec = tensor_spec(params)
        return OutputSpec(spec.shape, spec.dtype)


class TileKernel(Kernel):
    """A kernel written with tile views; made by `@pto.tile_kernel`.

    `kernel(*inputs)` returns the outputs; `kernel.mlir(target=..., **sizes)`
    the traced `tile` IR (default target: the kernel's, else ascend910b).
    """

    def __init__(
        self,
        function: Callable[..., Any],
        backend: str = "auto",
        target: str = DEFAULT_TARGET,
    ) -> None:
        super().__init__(function, backend)
        where = self.location
        if self.results is not None:
            raise KernelError(
                f"tile kernel '{self.name}' declares its outputs as pto.Out[...] "
                "parameters, not as a result annotation",
                where,
            )
        kinds = [isinstance(p.annotation, OutputSpec) for p in self.parameters]
        if not any(kinds):
            raise KernelError(
                f"tile kernel '{self.name}' has no output: declare one as a "
                "parameter annotated pto.Out[shape, dtype]",
                where,
            )
        if kinds != sorted(kinds):
            raise KernelError(
                f"tile kernel '{self.name}': the pto.Out[...] parameters come after "
                "the inputs",
                where,
            )
        inputs = [
            p for p in self.parameters if not isinstance(p.annotation, OutputSpec)
        ]
        self.outputs = [
            p for p in self.parameters if isinstance(p.annotation, OutputSpec)
        ]
        self.parameters = inputs
        known = {
            name
            for p in inputs
            if isinstance(p.annotation, TensorSpec)
            for name in p.annotation.symbols
        }
        self.symbols = tuple(name for name in self.symbols if name in known)
        for output in self.outputs:
            assert isinstance(output.annotation, TensorSpec)
            for name in output.annotation.symbols:
                if name not in known:
                    raise KernelError(
                        f"tile kernel '{self.name}': the output size '{name}' is not "
                        "the size of any input",
                        where,
                    )
        signature = inspect.signature(function)
        self._signature = signature.replace(
            parameters=[signature.parameters[p.name] for p in inputs]
        )
        self.target = target

    def __repr__(self) -> str:
        params = ", ".join(
            f"{p.name}: {p.annotation!r}" for p in (*self.parameters, *self.outputs)
        )
        return f"<pto.tile_kernel {self.name}({params})>"

    def specialize(self, target: str | None = None, **sizes: int) -> Specialization:  # type: ignore[override]
        """The kernel traced for these sizes and `target` (cached)."""
        return self._specialization(self._check_sizes(sizes), target or self.target)[0]

    # Hooks of Kernel.

    def _target_of(self, backend: Backend) -> str | None:
        target = getattr(backend, "target", None)
        return target if isinstance(target, str) else self.target

    def _compile(self, backend: Backend, module: ModuleOp) -> Compiled:
        return backend.compile_tile(module, self.name)

    def _output_dtypes(self, function: func.FuncOp) -> list[str]:
        return [str(p.annotation.dtype) for p in self.outputs]  # pyright: ignore[reportAttributeAccessIssue]

    def _inline(self, args: Sequence[object], kwargs: Mapping[str, object]) -> Any:
        raise kernel_error(
            f"tile kernel '{self.name}' cannot be called from inside a kernel; call "
            "it with arrays"
        )

    # Tracing.

    def _trace(self, sizes: dict[str, int], target: str | None = None) -> ModuleOp:
        name = target or self.target
        try:
            chip = load_target(name)
        except TargetError as error:
            raise KernelError(str(error), self.location) from None
        module, trace = self._trace_once(sizes, name, chip, {})
        if trace.requests:
            sizing = size_auto_grids(trace.requests, chip)
            module, trace = self._trace_once(sizes, name, chip, sizing)
        return verified(module)

    def _trace_once(
        self,
        sizes: dict[str, int],
        target_name: str,
        chip: Target,
        sizing: dict[int, tuple[int | None, ...]],
    ) -> tuple[ModuleOp, TileTrace]:
        arg_types: list[Attribute] = []
        for parameter in (*self.parameters, *self.outputs):
            annotation = parameter.annotation
            if isinstance(annotation, TensorSpec):
                arg_types.append(
                    MemRefType(annotation.dtype.element_type, annotation.resolve(sizes))
                )
            else:
                arg_types.append(annotation.element_type)
        func_op = func.FuncOp(self.name, (arg_types, []))
        func_op.attributes["pypto.outputs"] = IntegerAttr(len(self.outputs), i64)
        location = self._location_attr()
        if location is not None:
            func_op.location = location
        trace = TileTrace(func_op, chip)
        trace.sizing = sizing
        block = func_op.body.block
        proxies: list[GmTensor | Scalar] = []
        for index, (parameter, argument) in enumerate(
            zip((*self.parameters, *self.outputs), block.args, strict=True)
        ):
            argument.name_hint = parameter.name
            annotation = parameter.annotation
            if isinstance(annotation, DType):
                proxies.append(Scalar(argument, trace, annotation))
            else:
                is_output = index >= len(self.parameters)
                proxies.append(GmTensor(argument, trace, parameter.name, is_output))
        with tile_tracing(trace):
            returned = self.function(*proxies)
        if trace.open_loops:
            grid = trace.open_loops[-1]
            raise KernelError(
                f"kernel '{self.name}': the tile loop here was left early (break or "
                "return inside it); a tile loop's body runs to its end",
                grid.where,
            )
        if returned is not None:
            raise KernelError(
                f"tile kernel '{self.name}' writes its outputs with pto.store and "
                f"returns nothing, got {returned!r}",
                self.location,
            )
        for output in self.outputs:
            if output.name not in trace.stored:
                raise KernelError(
                    f"tile kernel '{self.name}' never stores to its output "
                    f"'{output.name}'",
                    self.location,
                )
        return_op = func.ReturnOp()
        if location is not None:
            return_op.location = location
        block.add_op(return_op)
        module = ModuleOp([func_op])
        module.attributes[TARGET_ATTR] = StringAttr(target_name)
        return module, trace


def tile_kernel(
    function: Callable[..., Any] | None = None,
    *,
    backend: str = "auto",
    target: str = DEFAULT_TARGET,
) -> Any:
    """Make a Python function a tile kernel: `@pto.tile_kernel` or
    `@pto.tile_kernel(backend="reference", target="tiny")`; `target` is the chip
    it is traced for when the backend names none (the reference interpreter)."""
    if function is None:
        return lambda f: TileKernel(f, backend=backend, target=target)
    return TileKernel(function, backend=backend, target=target)
