"""What a tuning result is keyed by: the kernel's IR, the target file's
contents and the compiler version. A result measured with another target file
or another compiler is stale and never applied."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from io import StringIO
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from pypto_mlir.targets import TARGET_DIR, TargetError, load_target

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folders holding the compiler's code (pypto_mlir, dialects, passes)."""


def _sha(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


@cache
def compiler_version() -> str:
    """The package version and a digest of the compiler's source files: an
    editable install that changed a pass is another compiler."""
    try:
        release = version("pypto-mlir")
    except PackageNotFoundError:
        release = "unknown"
    digest = hashlib.sha256()
    for folder in ("pypto_mlir", "dialects", "passes"):
        for path in sorted((PACKAGE_ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".toml") and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(PACKAGE_ROOT)).encode())
                digest.update(path.read_bytes())
    return f"{release}+{digest.hexdigest()[:16]}"


def module_text(module: ModuleOp) -> str:
    """The module as printed (no locations): the kernel's IR as the key sees it."""
    stream = StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue() + "\n"


@dataclass(frozen=True)
class TargetFiles:
    """A target as its file contents: the file and the files it is based on
    (`base = ...`), so a worker elsewhere rebuilds it byte for byte."""

    name: str
    """How the user named it (a builtin name or a path)."""
    files: tuple[tuple[str, str], ...]
    """(file name, text), the target's own file first."""

    @property
    def digest(self) -> str:
        return _sha("\0".join(f"{n}\0{t}" for n, t in self.files))


def target_files(name: str) -> TargetFiles:
    """The contents of target `name` (a builtin name or a TOML path) and of its
    bases; raises TargetError for a target that does not load."""
    load_target(name)
    builtin = TARGET_DIR / f"{name}.toml"
    path = builtin if builtin.is_file() and "/" not in name else Path(name)
    files: list[tuple[str, str]] = []
    while True:
        text = path.read_text()
        files.append((path.name, text))
        base = _base_of(text)
        if base is None:
            break
        candidate = TARGET_DIR / f"{base}.toml"
        path = candidate if candidate.is_file() else (path.parent / base).resolve()
        if len(files) > 16:
            raise TargetError(name, "base", "too many base targets")
    return TargetFiles(name, tuple(files))


def _base_of(text: str) -> str | None:
    import tomllib

    base = tomllib.loads(text).get("base")
    return base if isinstance(base, str) else None


@dataclass(frozen=True)
class TuneKey:
    """The three parts of a cache key, each a digest."""

    kernel: str
    entry: str
    target: str
    compiler: str


def tune_key(module: ModuleOp, entry: str, target: TargetFiles) -> TuneKey:
    return TuneKey(_sha(module_text(module)), entry, target.digest, compiler_version())
