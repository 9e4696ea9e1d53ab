"""hw-coalesce-dma: strided-view kernels with coalescing off vs on (prints, no asserts).

For each kernel: simulated cycles, GM bandwidth utilization, GM wire bytes per
payload byte and MTE2/V utilization with `pypto-lower{coalesce-dma=false}` and
with it on; then, for the column block, the cost model's price of the ways to
load one tile (one burst per row with a GM gap, as tile-to-hw emits, against the
covering span in long bursts), which says which cost dominates. A hand-written
row-by-row copy shows what the pass merges when it finds something to merge.

    .venv/bin/python bench/bench_coalesce.py
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.check import lower
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.passes.hw_coalesce_dma import HwCoalesceDmaPass
from pypto_mlir.passes.hw_insert_sync import HwInsertSyncPass
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target
from pypto_mlir.targets.cost import dma_cost

TARGET = "ascend910b"

KERNELS = {
    "x[:, 0:512] * 2 (4096x1024 f16)": (
        "rowblock",
        (4096, 512),
        "[0, 0][4096, 512][1, 1]",
    ),
    "x[:, 0:64] * 2 (4096x1024 f16)": (
        "colblock",
        (4096, 64),
        "[0, 0][4096, 64][1, 1]",
    ),
    "x[:, ::2] * 2 (4096x1024 f16)": ("every2", (4096, 512), "[0, 0][4096, 512][1, 2]"),
}


def _tv(name: str, shape: tuple[int, int], view: str) -> str:
    out = f"!tv.tensor<{shape[0]}x{shape[1]}xf16>"
    return f"""
builtin.module {{
  func.func @{name}(%x: !tv.tensor<4096x1024xf16>) -> {out} {{
    %v = tv.view %x{view} : !tv.tensor<4096x1024xf16> to {out}
    %s = tv.add %v, %v : {out}
    func.return %s : {out}
  }}
}}
"""


def _parse(text: str) -> ModuleOp:
    return parse_chunk(default_context(), SourceChunk(text, 1), "bench.mlir")


def _line(label: str, report) -> str:  # noqa: ANN001 - sim Report
    payload = report.gm_bytes_read + report.gm_bytes_written
    pipes = report.pipes
    return (
        f"  {label:<4} cycles {report.cycles:>8}  GM util {report.gm_bandwidth_utilization:6.1%}"
        f"  wire/payload {report.gm_wire_bytes / payload:5.2f}"
        f"  MTE2 {pipes['MTE2'].utilization:6.1%}  V {pipes['V'].utilization:6.1%}"
        f"  MTE3 {pipes['MTE3'].utilization:6.1%}"
    )


def lowered_kernels() -> None:
    target = load_target(TARGET)
    x = np.random.default_rng(0).standard_normal((4096, 1024)).astype(np.float16)
    for title, (name, shape, view) in KERNELS.items():
        print(f"{title}:")
        module = _parse(_tv(name, shape, view))
        outputs = []
        for on in (False, True):
            pipeline = LowerPipeline(target=TARGET, coalesce_dma=on)
            hw_module = lower(module, pipeline=pipeline)
            out = np.zeros(shape, np.float16)
            run = run_hw_function(hw_module, name, [x.copy(), out], target)
            outputs.append(run.outputs[1])
            dmas = sum(op.name.startswith("ascend_hw.dma_") for op in hw_module.walk())
            print(_line("on" if on else "off", run.report) + f"  DMA ops {dmas}")
        same = outputs[0].tobytes() == outputs[1].tobytes()
        print(f"  outputs identical: {same}")


def column_block_costs(rows: int = 256) -> None:
    """Cost model prices of loading a rows x 64 f16 tile of a 1024-wide tensor."""
    target = load_target(TARGET)
    path = ("gm", "ub")
    info = target.dma_path(*path)
    row_bytes, pitch = 128, 2048
    ub = target.memories["ub"].size
    per_row = dma_cost(target, path, rows, row_bytes, 0, 0, pitch)
    span_bytes = (rows - 1) * pitch + row_bytes
    print(
        f"column block, one {rows}x64 f16 tile (granule {info.granule} B, "
        f"{info.burst_overhead} cycles/burst, latency {info.latency}):"
    )
    print(
        f"  {rows} bursts of {row_bytes} B, gap {pitch - row_bytes}: {per_row.cycles} cycles,"
        f" {per_row.wire_bytes} wire B for {rows * row_bytes} B"
    )
    for chunk_rows in (2, 8, 32, rows):
        # One burst per chunk_rows rows, covering the gaps between them (which
        # would still have to be dropped on chip by vector copies, not counted).
        chunk = (chunk_rows - 1) * pitch + row_bytes
        n = -(-rows // chunk_rows)
        cost = dma_cost(target, path, n, chunk, 0, 0, chunk_rows * pitch)
        print(
            f"  covering spans, {n} burst(s) of {chunk} B: {cost.cycles} cycles,"
            f" {cost.wire_bytes} wire B"
            + ("" if n * chunk <= ub else f" (more than the {ub} B of ub)")
        )
    print(f"  whole covering span: {span_bytes} B")


def _rows_kernel(rows: int, cols: int, gm_pitch_rows: int) -> str:
    buf = f"!ascend_hw.buf<{rows}x{cols}xf16, ub>"
    row = f"!ascend_hw.buf<1x{cols}xf16, ub>"
    lines = [
        f'builtin.module attributes {{pypto.target = "{TARGET}"}} {{',
        "  func.func @k(%x: memref<4096x1024xf16>, %y: memref<4096x1024xf16>) {",
        f"    %t = ascend_hw.alloc [0, {rows * cols * 2}) : {buf}",
    ]
    for r in range(rows):
        lines.append(f"    %c{r} = arith.constant {r} : index")
        lines.append(f"    %g{r} = arith.constant {r * gm_pitch_rows} : index")
        lines.append(f"    %r{r} = ascend_hw.subview %t[%c{r}, %c0] : {buf} -> {row}")
    for r in range(rows):
        lines.append(
            f"    ascend_hw.dma_load %x[%g{r}, %c0] -> %r{r} {{bursts = 1, "
            f"burst_bytes = {cols * 2}}} : memref<4096x1024xf16> -> {row}"
        )
    for r in range(rows):
        lines.append(
            f"    ascend_hw.dma_store %r{r} -> %y[%c{r}, %c0] {{bursts = 1, "
            f"burst_bytes = {cols * 2}}} : {row} -> memref<4096x1024xf16>"
        )
    lines += ["    func.return", "  }", "}"]
    return "\n".join(lines)


def hand_written_rows() -> None:
    target = load_target(TARGET)
    x = np.random.default_rng(0).standard_normal((4096, 1024)).astype(np.float16)
    for rows, cols, gm_pitch in ((32, 1024, 1), (64, 64, 2)):
        print(
            f"hand-written: {rows} row DMAs of {cols} f16 (GM pitch {gm_pitch} rows)"
            " in, as many out:"
        )
        outs = []
        for on in (False, True):
            module = _parse(_rows_kernel(rows, cols, gm_pitch))
            if on:
                HwCoalesceDmaPass().apply(default_context(), module)
            HwInsertSyncPass().apply(default_context(), module)
            y = np.zeros_like(x)
            run = run_hw_function(module, "k", [x.copy(), y], target)
            outs.append(run.outputs[1])
            dmas = sum(op.name.startswith("ascend_hw.dma_") for op in module.walk())
            print(_line("on" if on else "off", run.report) + f"  DMA ops {dmas}")
        print(f"  outputs identical: {outs[0].tobytes() == outs[1].tobytes()}")


def main() -> None:
    lowered_kernels()
    column_block_costs()
    hand_written_rows()


if __name__ == "__main__":
    main()
