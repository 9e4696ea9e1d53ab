"""Where candidates run: a local process pool (the default) or Ray, behind one
interface. `Executor.run(fn, tasks)` yields each task's outcome as it arrives;
a task whose worker dies (a crashed process, a Ray node gone) is submitted
again, up to MAX_ATTEMPTS times, and results already streamed are kept."""

from __future__ import annotations

import os
import time
from abc import ABC, abstractmethod
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from pypto_mlir.tune.evaluate import Outcome, Task

MAX_ATTEMPTS = 3
"""A task whose worker died this many times is recorded as failed."""

DEFAULT_CANDIDATE_SECONDS = 300.0
"""pypto-tune's limit on one candidate's lowering and simulation (local pool):
a tiling of tiny tiles can take the simulator far longer than the default."""

RAY_INSTALL = "pip install 'pypto-mlir[distributed]'"


class ExecutorError(RuntimeError):
    """An executor that cannot start (Ray missing, no cluster at the address)."""


Evaluate = Callable[[Task], Outcome]


class Executor(ABC):
    """Runs tasks somewhere; see the module docstring."""

    name: str
    workers: int
    lost: int = 0
    """Tasks re-run because their worker died."""

    @abstractmethod
    def run(self, fn: Evaluate, tasks: Sequence[Task]) -> Iterator[Outcome]: ...

    @abstractmethod
    def close(self) -> None:
        """Release the workers."""

    def _gave_up(self, task: Task, attempts: int) -> Outcome:
        return Outcome(
            task.index, None, f"its worker died {attempts} times (not measured)"
        )


class LocalExecutor(Executor):
    """A process pool of `workers` processes on this machine. It keeps one task
    per worker in flight, so a task running longer than `timeout` seconds is
    known: its worker is killed and the task recorded as too slow."""

    name = "local"

    def __init__(
        self, workers: int | None = None, timeout: float | None = None
    ) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.timeout = timeout
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.workers)
        return self._pool

    def _drop_pool(self, kill: bool) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if kill:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
        pool.shutdown(wait=False, cancel_futures=True)

    def run(self, fn: Evaluate, tasks: Sequence[Task]) -> Iterator[Outcome]:
        queue = deque(tasks)
        attempts: Counter[int] = Counter()
        running: dict[Future[Outcome], tuple[Task, float]] = {}
        while queue or running:
            pool = self._get_pool()
            while queue and len(running) < self.workers:
                task = queue.popleft()
                running[pool.submit(fn, task)] = (task, time.monotonic())
            limit = None
            if self.timeout is not None:
                oldest = min(started for _, started in running.values())
                limit = max(0.0, oldest + self.timeout - time.monotonic())
            done, _ = wait(set(running), timeout=limit, return_when=FIRST_COMPLETED)
            if not done:
                now = time.monotonic()
                self._drop_pool(kill=True)
                for task, started in sorted(running.values(), key=lambda r: r[0].index):
                    if now - started >= (self.timeout or 0):
                        yield Outcome(
                            task.index,
                            None,
                            f"not measured: ran longer than the {self.timeout:g} s "
                            "limit per candidate",
                        )
                    else:
                        queue.appendleft(task)
                running.clear()
                continue
            broken = False
            for future in sorted(done, key=lambda f: running[f][0].index):
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    broken = True
                    continue
                del running[future]
                yield outcome
            if broken:
                self._drop_pool(kill=False)
                for task, _ in sorted(running.values(), key=lambda r: r[0].index):
                    attempts[task.index] += 1
                    self.lost += 1
                    if attempts[task.index] >= MAX_ATTEMPTS:
                        yield self._gave_up(task, attempts[task.index])
                    else:
                        queue.appendleft(task)
                running.clear()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


class RayExecutor(Executor):
    """Ray tasks, on a local instance (`address=None`, `num_cpus` CPUs) or on
    the cluster at `address`. Ray's own retries are off: a task lost with its
    worker or node is submitted again here, like the local pool's."""

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorError(
                f"--ray needs Ray, an optional extra: {RAY_INSTALL}"
            ) from None
        self.ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            try:
                ray.init(
                    # "local": a new instance, never one a stale
                    # /tmp/ray/ray_current_cluster or RAY_ADDRESS points to
                    address=address or "local",
                    num_cpus=num_cpus if address is None else None,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
            except Exception as error:
                where = f"the cluster at {address}" if address else "a local instance"
                raise ExecutorError(f"cannot start Ray on {where}: {error}") from None
        self.workers = int(ray.cluster_resources().get("CPU", 1))

    def run(self, fn: Evaluate, tasks: Sequence[Task]) -> Iterator[Outcome]:
        ray = self.ray
        remote = ray.remote(max_retries=0, num_cpus=1)(fn)
        attempts: Counter[int] = Counter()
        refs = {remote.remote(t): t for t in tasks}
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1)
            task = refs.pop(done[0])
            try:
                yield ray.get(done[0])
            except ray.exceptions.RayTaskError as error:
                yield Outcome(task.index, None, f"failed in Ray: {error}")
            except ray.exceptions.RayError:
                attempts[task.index] += 1
                self.lost += 1
                if attempts[task.index] >= MAX_ATTEMPTS:
                    yield self._gave_up(task, attempts[task.index])
                else:
                    refs[remote.remote(task)] = task

    def close(self) -> None:
        if self._started:
            self.ray.shutdown()
