"""hw-insert-sync on the simulator: its flags make kernels race-free with the numerics
of a fully serialised run, each flag it places is needed, and it places no more
flags per loop iteration than the hand-written examples (examples/hw).

The examples are re-synchronised from scratch: hw-strip-sync removes their flags,
hw-insert-sync computes new ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from example_kernels import example_kernel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from pypto_mlir.cli.source import SourceChunk, default_context, load_module, parse_chunk
from pypto_mlir.diagnostics import diagnostic_handler, op_location
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw import HwRunResult, run_hw_function
from pypto_mlir.passes.hw_insert_sync import (
    HwInsertSyncPass,
    HwStripSyncPass,
    resynchronise,
)
from pypto_mlir.passes.sync_frames import Sync
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.sim import DeadlockError, EventError, RaceError, SimError
from pypto_mlir.targets import load_target

EXAMPLES = Path(__file__).parents[2] / "examples" / "hw"
TARGET = load_target("ascend910b")


def _vadd_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((256, 1024)).astype(np.float16) for _ in range(2))
    return [x, y, np.zeros_like(x)]


def _matmul_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((128, 128)).astype(np.float16) for _ in range(2))
    return [a, b, np.zeros((128, 128), np.float32)]


EXAMPLE_KERNELS: dict[str, tuple[str, Callable[[], list[np.ndarray]]]] = {
    "vadd_single.mlir": ("vadd", _vadd_inputs),
    "vadd_double.mlir": ("vadd", _vadd_inputs),
    "matmul.mlir": ("matmul", _matmul_inputs),
}


def _parse(text: str) -> ModuleOp:
    return parse_chunk(default_context(), SourceChunk(text, 1), "test.mlir")


def _parse_twice(text: str) -> tuple[ModuleOp, ModuleOp]:
    """Two modules of `text` (the serialised reference and the one to
    synchronise): the second a clone, the same ops and locations, made in an
    eighth of a parse's time (the random programs parse thousands of ops)."""
    module = _parse(text)
    return module, module.clone()


def _serialise(module: ModuleOp) -> None:
    """Make every instruction wait for all earlier ones: a race-free reference."""
    HwStripSyncPass().apply(default_context(), module)
    for op in list(module.walk()):
        if isinstance(op, hw.HwInstruction) and op.read_buffers() + op.write_buffers():
            block = op.parent_block()
            assert block is not None
            block.insert_op_after(hw.PipeBarrierOp(hw.Pipe.ALL), op)


def _run(module: ModuleOp, name: str, args: list) -> HwRunResult:
    return run_hw_function(module, name, args, TARGET)


def _bits(arrays: list[np.ndarray]) -> list[bytes]:
    return [a.tobytes() for a in arrays]


def _loc(op: Operation) -> str:
    location = op_location(op)
    return "" if location is None else str(location)


def _flag_places(sync: Sync) -> set[str]:
    """Where a flag is: the ops it orders and its own set/wait ops (which the
    pass places at them). Taken before the flag is removed."""
    return {_loc(sync.producer), _loc(sync.consumer), *(_loc(op) for op in sync.ops)}


def _check_missing_flag_error(
    error: SimError, sync: Sync, places: set[str], module: ModuleOp
) -> None:
    """The error a removed flag must cause: a race, a deadlock or an event
    misuse (not any SimError: an out-of-bounds access says nothing of the
    flag), located at the flag (its ops, what it orders) or, for a race,
    between an op on its source pipe and one on its destination pipe (a flag
    set after the last of a pipe's loads orders the earlier ones too)."""
    flag = f"{sync.src} -> {sync.dst} at {sorted(places)}"
    assert isinstance(error, RaceError | DeadlockError | EventError), (
        f"{flag}: {type(error).__name__}: {error}"
    )
    assert error.locs and all(error.locs), f"{flag}: unlocated error {error}"
    if places & set(error.locs):
        return
    assert isinstance(error, RaceError), f"{flag}: {error}"
    pipes_at: dict[str, set[hw.Pipe]] = {}
    for op in module.walk():
        if isinstance(op, hw.HwInstruction):
            pipes_at.setdefault(_loc(op), set()).add(op.pipe)
    first, second = (
        pipes_at.get(error.first_loc, set()),
        pipes_at.get(error.second_loc, set()),
    )
    assert (sync.src in first and sync.dst in second) or (
        sync.dst in first and sync.src in second
    ), f"{flag}: the race is not across the flag's pipes: {error}"


def flags_that_change_nothing(
    lowered: ModuleOp,
    run: Callable[[ModuleOp], bytes],
    unexercised: list[int] | None = None,
) -> tuple[int, list[int]]:
    """Remove each set/wait pair hw-insert-sync gave `lowered` in turn and run
    the rest (`run` gives the output bytes): a missing flag must cause a race,
    a deadlock or an event misuse at it (`_check_missing_flag_error`) or
    change the output. The number of flags and those whose removal changed
    nothing.

    With `unexercised`, a flag whose set in its own block can go alone with
    no error or change (it never fires on these inputs: its path does not
    run) is listed there instead: the inputs cannot show it needed."""
    reference = run(lowered.clone())
    count = len(resynchronise(lowered.clone()))
    kept: list[int] = []
    for index in range(count):
        module = lowered.clone()
        sync = resynchronise(module)[index]
        places = _flag_places(sync)
        for op in sync.ops:
            Rewriter.erase_op(op)
        try:
            if run(module) != reference:
                continue
        except SimError as error:
            _check_missing_flag_error(error, sync, places, module)
            continue
        if unexercised is not None and _never_fires(lowered, index, run, reference):
            unexercised.append(index)
        else:
            kept.append(index)
    return count, kept


def _never_fires(
    lowered: ModuleOp, index: int, run: Callable[[ModuleOp], bytes], reference: bytes
) -> bool:
    """Whether flag `index`'s set in its own block (the last set op: a
    loop-carried flag's prologue set comes first) never fires on `run`'s
    inputs: without it alone nothing waits in vain and nothing changes."""
    module = lowered.clone()
    sync = resynchronise(module)[index]
    Rewriter.erase_op([op for op in sync.ops if isinstance(op, hw.SetFlagOp)][-1])
    try:
        return run(module) == reference
    except SimError:
        return False


def _loop_flags(module: ModuleOp) -> list[int]:
    """Flag ops directly in each scf.for body, outermost loop first."""
    return [
        sum(isinstance(o, hw.FlagOp) for o in op.body.block.ops)
        for op in module.walk()
        if isinstance(op, scf.ForOp)
    ]


# --------------------------------------------------------------------------------------
# The hand-written examples, re-synchronised
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("file", EXAMPLE_KERNELS)
def test_resynchronised_example_is_race_free_and_exact(file: str) -> None:
    name, inputs = EXAMPLE_KERNELS[file]
    hand = _run(load_module(str(EXAMPLES / file)), name, inputs())
    module = load_module(str(EXAMPLES / file))
    resynchronise(module)
    ours = _run(module, name, inputs())
    assert _bits(ours.outputs) == _bits(hand.outputs)
    # The same overlap of the pipes: never slower than the hand-written flags.
    assert ours.report.cycles <= hand.report.cycles


# Flag ops (a set and a wait each) per loop iteration: the pass's and the
# hand-written ones. The pass needs no more; it also needs fewer prologue sets and
# drain waits (forward flags at the top of the body when the source pipe has no
# work before the loop).
FLAGS_PER_ITERATION = {
    "vadd_single.mlir": (6, 6),  # mte3 -> mte2 (WAR on x's tile), mte2 -> v, v -> mte3
    "vadd_double.mlir": (12, 12),  # the same for ping and for pong
    "matmul.mlir": (
        12,
        12,
    ),  # mte1 -> mte2, mte2 -> mte1, m -> mte1, mte1 -> m, fix -> m, m -> fix
}


@pytest.mark.parametrize("file", EXAMPLE_KERNELS)
def test_flags_per_iteration(file: str) -> None:
    hand = load_module(str(EXAMPLES / file))
    module = load_module(str(EXAMPLES / file))
    resynchronise(module)
    ours, theirs = _loop_flags(module), _loop_flags(hand)
    print(f"{file}: flag ops per iteration {ours} (hand-written {theirs})")
    assert (ours[0], theirs[0]) == FLAGS_PER_ITERATION[file]
    total = sum(isinstance(op, hw.FlagOp) for op in module.walk())
    assert total <= sum(isinstance(op, hw.FlagOp) for op in hand.walk())


def _removal_cases() -> list[tuple[str, int]]:
    cases = []
    for file in EXAMPLE_KERNELS:
        module = load_module(str(EXAMPLES / file))
        cases += [(file, i) for i in range(len(resynchronise(module)))]
    return cases


@pytest.mark.parametrize(("file", "index"), _removal_cases())
def test_every_inserted_flag_is_needed(file: str, index: int) -> None:
    """Without any one of the pass's set/wait pairs (with its prologue and drain),
    the simulator reports a race, a deadlock or an event misuse, or the result
    changes."""
    name, inputs = EXAMPLE_KERNELS[file]
    reference = _run(load_module(str(EXAMPLES / file)), name, inputs()).outputs
    module = load_module(str(EXAMPLES / file))
    sync = resynchronise(module)[index]
    places = _flag_places(sync)
    for op in sync.ops:
        Rewriter.erase_op(op)
    try:
        outputs = _run(module, name, inputs()).outputs
    except SimError as error:
        _check_missing_flag_error(error, sync, places, module)
        return
    assert _bits(outputs) != _bits(reference), f"{sync.src} -> {sync.dst} not needed"


# --------------------------------------------------------------------------------------
# Shapes the examples do not have
# --------------------------------------------------------------------------------------

NESTED_MATMUL = """
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @mm(%a: memref<128x256xf16>, %b: memref<256x128xf16>, %c: memref<128x128xf32>) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %a1 = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<32x64xf16, l1, nz>
    %b1 = ascend_hw.alloc [4096, 20480) : !ascend_hw.buf<64x128xf16, l1, nz>
    %a0 = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<32x64xf16, l0a, nz>
    %b0 = ascend_hw.alloc [0, 16384) : !ascend_hw.buf<64x128xf16, l0b, nz>
    %acc = ascend_hw.alloc [0, 16384) : !ascend_hw.buf<32x128xf32, l0c, nz>
    scf.for %m = %c0 to %c128 step %c32 {
      ascend_hw.nd2nz %a[%m, %c0] -> %a1[%c0, %c0] {rows = 32, cols = 64} : memref<128x256xf16> -> !ascend_hw.buf<32x64xf16, l1, nz>
      ascend_hw.nd2nz %b[%c0, %c0] -> %b1[%c0, %c0] {rows = 64, cols = 128} : memref<256x128xf16> -> !ascend_hw.buf<64x128xf16, l1, nz>
      ascend_hw.load_l0 %a1[%c0, %c0] -> %a0[%c0, %c0] {rows = 32, cols = 64} : !ascend_hw.buf<32x64xf16, l1, nz> -> !ascend_hw.buf<32x64xf16, l0a, nz>
      ascend_hw.load_l0 %b1[%c0, %c0] -> %b0[%c0, %c0] {rows = 64, cols = 128} : !ascend_hw.buf<64x128xf16, l1, nz> -> !ascend_hw.buf<64x128xf16, l0b, nz>
      ascend_hw.mmad %a0, %b0 -> %acc {m = 32, n = 128, k = 64} : !ascend_hw.buf<32x64xf16, l0a, nz>, !ascend_hw.buf<64x128xf16, l0b, nz> -> !ascend_hw.buf<32x128xf32, l0c, nz>
      scf.for %k = %c64 to %c256 step %c64 {
        ascend_hw.nd2nz %a[%m, %k] -> %a1[%c0, %c0] {rows = 32, cols = 64} : memref<128x256xf16> -> !ascend_hw.buf<32x64xf16, l1, nz>
        ascend_hw.nd2nz %b[%k, %c0] -> %b1[%c0, %c0] {rows = 64, cols = 128} : memref<256x128xf16> -> !ascend_hw.buf<64x128xf16, l1, nz>
        ascend_hw.load_l0 %a1[%c0, %c0] -> %a0[%c0, %c0] {rows = 32, cols = 64} : !ascend_hw.buf<32x64xf16, l1, nz> -> !ascend_hw.buf<32x64xf16, l0a, nz>
        ascend_hw.load_l0 %b1[%c0, %c0] -> %b0[%c0, %c0] {rows = 64, cols = 128} : !ascend_hw.buf<64x128xf16, l1, nz> -> !ascend_hw.buf<64x128xf16, l0b, nz>
        ascend_hw.mmad %a0, %b0 -> %acc {m = 32, n = 128, k = 64, accumulate} : !ascend_hw.buf<32x64xf16, l0a, nz>, !ascend_hw.buf<64x128xf16, l0b, nz> -> !ascend_hw.buf<32x128xf32, l0c, nz>
      }
      ascend_hw.fixpipe %acc[%c0, %c0] -> %c[%m, %c0] {rows = 32, cols = 128} : !ascend_hw.buf<32x128xf32, l0c, nz> -> memref<128x128xf32>
    }
    func.return
  }
}
"""

# Each iteration uses its own row of the tiles: no dependency crosses iterations,
# but MTE2 running ahead of the slow vector chain would set mte2 -> v twice before
# V waits once. The pass orders the store before the next load to prevent it.
MOVING_SLOTS = """
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @slots(%x: memref<8x1024xf16>, %z: memref<8x1024xf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %in = ascend_hw.alloc [0, 16384) : !ascend_hw.buf<8x1024xf16, ub>
    %out = ascend_hw.alloc [16384, 32768) : !ascend_hw.buf<8x1024xf16, ub>
    scf.for %i = %c0 to %c8 step %c1 {
      %a = ascend_hw.subview %in[%i, %c0] : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      %b = ascend_hw.subview %out[%i, %c0] : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.dma_load %x[%i, %c0] -> %a {bursts = 1, burst_bytes = 2048} : memref<8x1024xf16> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vexp %a -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
"""
# The vector chain runs four times over (15 ops each) so that V is slower than
# MTE2 (a load pays the 1295-cycle GM latency): only then does MTE2 run ahead
# and the mte3 -> mte2 flag matter.
_SLOT_CHAIN = """      ascend_hw.vabs %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vsqrt %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vexp %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vln %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vabs %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vsqrt %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vexp %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vln %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vabs %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vsqrt %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vexp %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vln %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vsqrt %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vexp %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vln %b -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
"""
MOVING_SLOTS += (
    4 * _SLOT_CHAIN
    + """      ascend_hw.dma_store %b -> %z[%i, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<1024xf16, ub> -> memref<8x1024xf16>
    }
    func.return
  }
}
"""
)

BRANCHES = """
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @branches(%x: memref<64x1024xf16>, %z: memref<64x1024xf16>, %n: index) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %t = ascend_hw.alloc [0, 16384) : !ascend_hw.buf<8x1024xf16, ub>
    %u = ascend_hw.alloc [16384, 32768) : !ascend_hw.buf<8x1024xf16, ub>
    scf.for %i = %c0 to %c64 step %c8 {
      ascend_hw.dma_load %x[%i, %c0] -> %t {bursts = 1, burst_bytes = 16384} : memref<64x1024xf16> -> !ascend_hw.buf<8x1024xf16, ub>
      %small = arith.cmpi ult, %i, %n : index
      scf.if %small {
        ascend_hw.vexp %t -> %u {repeat = 64} : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<8x1024xf16, ub>
      } else {
        ascend_hw.vabs %t -> %u {repeat = 64} : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<8x1024xf16, ub>
        ascend_hw.dma_store %u -> %z[%i, %c0] {bursts = 1, burst_bytes = 16384} : !ascend_hw.buf<8x1024xf16, ub> -> memref<64x1024xf16>
        ascend_hw.dma_load %z[%i, %c0] -> %u {bursts = 1, burst_bytes = 16384} : memref<64x1024xf16> -> !ascend_hw.buf<8x1024xf16, ub>
      }
      ascend_hw.vrelu %u -> %t {repeat = 64} : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<8x1024xf16, ub>
      ascend_hw.dma_store %t -> %z[%i, %c0] {bursts = 1, burst_bytes = 16384} : !ascend_hw.buf<8x1024xf16, ub> -> memref<64x1024xf16>
    }
    func.return
  }
}
"""


def _random_f16(*shape: int) -> np.ndarray:
    return np.random.default_rng(1).standard_normal(shape).astype(np.float16)


SHAPED_CASES: dict[str, tuple[str, str, Callable[[], list]]] = {
    "nested_matmul": (
        NESTED_MATMUL,
        "mm",
        lambda: [
            _random_f16(128, 256),
            _random_f16(256, 128),
            np.zeros((128, 128), np.float32),
        ],
    ),
    "moving_slots": (
        MOVING_SLOTS,
        "slots",
        lambda: [_random_f16(8, 1024), np.zeros((8, 1024), np.float16)],
    ),
    "branches_then": (
        BRANCHES,
        "branches",
        lambda: [_random_f16(64, 1024), np.zeros((64, 1024), np.float16), 64],
    ),
    "branches_else": (
        BRANCHES,
        "branches",
        lambda: [_random_f16(64, 1024), np.zeros((64, 1024), np.float16), 0],
    ),
    "branches_mixed": (
        BRANCHES,
        "branches",
        lambda: [_random_f16(64, 1024), np.zeros((64, 1024), np.float16), 24],
    ),
}


@pytest.mark.parametrize("case", SHAPED_CASES)
def test_shapes_match_a_serialised_run(case: str) -> None:
    text, name, inputs = SHAPED_CASES[case]
    serial, module = _parse_twice(text)
    _serialise(serial)
    expected = _run(serial, name, inputs()).outputs
    HwInsertSyncPass().apply(default_context(), module)
    assert _bits(_run(module, name, inputs()).outputs) == _bits(expected)


def test_nested_matmul_matches_numpy() -> None:
    text, name, inputs = SHAPED_CASES["nested_matmul"]
    module = _parse(text)
    HwInsertSyncPass().apply(default_context(), module)
    args = inputs()
    _run(module, name, args)
    expected = args[0].astype(np.float64) @ args[1].astype(np.float64)
    np.testing.assert_allclose(args[2], expected, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("case", ["nested_matmul", "moving_slots"])
def test_every_flag_of_a_shape_is_needed(case: str) -> None:
    text, name, inputs = SHAPED_CASES[case]
    reference = _run(_resync_text(text)[0], name, inputs()).outputs
    count = len(_resync_text(text)[1])
    for index in range(count):
        module, syncs = _resync_text(text)
        places = _flag_places(syncs[index])
        for op in syncs[index].ops:
            Rewriter.erase_op(op)
        try:
            outputs = _run(module, name, inputs()).outputs
        except SimError as error:
            _check_missing_flag_error(error, syncs[index], places, module)
            continue
        assert _bits(outputs) != _bits(reference), (case, index)


def _resync_text(text: str) -> tuple[ModuleOp, list[Sync]]:
    module = _parse(text)
    return module, resynchronise(module)


ONE_EVENT = (
    Path(__file__).parents[1] / "filecheck/passes/hw_insert_sync/Inputs/one_event.toml"
)


@pytest.mark.parametrize(
    "function", ["squeeze", "iteration_local", "fence", "relay", "nine_live", "barrier"]
)
def test_fallbacks_for_few_event_ids_run_on_that_target(function: str) -> None:
    """The lit cases with more live flags than event ids (merged flags, flags
    kept in their iteration, fences, relays, barriers): race-free and exact on
    their target."""
    text = (
        Path(__file__).parents[1] / "filecheck/passes/hw_insert_sync/events.mlir"
    ).read_text()
    chunk = next(c for c in text.split("// -----") if f"@{function}(" in c)
    path = str(ONE_EVENT) if "INPUTS/one_event.toml" in chunk else "ascend910b"
    chunk = chunk.replace("INPUTS/one_event.toml", str(ONE_EVENT))
    target = load_target(path)
    x = _random_f16(64, 128)
    extra = [64] if function == "relay" else []
    serial, module = _parse_twice(chunk)
    _serialise(serial)
    expected = run_hw_function(
        serial, function, [x.copy(), np.zeros_like(x), *extra], target
    )
    HwInsertSyncPass().apply(default_context(), module)
    result = run_hw_function(
        module, function, [x.copy(), np.zeros_like(x), *extra], target
    )
    assert _bits(result.outputs) == _bits(expected.outputs)


def _many_live(inner: int, outer: int, target: str) -> str:
    """An outer loop whose body runs an inner loop that loads `inner` tiles and
    reads them on V, then loads `outer` other tiles and reads them in load order:
    every tile has its own buffer, so each load -> read flag of the outer body is
    live until its read, and so are the inner loop's (MTE2 may run ahead of V by
    a whole iteration). With `outer` = 8, ascend910b's 8 ids per pipe pair ran
    out ("more than 8 mte2 -> v flags are live at once here")."""
    tiles = [f"%t{k}" for k in range(inner + outer)]
    lines = [
        f'builtin.module attributes {{pypto.target = "{target}"}} {{',
        f"  func.func @many(%x: {GM}, %z: {GM}) {{",
        "    %c0 = arith.constant 0 : index",
        "    %c8 = arith.constant 8 : index",
        "    %c16 = arith.constant 16 : index",
        "    %c64 = arith.constant 64 : index",
    ]
    # Tile k of the outer body loads rows i + k % 9 .. (x has 64 rows).
    lines += [f"    %c{k}_ = arith.constant {k} : index" for k in range(min(outer, 9))]
    for k, tile in enumerate([*tiles, "%acc", "%tmp"]):
        lines.append(
            f"    {tile} = ascend_hw.alloc [{2048 * k}, {2048 * (k + 1)}) : {TILE}"
        )

    def loads_and_reads(pad: str, rows: list[str], loaded: list[str], into: str):
        lines.extend(
            f"{pad}ascend_hw.dma_load %x[{row}, %c0] -> {tile} {DMA} : {GM} -> {TILE}"
            for row, tile in zip(rows, loaded, strict=True)
        )
        lines.append(
            f"{pad}ascend_hw.vabs {loaded[0]} -> {into} {{repeat = 8}} : {TILE} -> {TILE}"
        )
        lines.extend(
            f"{pad}ascend_hw.vadd {tile}, {into} -> {into} {{repeat = 8}} : "
            f"{TILE}, {TILE} -> {TILE}"
            for tile in loaded[1:]
        )

    lines += [
        "    scf.for %i = %c0 to %c64 step %c16 {",
        "      scf.for %j = %c0 to %c16 step %c8 {",
        "        %r = arith.addi %i, %j : index",
    ]
    loads_and_reads("        ", ["%r"] * inner, tiles[:inner], "%tmp")
    lines += [
        f"        ascend_hw.dma_store %tmp -> %z[%r, %c0] {DMA} : {TILE} -> {GM}",
        "      }",
    ]
    lines += [f"      %o{k} = arith.addi %i, %c{k % 9}_ : index" for k in range(outer)]
    loads_and_reads("      ", [f"%o{k}" for k in range(outer)], tiles[inner:], "%acc")
    lines += [
        f"      ascend_hw.vadd %tmp, %acc -> %acc {{repeat = 8}} : {TILE}, {TILE} -> {TILE}",
        f"      ascend_hw.dma_store %acc -> %z[%i, %c0] {DMA} : {TILE} -> {GM}",
        "    }",
        "    func.return",
        "  }",
        "}",
    ]
    return "\n".join(lines)


def _many_live_numpy(x: np.ndarray, inner: int, outer: int) -> np.ndarray:
    """What `_many_live` computes, in f16 step by step."""
    z = np.zeros_like(x)
    for i in range(0, 64, 16):
        for j in (0, 8):
            rows = x[i + j : i + j + 8]
            tmp = np.abs(rows)
            for _ in range(inner - 1):
                tmp = rows + tmp
            z[i + j : i + j + 8] = tmp
        acc = np.abs(x[i : i + 8])
        for k in range(1, outer):
            acc = x[i + k % 9 : i + k % 9 + 8] + acc
        z[i : i + 8] = tmp + acc  # pyright: ignore[reportPossiblyUnboundVariable]
    return z


@pytest.mark.parametrize("target", ["ascend910b", "one_event"])
@pytest.mark.parametrize(("inner", "outer"), [(1, 8), (4, 8), (3, 12)])
def test_more_live_flags_than_event_ids(inner: int, outer: int, target: str) -> None:
    """More flags of one pipe pair live at once than the target has event ids:
    the pass falls back (relays, barriers) instead of refusing the kernel, and
    the result is race-free and exact."""
    path = str(ONE_EVENT) if target == "one_event" else target
    text = _many_live(inner, outer, path)
    x = _random_f16(64, 128)
    serial, module = _parse_twice(text)
    _serialise(serial)
    expected = run_hw_function(
        serial, "many", [x.copy(), np.zeros_like(x)], load_target(path)
    )
    HwInsertSyncPass().apply(default_context(), module)
    result = run_hw_function(
        module, "many", [x.copy(), np.zeros_like(x)], load_target(path)
    )
    assert _bits(result.outputs) == _bits(expected.outputs)
    np.testing.assert_array_equal(result.outputs[1], _many_live_numpy(x, inner, outer))
    # Still overlapping pipes: faster than the serialised run.
    assert result.report.cycles < expected.report.cycles


FFN = """
func.func @ffn(%x: !tv.tensor<10x192xf16>, %w1: !tv.tensor<192x197xf16>, %w2: !tv.tensor<197x192xf16>) -> !tv.tensor<10x192xf16> {
  %h = tv.matmul %x, %w1 acc(f32) : !tv.tensor<10x192xf16>, !tv.tensor<192x197xf16> -> !tv.tensor<10x197xf16>
  %s = tv.silu %h : !tv.tensor<10x197xf16>
  %y = tv.matmul %s, %w2 acc(f32) : !tv.tensor<10x197xf16>, !tv.tensor<197x192xf16> -> !tv.tensor<10x192xf16>
  func.return %y : !tv.tensor<10x192xf16>
}
"""


def test_a_fence_stays_when_its_flag_is_merged() -> None:
    """ffn at 10x192 lowered for tiny (8 ids per pipe pair), synchronised, against
    a serialised run. When it was written, its mte2 -> mte1 flags ran out of ids
    and were merged into a fenced one whose set moved later; the ids shared by
    earlier mte3 -> mte2 flags relied on the fence, and when the fence moved with
    the set the simulator found two of their sets pending."""
    tiny = load_target("tiny")
    module = _parse(FFN)
    with diagnostic_handler(lambda _: None):  # the tiling remarks
        for stage in LowerPipeline(target="tiny").stages()[:-1]:
            stage.apply(default_context(), module)
    rng = np.random.default_rng(3)
    shapes = [(10, 192), (192, 197), (197, 192)]
    args = [(rng.standard_normal(s) / 16).astype(np.float16) for s in shapes]
    args.append(np.zeros((10, 192), np.float16))
    serial = module.clone()
    _serialise(serial)
    expected = run_hw_function(serial, "ffn", [a.copy() for a in args], tiny)
    HwInsertSyncPass().apply(default_context(), module)
    result = run_hw_function(module, "ffn", [a.copy() for a in args], tiny)
    assert _bits(result.outputs) == _bits(expected.outputs)


# --------------------------------------------------------------------------------------
# Random programs against a serialised run
# --------------------------------------------------------------------------------------

# UB tiles of 8x128 f16 (2 KiB); tile 4 overlaps tiles 0 and 1 (reused memory).
UB_TILES = [0, 2048, 4096, 6144, 1024]
L1_TILES = [0, 2048]
TILE = "!ascend_hw.buf<8x128xf16, ub>"
L1_TILE = "!ascend_hw.buf<8x128xf16, l1>"
GM = "memref<64x128xf16>"
DMA = "{bursts = 1, burst_bytes = 2048}"

# A program is a list of items: ("load" | "reload" | "vmax" | "vabs" | "store" |
# "to_l1" | "from_l1", a, b, c, row) or ("for", trips, items) or
# ("if", then items, else items).
# Many tiles (12 of their own, 2 overlapping others) for the one-event target.
MANY_UB_TILES = [2048 * t for t in range(12)] + [1024, 9216]
MANY_L1_TILES = [0, 2048, 4096]


def _programs(
    ub_tiles: int, l1_tiles: int, max_size: int = 6, max_leaves: int = 10
) -> st.SearchStrategy[list]:
    ub = st.integers(0, ub_tiles - 1)
    l1 = st.integers(0, l1_tiles - 1)
    row = st.integers(0, 3)
    steps = st.one_of(
        st.tuples(
            st.sampled_from(["load", "reload", "vmax", "vabs", "store"]),
            *(ub, ub, ub, row),
        ),
        st.tuples(st.just("to_l1"), ub, st.just(0), l1, row),
        st.tuples(st.just("from_l1"), l1, st.just(0), ub, row),
    )
    return st.recursive(
        st.lists(steps, min_size=1, max_size=max_size),
        lambda inner: st.lists(
            st.one_of(
                steps,
                st.tuples(st.just("for"), st.integers(1, 3), inner),
                st.tuples(st.just("if"), inner, inner),
            ),
            min_size=1,
            max_size=5,
        ),
        max_leaves=max_leaves,
    )


programs = _programs(len(UB_TILES), len(L1_TILES))


def _program_text(
    items: list,
    target: str = "ascend910b",
    ub_tiles: Sequence[int] = UB_TILES,
    l1_tiles: Sequence[int] = L1_TILES,
) -> str:
    """A kernel over x (read), z (read and written) and the tiles, which it first
    fills so that every read finds initialised bytes."""
    lines = [
        f'builtin.module attributes {{pypto.target = "{target}"}} {{',
        f"  func.func @k(%x: {GM}, %z: {GM}, %n: index) {{",
        "    %c0 = arith.constant 0 : index",
        "    %c1 = arith.constant 1 : index",
        "    %c8 = arith.constant 8 : index",
    ]
    lines += [
        f"    %u{i} = ascend_hw.alloc [{o}, {o + 2048}) : {TILE}"
        for i, o in enumerate(ub_tiles)
    ] + [
        f"    %l{i} = ascend_hw.alloc [{o}, {o + 2048}) : {L1_TILE}"
        for i, o in enumerate(l1_tiles)
    ]
    # Tiles that overlap no earlier one are loaded, which covers the others.
    own = [t for t, o in enumerate(ub_tiles) if o not in ub_tiles[:t] and o % 2048 == 0]
    prologue = [("load", 0, 0, t, t % 4) for t in own] + [
        ("to_l1", t, 0, t, 0) for t in range(len(l1_tiles))
    ]
    counter = iter(range(10**6))

    def emit(items: list, depth: int, base: str) -> None:
        pad = "    " * (depth + 1)
        for item in items:
            i = next(counter)
            if item[0] == "for":
                lines.append(f"{pad}%t{i} = arith.constant {item[1]} : index")
                lines.append(f"{pad}scf.for %it{i} = %c0 to %t{i} step %c1 {{")
                emit(item[2], depth + 1, f"%it{i}")
                lines.append(f"{pad}}}")
                continue
            if item[0] == "if":
                lines.append(f"{pad}%f{i} = arith.cmpi ult, {base}, %n : index")
                lines.append(f"{pad}scf.if %f{i} {{")
                emit(item[1], depth + 1, base)
                lines.append(f"{pad}}} else {{")
                emit(item[2], depth + 1, base)
                lines.append(f"{pad}}}")
                continue
            kind, a, b, c, r = item
            lines.append(f"{pad}%r{i} = arith.constant {r} : index")
            lines.append(f"{pad}%s{i} = arith.addi %r{i}, {base} : index")
            lines.append(f"{pad}%g{i} = arith.muli %s{i}, %c8 : index")
            g = f"%g{i}"
            lines.append(
                pad
                + {
                    "load": f"ascend_hw.dma_load %x[{g}, %c0] -> %u{c} {DMA} : {GM} -> {TILE}",
                    "reload": f"ascend_hw.dma_load %z[{g}, %c0] -> %u{c} {DMA} : {GM} -> {TILE}",
                    "vmax": f"ascend_hw.vmax %u{a}, %u{b} -> %u{c} {{repeat = 8}} : {TILE}, {TILE} -> {TILE}",
                    "vabs": f"ascend_hw.vabs %u{a} -> %u{c} {{repeat = 8}} : {TILE} -> {TILE}",
                    "store": f"ascend_hw.dma_store %u{a} -> %z[{g}, %c0] {DMA} : {TILE} -> {GM}",
                    "to_l1": f"ascend_hw.dma_copy %u{a} -> %l{c} {DMA} : {TILE} -> {L1_TILE}",
                    "from_l1": f"ascend_hw.dma_copy %l{a} -> %u{c} {DMA} : {L1_TILE} -> {TILE}",
                }[kind]
            )

    emit(prologue + items, 0, "%c0")
    lines += ["    func.return", "  }", "}"]
    return "\n".join(lines)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, st.integers(0, 3))
def test_random_programs_match_a_serialised_run(items: list, n: int) -> None:
    """Loops and branches over tiles that partly overlap, GM read after written."""
    text = _program_text(items)
    x = np.random.default_rng(2).standard_normal((64, 128)).astype(np.float16)
    serial, module = _parse_twice(text)
    _serialise(serial)
    expected = _run(serial, "k", [x.copy(), np.zeros_like(x), n]).outputs
    HwInsertSyncPass().apply(default_context(), module)
    outputs = _run(module, "k", [x.copy(), np.zeros_like(x), n]).outputs
    assert _bits(outputs) == _bits(expected)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_programs(len(MANY_UB_TILES), len(MANY_L1_TILES), 12, 24), st.integers(0, 3))
def test_random_programs_on_one_event_id(items: list, n: int) -> None:
    """Straight-line code and loops over many tiles with a single event id per
    pipe pair: every fallback for want of ids (merged flags, flags kept in their
    iteration, fences, relays, barriers) against a serialised run."""
    text = _program_text(items, str(ONE_EVENT), MANY_UB_TILES, MANY_L1_TILES)
    target = load_target(str(ONE_EVENT))
    x = np.random.default_rng(2).standard_normal((64, 128)).astype(np.float16)
    serial, module = _parse_twice(text)
    _serialise(serial)
    expected = run_hw_function(serial, "k", [x.copy(), np.zeros_like(x), n], target)
    HwInsertSyncPass().apply(default_context(), module)
    result = run_hw_function(module, "k", [x.copy(), np.zeros_like(x), n], target)
    assert _bits(result.outputs) == _bits(expected.outputs)


# --------------------------------------------------------------------------------------
# The example kernels, lowered by pypto-lower
# --------------------------------------------------------------------------------------


# Shapes whose every path runs on some core with work before and after it: a
# core split whose remainder loop (trips mod 2) runs on a core that also runs
# the unrolled loop, a tail on a core that also runs loop iterations. Elsewhere
# a flag may order work that no core runs together (gemm on ascend910b: the
# last core runs only the tail). On ascend910b the shares tv-schedule balances
# over the cores by cost (counted in whole 32-byte output blocks) now give the
# tail a core of its own at every such shape, so its examples are lowered with
# balance-cores=false: the flag from the split loop to the tail is then needed;
# with the balanced shares it orders work no core runs together, which
# hw-insert-sync cannot prove (docs/hw_insert_sync.md).
LOWERED_EXAMPLES = [
    ("tiny", "swish", (37, 45)),
    ("tiny", "softmax", (72, 40)),
    ("tiny", "layernorm", (72, 40)),
    ("tiny", "gemm", (40, 50, 60)),
    ("ascend910b", "swish", (37, 45)),
    ("ascend910b", "softmax", (37, 45)),
    ("ascend910b", "layernorm", (37, 45)),
]


def _lowered_example(target: str, name: str, dims: tuple[int, ...]) -> ModuleOp:
    kernel, _ = example_kernel(name, dims)
    module = _parse(kernel.mlir())
    balance = target != "ascend910b"  # see LOWERED_EXAMPLES
    with diagnostic_handler(lambda _: None):
        LowerPipeline(target=target, balance_cores=balance).apply(
            default_context(), module
        )
    return module


@pytest.mark.parametrize(("target", "name", "dims"), LOWERED_EXAMPLES)
def test_every_flag_of_a_lowered_example_is_needed(
    target: str, name: str, dims: tuple[int, ...]
) -> None:
    """Without any one set/wait pair hw-insert-sync gave a kernel lowered from
    Python, the simulator reports a race, a deadlock or an event misuse, or the
    result changes."""
    _, shapes = example_kernel(name, dims)
    rng = np.random.default_rng(0)
    inputs = [(rng.standard_normal(s) / 4).astype(np.float16) for s in shapes]
    out_shape = (dims[0], dims[-1])
    chip = load_target(target)

    def run(module: ModuleOp) -> bytes:
        args = [*(a.copy() for a in inputs), np.full(out_shape, np.nan, np.float16)]
        run_hw_function(module, name, args, chip)
        return args[-1].tobytes()

    lowered = _lowered_example(target, name, dims)
    resynchronised = lowered.clone()
    count = len(resynchronise(resynchronised))
    assert count > 0
    print(
        f"{name} {dims} on {target}: {count} flags, flag ops per iteration of "
        f"each loop {_loop_flags(resynchronised)}"
    )
    count, kept = flags_that_change_nothing(lowered, run)
    assert not kept, f"{name} on {target}: flags {kept} of {count} change nothing"
