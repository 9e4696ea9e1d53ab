"""pypto_mlir.cli"""
