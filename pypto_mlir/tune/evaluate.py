"""One candidate, in a worker: lower the kernel (shipped as IR text) for the
target (shipped as its file contents) with the candidate's options, simulate it,
and return the cycles or the reason it failed. Nothing raised gets out: a
candidate that does not lower or run is a result too."""

from __future__ import annotations

import os
import socket
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp
from xdsl.traits import SymbolTable

from pypto_mlir.tune.key import TargetFiles


@dataclass(frozen=True)
class Task:
    """A candidate to measure: everything a worker on another machine needs."""

    index: int
    ir: str
    entry: str
    target: TargetFiles
    options: tuple[tuple[str, Any], ...]
    seed: int = 0


@dataclass(frozen=True)
class Outcome:
    """What measuring a candidate gave: cycles, or the reason it has none."""

    index: int
    cycles: int | None
    error: str = ""
    seconds: float = 0.0
    worker: str = ""


@cache
def _parsed(ir: str) -> ModuleOp:
    from xdsl.parser import Parser

    from pypto_mlir.universe import default_context

    return Parser(default_context(), ir).parse_module()


@cache
def materialize(target: TargetFiles) -> str:
    """A target name this process can load with these exact contents: the
    builtin name when the builtin file is identical, else files written to a
    private temporary folder."""
    from pypto_mlir.targets import TARGET_DIR

    first_name, first_text = target.files[0]
    builtin = TARGET_DIR / first_name
    if (
        len(target.files) == 1
        and builtin.is_file()
        and builtin.read_text() == first_text
    ):
        return builtin.stem
    folder = Path(tempfile.mkdtemp(prefix="pypto-tune-target-"))
    for name, text in target.files:
        (folder / name).write_text(text)
    return str(folder / first_name)


def random_arguments(function: func.FuncOp, seed: int) -> list[Any]:
    """Inputs for a tv function: floats uniform in [-1, 1], small integers; a
    sparse tensor as `pypto-run --random` draws it (`random_sparse`)."""
    from pypto_mlir.dialects import tensor_view as tv
    from pypto_mlir.interp.gm_memref import poison_array
    from pypto_mlir.interp.sparse import random_sparse
    from pypto_mlir.numerics import numpy_dtype, round_to_bf16

    rng = np.random.default_rng(seed)

    def floats(shape: tuple[int, ...], element_type: Any, dtype: np.dtype) -> Any:
        array = rng.uniform(-1.0, 1.0, shape)
        if str(element_type) == "bf16":
            array = round_to_bf16(array.astype(np.float32))
        return array.astype(dtype)

    values: list[Any] = []
    for arg_type in function.function_type.inputs.data:
        if isinstance(arg_type, tv.TensorViewType):
            shape = tuple(arg_type.get_shape())
            like = poison_array(shape, arg_type.element_type)
            encoding = arg_type.sparse_encoding
            if encoding is not None:
                block = tuple(encoding.block_shape)
                values.append(
                    random_sparse(
                        (shape[0], shape[1]),
                        (block[0], block[1]),
                        numpy_dtype(encoding.index_type),
                        rng,
                        lambda s, t=arg_type, d=like.dtype: floats(
                            s, t.element_type, d
                        ),
                    )
                )
            elif like.dtype.kind == "f":
                values.append(floats(shape, arg_type.element_type, like.dtype))
            else:
                values.append(rng.integers(-4, 5, shape).astype(like.dtype))
        elif isinstance(arg_type, IntegerType | IndexType):
            values.append(int(rng.integers(1, 5)))
        else:
            values.append(float(rng.uniform(-1.0, 1.0)))
    return values


def lower_candidate(module: ModuleOp, target: str, options: dict[str, Any]) -> ModuleOp:
    """`module` lowered to ascend_hw by pypto-lower with `options`."""
    from pypto_mlir.check import lower
    from pypto_mlir.diagnostics import diagnostic_handler
    from pypto_mlir.pipelines import LowerPipeline

    pipeline = LowerPipeline(target=target, **options)
    with diagnostic_handler(lambda _: None):
        return lower(module, "ascend_hw", pipeline)


def evaluate(task: Task) -> Outcome:
    """Measure `task` (see the module docstring)."""
    from pypto_mlir.check import lowered_arguments, result_buffers
    from pypto_mlir.diagnostics import DiagnosticError
    from pypto_mlir.interp.ascend_hw import run_hw_function
    from pypto_mlir.targets import load_target

    start = time.perf_counter()
    worker = f"{socket.gethostname()}:{os.getpid()}"

    def failed(reason: str) -> Outcome:
        return Outcome(task.index, None, reason, time.perf_counter() - start, worker)

    try:
        module = _parsed(task.ir)
        target_name = materialize(task.target)
        function = SymbolTable.lookup_symbol(module, task.entry)
        assert isinstance(function, func.FuncOp)
        try:
            lowered = lower_candidate(module, target_name, dict(task.options))
        except DiagnosticError as error:
            return failed(f"does not lower: {error.diagnostic.message}")
        arguments = random_arguments(function, task.seed)
        run = run_hw_function(
            lowered,
            task.entry,
            [
                *lowered_arguments(function, arguments),
                *result_buffers(function, arguments),
            ],
            load_target(target_name),
        )
        cycles = int(run.report.cycles)
    except Exception as error:  # a candidate's failure is its result
        first = str(error).strip().split("\n")[0]
        return failed(f"{type(error).__name__}: {first}")
    return Outcome(task.index, cycles, "", time.perf_counter() - start, worker)
