"""The roofline bound of a `tv` kernel on a target: the fewest cycles the chip
needs for the kernel's problem, whatever the compiler does.

The bound is the slowest of the chip's resources, each working at its peak on
the least work the problem needs (docs/pipeline.md, *Roofline*):

- **cube**: the multiply-accumulates of every `tv.matmul` (batch x M x N x K) at
  `cube.macs_per_cycle` of its input type, on every core;
- **vector**: every other `tv` op passes over its largest operand once per
  vector instruction it needs (one for most; the functions the vector unit has
  no instruction for count the steps tile-to-hw computes them in: softmax's
  max, subtract, exp, sum, divide, sigmoid's four, tanh's six, gelu's eight,
  and `x * sigmoid(x)` as silu's four; sums and softmax of f16/bf16 add the
  casts to and from f32 they accumulate in), in repeats of
  `vector.repeat_bytes` at the target's cycles per repeat for that instruction
  (`vector.cycles_per_repeat`, else the default), on every core;
- **data movement, per path**: every tensor argument is read from GM once (the
  part its views cover when it is read through views) and every result written
  once, on the path its consumer or producer needs
  (matmul operands GM -> L1, others GM -> UB; matmul results L0C -> GM, others
  UB -> GM); every matmul operand moves L1 -> L0A/L0B once; a matmul result
  that a vector op reads moves L0C -> UB and a computed matmul operand UB -> L1
  (no GM round trip). Each path at its `dma` bandwidth on every core;
- **GM**: all GM bytes at the chip's shared HBM bandwidth
  (`memories.gm.bandwidth`).

Intermediate tensors are assumed fused (no GM traffic), so the bound is a
lower bound on any schedule of the kernel's ops.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import prod

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.traits import SymbolTable

import pypto_mlir.op_facts as op_facts
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.sim.report import RooflineBound
from pypto_mlir.targets import Target
from pypto_mlir.targets.cost import cycles_per_repeat

STORAGE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "i16": 2, "i32": 4}
"""Bytes per element in GM."""

_VECTOR_TYPE = {"f16": "f16", "bf16": "f32", "f32": "f32", "i8": "i16"}
"""The type a vector op computes in, when not its own (docs/tiling.md)."""

OTHER_STEPS = {
    "softmax": ("reduce_max", "sub", "exp", "reduce_sum", "div"),
    "fill": ("dup",),
    "transpose": ("gather",),
    "cast": ("cast",),
    "select": op_facts.SELECT_STEPS,
}
"""The vector instructions of the tv ops outside the elementwise and reduction
families (whose steps `pypto_mlir.op_facts` gives): the sequences tile-to-hw
emits (docs/tile_to_hw.md), the shortest it knows."""

_NARROW_FLOATS = ("f16", "bf16")

_VIEWS = (tv.ViewOp, tv.ReshapeOp)

NOT_VECTOR_OPS = (tv.MatmulOp, tv.ViewOp, tv.ReshapeOp, tv.DimOp)
"""The tv ops that take no vector steps: the cube's matmul, the views (a
reshape too: it is a view of its contiguous operand)."""

UNMODELLED_OPS = tv.SPARSE_OPS
"""The tv ops this roofline has no model of: the sparse ones, whose work is
their stored entries and gathered rows, known only at run time
(`pypto_mlir.sparse_roofline` bounds one run of them). `roofline` raises
ValueError naming such an op, so `roofline_bound` gives no bound."""


@dataclass(frozen=True)
class Bound:
    """The cycles one resource needs for its share of the problem."""

    resource: str
    """`cube`, `vector`, a DMA path like `gm->ub`, or `gm` (shared HBM)."""
    work: float
    unit: str
    """What `work` counts: `MAC`, `cycles` (vector, at one core), `B`."""
    rate: float
    """`work` per cycle of the whole chip."""

    @property
    def cycles(self) -> float:
        return self.work / self.rate if self.work else 0.0


@dataclass(frozen=True)
class Roofline:
    """Every resource's bound for one kernel on one target."""

    target: str
    clock_ghz: float
    bounds: tuple[Bound, ...]

    @property
    def limit(self) -> Bound:
        """The slowest resource: the roofline bound."""
        return max(self.bounds, key=lambda b: b.cycles)

    @property
    def cycles(self) -> float:
        return self.limit.cycles

    @property
    def microseconds(self) -> float:
        return self.cycles / (self.clock_ghz * 1e3)

    @property
    def summary(self) -> RooflineBound:
        """The bound as the simulator's report carries it (`Report.roofline`)."""
        return RooflineBound(self.cycles, self.limit.resource)

    @property
    def flops(self) -> float:
        """2 x MACs of the cube work (for TFLOPS figures)."""
        return sum(2 * b.work for b in self.bounds if b.resource == "cube")


def _tensor(value_type: Attribute) -> tv.TensorViewType | None:
    return value_type if isinstance(value_type, tv.TensorViewType) else None


def _elements(value: SSAValue) -> int:
    tensor = _tensor(value.type)
    return prod(tensor.get_shape()) if tensor is not None else 1


def _dtype(value_type: Attribute) -> str:
    tensor = _tensor(value_type)
    return str(tensor.element_type if tensor is not None else value_type)


def _users(value: SSAValue) -> Iterable[tuple[Operation, int]]:
    """The uses of `value`, looking through views (which move no data)."""
    for use in value.uses:
        if isinstance(use.operation, _VIEWS):
            yield from _users(use.operation.results[0])
        else:
            yield use.operation, use.index


def _source(value: SSAValue) -> SSAValue:
    """`value` with the views it is made of looked through."""
    while isinstance(value.owner, _VIEWS):
        value = value.owner.operands[0]
    return value


class Work:
    """Accumulates work per resource while walking a kernel."""

    def __init__(self, target: Target):
        self.target = target
        self.macs: dict[str, float] = {}
        self.vector_cycles = 0.0
        self.path_bytes: dict[tuple[str, str], float] = {}

    def move(self, src: str, dst: str, nbytes: float) -> None:
        self.path_bytes[(src, dst)] = self.path_bytes.get((src, dst), 0.0) + nbytes

    def vector(self, instruction: str, elements: int, dtype: str) -> None:
        compute = _VECTOR_TYPE.get(dtype, dtype)
        width = STORAGE_BYTES.get(compute, 4)
        per_repeat = cycles_per_repeat(self.target, instruction, 8 * width)
        self.vector_cycles += (
            elements * width / self.target.vector.repeat_bytes * per_repeat
        )


def _is_matmul_operand(op: Operation) -> bool:
    return isinstance(op, tv.MatmulOp)


def _vector_op(work: Work, op: Operation) -> None:
    name = op.name.removeprefix("tv.")
    tensors = [v for v in (*op.operands, *op.results) if _tensor(v.type)]
    if not tensors:
        return
    elements = max(_elements(v) for v in tensors)
    dtype = _dtype(tensors[0].type)
    if isinstance(op, tv.CastOp):
        widths = [STORAGE_BYTES.get(_dtype(v.type), 4) for v in tensors]
        dtype = _dtype(tensors[widths.index(max(widths))].type)
    accumulates = name in op_facts.REDUCE and op_facts.REDUCE[name].accumulates
    if (accumulates or isinstance(op, tv.SoftmaxOp)) and dtype in _NARROW_FLOATS:
        # Sums of narrow floats accumulate in f32 (docs/tensor_view.md): one
        # cast in, the steps in f32 and, for softmax, one cast back.
        work.vector("cast", elements, dtype)
        dtype = "f32"
        if isinstance(op, tv.SoftmaxOp):
            work.vector("cast", elements, dtype)
    if isinstance(op, tv.SigmoidOp) and any(
        tv.silu_input(use.operation) is not None for use in op.result.uses
    ):
        return  # counted as the silu of its product
    if tv.silu_input(op) is not None:
        name = "silu"
    scalar = any(_tensor(v.type) is None for v in op.operands)
    for step in vector_steps(name, scalar):
        work.vector(step, elements, dtype)


def vector_steps(name: str, scalar_operand: bool) -> tuple[str, ...]:
    """The vector instructions of the op `name` (`silu` for the product of a
    silu; a binary op with a scalar operand has its scalar form), from its
    facts; an op without them is an error naming it."""
    if name in op_facts.UNARY:
        return op_facts.UNARY[name].vector_steps
    if name in op_facts.BINARY:
        facts = op_facts.BINARY[name]
        return facts.scalar_steps if scalar_operand else facts.vector_steps
    if name in op_facts.REDUCE:
        return op_facts.REDUCE[name].vector_steps
    if name in OTHER_STEPS:
        return OTHER_STEPS[name]
    raise ValueError(f"the roofline has no vector steps for {name}")


def ops_vector_cycles(ops: Iterable[Operation], target: Target) -> float:
    """The vector unit's cycles for the tv `ops` over their whole tensors, as
    the roofline counts them (`vector_steps`, narrow sums in f32): what
    tv-to-tile's row-fusion estimate charges a row epilogue."""
    work = Work(target)
    for op in ops:
        _vector_op(work, op)
    return work.vector_cycles


def roofline(module: ModuleOp, name: str, target: Target) -> Roofline:
    """The roofline of `func.func @name` (tv level) of `module` on `target`."""
    function = SymbolTable.lookup_symbol(module, name)
    if not isinstance(function, func.FuncOp):
        raise ValueError(f"no func.func @{name} in the module")
    work = Work(target)
    for op in function.walk():
        if isinstance(op, UNMODELLED_OPS):
            raise ValueError(
                f"the roofline has no model of {op.name} (its work depends on "
                "the stored entries: pypto_mlir.sparse_roofline bounds a run)"
            )
        if isinstance(op, tv.MatmulOp):
            lhs, rhs = _tensor(op.lhs.type), _tensor(op.rhs.type)
            out = _tensor(op.results[0].type)
            assert lhs is not None and rhs is not None and out is not None
            k = lhs.get_shape()[-2 if op.transpose_a else -1]
            macs = prod(out.get_shape()) * k
            dtype = str(lhs.element_type)
            work.macs[dtype] = work.macs.get(dtype, 0.0) + macs
            for operand, l0 in ((op.lhs, "l0a"), (op.rhs, "l0b")):
                nbytes = _elements(operand) * STORAGE_BYTES[_dtype(operand.type)]
                work.move("l1", l0, nbytes)
                if not isinstance(_source(operand), BlockArgument):
                    work.move("ub", "l1", nbytes)  # computed on the vector unit
            result = op.results[0]
            size = _elements(result) * STORAGE_BYTES[_dtype(result.type)]
            if any(not isinstance(u, func.ReturnOp) for u, _ in _users(result)):
                work.move("l0c", "ub", size)
            if any(isinstance(u, func.ReturnOp) for u, _ in _users(result)):
                work.move("l0c", "gm", size)
        elif op.name.startswith("tv.") and not isinstance(op, NOT_VECTOR_OPS):
            _vector_op(work, op)
            for result in op.results:
                if any(isinstance(u, func.ReturnOp) for u, _ in _users(result)):
                    work.move("ub", "gm", _elements(result) * _storage(result))
    for argument in function.body.block.args:
        if _tensor(argument.type) is None:
            continue
        users = [u for u, _ in _users(argument)]
        size = _read_elements(argument) * _storage(argument)
        if any(_is_matmul_operand(u) for u in users):
            work.move("gm", "l1", size)
        if any(not _is_matmul_operand(u) for u in users):
            work.move("gm", "ub", size)
    return bounds_of(work, target)


def roofline_bound(module: ModuleOp, name: str, target: Target) -> RooflineBound | None:
    """`roofline(...).summary`, or None for a kernel the roofline cannot bound
    (an op it has no vector steps for, a path the target lacks)."""
    try:
        return roofline(module, name, target).summary
    except ValueError:
        return None


def _read_elements(value: SSAValue) -> int:
    """The elements of `value` its users read: all of them, or only what the
    views it is read through cover (a strided view of a big tensor reads the
    view), at most the whole tensor."""
    read = 0
    for use in value.uses:
        if isinstance(use.operation, _VIEWS):
            read += _read_elements(use.operation.results[0])
        else:
            return _elements(value)
    return min(read, _elements(value))


def _storage(value: SSAValue) -> int:
    return STORAGE_BYTES[_dtype(value.type)]


def bounds_of(work: Work, target: Target) -> Roofline:
    cores = target.cores
    bounds: list[Bound] = []
    macs = sum(work.macs.values())
    if macs:
        # Cycles at each input type's rate, expressed as MACs at the fp16 rate.
        cycles = sum(m / target.cube.macs_per_cycle[t] for t, m in work.macs.items())
        bounds.append(Bound("cube", macs, "MAC", macs / cycles * cores))
    if work.vector_cycles:
        bounds.append(Bound("vector", work.vector_cycles, "cycles", cores))
    gm_bytes = 0.0
    for (src, dst), nbytes in sorted(work.path_bytes.items()):
        path = target.dma.get((src, dst))
        if path is None:
            raise ValueError(f"target {target.name} has no {src}->{dst} path")
        bounds.append(Bound(f"{src}->{dst}", nbytes, "B", path.bytes_per_cycle * cores))
        if "gm" in (src, dst):
            gm_bytes += nbytes
    if gm_bytes:
        bounds.append(Bound("gm", gm_bytes, "B", target.gm_bytes_per_cycle))
    return Roofline(target.name, target.clock_ghz, tuple(bounds))
