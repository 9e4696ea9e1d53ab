# The quick-start commands: `make demo`, `make test` and `make docs`.
# They (re)create the local virtual environment from pyproject.toml when needed.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: demo test lint lit pytest bench docs format clean

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

test: lint lit pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

lit: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/lit -sv test/filecheck

pytest: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/pytest -q test

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
