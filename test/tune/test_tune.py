"""The auto-tuner (pypto_mlir/tune, docs/tuning.md): tiny searches on target
`tiny` through the local pool and a local Ray instance, the cache round trip
and its stale-entry rule, and the fault cases (empty or inconsistent space, a
candidate that does not lower, a dying worker, a corrupt cache, bad CLI
arguments)."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import pypto_mlir as pto
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target
from pypto_mlir.tune import space as space_module
from pypto_mlir.tune.applied import stored_tuning
from pypto_mlir.tune.cache import CachedTuning, TuneCache, TuneCacheWarning
from pypto_mlir.tune.evaluate import Outcome, Task, evaluate
from pypto_mlir.tune.executors import LocalExecutor
from pypto_mlir.tune.key import target_files, tune_key
from pypto_mlir.tune.space import Dimension, SpaceError, build_space
from pypto_mlir.tune.tuner import tune
from pypto_mlir.universe import default_context

KERNEL = """\
func.func @f(%x: !tv.tensor<32x256xf16>) -> !tv.tensor<32x256xf16> {
  %s = tv.sigmoid %x : !tv.tensor<32x256xf16>
  %y = tv.mul %x, %s : !tv.tensor<32x256xf16>
  func.return %y : !tv.tensor<32x256xf16>
}
"""

MATMUL = """\
func.func @g(%a: !tv.tensor<64x64xf16>, %b: !tv.tensor<64x64xf16>) -> !tv.tensor<64x64xf16> {
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16> -> !tv.tensor<64x64xf16>
  func.return %c : !tv.tensor<64x64xf16>
}
"""

TWO_NESTS = """\
func.func @h(%x: !tv.tensor<64x1024xf16>, %a: !tv.tensor<32x64xf16>) -> (!tv.tensor<64x1024xf16>, !tv.tensor<32x64xf16>) {
  %y = tv.exp %x : !tv.tensor<64x1024xf16>
  %b = tv.abs %a : !tv.tensor<32x64xf16>
  func.return %y, %b : !tv.tensor<64x1024xf16>, !tv.tensor<32x64xf16>
}
"""

CSR = "!tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>"

SPMM = f"""\
func.func @spmm(%a: {CSR}, %b: !tv.tensor<64x128xf16>) -> !tv.tensor<64x128xf16> {{
  %c = tv.spmm %a, %b : {CSR}, !tv.tensor<64x128xf16> -> !tv.tensor<64x128xf16>
  func.return %c : !tv.tensor<64x128xf16>
}}
"""


def parse(text: str):
    return Parser(default_context(), text).parse_module()


@pytest.fixture(autouse=True)
def cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "tune.sqlite"
    monkeypatch.setenv("PYPTO_TUNE_CACHE", str(path))
    return path


def _tune(module, executor, budget: int | None = 5, **kwargs):
    try:
        return tune(module, target="tiny", budget=budget, executor=executor, **kwargs)
    finally:
        executor.close()


def test_tiny_search_on_the_local_pool_is_applied_by_tuned_lowering(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pypto_mlir.cli.opt import main as opt_main

    module = parse(KERNEL)
    result = _tune(module, LocalExecutor(2))
    assert len(result.candidates) == 5
    assert result.candidates[0].options == {}  # the default is a candidate
    assert result.best.cycles is not None and result.default.cycles is not None
    assert result.best.cycles <= result.default.cycles
    assert result.check.startswith("ok")
    assert sum(result.space.pruned.values()) > 0
    source = tmp_path / "k.mlir"
    source.write_text(KERNEL)
    assert opt_main([str(source), "-p", "pypto-lower{target=tiny tuned=true}"]) == 0
    err = capsys.readouterr().err
    assert "pypto-lower{tuned=true}: options tuned for @f on tiny" in err
    assert f"({result.best.cycles} cycles" in err


@pytest.fixture(scope="module")
def ray_instance(tmp_path_factory: pytest.TempPathFactory):
    """One local Ray instance of 2 CPUs for the module's Ray tests; its workers
    see PYPTO_TEST_DIE_MARKER (die_once)."""
    ray = pytest.importorskip(
        "ray", reason="Ray is not installed (pip install 'pypto-mlir[distributed]')"
    )
    marker = tmp_path_factory.mktemp("ray") / "died"
    ray.init(
        address="local",  # not a cluster an earlier test left a record of
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYPTO_TEST_DIE_MARKER": str(marker)}},
    )
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield marker
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    ray.shutdown()


def test_tiny_search_on_a_local_ray_instance(ray_instance: Path) -> None:
    from pypto_mlir.tune.executors import RayExecutor

    executor = RayExecutor()
    result = tune(parse(KERNEL), target="tiny", budget=4, executor=executor)
    executor.close()  # the instance is the fixture's: left running
    assert len(result.candidates) == 4
    assert result.executor == "ray" and result.workers == 2
    assert result.best.cycles <= result.default.cycles


def test_cache_round_trip_and_stale_entries(
    cache_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pypto_mlir.tune import key as key_module

    module = parse(KERNEL)
    files = target_files("tiny")
    cache = TuneCache()
    assert cache.path == cache_file
    stored = CachedTuning({"tile_sizes": (8, 64), "double_buffer": False}, 10, 20, 3)
    cache.store(tune_key(module, "f", files), stored)
    assert cache.lookup(tune_key(module, "f", files)) == (stored, "")
    # another target file (same name, one number changed): stale, ignored
    changed = tmp_path / "tiny.toml"
    changed.write_text('base = "tiny"\nname = "tiny"\n[sync]\n')
    other = target_files(str(changed))
    found, why = cache.lookup(tune_key(module, "f", other))
    assert found is None and "another target file" in why
    # another compiler
    monkeypatch.setattr(key_module, "compiler_version", lambda: "0+other")
    found, why = cache.lookup(key_module.tune_key(module, "f", files))
    assert found is None and "another compiler version" in why


def test_corrupt_cache_is_rebuilt_with_a_warning(cache_file: Path) -> None:
    cache_file.write_bytes(b"this is not a database" * 100)
    module = parse(KERNEL)
    key = tune_key(module, "f", target_files("tiny"))
    absent = TuneCache(cache_file.with_name("absent.sqlite"))
    assert absent.lookup(key) == (None, "no entry")
    assert not absent.path.exists()
    with pytest.warns(TuneCacheWarning, match="unreadable"):
        assert TuneCache().lookup(key) == (None, "no entry")
    assert list(cache_file.parent.glob("tune.sqlite.corrupt-*"))
    TuneCache().store(key, CachedTuning({}, 1, 1, 1))
    assert TuneCache().lookup(key)[0] is not None
    sqlite3.connect(cache_file).close()


def test_empty_and_inconsistent_spaces(monkeypatch: pytest.MonkeyPatch) -> None:
    module = parse(MATMUL)
    target = load_target("tiny")
    pipeline = LowerPipeline(target="tiny")
    with pytest.raises(SpaceError, match="empty search space"):
        build_space(module, "g", target, pipeline, only=["tile-sizes"])
    with pytest.raises(SpaceError, match="unknown option"):
        build_space(module, "g", target, pipeline, only=["no-such-option"])

    def bad(context, item):
        return Dimension(item.name, (0, 1, 2), 7)

    monkeypatch.setitem(space_module._PROVIDERS, "max_cores", bad)
    with pytest.raises(SpaceError, match="inconsistent search space"):
        build_space(module, "g", target, pipeline, only=["max-cores"])

    def unnumbered(context, item):  # two dimensions of one field, no nest named
        return [Dimension(item.name, (0, 1), 0), Dimension(item.name, (0, 2), 0)]

    monkeypatch.setitem(space_module._PROVIDERS, "max_cores", unnumbered)
    with pytest.raises(SpaceError, match="do not each name a nest"):
        build_space(module, "g", target, pipeline, only=["max-cores"])


def test_a_candidate_that_does_not_lower_is_recorded_and_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def misaligned(context, item):
        # 3 columns break tiny's ub alignment: tv-to-tile refuses
        return Dimension(item.name, ((), (8, 3), (8, 64)), ())

    monkeypatch.setitem(space_module._PROVIDERS, "tile_sizes", misaligned)
    result = _tune(parse(KERNEL), LocalExecutor(1), budget=3, only=["tile-sizes"])
    failed = [c for c in result.candidates if c.cycles is None]
    assert [c.options for c in failed] == [{"tile_sizes": (8, 3)}]
    assert "does not lower" in failed[0].error and "multiple of" in failed[0].error
    assert result.best.cycles is not None


def test_a_time_budget_shorter_than_the_first_batch_still_measures_the_default() -> (
    None
):
    result = _tune(parse(KERNEL), LocalExecutor(1), budget=None, seconds=0.001)
    assert result.candidates[0].options == {} and result.default.cycles


def die_once(task: Task) -> Outcome:
    """Kills its worker the first time it sees candidate 1 (a marker file
    remembers it across processes)."""
    marker = Path(os.environ["PYPTO_TEST_DIE_MARKER"])
    if task.index == 1 and not marker.exists():
        marker.write_text("died")
        os._exit(17)
    return evaluate(task)


def test_a_dying_local_worker_loses_no_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYPTO_TEST_DIE_MARKER", str(tmp_path / "died"))
    result = _tune(parse(KERNEL), LocalExecutor(2), budget=4, evaluate_fn=die_once)
    assert (tmp_path / "died").exists()
    assert result.rerun >= 1
    assert sorted(c.index for c in result.candidates) == [0, 1, 2, 3]
    assert all(c.cycles is not None for c in result.candidates)


def test_a_lost_ray_worker_loses_no_result(ray_instance: Path) -> None:
    from pypto_mlir.tune.executors import RayExecutor

    result = tune(
        parse(KERNEL),
        target="tiny",
        budget=3,
        executor=RayExecutor(),
        evaluate_fn=die_once,
    )
    assert ray_instance.exists()
    assert result.rerun >= 1
    assert all(c.cycles is not None for c in result.candidates)


def sleep_on_one(task: Task) -> Outcome:
    """Candidate 1 never finishes in time."""
    if task.index == 1:
        import time

        time.sleep(600)
    return evaluate(task)


def test_a_candidate_over_the_time_limit_is_recorded_and_skipped() -> None:
    result = _tune(
        parse(KERNEL), LocalExecutor(2, timeout=15), budget=3, evaluate_fn=sleep_on_one
    )
    slow = [c for c in result.candidates if c.cycles is None]
    assert [c.index for c in slow] == [1]
    assert "longer than the 15 s limit" in slow[0].error
    assert sorted(c.index for c in result.candidates) == [0, 1, 2]


def _tune_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from pypto_mlir.cli.tune import main

    try:
        status = main(argv)
    except SystemExit as exit:
        status = int(exit.code or 0)
    out = capsys.readouterr()
    return status, out.out + out.err


@pytest.mark.parametrize(
    "argv,status,message",
    [
        (["K", "--budget", "0"], 2, "argument --budget: must be at least 1"),
        (["K", "--seconds", "nan"], 2, "argument --seconds: must be a positive"),
        (["K", "--budget", "3", "--seconds", "2"], 2, "not allowed with argument"),
        (["K", "--jobs", "x"], 2, "'x' is not a whole number"),
        (["missing.mlir"], 1, "missing.mlir: error: cannot open input file"),
        (["K", "--target", "nowhere.toml"], 1, "error: nowhere.toml: no such target"),
        (["K", "--entry", "h"], 1, "no function @h in the module"),
        (["K", "--options", "frob"], 1, "k.mlir:1:1: error: unknown option(s) to tune"),
        (["K", "--ray", "--jobs", "2"], 1, "--jobs sizes the local pool"),
    ],
)
def test_bad_cli_arguments(
    argv: list[str],
    status: int,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = tmp_path / "k.mlir"
    source.write_text(KERNEL)
    argv = [str(source) if a == "K" else a for a in argv]
    code, text = _tune_cli(argv, capsys)
    assert code == status, text
    assert message in text
    assert "Traceback" not in text


def test_ray_absent_says_how_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    source = tmp_path / "k.mlir"
    source.write_text(KERNEL)
    code, text = _tune_cli([str(source), "--ray"], capsys)
    assert code == 1
    assert "pip install 'pypto-mlir[distributed]'" in text


def test_cli_writes_the_report_and_the_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    source = tmp_path / "k.mlir"
    source.write_text(KERNEL)
    report, plot = tmp_path / "r.json", tmp_path / "p.png"
    argv = [str(source), "--target", "tiny", "--budget", "3", "--jobs", "1"]
    code, text = _tune_cli(
        [*argv, "--report", str(report), "--plot", str(plot)], capsys
    )
    assert code == 0, text
    assert "candidate" in text and "speed-up" in text and "% roofline" in text
    data = json.loads(report.read_text())
    assert len(data["candidates"]) == 3 and data["best"]["cycles"] > 0
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_kernel_tune_and_autotune() -> None:
    backend = pto.sim_backend("tiny")

    @pto.kernel(autotune=3)
    def scaled(x: pto.Tensor[(32, 256), pto.f16]) -> pto.Tensor[(32, 256), pto.f16]:
        return x * pto.sigmoid(x)

    x = np.random.default_rng(0).uniform(-1, 1, (32, 256)).astype(np.float16)
    assert not stored_tuning(scaled.module(), "scaled", "tiny")
    run = scaled.run(x, backend=backend)  # tunes first: nothing stored yet
    assert stored_tuning(scaled.module(), "scaled", "tiny")
    np.testing.assert_allclose(
        run.value, (x * (1 / (1 + np.exp(-x.astype(np.float32))))), atol=2e-2
    )
    result = scaled.tune(x, budget=2, jobs=1, backend=backend)
    assert len(result.candidates) == 2
    assert dataclasses.asdict(result.default)["options"] == {}


def test_a_two_nest_kernel_has_a_tile_size_dimension_per_nest() -> None:
    """Each vector nest gets its own sizes (`nest-tile-sizes`), pruned for that
    nest alone; the pipeline-wide tile-sizes is then not tuned. The sizes the
    tuner sets reach tv-to-tile: every candidate lowers and runs."""
    module = parse(TWO_NESTS)
    space = build_space(module, "h", load_target("tiny"), LowerPipeline(target="tiny"))
    per_nest = [d for d in space.dimensions if d.name == "nest_tile_sizes"]
    assert [d.label for d in per_nest] == ["nest-tile-sizes[0]", "nest-tile-sizes[1]"]
    assert all(d.default == () and () in d.values for d in per_nest)
    assert per_nest[0].values != per_nest[1].values  # sized for each nest's extents
    assert space.pruned["nest-tile-sizes[0]: capacity"] > 0
    assert any(u.startswith("tile-sizes (2 vector nests") for u in space.untuned)
    config = list(space.default())
    for d in per_nest:
        config[space.dimensions.index(d)] = d.values[0]
    first, second = (d.values[0] for d in per_nest)
    assert space.options(tuple(config)) == {"nest_tile_sizes": (0, *first, 1, *second)}
    result = _tune(module, LocalExecutor(1), budget=3, only=["nest-tile-sizes"])
    assert all(c.cycles is not None for c in result.candidates), result.candidates
    assert {c.options.get("nest_tile_sizes", ())[:1] for c in result.candidates} >= {
        (),
        (0,),
    }


def test_a_sparse_kernel_tunes_its_row_tile_width() -> None:
    """sparse-tile-cols: widths tv-sparse-to-tile takes (probed), the default 0
    among them; the evaluator draws CSR inputs as `pypto-run --random` does."""
    module = parse(SPMM)
    space = build_space(
        module,
        "spmm",
        load_target("tiny"),
        LowerPipeline(target="tiny"),
        only=["sparse-tile-cols", "bsr-cube"],
    )
    (cols,) = space.dimensions  # bsr-cube: no effect on a CSR kernel
    assert cols.values == (16, 32, 64, 0) and cols.default == 0
    assert space.pruned == {
        "bsr-cube: no effect on the tile IR": 1,
        "sparse-tile-cols: alignment": 1,  # 8 columns: under tiny's 16-element unit
        "sparse-tile-cols: capacity": 1,  # 128 columns
    }
    result = _tune(module, LocalExecutor(1), budget=3, only=["sparse-tile-cols"])
    assert all(c.cycles is not None for c in result.candidates), result.candidates
    assert result.check.startswith("ok")


def test_an_int_field_gets_a_probed_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """How a new int or float option is made tunable (docs/tuning.md): values
    the passes refuse or that change nothing are pruned, the default kept."""
    module = parse(SPMM)

    def widths(context, item):
        return space_module.probed_dimension(
            context, item, (0, 16, 17, 96, 128, 4096), "probed"
        )

    monkeypatch.setitem(space_module._PROVIDERS, "sparse_tile_cols", widths)
    space = build_space(
        module,
        "spmm",
        load_target("tiny"),
        LowerPipeline(target="tiny"),
        only=["sparse-tile-cols"],
    )
    assert space.dimensions[0].values == (0, 16)
    assert space.pruned == {
        "sparse-tile-cols: alignment": 1,  # 17
        "sparse-tile-cols: capacity": 2,  # 128, 4096
        "sparse-tile-cols: same tiling": 1,  # 96: what 0 chooses
    }


GATHER = """\
func.func @g(%x: !tv.tensor<50x40xf16>, %idx: !tv.tensor<3x10xi32>) -> !tv.tensor<3x10x40xf16> {
  %g = tv.gather %x[%idx] : !tv.tensor<50x40xf16>, !tv.tensor<3x10xi32> -> !tv.tensor<3x10x40xf16>
  func.return %g : !tv.tensor<3x10x40xf16>
}
"""


def test_a_gather_tunes_its_run_length() -> None:
    """sparse-gather-run: run lengths probed for a kernel with a gather, the
    default 4 among them; a kernel without one says why it is not tuned."""
    space = build_space(
        parse(GATHER),
        "g",
        load_target("tiny"),
        LowerPipeline(target="tiny"),
        only=["sparse-gather-run", "sparse-entry-window", "double-buffer"],
    )
    runs = next(d for d in space.dimensions if d.name == "sparse_gather_run")
    assert runs.default == 4 and set(runs.values) == {1, 2, 4, 8}
    assert "sparse-entry-window (no tv.sparse_softmax)" in space.untuned


TOPK = """\
func.func @topk(%q: !tv.tensor<16x32xf16>, %k: !tv.tensor<64x32xf16>, %v: !tv.tensor<64x32xf16>, %idx: !tv.tensor<16x8xi32>) -> !tv.tensor<16x32xf16> {
  %0 = tv.reshape %q : !tv.tensor<16x32xf16> to !tv.tensor<16x1x32xf16>
  %1 = tv.gather %k[%idx] : !tv.tensor<64x32xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x32xf16>
  %3 = tv.matmul %0, %1 transpose_b acc(f32) : !tv.tensor<16x1x32xf16>, !tv.tensor<16x8x32xf16> -> !tv.tensor<16x1x8xf16>
  %6 = tv.softmax %3 axis = 2 : !tv.tensor<16x1x8xf16>
  %7 = tv.gather %v[%idx] : !tv.tensor<64x32xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x32xf16>
  %8 = tv.matmul %6, %7 acc(f32) : !tv.tensor<16x1x8xf16>, !tv.tensor<16x8x32xf16> -> !tv.tensor<16x1x32xf16>
  %9 = tv.view %8[0, 0, 0] [16, 1, 32] [1, 1, 1] : !tv.tensor<16x1x32xf16> to !tv.tensor<16x32xf16>
  func.return %9 : !tv.tensor<16x32xf16>
}
"""


def test_top_k_attention_tunes_its_path() -> None:
    """sparse-topk-dense-fallback: `always` (the dense fallback) probed
    against the default `auto` (here the gather nest, which `never` repeats:
    pruned as the same tiling); a plain gather has no top-k path to choose."""
    space = build_space(
        parse(TOPK),
        "topk",
        load_target("ascend910b"),
        LowerPipeline(target="ascend910b"),
        only=["sparse-topk-dense-fallback"],
    )
    (paths,) = space.dimensions
    assert paths.default == "auto" and paths.values == ("always", "auto")
    assert space.pruned == {"sparse-topk-dense-fallback: same tiling": 1}
    with pytest.raises(
        SpaceError, match=r"sparse-topk-dense-fallback \(no choice for this kernel\)"
    ):
        build_space(
            parse(GATHER),
            "g",
            load_target("tiny"),
            LowerPipeline(target="tiny"),
            only=["sparse-topk-dense-fallback"],
        )
