"""Dialects of pypto-mlir: tensor_view, tile, ascend_hw (one module each)."""
