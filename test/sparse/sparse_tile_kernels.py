"""CSR kernels written as tile IR, as the sparse lowering's contract has them
(docs/sparse.md, *The tile level*): offsets and column indices read on the
scalar unit, runtime loop bounds, DMAs at addresses computed from them.

- `spmm_kernel`: per row, `memref.load` of its offsets, an inner loop over its
  entries with `memref.load` of the column index and the value, the row of B
  at that column gathered by `tile.load`, accumulated in a ub tile, the output
  row stored.
- `spmv_kernel`: the same with a dense vector x: one element gathered per entry.
- `spmv_prefetch_kernel`: the column indices of a row read 8 at a time into a
  ub i32 tile and taken out with `tile.extract` (needs the i32 indices padded
  by 7 entries: `padded_indices`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

NUMPY = {"f16": np.float16, "f32": np.float32}


def _row_loop(
    m: int, arguments: str, element: str, tile: str, loop: str, body: str, store: str
) -> str:
    """Module `@f(arguments)` summing each of the m rows: `%acc`, a `tile` of
    zeros carried as `%a` through `scf.for {loop}` whose `body` yields the next
    sum, stored by `tile.store %acc, {store}`. `%start`/`%end` are the row's
    offsets, `%r` its index, `%zero` a zero of `element`, `%c0`/`%c1`/`%c8`
    constants."""
    return f"""
builtin.module {{
  func.func @f(%off: memref<{m + 1}xindex>, {arguments}) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %cm = arith.constant {m} : index
    %zero = arith.constant 0.0 : {element}
    scf.for %r = %c0 to %cm step %c1 {{
      %start = memref.load %off[%r] : memref<{m + 1}xindex>
      %r1 = arith.addi %r, %c1 : index
      %end = memref.load %off[%r1] : memref<{m + 1}xindex>

      %init = tile.fill %zero : {element} -> {tile}
      %acc = scf.for {loop} iter_args(%a = %init) -> ({tile}) {{{body}
      }}
      tile.store %acc, {store}
    }}
    func.return
  }}
}}
"""


def spmm_kernel(
    m: int, k: int, n: int, element: str = "f32", index: str = "index"
) -> str:
    """`index`: the type of the column indices, `index` or `i32` (read as i32
    and cast)."""
    row = f"!tile.tile<1x{n}x{element}, ub>"
    b, out = f"memref<{k}x{n}x{element}>", f"memref<{m}x{n}x{element}>"
    arguments = (
        f"%idx: memref<?x{index}>, %val: memref<?x{element}>, %b: {b}, %out: {out}"
    )
    read = (
        "%col = memref.load %idx[%p] : memref<?xindex>"
        if index == "index"
        else f"""%c = memref.load %idx[%p] : memref<?x{index}>
        %col = arith.index_cast %c : {index} to index"""
    )
    return _row_loop(
        m,
        arguments,
        element,
        row,
        "%p = %start to %end step %c1",
        f"""
        {read}
        %v = memref.load %val[%p] : memref<?x{element}>
        %brow = tile.load %b[%col, %c0] : {b} -> {row}
        %s = tile.mul %brow, %v : {row}, {element}
        %a2 = tile.add %a, %s : {row}
        scf.yield %a2 : {row}""",
        f"%out[%r, %c0] : {row} -> {out}",
    )


_ONE = "!tile.tile<8xf32, ub, valid = [1]>"
"""One f32 element in a 32-byte ub tile: a gathered x[col], a row's sum."""


def _gather_x(k: int, carried: str, result: str) -> str:
    """Multiply-accumulate val[%p] * x[%col] into `carried`, as `result`."""
    return f"""
        %v = memref.load %val[%p] : memref<?xf32>
        %xe = tile.load %x[%col] : memref<{k}xf32> -> {_ONE}
        %s = tile.mul %xe, %v : {_ONE}, f32
        {result} = tile.add {carried}, %s : {_ONE}"""


def spmv_kernel(m: int, k: int) -> str:
    arguments = f"%idx: memref<?xindex>, %val: memref<?xf32>, %x: memref<{k}xf32>, %y: memref<{m}xf32>"
    return _row_loop(
        m,
        arguments,
        "f32",
        _ONE,
        "%p = %start to %end step %c1",
        f"""
        %col = memref.load %idx[%p] : memref<?xindex>{_gather_x(k, "%a", "%a2")}
        scf.yield %a2 : {_ONE}""",
        f"%y[%r] : {_ONE} -> memref<{m}xf32>",
    )


def spmv_prefetch_kernel(m: int, k: int) -> str:
    ids = "!tile.tile<8xi32, ub>"
    arguments = f"%idx: memref<?xi32>, %val: memref<?xf32>, %x: memref<{k}xf32>, %y: memref<{m}xf32>"
    return _row_loop(
        m,
        arguments,
        "f32",
        _ONE,
        "%q = %start to %end step %c8",
        f"""
        %chunk = tile.load %idx[%q] : memref<?xi32> -> {ids}
        %left = arith.subi %end, %q : index
        %short = arith.cmpi slt, %left, %c8 : index
        %count = arith.select %short, %left, %c8 : index
        %a3 = scf.for %j = %c0 to %count step %c1 iter_args(%b = %a) -> ({_ONE}) {{
          %col = tile.extract %chunk[%j] : {ids} -> index
          %p = arith.addi %q, %j : index{_gather_x(k, "%b", "%b2")}
          scf.yield %b2 : {_ONE}
        }}
        scf.yield %a3 : {_ONE}""",
        f"%y[%r] : {_ONE} -> memref<{m}xf32>",
    )


def csr_arguments(
    a: sp.csr_array, element: str = "f32"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, column indices, values) as the calling convention passes them:
    index arrays as int64 (`memref<?xindex>`), values of the element type."""
    return (
        a.indptr.astype(np.int64),
        a.indices.astype(np.int64),
        a.data.astype(NUMPY[element]),
    )


def padded_indices(a: sp.csr_array) -> np.ndarray:
    """The column indices as i32, with 7 more entries, so that a window of 8 from
    any entry lies inside (`spmv_prefetch_kernel` reads 8 at a time)."""
    return np.concatenate([a.indices.astype(np.int32), np.zeros(7, np.int32)])
