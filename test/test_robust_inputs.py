"""Bad inputs get a located diagnostic and exit status 1, never an internal error,
a traceback or a hang (issue 16's minimal inputs, one test per cause).

Each runs `pypto-opt` or `pypto-run` in a subprocess, as a user would.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pypto_mlir.targets import TARGET_DIR, load_target

BIN = Path(sys.executable).parent
OPT = str(BIN / "pypto-opt")
RUN = str(BIN / "pypto-run")


def _run(
    arguments: list[str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        arguments, capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def _assert_located_error(
    result: subprocess.CompletedProcess[str], file: str, message: str
) -> None:
    """Exit 1 with `FILE:LINE:COL: error: MESSAGE...`, and nothing internal."""
    assert result.returncode == 1, result.stderr
    assert "internal error" not in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    pattern = rf"^{re.escape(file)}:\d+:\d+: error: {re.escape(message)}"
    assert re.search(pattern, result.stderr, re.M), result.stderr


def _write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return name


USE_BEFORE_DEFINITION = """\
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %1 : i32
  %1 = arith.addi %a, %a : i32
  func.return %0 : i32
}
"""

SELF_USE = """\
func.func @f(%x: !tv.tensor<8xf32>) -> !tv.tensor<8xf32> {
  %z = tv.add %x, %z : !tv.tensor<8xf32>
  func.return %z : !tv.tensor<8xf32>
}
"""

LATER_OPERAND = """\
func.func @f(%x: !tv.tensor<8xf32>) -> !tv.tensor<8xf32> {
  %y = tv.mul %x, %s : !tv.tensor<8xf32>
  %s = tv.sigmoid %x : !tv.tensor<8xf32>
  func.return %y : !tv.tensor<8xf32>
}
"""


@pytest.mark.parametrize(
    "tool",
    [
        [OPT],
        [OPT, "-p", "pypto-lower{target=tiny}"],
        [RUN, "--random", "0"],
        [RUN, "--check", "ascend_hw"],
    ],
    ids=["opt", "opt-lower", "run-random", "run-check"],
)
@pytest.mark.parametrize(
    "text",
    [USE_BEFORE_DEFINITION, SELF_USE, LATER_OPERAND],
    ids=["later", "self", "tv-later"],
)
def test_a_use_before_its_definition_does_not_dominate(
    tmp_path: Path, tool: list[str], text: str
) -> None:
    if text is USE_BEFORE_DEFINITION and "--check" in tool:
        pytest.skip("--check needs a tv function")
    name = _write(tmp_path, "use.mlir", text)
    result = _run([*tool, name], tmp_path)
    _assert_located_error(result, name, "operand #1 does not dominate this use")
    assert f"{name}:3:3: note: operand defined here" in result.stderr or (
        text is SELF_USE
    )


def test_a_loop_bound_defined_in_the_loop_is_never_defined(tmp_path: Path) -> None:
    name = _write(
        tmp_path,
        "bound.mlir",
        """\
func.func @f() {
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  scf.for %k = %c0 to %c4 step %c1 {
    %c0 = arith.constant 0 : index
  }
  func.return
}
""",
    )
    result = _run([OPT, name], tmp_path)
    _assert_located_error(
        result, name, "operand #0 is used but never defined where it is visible"
    )
    assert f"{name}:4:3: error" in result.stderr


def test_a_file_of_one_unexpected_character(tmp_path: Path) -> None:
    name = _write(tmp_path, "one.mlir", "¶")
    result = _run([OPT, name], tmp_path)
    _assert_located_error(result, name, "Unexpected character: ¶")
    assert f"{name}:1:1: error" in result.stderr


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    text = "func.func @f() {\n  func.return\n}\n"
    name = _write(tmp_path, "bom.mlir", b"\xef\xbb\xbf" + text.encode())
    result = _run([OPT, name], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "func.func @f()" in result.stdout
    # Columns count from after the mark.
    bad = _write(
        tmp_path, "bom-bad.mlir", b"\xef\xbb\xbf" + b"func.func @f() {\n  \xc2\xb6\n}\n"
    )
    _assert_located_error(_run([OPT, bad], tmp_path), bad, "Unexpected character")


def test_an_empty_file_is_an_empty_module_as_in_mlir_opt(tmp_path: Path) -> None:
    # mlir-opt 19 prints an empty module and exits 0, also with
    # --verify-diagnostics and no expectations.
    name = _write(tmp_path, "empty.mlir", "")
    for extra in ([], ["--verify-diagnostics"]):
        result = _run([OPT, name, *extra], tmp_path)
        assert result.returncode == 0, result.stderr
        assert "builtin.module" in result.stdout


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "%v = tv.view %x[%i][-9223372036854775809][1] : !tv.tensor<8x4xf32> to "
            "!tv.tensor<1xf32>",
            "Integer value -9223372036854775809 is out of range for type i64",
        ),
        (
            "%v = tv.reduce_sum %x [9223372036854775808] : !tv.tensor<8x4xf32> -> "
            "!tv.tensor<8xf32>",
            "integer out of range for the element type of the array",
        ),
        (
            "%v = arith.constant 99999999999999999999999 : i64",
            "Integer value 99999999999999999999999 is out of range for type i64",
        ),
        (
            f"%v = arith.constant {'9' * 200_000} : i64",
            "integer literal too long (200000 digits",
        ),
    ],
    ids=["view-index", "reduce-dims", "constant", "200000-digits"],
)
def test_integers_out_of_range_are_located(
    tmp_path: Path, body: str, message: str
) -> None:
    name = _write(
        tmp_path,
        "ints.mlir",
        "func.func @f(%x: !tv.tensor<8x4xf32>, %i: index) {\n"
        f"  {body}\n  func.return\n}}\n",
    )
    result = _run([OPT, name], tmp_path)
    _assert_located_error(result, name, message)
    assert f"{name}:2:3: error" in result.stderr


def test_an_integer_too_long_in_a_type_alias_is_located(tmp_path: Path) -> None:
    """An alias is parsed outside any op (found by pypto-fuzz on
    tv_sparse_to_tile/epilogue.mlir: a 5000-digit block size of `#tv.csr`)."""
    csr = f"#tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [32, {'1' * 5001}]>"
    name = _write(
        tmp_path,
        "alias.mlir",
        f"!t = !tv.tensor<64x64xf16, {csr}>\n"
        "func.func @f(%a: !t) {\n  func.return\n}\n",
    )
    result = _run([OPT, name], tmp_path)
    _assert_located_error(result, name, "integer literal too long (5001 digits")
    assert f"{name}:1:1: error" in result.stderr


@pytest.mark.parametrize(
    "text",
    [
        "func.func @f() attributes {a = " + "[" * 5000 + "]" * 5000 + "} {\n"
        "  func.return\n}\n",
        '"test.op"() ({\n' * 3000
        + '"test.op"() : () -> ()\n'
        + "}) : () -> ()\n" * 3000,
        "func.func @f(%a: " + "tuple<" * 5000 + "i32" + ">" * 5000 + ") {\n"
        "  func.return\n}\n",
    ],
    ids=["attributes", "regions", "tuple-types"],
)
def test_deep_nesting_is_refused(tmp_path: Path, text: str) -> None:
    name = _write(tmp_path, "deep.mlir", text)
    result = _run([OPT, name, "--allow-unregistered-dialect"], tmp_path)
    _assert_located_error(result, name, "nesting too deep: more than 256 levels")


def test_nesting_within_the_limit_parses_and_prints(tmp_path: Path) -> None:
    depth = 200
    text = (
        "func.func @f() attributes {a = " + "[" * depth + "]" * depth + "} {\n"
        "  func.return\n}\n"
        "func.func @g(%a: " + "tuple<" * depth + "i32" + ">" * depth + ") {\n"
        "  func.return\n}\n"
    )
    name = _write(tmp_path, "nested.mlir", text)
    result = _run([OPT, name, "-p", "canonicalize,cse"], tmp_path)
    assert result.returncode == 0, result.stderr


def test_random_refuses_an_argument_too_large_to_draw(tmp_path: Path) -> None:
    name = _write(
        tmp_path,
        "huge.mlir",
        "func.func @f(%x: memref<99999999999x4xf32>) {\n  func.return\n}\n",
    )
    result = _run([RUN, name, "--random", "0"], tmp_path)
    _assert_located_error(
        result,
        name,
        "--random would draw 399999999996 elements for argument 0 "
        "(memref<99999999999x4xf32>), 2980 GiB",
    )


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (["--random", "-1"], "argument --random: a seed is >= 0, not -1"),
        (
            ["--timeline", "x.txt"],
            "argument --timeline: 'x.txt': the file name ends in",
        ),
    ],
)
def test_bad_run_arguments_are_usage_errors(
    tmp_path: Path, flag: list[str], message: str
) -> None:
    name = _write(tmp_path, "f.mlir", SELF_USE.replace("%x, %z", "%x, %x"))
    result = _run([RUN, name, *flag], tmp_path)
    # argparse's usage errors, like pypto-run's other bad command lines.
    assert result.returncode == 2
    assert f"pypto-run: error: {message}" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unclosed_string_is_reported_at_once(tmp_path: Path) -> None:
    # xDSL's string-literal regex backtracks exponentially on it
    # (docs/upstream/xdsl-string-literal-hang.md).
    name = _write(
        tmp_path,
        "string.mlir",
        '  %c = arith.constant {test.diagnostic = "error: tile does not fit in ub} -0',
    )
    result = _run([OPT, name], tmp_path, timeout=60)
    _assert_located_error(
        result, name, "End of file reached before closing string literal."
    )
    assert f"{name}:1:42: error" in result.stderr


# Target files.

KERNEL = """\
func.func @f(%x: !tv.tensor<64xf32>) -> !tv.tensor<64xf32> {
  %y = tv.exp %x : !tv.tensor<64xf32>
  func.return %y : !tv.tensor<64xf32>
}
"""


def _target_file(tmp_path: Path, name: str, replace: tuple[str, str] | None) -> str:
    text = (TARGET_DIR / "ascend910b.toml").read_text()
    if replace is not None:
        pattern, new = replace
        text, count = re.subn(pattern, new, text, count=1, flags=re.M)
        assert count == 1, pattern
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


@pytest.mark.parametrize(
    ("replace", "key", "message"),
    [
        (
            (r"^(\[memories\.ub\]\nsize = \{ value = )192", r"\g<1>1e21"),
            "memories.ub.size",
            "must be at most 2147483648 (2**31), got 1024000000000000000000000",
        ),
        (
            (r"^cores = \{ value = 24", "cores = { value = 1e11"),
            "cores",
            "must be at most 2147483648 (2**31), got 100000000000",
        ),
        (
            (r"^cores = \{ value = 24", "cores = { value = 5000"),
            "cores",
            "must be at most 4096, got 5000",
        ),
        ((r"^cores = .*\n", ""), "cores", "missing key"),
        ((r"^name = .*\n", ""), "name", "missing key"),
    ],
    ids=["ub-1e21-KiB", "1e11-cores", "5000-cores", "no-cores", "no-name"],
)
def test_bad_target_files_name_the_file_and_key(
    tmp_path: Path, replace: tuple[str, str], key: str, message: str
) -> None:
    path = _target_file(tmp_path, "chip.toml", replace)
    _write(tmp_path, "k.mlir", KERNEL)
    result = _run([OPT, "k.mlir", "-p", f'pypto-lower{{target="{path}"}}'], tmp_path)
    _assert_located_error(
        result, "k.mlir", f"cannot load the target: {path}: {key}: {message}"
    )


def test_a_target_file_named_in_a_pipeline_with_quotes(tmp_path: Path) -> None:
    path = _target_file(tmp_path, "chip.toml", None)
    _write(tmp_path, "k.mlir", KERNEL)
    result = _run([OPT, "k.mlir", "-p", f'pypto-lower{{target="{path}"}}'], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ascend_hw.dma_load" in result.stdout
    unquoted = _run([OPT, "k.mlir", "-p", f"pypto-lower{{target={path}}}"], tmp_path)
    assert unquoted.returncode == 1
    assert 'quote a value with other characters: target="' in unquoted.stderr


def test_a_derived_target_without_a_name_is_named_after_its_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "my-chip.toml").write_text(
        'base = "ascend910b"\n[memories.ub]\n'
        'size = { value = 96, unit = "KiB", source = "assumed: a test" }\n'
    )
    target = load_target(tmp_path / "my-chip.toml")
    assert target.name == "my-chip"
    assert target.memories["ub"].size == 96 * 1024
