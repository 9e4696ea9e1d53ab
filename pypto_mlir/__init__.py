"""pypto-mlir: a multi-level compiler for tile kernels on Ascend-style AI Cores."""
