"""Hypothesis profiles for the whole suite.

`make test` (and CI) draws the same examples on every run (`derandomize`), so a
result is reproducible and a failure is not a matter of luck. To hunt for new
failures, draw fresh random examples, several times as many:

    HYPOTHESIS_PROFILE=explore .venv/bin/pytest test/test_pipeline.py

The tests marked `slow` (long sweeps, big end-to-end simulations) are left out
by `make test` (`-m "not slow"`) and run by `make test-all`.
"""

from __future__ import annotations

import os

# One BLAS thread per test process (and the tools it starts), set before numpy
# is imported: two xdist workers on two cores with a BLAS pool each thrash.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
