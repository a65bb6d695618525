# Everything starts from nothing: `make test` and `make demo` create .venv when missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml requirements-dev.txt plugins_example/pyproject.toml
	$(BIN)/pip install --quiet -r requirements-dev.txt
	@# strict editable mode is the one mypy can follow; re-run after adding a module
	$(BIN)/pip install --quiet -e . --config-settings editable_mode=strict
	$(BIN)/pip install --quiet -e plugins_example
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/itemscore demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest --cov --cov-report=term

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

# -I keeps the folder off sys.path: its itemscore.egg-info must not shadow the installed metadata.
docs: $(STAMP)
	$(BIN)/python -I -m itemscore._docgen docs/reference/metrics.md
	$(BIN)/mkdocs build --quiet --site-dir site

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .coverage
