# The two quick-start commands: `make demo` and `make test`.
# Both (re)create the local virtual environment from pyproject.toml when needed.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint lit pytest bench format clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

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

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) test/filecheck/**/Output .pytest_cache
