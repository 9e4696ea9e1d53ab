"""`make demo`: a short tour of what pypto-mlir does today.

It prints the dialects and passes pypto-mlir registers, runs `pypto-opt` on the
example kernel (printing each command so you can rerun it), shows the diagnostic
for a malformed kernel, and executes the kernel with the tensor_view reference
interpreter. The lowering pipeline and the simulator join the tour when they exist.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from pypto_mlir.cli.diagnostics import SourceManager, render
from pypto_mlir.cli.source import load_module
from pypto_mlir.diagnostics import DiagnosticError
from pypto_mlir.universe import PYPTO_UNIVERSE

REPOSITORY = Path(__file__).resolve().parents[1]
EXAMPLE = REPOSITORY / "examples" / "swish.mlir"

MALFORMED = """\
func.func @swish(%x: !tv.tensor<4096x1024xf16>) -> !tv.tensor<4096xf16> {
  %s = tv.sigmoid %x : !tv.tensor<4096x1024xf16>
  %y = tv.mul %x, %s : !tv.tensor<4096x1024xf16>
  %z = tv.reduce_sum %y [2] : !tv.tensor<4096x1024xf16> -> !tv.tensor<4096xf16>
  func.return %z : !tv.tensor<4096xf16>
}
"""


def _heading(text: str) -> None:
    print(f"\n== {text}")


def _pypto_opt(*args: str) -> int:
    """Run pypto-opt as a user would, echoing the command and its output."""
    shown = " ".join(
        str(Path(a).relative_to(REPOSITORY)) if a.startswith(str(REPOSITORY)) else a
        for a in args
    )
    print(f"$ pypto-opt {shown}", flush=True)
    result = subprocess.run(
        [sys.executable, "-m", "pypto_mlir.cli.opt", *args],
        capture_output=True,
        text=True,
    )
    sys.stdout.write(result.stdout)
    sys.stdout.write(result.stderr)
    print(f"(exit status {result.returncode})")
    return result.returncode


def _registered() -> None:
    _heading("what pypto-mlir registers (through the xdsl.universe entry point)")
    print("dialects:", ", ".join(sorted(PYPTO_UNIVERSE.all_dialects)))
    print("passes and pipelines:", ", ".join(sorted(PYPTO_UNIVERSE.all_passes)))


def _interpret() -> None:
    from pypto_mlir.interp.tensor_view import run_tv_function

    _heading("running @swish with the tensor_view reference interpreter")
    module = load_module(str(EXAMPLE))
    x = np.random.default_rng(0).standard_normal((4096, 1024)).astype(np.float16)
    (y,) = run_tv_function(module, "swish", [x])
    x64 = x.astype(np.float64)
    reference = x64 / (1.0 + np.exp(-x64))
    error = np.max(np.abs(y.astype(np.float64) - reference))
    print(f"x: {x.shape} {x.dtype} -> y: {y.shape} {y.dtype}")
    print(f"max |y - x*sigmoid(x)| against a float64 reference: {error:.2e}")


def main() -> int:
    if not EXAMPLE.exists():
        print(
            f"demo: {EXAMPLE} not found; run the demo from a checkout", file=sys.stderr
        )
        return 1
    print("pypto-mlir demo: an MLIR-style compiler for Ascend-style AI Cores on xDSL")
    _registered()

    _heading("the example kernel, cleaned up by the pypto-cleanup pipeline")
    if _pypto_opt(str(EXAMPLE), "-p", "pypto-cleanup") != 0:
        return 1

    _heading("the same kernel in MLIR's generic form (what upstream mlir-opt reads)")
    if _pypto_opt(str(EXAMPLE), "--print-op-generic") != 0:
        return 1

    _heading("a malformed kernel: an MLIR-style error and exit status 1")
    with tempfile.TemporaryDirectory() as folder:
        malformed = Path(folder) / "bad_swish.mlir"
        malformed.write_text(MALFORMED)
        print(f"(the kernel is written to {malformed.name})")
        if _pypto_opt(str(malformed)) != 1:
            return 1

    try:
        _interpret()
    except DiagnosticError as error:
        sys.stderr.write(render(error.diagnostic, SourceManager(), "demo"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
