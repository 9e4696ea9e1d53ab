"""A third-party package with its own `xdsl.universe` entry point (examples/plugin)
is seen by `pypto-opt` and `xdsl-opt` without any change to pypto-mlir.

The plugin is "installed" the way an installer leaves it, but offline and fast: its
source folder goes on PYTHONPATH next to a generated `.dist-info` holding the entry
points its pyproject.toml declares (importlib.metadata finds them there).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "examples" / "plugin"
EXAMPLE = PLUGIN / "example.mlir"


def _install_metadata(target: Path) -> None:
    """Write the .dist-info an installer would write for examples/plugin."""
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    dist_name = project["name"].replace("-", "_")
    dist_info = target / f"{dist_name}-{project['version']}.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines: list[str] = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in entries.items()]
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("site")
    _install_metadata(site)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(PLUGIN)])
    return env


def _run(
    tool_module: str, args: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", tool_module, *args],
        env=env,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def test_pypto_opt_runs_the_plugin_pass(plugin_env: dict[str, str]) -> None:
    result = _run(
        "pypto_mlir.cli.opt", [str(EXAMPLE), "-p", "scale-to-arith"], plugin_env
    )
    assert result.returncode == 0, result.stderr
    assert "scale.by" not in result.stdout
    assert "arith.constant 3 : i32" in result.stdout
    assert "arith.muli %x, %y : i32" in result.stdout


def test_pypto_opt_help_lists_the_plugin(plugin_env: dict[str, str]) -> None:
    result = _run("pypto_mlir.cli.opt", ["--help"], plugin_env)
    assert result.returncode == 0, result.stderr
    section = result.stdout.split("passes of plugin 'pypto_example_plugin':")[1]
    assert section.lstrip().startswith("scale-to-arith")


def test_plugin_verifier_errors_are_located(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    source = tmp_path / "zero.mlir"
    source.write_text(
        "func.func @f(%x: i32) -> i32 {\n  %y = scale.by %x, 0 : i32\n  func.return %y : i32\n}\n"
    )
    result = _run("pypto_mlir.cli.opt", [str(source)], plugin_env)
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"{source}:2:3: error: 'scale.by' op factor must be non-zero\n"
    )
    assert "Traceback" not in result.stderr


def test_stock_xdsl_opt_sees_the_plugin_and_pypto_mlir(
    plugin_env: dict[str, str],
) -> None:
    result = _run(
        "xdsl.tools.xdsl_opt",
        [str(EXAMPLE), "-p", "scale-to-arith,pypto-cleanup"],
        plugin_env,
    )
    assert result.returncode == 0, result.stderr
    assert "arith.muli" in result.stdout


def test_without_the_plugin_its_dialect_is_unknown() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = _run("pypto_mlir.cli.opt", [str(EXAMPLE)], env)
    assert result.returncode == 1
    assert f"{EXAMPLE}:2:" in result.stderr
    assert "scale.by" in result.stderr
