"""Passes of pypto-mlir (one module per pass)."""
