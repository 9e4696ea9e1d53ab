"""Which target a module is for: the IR side of the targets.

A module names its target with the `pypto.target` attribute; passes and tools take
a target option too. `resolve_target` is the one place that chooses between them
(the loader in `pypto_mlir.targets` reads files only and imports no xDSL).
"""

from __future__ import annotations

from typing import overload

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from pypto_mlir.targets import DEFAULT_TARGET

__all__ = ["TARGET_ATTR", "resolve_target"]

TARGET_ATTR = "pypto.target"
"""Attribute of `builtin.module` naming the target (a builtin name or a TOML path)."""


@overload
def resolve_target(
    module: Operation, option: str | None = None, *, default: str = DEFAULT_TARGET
) -> str: ...
@overload
def resolve_target(
    module: Operation, option: str | None = None, *, default: None
) -> str | None: ...
def resolve_target(
    module: Operation,
    option: str | None = None,
    *,
    default: str | None = DEFAULT_TARGET,
) -> str | None:
    """The name of the target a pass or tool works for: `option` (a pass option or
    a command-line flag; None: not given), else the one `module` names
    (`TARGET_ATTR`, when a string), else `default`. `default=None` is for a caller
    that requires a target: it gets None and reports the absence its own way."""
    if option is not None:
        return option
    attr = module.attributes.get(TARGET_ATTR)
    if isinstance(attr, StringAttr):
        return attr.data
    return default
