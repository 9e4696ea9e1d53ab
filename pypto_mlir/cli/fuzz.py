"""A seeded mutation fuzzer of `pypto-opt` and `pypto-run`: the promise that any
input gets a result or a located diagnostic, never a traceback, an internal error,
a hang or a wrong result (issue 16).

Each input is one seed file (by default the lit inputs `test/filecheck/**/*.mlir`
and the examples `examples/**/*.mlir`, which the Python kernels print) with one to
three mutations: a line deleted, swapped with another or duplicated; a token
replaced by another of the file or a keyword; an integer replaced by an edge value
(0, -1, 2**31, 2**63, 2**64, a 5000-digit number, ...); a type replaced by another;
white space removed or added; the file truncated; bytes inserted (control
characters, invalid UTF-8, brackets, quotes). It goes through one of:

- `pypto-opt FILE [--split-input-file]`: parse, verify, print; a success must print
  IR that parses and verifies again (else a wrong result);
- `pypto-opt FILE -p 'pypto-lower{target=tiny}'`;
- `pypto-run FILE --random N`, or with `--check --target tiny`.

Outcomes: `ok` (exit 0), `diagnostic` (exit 1 with an `error:` line), and the
failures `traceback`, `internal-error`, `hang` (over the time limit), `crash` (any
other exit status, or exit 1 without a diagnostic) and `wrong-result` (a `--check`
mismatch, or printed IR that does not read back).

Every input runs in a child forked from this process (the imports are done once,
so an input costs its own work only, not an interpreter start-up), killed at the
time limit (of CPU time, so that a loaded machine does not make hangs).
Input `i` of seed `S` depends only on `S`, `i` and the seed files, not
on the hash seed or the other inputs. A failure is reduced (lines, then
characters, deleted while the outcome stays) and written to `--out` with its
command line. `pypto-fuzz --count 300` runs a few hundred (as `make fuzz` and the
test suite do); `--count 0 --time 3600` runs for an hour.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import multiprocessing
import os
import random
import re
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from pypto_mlir.cli import opt as opt_cli
from pypto_mlir.cli import run as run_cli
from pypto_mlir.cli.source import SourceFile, parse_chunk, split_source
from pypto_mlir.diagnostics import DiagnosticError, verify
from pypto_mlir.universe import default_context

FAILURES = ("traceback", "internal-error", "hang", "crash", "wrong-result")
"""The outcomes that break the promise."""

OUTCOMES = ("ok", "diagnostic", "known-upstream", *FAILURES)

KNOWN_ROUND_TRIP_OPS = (
    # xDSL 0.75 prints scf.execute_region without results with its terminator
    # elided, and reads that back as an empty region or with the last op of the
    # body as the terminator (docs/upstream/xdsl-execute-region.md).
    "scf.execute_region",
)
"""Ops that xDSL's own printer does not print so that it reads them back (bugs
reported upstream): a round-trip failure of output holding one of them counts as
`known-upstream`, not as a failure."""

DEFAULT_SEED_GLOBS = ("test/filecheck/**/*.mlir", "examples/**/*.mlir")

_INTEGER = re.compile(r"(?<![\w.%#@^])-?\d+(?![\w.])")
_TYPE = re.compile(r"\b(?:[fi](?:1|8|16|32|64)|bf16|index|ui8|si32)\b")
_TOKEN = re.compile(r"[%@^#!]?[\w.$-]+|\S")
_EDGE_INTEGERS = (
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "255",
    "256",
    "-129",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483649",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "99999999999",
    "1" + "0" * 5000,
)
_TYPES = ("i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "index")
_BRACKETS = ("{", "}", "(", ")", "<", ">", "[", "]")
_KEYWORDS = (
    "func.func",
    "func.return",
    "scf.for",
    "scf.yield",
    "arith.constant",
    "tv.add",
    "tv.matmul",
    "tile.load",
    "builtin.module",
    "memref<4xf32>",
    "!tv.tensor<8x8xf16>",
    "tensor<2xf32>",
    "%0",
    "%arg0",
    "@main",
    "^bb0",
    *_BRACKETS,
    ":",
    "->",
    ",",
    "=",
    '"',
    "loc(unknown)",
    "dense<1.0>",
    "// -----",
)
_INSERTED = (
    "\x00",
    "\x1b",
    "\t",
    "\r",
    "\u00b6",
    "\ufeff",
    "\udcff",
    '"',
    "\\",
    *_BRACKETS,
    "#",
    "%",
    "^",
    "@",
    "!",
    "//",
    "\n",
)


@dataclass(frozen=True)
class Seed:
    """A seed file: its name (for reports) and its text."""

    name: str
    text: str


@dataclass(frozen=True)
class Case:
    """One fuzz input: the mutated text and the tool invocation to run it with."""

    index: int
    seed_name: str
    mutations: tuple[str, ...]
    data: bytes
    tool: str
    """`pypto-opt` or `pypto-run`."""
    arguments: tuple[str, ...]
    """The arguments after the file name."""

    def command(self, path: str) -> list[str]:
        return [self.tool, path, *self.arguments]


@dataclass(frozen=True)
class Result:
    """What one run gave."""

    outcome: str
    status: int | None
    output: str
    """Standard error, then standard output (truncated)."""


# Mutations: each takes the text and a random source; returns the new text and a
# short description.


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _delete_line(text: str, rng: random.Random) -> tuple[str, str]:
    lines = _lines(text)
    index = rng.randrange(len(lines))
    del lines[index]
    return "\n".join(lines), f"delete line {index + 1}"


def _swap_lines(text: str, rng: random.Random) -> tuple[str, str]:
    lines = _lines(text)
    first, second = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[first], lines[second] = lines[second], lines[first]
    return "\n".join(lines), f"swap lines {first + 1} and {second + 1}"


def _duplicate_line(text: str, rng: random.Random) -> tuple[str, str]:
    lines = _lines(text)
    index = rng.randrange(len(lines))
    target = rng.randrange(len(lines) + 1)
    lines.insert(target, lines[index])
    return "\n".join(lines), f"copy line {index + 1} before line {target + 1}"


def _replace_match(
    text: str, rng: random.Random, pattern: re.Pattern[str], choices: Sequence[str]
) -> tuple[str, str] | None:
    matches = list(pattern.finditer(text))
    if not matches:
        return None
    match = rng.choice(matches)
    new = rng.choice(choices)
    return (
        text[: match.start()] + new + text[match.end() :],
        f"replace {match.group()[:20]!r} at {match.start()} by {new[:20]!r}",
    )


def _replace_token(text: str, rng: random.Random) -> tuple[str, str]:
    tokens = [match.group() for match in _TOKEN.finditer(text)]
    pool = tokens if tokens and rng.random() < 0.6 else list(_KEYWORDS)
    if rng.random() < 0.15:
        pool = [""]
    return _replace_match(text, rng, _TOKEN, pool) or (text, "no token")


def _replace_integer(text: str, rng: random.Random) -> tuple[str, str]:
    choices = [*_EDGE_INTEGERS, str(rng.randrange(-100, 5000))]
    return _replace_match(text, rng, _INTEGER, choices) or _replace_token(text, rng)


def _replace_type(text: str, rng: random.Random) -> tuple[str, str]:
    return _replace_match(text, rng, _TYPE, _TYPES) or _replace_token(text, rng)


def _change_space(text: str, rng: random.Random) -> tuple[str, str]:
    spaces = [match.start() for match in re.finditer(r"[ \n]", text)]
    if not spaces:
        return text + " ", "append a space"
    position = rng.choice(spaces)
    new = rng.choice(("", "", "\n", "  ", "\t"))
    return text[:position] + new + text[position + 1 :], f"space at {position}"


def _truncate(text: str, rng: random.Random) -> tuple[str, str]:
    length = rng.randrange(len(text) + 1)
    return text[:length], f"truncate at {length}"


def _insert_bytes(text: str, rng: random.Random) -> tuple[str, str]:
    position = rng.randrange(len(text) + 1)
    new = "".join(rng.choice(_INSERTED) for _ in range(rng.randint(1, 3)))
    return text[:position] + new + text[position:], f"insert {new!r} at {position}"


MUTATIONS: dict[str, Callable[[str, random.Random], tuple[str, str]]] = {
    "delete-line": _delete_line,
    "swap-lines": _swap_lines,
    "duplicate-line": _duplicate_line,
    "token": _replace_token,
    "integer": _replace_integer,
    "type": _replace_type,
    "space": _change_space,
    "truncate": _truncate,
    "insert": _insert_bytes,
}
"""Every mutation, by name."""


def make_case(seeds: Sequence[Seed], seed: int, index: int) -> Case:
    """Input `index` of fuzz seed `seed`: a function of those and of `seeds` only
    (`random.Random` seeded with a string hashes it with SHA-512, whatever
    PYTHONHASHSEED is)."""
    rng = random.Random(f"pypto-fuzz:{seed}:{index}")
    source = seeds[rng.randrange(len(seeds))]
    text = source.text
    mutations: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        name = rng.choice(sorted(MUTATIONS))
        text, what = MUTATIONS[name](text, rng)
        mutations.append(f"{name}: {what}")
    # Insertions may put lone surrogates in: they become invalid UTF-8 bytes.
    data = text.encode("utf-8", "surrogateescape")
    roll = rng.random()
    if roll < 0.45:
        tool = "pypto-opt"
        arguments: tuple[str, ...] = (
            ("--split-input-file",) if "// -----" in source.text else ()
        )
    elif roll < 0.75:
        tool = "pypto-opt"
        arguments = ("-p", "pypto-lower{target=tiny}")
    else:
        tool = "pypto-run"
        arguments = ("--random", str(rng.randrange(4)))
        if rng.random() < 0.5:
            arguments += ("--check", "--target", "tiny")
    return Case(index, source.name, tuple(mutations), data, tool, arguments)


def load_seeds(paths: Sequence[Path]) -> list[Seed]:
    """The seed files, in a fixed order (sorted by path)."""
    seeds: list[Seed] = []
    for path in sorted(set(paths)):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if text.strip():
            seeds.append(Seed(str(path), text))
    return seeds


def default_seed_paths(root: Path) -> list[Path]:
    return [path for pattern in DEFAULT_SEED_GLOBS for path in root.glob(pattern)]


# Running one input in a forked child.

_MAIN: dict[str, Callable[[list[str]], int]] = {
    "pypto-opt": opt_cli.main,
    "pypto-run": run_cli.main,
}

_OUTPUT_LIMIT = 4000


def _child(
    case: Case, path: str, out_path: str, err_path: str, time_limit: float
) -> None:
    """In the forked child: run the tool with standard output and error redirected
    to files, at most `time_limit` seconds of CPU time; exit with its status."""
    seconds = max(1, math.ceil(time_limit))
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    out = os.open(out_path, os.O_WRONLY | os.O_TRUNC)
    err = os.open(err_path, os.O_WRONLY | os.O_TRUNC)
    os.dup2(out, 1)
    os.dup2(err, 2)
    # Open for the child's whole life: it ends in os._exit, after a flush.
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stdin = open(os.devnull)  # noqa: SIM115
    status = 0
    try:
        status = _MAIN[case.tool]([path, *case.arguments])
        if status == 0 and case.tool == "pypto-opt" and "-p" not in case.arguments:
            sys.stdout.flush()
            status = _check_round_trip(out_path, "--split-input-file" in case.arguments)
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else 1
    except BaseException:  # noqa: BLE001 - the point: report what escaped main
        traceback.print_exc()
        status = 70
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


ROUND_TRIP_STATUS = 65
"""The child's exit status when pypto-opt succeeded but its output does not read
back (a wrong result)."""


def _check_round_trip(out_path: str, split: bool) -> int:
    """Parse and verify the IR pypto-opt printed; 0, or `ROUND_TRIP_STATUS` with
    the problem on stderr."""
    text = Path(out_path).read_text(encoding="utf-8")
    source = SourceFile("<output>", text)
    try:
        for chunk in split_source(source, split):
            if chunk.text.strip():
                verify(parse_chunk(default_context(), chunk, source.name))
    except DiagnosticError as error:
        print(f"round trip: {error.diagnostic}", file=sys.stderr)
        return ROUND_TRIP_STATUS
    return 0


def _read(path: str) -> str:
    data = Path(path).read_bytes()
    text = data.decode("utf-8", "replace")
    if len(text) > _OUTPUT_LIMIT:
        text = text[: _OUTPUT_LIMIT // 2] + "\n...\n" + text[-_OUTPUT_LIMIT // 2 :]
    return text


def classify(status: int | None, stderr: str, stdout: str) -> str:
    """The outcome of a run that exited with `status` (None: killed at the limit)."""
    if status is None:
        return "hang"
    output = stderr + stdout
    # At the start of a line, as the tools and Python print them (a diagnostic
    # may quote a source line that mentions them, e.g. a lit CHECK line).
    if re.search(r"^pypto-(opt|run): internal error: ", output, re.M):
        return "internal-error"
    if re.search(r"^Traceback \(most recent call last\):", output, re.M):
        return "traceback"
    if status == ROUND_TRIP_STATUS:
        known = any(name in stdout for name in KNOWN_ROUND_TRIP_OPS)
        return "known-upstream" if known else "wrong-result"
    if "differs from the tv reference" in output:
        return "wrong-result"
    if status == 0:
        return "ok"
    if status == 1 and re.search(r"(^|: )error: ", stderr, re.M):
        return "diagnostic"
    return "crash"


WALL_FACTOR = 50
"""A child is also killed after this many times its CPU time limit of wall time
(at `nice -n 19` on a loaded machine a child may get 2% of a core)."""


def _wait(pid: int, time_limit: float) -> int | None:
    """The exit status of child `pid`, or None after killing it at `time_limit`."""
    deadline = time.monotonic() + time_limit
    delay = 0.001
    while True:
        finished, wait_status = os.waitpid(pid, os.WNOHANG)
        if finished:
            return os.waitstatus_to_exitcode(wait_status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(delay)
        delay = min(0.02, delay * 2)


def run_case(case: Case, work_dir: Path, time_limit: float) -> Result:
    """Run `case` in a forked child, killed after `time_limit` seconds of CPU time
    (or `WALL_FACTOR` times that of wall time)."""
    path = work_dir / f"input-{case.index}.mlir"
    path.write_bytes(case.data)
    out_path, err_path = work_dir / "stdout", work_dir / "stderr"
    out_path.write_bytes(b"")
    err_path.write_bytes(b"")
    pid = os.fork()
    if pid == 0:
        _child(case, str(path), str(out_path), str(err_path), time_limit)
    # CPU time measures a hang whatever the load of the machine; the wall-clock
    # limit is for a child that waits without computing.
    status = _wait(pid, WALL_FACTOR * time_limit)
    if status == -signal.SIGXCPU:
        status = None
    path.unlink()
    stderr, stdout = _read(str(err_path)), _read(str(out_path))
    return Result(classify(status, stderr, stdout), status, stderr + stdout)


def _worker(
    connection: Connection,
    parent_ends: Sequence[Connection],
    time_limit: float,
    seeds: Sequence[Seed],
    seed: int,
) -> None:
    """A worker process: runs the inputs whose indices it receives, until None
    or the fuzzer's end of the pipe closes (the fuzzer was stopped)."""
    for end in parent_ends:
        end.close()  # Inherited by the fork: else the pipe never reports EOF.
    with tempfile.TemporaryDirectory(prefix="pypto-fuzz-") as directory:
        while True:
            try:
                index = connection.recv()
            except EOFError:
                return
            if index is None:
                return
            case = make_case(seeds, seed, index)
            connection.send((index, run_case(case, Path(directory), time_limit)))


# Reducing a failure.


def reduce_case(
    case: Case, outcome: str, work_dir: Path, time_limit: float, budget: float
) -> Case:
    """A smaller input with the same outcome: lines, then characters, deleted
    greedily, within `budget` seconds."""
    deadline = time.monotonic() + budget

    def same(data: bytes) -> bool:
        candidate = Case(
            case.index, case.seed_name, case.mutations, data, case.tool, case.arguments
        )
        return run_case(candidate, work_dir, time_limit).outcome == outcome

    data = case.data
    for unit in (b"\n", None):
        pieces = data.split(b"\n") if unit else [bytes([b]) for b in data]
        joiner = unit or b""
        chunk = max(1, len(pieces) // 2)
        while chunk >= 1 and time.monotonic() < deadline:
            start = 0
            while start < len(pieces) and time.monotonic() < deadline:
                candidate = pieces[:start] + pieces[start + chunk :]
                if candidate != pieces and same(joiner.join(candidate)):
                    pieces = candidate
                else:
                    start += chunk
            chunk //= 2
        data = joiner.join(pieces)
        if len(data) > 2000:
            break  # Too long to reduce by characters within the budget.
    return Case(
        case.index, case.seed_name, case.mutations, data, case.tool, case.arguments
    )


def write_reproducer(out: Path, case: Case, result: Result, seed: int) -> Path:
    """`OUT/OUTCOME-SEED-INDEX.mlir` and a `.txt` with the command and output."""
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{result.outcome}-{seed}-{case.index}"
    path = out / f"{stem}.mlir"
    path.write_bytes(case.data)
    command = " ".join(
        f"'{a}'" if re.search(r"[^\w./=-]", a) else a for a in case.command(str(path))
    )
    (out / f"{stem}.txt").write_text(
        f"command: {command}\nexit status: {result.status}\n"
        f"from: {case.seed_name}\nmutations:\n"
        + "".join(f"  {m}\n" for m in case.mutations)
        + f"output:\n{result.output}\n",
        encoding="utf-8",
    )
    return path


@dataclass
class Summary:
    """Counts per outcome and the failures found."""

    counts: Counter[str]
    failures: list[tuple[Case, Result]]
    seconds: float

    @property
    def inputs(self) -> int:
        return sum(self.counts.values())

    def text(self) -> str:
        shown = ", ".join(f"{name} {self.counts[name]}" for name in OUTCOMES)
        return f"{self.inputs} inputs in {self.seconds:.1f} s: {shown}"


def fuzz(
    seeds: Sequence[Seed],
    seed: int = 0,
    count: int = 300,
    seconds: float = 0.0,
    jobs: int = 1,
    time_limit: float = 60.0,
    first: int = 0,
    progress: Callable[[int, Result, Summary], None] | None = None,
) -> Summary:
    """Run inputs `first`, `first + 1`, ... of fuzz seed `seed`: `count` of them
    (0: no limit), or as many as fit in `seconds` (0: no limit)."""
    if not seeds:
        raise ValueError("no seed files")
    start = time.monotonic()
    summary = Summary(Counter(), [], 0.0)
    context = multiprocessing.get_context("fork")
    workers: list[tuple[Connection, multiprocessing.process.BaseProcess]] = []
    for _ in range(max(1, jobs)):
        parent_end, child_end = context.Pipe()
        parent_ends = [end for end, _ in workers] + [parent_end]
        process = context.Process(
            target=_worker, args=(child_end, parent_ends, time_limit, seeds, seed)
        )
        process.start()
        child_end.close()
        workers.append((parent_end, process))
    next_index = first
    busy = 0

    def more() -> bool:
        if count and next_index >= first + count:
            return False
        return not seconds or time.monotonic() - start < seconds

    results: dict[int, Result] = {}
    try:
        for connection, _ in workers:
            if more():
                connection.send(next_index)
                next_index += 1
                busy += 1
        while busy:
            for connection in multiprocessing.connection.wait([c for c, _ in workers]):
                assert isinstance(connection, Connection)
                index, result = connection.recv()
                busy -= 1
                results[index] = result
                summary.counts[result.outcome] += 1
                if progress is not None:
                    progress(index, result, summary)
                if more():
                    connection.send(next_index)
                    next_index += 1
                    busy += 1
    finally:
        for connection, process in workers:
            with contextlib.suppress(OSError):
                connection.send(None)
            process.join(5)
            if process.is_alive():
                process.kill()
    # Failures in index order, whatever order the workers finished in.
    for index in sorted(results):
        if results[index].outcome in FAILURES:
            summary.failures.append((make_case(seeds, seed, index), results[index]))
    summary.seconds = time.monotonic() - start
    return summary


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pypto-fuzz",
        description="Mutate MLIR seed files and run them through pypto-opt and "
        "pypto-run; report tracebacks, internal errors, hangs, crashes and wrong "
        "results, with reduced reproducers.",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="seed files or directories (default: the lit inputs and examples of "
        "the current directory)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the fuzz seed")
    parser.add_argument(
        "--count", type=int, default=300, help="inputs to run (0: until --time)"
    )
    parser.add_argument(
        "--first", type=int, default=0, help="the index of the first input"
    )
    parser.add_argument(
        "--time", type=float, default=0.0, help="stop after this many seconds"
    )
    parser.add_argument("-j", "--jobs", type=int, default=1, help="parallel runs")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=60.0,
        help="seconds an input may take before it counts as a hang",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("fuzz-failures"),
        help="directory for the reproducers of failures",
    )
    parser.add_argument(
        "--reduce-time",
        type=float,
        default=60.0,
        help="seconds spent reducing each failure (0: keep them as found)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress line every 100 inputs"
    )
    return parser


def _seed_paths(arguments: Sequence[Path]) -> list[Path]:
    if not arguments:
        return default_seed_paths(Path.cwd())
    paths: list[Path] = []
    for argument in arguments:
        if argument.is_dir():
            paths += argument.glob("**/*.mlir")
        else:
            paths.append(argument)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """`pypto-fuzz`: exit status 1 if any input failed."""
    args = build_parser().parse_args(argv)
    seeds = load_seeds(_seed_paths(args.paths))
    if not seeds:
        print("pypto-fuzz: error: no seed files", file=sys.stderr)
        return 2

    def progress(index: int, result: Result, summary: Summary) -> None:
        if result.outcome in FAILURES:
            # At once, so that a long run stopped early still names it.
            print(f"  input {index}: {result.outcome}", flush=True)
        if not args.quiet and summary.inputs % 100 == 0:
            print(f"  {summary.inputs} inputs: {dict(summary.counts)}", flush=True)

    summary = fuzz(
        seeds,
        args.seed,
        args.count,
        args.time,
        args.jobs,
        args.time_limit,
        args.first,
        progress,
    )
    print(summary.text())
    with tempfile.TemporaryDirectory(prefix="pypto-fuzz-") as directory:
        for case, result in summary.failures:
            if args.reduce_time > 0:
                case = reduce_case(
                    case,
                    result.outcome,
                    Path(directory),
                    args.time_limit,
                    args.reduce_time,
                )
                result = run_case(case, Path(directory), args.time_limit)
            path = write_reproducer(args.out, case, result, args.seed)
            print(f"{result.outcome}: {path} (from {case.seed_name})")
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
