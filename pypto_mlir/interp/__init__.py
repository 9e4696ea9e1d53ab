"""pypto_mlir.interp"""
