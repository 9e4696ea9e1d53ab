"""pypto_mlir.targets"""
