"""`pypto-lower{tuned=true}`: the pipeline options the auto-tuner stored for
this kernel, target file and compiler, if any (else the given ones)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.diagnostics import emit_remark
from pypto_mlir.targets import TargetError
from pypto_mlir.targets.resolve import resolve_target
from pypto_mlir.tune.cache import TuneCache
from pypto_mlir.tune.key import target_files, tune_key


def option_text(name: str, value: Any) -> str:
    """`tile-sizes=8,64`, `double-buffer=false`: one field of a pipeline as
    pypto-lower's options read (`name` the dataclass field's)."""
    if isinstance(value, bool):
        shown = "true" if value else "false"
    elif isinstance(value, tuple):
        shown = ",".join(map(str, value))
    else:
        shown = str(value)
    return f"{name.replace('_', '-')}={shown}"


def options_text(options: dict[str, Any]) -> str:
    """`double-buffer=false tile-sizes=8,64`, the options sorted by name."""
    parts = [option_text(name, value) for name, value in sorted(options.items())]
    return " ".join(parts) or "the defaults"


def stored_tuning(module: ModuleOp, entry: str, target: str) -> bool:
    """Whether the cache holds a current result for `entry` of `module`."""
    found, _ = TuneCache().lookup(tune_key(module, entry, target_files(target)))
    return found is not None


def tuned_pipeline(
    module: ModuleOp, pipeline: Any, cache: TuneCache | None = None
) -> Any:
    """`pipeline` (a LowerPipeline) with the stored options of the first
    function of `module` that was tuned for its target; a remark says which,
    or why the defaults stay (no entry, a stale one)."""
    target_name = resolve_target(module, pipeline.target or None)
    anchor = next((op for op in module.ops if isinstance(op, func.FuncOp)), module)
    try:
        target = target_files(target_name)
    except (TargetError, OSError):
        return pipeline  # pypto-set-target reports it
    cache = cache or TuneCache()
    why = "no entry"
    for op in module.ops:
        if not isinstance(op, func.FuncOp):
            continue
        found, reason = cache.lookup(tune_key(module, op.sym_name.data, target))
        if found is None:
            why = reason if reason != "no entry" else why
            continue
        known = {f.name for f in fields(pipeline)}
        options = {k: v for k, v in found.options.items() if k in known}
        emit_remark(
            op,
            f"pypto-lower{{tuned=true}}: options tuned for @{op.sym_name.data} on "
            f"{target_name}: {options_text(options)} ({found.cycles} cycles, "
            f"default {found.default_cycles}, {found.candidates} candidates measured)",
        )
        return replace(pipeline, **options)
    emit_remark(
        anchor,
        f"pypto-lower{{tuned=true}}: no tuned configuration for this kernel on "
        f"{target_name} ({why}): the given options",
    )
    return pipeline
