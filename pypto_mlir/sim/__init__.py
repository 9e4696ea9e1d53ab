"""pypto_mlir.sim"""
