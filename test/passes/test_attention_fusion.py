"""Flash-attention fusion (passes/attention_nests.py): the fused nest against the
tv reference with the per-element error bounds of pypto_mlir.check (odd
shapes, a mask, batched heads), examples/attention.py against numpy, the
switch, the refusals, and every flag hw-insert-sync gives the fused nest.
"""

# No `from __future__ import annotations`: the kernels' annotations name the
# shapes of each case, which the frontend evaluates where the kernel is made.
import importlib.util
import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from test_hw_insert_sync import flags_that_change_nothing
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp

import pypto_mlir as pto
from pypto_mlir.check import check_lowering, lower, result_buffers
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.frontend.kernel import Kernel
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.passes.attention_nests import AttentionTiling, choose_tiling
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _kernel(heads: int, seq: int, dim: int, mask: bool) -> Kernel:
    """softmax(q @ k^T / sqrt(d) [+ mask]) @ v as a user writes it."""
    shape = (heads, seq, dim) if heads else (seq, dim)
    Qkv = pto.Tensor[shape, pto.f16]
    Mask = pto.Tensor[(seq, seq), pto.f16]

    def keys_t(k: pto.Tensor) -> pto.Tensor:
        return k.transpose(0, 2, 1) if heads else k.T

    if mask:

        @pto.kernel
        def attention(q: Qkv, k: Qkv, v: Qkv, m: Mask) -> Qkv:
            return pto.softmax(q @ keys_t(k) / math.sqrt(dim) + m, axis=-1) @ v

        return attention

    @pto.kernel
    def attention(q: Qkv, k: Qkv, v: Qkv) -> Qkv:  # noqa: F811
        return pto.softmax(q @ keys_t(k) / math.sqrt(dim), axis=-1) @ v

    return attention


def _inputs(heads: int, seq: int, dim: int, mask: bool) -> list[np.ndarray]:
    rng = np.random.default_rng(seq * 7 + dim)
    shape = (heads, seq, dim) if heads else (seq, dim)
    inputs = [(rng.standard_normal(shape) * 1.5).astype(np.float16) for _ in range(3)]
    if mask:
        causal = np.tril(np.ones((seq, seq), dtype=bool))
        inputs.append(np.where(causal, 0.0, -np.inf).astype(np.float16))
    return inputs


def _remarks(module: ModuleOp, target: str, **options: bool) -> list[str]:
    found: list[str] = []
    with diagnostic_handler(lambda d: found.append(str(d))):
        lower(module, "tile", LowerPipeline(target=target, **options))
    return found


# (heads, seq, dim, mask): whole blocks; heads with query and key tails and a mask.
CASES = [(0, 64, 32, False), (2, 40, 16, True)]


@pytest.mark.parametrize(("heads", "seq", "dim", "mask"), CASES)
def test_fused_nest_matches_the_reference(
    heads: int, seq: int, dim: int, mask: bool
) -> None:
    kernel = _kernel(heads, seq, dim, mask)
    module = kernel.module()
    remarks = _remarks(module, "ascend910b")
    assert any("fused attention" in r for r in remarks), remarks
    inputs = _inputs(heads, seq, dim, mask)
    with diagnostic_handler(lambda _: None):
        result = check_lowering(
            module, "attention", inputs, "ascend_hw", LowerPipeline(target="ascend910b")
        )
    assert result.ok, [c.describe() for c in result.comparisons]
    # One nest: no GM temporary for the scores or the probabilities.
    assert not any(isinstance(op, memref.AllocOp) for op in result.lowered.walk())


def test_switch_off_keeps_three_nests() -> None:
    module = _kernel(0, 64, 32, False).module()
    remarks = _remarks(module, "ascend910b", attention_fusion=False, row_fusion=False)
    assert not any("fused attention" in r or "not fused" in r for r in remarks)
    options = LowerPipeline(attention_fusion=False, row_fusion=False)
    lowered = lower(module, "tile", options)
    assert sum(isinstance(op, memref.AllocOp) for op in lowered.walk()) == 2
    # With row fusion (the default) the scores matmul and the softmax are one
    # nest: only the probabilities go through GM.
    lowered = lower(module, "tile", LowerPipeline(attention_fusion=False))
    assert sum(isinstance(op, memref.AllocOp) for op in lowered.walk()) == 1
    assert "attention-fusion" in " ".join(LowerPipeline.__dataclass_fields__).replace(
        "_", "-"
    )


def test_tiny_refuses_with_a_remark_and_stays_exact() -> None:
    """tiny's 4 KiB UB holds no key step (16x16 scores in f16 and f32, their
    exponent and three 16-wide accumulators): three nests, as before."""
    module = _kernel(0, 40, 16, False).module()
    remarks = _remarks(module, "tiny")
    assert any(
        "attention not fused: no query and key block fits target 'tiny'" in r
        for r in remarks
    ), remarks
    with diagnostic_handler(lambda _: None):
        result = check_lowering(
            module,
            "attention",
            _inputs(0, 40, 16, False),
            "tile",
            LowerPipeline(target="tiny"),
        )
    assert result.ok


def test_blocks_spread_over_the_cores() -> None:
    """The 2048-row query of the bench is cut into blocks for all 24 cores'
    worth of rounds, not 16 blocks of 128 rows."""
    chip = load_target("ascend910b")
    tiling = choose_tiling(chip, chip.cores, (2048, 2048), 128, 128)
    assert tiling is not None and tiling.br < 128
    assert choose_tiling(chip, chip.cores, (16, 16), 16, 16) == AttentionTiling(16, 16)


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "example_attention", EXAMPLES / "attention.py"
    )
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def test_example_matches_numpy() -> None:
    """examples/attention.py at a small S, plain and causal; the tolerance
    rejects an output a few f16 ulps off (it cannot pass vacuously)."""
    example = _load_example()
    inputs = example.make_inputs(np.random.default_rng(0), 48)
    for kernel, extra in (
        (example.attention, ()),
        (example.causal_attention, (example.causal_mask(48),)),
    ):
        arguments = (*inputs, *extra)
        expected = example.reference(*arguments)
        rtol, atol = example.tolerance(*arguments)
        actual = kernel(*arguments).astype(np.float64)
        assert np.all(np.abs(actual - expected) <= atol + rtol * np.abs(expected))
        off = expected + 8 * (atol + rtol * np.abs(expected))
        assert not np.all(np.abs(off - expected) <= atol + rtol * np.abs(expected))


def test_every_flag_of_the_fused_nest_is_needed() -> None:
    """Without any one set/wait pair of the fused nest (two key blocks in flight,
    the accumulator carried), the simulator reports a race, a deadlock or an
    event misuse, or the result changes."""
    heads, seq, dim = 0, 32, 16
    module = _kernel(heads, seq, dim, False).module()
    with diagnostic_handler(lambda _: None):
        lowered = lower(module, "ascend_hw", LowerPipeline(max_cores=1))
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    inputs = _inputs(heads, seq, dim, False)
    chip = load_target("ascend910b")

    def run(candidate: ModuleOp) -> bytes:
        args = [*(a.copy() for a in inputs), *result_buffers(function)]
        run_hw_function(candidate, "attention", args, chip)
        return args[-1].tobytes()

    count, kept = flags_that_change_nothing(lowered, run)
    assert count > 0
    print(f"{count} flags")
    assert not kept, f"flags {kept} of {count} change nothing"
