"""Hypothesis profiles for the whole suite.

`make test` (and CI) draws the same examples on every run (`derandomize`), so a
result is reproducible and a failure is not a matter of luck. To hunt for new
failures, draw fresh random examples, several times as many:

    HYPOTHESIS_PROFILE=explore .venv/bin/pytest test/test_pipeline.py
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
