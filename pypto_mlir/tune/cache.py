"""The tuning results on disk: SQLite (stdlib) in the user's cache directory
(`PYPTO_TUNE_CACHE` names another file). One row per kernel IR, entry,
target contents and compiler version; a row whose target or compiler differ
from today's is stale and ignored. A file that is not a readable database of
this schema is moved aside and rebuilt, with a warning."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto_mlir.tune.key import TuneKey

SCHEMA_VERSION = 1


class TuneCacheWarning(UserWarning):
    """The cache file was unusable and has been rebuilt."""


def default_cache_path() -> Path:
    """`$PYPTO_TUNE_CACHE`, else the user's cache directory (XDG on Linux,
    ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows)."""
    override = os.environ.get("PYPTO_TUNE_CACHE")
    if override:
        return Path(override).expanduser()
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home()))
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "pypto-mlir" / "tune.sqlite"


@dataclass(frozen=True)
class CachedTuning:
    """A stored result: the options that won, their cycles and the default's."""

    options: dict[str, Any]
    cycles: int
    default_cycles: int
    candidates: int


_SCHEMA = """
CREATE TABLE IF NOT EXISTS tuned (
    kernel TEXT NOT NULL, entry TEXT NOT NULL, target TEXT NOT NULL,
    compiler TEXT NOT NULL, options TEXT NOT NULL, cycles INTEGER NOT NULL,
    default_cycles INTEGER NOT NULL, candidates INTEGER NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (kernel, entry, target, compiler)
)
"""


def _warn(message: str) -> None:
    warnings.warn(message, TuneCacheWarning, stacklevel=3)


class TuneCache:
    """The results file; every method opens it afresh (workers, several
    processes and a deleted file are all fine)."""

    def __init__(
        self, path: Path | str | None = None, warn: Callable[[str], None] = _warn
    ) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.warn = warn

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._open()
        except sqlite3.DatabaseError as error:
            return self._rebuild(str(error))

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=30)
        try:
            (found,) = connection.execute("PRAGMA user_version").fetchone()
            if found not in (0, SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"schema version {found}")
            connection.execute(_SCHEMA)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            connection.execute("SELECT kernel, options FROM tuned LIMIT 1").fetchall()
        except sqlite3.DatabaseError:
            connection.close()
            raise
        return connection

    def _rebuild(self, why: str) -> sqlite3.Connection:
        aside = self.path.with_name(self.path.name + f".corrupt-{int(time.time())}")
        os.replace(self.path, aside)
        self.warn(
            f"tuning cache {self.path} was unreadable ({why}); moved it to "
            f"{aside.name} and started a new one"
        )
        return self._open()

    def store(self, key: TuneKey, result: CachedTuning) -> None:
        with self._connect() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO tuned VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.kernel,
                    key.entry,
                    key.target,
                    key.compiler,
                    json.dumps(result.options, sort_keys=True),
                    result.cycles,
                    result.default_cycles,
                    result.candidates,
                    time.time(),
                ),
            )
        connection.close()

    def lookup(self, key: TuneKey) -> tuple[CachedTuning | None, str]:
        """The result stored for `key`, or None and why not (`no entry`, or a
        stale one: measured with another target file or compiler). A missing
        file is not created."""
        if not self.path.exists():
            return None, "no entry"
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT target, compiler, options, cycles, default_cycles, "
                "candidates FROM tuned WHERE kernel = ? AND entry = ? "
                "ORDER BY created DESC",
                (key.kernel, key.entry),
            ).fetchall()
        connection.close()
        stale = ""
        for target, compiler, options, cycles, default_cycles, candidates in rows:
            if target == key.target and compiler == key.compiler:
                try:
                    decoded = _decode(options)
                except ValueError:
                    return None, "a corrupt entry (ignored)"
                return CachedTuning(decoded, cycles, default_cycles, candidates), ""
            if not stale:
                stale = (
                    "a stale entry (tuned for another target file), ignored"
                    if target != key.target
                    else "a stale entry (tuned by another compiler version), ignored"
                )
        return None, stale or "no entry"


def _decode(text: str) -> dict[str, Any]:
    options = json.loads(text)
    if not isinstance(options, dict):
        raise ValueError("not an object")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
