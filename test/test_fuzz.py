"""The mutation fuzzer (`pypto_mlir.cli.fuzz`): its cases are deterministic, its
outcomes classified, its time limit enforced; and a few hundred mutated inputs
give no traceback, internal error, hang, crash or wrong result.

`PYPTO_FUZZ_INPUTS` (default 40, and 150 in the test marked slow) and `PYPTO_FUZZ_SEED` (default 0) change the
run; `pypto-fuzz --count 10000 -j2` runs any number (docs/cli.md).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pypto_mlir.cli import fuzz

ROOT = Path(__file__).resolve().parent.parent


def _seeds() -> list[fuzz.Seed]:
    return fuzz.load_seeds(fuzz.default_seed_paths(ROOT))


def test_the_seeds_are_the_lit_inputs_and_the_examples() -> None:
    names = [seed.name for seed in _seeds()]
    assert any("/test/filecheck/" in name for name in names)
    assert any(name.endswith("examples/swish.mlir") for name in names)
    assert names == sorted(names)


def test_a_case_depends_only_on_the_seed_and_index() -> None:
    seeds = _seeds()
    first = [fuzz.make_case(seeds, 7, index) for index in range(30)]
    again = [fuzz.make_case(seeds, 7, index) for index in reversed(range(30))]
    assert first == list(reversed(again))
    other = [fuzz.make_case(seeds, 8, index) for index in range(30)]
    assert first != other
    assert {case.tool for case in first} == {"pypto-opt", "pypto-run"}


@pytest.mark.parametrize("name", sorted(fuzz.MUTATIONS))
def test_every_mutation_changes_some_text(name: str) -> None:
    import random

    text = "func.func @f(%a: i32) -> i32 {\n  func.return %a : i32\n}\n"
    mutate = fuzz.MUTATIONS[name]
    changed = {mutate(text, random.Random(i))[0] for i in range(20)}
    assert changed - {text}


@pytest.mark.parametrize(
    ("status", "stderr", "outcome"),
    [
        (None, "", "hang"),
        (0, "", "ok"),
        (1, "f.mlir:2:3: error: 'x' op bad\n", "diagnostic"),
        (1, "pypto-opt: error: cannot load\n", "diagnostic"),
        (
            1,
            "pypto-opt: internal error: KeyError: 1 (please report this)\n",
            "internal-error",
        ),
        (1, "Traceback (most recent call last):\n  ...\n", "traceback"),
        (
            1,
            "f.mlir:1:1: error: --check: result0 differs from the tv reference",
            "wrong-result",
        ),
        (fuzz.ROUND_TRIP_STATUS, "round trip: ...", "wrong-result"),
        (1, "something\n", "crash"),
        (
            1,
            "f.mlir:3:1: error: bad\n// CHECK: pypto-opt: internal error: X\n",
            "diagnostic",
        ),
        (-11, "", "crash"),
    ],
)
def test_outcomes_are_classified(status: int | None, stderr: str, outcome: str) -> None:
    assert fuzz.classify(status, stderr, "") == outcome


def test_a_round_trip_failure_of_an_op_xdsl_misprints_is_known_upstream() -> None:
    printed = "builtin.module {\n  scf.execute_region {\n  }\n}\n"
    status = fuzz.ROUND_TRIP_STATUS
    assert fuzz.classify(status, "round trip: ...", printed) == "known-upstream"
    assert fuzz.classify(status, "round trip: ...", "builtin.module {}") == (
        "wrong-result"
    )


def _slow(arguments: list[str]) -> int:
    time.sleep(30)
    return 0


def _spin(arguments: list[str]) -> int:
    while True:
        pass


def _broken(arguments: list[str]) -> int:
    raise RuntimeError("escaped")


@pytest.mark.parametrize("tool", ["slow", "spin"])
def test_a_run_over_its_time_limit_is_a_hang_and_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    """A loop is stopped at the CPU time limit, a wait at the wall-clock one."""
    monkeypatch.setitem(fuzz._MAIN, "slow", _slow)  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setitem(fuzz._MAIN, "spin", _spin)  # pyright: ignore[reportPrivateUsage]
    case = fuzz.Case(0, "seed", (), b"", tool, ())
    start = time.monotonic()
    result = fuzz.run_case(case, tmp_path, time_limit=0.2)
    assert result.outcome == "hang"
    assert time.monotonic() - start < 25


def test_an_exception_escaping_the_tool_is_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(fuzz._MAIN, "broken", _broken)  # pyright: ignore[reportPrivateUsage]
    result = fuzz.run_case(fuzz.Case(0, "seed", (), b"", "broken", ()), tmp_path, 20)
    assert result.outcome == "traceback"
    assert "RuntimeError: escaped" in result.output


def test_a_reproducer_names_the_command_and_output(tmp_path: Path) -> None:
    case = fuzz.Case(
        3, "a.mlir", ("truncate: at 2",), b"fu", "pypto-opt", ("-p", "x y")
    )
    result = fuzz.Result("crash", 1, "output text")
    path = fuzz.write_reproducer(tmp_path, case, result, 5)
    assert path.read_bytes() == b"fu"
    text = (tmp_path / "crash-5-3.txt").read_text()
    assert f"command: pypto-opt {path} -p 'x y'" in text
    assert "truncate: at 2" in text and "output text" in text


@pytest.mark.parametrize(
    "default_count", [40, pytest.param(150, marks=pytest.mark.slow)], ids=str
)
def test_mutated_inputs_give_results_or_diagnostics(default_count: int) -> None:
    """The first 40 inputs in `make test` (a case depends only on the seed and
    its index, so they are the first 40 of the 150 `make test-all` runs)."""
    count = int(os.environ.get("PYPTO_FUZZ_INPUTS", default_count))
    seed = int(os.environ.get("PYPTO_FUZZ_SEED", "0"))
    summary = fuzz.fuzz(_seeds(), seed=seed, count=count, jobs=2, time_limit=60)
    assert summary.inputs == count
    assert summary.counts["diagnostic"] > 0 and summary.counts["ok"] > 0
    found = "\n".join(
        f"{result.outcome}: input {case.index} from {case.seed_name} "
        f"{case.mutations} via {case.tool} {case.arguments}:\n{result.output[:600]}"
        for case, result in summary.failures
    )
    assert not summary.failures, f"{summary.text()}\n{found}"
