"""The Python kernel frontend: `import pypto_mlir as pto`.

    @pto.kernel
    def swish(x: pto.Tensor[(4096, 1024), pto.f16]) -> pto.Tensor[(4096, 1024), pto.f16]:
        return x * pto.sigmoid(x)

    swish.mlir()        # the tv IR
    swish(x)            # run it (numpy in, numpy out)
    swish.run(x)        # outputs and a report of what ran

See docs/frontend.md.
"""

from pypto_mlir.frontend.backends import (
    Backend,
    Compiled,
    Execution,
    ReferenceBackend,
    backend_names,
    register_backend,
    select_backend,
)
from pypto_mlir.frontend.dtypes import DType, bf16, f16, f32, i8, i16, i32
from pypto_mlir.frontend.errors import KernelError, KernelRuntimeError
from pypto_mlir.frontend.kernel import (
    CacheInfo,
    Kernel,
    RunReport,
    RunResult,
    Specialization,
    kernel,
)
from pypto_mlir.frontend.ops import (
    abs,
    cast,
    exp,
    full,
    gelu,
    log,
    matmul,
    maximum,
    minimum,
    neg,
    ones,
    reciprocal,
    relu,
    rsqrt,
    sigmoid,
    silu,
    softmax,
    sqrt,
    tanh,
    zeros,
)
from pypto_mlir.frontend.tensor import Scalar, Sym, Tensor, TensorSpec, sym

__all__ = [
    "Backend",
    "CacheInfo",
    "Compiled",
    "DType",
    "Execution",
    "Kernel",
    "KernelError",
    "KernelRuntimeError",
    "ReferenceBackend",
    "RunReport",
    "RunResult",
    "Scalar",
    "Specialization",
    "Sym",
    "Tensor",
    "TensorSpec",
    "abs",
    "backend_names",
    "bf16",
    "cast",
    "exp",
    "f16",
    "f32",
    "full",
    "gelu",
    "i16",
    "i32",
    "i8",
    "kernel",
    "log",
    "matmul",
    "maximum",
    "minimum",
    "neg",
    "ones",
    "reciprocal",
    "register_backend",
    "relu",
    "rsqrt",
    "select_backend",
    "sigmoid",
    "silu",
    "softmax",
    "sqrt",
    "sym",
    "tanh",
    "zeros",
]
