"""The flash nest's estimate against the simulator, block by block (prints, no asserts).

`passes/attention_model.py` chooses the query and key blocks of the
flash-attention nest by an estimate of its cycles. This bench lowers
`softmax(q @ k.T * 0.088 [+ mask]) @ v` (d = 128, f16, ascend910b) with each
query-block height and key-block width the model may take, one pair at a time
(the model's candidate lists narrowed to that pair while the kernel is
lowered), runs it, and prints the estimate, the simulated cycles and their
ratio; then, per kernel, the geometric mean and spread of the ratios, the
blocks the estimate takes and the fastest blocks measured. A pair the model
finds no room for is skipped.

    .venv/bin/python bench/bench_attention_model.py            # S=1024 (~4 min)
    .venv/bin/python bench/bench_attention_model.py --seq 2048  # ~15 min
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import pypto_mlir as pto
from pypto_mlir.check import lower, result_buffers
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.passes import attention_model, attention_nests
from pypto_mlir.passes.attention_model import AttentionTiling
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target

TARGET = "ascend910b"
CHIP = load_target(TARGET)

HEAD_DIM = 128
SCALE = 0.088


@dataclass(frozen=True)
class Measured:
    tiling: AttentionTiling
    cycles: int


@contextmanager
def only_blocks(br: int, bc: int) -> Iterator[list[AttentionTiling | None]]:
    """The model's candidates narrowed to `br` x `bc` while a kernel is
    lowered; yields the tilings it chose."""
    chosen: list[AttentionTiling | None] = []
    rows, keys = attention_model.ROW_BLOCKS, attention_model.KEY_BLOCKS
    choose = attention_nests.choose_tiling

    def spy(*args: Any, **kwargs: Any) -> AttentionTiling | None:
        tiling = choose(*args, **kwargs)
        chosen.append(tiling)
        return tiling

    attention_model.ROW_BLOCKS, attention_model.KEY_BLOCKS = (br,), (bc,)
    attention_nests.choose_tiling = spy
    try:
        yield chosen
    finally:
        attention_model.ROW_BLOCKS, attention_model.KEY_BLOCKS = rows, keys
        attention_nests.choose_tiling = choose


def kernel(s: int, masked: bool) -> ModuleOp:
    q = pto.Tensor[(s, HEAD_DIM), pto.f16]
    if masked:

        def attention(q: Any, k: Any, v: Any, mask: Any) -> Any:
            return pto.softmax(q @ k.T * SCALE + mask, axis=-1) @ v

        attention.__annotations__ = {
            "q": q,
            "k": q,
            "v": q,
            "mask": pto.Tensor[(s, s), pto.f16],
        }
    else:

        def attention(q: Any, k: Any, v: Any) -> Any:  # type: ignore[misc]
            return pto.softmax(q @ k.T * SCALE, axis=-1) @ v

        attention.__annotations__ = {"q": q, "k": q, "v": q}
    return pto.kernel(attention).module()


def measure(
    module: ModuleOp, inputs: Sequence[np.ndarray], br: int, bc: int, prefetch: bool
) -> Measured | None:
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    pipeline = LowerPipeline(target=TARGET, attention_prefetch=prefetch)
    with only_blocks(br, bc) as chosen, diagnostic_handler(lambda d: None):
        lowered = lower(module, "ascend_hw", pipeline)
    tiling = chosen[-1] if chosen else None
    if tiling is None:
        return None
    arguments = [*(a.copy() for a in inputs), *result_buffers(function)]
    run = run_hw_function(lowered, function.sym_name.data, arguments, CHIP)
    return Measured(tiling, run.report.cycles)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=1024, help="queries = keys")
    args = parser.parse_args(argv)
    s = args.seq
    rng = np.random.default_rng(0)
    q, k, v = (
        (rng.standard_normal((s, HEAD_DIM)) * 0.1).astype(np.float16) for _ in range(3)
    )
    mask = np.where(rng.random((s, s)) < 0.5, 0, -30000).astype(np.float16)
    print(f"{'kernel':<30} {'blocks':>8} {'estimate':>9} {'cycles':>9} {'ratio':>6}")
    for masked, prefetch in ((False, False), (True, False), (True, True)):
        name = f"S={s} {'masked' if masked else 'unmasked'}" + (
            ", prefetch" if prefetch else ""
        )
        module = kernel(s, masked)
        inputs = [q, k, v, mask] if masked else [q, k, v]
        start = time.perf_counter()
        runs: list[Measured] = []
        for br in attention_model.ROW_BLOCKS:
            for bc in attention_model.KEY_BLOCKS:
                run = measure(module, inputs, br, bc, prefetch)
                if run is None:
                    continue
                runs.append(run)
                t = run.tiling
                print(
                    f"{name:<30} {t.br:>3}x{t.bc:<4} {t.estimate:>9.0f} "
                    f"{run.cycles:>9} {t.estimate / run.cycles:>6.2f}",
                    flush=True,
                )
        if not runs:
            continue
        logs = [math.log(r.tiling.estimate / r.cycles) for r in runs]
        mean = sum(logs) / len(logs)
        spread = math.sqrt(sum(x * x for x in logs) / len(logs))
        picked = min(runs, key=lambda r: r.tiling.estimate)
        fastest = min(runs, key=lambda r: r.cycles)
        print(
            f"  {name}: estimate / cycles {math.exp(mean):.2f} (geometric mean), "
            f"rms of the log {spread:.2f}; the estimate takes "
            f"{picked.tiling.br}x{picked.tiling.bc} ({picked.cycles} cycles), the "
            f"fastest is {fastest.tiling.br}x{fastest.tiling.bc} ({fastest.cycles}: "
            f"{picked.cycles / fastest.cycles:.2f}x); "
            f"{time.perf_counter() - start:.0f}s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
