"""The `tensor_view` dialect (prefix `tv`): whole tensors in global memory.

Level 1 of pypto-mlir. Values are whole tensors with value semantics; ops are
hardware independent (elementwise with broadcasting, matmul, reductions,
softmax, transpose, cast, strided views, fill). Lower levels tile them onto the
AI Core. The numerical meaning of every op, fp16 rounding included, is fixed by
the reference interpreter in `pypto_mlir.interp.tensor_view` and described in
docs/tensor_view.md.

One module for the whole dialect, as xDSL's own dialects are: its length is the
ops' docstrings and verifiers, not several jobs.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from itertools import pairwise
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    AnyFloatConstr,
    ArrayAttr,
    ContainerType,
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    ShapedType,
    UnitAttr,
    bf16,
    f16,
    f32,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.dialects.utils import (
    get_dynamic_index_list,
    split_dynamic_index_list,
    verify_dynamic_index_list,
)
from xdsl.dialects.utils.dynamic_index_list import DynamicIndexList
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.declarative_assembly_format import (
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.printer import Printer
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from pypto_mlir.dialects.common import (
    ELEMENT_TYPES,
    FLOAT_ELEMENT_TYPES,
    CmpMode,
    irdl_op_definition,
    names,
    verify_select_types,
)
from pypto_mlir.dialects.common import INTEGER_ELEMENT_TYPES as INTEGER_ELEMENT_TYPES
from pypto_mlir.dialects.common import is_float as is_float_element_type

CSR_INDEX_TYPES: tuple[Attribute, ...] = (i16, i32, i64)


def _dims_str(shape: Sequence[int]) -> str:
    return "x".join("?" if d == DYNAMIC_INDEX else str(d) for d in shape) or "scalar"


# ---------------------------------------------------------------------------
# Attributes and types
# ---------------------------------------------------------------------------


def _print_dim(printer: Printer, value: int) -> None:
    printer.print_string("?" if value == DYNAMIC_INDEX else str(value))


@irdl_attr_definition
class CsrEncodingAttr(ParametrizedAttribute):
    """Compressed sparse row encoding of a 2-d `!tv.tensor`, or block-CSR (BSR).

    `#tv.csr<rows = 4096, cols = 1024, nnz = 8192, index = i32>`: the tensor is
    stored as row offsets (rows + 1 entries), column indices and values (nnz
    entries each); `index` is the integer type of offsets and indices. Any
    count may be `?`. The dense ops reject encoded tensors; sparse ops accept them.

    `#tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>` is
    block-CSR (scipy's `bsr_array`, MLIR's `#BSR`): the stored unit is a dense
    16x16 block, the offsets run over block rows (rows / 16 + 1 entries), the
    indices are block columns and `nnz` counts stored blocks; values are
    `nnz x 16 x 16`. CSR is the 1x1 block (`block` is then not printed).
    docs/sparse.md describes both and their buffers.
    """

    name = "tv.csr"

    rows: IntAttr
    cols: IntAttr
    nnz: IntAttr
    index_type: IntegerType
    block: ArrayAttr[IntAttr]

    def __init__(
        self,
        rows: int,
        cols: int,
        nnz: int,
        index_type: IntegerType = i32,
        block: Sequence[int] = (1, 1),
    ) -> None:
        super().__init__(
            IntAttr(rows),
            IntAttr(cols),
            IntAttr(nnz),
            index_type,
            ArrayAttr(IntAttr(b) for b in block),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            values: list[Attribute] = []
            for key in ("rows", "cols", "nnz"):
                parser.parse_keyword(key)
                parser.parse_punctuation("=")
                values.append(IntAttr(parser.parse_shape_dimension()))
                parser.parse_punctuation(",")
            parser.parse_keyword("index")
            parser.parse_punctuation("=")
            values.append(parser.parse_type())
            block = [1, 1]
            if parser.parse_optional_punctuation(",") is not None:
                parser.parse_keyword("block")
                parser.parse_punctuation("=")
                block = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, parser.parse_integer
                )
            values.append(ArrayAttr(IntAttr(b) for b in block))
        return values

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            for key, value in (
                ("rows", self.rows),
                ("cols", self.cols),
                ("nnz", self.nnz),
            ):
                printer.print_string(f"{key} = ")
                _print_dim(printer, value.data)
                printer.print_string(", ")
            printer.print_string("index = ")
            printer.print_attribute(self.index_type)
            if self.is_block:
                printer.print_string(
                    f", block = [{', '.join(str(b) for b in self.block_shape)}]"
                )

    @property
    def block_shape(self) -> tuple[int, ...]:
        """The stored unit: (1, 1) for CSR, (bm, bn) for block-CSR."""
        return tuple(b.data for b in self.block.data)

    @property
    def is_block(self) -> bool:
        return self.block_shape != (1, 1)

    @property
    def format_name(self) -> str:
        return "BSR" if self.is_block else "CSR"

    def block_grid(self) -> tuple[int, int]:
        """(block rows, block columns), `?` where the size is `?`."""
        bm, bn = self.block_shape
        return (
            DYNAMIC_INDEX if self.rows.data == DYNAMIC_INDEX else self.rows.data // bm,
            DYNAMIC_INDEX if self.cols.data == DYNAMIC_INDEX else self.cols.data // bn,
        )

    def verify(self) -> None:
        for key, value in (("rows", self.rows), ("cols", self.cols), ("nnz", self.nnz)):
            if value.data < 0 and value.data != DYNAMIC_INDEX:
                raise VerifyException(
                    f"#tv.csr {key} must be non-negative or '?', got {value.data}"
                )
        if self.index_type not in CSR_INDEX_TYPES:
            raise VerifyException(
                f"#tv.csr index type must be one of {names(CSR_INDEX_TYPES)}, "
                f"got {self.index_type}"
            )
        block = self.block_shape
        if len(block) != 2 or any(b < 1 for b in block):
            raise VerifyException(
                f"#tv.csr block must be two sizes >= 1, got {list(block)}"
            )
        for key, extent, size in zip(
            ("rows", "cols"), (self.rows.data, self.cols.data), block, strict=True
        ):
            if extent != DYNAMIC_INDEX and extent % size:
                raise VerifyException(
                    f"#tv.csr {key} = {extent} is not a multiple of the block "
                    f"size {size}"
                )
        block_rows, block_cols = self.block_grid()
        nnz = self.nnz.data
        if DYNAMIC_INDEX not in (block_rows, block_cols, nnz) and (
            nnz > block_rows * block_cols
        ):
            what = "rows * cols" if not self.is_block else "the number of blocks"
            raise VerifyException(
                f"#tv.csr nnz = {nnz} exceeds {what} = {block_rows * block_cols}"
            )


@irdl_attr_definition
class TensorViewType(
    ParametrizedAttribute, TypeAttribute, ShapedType, ContainerType[Attribute]
):
    """A whole tensor in global memory: `!tv.tensor<4096x1024xf16>`.

    Dimensions are static or `?` (bound when the function runs). The optional
    encoding (`#tv.csr<...>`) marks a sparse tensor.
    """

    name = "tv.tensor"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    encoding: Attribute

    def __init__(
        self,
        element_type: Attribute,
        shape: Sequence[int | IntAttr],
        encoding: Attribute | None = None,
    ) -> None:
        super().__init__(
            ArrayAttr(IntAttr(d) if isinstance(d, int) else d for d in shape),
            element_type,
            NoneAttr() if encoding is None else encoding,
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
            encoding: Attribute = NoneAttr()
            if parser.parse_optional_punctuation(",") is not None:
                encoding = parser.parse_attribute()
        return [ArrayAttr(IntAttr(d) for d in dims), element_type, encoding]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_dimension_list(self.get_shape())
            if self.shape.data:
                printer.print_string("x")
            printer.print_attribute(self.element_type)
            if not isinstance(self.encoding, NoneAttr):
                printer.print_string(", ")
                printer.print_attribute(self.encoding)

    def get_num_dims(self) -> int:
        return len(self.shape.data)

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    def get_element_type(self) -> Attribute:
        return self.element_type

    @property
    def is_sparse(self) -> bool:
        return not isinstance(self.encoding, NoneAttr)

    @property
    def sparse_encoding(self) -> CsrEncodingAttr | None:
        """The `#tv.csr` encoding of a sparse tensor, None for a dense one."""
        return self.encoding if isinstance(self.encoding, CsrEncodingAttr) else None

    def with_shape(self, shape: Sequence[int]) -> TensorViewType:
        """The dense tensor type of the same element type and another shape."""
        return TensorViewType(self.element_type, shape)

    def with_element_type(self, element_type: Attribute) -> TensorViewType:
        return TensorViewType(element_type, self.get_shape(), self.encoding)

    def verify(self) -> None:
        for d in self.get_shape():
            if d < 0 and d != DYNAMIC_INDEX:
                raise VerifyException(
                    f"!tv.tensor dimensions must be non-negative or '?', got {d}"
                )
        if self.element_type not in ELEMENT_TYPES:
            raise VerifyException(
                f"!tv.tensor element type must be one of {names(ELEMENT_TYPES)}, "
                f"got {self.element_type}"
            )
        if isinstance(self.encoding, NoneAttr):
            return
        if not isinstance(self.encoding, CsrEncodingAttr):
            raise VerifyException(
                f"!tv.tensor encoding must be #tv.csr, got {self.encoding}"
            )
        if self.get_num_dims() != 2:
            raise VerifyException(
                f"a #tv.csr tensor must have rank 2, got rank {self.get_num_dims()}"
            )
        for key, dim, count in zip(
            ("rows", "cols"),
            self.get_shape(),
            (self.encoding.rows.data, self.encoding.cols.data),
            strict=True,
        ):
            if dim != count:
                raise VerifyException(
                    f"#tv.csr {key} = {_dims_str([count])} does not match "
                    f"the tensor dimension {_dims_str([dim])}"
                )


# ---------------------------------------------------------------------------
# Shape helpers shared by verifiers, builders and the interpreter
# ---------------------------------------------------------------------------


def broadcast_shapes(lhs: Sequence[int], rhs: Sequence[int]) -> tuple[int, ...]:
    """Result shape of an elementwise op on `lhs` and `rhs` (numpy subset).

    Shapes are aligned on their trailing dimensions and the shorter one is
    extended with leading 1s. Each pair of dimensions must be equal or one of
    them a static 1. A `?` never broadcasts: against a static n it must be n at
    run time, against `?` the two must agree at run time.
    Raises ValueError naming the first incompatible dimension.
    """
    rank = max(len(lhs), len(rhs))
    lhs_ext = (1,) * (rank - len(lhs)) + tuple(lhs)
    rhs_ext = (1,) * (rank - len(rhs)) + tuple(rhs)
    result: list[int] = []
    for index, (a, b) in enumerate(zip(lhs_ext, rhs_ext, strict=True)):
        if a == b or b in (1, DYNAMIC_INDEX):
            result.append(a)
        elif a in (1, DYNAMIC_INDEX):
            result.append(b)
        else:
            raise ValueError(
                f"shapes {_dims_str(lhs)} and {_dims_str(rhs)} are not "
                f"broadcast-compatible: dimension {index} of the result is "
                f"{a} in one and {b} in the other"
            )
    return tuple(result)


def dims_compatible(a: int, b: int) -> bool:
    return a == b or DYNAMIC_INDEX in (a, b)


def _more_static(a: int, b: int) -> int:
    return b if a == DYNAMIC_INDEX else a


def rank_reduction_mask(
    sizes: Sequence[int], reduced: Sequence[int]
) -> tuple[bool, ...] | None:
    """Which of `sizes` a view drops to produce the shape `reduced`.

    Greedy from the left: a size is kept when it matches the next result
    dimension, otherwise it must be a static 1 and is dropped. None when
    `reduced` is not `sizes` with some unit dimensions removed.
    """
    dropped: list[bool] = []
    position = 0
    for size in sizes:
        if position < len(reduced) and reduced[position] == size:
            dropped.append(False)
            position += 1
        elif size == 1:
            dropped.append(True)
        else:
            return None
    if position != len(reduced):
        return None
    return tuple(dropped)


def _dense_tensor(value: SSAValue, what: str) -> TensorViewType:
    value_type = value.type
    if not isinstance(value_type, TensorViewType):
        raise VerifyException(f"{what} must be a !tv.tensor, got {value_type}")
    if value_type.is_sparse:
        raise VerifyException(
            f"{what} must be a dense tensor, got the sparse {value_type}"
        )
    return value_type


def _check_scalar_type(scalar_type: Attribute, element_type: Attribute) -> None:
    """A scalar may meet a float tensor as any float type, an integer tensor only
    as its own element type."""
    if is_float_element_type(element_type):
        if scalar_type not in FLOAT_ELEMENT_TYPES:
            raise VerifyException(
                f"a scalar operand of a {element_type} tensor must have a float type "
                f"({names(FLOAT_ELEMENT_TYPES)}), got {scalar_type}"
            )
    elif scalar_type != element_type:
        raise VerifyException(
            f"a scalar operand of a {element_type} tensor must have type "
            f"{element_type}, got {scalar_type}"
        )


def _check_result_type(op: Operation, expected: TensorViewType) -> None:
    actual = op.results[0].type
    if actual != expected:
        raise VerifyException(
            f"result type {actual} does not match the expected type {expected}"
        )


def _normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


# ---------------------------------------------------------------------------
# Canonicalization helpers
# ---------------------------------------------------------------------------


def scalar_constant_value(value: SSAValue) -> float | int | None:
    """The number a value is known to hold in every element, if any.

    Looks through `arith.constant` scalars and `tv.fill` of one.
    """
    owner = value.owner
    if isinstance(owner, FillOp):
        return scalar_constant_value(owner.value)
    if isinstance(owner, arith.ConstantOp):
        if isinstance(owner.value, FloatAttr):
            return owner.value.value.data
        if isinstance(owner.value, IntegerAttr) and isinstance(
            owner.value.type, IntegerType
        ):
            return owner.value.value.data
    return None


# ---------------------------------------------------------------------------
# View, dim and fill
# ---------------------------------------------------------------------------


class ViewOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldIdentityView(), FoldViewOfView())


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A strided window of a tensor, with the syntax of `memref.subview`.

    `tv.view %x[%i, 0][64, 1024][1, 1] : !tv.tensor<4096x1024xf16> to
    !tv.tensor<64x1024xf16>`: element `j` along a dimension is source element
    `offset + j * stride`. Offsets, sizes and strides are static or index
    values. The result may drop static unit dimensions (rank reduction). Value
    semantics: the result is a tensor of its own.
    """

    name = "tv.view"

    source = operand_def(TensorViewType)
    offsets = var_operand_def(IndexType)
    sizes = var_operand_def(IndexType)
    strides = var_operand_def(IndexType)
    static_offsets = prop_def(DenseArrayBase.constr(i64))
    static_sizes = prop_def(DenseArrayBase.constr(i64))
    static_strides = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorViewType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = lazy_traits_def(lambda: (Pure(), ViewOpHasCanonicalizationPatterns()))

    assembly_format = (
        "$source ``"
        "custom<DynamicIndexList>($offsets, $static_offsets)"
        "custom<DynamicIndexList>($sizes, $static_sizes)"
        "custom<DynamicIndexList>($strides, $static_strides)"
        "attr-dict `:` type($source) `to` type($result)"
    )
    custom_directives = (DynamicIndexList,)

    def __init__(
        self,
        source: SSAValue | Operation,
        offsets: Sequence[SSAValue | int],
        sizes: Sequence[SSAValue | int],
        strides: Sequence[SSAValue | int] | None = None,
        result_type: TensorViewType | None = None,
    ) -> None:
        """Build a view; strides default to 1 and the result type to the sizes
        (`?` for dynamic ones), without rank reduction."""
        source = SSAValue.get(source)
        if strides is None:
            strides = [1] * len(sizes)
        static_offsets, dynamic_offsets = split_dynamic_index_list(
            offsets, DYNAMIC_INDEX
        )
        static_sizes, dynamic_sizes = split_dynamic_index_list(sizes, DYNAMIC_INDEX)
        static_strides, dynamic_strides = split_dynamic_index_list(
            strides, DYNAMIC_INDEX
        )
        if result_type is None:
            assert isinstance(source.type, TensorViewType)
            result_type = TensorViewType(source.type.element_type, static_sizes)
        super().__init__(
            operands=[source, dynamic_offsets, dynamic_sizes, dynamic_strides],
            result_types=[result_type],
            properties={
                "static_offsets": DenseArrayBase.from_list(i64, static_offsets),
                "static_sizes": DenseArrayBase.from_list(i64, static_sizes),
                "static_strides": DenseArrayBase.from_list(i64, static_strides),
            },
        )

    def mixed_offsets(self) -> list[SSAValue | int]:
        return get_dynamic_index_list(
            self.static_offsets.get_values(), self.offsets, DYNAMIC_INDEX
        )

    def mixed_sizes(self) -> list[SSAValue | int]:
        return get_dynamic_index_list(
            self.static_sizes.get_values(), self.sizes, DYNAMIC_INDEX
        )

    def mixed_strides(self) -> list[SSAValue | int]:
        return get_dynamic_index_list(
            self.static_strides.get_values(), self.strides, DYNAMIC_INDEX
        )

    def dropped_dims(self) -> tuple[bool, ...]:
        """For each source dimension, whether the result drops it."""
        assert isinstance(self.result.type, TensorViewType)
        mask = rank_reduction_mask(
            self.static_sizes.get_values(), self.result.type.get_shape()
        )
        assert mask is not None, "verified op"
        return mask

    def verify_(self) -> None:
        source_type = _dense_tensor(self.source, "the source of tv.view")
        result_type = _dense_tensor(self.result, "the result of tv.view")
        static_offsets = self.static_offsets.get_values()
        static_sizes = self.static_sizes.get_values()
        static_strides = self.static_strides.get_values()
        verify_dynamic_index_list(
            static_offsets, self.offsets, DYNAMIC_INDEX, " in the offsets"
        )
        verify_dynamic_index_list(
            static_sizes, self.sizes, DYNAMIC_INDEX, " in the sizes"
        )
        verify_dynamic_index_list(
            static_strides, self.strides, DYNAMIC_INDEX, " in the strides"
        )
        rank = source_type.get_num_dims()
        for what, values in (
            ("offsets", static_offsets),
            ("sizes", static_sizes),
            ("strides", static_strides),
        ):
            if len(values) != rank:
                raise VerifyException(
                    f"expected {rank} {what} for a rank-{rank} source, got {len(values)}"
                )
        for dim, (offset, size, stride, extent) in enumerate(
            zip(
                static_offsets,
                static_sizes,
                static_strides,
                source_type.get_shape(),
                strict=True,
            )
        ):
            if offset < 0 and offset != DYNAMIC_INDEX:
                raise VerifyException(f"offset {offset} of dimension {dim} is negative")
            if size < 0 and size != DYNAMIC_INDEX:
                raise VerifyException(f"size {size} of dimension {dim} is negative")
            if stride < 1 and stride != DYNAMIC_INDEX:
                raise VerifyException(
                    f"stride {stride} of dimension {dim} must be at least 1"
                )
            if DYNAMIC_INDEX in (offset, extent):
                continue
            if offset > extent:
                raise VerifyException(
                    f"dimension {dim} is out of bounds: offset {offset} exceeds "
                    f"the source size {extent}"
                )
            if DYNAMIC_INDEX in (size, stride) or size == 0:
                continue
            last = offset + (size - 1) * stride
            if last >= extent:
                raise VerifyException(
                    f"dimension {dim} is out of bounds: offset {offset} + "
                    f"(size {size} - 1) * stride {stride} = {last} >= {extent}"
                )
        if result_type.element_type != source_type.element_type:
            raise VerifyException(
                f"result element type {result_type.element_type} differs from "
                f"the source element type {source_type.element_type}"
            )
        if rank_reduction_mask(static_sizes, result_type.get_shape()) is None:
            raise VerifyException(
                f"result shape {_dims_str(result_type.get_shape())} is not the "
                f"sizes {_dims_str(static_sizes)} with some static unit "
                "dimensions dropped"
            )


class DimOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldStaticDim(),)


@irdl_op_definition
class DimOp(IRDLOperation):
    """The size of one dimension: `tv.dim %x, 0 : !tv.tensor<?x64xf16>`.

    Needed to build tensors whose shape follows a `?` dimension of an input.
    """

    name = "tv.dim"

    source = operand_def(TensorViewType)
    index = prop_def(IntegerAttr[I64])
    result = result_def(IndexType)

    traits = lazy_traits_def(lambda: (Pure(), DimOpHasCanonicalizationPatterns()))

    assembly_format = "$source `,` $index attr-dict `:` type($source)"

    def __init__(self, source: SSAValue | Operation, index: int) -> None:
        super().__init__(
            operands=[source],
            result_types=[IndexType()],
            properties={"index": IntegerAttr(index, i64)},
        )

    def verify_(self) -> None:
        assert isinstance(self.source.type, TensorViewType)
        rank = self.source.type.get_num_dims()
        index = self.index.value.data
        if not 0 <= index < rank:
            raise VerifyException(
                f"dimension index {index} is out of range for rank {rank}"
            )


@irdl_op_definition
class FillOp(IRDLOperation):
    """A tensor with every element equal to a scalar.

    `tv.fill %s : f32 -> !tv.tensor<64x128xf16>`; a result with `?` dimensions
    takes their sizes as index operands: `tv.fill %s[%n] : f32 ->
    !tv.tensor<?x128xf16>`. The scalar is rounded to the element type.
    """

    name = "tv.fill"

    value = operand_def(AnyFloatConstr | base(IntegerType))
    dynamic_sizes = var_operand_def(IndexType)
    result = result_def(TensorViewType)

    traits = traits_def(Pure())

    assembly_format = (
        "$value (`[` $dynamic_sizes^ `]`)? attr-dict `:` type($value) `->` "
        "type($result)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        result_type: TensorViewType,
        dynamic_sizes: Sequence[SSAValue | Operation] = (),
    ) -> None:
        super().__init__(operands=[value, dynamic_sizes], result_types=[result_type])

    def verify_(self) -> None:
        result_type = _dense_tensor(self.result, "the result of tv.fill")
        _check_scalar_type(self.value.type, result_type.element_type)
        num_dynamic = result_type.get_shape().count(DYNAMIC_INDEX)
        if num_dynamic != len(self.dynamic_sizes):
            raise VerifyException(
                f"expected {num_dynamic} dynamic size operands for the '?' "
                f"dimensions of {result_type}, got {len(self.dynamic_sizes)}"
            )


# ---------------------------------------------------------------------------
# Elementwise unary ops
# ---------------------------------------------------------------------------


class UnaryOp(IRDLOperation, abc.ABC):
    """An elementwise op on one tensor; the result has the operand's type."""

    T: ClassVar = VarConstraint("T", base(TensorViewType))

    input = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($result)"

    ALLOWS_INTEGERS: ClassVar[bool] = False
    """Whether the op is defined on integer tensors (wrapping arithmetic)."""

    def __init__(self, input: SSAValue | Operation) -> None:
        input = SSAValue.get(input)
        super().__init__(operands=[input], result_types=[input.type])

    def verify_(self) -> None:
        input_type = _dense_tensor(self.input, f"the operand of {self.name}")
        if not self.ALLOWS_INTEGERS and not is_float_element_type(
            input_type.element_type
        ):
            raise VerifyException(
                f"{self.name} expects a float tensor "
                f"({names(FLOAT_ELEMENT_TYPES)}), got {input_type}"
            )


@irdl_op_definition
class NegOp(UnaryOp):
    """`-x`."""

    name = "tv.neg"
    ALLOWS_INTEGERS: ClassVar[bool] = True


@irdl_op_definition
class AbsOp(UnaryOp):
    """`|x|`."""

    name = "tv.abs"
    ALLOWS_INTEGERS: ClassVar[bool] = True


@irdl_op_definition
class ExpOp(UnaryOp):
    """`e^x`."""

    name = "tv.exp"


@irdl_op_definition
class LogOp(UnaryOp):
    """Natural logarithm; NaN below 0, -inf at 0."""

    name = "tv.log"


@irdl_op_definition
class SqrtOp(UnaryOp):
    """Square root; NaN below 0."""

    name = "tv.sqrt"


@irdl_op_definition
class RsqrtOp(UnaryOp):
    """`1 / sqrt(x)`."""

    name = "tv.rsqrt"


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    """`1 / x`."""

    name = "tv.reciprocal"


@irdl_op_definition
class ReluOp(UnaryOp):
    """`max(x, 0)`."""

    name = "tv.relu"
    ALLOWS_INTEGERS: ClassVar[bool] = True


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """`1 / (1 + e^-x)`."""

    name = "tv.sigmoid"


@irdl_op_definition
class TanhOp(UnaryOp):
    """Hyperbolic tangent."""

    name = "tv.tanh"


@irdl_op_definition
class GeluOp(UnaryOp):
    """GELU, tanh approximation: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.

    Not the erf form; docs/tensor_view.md says how the reference evaluates it.
    """

    name = "tv.gelu"


@irdl_op_definition
class SiluOp(UnaryOp):
    """SiLU (swish): `x * sigmoid(x)`."""

    name = "tv.silu"


@irdl_op_definition
class SinOp(UnaryOp):
    """Sine (radians). The chip has no instruction for it: `tv-expand-math`
    expands it into f32 tv ops (pypto_mlir/op_facts.py states their accuracy)."""

    name = "tv.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    """Cosine (radians); expanded by `tv-expand-math` as `tv.sin` is."""

    name = "tv.cos"


@irdl_op_definition
class ErfOp(UnaryOp):
    """The error function; expanded by `tv-expand-math` into Eigen's f32
    rational approximation."""

    name = "tv.erf"


def silu_input(op: Operation) -> SSAValue | None:
    """`x` when `op` is `x * sigmoid(x)` (either order, same type) and the sigmoid
    has no other use: the product is `silu(x)`, which lowerings may compute as
    one function (fewer vector steps) instead of a sigmoid and a product."""
    if not isinstance(op, MulOp) or op.lhs.type != op.rhs.type:
        return None
    for x, s in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        owner = s.owner
        if isinstance(owner, SigmoidOp) and owner.input == x and s.has_one_use():
            return x
    return None


# ---------------------------------------------------------------------------
# Elementwise binary ops
# ---------------------------------------------------------------------------


@irdl_custom_directive
class BinaryTypes(CustomDirective):
    """`T` when both operands and the result have type T, else `Tl, Tr -> Tresult`.

    The declarative format has no "one type stands for three" form.
    """

    lhs_type: TypeDirective
    rhs_type: TypeDirective
    result_type: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        lhs_type = rhs_type = result_type = parser.parse_type()
        if parser.parse_optional_punctuation(",") is not None:
            rhs_type = parser.parse_type()
            parser.parse_punctuation("->")
            result_type = parser.parse_type()
        self.lhs_type.set(state, (lhs_type,))
        self.rhs_type.set(state, (rhs_type,))
        self.result_type.set(state, (result_type,))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        (lhs_type,) = self.lhs_type.get(op)
        (rhs_type,) = self.rhs_type.get(op)
        (result_type,) = self.result_type.get(op)
        state.print_whitespace(printer)
        if lhs_type == rhs_type == result_type:
            printer.print_attribute(result_type)
            return
        printer.print_list((lhs_type, rhs_type), printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(result_type)


class BinaryOp(IRDLOperation, abc.ABC):
    """An elementwise op on two operands with broadcasting.

    Either operand (not both) may be a scalar SSA value. Tensors must share
    their element type. Syntax: `tv.add %a, %b : T` when both operands and the
    result have type T, else `tv.add %a, %b : Ta, Tb -> Tresult`.
    """

    lhs = operand_def(base(TensorViewType) | AnyFloatConstr | base(IntegerType))
    rhs = operand_def(base(TensorViewType) | AnyFloatConstr | base(IntegerType))
    result = result_def(TensorViewType)

    traits = traits_def(Pure())
    custom_directives = (BinaryTypes,)
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` "
        "custom<BinaryTypes>(type($lhs), type($rhs), type($result))"
    )

    ALLOWS_INTEGERS: ClassVar[bool] = True

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        result_type: Attribute | None = None,
    ) -> None:
        """Build the op; the result type is inferred by broadcasting unless given."""
        lhs = SSAValue.get(lhs)
        rhs = SSAValue.get(rhs)
        if result_type is None:
            result_type = self.infer_result_type(lhs.type, rhs.type)
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    @staticmethod
    def infer_result_type(lhs: Attribute, rhs: Attribute) -> TensorViewType:
        """The broadcast result type; ValueError if there is none."""
        tensors = [t for t in (lhs, rhs) if isinstance(t, TensorViewType)]
        if not tensors:
            raise ValueError("a tv binary op needs at least one tensor operand")
        if len(tensors) == 1:
            return tensors[0].with_shape(tensors[0].get_shape())
        shape = broadcast_shapes(tensors[0].get_shape(), tensors[1].get_shape())
        return tensors[0].with_shape(shape)

    def verify_(self) -> None:
        tensors: list[TensorViewType] = []
        scalars: list[Attribute] = []
        for what, value in (("lhs", self.lhs), ("rhs", self.rhs)):
            if isinstance(value.type, TensorViewType):
                tensors.append(_dense_tensor(value, f"the {what} of {self.name}"))
            else:
                scalars.append(value.type)
        if not tensors:
            raise VerifyException(
                f"{self.name} needs at least one tensor operand; use arith for scalars"
            )
        element_type = tensors[0].element_type
        if len(tensors) == 2 and tensors[1].element_type != element_type:
            raise VerifyException(
                f"operand element types differ: {element_type} and "
                f"{tensors[1].element_type}; insert a tv.cast"
            )
        for scalar_type in scalars:
            _check_scalar_type(scalar_type, element_type)
        if not self.ALLOWS_INTEGERS and not is_float_element_type(element_type):
            raise VerifyException(
                f"{self.name} expects float operands "
                f"({names(FLOAT_ELEMENT_TYPES)}), got {element_type}"
            )
        try:
            expected = self.infer_result_type(self.lhs.type, self.rhs.type)
        except ValueError as e:
            raise VerifyException(str(e)) from e
        _check_result_type(self, expected)


class AddOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldAddZero(),)


class SubOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldSubZero(),)


class MulOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldMulOne(),)


class DivOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldDivOne(),)


@irdl_op_definition
class AddOp(BinaryOp):
    """`lhs + rhs`."""

    name = "tv.add"
    traits = lazy_traits_def(lambda: (Pure(), AddOpHasCanonicalizationPatterns()))


@irdl_op_definition
class SubOp(BinaryOp):
    """`lhs - rhs`."""

    name = "tv.sub"
    traits = lazy_traits_def(lambda: (Pure(), SubOpHasCanonicalizationPatterns()))


@irdl_op_definition
class MulOp(BinaryOp):
    """`lhs * rhs`."""

    name = "tv.mul"
    traits = lazy_traits_def(lambda: (Pure(), MulOpHasCanonicalizationPatterns()))


@irdl_op_definition
class DivOp(BinaryOp):
    """`lhs / rhs` (float only: integer division has no single natural rounding)."""

    name = "tv.div"
    ALLOWS_INTEGERS: ClassVar[bool] = False
    traits = lazy_traits_def(lambda: (Pure(), DivOpHasCanonicalizationPatterns()))


@irdl_op_definition
class MaxOp(BinaryOp):
    """Elementwise maximum; NaN if either is NaN."""

    name = "tv.max"


@irdl_op_definition
class MinOp(BinaryOp):
    """Elementwise minimum; NaN if either is NaN."""

    name = "tv.min"


# ---------------------------------------------------------------------------
# Compare and select
# ---------------------------------------------------------------------------


@irdl_attr_definition
class CmpModeAttr(EnumAttribute[CmpMode], SpacedOpaqueSyntaxAttribute):
    name = "tv.cmp"


@irdl_op_definition
class SelectOp(IRDLOperation):
    """`where(lhs <cmp> rhs, on_true, on_false)` elementwise, numpy broadcasting
    over all four tensors; `<cmp>` is lt, le, gt, ge, eq or ne, false for a NaN
    operand except ne.

    The compare is fused into the select: no level has boolean tensors (the
    chip's compare result is a bit buffer only `vselect` reads). lhs and rhs
    share one element type, on_true, on_false and the result another, each
    f16, bf16, f32 or i32, both 16-bit or both 32-bit wide (bf16 computes in
    f32). Syntax:

        %r = tv.select gt %x, %zero, %x, %y : T, T, T, T -> T
    """

    name = "tv.select"

    cmp = prop_def(CmpModeAttr)
    lhs = operand_def(TensorViewType)
    rhs = operand_def(TensorViewType)
    on_true = operand_def(TensorViewType)
    on_false = operand_def(TensorViewType)
    result = result_def(TensorViewType)

    traits = traits_def(Pure())
    assembly_format = (
        "$cmp $lhs `,` $rhs `,` $on_true `,` $on_false attr-dict `:` type($lhs) `,` "
        "type($rhs) `,` type($on_true) `,` type($on_false) `->` type($result)"
    )

    def __init__(
        self,
        cmp: CmpMode | str,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        on_true: SSAValue | Operation,
        on_false: SSAValue | Operation,
    ) -> None:
        """Build the op; the result type is inferred by broadcasting."""
        operands = [SSAValue.get(v) for v in (lhs, rhs, on_true, on_false)]
        result_type = self.infer_result_type(*(v.type for v in operands))
        super().__init__(
            operands=operands,
            result_types=[result_type],
            properties={"cmp": CmpModeAttr(CmpMode(cmp))},
        )

    @staticmethod
    def infer_result_type(*types: Attribute) -> TensorViewType:
        """on_true's element type over the broadcast of the four shapes;
        ValueError if the shapes do not broadcast."""
        tensors = [t for t in types if isinstance(t, TensorViewType)]
        assert len(tensors) == 4
        shape: tuple[int, ...] = tuple(tensors[0].get_shape())
        for tensor in tensors[1:]:
            shape = broadcast_shapes(shape, tensor.get_shape())
        return tensors[2].with_shape(shape)

    def verify_(self) -> None:
        operands = ("lhs", "rhs", "on_true", "on_false")
        tensors = [
            _dense_tensor(v, f"the {what} of tv.select")
            for what, v in zip(operands, self.operands, strict=True)
        ]
        for (a, b), (ta, tb) in (
            (operands[:2], tensors[:2]),
            (operands[2:], tensors[2:]),
        ):
            if ta.element_type != tb.element_type:
                raise VerifyException(
                    f"the {a} and {b} of tv.select have element types "
                    f"{ta.element_type} and {tb.element_type}; insert a tv.cast"
                )
        verify_select_types(tensors[0].element_type, tensors[2].element_type)
        try:
            expected = self.infer_result_type(*(t for t in tensors))
        except ValueError as e:
            raise VerifyException(str(e)) from e
        _check_result_type(self, expected)


# ---------------------------------------------------------------------------
# Cast
# ---------------------------------------------------------------------------


def represents_exactly(wide: Attribute, narrow: Attribute) -> bool:
    """Whether every value of element type `narrow` is a value of `wide`."""
    if wide == narrow:
        return True
    exact: dict[Attribute, tuple[Attribute, ...]] = {
        f32: (f16, bf16, i8, i16),
        f16: (i8,),
        bf16: (i8,),
        i32: (i8, i16),
        i16: (i8,),
    }
    return narrow in exact.get(wide, ())


class CastOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldIdentityCast(), FoldExactRoundTripCast())


@irdl_op_definition
class CastOp(IRDLOperation):
    """Convert the element type: `tv.cast %x : !tv.tensor<8xf32> to !tv.tensor<8xf16>`.

    Float to float and integer to float round to nearest even; float to
    integer truncates toward zero and saturates (NaN becomes 0); integer to
    integer wraps.
    """

    name = "tv.cast"

    input = operand_def(TensorViewType)
    result = result_def(TensorViewType)

    traits = lazy_traits_def(lambda: (Pure(), CastOpHasCanonicalizationPatterns()))

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, input: SSAValue | Operation, element_type: Attribute) -> None:
        input = SSAValue.get(input)
        assert isinstance(input.type, TensorViewType)
        super().__init__(
            operands=[input], result_types=[input.type.with_element_type(element_type)]
        )

    def verify_(self) -> None:
        input_type = _dense_tensor(self.input, "the operand of tv.cast")
        result_type = _dense_tensor(self.result, "the result of tv.cast")
        if input_type.get_shape() != result_type.get_shape():
            raise VerifyException(
                f"tv.cast changes only the element type, but the shape changes "
                f"from {_dims_str(input_type.get_shape())} to "
                f"{_dims_str(result_type.get_shape())}"
            )


# ---------------------------------------------------------------------------
# Matmul
# ---------------------------------------------------------------------------

_MATMUL_ACCUMULATORS: dict[Attribute, tuple[Attribute, tuple[Attribute, ...]]] = {
    f16: (f32, FLOAT_ELEMENT_TYPES),
    bf16: (f32, FLOAT_ELEMENT_TYPES),
    f32: (f32, FLOAT_ELEMENT_TYPES),
    i8: (i32, (i32,)),
}
"""Input element type -> (accumulation type, allowed result element types)."""


class MatmulOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldTransposeIntoMatmul(),)


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """Matrix product, optionally of transposed operands, batched over leading dims.

    `tv.matmul %a, %b transpose_b acc(f32) : !tv.tensor<64x256xf16>,
    !tv.tensor<128x256xf16> -> !tv.tensor<64x128xf16>`. Operands have equal rank
    >= 2 and equal leading (batch) dimensions; `transpose_a`/`transpose_b` swap
    the last two dimensions of an operand. Products are summed in `acc_type`
    (f32 for float inputs, i32 for i8) and the sum is rounded once to the
    result element type.
    """

    name = "tv.matmul"

    lhs = operand_def(TensorViewType)
    rhs = operand_def(TensorViewType)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    acc_type = prop_def(AnyFloatConstr | base(IntegerType))
    result = result_def(TensorViewType)

    traits = lazy_traits_def(lambda: (Pure(), MatmulOpHasCanonicalizationPatterns()))

    assembly_format = (
        "$lhs `,` $rhs (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)? "
        "`acc` `(` $acc_type `)` attr-dict `:` type($lhs) `,` type($rhs) `->` "
        "type($result)"
    )

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        *,
        transpose_a: bool = False,
        transpose_b: bool = False,
        acc_type: Attribute | None = None,
        result_element_type: Attribute | None = None,
    ) -> None:
        """Build a matmul; `acc_type` defaults to f32 (i32 for i8 inputs) and the
        result element type to the input's (i32 for i8 inputs)."""
        lhs = SSAValue.get(lhs)
        rhs = SSAValue.get(rhs)
        assert isinstance(lhs.type, TensorViewType)
        assert isinstance(rhs.type, TensorViewType)
        element_type = lhs.type.element_type
        default_acc = _MATMUL_ACCUMULATORS.get(element_type, (f32, ()))[0]
        if acc_type is None:
            acc_type = default_acc
        if result_element_type is None:
            result_element_type = (
                element_type if is_float_element_type(element_type) else default_acc
            )
        shape = self.infer_result_shape(
            lhs.type.get_shape(), rhs.type.get_shape(), transpose_a, transpose_b
        )
        properties: dict[str, Attribute] = {"acc_type": acc_type}
        if transpose_a:
            properties["transpose_a"] = UnitAttr()
        if transpose_b:
            properties["transpose_b"] = UnitAttr()
        super().__init__(
            operands=[lhs, rhs],
            result_types=[TensorViewType(result_element_type, shape)],
            properties=properties,
        )

    @staticmethod
    def infer_result_shape(
        lhs: Sequence[int],
        rhs: Sequence[int],
        transpose_a: bool = False,
        transpose_b: bool = False,
    ) -> tuple[int, ...]:
        """`batch + (M, N)`; ValueError if the shapes do not multiply."""
        if len(lhs) < 2 or len(rhs) < 2:
            raise ValueError(
                f"matmul operands must have rank >= 2, got {_dims_str(lhs)} and "
                f"{_dims_str(rhs)}"
            )
        if len(lhs) != len(rhs):
            raise ValueError(
                f"matmul operands must have equal rank, got {_dims_str(lhs)} and "
                f"{_dims_str(rhs)}"
            )
        m, k_lhs = (lhs[-1], lhs[-2]) if transpose_a else (lhs[-2], lhs[-1])
        k_rhs, n = (rhs[-1], rhs[-2]) if transpose_b else (rhs[-2], rhs[-1])
        if not dims_compatible(k_lhs, k_rhs):
            raise ValueError(
                f"contraction dimensions differ: {k_lhs} (lhs "
                f"{_dims_str(lhs)}{', transposed' if transpose_a else ''}) and "
                f"{k_rhs} (rhs {_dims_str(rhs)}{', transposed' if transpose_b else ''})"
            )
        batch: list[int] = []
        for index, (a, b) in enumerate(zip(lhs[:-2], rhs[:-2], strict=True)):
            if not dims_compatible(a, b):
                raise ValueError(
                    f"batch dimension {index} differs: {a} (lhs) and {b} (rhs)"
                )
            batch.append(_more_static(a, b))
        return (*batch, m, n)

    def verify_(self) -> None:
        lhs_type = _dense_tensor(self.lhs, "the lhs of tv.matmul")
        rhs_type = _dense_tensor(self.rhs, "the rhs of tv.matmul")
        result_type = _dense_tensor(self.result, "the result of tv.matmul")
        element_type = lhs_type.element_type
        if rhs_type.element_type != element_type:
            raise VerifyException(
                f"operand element types differ: {element_type} and "
                f"{rhs_type.element_type}; insert a tv.cast"
            )
        if element_type not in _MATMUL_ACCUMULATORS:
            raise VerifyException(
                f"tv.matmul supports {names(list(_MATMUL_ACCUMULATORS))} "
                f"inputs, got {element_type}"
            )
        acc_type, result_types = _MATMUL_ACCUMULATORS[element_type]
        if self.acc_type != acc_type:
            raise VerifyException(
                f"{element_type} inputs accumulate in {acc_type}, got acc({self.acc_type})"
            )
        if result_type.element_type not in result_types:
            raise VerifyException(
                f"the result of a {element_type} matmul must have element type "
                f"{names(result_types)}, got {result_type.element_type}"
            )
        try:
            shape = self.infer_result_shape(
                lhs_type.get_shape(),
                rhs_type.get_shape(),
                self.transpose_a is not None,
                self.transpose_b is not None,
            )
        except ValueError as e:
            raise VerifyException(str(e)) from e
        _check_result_type(self, TensorViewType(result_type.element_type, shape))


# ---------------------------------------------------------------------------
# Reductions, softmax, transpose
# ---------------------------------------------------------------------------


def reduced_shape(
    shape: Sequence[int], axes: Sequence[int], keepdims: bool
) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


class ReduceOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldUnitReduce(),)


class ReduceOp(IRDLOperation, abc.ABC):
    """Reduce over a set of axes: `tv.reduce_sum %x [1] keepdims : T -> T'`.

    Axes are strictly increasing; the reduced dimensions are removed, or kept
    as size 1 with `keepdims`. The result has the input's element type.
    """

    input = operand_def(TensorViewType)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorViewType)

    traits = lazy_traits_def(lambda: (Pure(), ReduceOpHasCanonicalizationPatterns()))

    assembly_format = (
        "$input $axes (`keepdims` $keepdims^)? attr-dict `:` type($input) `->` "
        "type($result)"
    )

    NEEDS_NONEMPTY: ClassVar[bool] = False
    """Whether an empty reduced dimension is an error (max and min have no identity)."""

    def __init__(
        self,
        input: SSAValue | Operation,
        axes: Sequence[int],
        keepdims: bool = False,
    ) -> None:
        """Build the reduction; negative axes count from the end, any order."""
        input = SSAValue.get(input)
        assert isinstance(input.type, TensorViewType)
        rank = input.type.get_num_dims()
        normalized = sorted({_normalize_axis(a, rank) for a in axes})
        properties: dict[str, Attribute] = {
            "axes": DenseArrayBase.from_list(i64, normalized)
        }
        if keepdims:
            properties["keepdims"] = UnitAttr()
        super().__init__(
            operands=[input],
            result_types=[
                input.type.with_shape(
                    reduced_shape(input.type.get_shape(), normalized, keepdims)
                )
            ],
            properties=properties,
        )

    def verify_(self) -> None:
        input_type = _dense_tensor(self.input, f"the operand of {self.name}")
        _dense_tensor(self.result, f"the result of {self.name}")
        axes = self.axes.get_values()
        rank = input_type.get_num_dims()
        if not axes:
            raise VerifyException(f"{self.name} needs at least one axis")
        for axis in axes:
            if not 0 <= axis < rank:
                raise VerifyException(f"axis {axis} is out of range for rank {rank}")
        if any(a >= b for a, b in pairwise(axes)):
            raise VerifyException(f"axes must be strictly increasing, got {list(axes)}")
        if self.NEEDS_NONEMPTY:
            for axis in axes:
                if input_type.get_shape()[axis] == 0:
                    raise VerifyException(
                        f"{self.name} of an empty dimension {axis} has no value"
                    )
        expected = input_type.with_shape(
            reduced_shape(input_type.get_shape(), axes, self.keepdims is not None)
        )
        _check_result_type(self, expected)


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum; floats accumulate in f32 and round once, integers wrap."""

    name = "tv.reduce_sum"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum; NaN if any element is NaN."""

    name = "tv.reduce_max"
    NEEDS_NONEMPTY: ClassVar[bool] = True


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum; NaN if any element is NaN."""

    name = "tv.reduce_min"
    NEEDS_NONEMPTY: ClassVar[bool] = True


@irdl_op_definition
class SoftmaxOp(IRDLOperation):
    """`exp(x - max) / sum(exp(x - max))` along one axis, in f32, rounded once.

    `tv.softmax %x axis = 1 : !tv.tensor<128x768xf16>`.
    """

    name = "tv.softmax"

    T: ClassVar = VarConstraint("T", base(TensorViewType))

    input = operand_def(T)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input `axis` `=` $axis attr-dict `:` type($result)"

    def __init__(self, input: SSAValue | Operation, axis: int = -1) -> None:
        """Build a softmax; a negative axis counts from the end."""
        input = SSAValue.get(input)
        assert isinstance(input.type, TensorViewType)
        super().__init__(
            operands=[input],
            result_types=[input.type],
            properties={
                "axis": IntegerAttr(
                    _normalize_axis(axis, input.type.get_num_dims()), i64
                )
            },
        )

    def verify_(self) -> None:
        input_type = _dense_tensor(self.input, "the operand of tv.softmax")
        if not is_float_element_type(input_type.element_type):
            raise VerifyException(
                f"tv.softmax expects a float tensor, got {input_type}"
            )
        rank = input_type.get_num_dims()
        axis = self.axis.value.data
        if not 0 <= axis < rank:
            raise VerifyException(f"axis {axis} is out of range for rank {rank}")


class TransposeOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldIdentityTranspose(), ComposeTransposes())


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """Permute dimensions: result dimension i is input dimension permutation[i].

    `tv.transpose %x [1, 0] : !tv.tensor<64x128xf16> -> !tv.tensor<128x64xf16>`.
    """

    name = "tv.transpose"

    input = operand_def(TensorViewType)
    permutation = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorViewType)

    traits = lazy_traits_def(lambda: (Pure(), TransposeOpHasCanonicalizationPatterns()))

    assembly_format = (
        "$input $permutation attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue | Operation, permutation: Sequence[int] | None = None
    ) -> None:
        """Build a transpose; the default permutation reverses the dimensions."""
        input = SSAValue.get(input)
        assert isinstance(input.type, TensorViewType)
        shape = input.type.get_shape()
        if permutation is None:
            permutation = tuple(reversed(range(len(shape))))
        super().__init__(
            operands=[input],
            result_types=[input.type.with_shape([shape[p] for p in permutation])],
            properties={"permutation": DenseArrayBase.from_list(i64, permutation)},
        )

    def verify_(self) -> None:
        input_type = _dense_tensor(self.input, "the operand of tv.transpose")
        _dense_tensor(self.result, "the result of tv.transpose")
        permutation = self.permutation.get_values()
        rank = input_type.get_num_dims()
        if sorted(permutation) != list(range(rank)):
            raise VerifyException(
                f"{list(permutation)} is not a permutation of the {rank} "
                "dimensions of the operand"
            )
        shape = input_type.get_shape()
        _check_result_type(self, input_type.with_shape([shape[p] for p in permutation]))


def view_is_contiguous(op: ViewOp) -> bool:
    """Whether a static `tv.view` is one contiguous run of its (row-major)
    source: unit dims, then one partial dim with stride 1, then whole dims."""
    source = op.source.type
    assert isinstance(source, TensorViewType)
    sizes, strides = op.mixed_sizes(), op.mixed_strides()
    if not all(isinstance(v, int) for v in (*sizes, *strides)):
        return False
    extents = source.get_shape()
    partial = [d for d, (s, e) in enumerate(zip(sizes, extents, strict=True)) if s != e]
    last = partial[-1] if partial else -1
    return all(strides[d] == 1 or sizes[d] == 1 for d in range(len(sizes))) and all(
        sizes[d] == 1 for d in range(last)
    )


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """The same elements in row-major order with another static shape:
    `tv.reshape %x : !tv.tensor<4x8xf16> to !tv.tensor<32xf16>` (numpy's
    `reshape` of a C-contiguous array). The operand must be contiguous in GM
    (not a strided `tv.view`), so that lowerings reshape without a copy."""

    name = "tv.reshape"

    input = operand_def(TensorViewType)
    result = result_def(TensorViewType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, input: SSAValue | Operation, shape: Sequence[int]) -> None:
        input = SSAValue.get(input)
        assert isinstance(input.type, TensorViewType)
        super().__init__(
            operands=[input], result_types=[input.type.with_shape(list(shape))]
        )

    def verify_(self) -> None:
        input_type = _dense_tensor(self.input, "the operand of tv.reshape")
        result_type = _dense_tensor(self.result, "the result of tv.reshape")
        if input_type.element_type != result_type.element_type:
            raise VerifyException(
                "tv.reshape keeps the element type, but it changes from "
                f"{input_type.element_type} to {result_type.element_type}"
            )
        shapes = (input_type.get_shape(), result_type.get_shape())
        if any(DYNAMIC_INDEX in shape for shape in shapes):
            raise VerifyException(
                f"tv.reshape needs static shapes, got {_dims_str(shapes[0])} to "
                f"{_dims_str(shapes[1])}"
            )
        counts = [math.prod(shape) for shape in shapes]
        if counts[0] != counts[1]:
            raise VerifyException(
                f"tv.reshape keeps the number of elements, but "
                f"{_dims_str(shapes[0])} has {counts[0]} and "
                f"{_dims_str(shapes[1])} has {counts[1]}"
            )
        owner = self.input.owner
        if isinstance(owner, ViewOp) and not view_is_contiguous(owner):
            raise VerifyException(
                "tv.reshape needs a contiguous operand, but it is a strided "
                "tv.view (a window that is not one run of its source)"
            )


# ---------------------------------------------------------------------------
# Canonicalization patterns
# ---------------------------------------------------------------------------


class FoldIdentityView(RewritePattern):
    """A view of the whole tensor with unit strides is the tensor."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ViewOp, rewriter: PatternRewriter, /):
        source_type = op.source.type
        assert isinstance(source_type, TensorViewType)
        if (
            op.result.type == source_type
            and source_type.has_static_shape()
            and not op.offsets
            and not op.sizes
            and not op.strides
            and all(o == 0 for o in op.static_offsets.get_values())
            and all(s == 1 for s in op.static_strides.get_values())
            and op.static_sizes.get_values() == source_type.get_shape()
        ):
            rewriter.replace(op, (), (op.source,))


class FoldViewOfView(RewritePattern):
    """`view(view(x, o1, _, s1), o2, n, s2)` is `view(x, o1 + o2 * s1, n, s1 * s2)`.

    Applies when both views are static and the inner one keeps every dimension.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ViewOp, rewriter: PatternRewriter, /):
        inner = op.source.owner
        if not isinstance(inner, ViewOp):
            return
        if any(len(v) for v in (op.offsets, op.sizes, op.strides)) or any(
            len(v) for v in (inner.offsets, inner.sizes, inner.strides)
        ):
            return
        if any(inner.dropped_dims()):
            return
        inner_offsets = inner.static_offsets.get_values()
        inner_strides = inner.static_strides.get_values()
        offsets = [
            o1 + o2 * s1
            for o1, o2, s1 in zip(
                inner_offsets,
                op.static_offsets.get_values(),
                inner_strides,
                strict=True,
            )
        ]
        strides = [
            s1 * s2
            for s1, s2 in zip(
                inner_strides, op.static_strides.get_values(), strict=True
            )
        ]
        assert isinstance(op.result.type, TensorViewType)
        rewriter.replace(
            op,
            ViewOp(
                inner.source,
                offsets,
                op.static_sizes.get_values(),
                strides,
                op.result.type,
            ),
        )


class FoldStaticDim(RewritePattern):
    """The size of a static dimension is a constant."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DimOp, rewriter: PatternRewriter, /):
        assert isinstance(op.source.type, TensorViewType)
        size = op.source.type.get_shape()[op.index.value.data]
        if size != DYNAMIC_INDEX:
            rewriter.replace(op, arith.ConstantOp.from_int_and_width(size, IndexType()))


def _fold_to_operand(op: BinaryOp, rewriter: PatternRewriter, kept: SSAValue) -> bool:
    """Replace `op` by `kept` when it has the op's type; True if it did."""
    if kept.type != op.result.type:
        return False
    rewriter.replace(op, (), (kept,))
    return True


def _is_unit(value: SSAValue) -> bool:
    constant = scalar_constant_value(value)
    return constant is not None and constant == 1


class FoldMulOne(RewritePattern):
    """`x * 1` and `1 * x` are `x` when the one does not broadcast `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MulOp, rewriter: PatternRewriter, /):
        if _is_unit(op.rhs) and _fold_to_operand(op, rewriter, op.lhs):
            return
        if _is_unit(op.lhs):
            _fold_to_operand(op, rewriter, op.rhs)


class FoldDivOne(RewritePattern):
    """`x / 1` is `x` when the one does not broadcast `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DivOp, rewriter: PatternRewriter, /):
        if _is_unit(op.rhs):
            _fold_to_operand(op, rewriter, op.lhs)


def _is_additive_identity(value: SSAValue, element_type: Attribute) -> bool:
    """Whether `x + value == x` for every x: integer 0 or float -0.0.

    (+0.0 is not: -0.0 + +0.0 is +0.0.)"""
    constant = scalar_constant_value(value)
    if constant is None or constant != 0:
        return False
    if not is_float_element_type(element_type):
        return True
    return math.copysign(1.0, constant) < 0


class FoldAddZero(RewritePattern):
    """`x + 0` is `x` (for floats only `x + -0.0`, which is exact for every x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter, /):
        assert isinstance(op.result.type, TensorViewType)
        element_type = op.result.type.element_type
        if _is_additive_identity(op.rhs, element_type) and _fold_to_operand(
            op, rewriter, op.lhs
        ):
            return
        if _is_additive_identity(op.lhs, element_type):
            _fold_to_operand(op, rewriter, op.rhs)


class FoldSubZero(RewritePattern):
    """`x - 0` is `x` (also `x - +0.0`, exact for every float x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SubOp, rewriter: PatternRewriter, /):
        constant = scalar_constant_value(op.rhs)
        if constant is not None and constant == 0:
            _fold_to_operand(op, rewriter, op.lhs)


class FoldIdentityCast(RewritePattern):
    """A cast to the operand's own type is the operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /):
        if op.input.type == op.result.type:
            rewriter.replace(op, (), (op.input,))


class FoldExactRoundTripCast(RewritePattern):
    """`cast(cast(x : T -> W) -> T)` is `x` when W holds every value of T exactly."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /):
        inner = op.input.owner
        if not isinstance(inner, CastOp) or inner.input.type != op.result.type:
            return
        assert isinstance(inner.input.type, TensorViewType)
        assert isinstance(inner.result.type, TensorViewType)
        if represents_exactly(
            inner.result.type.element_type, inner.input.type.element_type
        ):
            rewriter.replace(op, (), (inner.input,))


class FoldIdentityTranspose(RewritePattern):
    """A transpose by the identity permutation is its operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /):
        permutation = op.permutation.get_values()
        if list(permutation) == list(range(len(permutation))):
            rewriter.replace(op, (), (op.input,))


class ComposeTransposes(RewritePattern):
    """`transpose(transpose(x, p1), p2)` is `transpose(x, p1[p2])`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /):
        inner = op.input.owner
        if not isinstance(inner, TransposeOp):
            return
        first = inner.permutation.get_values()
        second = op.permutation.get_values()
        rewriter.replace(op, TransposeOp(inner.input, [first[p] for p in second]))


def _swaps_last_two(permutation: Sequence[int]) -> bool:
    rank = len(permutation)
    return rank >= 2 and list(permutation) == [*range(rank - 2), rank - 1, rank - 2]


class FoldTransposeIntoMatmul(RewritePattern):
    """A matmul operand transposed in its last two dims flips the transpose flag."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatmulOp, rewriter: PatternRewriter, /):
        lhs, rhs = op.lhs, op.rhs
        transpose_a = op.transpose_a is not None
        transpose_b = op.transpose_b is not None
        changed = False
        if isinstance(t := lhs.owner, TransposeOp) and _swaps_last_two(
            t.permutation.get_values()
        ):
            lhs, transpose_a, changed = t.input, not transpose_a, True
        if isinstance(t := rhs.owner, TransposeOp) and _swaps_last_two(
            t.permutation.get_values()
        ):
            rhs, transpose_b, changed = t.input, not transpose_b, True
        if not changed:
            return
        assert isinstance(op.result.type, TensorViewType)
        rewriter.replace(
            op,
            MatmulOp(
                lhs,
                rhs,
                transpose_a=transpose_a,
                transpose_b=transpose_b,
                acc_type=op.acc_type,
                result_element_type=op.result.type.element_type,
            ),
        )


class FoldUnitReduce(RewritePattern):
    """A keepdims reduction over static unit dimensions is its operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReduceOp, rewriter: PatternRewriter, /):
        assert isinstance(op.input.type, TensorViewType)
        shape = op.input.type.get_shape()
        if op.input.type == op.result.type and all(
            shape[a] == 1 for a in op.axes.get_values()
        ):
            rewriter.replace(op, (), (op.input,))


# ---------------------------------------------------------------------------
# Sparse tensors (CSR and block-CSR): the boundary ops and the sparse kernels
# ---------------------------------------------------------------------------
#
# A sparse tensor carries its row offsets, column indices and values as three
# dense tensors (MLIR's sparse_tensor positions, coordinates and values);
# `tv.assemble` / `tv.disassemble` cross between the two views, and below tv
# only the three buffers exist (docs/sparse.md). Every sparse result here has
# the stored pattern of a sparse operand, so a lowering never allocates index
# buffers of a size known only at run time.

SPARSE_VALUE_TYPES: tuple[Attribute, ...] = FLOAT_ELEMENT_TYPES
"""The element types of the sparse kernels' values (they compute in f32)."""


def _sparse_tensor(
    value: SSAValue, what: str
) -> tuple[TensorViewType, CsrEncodingAttr]:
    value_type = value.type
    if not isinstance(value_type, TensorViewType):
        raise VerifyException(f"{what} must be a !tv.tensor, got {value_type}")
    encoding = value_type.sparse_encoding
    if encoding is None:
        raise VerifyException(
            f"{what} must be a sparse (#tv.csr) tensor, got the dense {value_type}"
        )
    return value_type, encoding


def _check_sparse_float(value_type: TensorViewType, what: str) -> None:
    if value_type.element_type not in SPARSE_VALUE_TYPES:
        raise VerifyException(
            f"{what} must have a float element type "
            f"({names(SPARSE_VALUE_TYPES)}), got {value_type.element_type}"
        )


def sparse_buffer_types(
    sparse_type: TensorViewType,
) -> tuple[TensorViewType, TensorViewType, TensorViewType]:
    """The dense tensors a sparse tensor is made of: row offsets
    (`block rows + 1`), column indices (`nnz`) and values (`nnz`, or
    `nnz x bm x bn` for block-CSR)."""
    encoding = sparse_type.sparse_encoding
    assert encoding is not None
    block_rows, _ = encoding.block_grid()
    offsets = DYNAMIC_INDEX if block_rows == DYNAMIC_INDEX else block_rows + 1
    nnz = encoding.nnz.data
    values_shape = (nnz, *encoding.block_shape) if encoding.is_block else (nnz,)
    return (
        TensorViewType(encoding.index_type, [offsets]),
        TensorViewType(encoding.index_type, [nnz]),
        TensorViewType(sparse_type.element_type, values_shape),
    )


def _check_buffers(
    sparse_type: TensorViewType,
    encoding: CsrEncodingAttr,
    buffers: Sequence[SSAValue],
    op_name: str,
) -> None:
    """The offsets, indices and values of `sparse_type` match its encoding."""
    if encoding.index_type not in INTEGER_ELEMENT_TYPES:
        raise VerifyException(
            f"{op_name}: a #tv.csr tensor with index = {encoding.index_type} has "
            f"no index tensors (tensors hold {names(INTEGER_ELEMENT_TYPES)})"
        )
    if DYNAMIC_INDEX in sparse_type.get_shape():
        raise VerifyException(
            f"{op_name} needs a static shape (the column count is not in the "
            f"buffers), got {_dims_str(sparse_type.get_shape())}"
        )
    expected = sparse_buffer_types(sparse_type)
    for what, value, want in zip(
        ("row offsets", "column indices", "values"), buffers, expected, strict=True
    ):
        actual = _dense_tensor(value, f"the {what} of {op_name}")
        if actual.element_type != want.element_type:
            raise VerifyException(
                f"the {what} of {op_name} must have element type "
                f"{want.element_type}, got {actual.element_type}"
            )
        if actual.get_num_dims() != want.get_num_dims() or not all(
            dims_compatible(a, b)
            for a, b in zip(actual.get_shape(), want.get_shape(), strict=True)
        ):
            raise VerifyException(
                f"the {what} of {op_name} must have shape "
                f"{_dims_str(want.get_shape())} for {sparse_type}, got "
                f"{_dims_str(actual.get_shape())}"
            )
    indices_len = buffers[1].type.get_shape()[0]  # pyright: ignore
    values_len = buffers[2].type.get_shape()[0]  # pyright: ignore
    if not dims_compatible(indices_len, values_len):
        raise VerifyException(
            f"{op_name}: the column indices ({indices_len}) and values "
            f"({values_len}) must have the same length"
        )


@irdl_op_definition
class AssembleOp(IRDLOperation):
    """A sparse tensor from its row offsets, column indices and values.

    `tv.assemble %offsets, %indices, %values : !tv.tensor<9xi32>,
    !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows =
    8, cols = 16, nnz = ?, index = i32>>` (MLIR's `sparse_tensor.assemble`). The
    buffers are checked when it runs: offsets start at 0, never decrease and end
    at nnz; column indices are in `[0, cols)` (block columns for block-CSR),
    strictly increasing within a row (sorted, no duplicates). A violation is an
    error at this op, never a wrong result (docs/sparse.md).
    """

    name = "tv.assemble"

    offsets = operand_def(TensorViewType)
    indices = operand_def(TensorViewType)
    values = operand_def(TensorViewType)
    result = result_def(TensorViewType)

    traits = traits_def(Pure())

    assembly_format = (
        "$offsets `,` $indices `,` $values attr-dict `:` type($offsets) `,` "
        "type($indices) `,` type($values) `->` type($result)"
    )

    def __init__(
        self,
        offsets: SSAValue | Operation,
        indices: SSAValue | Operation,
        values: SSAValue | Operation,
        result_type: TensorViewType,
    ) -> None:
        super().__init__(
            operands=[offsets, indices, values], result_types=[result_type]
        )

    def verify_(self) -> None:
        result_type, encoding = _sparse_tensor(self.result, "the result of tv.assemble")
        _check_buffers(
            result_type,
            encoding,
            (self.offsets, self.indices, self.values),
            "tv.assemble",
        )


@irdl_op_definition
class DisassembleOp(IRDLOperation):
    """The row offsets, column indices and values of a sparse tensor.

    `tv.disassemble %s : !tv.tensor<8x16xf16, #tv.csr<...>> -> !tv.tensor<9xi32>,
    !tv.tensor<?xi32>, !tv.tensor<?xf16>` (MLIR's `sparse_tensor.disassemble`):
    elementwise ops on the values keep the pattern, and `tv.assemble` makes the
    sparse tensor again (how the frontend scales a sparse tensor).
    """

    name = "tv.disassemble"

    input = operand_def(TensorViewType)
    offsets = result_def(TensorViewType)
    indices = result_def(TensorViewType)
    values = result_def(TensorViewType)

    traits = traits_def(Pure())

    assembly_format = (
        "$input attr-dict `:` type($input) `->` type($offsets) `,` type($indices) "
        "`,` type($values)"
    )

    def __init__(self, input: SSAValue | Operation) -> None:
        input = SSAValue.get(input)
        assert isinstance(input.type, TensorViewType)
        super().__init__(
            operands=[input], result_types=list(sparse_buffer_types(input.type))
        )

    def verify_(self) -> None:
        input_type, encoding = _sparse_tensor(
            self.input, "the operand of tv.disassemble"
        )
        _check_buffers(
            input_type,
            encoding,
            (self.offsets, self.indices, self.values),
            "tv.disassemble",
        )


def _check_same_dim(what: str, a: int, b: int) -> None:
    if not dims_compatible(a, b):
        raise VerifyException(f"{what} differ: {_dims_str([a])} and {_dims_str([b])}")


class SparseProductOp(IRDLOperation, abc.ABC):
    """Sparse `lhs` (M x K) times a dense `rhs` of rank `RHS_RANK`: a K x N
    matrix (M x N result) or a K vector (M result). Each output element sums,
    over the stored entries of its row of `lhs` (blocks of block-CSR), the
    products with `rhs`, in f32, rounded once to T; a row with no stored entry
    gives 0. Both operands have element type T."""

    lhs = operand_def(TensorViewType)
    rhs = operand_def(TensorViewType)
    result = result_def(TensorViewType)

    traits = traits_def(Pure())

    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    RHS_RANK: ClassVar[int]

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation) -> None:
        lhs, rhs = SSAValue.get(lhs), SSAValue.get(rhs)
        assert isinstance(lhs.type, TensorViewType)
        assert isinstance(rhs.type, TensorViewType)
        shape = (lhs.type.get_shape()[0], *rhs.type.get_shape()[1:])
        super().__init__(operands=[lhs, rhs], result_types=[rhs.type.with_shape(shape)])

    def verify_(self) -> None:
        lhs_type, _ = _sparse_tensor(self.lhs, f"the lhs of {self.name}")
        rhs_type = _dense_tensor(self.rhs, f"the rhs of {self.name}")
        _dense_tensor(self.result, f"the result of {self.name}")
        _check_sparse_float(lhs_type, f"the lhs of {self.name}")
        if rhs_type.element_type != lhs_type.element_type:
            raise VerifyException(
                f"operand element types differ: {lhs_type.element_type} and "
                f"{rhs_type.element_type}; insert a tv.cast"
            )
        if rhs_type.get_num_dims() != self.RHS_RANK:
            what = "a matrix (rank 2)" if self.RHS_RANK == 2 else "a vector (rank 1)"
            raise VerifyException(
                f"the rhs of {self.name} must be {what}, got {rhs_type}"
            )
        m, k = lhs_type.get_shape()
        rhs_shape = rhs_type.get_shape()
        _check_same_dim("contraction dimensions", k, rhs_shape[0])
        _check_result_type(self, rhs_type.with_shape((m, *rhs_shape[1:])))


@irdl_op_definition
class SpmmOp(SparseProductOp):
    """Sparse times dense matrix: `tv.spmm %a, %b : !tv.tensor<MxKxT, #tv.csr<...>>,
    !tv.tensor<KxNxT> -> !tv.tensor<MxNxT>`."""

    name = "tv.spmm"
    RHS_RANK: ClassVar[int] = 2


@irdl_op_definition
class SpmvOp(SparseProductOp):
    """Sparse matrix times dense vector: `tv.spmv %a, %x : !tv.tensor<MxKxT,
    #tv.csr<...>>, !tv.tensor<KxT> -> !tv.tensor<MxT>`."""

    name = "tv.spmv"
    RHS_RANK: ClassVar[int] = 1


@irdl_op_definition
class SddmmOp(IRDLOperation):
    """Sampled dense-dense matmul: `(lhs @ rhs)` at the stored entries of `mask`.

    `tv.sddmm %mask, %q, %k transpose_b : !tv.tensor<MxN, #tv.csr<...>>,
    !tv.tensor<MxKxT>, !tv.tensor<NxKxT> -> !tv.tensor<MxNxT, #tv.csr<...>>`:
    the result has the mask's pattern (its offsets and indices) and, at each
    stored entry (i, j), the dot product of row i of `lhs` and column j of `rhs`
    (row j with `transpose_b`), summed in f32 and rounded once. The mask's values
    are not read: it is a pattern (the scores of sparse attention).
    """

    name = "tv.sddmm"

    mask = operand_def(TensorViewType)
    lhs = operand_def(TensorViewType)
    rhs = operand_def(TensorViewType)
    transpose_b = opt_prop_def(UnitAttr)
    result = result_def(TensorViewType)

    traits = traits_def(Pure())

    assembly_format = (
        "$mask `,` $lhs `,` $rhs (`transpose_b` $transpose_b^)? attr-dict `:` "
        "type($mask) `,` type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(
        self,
        mask: SSAValue | Operation,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        transpose_b: bool = False,
    ) -> None:
        mask, lhs = SSAValue.get(mask), SSAValue.get(lhs)
        assert isinstance(mask.type, TensorViewType)
        assert isinstance(lhs.type, TensorViewType)
        super().__init__(
            operands=[mask, lhs, rhs],
            result_types=[mask.type.with_element_type(lhs.type.element_type)],
            properties={"transpose_b": UnitAttr()} if transpose_b else {},
        )

    def verify_(self) -> None:
        mask_type, _ = _sparse_tensor(self.mask, "the mask of tv.sddmm")
        lhs_type = _dense_tensor(self.lhs, "the lhs of tv.sddmm")
        rhs_type = _dense_tensor(self.rhs, "the rhs of tv.sddmm")
        _check_sparse_float(lhs_type, "the lhs of tv.sddmm")
        if rhs_type.element_type != lhs_type.element_type:
            raise VerifyException(
                f"operand element types differ: {lhs_type.element_type} and "
                f"{rhs_type.element_type}; insert a tv.cast"
            )
        if lhs_type.get_num_dims() != 2 or rhs_type.get_num_dims() != 2:
            raise VerifyException(
                f"tv.sddmm multiplies matrices, got {lhs_type} and {rhs_type}"
            )
        m, n = mask_type.get_shape()
        m_lhs, k = lhs_type.get_shape()
        k_rhs, n_rhs = rhs_type.get_shape()
        if self.transpose_b is not None:
            k_rhs, n_rhs = n_rhs, k_rhs
        _check_same_dim("contraction dimensions", k, k_rhs)
        _check_same_dim("the mask's rows and the lhs rows", m, m_lhs)
        _check_same_dim("the mask's columns and the rhs columns", n, n_rhs)
        _check_result_type(self, mask_type.with_element_type(lhs_type.element_type))


@irdl_op_definition
class SparseSoftmaxOp(IRDLOperation):
    """Row-wise softmax over the stored entries of a CSR/BSR tensor.

    `tv.sparse_softmax %s : !tv.tensor<MxNxf16, #tv.csr<...>>`: for each row,
    `exp(v - max) / sum(exp(v - max))` over the values stored in that row (all
    entries of its stored blocks for block-CSR), in f32, rounded once; entries
    that are not stored stay absent (not `exp(0)`), and a row with none has
    none. The pattern is kept.
    """

    name = "tv.sparse_softmax"

    T: ClassVar = VarConstraint("T", base(TensorViewType))

    input = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, input: SSAValue | Operation) -> None:
        input = SSAValue.get(input)
        super().__init__(operands=[input], result_types=[input.type])

    def verify_(self) -> None:
        input_type, _ = _sparse_tensor(self.input, "the operand of tv.sparse_softmax")
        _check_sparse_float(input_type, "the operand of tv.sparse_softmax")


@irdl_op_definition
class ToDenseOp(IRDLOperation):
    """The dense tensor of a sparse one: stored values in place, 0 elsewhere.

    `tv.to_dense %s : !tv.tensor<8x16xf16, #tv.csr<...>> -> !tv.tensor<8x16xf16>`.
    """

    name = "tv.to_dense"

    input = operand_def(TensorViewType)
    result = result_def(TensorViewType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation) -> None:
        input = SSAValue.get(input)
        assert isinstance(input.type, TensorViewType)
        super().__init__(
            operands=[input],
            result_types=[input.type.with_shape(input.type.get_shape())],
        )

    def verify_(self) -> None:
        input_type, _ = _sparse_tensor(self.input, "the operand of tv.to_dense")
        _dense_tensor(self.result, "the result of tv.to_dense")
        _check_result_type(self, input_type.with_shape(input_type.get_shape()))


GATHER_INDEX_TYPES: tuple[Attribute, ...] = (i16, i32)
"""The element types of `tv.gather`'s index tensor."""


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Rows of a tensor picked by an index tensor: numpy's `source[indices]`.

    `tv.gather %kv[%idx] : !tv.tensor<8192x128xf16>, !tv.tensor<64x256xi32> ->
    !tv.tensor<64x256x128xf16>`: the result's shape is the indices' shape then the
    source's trailing dimensions; element `(i..., j...)` is `source[indices[i...],
    j...]` (top-k attention gathers the k chosen key rows of each query). An
    index outside `[0, source rows)` is an error when it runs (no negative
    indices from the end: a lowering reads GM at the index).
    """

    name = "tv.gather"

    source = operand_def(TensorViewType)
    indices = operand_def(TensorViewType)
    result = result_def(TensorViewType)

    traits = traits_def(Pure())

    assembly_format = (
        "$source `[` $indices `]` attr-dict `:` type($source) `,` type($indices) "
        "`->` type($result)"
    )

    def __init__(
        self, source: SSAValue | Operation, indices: SSAValue | Operation
    ) -> None:
        source, indices = SSAValue.get(source), SSAValue.get(indices)
        assert isinstance(source.type, TensorViewType)
        assert isinstance(indices.type, TensorViewType)
        shape = (*indices.type.get_shape(), *source.type.get_shape()[1:])
        super().__init__(
            operands=[source, indices], result_types=[source.type.with_shape(shape)]
        )

    def verify_(self) -> None:
        source_type = _dense_tensor(self.source, "the source of tv.gather")
        indices_type = _dense_tensor(self.indices, "the indices of tv.gather")
        _dense_tensor(self.result, "the result of tv.gather")
        if source_type.get_num_dims() < 1:
            raise VerifyException("the source of tv.gather must have rank >= 1")
        if indices_type.element_type not in GATHER_INDEX_TYPES:
            raise VerifyException(
                f"the indices of tv.gather must have element type "
                f"{names(GATHER_INDEX_TYPES)}, got {indices_type.element_type}"
            )
        shape = (*indices_type.get_shape(), *source_type.get_shape()[1:])
        _check_result_type(self, source_type.with_shape(shape))


SPARSE_OPS: tuple[type[IRDLOperation], ...] = (
    AssembleOp,
    DisassembleOp,
    SpmmOp,
    SpmvOp,
    SddmmOp,
    SparseSoftmaxOp,
    ToDenseOp,
    GatherOp,
)
"""The ops of sparse kernels (`tv.gather` is dense but their index-driven
companion): no lowering below tv yet, docs/sparse.md."""


TensorView = Dialect(
    "tv",
    [
        ViewOp,
        DimOp,
        FillOp,
        NegOp,
        AbsOp,
        ExpOp,
        LogOp,
        SqrtOp,
        RsqrtOp,
        ReciprocalOp,
        ReluOp,
        SigmoidOp,
        TanhOp,
        GeluOp,
        SiluOp,
        SinOp,
        CosOp,
        ErfOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        MaxOp,
        MinOp,
        SelectOp,
        CastOp,
        MatmulOp,
        ReduceSumOp,
        ReduceMaxOp,
        ReduceMinOp,
        SoftmaxOp,
        TransposeOp,
        ReshapeOp,
        *SPARSE_OPS,
    ],
    [TensorViewType, CsrEncodingAttr, CmpModeAttr],
)
