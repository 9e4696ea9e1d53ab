"""Every xDSL op whose verifier raises something other than a verify error has
a precheck in `pypto_mlir.xdsl_verifier_gaps` (else pypto-opt reports an
internal error for a bad op); the prechecks' errors are lit tests
(cli/xdsl-verifier-gaps.mlir, cli/while-region-types.mlir)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib

import xdsl.dialects
from xdsl.irdl import IRDLOperation

from pypto_mlir.xdsl_verifier_gaps import PRECHECKS

UNREACHABLE = {
    "xdsl.dialects.tensor.ReshapeOp": "its operands' constraints (TensorType) fail "
    "first, so the ValueError in verify_ is never reached",
}
"""Ops whose verifier raises a non-verify error that no input can reach, with why."""


def _raising_ops() -> list[str]:
    """`module.Class` of every op class in xDSL's dialects whose `verify_`
    raises an exception other than VerifyException."""
    root = pathlib.Path(xdsl.dialects.__file__).parent
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        module = "xdsl.dialects." + ".".join(
            path.relative_to(root).with_suffix("").parts
        ).removesuffix(".__init__")
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for method in cls.body:
                if not (
                    isinstance(method, ast.FunctionDef) and method.name == "verify_"
                ):
                    continue
                for node in ast.walk(method):
                    if isinstance(node, ast.Raise) and node.exc is not None:
                        exc = (
                            node.exc.func
                            if isinstance(node.exc, ast.Call)
                            else node.exc
                        )
                        name = getattr(exc, "id", getattr(exc, "attr", ""))
                        if name != "VerifyException":
                            found.append(f"{module}.{cls.name}")
                            break
    return sorted(set(found))


def test_every_raising_verifier_has_a_precheck() -> None:
    missing = []
    for qualified in _raising_ops():
        if qualified in UNREACHABLE:
            continue
        module, _, name = qualified.rpartition(".")
        op = getattr(importlib.import_module(module), name)
        assert inspect.isclass(op) and issubclass(op, IRDLOperation), qualified
        if op.name not in PRECHECKS:
            missing.append(qualified)
    assert not missing, f"no precheck in xdsl_verifier_gaps for: {missing}"
