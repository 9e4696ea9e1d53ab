"""Integer ranges of index arithmetic, to turn tail extents into constants.

Tile IR computes the valid extent of a tile as `min(step, size - iv)` (with
`arith.minsi`, or `arith.cmpi` + `arith.select`). Inside a loop whose trip count
divides the range, or in a peeled last iteration, that value is a constant, but
plain constant folding cannot see it: it needs the range of the induction
variable. This module computes a conservative interval `[lo, hi]` for every
integer/index value of a region, from the bounds of the enclosing `scf.for`
loops, and replaces values whose interval is a single point by constants.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter


@dataclass(frozen=True)
class Range:
    """The closed interval `[lo, hi]`; None is unbounded on that side."""

    lo: int | None = None
    hi: int | None = None

    @staticmethod
    def point(value: int) -> Range:
        return Range(value, value)

    @property
    def constant(self) -> int | None:
        """The single value of the range, if it has one."""
        return self.lo if self.lo is not None and self.lo == self.hi else None

    def hull(self, other: Range) -> Range:
        lo = None if self.lo is None or other.lo is None else min(self.lo, other.lo)
        hi = None if self.hi is None or other.hi is None else max(self.hi, other.hi)
        return Range(lo, hi)


UNKNOWN = Range()

MAX_TRIPS_ATTR = "pypto.max_trips"
"""On a loop tile-to-hw split over the cores: the most iterations one core's
chunk runs. Its bounds depend on `block_idx` in ways ranges cannot relate (a
start and an end that move together), so passes after the split read this."""

ROW_ENTRIES_ATTR = "pypto.row_entries"
"""On a loop over stored entries of a sparse tensor (set by the sparse nests,
kept by tile-pipeline on the loops it makes of it): its bounds are read from
a row offsets array at one (block) row r, and every tile its body stores at
an index computed from its induction variable lies in that row's entries
`[offsets[r], offsets[r + 1])`. The canonical form (offsets never decrease)
makes the ranges of different rows disjoint and increasing with r, which is
what tile-to-hw's multi-core split needs to give rows to different cores."""


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _neg(a: int | None) -> int | None:
    return None if a is None else -a


def _products(a: Range, b: Range) -> Range:
    corners = [
        x * y
        for x in (a.lo, a.hi)
        for y in (b.lo, b.hi)
        if x is not None and y is not None
    ]
    if len(corners) < 4:
        return UNKNOWN
    return Range(min(corners), max(corners))


def _monotone(a: Range, fn: Callable[[int], int]) -> Range:
    """The image of `a` under a non-decreasing function."""
    return Range(None if a.lo is None else fn(a.lo), None if a.hi is None else fn(a.hi))


def _min(a: Range, b: Range) -> Range:
    lo = None if a.lo is None or b.lo is None else min(a.lo, b.lo)
    his = [h for h in (a.hi, b.hi) if h is not None]
    return Range(lo, min(his) if his else None)


def _max(a: Range, b: Range) -> Range:
    los = [lo for lo in (a.lo, b.lo) if lo is not None]
    hi = None if a.hi is None or b.hi is None else max(a.hi, b.hi)
    return Range(max(los) if los else None, hi)


def _less(a: Range, b: Range, strict: bool) -> bool | None:
    """Whether `a < b` (`a <= b`) holds for all, none, or some of the values."""
    if (
        a.hi is not None
        and b.lo is not None
        and (a.hi < b.lo or (not strict and a.hi <= b.lo))
    ):
        return True
    if (
        a.lo is not None
        and b.hi is not None
        and (a.lo >= b.hi if strict else a.lo > b.hi)
    ):
        return False
    return None


def _compare(predicate: int, a: Range, b: Range) -> bool | None:
    """Decide `arith.cmpi` for every value of the ranges, or None.

    Unsigned predicates are decided like signed ones only when both sides are
    known to be non-negative.
    """
    non_negative = a.lo is not None and a.lo >= 0 and b.lo is not None and b.lo >= 0
    if predicate >= 6 and not non_negative:  # ult, ule, ugt, uge
        return None
    match predicate:
        case 0:  # eq
            if a.constant is not None and a.constant == b.constant:
                return True
            if _less(a, b, True) or _less(b, a, True):
                return False
            return None
        case 1:  # ne
            eq = _compare(0, a, b)
            return None if eq is None else not eq
        case 2 | 6:  # slt, ult
            return _less(a, b, True)
        case 3 | 7:  # sle, ule
            return _less(a, b, False)
        case 4 | 8:  # sgt, ugt
            return _less(b, a, True)
        case 5 | 9:  # sge, uge
            return _less(b, a, False)
    return None


def loop_trip_count(loop: scf.ForOp, ranges: dict[SSAValue, Range]) -> int | None:
    """The trip count of a loop whose bounds and step are constant."""
    lb, ub, step = (
        ranges.get(v, UNKNOWN).constant for v in (loop.lb, loop.ub, loop.step)
    )
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, -(-(ub - lb) // step))


def _induction_range(loop: scf.ForOp, ranges: dict[SSAValue, Range]) -> Range:
    lb, ub = ranges.get(loop.lb, UNKNOWN), ranges.get(loop.ub, UNKNOWN)
    step = ranges.get(loop.step, UNKNOWN).constant
    trips = loop_trip_count(loop, ranges)
    if trips is not None and step is not None and lb.constant is not None:
        if trips == 0:
            return UNKNOWN
        return Range(lb.constant, lb.constant + (trips - 1) * step)
    hi = None if ub.hi is None else ub.hi - 1
    return Range(lb.lo, hi)


def _op_range(op: Operation, ranges: dict[SSAValue, Range]) -> Range:
    def r(value: SSAValue) -> Range:
        return ranges.get(value, UNKNOWN)

    match op:
        case arith.ConstantOp(value=IntegerAttr() as attr):
            if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
                return Range.point(int(attr.value.data != 0))
            return Range.point(attr.value.data)
        case arith.AddiOp():
            a, b = r(op.lhs), r(op.rhs)
            return Range(_add(a.lo, b.lo), _add(a.hi, b.hi))
        case arith.SubiOp():
            a, b = r(op.lhs), r(op.rhs)
            return Range(_add(a.lo, _neg(b.hi)), _add(a.hi, _neg(b.lo)))
        case arith.MuliOp():
            return _products(r(op.lhs), r(op.rhs))
        case (
            arith.DivSIOp()
            | arith.DivUIOp()
            | arith.FloorDivSIOp()
            | arith.CeilDivSIOp()
        ):
            divisor = r(op.rhs).constant
            if divisor is None or divisor <= 0:
                return UNKNOWN
            if isinstance(op, arith.CeilDivSIOp):
                return _monotone(r(op.lhs), lambda x: -(-x // divisor))
            if isinstance(op, arith.FloorDivSIOp):
                return _monotone(r(op.lhs), lambda x: x // divisor)
            a = r(op.lhs)
            if a.lo is None or a.lo < 0:
                return UNKNOWN
            return _monotone(a, lambda x: x // divisor)
        case arith.RemSIOp() | arith.RemUIOp():
            divisor, a = r(op.rhs).constant, r(op.lhs)
            if divisor is None or divisor <= 0:
                return UNKNOWN
            if a.lo is None or a.lo < 0:
                # An unsigned remainder is below the divisor whatever the operand.
                return (
                    Range(0, divisor - 1) if isinstance(op, arith.RemUIOp) else UNKNOWN
                )
            if a.hi is not None and a.lo // divisor == a.hi // divisor:
                return Range(a.lo % divisor, a.hi % divisor)
            return Range(0, divisor - 1)
        case arith.MinSIOp() | arith.MinUIOp():
            return _min(r(op.lhs), r(op.rhs))
        case arith.MaxSIOp() | arith.MaxUIOp():
            return _max(r(op.lhs), r(op.rhs))
        case arith.CmpiOp():
            decided = _compare(op.predicate.value.data, r(op.lhs), r(op.rhs))
            return Range(0, 1) if decided is None else Range.point(int(decided))
        case arith.SelectOp():
            condition = r(op.cond).constant
            if condition is not None:
                return r(op.lhs if condition else op.rhs)
            return r(op.lhs).hull(r(op.rhs))
        case arith.IndexCastOp():
            return r(op.input)
        case _:
            return UNKNOWN


def _is_integer(value: SSAValue) -> bool:
    return isinstance(value.type, IndexType | IntegerType)


def index_ranges(root: Operation) -> dict[SSAValue, Range]:
    """A range for every integer/index value defined inside `root`.

    Walks in program order, so operands are visited before their users (values
    carried around loops other than the induction variable are unbounded).
    """
    ranges: dict[SSAValue, Range] = {}
    for op in root.walk():
        if isinstance(op, scf.ForOp):
            ranges[op.body.block.args[0]] = _induction_range(op, ranges)
        for result in op.results:
            if _is_integer(result):
                ranges[result] = _op_range(op, ranges)
    return ranges


def fold_index_constants(root: Operation) -> bool:
    """Replace integer/index values with a single-point range by constants.

    Returns whether anything changed. Only values computed by `arith` ops and
    loop induction variables are replaced; the ops left without users are for
    dead-code elimination to remove.
    """
    ranges = index_ranges(root)
    changed = False
    for op in list(root.walk()):
        if isinstance(op, arith.ConstantOp):
            continue
        candidates: list[tuple[SSAValue, InsertPoint]] = []
        if isinstance(op, scf.ForOp):
            block = op.body.block
            if block.first_op is not None:
                candidates.append((block.args[0], InsertPoint.at_start(block)))
        if op.dialect_name() == "arith":
            candidates.extend((r, InsertPoint.before(op)) for r in op.results)
        for value, point in candidates:
            constant = ranges.get(value, UNKNOWN).constant
            if constant is None or not _is_integer(value) or not value.uses:
                continue
            new = arith.ConstantOp(IntegerAttr(constant, value.type))
            Rewriter.insert_op(new, point)
            value.replace_all_uses_with(new.result)
            changed = True
    return changed
