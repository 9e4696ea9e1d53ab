"""The ascend_hw dialect's Python API: builders, the instruction interface, the
addressing helpers the interpreter relies on, and verifier messages."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    Builtin,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    f16,
    f32,
    i8,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.targets import load_target

TARGET = load_target("ascend910b")


def ub(shape: Sequence[int], element_type: Attribute = f16) -> hw.BufferType:
    return hw.BufferType(shape, element_type, "ub")


def kernel(
    arg_types: Sequence[Attribute], target: str | None = "ascend910b"
) -> tuple[ModuleOp, func.FuncOp]:
    """A module (naming `target`) holding an empty function with these arguments."""
    fn = func.FuncOp("k", (list(arg_types), []))
    module = ModuleOp([fn])
    if target is not None:
        module.attributes[hw.TARGET_ATTR] = StringAttr(target)
    return module, fn


def build(
    arg_types: Sequence[Attribute], make, target: str | None = "ascend910b"
) -> tuple[ModuleOp, list[Operation]]:
    """Build ops with `make(args)` into a function and return the module and them."""
    module, fn = kernel(arg_types, target)
    ops = list(make(fn.args))
    fn.body.block.add_ops([*ops, func.ReturnOp()])
    return module, ops


def index_consts(*values: int) -> list[arith.ConstantOp]:
    return [arith.ConstantOp(IntegerAttr(v, IndexType())) for v in values]


# --------------------------------------------------------------------------------------
# Types and attributes
# --------------------------------------------------------------------------------------


def test_buffer_type_parameters_and_text():
    buf = hw.BufferType([64, 128], f32, "l1", "nz")
    assert buf.get_shape() == (64, 128)
    assert buf.memory_space == hw.MemorySpace.L1
    assert buf.layout_kind == hw.Layout.NZ
    assert buf.element_bytes == 4
    assert buf.byte_size() == 64 * 128 * 4
    assert str(buf) == "!ascend_hw.buf<64x128xf32, l1, nz>"
    assert str(ub([8])) == "!ascend_hw.buf<8xf16, ub>"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: hw.BufferType([0], f16, "ub"), "positive sizes"),
        (lambda: hw.BufferType([8], IndexType(), "ub"), "element type must be one of"),
        (lambda: hw.BufferType([8], f16, "gm"), "GM operands are memrefs"),
        (lambda: hw.BufferType([8], f16, "l1", "nz"), "an nz buffer is 2-D"),
    ],
)
def test_buffer_type_verifier(make, message):
    with pytest.raises(VerifyException, match=message):
        make()


def test_mask_attr_prints_hex_and_rejects_zero():
    assert str(hw.MaskAttr(0xFF00)) == "#ascend_hw.mask<0xff00>"
    with pytest.raises(VerifyException, match="non-zero 128-bit pattern"):
        hw.MaskAttr(0)
    with pytest.raises(VerifyException, match="non-zero 128-bit pattern"):
        hw.MaskAttr(1 << 128)


def test_nz_layout_offsets():
    # f16: fractals of 16 rows x 16 columns; column blocks one after the other.
    nz = hw.BufferType([32, 48], f16, "l1", "nz")
    assert hw.nz_c0(f16, TARGET) == 16
    assert hw.nz_c0(f32, TARGET) == 8
    assert hw.nz_c0(i8, TARGET) == 32
    assert hw.element_offset(nz, [0, 0], TARGET) == 0
    assert hw.element_offset(nz, [0, 15], TARGET) == 15
    assert hw.element_offset(nz, [1, 0], TARGET) == 16
    assert hw.element_offset(nz, [0, 16], TARGET) == 32 * 16
    assert hw.element_offset(nz, [31, 47], TARGET) == 32 * 48 - 1
    # Every element has its own offset inside the buffer.
    offsets = {
        hw.element_offset(nz, [r, c], TARGET) for r in range(32) for c in range(48)
    }
    assert offsets == set(range(32 * 48))
    nd = hw.BufferType([4, 5, 6], f16, "ub")
    assert hw.element_offset(nd, [1, 2, 3], TARGET) == 1 * 30 + 2 * 6 + 3


# --------------------------------------------------------------------------------------
# Builders, pipes and the buffers each instruction reads and writes
# --------------------------------------------------------------------------------------


def test_alloc_and_subview_builders():
    def make(args):
        c0, c1 = index_consts(0, 1)
        a = hw.AllocOp(1024, ub([64, 128]))
        row = hw.SubviewOp(a, [c1, c0], ub([128]))
        return [c0, c1, a, row]

    module, (_, _, alloc, row) = build([], make)
    module.verify()
    assert alloc.byte_offset == 1024
    assert isinstance(row, hw.SubviewOp)
    assert not isinstance(alloc, hw.HwInstruction)
    assert not isinstance(row, hw.HwInstruction)
    assert "ascend_hw.alloc [1024, 17408) : !ascend_hw.buf<64x128xf16, ub>" in str(
        module
    )


def test_dma_builders_pipes_and_buffers():
    gm = MemRefType(f16, [4096, 1024])

    def make(args):
        x = args[0]
        c0, c128 = index_consts(0, 128)
        u = hw.AllocOp(0, ub([64, 128]))
        l1 = hw.AllocOp(0, hw.BufferType([64, 128], f16, "l1"))
        load = hw.DmaLoadOp(x, [c0, c128], u, bursts=64, burst_bytes=256, src_gap=1792)
        store = hw.DmaStoreOp(
            u, x, [c0, c128], bursts=64, burst_bytes=256, dst_gap=1792
        )
        to_l1 = hw.DmaCopyOp(u, l1, bursts=1, burst_bytes=64 * 128 * 2)
        from_l1 = hw.DmaCopyOp(l1, u, bursts=1, burst_bytes=64 * 128 * 2)
        return [c0, c128, u, l1, load, store, to_l1, from_l1]

    module, ops = build([gm], make)
    module.verify()
    _, _, u, l1, load, store, to_l1, from_l1 = ops
    assert load.pipe == hw.Pipe.MTE2
    assert store.pipe == hw.Pipe.MTE3
    assert to_l1.pipe == hw.Pipe.MTE3  # the target's ub -> l1 path
    assert from_l1.pipe == hw.Pipe.MTE1
    assert load.read_buffers() == (load.src,)
    assert load.write_buffers() == (u.result,)
    assert store.read_buffers() == (u.result,)
    assert store.write_buffers() == (store.dst,)
    assert load.burst_descriptor() == (64, 256, 1792, 0)
    # GM pitch is burst + gap; the UB side is aligned to 32 bytes.
    assert load.pitches(TARGET) == (2048, 256)
    assert "src_gap = 1792" in str(load) and "dst_gap" not in str(load)


def test_dma_pitch_rounds_on_chip_bursts_to_the_alignment():
    gm = MemRefType(f16, [64, 100])

    def make(args):
        (c0,) = index_consts(0)
        u = hw.AllocOp(0, ub([64, 112]))
        load = hw.DmaLoadOp(args[0], [c0, c0], u, bursts=64, burst_bytes=200)
        return [c0, u, load]

    module, ops = build([gm], make)
    module.verify()
    # 200-byte rows are contiguous in GM and start every 224 bytes in UB.
    assert ops[-1].pitches(TARGET) == (200, 224)


def test_matrix_moves_and_mmad():
    a_gm = MemRefType(f16, [128, 64])
    c_gm = MemRefType(f16, [128, 128])
    l1 = hw.BufferType([128, 64], f16, "l1", "nz")
    l0a = hw.BufferType([128, 64], f16, "l0a", "nz")
    l0b = hw.BufferType([64, 128], f16, "l0b", "nz")
    l0c = hw.BufferType([128, 128], f32, "l0c", "nz")

    def make(args):
        a, c = args
        (c0,) = index_consts(0)
        a1 = hw.AllocOp(0, l1)
        a0 = hw.AllocOp(0, l0a)
        b0 = hw.AllocOp(0, l0b)
        acc = hw.AllocOp(0, l0c)
        nd2nz = hw.Nd2NzOp(a, [c0, c0], a1, [c0, c0], rows=128, cols=64)
        load_a = hw.LoadL0Op(a1, [c0, c0], a0, [c0, c0], rows=128, cols=64)
        load_b = hw.LoadL0Op(
            a1, [c0, c0], b0, [c0, c0], rows=64, cols=128, transpose=True
        )
        mmad = hw.MmadOp(a0, b0, acc, m=128, n=128, k=64)
        mmac = hw.MmadOp(a0, b0, acc, m=100, n=128, k=40, accumulate=True)
        fix = hw.FixpipeOp(acc, [c0, c0], c, [c0, c0], rows=128, cols=128)
        return [c0, a1, a0, b0, acc, nd2nz, load_a, load_b, mmad, mmac, fix]

    module, ops = build([a_gm, c_gm], make)
    module.verify()
    nd2nz, load_a, load_b, mmad, mmac, fix = ops[5:]
    assert [op.pipe for op in ops[5:]] == [
        hw.Pipe.MTE2,
        hw.Pipe.MTE1,
        hw.Pipe.MTE1,
        hw.Pipe.M,
        hw.Pipe.M,
        hw.Pipe.FIX,
    ]
    assert load_b.transposed and not load_a.transposed
    assert mmad.mnk() == (128, 128, 64)
    # Overwriting reads only the inputs; accumulating also reads the accumulator.
    assert mmad.read_buffers() == (mmad.lhs, mmad.rhs)
    assert mmac.read_buffers() == (mmac.lhs, mmac.rhs, mmac.acc)
    assert mmac.write_buffers() == (mmac.acc,)
    assert fix.read_buffers() == (fix.src,) and fix.write_buffers() == (fix.dst,)
    assert "accumulate" in str(mmac) and "accumulate" not in str(mmad)


def test_vector_builders_pipes_and_buffers():
    x, m, o = ub([64, 128]), hw.BufferType([1024], i8, "ub"), ub([128], i32)

    def make(args):
        a, b, mask, offs, s = args
        return [
            hw.VAddOp(a, b, a, repeat=64),
            hw.VAddsOp(a, s, b, repeat=64, mask=100),
            hw.VExpOp(a, b, mask=hw.MaskAttr(0xFFFF)),
            hw.VCastOp(a, a, "none"),
            hw.VReduceSumOp(a, b, repeat=64, dst_stride=2),
            hw.VDupOp(s, a, repeat=64),
            hw.VBrcbOp(a, b, repeat=8),
            hw.VCmpOp("lt", a, b, mask, repeat=64),
            hw.VCmpsOp("ge", a, s, mask),
            hw.VSelectOp(mask, a, b, a, repeat=64),
            hw.VGatherOp(a, offs, b),
        ]

    module, ops = build([x, x, m, o, f16], make)
    # vcast f16 -> f16 is not a conversion: remove it before verifying the rest.
    cast = ops.pop(3)
    with pytest.raises(VerifyException, match="cannot convert f16 to f16"):
        cast.verify()
    cast.detach()
    module.verify()
    assert all(op.pipe == hw.Pipe.V for op in ops)
    add, adds, exp, red, dup, brcb, cmp, cmps, sel, gather = ops
    assert add.read_buffers() == (add.src0, add.src1)
    assert add.write_buffers() == (add.dst,)
    assert dup.read_buffers() == () and dup.write_buffers() == (dup.dst,)
    assert sel.read_buffers() == (sel.cond, sel.src0, sel.src1)
    assert gather.read_buffers() == (gather.src, gather.offsets)
    assert cmp.write_buffers() == (cmp.dst,)
    assert cmps.lane_operands() == (cmps.src,)
    assert brcb.lane_operands() == (brcb.dst,)
    assert red.lane_operands() == (red.src,)
    assert "mask = 100" in str(adds)
    assert "#ascend_hw.mask<0xffff>" in str(exp)


def test_sync_and_core_ops():
    ops = [
        hw.SetFlagOp("mte2", "v", 3),
        hw.WaitFlagOp(hw.Pipe.MTE2, hw.Pipe.V, 3),
        hw.PipeBarrierOp("all"),
        hw.BlockIdxOp(),
        hw.BlockDimOp(),
        hw.SyncAllOp(),
    ]
    module, _ = build([], lambda args: ops)
    module.verify()
    assert [op.pipe for op in ops] == [
        hw.Pipe.MTE2,
        hw.Pipe.V,
        hw.Pipe.ALL,
        hw.Pipe.S,
        hw.Pipe.S,
        hw.Pipe.ALL,
    ]
    assert ops[0].event_id == 3
    assert (ops[1].src_pipe, ops[1].dst_pipe) == (hw.Pipe.MTE2, hw.Pipe.V)
    assert isinstance(ops[3].result.type, IndexType)
    assert str(ops[0]) == "ascend_hw.set_flag mte2 -> v, 3"
    assert str(ops[2]) == "ascend_hw.pipe_barrier all"
    assert str(ops[5]) == "ascend_hw.sync_all"
    assert all(op.read_buffers() == op.write_buffers() == () for op in ops)


def test_every_op_but_alloc_and_subview_is_an_instruction():
    for op_type in hw.AscendHW.operations:
        is_instruction = issubclass(op_type, hw.HwInstruction)
        assert is_instruction == (op_type not in (hw.AllocOp, hw.SubviewOp)), op_type


# --------------------------------------------------------------------------------------
# Vector addressing
# --------------------------------------------------------------------------------------


def test_vector_lanes_and_default_strides():
    def make(args):
        a, f = args
        return [
            hw.VExpOp(a, a, repeat=4),
            hw.VCastOp(a, f, "none", repeat=2),
            hw.VAddOp(f, f, f, mask=hw.MaskAttr(0b1010)),
        ]

    module, (exp, cast, add) = build([ub([64, 128]), ub([64, 128], f32)], make)
    module.verify()
    assert exp.lanes(TARGET) == 128
    assert exp.block_strides() == (1, 1)
    assert exp.repeat_strides(TARGET) == (8, 8)
    # f16 -> f32 runs 64 lanes: the f16 side advances half a repeat.
    assert cast.lanes(TARGET) == 64
    assert cast.repeat_strides(TARGET) == (4, 8)
    assert list(add.active_lanes(TARGET)) == [1, 3]
    assert exp.lane_extent(0, TARGET) == 4 * 256


def touched_bytes(
    repeat: int, lanes: Sequence[int], element_bytes: int, blk: int, rep: int
) -> int:
    """One past the last byte the documented addressing formula touches."""
    per_block = 32 // element_bytes
    end = 0
    for i in range(repeat):
        for lane in lanes:
            start = (i * rep + (lane // per_block) * blk) * 32
            start += (lane % per_block) * element_bytes
            end = max(end, start + element_bytes)
    return end


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_lane_extent_matches_the_addressing_formula(data):
    element_type = data.draw(st.sampled_from([f16, f32]))
    es = 2 if element_type == f16 else 4
    lanes = 256 // es
    mask = data.draw(
        st.one_of(
            st.none(),
            st.integers(1, lanes),
            st.integers(1, (1 << lanes) - 1).map(hw.MaskAttr),
        )
    )
    repeat = data.draw(st.integers(1, 6))
    blk, rep = data.draw(st.integers(0, 4)), data.draw(st.integers(0, 20))
    src = hw.AllocOp(0, ub([4096], element_type))
    op = hw.VAbsOp(
        src,
        src,
        repeat=repeat,
        mask=mask,
        blk_stride=[blk, blk],
        rep_stride=[rep, rep],
    )
    active = list(op.active_lanes(TARGET))
    assert op.lane_extent(1, TARGET) == touched_bytes(repeat, active, es, blk, rep)


# --------------------------------------------------------------------------------------
# Verifier messages
# --------------------------------------------------------------------------------------


def verify_error(arg_types, make, message, target="ascend910b"):
    module, _ = build(arg_types, make, target)
    with pytest.raises(VerifyException, match=message):
        module.verify()


def test_alloc_alignment_and_capacity_come_from_the_target():
    buf = ub([1024])  # 2 KiB
    verify_error(
        [],
        lambda args: [hw.AllocOp(16, buf)],
        r"offset 16 of a buffer in ub must be a non-negative multiple of 32 "
        r"\(alignment of ub on target ascend910b\)",
    )
    verify_error(
        [],
        lambda args: [hw.AllocOp(3072, buf)],
        r"buffer \[3072, 5120\) does not fit ub of target tiny \(4096 bytes\)",
        target="tiny",
    )
    # Without a named target the capacity is not checked.
    module, _ = build([], lambda args: [hw.AllocOp(3072, buf)], target=None)
    module.verify()


def test_dma_verifier_messages():
    gm = MemRefType(f16, [64, 64])

    def load(shape=(64, 64), **kwargs):
        def make(args):
            (c0,) = index_consts(0)
            u = hw.AllocOp(0, ub(shape))
            return [c0, u, hw.DmaLoadOp(args[0], [c0, c0], u, **kwargs)]

        return make

    verify_error([gm], load(bursts=0, burst_bytes=64), "must be positive, got 0 and 64")
    verify_error(
        [gm],
        load(bursts=2, burst_bytes=64, dst_gap=8),
        r"destination gap 8 must be a multiple of 32 bytes",
    )
    verify_error(
        [gm],
        load(bursts=65, burst_bytes=128),
        r"65 bursts of 128 bytes with pitch 128 cover 8320 bytes, more than the "
        r"8192 bytes of destination",
    )
    verify_error(
        [gm],
        load(shape=(64, 80), bursts=1, burst_bytes=8194),
        r"source window of 8194 bytes from \[0, 0\] runs past the end",
    )


def test_dma_direction_must_exist_on_the_target():
    def make(args):
        u = hw.AllocOp(0, ub([32, 16]))
        a = hw.AllocOp(0, hw.BufferType([32, 16], f16, "l0a", "nz"))
        return [u, a, hw.DmaCopyOp(u, a, bursts=1, burst_bytes=1024)]

    module, ops = build([], make)
    with pytest.raises(
        VerifyException, match="target ascend910b has no DMA path ub -> l0a"
    ):
        module.verify()
    with pytest.raises(VerifyException, match="no DMA path ub -> l0a"):
        ops[-1].pipe  # noqa: B018 - the pipe of a path that does not exist


def test_mmad_verifier_messages():
    def mmad(a_type, b_type, c_type, **kwargs):
        def make(args):
            return [hw.MmadOp(*args, **kwargs)]

        return [a_type, b_type, c_type], make

    a = hw.BufferType([16, 16], f16, "l0a", "nz")
    b = hw.BufferType([16, 16], f16, "l0b", "nz")
    c = hw.BufferType([16, 16], f32, "l0c", "nz")
    verify_error(*mmad(b, b, c, m=16, n=16, k=16), "lhs must be in l0a, got l0b")
    verify_error(
        *mmad(a, b, hw.BufferType([16, 16], f16, "l0c", "nz"), m=16, n=16, k=16),
        "f16 inputs accumulate in f32, got f16",
    )
    verify_error(*mmad(a, b, c, m=16, n=16, k=17), r"k = 17 exceeds")


def test_vector_verifier_messages():
    x = ub([64, 128])

    def one(op_factory):
        return lambda args: [op_factory(*args)]

    verify_error(
        [x], one(lambda a: hw.VExpOp(a, a, repeat=256)), r"repeat must be in 1\.\.255"
    )
    verify_error(
        [x],
        one(lambda a: hw.VExpOp(a, a, mask=129)),
        r"mask must enable 1\.\.128 lanes \(of 128 per repeat\), got 129",
    )
    verify_error(
        [x],
        one(lambda a: hw.VExpOp(a, a, blk_stride=[1])),
        "blk_stride needs 2 i64 entries",
    )
    verify_error(
        [x],
        one(lambda a: hw.VExpOp(a, a, repeat=65)),
        r"65 repeats touch 16640 bytes of operand #0",
    )
    verify_error(
        [hw.BufferType([64, 128], f16, "l1")],
        one(lambda a: hw.VExpOp(a, a)),
        "vector operands must be in ub, got l1",
    )
    verify_error(
        [x, f32],
        one(lambda a, s: hw.VAddsOp(a, s, a)),
        "scalar must be f16 like the buffers, got f32",
    )
    verify_error(
        [x, ub([64, 128], i32)],
        one(lambda a, n: hw.VCastOp(a, n, "none")),
        r"f16 -> i32 takes round mode rint or round or floor or ceil or trunc, got none",
    )


def test_flag_verifier_messages():
    verify_error([], lambda args: [hw.SetFlagOp("v", "v", 0)], "use pipe_barrier")
    verify_error(
        [],
        lambda args: [hw.WaitFlagOp("mte2", "v", 8)],
        r"event id must be in 0\.\.7 \(sync\.event_ids of target ascend910b\), got 8",
    )


def test_parsed_ops_keep_their_operands():
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(func.Func)
    ctx.load_dialect(arith.Arith)
    ctx.load_dialect(hw.AscendHW)
    text = """
    func.func @k(%x: memref<64x64xf16>, %i: index) {
      %a = ascend_hw.alloc [0, 8192) : !ascend_hw.buf<64x64xf16, ub>
      ascend_hw.dma_load %x[%i, %i] -> %a {bursts = 64, burst_bytes = 128} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, ub>
      func.return
    }
    """
    module = Parser(ctx, text).parse_module()
    module.verify()
    fn = next(iter(module.ops))
    assert isinstance(fn, func.FuncOp)
    load = list(fn.body.block.ops)[1]
    assert isinstance(load, hw.DmaLoadOp)
    assert load.src == fn.args[0]
    assert tuple(load.src_indices) == (fn.args[1], fn.args[1])
    assert isinstance(load.dst, SSAValue)
    assert load.burst_descriptor() == (64, 128, 0, 0)
