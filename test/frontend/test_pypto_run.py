"""pypto-run in process: numerics against numpy, internal errors, simulator
diagnostics. (Its command-line behaviour is tested by lit: test/filecheck/cli/run.)"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from pypto_mlir.cli import run
from pypto_mlir.diagnostics import SourceLocation
from pypto_mlir.sim import DeadlockError, RaceError, SimError

LAYERNORM = """
func.func @norm(%x: !tv.tensor<?x64xf32>) -> !tv.tensor<?x64xf32> {
  %s = tv.reduce_sum %x [1] keepdims : !tv.tensor<?x64xf32> -> !tv.tensor<?x1xf32>
  %n = arith.constant 1.562500e-02 : f32
  %m = tv.mul %s, %n : !tv.tensor<?x1xf32>, f32 -> !tv.tensor<?x1xf32>
  %c = tv.sub %x, %m : !tv.tensor<?x64xf32>, !tv.tensor<?x1xf32> -> !tv.tensor<?x64xf32>
  func.return %c : !tv.tensor<?x64xf32>
}
"""


def test_outputs_match_numpy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "norm.mlir"
    source.write_text(LAYERNORM)
    x = np.random.default_rng(0).standard_normal((5, 64)).astype(np.float32)
    np.savez(tmp_path / "in.npz", arg0=x)
    out = tmp_path / "out.npz"
    status = run.main(
        [str(source), "--inputs", str(tmp_path / "in.npz"), "--output", str(out)]
    )
    assert status == 0
    centered = np.load(out)["result0"]
    expected = x - x.astype(np.float64).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(centered, expected, atol=1e-6)
    printed = capsys.readouterr().out
    assert f"result0  f32[5x64]  {run.checksum(centered)}" in printed


def test_checksum_is_the_sum_and_crc() -> None:
    array = np.array([1.5, 2.5], np.float16)
    assert run.checksum(array) == f"sum=4 crc32={zlib.crc32(array.tobytes()):08x}"
    assert run.checksum(array) != run.checksum(array.astype(np.float32))


def test_internal_errors_ask_for_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "norm.mlir"
    source.write_text(LAYERNORM.replace("?x", "2x"))

    def broken(*args: object) -> run.RunOutcome:
        raise RuntimeError("something broke")

    monkeypatch.setitem(run.RUNNERS, run.Level.TV, broken)
    assert run.main([str(source)]) == 1
    err = capsys.readouterr().err
    assert err == (
        "pypto-run: internal error: RuntimeError: something broke (please report "
        "this; rerun with --debug for the traceback)\n"
    )
    assert run.main([str(source), "--debug"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.endswith(
        "pypto-run: internal error: RuntimeError: something broke (please report this)\n"
    )


def test_simulator_errors_become_located_diagnostics() -> None:
    race = RaceError("race on ub", "k.mlir:3:5", "k.mlir:7:5", "ub", 0, 32)
    diagnostic = run.sim_diagnostic(race)
    assert diagnostic.location == SourceLocation("k.mlir", 7, 5)
    assert diagnostic.message == "race on ub"
    assert [(n.message, n.location) for n in diagnostic.notes] == [
        ("the earlier access", SourceLocation("k.mlir", 3, 5))
    ]
    deadlock = DeadlockError("k.mlir:9:3: wait_flag never satisfied", "k.mlir:9:3")
    diagnostic = run.sim_diagnostic(deadlock)
    assert diagnostic.message == "wait_flag never satisfied"
    assert diagnostic.location == SourceLocation("k.mlir", 9, 3)
    several = run.sim_diagnostic(SimError("bad", ("a.mlir:1", "", "b.mlir")))
    assert several.location == SourceLocation("a.mlir", 1)
    assert [n.location for n in several.notes] == [SourceLocation("b.mlir")]
    assert run.sim_diagnostic(SimError("no place")).location is None
