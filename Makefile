# The quick-start commands: `make demo`, `make test` and `make docs`.
# They (re)create the local virtual environment from pyproject.toml when needed.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: demo test test-all lint lit lit-all pytest pytest-all xdsl-suite xdsl-suite-all fuzz bench docs format clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The docs extra (mkdocs, mkdocs-material) only for `make docs`: `make test` does
# not need it (test/test_docgen.py runs the generator without mkdocs).
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,docs]'
	touch $(DOCS_STAMP)

demo: $(STAMP)
	$(BIN)/python -m pypto_mlir.demo

# `make test` (CI, under 20 minutes on 2 cores) leaves out the tests marked slow:
# pytest's `slow` marker and lit's `REQUIRES: slow` (long sweeps, big end-to-end
# simulations; a bounded slice of each stays in). `make test-all` runs them too.
# One BLAS thread a process: 2 xdist workers or lit workers on 2 cores would
# otherwise thrash.
export OPENBLAS_NUM_THREADS := 1

test: lint lit pytest xdsl-suite

test-all: lint lit-all pytest-all xdsl-suite

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

lit: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/lit -sv test/filecheck

lit-all: $(STAMP)
	PYPTO_LIT_SLOW=1 PATH=$(abspath $(BIN)):$$PATH $(BIN)/lit -sv test/filecheck

# --dist loadgroup: the tests marked xdist_group run on one worker, so that
# test/sparse/lowered.py's lower_once lowers their kernel once; the rest as --dist load.
pytest: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/pytest -q -n auto --dist loadgroup -m "not slow" test

pytest-all: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/pytest -q -n auto --dist loadgroup test

# xDSL's own lit suite (from the pinned sdist) with pypto-opt as xdsl-opt; fails
# on a difference not in test/xdsl_suite/expected_differences.txt (docs/cli.md).
# `make test` runs a subset; xdsl-suite-all runs all of it, stock xdsl-opt too.
xdsl-suite: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python test/xdsl_suite/run.py

xdsl-suite-all: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python test/xdsl_suite/run.py --all

# Mutation fuzzing of pypto-opt and pypto-run (pytest runs 40 inputs, 150 in test-all):
# `make fuzz FUZZ_COUNT=10000 FUZZ_SEED=1`; reproducers go to fuzz-failures/.
FUZZ_COUNT ?= 1000
FUZZ_SEED ?= 0
fuzz: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pypto_mlir.cli.fuzz --count $(FUZZ_COUNT) --seed $(FUZZ_SEED) -j2

bench: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python bench/run.py

# The site, into site/; --strict turns a broken link or anchor into a failure.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) test/filecheck/**/Output .pytest_cache site
