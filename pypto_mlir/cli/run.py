"""`pypto-run`: execute one function of an MLIR file on numpy inputs.

The function's level decides what executes it: `tv` functions run on the tv
reference interpreter, `tile` functions on the tile interpreter, `ascend_hw`
functions on the AI Core simulator (which also gives a report of cycles, a
Chrome trace and a timeline). Inputs come from an `.npz` file or are drawn at
random from a seed; outputs go to an `.npz` file; a summary names what ran and
a checksum of every output. Problems are diagnostics in MLIR's format, exit
status 1, never a Python traceback. docs/cli.md describes the flags.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from importlib.metadata import version
from typing import Any, TextIO, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    bf16,
)
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import InterpretationError

from pypto_mlir.cli.diagnostics import (
    DiagnosticPrinter,
    SourceManager,
    run_tool,
)
from pypto_mlir.cli.source import (
    RECURSION_LIMIT,
    SourceChunk,
    default_context,
    parse_chunk,
    read_source,
)
from pypto_mlir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Severity,
    SourceLocation,
    capture_op_errors,
    diagnostic_handler,
    error_op,
    op_diagnostic,
    op_location,
    verify,
)
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.numerics import numpy_dtype, round_to_bf16
from pypto_mlir.sim import SimError
from pypto_mlir.sim_diagnostic import sim_diagnostic
from pypto_mlir.targets.resolve import resolve_target

TOOL_NAME = "pypto-run"

RANDOM_FLOAT_RANGE = (-1.0, 1.0)
"""`--random` floats are uniform in this range: exp, sigmoid, softmax and
products of many of them stay finite in f16."""

RANDOM_INT_RANGE = (-4, 4)
"""`--random` integers (inclusive): sums of many of them stay far from overflow."""

RANDOM_MAX_BYTES = 1 << 32
"""The most bytes `--random` draws (numpy draws 8 bytes per element, whatever
the dtype): larger arguments are refused before anything is allocated."""


class Level(Enum):
    """The IR level of a function, and what executes it."""

    TV = "tv"
    TILE = "tile"
    HW = "ascend_hw"

    @property
    def executor(self) -> str:
        return {
            Level.TV: "the tv reference interpreter",
            Level.TILE: "the tile interpreter",
            Level.HW: "the AI Core simulator",
        }[self]


_LEVEL_OF_DIALECT = {"tv": Level.TV, "tile": Level.TILE, "ascend_hw": Level.HW}


def _error(message: str, location: SourceLocation | None = None) -> DiagnosticError:
    return DiagnosticError(Diagnostic(Severity.ERROR, message, location))


def _op_error(op: Operation, message: str) -> DiagnosticError:
    return DiagnosticError(op_diagnostic(Severity.ERROR, op, message))


# --------------------------------------------------------------------------------------
# The entry function and its level
# --------------------------------------------------------------------------------------


def _is_public_definition(op: Operation) -> bool:
    return (
        isinstance(op, func.FuncOp)
        and op.sym_visibility in (None, StringAttr("public"))
        and bool(op.body.blocks)
    )


def select_entry(module: ModuleOp, name: str | None, file: str) -> func.FuncOp:
    """The function to run: `--entry NAME`, else the only public one."""
    public = [op for op in module.ops if _is_public_definition(op)]
    names = ", ".join(f"@{op.sym_name.data}" for op in public)  # pyright: ignore
    if name is not None:
        found = SymbolTable.lookup_symbol(module, name)
        if not isinstance(found, func.FuncOp) or not found.body.blocks:
            known = f"; the public functions are {names}" if public else ""
            raise _error(
                f"--entry: no function @{name} to run{known}", SourceLocation(file)
            )
        return found
    if not public:
        raise _error("no public func.func to run", SourceLocation(file))
    if len(public) > 1:
        raise _error(
            f"several public functions ({names}): choose one with --entry",
            SourceLocation(file),
        )
    entry = public[0]
    assert isinstance(entry, func.FuncOp)
    return entry


def _callees(module: ModuleOp, entry: func.FuncOp) -> list[func.FuncOp]:
    """`entry` and the functions it calls, transitively."""
    found: list[func.FuncOp] = [entry]
    for function in found:
        for op in function.walk():
            if isinstance(op, func.CallOp):
                callee = SymbolTable.lookup_symbol(module, op.callee)
                if isinstance(callee, func.FuncOp) and callee not in found:
                    found.append(callee)
    return found


def function_level(module: ModuleOp, entry: func.FuncOp) -> Level:
    """The level of `entry` from the dialects of its ops (and its callees'):
    ascend_hw, tile or tv; without any of them, tile if it takes memrefs
    (destination-passing), else tv."""
    seen: dict[Level, Operation] = {}
    for function in _callees(module, entry):
        for op in function.walk():
            level = _LEVEL_OF_DIALECT.get(op.name.split(".")[0])
            if level is not None:
                seen.setdefault(level, op)
    if len(seen) > 1:
        levels = " and ".join(level.value for level in seen)
        raise _op_error(
            entry,
            f"@{entry.sym_name.data} mixes {levels} ops; pypto-run runs a function "
            "of one level",
        )
    if seen:
        return next(iter(seen))
    if any(isinstance(t, MemRefType) for t in entry.function_type.inputs.data):
        return Level.TILE
    return Level.TV


# --------------------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------------------

_EXTRA_DTYPES: dict[Attribute, np.dtype[Any]] = {
    IntegerType(1): np.dtype(np.bool_),
    IntegerType(64): np.dtype(np.int64),
    IndexType(): np.dtype(np.int64),
}


def _storage_dtype(element_type: Attribute) -> np.dtype[Any] | None:
    try:
        return numpy_dtype(element_type)
    except ValueError:
        pass
    if element_type in _EXTRA_DTYPES:
        return _EXTRA_DTYPES[element_type]
    if isinstance(element_type, AnyFloat) and element_type.bitwidth == 64:
        return np.dtype(np.float64)
    return None


@dataclass(frozen=True)
class ArgumentSpec:
    """What a function argument needs at run time."""

    index: int
    type: Attribute
    element_type: Attribute
    dtype: np.dtype[Any]
    shape: tuple[int, ...] | None
    """None for a scalar; `DYNAMIC_INDEX` for `?` dimensions."""
    sparse: bool = False
    """A sparse (#tv.csr) tensor: three arrays, `argN_offsets`, `argN_indices`
    and `argN_values` (docs/sparse.md)."""

    @property
    def name(self) -> str:
        return f"arg{self.index}"

    def array_names(self) -> list[str]:
        """The .npz keys of the argument."""
        if not self.sparse:
            return [self.name]
        return [f"{self.name}_{part}" for part in ("offsets", "indices", "values")]

    def shape_text(self) -> str:
        assert self.shape is not None
        return "x".join("?" if d == DYNAMIC_INDEX else str(d) for d in self.shape)


def argument_specs(entry: func.FuncOp) -> list[ArgumentSpec]:
    specs: list[ArgumentSpec] = []
    for index, arg_type in enumerate(entry.function_type.inputs.data):
        shape: tuple[int, ...] | None = None
        element_type = arg_type
        sparse = isinstance(arg_type, tv.TensorViewType) and arg_type.is_sparse
        if isinstance(arg_type, tv.TensorViewType | MemRefType):
            if sparse and DYNAMIC_INDEX in arg_type.get_shape():
                raise _op_error(
                    entry,
                    f"argument {index}: a sparse tensor needs a static shape, got "
                    f"{arg_type}",
                )
            shape = tuple(arg_type.get_shape())
            element_type = arg_type.get_element_type()
        dtype = _storage_dtype(element_type)
        if dtype is None:
            raise _op_error(
                entry,
                f"argument {index} has type {arg_type}, which pypto-run cannot pass "
                "(tensors, memrefs, integers, index and floats are supported)",
            )
        specs.append(ArgumentSpec(index, arg_type, element_type, dtype, shape, sparse))
    return specs


def _round_to_element(values: np.ndarray, spec: ArgumentSpec) -> np.ndarray:
    if spec.element_type == bf16:
        return round_to_bf16(values.astype(np.float32))
    return values.astype(spec.dtype)


def random_inputs(
    entry: func.FuncOp, specs: Sequence[ArgumentSpec], seed: int
) -> list[Any]:
    """Reproducible inputs: one draw per argument, in order, from
    `numpy.random.default_rng(seed)`."""
    rng = np.random.default_rng(seed)
    values: list[Any] = []
    drawn = 0
    for spec in specs:
        if isinstance(spec.element_type, IndexType) and spec.shape is None:
            raise _op_error(
                entry,
                f"--random cannot choose index argument {spec.index} (a size or an "
                "offset); give it with --inputs",
            )
        if spec.shape is not None and DYNAMIC_INDEX in spec.shape:
            raise _op_error(
                entry,
                f"--random cannot choose the '?' sizes of argument {spec.index} "
                f"({spec.type}); give it with --inputs",
            )
        shape = () if spec.shape is None else spec.shape
        drawn += 8 * math.prod(shape)
        if drawn > RANDOM_MAX_BYTES:
            raise _op_error(
                entry,
                f"--random would draw {math.prod(shape)} elements for argument "
                f"{spec.index} ({spec.type}), {_gib(drawn)} GiB with the arguments "
                f"before it; it draws at most {_gib(RANDOM_MAX_BYTES)} GiB",
            )
        if spec.sparse:
            values.append(_random_sparse(spec, rng))
            continue
        if spec.dtype.kind == "f":
            array = _round_to_element(rng.uniform(*RANDOM_FLOAT_RANGE, shape), spec)
        elif spec.dtype.kind == "b":
            array = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            info = np.iinfo(spec.dtype)
            low = max(RANDOM_INT_RANGE[0], int(info.min))
            high = min(RANDOM_INT_RANGE[1], int(info.max))
            array = rng.integers(low, high, shape, endpoint=True).astype(spec.dtype)
        values.append(array.item() if spec.shape is None else array)
    return values


def _random_sparse(spec: ArgumentSpec, rng: np.random.Generator) -> Any:
    """A random CSR/BSR tensor (`interp.sparse.random_sparse`), values drawn as
    for a dense argument."""
    from pypto_mlir.interp.sparse import random_sparse

    sparse_type = cast(tv.TensorViewType, spec.type)
    encoding = sparse_type.sparse_encoding
    assert encoding is not None and spec.shape is not None
    block = tuple(encoding.block_shape)
    return random_sparse(
        (spec.shape[0], spec.shape[1]),
        (block[0], block[1]),
        numpy_dtype(encoding.index_type),
        rng,
        lambda shape: _round_to_element(rng.uniform(*RANDOM_FLOAT_RANGE, shape), spec),
    )


def _gib(size: int) -> str:
    return f"{size / (1 << 30):.4g}"


def load_inputs(
    path: str, entry: func.FuncOp, specs: Sequence[ArgumentSpec]
) -> list[Any]:
    """Inputs from an .npz archive with arrays `arg0`, `arg1`, ..."""
    where = SourceLocation(path)
    declared = Diagnostic(
        Severity.NOTE, f"@{entry.sym_name.data} is declared here", op_location(entry)
    )

    def fail(message: str) -> DiagnosticError:
        return DiagnosticError(Diagnostic(Severity.ERROR, message, where, [declared]))

    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise _error("not an .npz archive (numpy.savez writes one)", where)
        with archive:
            arrays = {key: archive[key] for key in archive.files}
    except DiagnosticError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise _error(f"cannot read inputs: {reason}", where) from error
    expected = [name for spec in specs for name in spec.array_names()]
    missing = [name for name in expected if name not in arrays]
    extra = sorted(name for name in arrays if name not in expected)
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if extra:
            parts.append(f"unexpected {', '.join(extra)}")
        wanted = ", ".join(expected) if expected else "no arrays"
        raise fail(f"{'; '.join(parts)} (@{entry.sym_name.data} takes {wanted})")
    values: list[Any] = []
    for spec in specs:
        if spec.sparse:
            values.append(_loaded_sparse(spec, arrays, fail))
            continue
        array = arrays[spec.name]
        if array.dtype != spec.dtype:
            raise fail(
                f"{spec.name}: a {spec.type} argument is a numpy {spec.dtype} array, "
                f"got {array.dtype}"
            )
        if spec.shape is None:
            if array.ndim != 0:
                raise fail(
                    f"{spec.name}: a {spec.type} argument is a 0-d array, got shape {array.shape}"
                )
            values.append(array.item())
            continue
        if array.ndim != len(spec.shape) or any(
            d not in (DYNAMIC_INDEX, a)
            for d, a in zip(spec.shape, array.shape, strict=True)
        ):
            raise fail(
                f"{spec.name}: expected shape {spec.shape_text()} ({spec.type}), got "
                f"{'x'.join(map(str, array.shape)) or 'a 0-d array'}"
            )
        if spec.element_type == bf16:
            array = round_to_bf16(array)
        values.append(np.ascontiguousarray(array))
    return values


def _loaded_sparse(
    spec: ArgumentSpec,
    arrays: dict[str, np.ndarray],
    fail: Callable[[str], DiagnosticError],
) -> Any:
    """A sparse argument from its three arrays, checked as the interpreter
    checks it (docs/sparse.md, *Bad input*)."""
    from pypto_mlir.interp.tensor_view import sparse_argument

    parts = tuple(arrays[name] for name in spec.array_names())
    try:
        return sparse_argument(cast(tv.TensorViewType, spec.type), parts)
    except ValueError as error:
        raise fail(f"{spec.name}: {error}") from error


# --------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------


@dataclass
class RunOutcome:
    """What a run produced."""

    results: list[np.ndarray]
    written: dict[int, np.ndarray] = field(default_factory=dict[int, np.ndarray])
    """The final contents of memref arguments (destination-passing outputs)."""
    sim_report: Any | None = None


_INTERPRETER_ASSERT = re.compile(r"AssertionError: \(.*?\)\((.*)\)$")
"""xDSL's `interpreter_assert` wording: `AssertionError: (SCOPE)(MESSAGE)`."""


def _interpretation_diagnostic(error: Exception, entry: func.FuncOp) -> DiagnosticError:
    op = error_op(error) or entry
    message = str(error).strip().split("\n")[0]
    if (match := _INTERPRETER_ASSERT.match(message)) is not None:
        message = match.group(1)
    return DiagnosticError(op_diagnostic(Severity.ERROR, op, message))


def _as_result(value: Any) -> np.ndarray:
    from pypto_mlir.interp.tile import TileValue

    if isinstance(value, TileValue):
        return np.asarray(value.valid_data())
    return np.asarray(value)


def _run_tv(
    module: ModuleOp, entry: func.FuncOp, values: list[Any], _target: Any
) -> RunOutcome:
    from pypto_mlir.interp.sparse import SparseArray
    from pypto_mlir.interp.tensor_view import run_tv_function

    results = run_tv_function(module, entry.sym_name.data, values)
    # a sparse result is its values (docs/sparse.md)
    return RunOutcome([r.values if isinstance(r, SparseArray) else r for r in results])


def _run_tile(
    module: ModuleOp, entry: func.FuncOp, values: list[Any], _target: Any
) -> RunOutcome:
    from pypto_mlir.interp.tile import run_tile_function

    results = run_tile_function(module, entry.sym_name.data, values)
    written = {i: v for i, v in enumerate(values) if isinstance(v, np.ndarray)}
    return RunOutcome([_as_result(r) for r in results], written)


def _run_hw(
    module: ModuleOp, entry: func.FuncOp, values: list[Any], target: Any
) -> RunOutcome:
    from pypto_mlir.interp.ascend_hw import run_hw_function

    if entry.function_type.outputs.data:
        raise _op_error(
            entry,
            "an ascend_hw function returns its outputs through memref arguments; "
            f"@{entry.sym_name.data} declares results",
        )
    run = run_hw_function(module, entry.sym_name.data, values, target)
    written = {i: v for i, v in enumerate(values) if isinstance(v, np.ndarray)}
    return RunOutcome([], written, run.report)


RUNNERS: dict[Level, Callable[[ModuleOp, func.FuncOp, list[Any], Any], RunOutcome]] = {
    Level.TV: _run_tv,
    Level.TILE: _run_tile,
    Level.HW: _run_hw,
}
"""How each level runs; a `--check` against another level calls two of them."""


def run_function(
    module: ModuleOp, entry: func.FuncOp, level: Level, values: list[Any], target: Any
) -> RunOutcome:
    """Run `entry` at `level`; failures while running become diagnostics."""
    with capture_op_errors():
        try:
            return RUNNERS[level](module, entry, values, target)
        except (InterpretationError, ValueError) as error:
            raise _interpretation_diagnostic(error, entry) from error
        except SimError as error:
            raise DiagnosticError(sim_diagnostic(error)) from error
        except (AssertionError, ArithmeticError) as error:
            # xDSL's arith interpreter asserts on what MLIR leaves undefined
            # (an integer division by zero): the program's fault, at its op.
            op = error_op(error)
            if op is None:
                raise
            detail = str(error).strip().split("\n")[0]
            message = f"'{op.name}' cannot be executed: {type(error).__name__}"
            raise _op_error(
                op, f"{message}: {detail}" if detail else message
            ) from error


# --------------------------------------------------------------------------------------
# Outputs and the summary
# --------------------------------------------------------------------------------------


def checksum(array: np.ndarray) -> str:
    """The float64 sum and the CRC-32 of the bytes: equal outputs, equal text."""
    data = np.ascontiguousarray(array)
    with np.errstate(all="ignore"):
        total = float(np.sum(data, dtype=np.float64))
    return f"sum={total:.6g} crc32={zlib.crc32(data.tobytes()):08x}"


def _label(element_type: Attribute, shape: Sequence[int]) -> str:
    return f"{element_type}[{'x'.join(str(d) for d in shape)}]"


def output_arrays(
    entry: func.FuncOp, outcome: RunOutcome
) -> list[tuple[str, Attribute, np.ndarray]]:
    """`result{i}` for returned values and `arg{i}` for memref arguments."""
    outputs: list[tuple[str, Attribute, np.ndarray]] = []
    for index, (result, result_type) in enumerate(
        zip(outcome.results, entry.function_type.outputs.data, strict=True)
    ):
        element = (
            result_type.get_element_type()
            if isinstance(result_type, tv.TensorViewType | MemRefType)
            else result_type
        )
        outputs.append((f"result{index}", element, result))
    input_types = entry.function_type.inputs.data
    for index, array in sorted(outcome.written.items()):
        memref = input_types[index]
        assert isinstance(memref, MemRefType)
        outputs.append((f"arg{index}", memref.get_element_type(), array))
    return outputs


def write_outputs(
    path: str, outputs: Sequence[tuple[str, Attribute, np.ndarray]]
) -> None:
    try:
        with open(path, "wb") as file:  # a file object: savez adds no suffix
            np.savez(file, **{name: array for name, _, array in outputs})
    except OSError as error:
        raise _error(
            f"cannot open output file: {error.strerror or error}", SourceLocation(path)
        ) from error


def summary(
    entry: func.FuncOp,
    level: Level,
    inputs_from: str,
    outputs: Sequence[tuple[str, Attribute, np.ndarray]],
    unchanged: set[str],
    outcome: RunOutcome,
) -> str:
    lines = [
        f"@{entry.sym_name.data}: {level.value} level, run by {level.executor}",
        f"inputs: {inputs_from}",
    ]
    width = max((len(name) for name, _, _ in outputs), default=0)
    for name, element, array in outputs:
        note = "  (unchanged)" if name in unchanged else ""
        lines.append(
            f"{name:<{width}}  {_label(element, array.shape)}  {checksum(array)}{note}"
        )
    if not outputs:
        lines.append("no outputs")
    if outcome.sim_report is not None:
        report = outcome.sim_report
        lines.append(f"cycles: {report.cycles} (target {report.target})")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------


def _seed(text: str) -> int:
    """A `--random` seed: numpy's generators take non-negative integers only."""
    seed = int(text)
    if seed < 0:
        raise argparse.ArgumentTypeError(f"a seed is >= 0, not {seed}")
    return seed


_seed.__name__ = "int"  # argparse's "invalid int value: 'x'" for non-integers

TIMELINE_FORMATS = ("png", "pdf", "svg")
"""File formats `--timeline` draws (matplotlib's, chosen by the extension)."""


def _timeline_path(path: str) -> str:
    extension = path.rpartition(".")[2].lower() if "." in path else ""
    if extension not in TIMELINE_FORMATS:
        raise argparse.ArgumentTypeError(
            f"'{path}': the file name ends in .{', .'.join(TIMELINE_FORMATS)} "
            "(the format drawn)"
        )
    return path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL_NAME,
        description="Run one function of an MLIR file (tv, tile or ascend_hw level) "
        "on numpy inputs and summarize its outputs.",
        epilog="Input arrays are named arg0, arg1, ... (one per function argument); "
        "outputs result0, result1, ... (returned values) and arg<i> (the final "
        "contents of memref arguments). See docs/cli.md.",
    )
    parser.add_argument("input_file", metavar="FILE", help="the MLIR file ('-': stdin)")
    parser.add_argument(
        "--entry",
        metavar="NAME",
        help="the function to run (default: the only public one)",
    )
    parser.add_argument(
        "--target",
        metavar="T",
        help="target for ascend_hw functions: a name (ascend910b, tiny) or a TOML "
        "file (default: the module's pypto.target, else ascend910b)",
    )
    inputs = parser.add_mutually_exclusive_group()
    inputs.add_argument(
        "--inputs",
        metavar="FILE.npz",
        help="input arrays arg0, arg1, ... (numpy.savez)",
    )
    inputs.add_argument(
        "--random",
        metavar="SEED",
        type=_seed,
        help="reproducible random inputs from SEED (default: --random 0)",
    )
    parser.add_argument(
        "--output", metavar="FILE.npz", help="write result<i> and arg<i> arrays here"
    )
    parser.add_argument(
        "--report",
        choices=("text", "json"),
        help="print the simulator's report (ascend_hw only); json: stdout holds the "
        "report alone and the summary goes to stderr",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        default=None,
        help="print where the simulated time goes per source line, most first, "
        "with hints (ascend_hw only)",
    )
    parser.add_argument(
        "--trace", metavar="FILE.json", help="write a Chrome trace (ascend_hw only)"
    )
    parser.add_argument(
        "--timeline",
        metavar="FILE.png",
        type=_timeline_path,
        help="draw the pipe timeline (ascend_hw only; .png, .pdf or .svg): the "
        "slowest, median and fastest core",
    )
    parser.add_argument(
        "--timeline-all-cores",
        action="store_true",
        default=None,
        help="draw every core in --timeline",
    )
    parser.add_argument(
        "--check",
        nargs="?",
        const="ascend_hw",
        choices=("tile", "ascend_hw"),
        metavar="LEVEL",
        help="lower a tv function with pypto-lower down to LEVEL (tile, or "
        "ascend_hw, the default: the whole pipeline, run on the simulator) and "
        "compare every output with the tv reference; exit 1 when one is outside "
        "the tolerance of its dtype",
    )
    parser.add_argument(
        "--lower-options",
        metavar="OPTIONS",
        default="",
        help="options of pypto-lower for --check, as in -p: 'tile-sizes=8,64 "
        "max-cores=2' (the target comes from --target)",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the Python traceback of internal errors",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"{TOOL_NAME} {version('pypto-mlir')} built on xdsl version "
        f"{version('xdsl')}",
    )
    return parser


_SIM_ONLY_FLAGS = (
    ("report", "--report"),
    ("profile", "--profile"),
    ("trace", "--trace"),
    ("timeline", "--timeline"),
    ("timeline_all_cores", "--timeline-all-cores"),
)


def _target_name(args: argparse.Namespace, module: ModuleOp) -> str:
    return resolve_target(module, args.target)


def _check_flags(args: argparse.Namespace, entry: func.FuncOp, level: Level) -> None:
    """Simulator flags need a simulator run; --check needs a tv function."""
    if args.check is not None and level is not Level.TV:
        raise _op_error(
            entry,
            f"--check lowers a tv-level function and compares it with the tv "
            f"reference, but @{entry.sym_name.data} is a {level.value}-level function",
        )
    if args.lower_options and args.check is None:
        raise _op_error(entry, "--lower-options is for --check (the lowering it runs)")
    if level is Level.HW or args.check == Level.HW.value:
        return
    given = [flag for attr, flag in _SIM_ONLY_FLAGS if getattr(args, attr) is not None]
    if args.target is not None and args.check is None:
        given.append("--target")
    if given:
        if args.check is not None:
            raise _op_error(
                entry,
                f"{', '.join(given)} need{'s' if len(given) == 1 else ''} a simulator "
                f"run, but --check={args.check} stops at the {args.check} level",
            )
        raise _op_error(
            entry,
            f"{', '.join(given)} need{'s' if len(given) == 1 else ''} a simulator run, "
            f"but @{entry.sym_name.data} is a {level.value}-level function, run by "
            f"{level.executor}",
        )


def _write_sim_files(args: argparse.Namespace, report: Any) -> None:
    from pypto_mlir.sim import write_chrome_trace, write_timeline_png

    if args.timeline_all_cores and args.timeline is None:
        raise _error("--timeline-all-cores is for --timeline (the picture it draws)")

    def timeline(report: Any, path: str) -> None:
        write_timeline_png(report, path, all_cores=bool(args.timeline_all_cores))

    for path, writer in (
        (args.trace, write_chrome_trace),
        (args.timeline, timeline),
    ):
        if path is None:
            continue
        try:
            writer(report, path)
        except OSError as error:
            raise _error(
                f"cannot open output file: {error.strerror or error}",
                SourceLocation(path),
            ) from error


def run(
    args: argparse.Namespace, sources: SourceManager, stdout: TextIO, stderr: TextIO
) -> None:
    """Everything after argument parsing; raises `DiagnosticError`."""
    path = None if args.input_file == "-" else args.input_file
    source = read_source(path)
    sources.add(source.name, source.text)
    module = parse_chunk(default_context(), SourceChunk(source.text, 1), source.name)
    verify(module)
    entry = select_entry(module, args.entry, source.name)
    level = function_level(module, entry)
    _check_flags(args, entry, level)
    target = None
    if level is Level.HW:
        from pypto_mlir.targets import TargetError, load_target

        try:
            target = load_target(_target_name(args, module))
        except TargetError as error:
            raise _error(str(error)) from error
    pipeline = _lower_pipeline(args, sources) if args.check is not None else None
    specs = argument_specs(entry)
    if args.inputs is not None:
        values = load_inputs(args.inputs, entry, specs)
        inputs_from = args.inputs
    else:
        seed = 0 if args.random is None else args.random
        values = random_inputs(entry, specs, seed)
        inputs_from = f"random (seed {seed})" if specs else "none"
    if pipeline is not None:
        printer = DiagnosticPrinter(stderr, sources, TOOL_NAME)
        _run_check(args, module, entry, values, inputs_from, pipeline, stdout, printer)
        return
    originals = {i: v.copy() for i, v in enumerate(values) if isinstance(v, np.ndarray)}
    outcome = run_function(module, entry, level, values, target)
    outputs = output_arrays(entry, outcome)
    unchanged = {
        f"arg{i}"
        for i, array in outcome.written.items()
        if i in originals
        and originals[i].tobytes() == np.ascontiguousarray(array).tobytes()
    }
    if args.output is not None:
        write_outputs(args.output, outputs)
    if outcome.sim_report is not None:
        _write_sim_files(args, outcome.sim_report)
    text = summary(entry, level, inputs_from, outputs, unchanged, outcome)
    _print_sim(args, text, outcome.sim_report, stdout, stderr)


def _print_sim(
    args: argparse.Namespace, text: str, report: Any, stdout: TextIO, stderr: TextIO
) -> None:
    """The summary `text`, then what --report and --profile ask for: with
    --report=json stdout holds the report alone and the rest goes to stderr."""
    extra = ""
    if args.report == "text":
        report_text: str = report.to_text()
        extra += report_text if report_text.endswith("\n") else report_text + "\n"
    if args.profile:
        from pypto_mlir.sim.profile import profile
        from pypto_mlir.sim.profile_text import profile_text

        extra += "\n" + profile_text(profile(report))
    if args.report == "json":
        stderr.write(text + extra)
        stdout.write(report.to_json() + "\n")
        return
    stdout.write(text + extra)


# --------------------------------------------------------------------------------------
# --check: lower a tv function and compare it with the tv reference
# --------------------------------------------------------------------------------------


def _lower_pipeline(args: argparse.Namespace, sources: SourceManager) -> Any:
    """`pypto-lower` with --lower-options and --target, checked like `-p` text."""
    from pypto_mlir.cli.pass_pipeline import PIPELINE_SOURCE_NAME, build_pass_pipeline
    from pypto_mlir.pipelines import LowerPipeline, get_all_pipelines
    from pypto_mlir.targets import TargetError, load_target

    options = args.lower_options.strip()
    if args.target is not None:
        try:
            load_target(args.target)
        except TargetError as error:
            raise _error(str(error)) from error
        if re.search(r"(^|\s)target\s*=", options):
            raise _error(
                "give the target with --target or in --lower-options, not both"
            )
        options = f"{options} target={_quoted(args.target)}".strip()
    text = f"{LowerPipeline.name}{{{options}}}" if options else LowerPipeline.name
    sources.add(PIPELINE_SOURCE_NAME, text)
    (pipeline,) = build_pass_pipeline(text, get_all_pipelines())
    assert isinstance(pipeline, LowerPipeline)
    return pipeline


def _quoted(value: str) -> str:
    """A pipeline option value: bare when it is a plain word, else quoted."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _run_check(
    args: argparse.Namespace,
    module: ModuleOp,
    entry: func.FuncOp,
    values: list[Any],
    inputs_from: str,
    pipeline: Any,
    stdout: TextIO,
    printer: DiagnosticPrinter,
) -> None:
    """Lower, run both levels, print the outputs and a verdict per output;
    a `DiagnosticError` at the entry when one is outside its tolerance. The
    passes' warnings go to `printer`, their remarks (tile sizes) are dropped."""
    from pypto_mlir.check import compare_runs, lower

    name = entry.sym_name.data
    stderr = printer.stream

    def warn(diagnostic: Diagnostic) -> None:
        if diagnostic.severity is not Severity.REMARK:
            printer(diagnostic)

    with diagnostic_handler(warn):
        lowered = lower(module, args.check, pipeline)
    target = lowered.attributes.get("pypto.target")
    target_name = target.data if isinstance(target, StringAttr) else "?"
    level = Level(args.check)
    with capture_op_errors():
        try:
            comparisons, run = compare_runs(module, lowered, name, values)
        except (InterpretationError, ValueError) as error:
            raise _interpretation_diagnostic(error, entry) from error
        except SimError as error:
            raise DiagnosticError(sim_diagnostic(error)) from error
    outputs = [(f"result{c.index}", c.element_type, c.actual) for c in comparisons]
    if args.output is not None:
        write_outputs(args.output, outputs)
    if run.sim_report is not None:
        from pypto_mlir.roofline import roofline_bound
        from pypto_mlir.targets import TargetError, load_target

        try:
            chip = load_target(target_name)
        except TargetError:
            chip = None  # no target recorded: no roofline
        if chip is not None:
            run.sim_report.roofline = roofline_bound(module, name, chip)
        _write_sim_files(args, run.sim_report)
    lines = [
        f"@{name}: tv level, lowered by {pipeline_text(pipeline)} to the "
        f"{level.value} level for {target_name} and run by {level.executor}",
        f"inputs: {inputs_from}",
    ]
    width = max((len(n) for n, _, _ in outputs), default=0)
    for (output_name, element, array), comparison in zip(
        outputs, comparisons, strict=True
    ):
        lines.append(
            f"{output_name:<{width}}  {_label(element, array.shape)}  {checksum(array)}"
        )
        verdict = "ok" if comparison.ok else "MISMATCH"
        lines.append(
            f"{'':<{width}}  vs tv reference: {comparison.error_text()}: {verdict}"
        )
    failed = [c for c in comparisons if not c.ok]
    lines.append(
        f"check: {'FAILED' if failed else 'ok'} ({len(comparisons) - len(failed)} of "
        f"{len(comparisons)} outputs within tolerance of the tv reference)"
    )
    if run.sim_report is not None:
        lines.append(f"cycles: {run.sim_report.cycles} (target {target_name})")
    text = "\n".join(lines) + "\n"
    if run.sim_report is not None:
        _print_sim(args, text, run.sim_report, stdout, stderr)
    else:
        stdout.write(text)
    if failed:
        first = failed[0]
        raise _op_error(
            entry,
            f"--check: result{first.index} ({_label(first.element_type, first.expected.shape)}) "
            f"of the {level.value} level differs from the tv reference: "
            f"{first.mismatches} of {first.expected.size} elements outside the "
            f"tolerance; {first.error_text()}",
        )


def pipeline_text(pipeline: Any) -> str:
    """`pypto-lower{target=tiny tile-sizes=8,64}`: the pipeline with the options
    that differ from their defaults."""
    from dataclasses import fields

    from pypto_mlir.tune.applied import option_text

    parts = []
    for item in fields(pipeline):
        value = getattr(pipeline, item.name)
        if value == item.default:
            continue
        parts.append(option_text(item.name, value))
    return f"{pipeline.name}{{{' '.join(parts)}}}" if parts else pipeline.name


def main(argv: Sequence[str] | None = None) -> int:
    """Run `pypto-run` with `argv` (default: the command line); the exit status."""
    args = build_parser().parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    sources = SourceManager()
    printer = DiagnosticPrinter(sys.stderr, sources, TOOL_NAME)
    return run_tool(
        TOOL_NAME,
        lambda: run(args, sources, sys.stdout, sys.stderr),
        printer,
        args.debug,
    )


if __name__ == "__main__":
    sys.exit(main())
