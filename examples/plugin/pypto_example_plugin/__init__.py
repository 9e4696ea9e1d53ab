"""An example plugin: the `scale` dialect and the `scale-to-arith` pass."""
