"""Calling kernels: backends, the specialization cache, reports."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import pypto_mlir as pto
from pypto_mlir.frontend import backends
from pypto_mlir.frontend.backends import Backend, Compiled, Execution

M = pto.sym("M")
N = pto.sym("N")


@pto.kernel
def scale_rows(
    x: pto.Tensor[(M, 4), pto.f32], w: pto.Tensor[(4,), pto.f32]
) -> pto.Tensor[(M, 4), pto.f32]:
    return x * w


def test_call_returns_numpy() -> None:
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    w = np.array([1, 2, 3, 4], np.float32)
    y = scale_rows(x, w)
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, x * w)


def test_several_results_are_a_tuple() -> None:
    @pto.kernel
    def two(x: pto.Tensor[(3,), pto.f32]):
        return x + 1.0, x.sum()

    y, total = two(np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(y, [2, 3, 4])
    assert total.shape == () and float(total) == 6.0


def test_run_report() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(M, 4), pto.f32], w: pto.Tensor[(4,), pto.f32]):
        return x * w

    x = np.ones((3, 4), np.float32)
    first = k.run(x, np.ones(4, np.float32), backend="reference")
    report = first.report
    assert report.kernel == "k"
    assert report.backend == "reference"
    assert report.level == "tv"
    assert "reference interpreter" in report.pipeline
    assert report.sizes == {"M": 3}
    assert report.inputs == ("x f32[3x4]", "w f32[4]")
    assert report.outputs == ("f32[3x4]",)
    assert report.cycles is None and report.sim is None
    assert not report.cached
    text = report.to_text()
    assert "kernel k: backend 'reference'" in text
    assert "sizes:   M=3" in text
    assert "cycles:  - (no simulator ran)" in text
    as_json = json.loads(json.dumps(report.to_dict()))
    assert as_json["backend"] == "reference" and as_json["cycles"] is None
    assert isinstance(first.value, np.ndarray)
    assert k.run(x, np.ones(4, np.float32), backend="reference").report.cached


def test_specializations_are_cached_per_size() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(M, N), pto.f32]):
        return x.sum(axis=1)

    for m, n in [(2, 3), (2, 3), (4, 3), (2, 5), (4, 3)]:
        x = np.arange(m * n, dtype=np.float32).reshape(m, n)
        np.testing.assert_allclose(k(x), x.sum(axis=1))
    assert k.cache_info() == pto.CacheInfo(hits=2, misses=3, size=3)


class CountingBackend(Backend):
    """A backend that runs the reference interpreter and counts compiles."""

    level = "tv"

    def __init__(self, name: str, priority: int, reason: str | None = None) -> None:
        self.name = name
        self.priority = priority
        self.reason = reason
        self.compiles = 0

    def unavailable_reason(self) -> str | None:
        return self.reason

    def compile(self, module: ModuleOp, entry: str) -> Compiled:
        self.compiles += 1
        reference = backends.ReferenceBackend().compile(module, entry)

        class Counted(Compiled):
            pipeline = "counted"

            def run(self, args: Sequence[np.ndarray | int | float]) -> Execution:
                return reference.run(args)

        return Counted()


def test_auto_picks_the_best_available_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    better = CountingBackend("better", priority=15)
    broken = CountingBackend("broken", priority=19, reason="no simulator here")
    monkeypatch.setitem(backends._BACKENDS, "better", better)  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setitem(backends._BACKENDS, "broken", broken)  # pyright: ignore[reportPrivateUsage]
    assert pto.backend_names()[:4] == ("broken", "better", "sim", "reference")

    x = np.ones((2, 4), np.float32)
    w = np.ones(4, np.float32)
    assert scale_rows.run(x, w).report.backend == "better"
    assert scale_rows.run(x, w, backend="reference").report.backend == "reference"
    with pytest.raises(pto.KernelError, match="backend 'broken' is not available"):
        scale_rows(x, w, backend="broken")

    # One compile per specialization and backend.
    scale_rows(x, w)
    scale_rows(np.ones((3, 4), np.float32), w)
    assert better.compiles == 2

    @pto.kernel(backend="reference")
    def pinned(x: pto.Tensor[(2,), pto.f32]):
        return x

    assert pinned.run(np.ones(2, np.float32)).report.backend == "reference"


def test_register_backend_rejects_auto() -> None:
    with pytest.raises(ValueError, match="reserved"):
        pto.register_backend(CountingBackend("auto", priority=0))


def test_repr_and_wrapping() -> None:
    assert repr(scale_rows) == (
        "<pto.kernel scale_rows(x: pto.Tensor[(M, 4), pto.f32], "
        "w: pto.Tensor[(4,), pto.f32])>"
    )
    assert scale_rows.__name__ == "scale_rows"
    assert scale_rows.symbols == ("M",)
    assert {"kernel", "Tensor", "f16", "softmax"} <= set(dir(pto))


def test_bf16_arguments_are_rounded() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(2,), pto.bf16]):
        return x + 0.0

    # 1 + 2**-9 is not a bf16 value: it rounds to 1 on the way in.
    y = k(np.array([1 + 2**-9, 3.0], np.float32))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, [1.0, 3.0])


def test_pypto_mlir_reexports_the_frontend_lazily() -> None:
    script = (
        "import sys, pypto_mlir.sim\n"
        "assert 'pypto_mlir.frontend' not in sys.modules\n"
        "from pypto_mlir import *\n"
        "assert kernel is sys.modules['pypto_mlir.frontend'].kernel\n"
        "import pypto_mlir\n"
        "try:\n"
        "    pypto_mlir.no_such_name\n"
        "except AttributeError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "module 'pypto_mlir' has no attribute 'no_such_name'\n"
