# `make test` and `make demo` need nothing but Python 3.11+ and git: both build .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test test-fast demo demo-load lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/ruff check gitive tests testing benchmarks examples
	$(BIN)/lint-imports --no-logo
	$(BIN)/python -m pytest -q -n auto --dist worksteal

# The development loop: everything but the tests tests/slow.txt lists (measured: a second or more each).
test-fast: $(STAMP)
	$(BIN)/ruff check gitive tests testing benchmarks examples
	$(BIN)/lint-imports --no-logo
	$(BIN)/python -m pytest -q -n auto --dist worksteal -m "not slow"

demo: $(STAMP)
	$(BIN)/python examples/demo.py

demo-load: $(STAMP)
	$(BIN)/python examples/demo.py --load

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
