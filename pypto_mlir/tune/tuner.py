"""The search as a whole: build the space, propose batches (`search`),
measure them on an executor (`executors`, `evaluate`), check the winner's
numerics against the tv reference, store it in the cache."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import DEFAULT_TARGET, load_target
from pypto_mlir.targets.resolve import resolve_target
from pypto_mlir.tune.applied import options_text
from pypto_mlir.tune.cache import CachedTuning, TuneCache
from pypto_mlir.tune.evaluate import (
    Outcome,
    Task,
    evaluate,
    lower_candidate,
    materialize,
    random_arguments,
)
from pypto_mlir.tune.executors import Evaluate, Executor, LocalExecutor
from pypto_mlir.tune.key import module_text, target_files, tune_key
from pypto_mlir.tune.search import LocalSearch
from pypto_mlir.tune.space import Config, SearchSpace, build_space

DEFAULT_BUDGET = 32
"""Candidates measured when neither a count nor a time is given."""


class TuneError(ValueError):
    """The kernel cannot be tuned (no function, a target that does not load...)."""


@dataclass
class Candidate:
    """One measured configuration."""

    index: int
    options: dict[str, Any]
    cycles: int | None
    error: str = ""
    seconds: float = 0.0
    worker: str = ""

    @property
    def text(self) -> str:
        return options_text(self.options) if self.options else "default"


@dataclass
class TuneResult:
    """What a search found, in measurement order."""

    entry: str
    target: str
    space: SearchSpace
    candidates: list[Candidate]
    default: Candidate
    best: Candidate
    roofline_cycles: float | None
    check: str
    executor: str
    workers: int
    seconds: float
    search_seconds: float = 0.0
    """Of `seconds`, the time spent measuring candidates (not building the
    space or checking the winner)."""
    rerun: int = 0
    """Candidates re-run because their worker died."""
    rejected: list[str] = field(default_factory=list[str])
    """Candidates that were fastest but failed the numerical check."""

    @property
    def speedup(self) -> float:
        if not self.default.cycles or not self.best.cycles:
            return 1.0
        return self.default.cycles / self.best.cycles

    @property
    def throughput(self) -> float:
        """Candidates measured per second of measuring."""
        return (
            len(self.candidates) / self.search_seconds if self.search_seconds else 0.0
        )

    def roofline_share(self, candidate: Candidate) -> float | None:
        if not self.roofline_cycles or not candidate.cycles:
            return None
        return self.roofline_cycles / candidate.cycles


def select_entry(module: ModuleOp, entry: str | None) -> str:
    """`entry`, or the module's only public function; raises TuneError."""
    functions = [
        op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration
    ]
    names = [f.sym_name.data for f in functions]
    if entry is not None:
        if entry not in names:
            raise TuneError(
                f"no function @{entry} in the module (it has: {', '.join(names) or 'none'})"
            )
        return entry
    public = [
        f.sym_name.data
        for f in functions
        if f.sym_visibility is None or f.sym_visibility.data == "public"
    ]
    if len(public) != 1:
        raise TuneError(
            f"the module has {len(public)} public functions; name one with --entry"
        )
    return public[0]


def tune(
    module: ModuleOp,
    entry: str | None = None,
    target: str | None = None,
    budget: int | None = None,
    seconds: float | None = None,
    executor: Executor | None = None,
    only: Sequence[str] = (),
    cache: TuneCache | None = None,
    inputs: Sequence[Any] | None = None,
    progress: bool = False,
    evaluate_fn: Evaluate = evaluate,
    on_result: Callable[[Candidate], None] | None = None,
) -> TuneResult:
    """Search pypto-lower's options for `entry` of the tv `module` on
    `target` (default: the module's, else ascend910b) within `budget`
    candidates or `seconds`; store the winner in `cache` (None: the default
    file; pass `TuneCache` to move it). `evaluate_fn` replaces the worker
    function (tests inject faults with it)."""
    from pypto_mlir.targets import TargetError

    start = time.perf_counter()
    entry = select_entry(module, entry)
    target_name = resolve_target(module, target, default=DEFAULT_TARGET)
    try:
        files = target_files(target_name)
        chip = load_target(target_name)
    except (TargetError, OSError) as error:
        raise TuneError(str(error)) from None
    if budget is not None and budget < 1:
        raise TuneError(f"the budget must be at least 1 candidate, got {budget}")
    if seconds is not None and seconds <= 0:
        raise TuneError(f"the time budget must be positive, got {seconds}")
    limit = budget if budget is not None else (10**9 if seconds else DEFAULT_BUDGET)
    pipeline = LowerPipeline(target=target_name)
    space = build_space(module, entry, chip, pipeline, only)
    ir = module_text(module)
    search_start = time.perf_counter()
    own_executor = executor is None
    executor = executor or LocalExecutor()
    search = LocalSearch(space, limit)
    measured: dict[Config, int | None] = {}
    candidates: list[Candidate] = []
    configs: list[Config] = []
    bar = _progress_bar(progress, min(limit, space.size))
    try:
        # the first batch (with the default) runs whatever the time budget
        while seconds is None or not configs or time.perf_counter() - start < seconds:
            batch = search.next_batch(max(2 * executor.workers, 2), measured)
            if not batch:
                break
            tasks = [
                Task(
                    len(configs) + i,
                    ir,
                    entry,
                    files,
                    tuple(sorted(space.options(config).items())),
                )
                for i, config in enumerate(batch)
            ]
            configs += batch
            arrived: list[Outcome] = []
            for outcome in executor.run(evaluate_fn, tasks):
                arrived.append(outcome)
                if bar is not None:
                    bar.update(1)
                    best = min((c.cycles for c in candidates if c.cycles), default=None)
                    if outcome.cycles and (best is None or outcome.cycles < best):
                        bar.set_postfix_str(f"best {outcome.cycles} cycles")
            for outcome in sorted(arrived, key=lambda o: o.index):
                config = configs[outcome.index]
                measured[config] = outcome.cycles
                candidate = Candidate(
                    outcome.index,
                    space.options(config),
                    outcome.cycles,
                    outcome.error,
                    outcome.seconds,
                    outcome.worker,
                )
                candidates.append(candidate)
                if on_result is not None:
                    on_result(candidate)
    finally:
        if bar is not None:
            bar.close()
        search_seconds = time.perf_counter() - search_start
        rerun = executor.lost
        workers = executor.workers
        name = executor.name
        if own_executor:
            executor.close()
    default = candidates[0]
    if default.cycles is None:
        raise TuneError(f"the default configuration does not run: {default.error}")
    best, check, rejected = _checked_best(
        module, entry, target_name, candidates, inputs
    )
    (cache or TuneCache()).store(
        tune_key(module, entry, files),
        CachedTuning(best.options, best.cycles or 0, default.cycles, len(candidates)),
    )
    from pypto_mlir.roofline import roofline_bound

    bound = roofline_bound(module, entry, chip)
    return TuneResult(
        entry,
        target_name,
        space,
        candidates,
        default,
        best,
        None if bound is None else bound.cycles,
        check,
        name,
        workers,
        time.perf_counter() - start,
        search_seconds,
        rerun,
        rejected,
    )


def _checked_best(
    module: ModuleOp,
    entry: str,
    target: str,
    candidates: list[Candidate],
    inputs: Sequence[Any] | None,
) -> tuple[Candidate, str, list[str]]:
    """The fastest candidate whose outputs agree with the tv reference (the
    default when none beats it), with the check's text and those rejected."""
    from pypto_mlir.check import compare_levels

    function = module.clone()
    ranked = sorted(
        (c for c in candidates if c.cycles is not None),
        key=lambda c: (c.cycles, c.index),
    )
    rejected: list[str] = []
    name = materialize(target_files(target))
    for candidate in ranked:
        lowered = lower_candidate(module, name, candidate.options)
        source = next(
            op
            for op in function.ops
            if isinstance(op, func.FuncOp) and op.sym_name.data == entry
        )
        arguments = list(inputs) if inputs is not None else random_arguments(source, 1)
        comparisons = compare_levels(
            module, lowered, entry, arguments, load_target(name)
        )
        failed = [c for c in comparisons if not c.ok]
        if not failed:
            return (
                candidate,
                f"ok ({len(comparisons)} of {len(comparisons)} outputs within "
                "tolerance of the tv reference)",
                rejected,
            )
        rejected.append(f"{candidate.text}: {failed[0].describe()}")
        if candidate.index == 0:
            break
    default = candidates[0]
    return (
        default,
        "the default was kept: no faster candidate passed the check",
        rejected,
    )


def _progress_bar(enabled: bool, total: int) -> Any:
    """A tqdm bar on stderr (shown on a terminal only), or None."""
    if not enabled:
        return None
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread in a process that forks workers
    return tqdm(total=total, unit="cand", desc="tuning", disable=None, leave=False)
