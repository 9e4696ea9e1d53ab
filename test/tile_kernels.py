"""Tile IR kernels that the tile interpreter's tests (test/interp/test_tile.py) and
tile-to-hw's (test/passes/test_tile_to_hw.py) both run.

Importable from any test: pytest puts test/, the folder of the suite's
conftest.py, on sys.path.
"""

from __future__ import annotations


def extent(name: str, size: str, offset: str, step: str) -> str:
    """IR for `%name = min(step, size - offset)`: the valid extent of a tail, as
    tv-to-tile writes it."""
    return (
        f"%{name}_left = arith.subi {size}, {offset} : index\n"
        f"%{name}_lt = arith.cmpi slt, %{name}_left, {step} : index\n"
        f"%{name} = arith.select %{name}_lt, %{name}_left, {step} : index\n"
    )


def elementwise_kernel(
    rows: int,
    cols: int,
    tm: int,
    tn: int,
    element: str,
    body: str,
    out: str = "",
    inputs: int = 1,
) -> str:
    """`@f(%x, %out)` (with `inputs=2`, `@f(%x, %y, %out)`): per tm x tn tile
    (tails included) %t of x (and %u of y), `body` computes %r, which is stored
    into %out; in `body`, T is the tile type and T_OUT the result's."""
    out = out or element
    x_type = f"memref<{rows}x{cols}x{element}>"
    out_type = f"memref<{rows}x{cols}x{out}>"
    t = f"!tile.tile<{tm}x{tn}x{element}, ub, valid = [?, ?]>"
    t_out = t.replace(f"x{element},", f"x{out},")
    body = body.replace("T_OUT", t_out).replace("T", t)
    names = [("x", "t"), ("y", "u")][:inputs]
    params = "".join(f"%{x}: {x_type}, " for x, _ in names)
    loads = "\n      ".join(
        f"%{v} = tile.load %{x}[%i, %j] valid [%vi, %vj] : {x_type} -> {t}"
        for x, v in names
    )
    return f"""
func.func @f({params}%out: {out_type}) {{
  %c0 = arith.constant 0 : index
  %rows = arith.constant {rows} : index
  %cols = arith.constant {cols} : index
  %tm = arith.constant {tm} : index
  %tn = arith.constant {tn} : index
  scf.for %i = %c0 to %rows step %tm {{
    {extent("vi", "%rows", "%i", "%tm")}
    scf.for %j = %c0 to %cols step %tn {{
      {extent("vj", "%cols", "%j", "%tn")}
      {loads}
      {body}
      tile.store %r, %out[%i, %j] : {t_out} -> {out_type}
    }}
  }}
  func.return
}}
"""


def matmul_kernel(m: int, n: int, k: int, tm: int, tn: int, tk: int, out: str) -> str:
    """`@f(%a, %b, %c)`: C = A @ B tiled tm x tn over C and tk over K, accumulating
    in l0c (f16 inputs, `out` the element type of C)."""
    a_type, b_type = f"memref<{m}x{k}xf16>", f"memref<{k}x{n}xf16>"
    c_type = f"memref<{m}x{n}x{out}>"
    a1 = f"!tile.tile<{tm}x{tk}xf16, l1, valid = [?, ?], layout = nz, pad = zero>"
    b1 = f"!tile.tile<{tk}x{tn}xf16, l1, valid = [?, ?], layout = nz, pad = zero>"
    a0 = f"!tile.tile<{tm}x{tk}xf16, l0a, valid = [?, ?], pad = zero>"
    b0 = f"!tile.tile<{tk}x{tn}xf16, l0b, valid = [?, ?], pad = zero>"
    acc = f"!tile.tile<{tm}x{tn}xf32, l0c, valid = [?, ?]>"
    return f"""
func.func @f(%a: {a_type}, %b: {b_type}, %c: {c_type}) {{
  %c0 = arith.constant 0 : index
  %m = arith.constant {m} : index
  %n = arith.constant {n} : index
  %k = arith.constant {k} : index
  %tm = arith.constant {tm} : index
  %tn = arith.constant {tn} : index
  %tk = arith.constant {tk} : index
  scf.for %i = %c0 to %m step %tm {{
    {extent("vi", "%m", "%i", "%tm")}
    scf.for %j = %c0 to %n step %tn {{
      {extent("vj", "%n", "%j", "%tn")}
      {extent("vk0", "%k", "%c0", "%tk")}
      %a1 = tile.load %a[%i, %c0] valid [%vi, %vk0] : {a_type} -> {a1}
      %b1 = tile.load %b[%c0, %j] valid [%vk0, %vj] : {b_type} -> {b1}
      %a0 = tile.move %a1 : {a1} -> {a0}
      %b0 = tile.move %b1 : {b1} -> {b0}
      %first = tile.matmul %a0, %b0 : {a0}, {b0} -> {acc}
      %sum = scf.for %p = %tk to %k step %tk iter_args(%acc = %first) -> ({acc}) {{
        {extent("vk", "%k", "%p", "%tk")}
        %a1k = tile.load %a[%i, %p] valid [%vi, %vk] : {a_type} -> {a1}
        %b1k = tile.load %b[%p, %j] valid [%vk, %vj] : {b_type} -> {b1}
        %a0k = tile.move %a1k : {a1} -> {a0}
        %b0k = tile.move %b1k : {b1} -> {b0}
        %next = tile.matmul %a0k, %b0k, %acc : {a0}, {b0} -> {acc}
        scf.yield %next : {acc}
      }}
      tile.store %sum, %c[%i, %j] : {acc} -> {c_type}
    }}
  }}
  func.return
}}
"""
