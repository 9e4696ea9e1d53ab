"""The Python kernel frontend: `import pypto_mlir as pto`.

    @pto.kernel
    def swish(x: pto.Tensor[(4096, 1024), pto.f16]) -> pto.Tensor[(4096, 1024), pto.f16]:
        return x * pto.sigmoid(x)

    swish.mlir()        # the tv IR
    swish(x)            # run it (numpy in, numpy out)
    swish.run(x)        # outputs and a report of what ran

See docs/frontend.md; the tile level (`@pto.tile_kernel`, `pto.TileView`,
`pto.tiles`): docs/tile_views.md.
"""

from pypto_mlir.frontend import ops
from pypto_mlir.frontend.backends import (
    Backend,
    Compiled,
    Execution,
    ReferenceBackend,
    backend_names,
    register_backend,
    select_backend,
    sim_backend,
)
from pypto_mlir.frontend.dtypes import DType, bf16, f16, f32, i8, i16, i32
from pypto_mlir.frontend.errors import KernelError, KernelRuntimeError
from pypto_mlir.frontend.kernel import (
    CacheInfo,
    Kernel,
    KernelProfile,
    RunReport,
    RunResult,
    Specialization,
    kernel,
)
from pypto_mlir.frontend.ops import *  # noqa: F403 (the generated pto.* functions)
from pypto_mlir.frontend.sparse import BSR, CSR, SparseSpec, SparseTensor
from pypto_mlir.frontend.tensor import Scalar, Sym, Tensor, TensorSpec, sym
from pypto_mlir.frontend.tile_kernel import Out, TileKernel, tile_kernel
from pypto_mlir.frontend.tile_loops import TileContext, TileGrid, tiles
from pypto_mlir.frontend.tile_trace import L0A, L0B, L0C, L1, UB, auto
from pypto_mlir.frontend.tile_trace import current_target as target
from pypto_mlir.frontend.tile_views import (
    GmTensor,
    Tile,
    TileIndex,
    TileView,
    load,
    move,
    store,
)

__all__ = [
    "BSR",
    "CSR",
    "SparseSpec",
    "SparseTensor",
    "L0A",
    "L0B",
    "L0C",
    "L1",
    "UB",
    "GmTensor",
    "Out",
    "Tile",
    "TileContext",
    "TileGrid",
    "TileIndex",
    "TileKernel",
    "TileView",
    "auto",
    "load",
    "move",
    "store",
    "target",
    "tile_kernel",
    "tiles",
    "Backend",
    "CacheInfo",
    "Compiled",
    "DType",
    "Execution",
    "Kernel",
    "KernelError",
    "KernelProfile",
    "KernelRuntimeError",
    "ReferenceBackend",
    "RunReport",
    "RunResult",
    "Scalar",
    "Specialization",
    "Sym",
    "Tensor",
    "TensorSpec",
    "backend_names",
    "bf16",
    "f16",
    "f32",
    "i16",
    "i32",
    "i8",
    "kernel",
    "register_backend",
    "select_backend",
    "sim_backend",
    "sym",
]
__all__ += ops.__all__
__all__.sort()
