"""`pypto-set-target`: name the module's target, once, for the passes after it.

Passes that need a target read the module's `pypto.target` attribute when they
are not given one (docs/architecture.md, *Conventions*). A pipeline cannot see
the module when it builds its member passes, so `pypto-lower` starts with this
pass to settle the target: the one it was given, else the module's, else the
default chip. An unknown target is reported here, before any lowering.

Not a `RewritePattern`: it converts no op, it sets one attribute of the module.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from pypto_mlir.diagnostics import op_error
from pypto_mlir.targets import Target, TargetError, load_target
from pypto_mlir.targets.resolve import TARGET_ATTR, resolve_target


@dataclass(frozen=True)
class SetTargetPass(ModulePass):
    """Set the module's pypto.target: `target`, else the module's, else ascend910b.

    Checks that the target loads (a builtin name or a TOML file).
    """

    name = "pypto-set-target"

    target: str = ""
    """A builtin target name or a TOML file; empty: keep the module's, if any."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        name = resolve_target(op, self.target or None)
        try:
            load_target(name)
        except TargetError as error:
            raise op_error(op, f"cannot load the target: {error}") from error
        op.attributes[TARGET_ATTR] = StringAttr(name)


def required_target(
    op: ModuleOp, option: str | None, pass_name: str
) -> tuple[str, Target]:
    """The target a lowering pass needs: its `target` option, else the module's
    `pypto.target`; a located error (naming `pass_name`) when there is none or
    it does not load."""
    name = resolve_target(op, option, default=None)
    if name is None:
        raise op_error(
            op,
            f"{pass_name} needs a target: pass target=NAME (or a TOML file) or "
            f"set {TARGET_ATTR} on the module",
        )
    try:
        return name, load_target(name)
    except TargetError as error:
        raise op_error(op, f"{pass_name}: unknown target: {error}") from error
