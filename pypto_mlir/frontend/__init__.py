"""pypto_mlir.frontend"""
