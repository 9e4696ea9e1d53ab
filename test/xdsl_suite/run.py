"""Run xDSL's own lit suite (`tests/filecheck` of the pinned xDSL's sdist) with
`pypto-opt` standing in for `xdsl-opt`, and fail on any difference from stock
`xdsl-opt` that `expected_differences.txt` does not list (docs/cli.md, "A drop-in for
xdsl-opt").

    python test/xdsl_suite/run.py            # the CI subset (SUBSET below)
    python test/xdsl_suite/run.py --all      # every test, stock xdsl-opt measured too

The sdist is fetched with `pip download` into build/xdsl-suite/ (once). The
`bin/xdsl-opt` wrapper, first on PATH, runs pypto-opt with xDSL's meaning of
`--verify-diagnostics`. With `--all` the suite also runs with stock `xdsl-opt`
and only the tests it passes count; the subset trusts the `[stock]` group of the
list instead (the tests that fail with stock xdsl-opt here), which halves its time.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
EXPECTED = HERE / "expected_differences.txt"
CACHE = ROOT / "build" / "xdsl-suite"

SUBSET = ("xdsl_opt", "parser-printer", "dialects/func")
"""The directories of the suite that CI runs (35 tests): the driver's own tests,
the parser and printer, and func."""

_RESULT = re.compile(r"^([A-Z]+): xDSL :: (\S+) \(\d+ of \d+\)$", re.M)


def read_expected(path: Path = EXPECTED) -> dict[str, str]:
    """Test path -> the group it is listed under (`[group] reason` lines start
    one; `#` starts a comment)."""
    expected: dict[str, str] = {}
    group = ""
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            group = line[1 : line.index("]")]
            continue
        if not group:
            raise ValueError(f"{path}: {line!r} is listed before any [group]")
        expected[line] = group
    return expected


def fetch_suite(cache: Path = CACHE) -> Path:
    """The `tests/filecheck` directory of the installed xDSL's sdist."""
    pinned = version("xdsl")
    tests = cache / f"xdsl-{pinned}" / "tests" / "filecheck"
    if tests.is_dir():
        return tests
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"xdsl-{pinned}.tar.gz"
    if not archive.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"xdsl=={pinned}",
                "-d",
                str(cache),
            ],
            check=True,
        )
    with tarfile.open(archive) as sdist:
        members = [m for m in sdist.getmembers() if "/tests/" in m.name]
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            sdist.extractall(cache, members=members, filter="data")
        else:
            sdist.extractall(cache, members=members)
    return tests


def run_lit(
    tests: Path, selection: list[str], stand_in: bool, jobs: int
) -> dict[str, str]:
    """Test path -> lit result code, with `xdsl-opt` stock or pypto-opt's stand-in."""
    bin_dir = Path(sys.executable).parent
    path = [str(bin_dir), os.environ.get("PATH", "")]
    if stand_in:
        path.insert(0, str(HERE / "bin"))
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("XDSL_")  # No external MLIR tools: same set everywhere.
    }
    environment["PATH"] = os.pathsep.join(path)
    completed = subprocess.run(
        [str(bin_dir / "lit"), "-v", f"-j{jobs}", *selection],
        cwd=tests,
        env=environment,
        capture_output=True,
        text=True,
    )
    results = dict((name, code) for code, name in _RESULT.findall(completed.stdout))
    if not results:
        raise RuntimeError(f"lit ran no test:\n{completed.stdout}{completed.stderr}")
    return results


def compare(
    stock: dict[str, str] | None,
    pypto: dict[str, str],
    expected: dict[str, str],
) -> list[str]:
    """The problems: a test stock xdsl-opt passes that fails with pypto-opt and is
    not listed, and a listed difference that no longer is one."""
    problems: list[str] = []
    for name in sorted(pypto):
        code = pypto[name]
        group = expected.get(name)
        if stock is not None:
            stock_passes = stock.get(name) == "PASS"
        else:
            stock_passes = group != "stock"
        if code == "PASS":
            if group is not None and group != "stock":
                problems.append(f"{name}: passes now; remove it from [{group}]")
            continue
        if code in ("UNSUPPORTED", "XFAIL"):
            continue
        if stock_passes and group is None:
            problems.append(f"{name}: {code} with pypto-opt, PASS with xdsl-opt")
        elif stock_passes and group == "stock":
            problems.append(f"{name}: passes with stock xdsl-opt; not [stock]")
    if stock is not None:
        for name, group in sorted(expected.items()):
            if group == "stock" and stock.get(name) == "PASS":
                problems.append(f"{name}: passes with stock xdsl-opt; not [stock]")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--all", action="store_true", help="every test, stock xdsl-opt measured too"
    )
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    tests = fetch_suite()
    expected = read_expected()
    selection = ["."] if args.all else [d for d in SUBSET if (tests / d).is_dir()]
    stock = run_lit(tests, selection, False, args.jobs) if args.all else None
    pypto = run_lit(tests, selection, True, args.jobs)
    problems = compare(stock, pypto, expected)
    passed = sum(code == "PASS" for code in pypto.values())
    counted = stock if stock is not None else pypto
    stock_passed = sum(code == "PASS" for code in counted.values())
    listed = sum(1 for name in pypto if name in expected and expected[name] != "stock")
    print(
        f"xDSL {version('xdsl')} suite ({'all' if args.all else 'subset'}): "
        f"{len(pypto)} tests; pypto-opt passes {passed}"
        + (f", stock xdsl-opt {stock_passed}" if stock is not None else "")
        + f"; {listed} listed differences"
    )
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
