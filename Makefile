# Everything starts from nothing: `make demo` and `make test` create .venv when missing.
#
# The set-up comes in layers, one stamp file each, so that every target installs only what it
# needs: `make demo` the package, `make test` also the test tools and the example plugin. Delete
# a stamp to redo its layer. To add a layer that the tests need (a browser, a service), write its
# stamp rule and add the stamp to TEST_SETUP.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

PACKAGE_STAMP := $(VENV)/.installed
PACKAGE_FILES := $(VENV)/.package-files
DEV_STAMP     := $(VENV)/.dev-installed
BROWSER_STAMP := $(VENV)/.chromium
TEX_STAMP     := $(VENV)/.texlive
JAVA_STAMP    := $(VENV)/.java
# What lint, typecheck, pytest, docs-build and bench need. Append a layer's stamp here, above
# the rules: make expands a rule's prerequisites where it reads the rule.
TEST_SETUP    := $(DEV_STAMP) $(BROWSER_STAMP) $(TEX_STAMP) $(JAVA_STAMP)

.PHONY: demo report-demo test lint typecheck pytest docs-build bench docs clean FORCE

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# The package's files. A strict editable install links each file, so a file added (or removed)
# needs a new install: this list changes then, and only then, and the install below is redone.
$(PACKAGE_FILES): $(BIN)/python FORCE
	@find core metrics_builtin -type f ! -path '*/__pycache__/*' | LC_ALL=C sort > $@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

# The package and its runtime dependencies: all `make demo` needs. Strict editable mode is the one
# mypy can follow.
$(PACKAGE_STAMP): $(BIN)/python pyproject.toml $(PACKAGE_FILES)
	$(PIP) install --quiet -e . --config-settings editable_mode=strict
	touch $@

# Test, lint and docs tools, the optional formats the tests cover, and the example plugin.
$(DEV_STAMP): $(PACKAGE_STAMP) requirements-dev.txt plugins_example/pyproject.toml
	$(PIP) install --quiet -r requirements-dev.txt
	$(PIP) install --quiet -e plugins_example
	touch $@

# Headless Chromium renders report.html in the tests (Debian's package; as root, installed when
# missing; otherwise those tests are skipped and say so).
$(BROWSER_STAMP): $(BIN)/python
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else echo "chromium is missing: the report.html rendering tests will be skipped"; fi
	touch $@

# pdflatex compiles table.tex and comparison.tex in the tests, in one- and two-column articles
# (Debian's packages: booktabs is in texlive-latex-recommended; as root, installed when missing;
# otherwise those tests are skipped and say so).
$(TEX_STAMP): $(BIN)/python
	@if command -v pdflatex >/dev/null && kpsewhich booktabs.sty >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends texlive-latex-base texlive-latex-recommended; \
	else echo "pdflatex is missing: the LaTeX compilation tests will be skipped"; fi
	touch $@

# Java runs the local SparkSession of the Spark executor's tests (Debian's package; as root,
# installed when missing; otherwise Spark cannot start and those tests say so).
$(JAVA_STAMP): $(BIN)/python
	@if command -v java >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends default-jre-headless; \
	else echo "java is missing: the Spark executor's tests cannot start Spark"; fi
	touch $@

demo: $(PACKAGE_STAMP)
	$(BIN)/itemscore demo

# The HTML report of the demo data, to open in a browser.
report-demo: $(PACKAGE_STAMP)
	$(BIN)/itemscore demo --out out/demo >/dev/null
	@ls out/demo/*/report.html

test: lint typecheck pytest docs-build

lint: $(TEST_SETUP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(TEST_SETUP)
	$(BIN)/mypy

pytest: $(TEST_SETUP)
	$(BIN)/pytest --cov --cov-report=term

# Strict: a dead link or a page missing from the nav fails the build (see mkdocs.yml).
docs-build: $(TEST_SETUP)
	$(BIN)/mkdocs build --strict --site-dir site

bench: $(TEST_SETUP)
	$(BIN)/python benchmarks/run.py

# Regenerates the metrics reference from the code, then builds the site.
# -I keeps the folder off sys.path: its itemscore.egg-info must not shadow the installed metadata.
docs: $(TEST_SETUP)
	$(BIN)/python -I -m itemscore._docgen docs/reference/metrics.md
	$(BIN)/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .mypy_cache .ruff_cache .coverage
