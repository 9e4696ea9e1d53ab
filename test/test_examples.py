"""The examples (examples/*.py) against numpy, at their real sizes.

Each example defines its kernel(s), `make_inputs(rng)`, a float64 numpy
`reference(...)` and `tolerance(...)` -> (rtol, atol): an element passes when
|kernel - reference| <= atol + rtol * |reference|. The tolerances follow from the
reference semantics of fp16 (docs/tensor_view.md: compute in f32, round once
per op to the result type):

- swish (x * sigmoid(x)): two roundings to f16 of at most one ulp each,
  rtol = 2**-9; atol = 2**-24 (f16 subnormal spacing).
- gemm: one rounding to f16, rtol = 2**-11, plus per element the f32 summation
  bound K * 2**-24 * (|A| @ |B|).
- ffn (swish(x @ W1) @ W2, BERT-base): the reference rounds the hidden tensor and
  its swish to f16 like the kernel; rtol = 2**-11 on the output, plus the effect
  of swish values that differ by up to two ulps, summed by the second matmul as
  independent errors (4 standard deviations: 4 * 2**-9 * sqrt(swish**2 @ W2**2);
  a statistical bound, the worst case is far looser), plus the f32 summation
  bound 3072 * 2**-24 * (|swish| @ |W2|).
- softmax (the op and the spelled-out version): one rounding to f16 after f32
  evaluation, rtol = 2**-11 + 2**-12, atol = 2**-24.
- layernorm: one rounding to f16, rtol = 2**-11, atol = 2**-12 for f32 statistics
  (about 768 * 2**-24 relative) where outputs are near zero.
- spmm (CSR 1 % x dense, against scipy): f32 sums rounded once to f16, rtol =
  2**-9, atol = 2**-12 for cancelling sums.

Every tolerance is also shown to reject an output off by a few f16 ulps, so the
checks cannot pass vacuously.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from example_kernels import EXAMPLES, load_example

from pypto_mlir.cli import run
from pypto_mlir.frontend.kernel import Kernel
from pypto_mlir.frontend.testing import compare

# (example, kernel names, extra make_inputs arguments per run)
CASES: list[tuple[str, tuple[str, ...], list[tuple[Any, ...]]]] = [
    ("swish", ("swish",), [()]),
    ("gemm", ("gemm",), [(1024,), (100,)]),
    ("ffn", ("ffn",), [()]),
    ("softmax", ("softmax", "softmax_by_hand"), [()]),
    ("layernorm", ("layernorm",), [(128,), (37,)]),
    ("spmm", ("spmm",), [()]),
]


@pytest.mark.parametrize(("name", "kernels", "runs"), CASES, ids=[c[0] for c in CASES])
def test_example_matches_numpy(
    name: str, kernels: tuple[str, ...], runs: list[tuple[Any, ...]]
) -> None:
    example = load_example(name)
    for seed, extra in enumerate(runs):
        inputs = example.make_inputs(np.random.default_rng(seed), *extra)
        expected = example.reference(*inputs)
        rtol, atol = example.tolerance(*inputs)
        for kernel_name in kernels:
            kernel: Kernel = getattr(example, kernel_name)
            actual = kernel(*inputs)
            assert actual.dtype == np.float16
            comparison = compare(actual, expected, rtol=rtol, atol=atol)
            assert comparison.ok, f"{kernel_name}: {comparison}"
            # A few f16 ulps off everywhere must fail: the tolerance is not vacuous.
            off = (actual.astype(np.float64) * (1 + 2.0**-7)).astype(np.float16)
            assert not compare(off, expected, rtol=rtol, atol=atol).ok


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_kernel_bodies_are_short(name: str) -> None:
    example = load_example(name)
    for value in vars(example).values():
        if isinstance(value, Kernel) and value.function.__module__ == example.__name__:
            lines, _ = inspect.getsourcelines(value.function)
            body = [line for line in lines if line.strip()]
            signature_end = next(
                i for i, line in enumerate(body) if line.rstrip().endswith(":")
            )
            assert len(body) - signature_end - 1 <= 20


def mlir_output(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    example = load_example(name)
    monkeypatch.setattr(sys, "argv", [f"examples/{name}.py", "--mlir"])
    assert example.main() == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", ["swish", "gemm", "ffn", "layernorm"])
def test_committed_mlir_is_the_frontend_output(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    committed = (EXAMPLES / f"{name}.mlir").read_text()
    assert committed == mlir_output(name, capsys, monkeypatch), (
        f"examples/{name}.mlir is stale: regenerate it with "
        f"`python examples/{name}.py --mlir > examples/{name}.mlir`"
    )


def test_softmax_mlir_is_two_split_modules(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = mlir_output("softmax", capsys, monkeypatch)
    assert text.count("builtin.module") == 2 and "\n// -----\n" in text


@pytest.mark.parametrize(("name", "extra"), [("swish", ()), ("gemm", (1024,))])
def test_pypto_run_on_the_mlir_equals_the_kernel(
    name: str,
    extra: tuple[Any, ...],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    example = load_example(name)
    inputs = example.make_inputs(np.random.default_rng(5), *extra)
    np.savez(tmp_path / "in.npz", **{f"arg{i}": a for i, a in enumerate(inputs)})
    status = run.main(
        [
            str(EXAMPLES / f"{name}.mlir"),
            "--inputs",
            str(tmp_path / "in.npz"),
            "--output",
            str(tmp_path / "out.npz"),
        ]
    )
    assert status == 0, capsys.readouterr().err
    from_file = np.load(tmp_path / "out.npz")["result0"]
    # pypto-run runs the tv file on the reference interpreter: compare like with like.
    kernel = getattr(example, name)
    np.testing.assert_array_equal(from_file, kernel(*inputs, backend="reference"))


@pytest.mark.parametrize(
    "name",
    [
        # spmm's main runs the 1024 kernel test_example_matches_numpy runs (45 s)
        pytest.param(c[0], marks=pytest.mark.slow) if c[0] == "spmm" else c[0]
        for c in CASES
        if c[0] != "swish"
    ],
)
def test_examples_main_reports_ok(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    example = load_example(name)
    monkeypatch.setattr(sys, "argv", [f"examples/{name}.py"])
    assert example.main() == 0
    out = capsys.readouterr().out
    assert "backend 'sim'" in out  # the default: lowered and simulated
    assert out.count(": OK\n") == out.count("vs numpy") + out.count("vs scipy")


def test_example_runs_as_a_script() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "swish.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "kernel swish: backend 'sim'" in result.stdout
    assert result.stdout.rstrip().endswith(": OK")
