"""A Ray node that goes away mid-search (docs/tuning.md): the candidates it was
running are submitted again to the nodes left and no result is lost. The test
starts a cluster of two nodes of one CPU each (`ray.cluster_utils.Cluster`)
and removes the second while a candidate runs there; skipped without Ray."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest
from xdsl.parser import Parser

from pypto_mlir.tune.evaluate import Outcome, Task, evaluate
from pypto_mlir.tune.tuner import tune
from pypto_mlir.universe import default_context

EXP = """\
func.func @e(%x: !tv.tensor<16x128xf16>) -> !tv.tensor<16x128xf16> {
  %y = tv.exp %x : !tv.tensor<16x128xf16>
  func.return %y : !tv.tensor<16x128xf16>
}
"""


def hang_off_the_head_node(task: Task) -> Outcome:
    """Measures `task`, except on a node other than the head: there it says so
    (a file named after the candidate) and waits to be killed with its node."""
    import ray

    here = ray.get_runtime_context().get_node_id()
    if here != os.environ["PYPTO_TEST_HEAD_NODE"]:
        (Path(os.environ["PYPTO_TEST_NODE_DIR"]) / str(task.index)).write_text(here)
        time.sleep(600)
    return evaluate(task)


def test_a_ray_node_going_away_loses_no_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ray = pytest.importorskip(
        "ray", reason="Ray is not installed (pip install 'pypto-mlir[distributed]')"
    )
    from ray.cluster_utils import Cluster

    from pypto_mlir.tune.executors import RayExecutor

    monkeypatch.setenv("PYPTO_TUNE_CACHE", str(tmp_path / "tune.sqlite"))
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    removed: list[str] = []
    try:
        doomed = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        env = {
            "PYPTO_TEST_HEAD_NODE": cluster.head_node.node_id,
            "PYPTO_TEST_NODE_DIR": str(tmp_path),
        }
        ray.init(
            address=cluster.address,
            log_to_driver=False,
            runtime_env={"env_vars": env},
        )
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

        def remove_when_busy() -> None:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                started = [p.name for p in tmp_path.iterdir() if p.name.isdigit()]
                if started:
                    cluster.remove_node(doomed)
                    removed.extend(started)
                    return
                time.sleep(0.2)

        remover = threading.Thread(target=remove_when_busy, daemon=True)
        remover.start()
        module = Parser(default_context(), EXP).parse_module()
        result = tune(
            module,
            target="tiny",
            budget=3,
            executor=RayExecutor(),
            evaluate_fn=hang_off_the_head_node,
        )
        remover.join(timeout=60)
    finally:
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
        ray.shutdown()
        cluster.shutdown()
    assert removed, "no candidate ran on the second node"
    assert result.rerun >= 1
    assert sorted(c.index for c in result.candidates) == [0, 1, 2]
    assert all(c.cycles is not None for c in result.candidates), result.candidates
