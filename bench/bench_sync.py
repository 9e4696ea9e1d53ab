"""hw-insert-sync: the pass's wall time and the flags it places, per kernel and shape.

Each example kernel (examples/*.mlir with its tensor dims replaced) is lowered by
the stages of `pypto-lower` before `hw-insert-sync`; the pass then runs on fresh
copies of that IR and the best of `--repeat` runs is printed with the flags it
placed (set/wait pairs) and their ops (sets, waits, prologues, drains, fences).
The hand-written kernels of examples/hw are re-synchronised after
`hw-strip-sync`. ffn on tiny at 37x45 and 40x140 took minutes in this pass
before its questions were answered from sorted, remembered orderings
(docs/hw_insert_sync.md, "Cost"). A kernel a stage before the pass refuses is
reported as such. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_sync.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from pypto_mlir.cli.source import SourceChunk, default_context, load_module, parse_chunk
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.dialects.tensor_view import TensorViewType
from pypto_mlir.passes.hw_insert_sync import HwStripSyncPass, Sync, insert_sync
from pypto_mlir.pipelines import LowerPipeline

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# (example, target, tensor dims replaced): ffn's dims are tokens 128, hidden 768
# and inner 3072; test/test_pipeline.py draws shapes the same way.
CASES: list[tuple[str, str, dict[int, int]]] = [
    ("ffn", "ascend910b", {}),
    ("ffn", "ascend910b", {128: 40, 768: 140, 3072: 145}),
    ("ffn", "tiny", {128: 24, 768: 96, 3072: 101}),
    ("ffn", "tiny", {128: 37, 768: 45, 3072: 50}),
    ("ffn", "tiny", {128: 40, 768: 140, 3072: 145}),
    ("ffn", "tiny", {128: 64, 768: 129, 3072: 134}),
    ("gemm", "ascend910b", {1024: 129}),
    ("gemm", "tiny", {1024: 129}),
    ("layernorm", "tiny", {128: 37, 768: 45}),
    ("swish", "tiny", {4096: 37, 1024: 45}),
]


def _parse(text: str) -> ModuleOp:
    return parse_chunk(default_context(), SourceChunk(text, 1), "bench.mlir")


def _resized(text: str, dims: dict[int, int]) -> str:
    """`text` with each dim of its `!tv.tensor` types replaced per `dims`."""

    def tensor(match: re.Match[str]) -> str:
        *shape, element = match.group(1).split("x")
        return (
            "!tv.tensor<"
            + "x".join([*(str(dims.get(int(d), int(d))) for d in shape), element])
            + ">"
        )

    return re.sub(r"!tv\.tensor<([^>]*)>", tensor, text)


def _unsynchronised(module: ModuleOp, target: str) -> ModuleOp:
    """The tv module lowered in place by pypto-lower's stages before
    hw-insert-sync."""
    stages = LowerPipeline(target=target).stages()
    assert stages[-1].name == "hw-insert-sync"
    with diagnostic_handler(lambda _: None):  # the tiling remarks
        for stage in stages[:-1]:
            stage.apply(default_context(), module)
    return module


def _synchronise(module: ModuleOp) -> tuple[float, list[Sync]]:
    """Wall time of hw-insert-sync on the module's functions, and the flags."""
    functions = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    start = time.perf_counter()
    syncs = [sync for f in functions for sync in insert_sync(f)]
    return time.perf_counter() - start, syncs


def _report(label: str, module: ModuleOp, repeat: int) -> float:
    runs = [_synchronise(module.clone()) for _ in range(repeat)]
    best = min(seconds for seconds, _ in runs)
    syncs = runs[0][1]
    ops = sum(len(sync.ops) for sync in syncs)
    print(f"{label:<52} {len(syncs):>6} {ops:>8} {best:>9.3f}", flush=True)
    return best


def _arguments(module: ModuleOp) -> str:
    """The tensor arguments of the module's function: `x:40x140 w1:140x145 ...`."""
    entry = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    return " ".join(
        f"{arg.name_hint}:{'x'.join(map(str, arg.type.get_shape()))}"
        for arg in entry.args
        if isinstance(arg.type, TensorViewType)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per kernel")
    args = parser.parse_args()
    print(
        f"{'kernel (target, arguments)':<52} {'flags':>6} {'flag ops':>8} {'pass s':>9}"
    )
    total = 0.0
    for example, target, dims in CASES:
        tv_module = _parse(_resized((EXAMPLES / f"{example}.mlir").read_text(), dims))
        label = f"{example} ({target}, {_arguments(tv_module)})"
        try:
            hw_module = _unsynchronised(tv_module, target)
        except DiagnosticException as refusal:  # a stage before hw-insert-sync
            print(f"{label:<52} lowering refused: {refusal}".splitlines()[0])
            continue
        total += _report(label, hw_module, args.repeat)
    for path in sorted((EXAMPLES / "hw").glob("*.mlir")):
        module = load_module(str(path))
        HwStripSyncPass().apply(default_context(), module)
        total += _report(
            f"examples/hw/{path.name} (re-synchronised)", module, args.repeat
        )
    print(f"{'total':<52} {'':>6} {'':>8} {total:>9.3f}")


if __name__ == "__main__":
    main()
